/* The ivshmem client's side of the server's messages: each 8 bytes with
 * at most one descriptor, read as far as they have come, and the table of
 * peers and vectors they build (see client.c for the protocol). */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "base/clock.h"
#include "client_int.h"

/* Descriptors the server sent were not received (MSG_CTRUNC): this
 * process is out of descriptors (-EMFILE, -ENFILE), not the server at
 * fault, if it cannot make one now either; else the server sent more
 * than a message holds (-EPROTO). */
static int lost_fds(int sock)
{
	int fd = fcntl(sock, F_DUPFD_CLOEXEC, 0);

	if (fd >= 0) {
		close(fd);
		return -EPROTO;
	}
	return errno == EMFILE || errno == ENFILE ? -errno : -EPROTO;
}

/* 1: a whole message in *value and *fd (-1: none); 0: not complete yet;
 * -ECONNRESET: end of file; -EPROTO: more than one descriptor;
 * -EMFILE, -ENFILE: one lost, out of descriptors; another negative
 * errno. */
int ivc_read_msg(struct ivc *c, int64_t *value, int *fd)
{
	while (c->got < sizeof(c->buf)) {
		union {
			char buf[CMSG_SPACE(4 * sizeof(int))];
			struct cmsghdr align;
		} u;
		struct iovec iov = { c->buf + c->got, sizeof(c->buf) - c->got };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = u.buf,
				     .msg_controllen = sizeof(u.buf) };
		bool extra = false;
		ssize_t n = recvmsg(c->sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? 0 : -errno;
		}
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm;
		     cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level != SOL_SOCKET ||
			    cm->cmsg_type != SCM_RIGHTS)
				continue;
			size_t nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < nfd; i++) {
				int f;
				memcpy(&f, CMSG_DATA(cm) + i * sizeof(int),
				       sizeof(f));
				if (c->pending_fd < 0 && !extra) {
					c->pending_fd = f;
				} else {
					close(f);
					extra = true;
				}
			}
		}
		if (mh.msg_flags & MSG_CTRUNC)
			return lost_fds(c->sock);
		if (extra)
			return -EPROTO;
		if (n == 0)
			return -ECONNRESET;
		c->got += (unsigned)n;
	}
	uint64_t le;
	memcpy(&le, c->buf, sizeof(le));
	*value = (int64_t)le64toh(le);
	*fd = c->pending_fd;
	c->pending_fd = -1;
	c->got = 0;
	return 1;
}

/* Waits for a whole message until deadline (ms of smq_now_ms()). */
int ivc_read_msg_until(struct ivc *c, int64_t *value, int *fd,
		       int64_t deadline)
{
	for (;;) {
		int r = ivc_read_msg(c, value, fd);
		if (r)
			return r < 0 ? r : 0;
		int64_t left = deadline - smq_now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd pf = { c->sock, POLLIN, 0 };
		if (poll(&pf, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
	}
}

/* ---- peers ---- */

struct ivc_peer *ivc_find_peer(const struct ivc *c, unsigned id)
{
	unsigned lo = 0, hi = c->npeers;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (c->peers[mid].id == id)
			return &c->peers[mid];
		if (c->peers[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static struct ivc_peer *add_peer(struct ivc *c, unsigned id)
{
	unsigned at = 0;

	if (c->npeers == c->peers_cap) {
		unsigned cap = c->peers_cap ? 2 * c->peers_cap : 8;
		struct ivc_peer *p = realloc(c->peers, cap * sizeof(*p));
		if (!p)
			return NULL;
		c->peers = p;
		c->peers_cap = cap;
	}
	while (at < c->npeers && c->peers[at].id < id)
		at++;
	memmove(&c->peers[at + 1], &c->peers[at],
		(c->npeers - at) * sizeof(*c->peers));
	c->npeers++;
	c->peers[at].id = id;
	c->peers[at].n = 0;
	return &c->peers[at];
}

void ivc_remove_peer(struct ivc *c, struct ivc_peer *p)
{
	for (unsigned v = 0; v < p->n; v++)
		close(p->fd[v]);
	unsigned at = (unsigned)(p - c->peers);
	memmove(p, p + 1, (c->npeers - at - 1) * sizeof(*p));
	c->npeers--;
}

/* The rings owed to vector of peer (~0u: any of its vectors) are paid:
 * rung through fd, or dropped (fd -1).  Under the write lock. */
static void settle_owed(struct ivc *c, unsigned peer, unsigned vector, int fd)
{
	static const uint64_t one = 1;

	for (unsigned i = 0; i < c->nowed;) {
		if (c->owed[i].peer != peer ||
		    (vector != ~0u && c->owed[i].vector != vector)) {
			i++;
			continue;
		}
		if (fd >= 0 && write(fd, &one, sizeof(one)) < 0) {
			/* a full counter is a ring pending all the same */
		}
		c->owed[i] = c->owed[--c->nowed];
	}
}

/* One message after the memory: a peer's vector, a peer leaving, or one
 * of our own vectors.  Takes fd.  1: it was one of our vectors. */
int ivc_take_msg(struct ivc *c, int64_t value, int fd)
{
	if (value < 0 || value > IVSHMEM_MAX_PEER_ID) {
		if (fd >= 0)
			close(fd);
		return -EPROTO;   /* a second memory, or garbage */
	}
	unsigned id = (unsigned)value;
	if (id == (unsigned)c->id) {
		if (fd < 0)
			return -EPROTO;   /* we did not leave */
		unsigned n = __atomic_load_n(&c->nown, __ATOMIC_RELAXED);
		if (n >= c->cap) {
			close(fd);        /* more than we use: QEMU does so */
			return 1;
		}
		c->own[n] = fd;
		__atomic_store_n(&c->nown, n + 1, __ATOMIC_RELEASE);
		return 1;
	}
	struct ivc_peer *p = ivc_find_peer(c, id);
	if (fd < 0) {
		settle_owed(c, id, ~0u, -1);  /* it left: nobody to ring */
		if (p)
			ivc_remove_peer(c, p);
		return 0;     /* a peer we never saw: nothing to forget */
	}
	if (!p && !(p = add_peer(c, id))) {
		close(fd);
		return -ENOMEM;
	}
	if (p->n < c->cap) {
		p->fd[p->n] = fd;
		settle_owed(c, id, p->n, fd);
		p->n++;
	} else {
		close(fd);
	}
	return 0;
}

/* The connection is closed on error, as the spec asks; what we know of
 * the peers stays usable. */
void ivc_hang_up(struct ivc *c, int why)
{
	if (!c->gone) {
		shutdown(c->sock, SHUT_RDWR);
		__atomic_store_n(&c->gone, why, __ATOMIC_RELEASE);
	}
}
