/* The UNIX sockets of the two servers a board runs (the ivshmem server
 * and the vfio broker): a path made an address, what is already at that
 * path, a listening socket of a given mode, and a message with a
 * descriptor beside it (SCM_RIGHTS), which both send. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "common.h"
#include "format/hook.h"

int smq_unix_address(const char *path, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (!*path)
		return -EINVAL;
	if (strlen(path) >= sizeof(a->sun_path))
		return -ENAMETOOLONG;
	strcpy(a->sun_path, path);
	return 0;
}

int smq_unix_probe(const struct sockaddr_un *a, int type, bool *stale)
{
	struct stat st;
	int fd, err = 0;

	*stale = false;
	if (lstat(a->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	TEST_HOOK(SMQ_HOOK_SOCKET_LOOKED);
	/* non-blocking: a server too busy to take us (EAGAIN) is alive */
	fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* EPROTOTYPE: a socket of another kind is bound there, so alive (a
	 * vfio broker's beside an ivshmem server's): left alone */
	if (connect(fd, (const struct sockaddr *)a, sizeof(*a)) == 0 ||
	    errno == EAGAIN || errno == EPROTOTYPE)
		err = -EADDRINUSE;
	else if (errno == ECONNREFUSED)
		*stale = true;  /* nobody listens */
	else if (errno != ENOENT)
		err = -errno;
	/* ENOENT: removed since we looked (a server stopping as we start,
	 * say): nothing is there now, which is what no file means */
	close(fd);
	return err;
}

int smq_unix_listen(const struct sockaddr_un *a, int type, unsigned mode,
		    int backlog, struct stat *st)
{
	int fd, err;

	fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (const struct sockaddr *)a, sizeof(*a)) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	/* Nobody can connect before listen(): the mode is right first. */
	if (chmod(a->sun_path, (mode_t)(mode & 07777)) < 0 ||
	    lstat(a->sun_path, st) < 0 || listen(fd, backlog) < 0) {
		err = -errno;
		close(fd);
		unlink(a->sun_path);
		return err;
	}
	return fd;
}

int smq_send_fd(int sock, const void *buf, size_t len, int fd, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (fd >= 0) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == (ssize_t)len ? 0 : -EIO;
}
