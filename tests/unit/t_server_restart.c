/* A server started at a socket path where the last one is going away
 * (a restart: systemd's, or an operator's).  The start looks at the path
 * (lstat), then connects to the socket it found to tell a live server
 * from a stale file.  If the old server removes its socket between the
 * two, the path is free: the start goes on.  It once returned -ENOENT,
 * "window does not exist (yet)", from the connect.  The test build's
 * hook SMQ_HOOK_SOCKET_LOOKED holds the start between the two, where
 * this test removes the socket as the old server would; then a client
 * must reach the new server.  Also: a socket still served is refused
 * (-EADDRINUSE) and a stale one replaced, with the hook doing nothing. */
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "testint.h"
#include "testlib.h"
#include "smq_tools.h"

TEST_FLOOR(20);

#ifndef SMQ_COUNT_FAR
#error "t_server_restart needs the test build's hooks (SMQ_COUNT_FAR)"
#endif

static char path[100];       /* fits a sun_path */
static int removed;

/* the old server's last act, as the new one looks */
static void remove_socket(enum smq_hook where)
{
	if (where == SMQ_HOOK_SOCKET_LOOKED && !removed) {
		CHECK(unlink(path) == 0);
		removed = 1;
	}
}

/* A socket file at path that nobody serves (a server that was killed). */
static int bound_socket(bool listening)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	CHECK(fd >= 0);
	CHECK(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	if (listening)
		CHECK(listen(fd, 4) == 0);
	return fd;
}

static struct smq_server *start(int want)
{
	struct smq_server_config c = { path, NULL, 4096, 1, 0 };
	struct smq_server *s = NULL;

	EXPECT(smq_server_open(&c, sizeof(c), &s), want);
	return s;
}

/* A client can connect to the server's socket, and the server takes it. */
static void reachable(struct smq_server *s)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct smq_server_event ev;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	CHECK(fd >= 0);
	CHECK(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	OK(smq_server_next(s, 10000, &ev, sizeof(ev)));
	EXPECT(ev.type, SMQ_PEER_JOINED);
	close(fd);
}

int main(void)
{
	snprintf(path, sizeof(path), "%s/ivshmem", test_dir());

	/* a socket still served: refused, left alone */
	int live = bound_socket(true);
	start(-EADDRINUSE);
	CHECK(access(path, F_OK) == 0);
	close(live);

	/* its server gone, the file left: replaced */
	struct smq_server *s = start(0);
	CHECK(s != NULL);
	reachable(s);
	smq_server_close(s);
	CHECK(access(path, F_OK) != 0);

	/* the file goes between the look and the connect: the path is free */
	int old = bound_socket(false);
	smq_test_hook = remove_socket;
	s = start(0);
	smq_test_hook = NULL;
	CHECK(removed == 1);
	CHECK(s != NULL);
	if (s) {
		reachable(s);
		smq_server_close(s);
	}
	close(old);
	return 0;
}
