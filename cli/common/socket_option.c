/* The options of the commands that listen on a UNIX socket for other
 * processes, server and broker: the socket's path and its permission
 * bits.  Both commands parsed them with the same code; here once, so that
 * they take the same values and refuse a bad one in the same words. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include "../smqctl.h"

#define MAX_SOCKET_PATH (sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

const char *arg_socket_path(struct argp_state *st, const char *arg)
{
	if (!*arg)
		argp_error(st, "--socket needs a path");
	if (strlen(arg) > MAX_SOCKET_PATH)
		argp_error(st, "--socket %s is too long: a UNIX socket "
			   "path has at most %zu bytes", arg,
			   MAX_SOCKET_PATH);
	return arg;
}
