/* An ivshmem server: the server side of QEMU's ivshmem-doorbell protocol
 * (protocol.h).  It owns the shared memory, gives every client that
 * connects to its UNIX socket an ID and one eventfd per interrupt vector,
 * and tells every client when others come and go.
 *
 * Apart from the window on purpose: only the public header, system
 * headers, the protocol, the rule for shm names (shm_name.h) and the
 * sockets the vfio broker shares (transport/unix_socket.c), so that the
 * window's internals can change under it.  One thread at a time uses a
 * server handle.
 *
 * This file is the API and its event loop; server_setup.c makes the
 * memory and the socket, server_peers.c keeps the peers, their
 * IDs and their messages. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include "format/abi.h"
#include "server.h"
#include "transport/common.h"

/* ---- the API ---- */

int smq_server_open(const struct smq_server_config *config, size_t size,
		    struct smq_server **sp)
{
	struct smq_server_config conf, *c = &conf;
	struct smq_server *s;
	struct sockaddr_un addr;
	bool stale;
	int err;

	if (!sp)
		return -EINVAL;
	*sp = NULL;
	if ((err = smq_struct_in(&conf, sizeof(conf), config, size,
				 SMQ_LEAST_SERVER_CONFIG)))
		return err;
	if (!c->socket_path || c->vectors < 1 ||
	    c->vectors > SMQ_SERVER_MAX_VECTORS || c->size == 0 ||
	    c->size > MAX_SIZE || (c->mode & ~07777u))
		return -EINVAL;
	if ((err = smq_unix_address(c->socket_path, &addr)))
		return err;
	/* First the socket: a live server there means nothing is touched. */
	if ((err = smq_unix_probe(&addr, SOCK_STREAM, &stale)))
		return err;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->listen_fd = s->epoll_fd = s->mem_fd = s->reserve_fd = -1;
	s->retry_fd = -1;
	s->vectors = c->vectors;
	if (!(s->socket_path = strdup(c->socket_path))) {
		free(s);
		return -ENOMEM;
	}
	if ((err = smq_srv_open_memory(s, c->memory, c->size)))
		goto fail;
	if ((s->epoll_fd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0 ||
	    (s->retry_fd = timerfd_create(CLOCK_MONOTONIC,
					  TFD_NONBLOCK | TFD_CLOEXEC)) < 0) {
		err = -errno;
		goto fail;
	}
	struct epoll_event r = { .events = EPOLLIN, .data.ptr = &s->retry_fd };
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->retry_fd, &r) < 0) {
		err = -errno;
		goto fail;
	}
	if ((err = smq_srv_reserve_events(s, 2 * EPOLL_BATCH + 2)))
		goto fail;
	if (stale && unlink(addr.sun_path) < 0 && errno != ENOENT) {
		err = -errno;
		goto fail;
	}
	if ((err = smq_srv_make_socket(s, &addr, c->mode ? c->mode : 0600)) ||
	    (err = smq_srv_size_memory(s)))
		goto fail;
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = NULL };
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, s->listen_fd, &e) < 0) {
		err = -errno;
		goto fail;
	}
	*sp = s;
	s->created[0] = 0;
	return 0;
fail:
	/* nothing left behind: not the memory we made either */
	if (!strncmp(s->created, "shm:", 4))
		shm_unlink(s->created + 4);
	else if (!strncmp(s->created, "file:", 5))
		unlink(s->created + 5);
	smq_server_close(s);
	return err;
}

int smq_server_fd(struct smq_server *s)
{
	return s ? s->epoll_fd : -EINVAL;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int server_next(struct smq_server *s, int timeout_ms,
		       struct smq_server_event *ev)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;

	for (;;) {
		struct epoll_event e[EPOLL_BATCH];
		int wait_ms = -1, n, err;

		if (s->evlen) {
			*ev = s->ev[s->evhead];
			s->evhead = (s->evhead + 1) % s->evcap;
			s->evlen--;
			return 0;
		}
		if (deadline >= 0) {
			int64_t left = deadline - now_ms();
			wait_ms = left > 0 ? (int)left : 0;
		}
		n = epoll_wait(s->epoll_fd, e, EPOLL_BATCH, wait_ms);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ETIMEDOUT;
		/* A round adds at most one event per fd it serves and one
		 * for each peer that leaves. */
		err = smq_srv_reserve_events(s, s->npeers + 2 * EPOLL_BATCH + 2);
		if (err)
			return err;
		/* those that left first, then the newcomer: it is not told of
		 * a peer already known gone */
		bool newcomer = false;
		for (int i = 0; i < n; i++) {
			struct peer *p = e[i].data.ptr;
			if (!p) {
				newcomer = true;
				continue;
			}
			if (e[i].data.ptr == &s->retry_fd) {
				smq_srv_retry(s);
				continue;
			}
			if (p->dead)
				continue;
			if (e[i].events & EPOLLOUT)
				smq_srv_peer_flush(s, p);
			if (e[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP |
					   EPOLLERR))
				smq_srv_client_input(p, e[i].events);
		}
		smq_srv_reap(s);
		if (newcomer) {
			err = smq_srv_accept_client(s);
			smq_srv_reap(s);
		}
		/* out of file descriptors with none to give up: say so
		 * rather than spin on a listening socket that stays ready */
		if (err && !s->evlen)
			return err;
		/* rounds that report nothing end at the deadline too */
		if (!s->evlen && deadline >= 0 && now_ms() >= deadline)
			return -ETIMEDOUT;
	}
}

int smq_server_next(struct smq_server *s, int timeout_ms,
		    struct smq_server_event *out, size_t size)
{
	struct smq_server_event ev;

	if (!s || !out || size < SMQ_LEAST_SERVER_EVENT)
		return -EINVAL;
	int err = server_next(s, timeout_ms, &ev);
	if (!err)
		smq_struct_out(out, size, &ev, sizeof(ev));
	return err;
}

int smq_server_peers(struct smq_server *s, unsigned *ids, unsigned max)
{
	unsigned n = 0;

	if (!s || (max && !ids))
		return -EINVAL;
	for (unsigned i = 0; i < s->nslots; i++)
		if (s->slot[i]) {
			if (n < max)
				ids[n] = i;
			n++;
		}
	return (int)n;
}

int smq_server_info(struct smq_server *s, struct smq_server_info *out,
		    size_t size)
{
	struct smq_server_info info;

	if (!s || !out || size < SMQ_LEAST_SERVER_INFO)
		return -EINVAL;
	memset(&info, 0, sizeof(info));
	info.memory_size = s->size;
	info.vectors = s->vectors;
	info.peers = s->npeers;
	return smq_struct_out(out, size, &info, sizeof(info));
}

int smq_server_close(struct smq_server *s)
{
	struct stat st;
	int err = 0;

	if (!s)
		return -EINVAL;
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		/* only the socket we made: another server may have replaced
		 * it since */
		if (lstat(s->socket_path, &st) == 0 && S_ISSOCK(st.st_mode) &&
		    st.st_dev == s->sock_dev && st.st_ino == s->sock_ino &&
		    unlink(s->socket_path) < 0 && errno != ENOENT)
			err = -errno;
	}
	for (unsigned i = 0; i < s->nslots; i++)
		if (s->slot[i])
			smq_srv_peer_free(s->slot[i]);
	free(s->slot);
	free(s->ev);
	if (s->mem_fd >= 0)
		close(s->mem_fd);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	if (s->reserve_fd >= 0)
		close(s->reserve_fd);
	if (s->retry_fd >= 0)
		close(s->retry_fd);
	free(s->socket_path);
	free(s);
	return err;
}
