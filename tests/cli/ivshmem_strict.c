/* A strict client of the ivshmem protocol, for tests (ivshmem_strict.h
 * says what it holds a server to).  Written from QEMU's ivshmem spec
 * (docs/specs/ivshmem-spec.txt) and what its client and device refuse. */
#include <errno.h>
#include <endian.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "ivshmem_strict.h"

enum { VERSION, ID, MEMORY, PICTURE, RUNNING };

static int breach(struct strict *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->why[0]) {
		va_start(ap, fmt);
		vsnprintf(s->why, sizeof(s->why), fmt, ap);
		va_end(ap);
	}
	return -EPROTO;
}

int strict_connect(struct strict *s, const char *path, unsigned vectors)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	memset(s, 0, sizeof(*s));
	s->sock = s->mem_fd = s->id = s->run = s->last_new = s->last_old = -1;
	s->vectors = vectors;
	if (vectors < 1 || vectors > STRICT_MAX_VECTORS ||
	    strlen(path) >= sizeof(a.sun_path))
		return -EINVAL;
	strcpy(a.sun_path, path);
	s->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->sock < 0)
		return -errno;
	if (connect(s->sock, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int err = -errno;
		close(s->sock);
		s->sock = -1;
		return err;
	}
	return 0;
}

/* One whole message: 1, 0 (none within timeout_ms), or -errno.  The
 * server sends 8 bytes at a time; fewer, or more than one descriptor, is
 * a breach. */
static int read_msg(struct strict *s, int timeout_ms, int64_t *value, int *fd)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	uint64_t le;
	struct iovec iov = { &le, sizeof(le) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct pollfd pf = { s->sock, POLLIN, 0 };
	int nfd = 0;
	ssize_t n;

	if (poll(&pf, 1, timeout_ms) == 0)
		return 0;
	n = recvmsg(s->sock, &mh, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	*fd = -1;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm;
	     cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		     i++, nfd++) {
			int f;
			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(f));
			if (*fd < 0)
				*fd = f;
			else
				close(f);
		}
	}
	if (n == 0 && nfd == 0)
		return -ECONNRESET;
	if (mh.msg_flags & MSG_CTRUNC)
		return breach(s, "descriptors lost (MSG_CTRUNC): out of "
			      "descriptors here, or too many in one message");
	if (nfd > 1)
		return breach(s, "a message with %d descriptors", nfd);
	if (n != (ssize_t)sizeof(le))
		return breach(s, "a message of %zd bytes", n);
	*value = (int64_t)le64toh(le);
	return 1;
}

static bool is_eventfd(int fd)
{
	char link[64], target[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = 0;
	return !strcmp(target, "anon_inode:[eventfd]");
}

static int take_memory(struct strict *s, int64_t value, int fd)
{
	struct stat st;

	if (value != -1 || fd < 0)
		return breach(s, "expected the memory (-1 with a descriptor), "
			      "got %lld %s", (long long)value,
			      fd < 0 ? "without one" : "with one");
	s->mem_fd = fd;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return breach(s, "the memory's descriptor is not a regular file");
	s->mem_size = (uint64_t)st.st_size;
	if (!s->mem_size || (s->mem_size & (s->mem_size - 1)))
		return breach(s, "the memory has %llu bytes: a BAR's size is a "
			      "power of two", (unsigned long long)s->mem_size);
	return 0;
}

static int take_removal(struct strict *s, unsigned id)
{
	struct strict_peer *p = s->peer[id];

	if (s->phase != RUNNING)
		return breach(s, "a removal of peer %u before our own vectors",
			      id);
	if ((int)id == s->id)
		return breach(s, "a removal of ourselves (%u)", id);
	if (!p)
		return breach(s, "a removal of peer %u, never announced to us",
			      id);
	if (p->n != s->vectors)
		return breach(s, "a removal of peer %u after %u of its %u "
			      "vectors", id, p->n, s->vectors);
	for (unsigned v = 0; v < p->n; v++)
		close(p->fd[v]);
	free(p);
	s->peer[id] = NULL;
	s->npeers--;
	s->removals++;
	return 0;
}

static int take_own(struct strict *s, int fd)
{
	if (s->phase != PICTURE) {
		close(fd);
		return breach(s, "a vector of our own after setup");
	}
	if (s->run >= 0 && s->run != s->id) {
		close(fd);
		return breach(s, "our vectors came inside peer %d's run", s->run);
	}
	s->own_fd[s->own++] = fd;
	s->run = s->id;
	if (s->own == s->vectors) {
		s->phase = RUNNING;
		s->run = -1;
	}
	return 0;
}

static int take_vector(struct strict *s, unsigned id, int fd)
{
	struct strict_peer *p = s->peer[id];

	if (!is_eventfd(fd)) {
		close(fd);
		return breach(s, "a vector of peer %u that is not an eventfd", id);
	}
	if ((int)id == s->id)
		return take_own(s, fd);
	if (s->run >= 0 && s->run != (int)id) {
		close(fd);
		return breach(s, "a vector of peer %u inside peer %d's run", id,
			      s->run);
	}
	if (s->phase == PICTURE && s->own) {
		close(fd);
		return breach(s, "peer %u announced after our own vectors "
			      "began", id);
	}
	if (!p) {
		if (s->phase == RUNNING && s->last_new >= 0 &&
		    (int)id <= s->last_new && s->last_new < STRICT_MAX_ID - 1024) {
			close(fd);
			return breach(s, "new peer %u: not above %d, the last "
				      "one given", id, s->last_new);
		}
		if (s->phase == PICTURE && (int)id <= s->last_old) {
			close(fd);
			return breach(s, "the peers already there out of order: "
				      "%u after %d", id, s->last_old);
		}
		if (s->phase == PICTURE)
			s->last_old = (int)id;
		if (!(p = calloc(1, sizeof(*p)))) {
			close(fd);
			return -ENOMEM;
		}
		s->peer[id] = p;
		s->npeers++;
		s->joins++;
		if (s->phase == RUNNING)
			s->last_new = (int)id;
	} else if (p->n == s->vectors) {
		close(fd);
		return breach(s, "peer %u announced again without a removal", id);
	}
	p->fd[p->n++] = fd;
	s->run = p->n == s->vectors ? -1 : (int)id;
	return 0;
}

int strict_step(struct strict *s, int timeout_ms)
{
	int64_t value = 0;
	int fd = -1, r;

	if (s->why[0])
		return -EPROTO;
	r = read_msg(s, timeout_ms, &value, &fd);
	if (r <= 0) {
		if (r == -ECONNRESET && s->run >= 0)
			return breach(s, "the server closed inside peer %d's run",
				      s->run);
		return r;
	}
	s->messages++;
	switch (s->phase) {
	case VERSION:
		if (fd >= 0 || value != 0)
			r = breach(s, "version %lld%s, expected 0 alone",
				   (long long)value,
				   fd >= 0 ? " with a descriptor" : "");
		s->phase = ID;
		break;
	case ID:
		if (fd >= 0 || value < 0 || value > STRICT_MAX_ID)
			r = breach(s, "ID %lld%s", (long long)value,
				   fd >= 0 ? " with a descriptor" : "");
		s->id = (int)value;
		s->phase = MEMORY;
		break;
	case MEMORY:
		r = take_memory(s, value, fd);
		fd = -1;
		s->phase = PICTURE;
		break;
	default:
		if (value == -1)
			r = breach(s, "a second memory");
		else if (value < 0 || value > STRICT_MAX_ID)
			r = breach(s, "a message %lld", (long long)value);
		else if (fd < 0)
			r = take_removal(s, (unsigned)value);
		else
			r = take_vector(s, (unsigned)value, fd);
		if (value >= 0 && value <= STRICT_MAX_ID)
			fd = -1;   /* taken, or closed */
	}
	if (fd >= 0)
		close(fd);
	return r < 0 ? r : 1;
}

bool strict_ready(const struct strict *s)
{
	return s->phase == RUNNING;
}

int strict_setup(struct strict *s, int timeout_ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!strict_ready(s)) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		long left = timeout_ms - ((t.tv_sec - t0.tv_sec) * 1000 +
					  (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			return -ETIMEDOUT;
		int r = strict_step(s, (int)left);
		if (r < 0)
			return r;
	}
	return 0;
}

unsigned strict_peers(const struct strict *s, unsigned *ids, unsigned max)
{
	unsigned n = 0;

	for (unsigned id = 0; id <= STRICT_MAX_ID; id++)
		if (s->peer[id]) {
			if (n < max)
				ids[n] = id;
			n++;
		}
	return n;
}

void strict_close(struct strict *s)
{
	for (unsigned id = 0; id <= STRICT_MAX_ID; id++)
		if (s->peer[id]) {
			for (unsigned v = 0; v < s->peer[id]->n; v++)
				close(s->peer[id]->fd[v]);
			free(s->peer[id]);
			s->peer[id] = NULL;
		}
	for (unsigned v = 0; v < s->own; v++)
		close(s->own_fd[v]);
	s->own = 0;
	if (s->mem_fd >= 0)
		close(s->mem_fd);
	if (s->sock >= 0)
		close(s->sock);
	s->mem_fd = s->sock = -1;
}
