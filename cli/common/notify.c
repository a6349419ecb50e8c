/* Readiness for systemd (Type=notify): the server and the broker say it
 * once their socket listens. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "../smqctl.h"

#define MAX_SOCKET_PATH (sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

/* Tells systemd (Type=notify) that the socket is ready; no-op elsewhere. */
void notify_ready(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t n;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') ||
	    (n = strlen(path)) > MAX_SOCKET_PATH)
		return;
	memcpy(a.sun_path, path, n);
	if (a.sun_path[0] == '@')
		a.sun_path[0] = 0;   /* an abstract socket */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, "READY=1", 7, MSG_NOSIGNAL, (struct sockaddr *)&a,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0)
		say_warning("cannot tell systemd that it is ready: %s",
		     strerror(errno));
	close(fd);
}

