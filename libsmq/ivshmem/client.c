/* A client of an ivshmem server: the host side of QEMU's ivshmem-doorbell
 * protocol (version 0).  The server sends 8-byte little-endian signed
 * numbers, each with at most one file descriptor: the version, our ID,
 * -1 with the memory, then a peer's ID once per vector with the eventfd
 * that rings it, our own ID once per vector with the eventfds we are rung
 * through, and later a peer's ID alone when it leaves.  To ring, write 1
 * to the eventfd; to take rings, read it.
 *
 * Only system headers and our own: the ivshmem transport is built on
 * this, not the other way round. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "base/clock.h"
#include "client.h"


#define IVC_OWED 16   /* rings owed at once; more are dropped (a nap wakes
			 their receivers) */

struct ivc_peer {
	unsigned id;
	unsigned n;
	int fd[IVSHMEM_MAX_VECTORS];   /* we write them: they ring the peer */
};

struct ivc {
	int sock;
	int id;
	int mem_fd;
	unsigned cap;              /* vectors kept per peer and for us */
	int own[IVSHMEM_MAX_VECTORS];  /* we read them: our vectors */
	unsigned nown;             /* atomic: ivc_wait() reads it unlocked */
	/* The peers: ivc_ring() reads them under the read lock (a descriptor
	 * is never closed under a ring), ivc_update() changes them under
	 * the write lock, which also guards the message being read. */
	pthread_rwlock_t lock;
	struct ivc_peer *peers;    /* sorted by ID */
	unsigned npeers, peers_cap;
	/* rings owed to vectors not known yet (ivc_ring_learn), under the
	 * write lock */
	struct { unsigned peer, vector; } owed[IVC_OWED];
	unsigned nowed;
	unsigned char buf[8];      /* a message read in part */
	unsigned got;
	int pending_fd;
	int gone;                  /* 0, or why the connection is closed:
				      -ENOTCONN the server closed it,
				      -EPROTO it broke the protocol,
				      -EMFILE/-ENFILE a descriptor lost */
};

/* ---- reading messages ---- */

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
static int read_msg(struct ivc *c, int64_t *value, int *fd)
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
static int read_msg_until(struct ivc *c, int64_t *value, int *fd,
			  int64_t deadline)
{
	for (;;) {
		int r = read_msg(c, value, fd);
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

static struct ivc_peer *find_peer(const struct ivc *c, unsigned id)
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

static void remove_peer(struct ivc *c, struct ivc_peer *p)
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
static int take_msg(struct ivc *c, int64_t value, int fd)
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
	struct ivc_peer *p = find_peer(c, id);
	if (fd < 0) {
		settle_owed(c, id, ~0u, -1);  /* it left: nobody to ring */
		if (p)
			remove_peer(c, p);
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
static void hang_up(struct ivc *c, int why)
{
	if (!c->gone) {
		shutdown(c->sock, SHUT_RDWR);
		__atomic_store_n(&c->gone, why, __ATOMIC_RELEASE);
	}
}

/* ---- the API ---- */

static int setup(struct ivc *c, const char *path, unsigned vectors)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int64_t value, deadline = smq_now_ms() + IVC_SETUP_TIMEOUT_MS;
	bool have_memory = false, own_run_over = false;
	unsigned server_n = 0;    /* vectors per peer, 0: not known */
	int fd, err;

	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	strcpy(a.sun_path, path);
	if ((c->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	if (connect(c->sock, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -errno;

	if ((err = read_msg_until(c, &value, &fd, deadline)))
		return err;  /* ECONNRESET: it hung up on us */
	if (fd >= 0) {
		close(fd);
		return -EPROTO;
	}
	if (value != IVSHMEM_PROTOCOL_VERSION)
		return -EPROTONOSUPPORT;
	if ((err = read_msg_until(c, &value, &fd, deadline)))
		return err;  /* ECONNRESET: it hung up on us */
	if (fd >= 0)
		close(fd);
	if (fd >= 0 || value < 0 || value > IVSHMEM_MAX_PEER_ID)
		return -EPROTO;
	c->id = (int)value;

	/* The memory, the peers, then our own vectors, in that order from
	 * the server; as QEMU does, take peers before the memory too. */
	for (;;) {
		unsigned n = c->nown;
		int64_t until = deadline;

		if (have_memory && n > 0) {
			if (own_run_over || (vectors && n >= vectors) ||
			    (server_n && n >= server_n))
				return 0;
			if (!server_n) {   /* settle: see ivc_connect() */
				int64_t settle = smq_now_ms() + IVC_SETTLE_MS;
				until = settle < deadline ? settle : deadline;
			}
		}
		err = read_msg_until(c, &value, &fd, until);
		if (err == -ETIMEDOUT && until != deadline)
			return 0;
		if (err)
			return err;  /* ECONNRESET: it hung up on us */
		if (value == -1) {
			if (fd < 0 || have_memory) {
				if (fd >= 0)
					close(fd);
				return -EPROTO;
			}
			c->mem_fd = fd;
			have_memory = true;
			continue;
		}
		bool was_own = c->nown > 0;
		if ((err = take_msg(c, value, fd)) < 0)
			return err;
		if (err == 1 && !was_own && c->npeers) {
			/* every peer's run came before ours: each is whole */
			server_n = c->peers[0].n;
		}
		if (err == 0 && was_own)
			own_run_over = true;
	}
}

int ivc_connect(struct ivc **cp, const char *socket_path, unsigned vectors)
{
	struct ivc *c;
	int err;

	if (!cp)
		return -EINVAL;
	*cp = NULL;
	if (!socket_path || !*socket_path || vectors > IVSHMEM_MAX_VECTORS)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->sock = c->mem_fd = c->pending_fd = -1;
	c->id = -1;
	c->cap = vectors ? vectors : IVSHMEM_MAX_VECTORS;
	if ((err = pthread_rwlock_init(&c->lock, NULL))) {
		free(c);
		return -err;
	}
	err = setup(c, socket_path, vectors);
	if (err) {
		ivc_close(c);
		return err;
	}
	*cp = c;
	return 0;
}

/* Only the first message, the version, and hang up: a server that hands
 * out IDs sees a client come and go. */
int ivc_server_version(const char *socket_path, int64_t *version)
{
	struct ivc c = { .sock = -1, .pending_fd = -1 };
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = -1, err;

	if (!socket_path || strlen(socket_path) >= sizeof(a.sun_path))
		return -EINVAL;
	strcpy(a.sun_path, socket_path);
	if ((c.sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	err = connect(c.sock, (struct sockaddr *)&a, sizeof(a)) < 0 ? -errno
		: read_msg_until(&c, version, &fd, smq_now_ms() + 1000);
	if (fd >= 0)
		close(fd);
	if (c.pending_fd >= 0)
		close(c.pending_fd);
	close(c.sock);
	return err;
}

int ivc_id(const struct ivc *c)
{
	return c->id;
}

int ivc_memory_fd(const struct ivc *c)
{
	return c->mem_fd;
}

unsigned ivc_vectors(const struct ivc *c)
{
	return __atomic_load_n(&c->nown, __ATOMIC_ACQUIRE);
}

int ivc_socket_fd(const struct ivc *c)
{
	return c->sock;
}

int ivc_vector_fd(const struct ivc *c, unsigned vector)
{
	return vector < ivc_vectors(c) ? c->own[vector] : -ENXIO;
}

int ivc_update(struct ivc *c)
{
	int64_t value;
	int fd, r, taken = 0;

	pthread_rwlock_wrlock(&c->lock);
	if (c->gone) {
		pthread_rwlock_unlock(&c->lock);
		return c->gone;
	}
	while ((r = read_msg(c, &value, &fd)) == 1) {
		if ((r = take_msg(c, value, fd)) < 0)
			break;
		taken++;
	}
	if (r == -ECONNRESET)
		r = -ENOTCONN;
	/* a stream with a message lost in it is read no further */
	if (r == -ENOTCONN || r == -EPROTO || r == -EMFILE || r == -ENFILE)
		hang_up(c, r);
	pthread_rwlock_unlock(&c->lock);
	return r < 0 ? r : taken;
}

int ivc_gone(const struct ivc *c)
{
	return __atomic_load_n(&c->gone, __ATOMIC_ACQUIRE);
}

int ivc_ring(struct ivc *c, unsigned peer, unsigned vector)
{
	static const uint64_t one = 1;
	int fd, err = 0;

	if (peer == (unsigned)c->id) {
		fd = ivc_vector_fd(c, vector);
		if (fd < 0)
			return fd;
		/* a full counter (EAGAIN) is a ring pending all the same */
		return write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN
			       ? -errno : 0;
	}
	pthread_rwlock_rdlock(&c->lock);
	struct ivc_peer *p = find_peer(c, peer);
	if (!p)
		err = -ENOENT;
	else if (vector >= p->n)
		err = -ENXIO;
	else if (write(p->fd[vector], &one, sizeof(one)) < 0 && errno != EAGAIN)
		err = -errno;
	pthread_rwlock_unlock(&c->lock);
	return err;
}

int ivc_ring_learn(struct ivc *c, unsigned peer, unsigned vector,
		   int timeout_ms)
{
	int64_t end = smq_now_ms() + timeout_ms;
	bool closed = false;
	int err;

	for (;;) {
		err = ivc_ring(c, peer, vector);
		if ((err != -ENOENT && err != -ENXIO) || closed)
			return err;
		/* what a server said before it closed counts: one more ring
		 * after the read that found it closed */
		int took = ivc_update(c);
		if (took < 0) {
			closed = true;
			continue;
		}
		int64_t left = end - smq_now_ms();
		if (left <= 0)
			break;
		if (took > 0)
			continue;
		struct pollfd pfd = { c->sock, POLLIN, 0 };
		poll(&pfd, 1, (int)left);
	}
	/* owed: rung when its eventfd comes (a server gone sends none) */
	pthread_rwlock_wrlock(&c->lock);
	bool owe = !c->gone && vector < IVSHMEM_MAX_VECTORS &&
		   c->nowed < IVC_OWED;
	if (owe) {
		c->owed[c->nowed].peer = peer;
		c->owed[c->nowed].vector = vector;
		c->nowed++;
	}
	pthread_rwlock_unlock(&c->lock);
	return owe ? 1 : err;
}

/* The server's socket is watched in the same wait as the vector: a client
 * asleep for long still takes the peers' comings and goings (the server
 * need not keep them for it), and learns at once that the server is
 * gone. */
int ivc_wait(struct ivc *c, unsigned vector, const struct timespec *deadline)
{
	int fd = ivc_vector_fd(c, vector);

	if (fd < 0)
		return fd;
	for (;;) {
		struct timespec left;
		struct pollfd pf[2] = { { fd, POLLIN, 0 },
					{ c->sock, POLLIN, 0 } };
		uint64_t rings;
		int gone = ivc_gone(c);

		if (gone)
			return gone;
		/* Poll first, then read: the eventfd is not ours alone to
		 * make non-blocking (its flags are shared with every peer
		 * that rings it), and only we read it. */
		int n = ppoll(pf, 2, smq_time_left(deadline, &left), NULL);
		if (n < 0)
			return -errno;  /* -EINTR: a signal handler ran */
		if (n > 0 && pf[0].revents) {
			if (read(fd, &rings, sizeof(rings)) == sizeof(rings))
				return 0;
			if (errno != EINTR)
				return -errno;
			continue;
		}
		if (n > 0 && pf[1].revents) {
			int r = ivc_update(c);
			if (r < 0)
				return r;
			continue;
		}
		if (n == 0)
			return -ETIMEDOUT;
	}
}

int ivc_peer_connected(const struct ivc *c, unsigned peer)
{
	pthread_rwlock_t *lock = (pthread_rwlock_t *)&c->lock;
	int yes;

	if (peer == (unsigned)c->id)
		return 1;
	pthread_rwlock_rdlock(lock);
	yes = find_peer(c, peer) != NULL;
	pthread_rwlock_unlock(lock);
	return yes;
}

int ivc_peers(const struct ivc *c, unsigned *ids, unsigned max)
{
	pthread_rwlock_t *lock = (pthread_rwlock_t *)&c->lock;
	int n;

	pthread_rwlock_rdlock(lock);
	for (unsigned i = 0; i < c->npeers && i < max; i++)
		ids[i] = c->peers[i].id;
	n = (int)c->npeers;
	pthread_rwlock_unlock(lock);
	return n;
}

void ivc_close(struct ivc *c)
{
	if (!c)
		return;
	while (c->npeers)
		remove_peer(c, &c->peers[c->npeers - 1]);
	free(c->peers);
	for (unsigned v = 0; v < c->nown; v++)
		close(c->own[v]);
	if (c->pending_fd >= 0)
		close(c->pending_fd);
	if (c->mem_fd >= 0)
		close(c->mem_fd);
	if (c->sock >= 0)
		close(c->sock);
	pthread_rwlock_destroy(&c->lock);
	free(c);
}
