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
#include "client_int.h"

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

	if ((err = ivc_read_msg_until(c, &value, &fd, deadline)))
		return err;  /* ECONNRESET: it hung up on us */
	if (fd >= 0) {
		close(fd);
		return -EPROTO;
	}
	if (value != IVSHMEM_PROTOCOL_VERSION)
		return -EPROTONOSUPPORT;
	if ((err = ivc_read_msg_until(c, &value, &fd, deadline)))
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
		err = ivc_read_msg_until(c, &value, &fd, until);
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
		if ((err = ivc_take_msg(c, value, fd)) < 0)
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
		: ivc_read_msg_until(&c, version, &fd, smq_now_ms() + 1000);
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
	while ((r = ivc_read_msg(c, &value, &fd)) == 1) {
		if ((r = ivc_take_msg(c, value, fd)) < 0)
			break;
		taken++;
	}
	if (r == -ECONNRESET)
		r = -ENOTCONN;
	/* a stream with a message lost in it is read no further */
	if (r == -ENOTCONN || r == -EPROTO || r == -EMFILE || r == -ENFILE)
		ivc_hang_up(c, r);
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
	struct ivc_peer *p = ivc_find_peer(c, peer);
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
	yes = ivc_find_peer(c, peer) != NULL;
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
		ivc_remove_peer(c, &c->peers[c->npeers - 1]);
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
