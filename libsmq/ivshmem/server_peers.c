/* The ivshmem server's peers: their IDs, the messages queued for them,
 * joining and leaving, and the events that report it. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include "server.h"
#include "transport/common.h"

/* ---- peers and their messages ---- */

static void mark_dead(struct peer *p, int err)
{
	if (!p->dead) {
		p->dead = true;
		p->dead_err = err;
	}
}

static int send_msg(int sock, int64_t value, int fd)
{
	uint64_t le = htole64((uint64_t)value);

	/* 8 bytes on a stream socket go whole or not at all */
	return smq_send_fd(sock, &le, sizeof(le), fd, MSG_DONTWAIT);
}

/* Why a failed send ends a client: a closed connection is a peer that
 * left, anything else a drop. */
static int send_error(int err)
{
	return err == -EPIPE || err == -ECONNRESET ? 0 : err;
}

static void set_want_out(struct smq_server *s, struct peer *p, bool on)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLRDHUP |
					   (on ? EPOLLOUT : 0),
				 .data.ptr = p };

	if (p->want_out == on)
		return;
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_MOD, p->sock, &e) < 0)
		mark_dead(p, -errno);
	else
		p->want_out = on;
}

static struct outmsg *at(struct peer *p, unsigned i)
{
	return &p->q[(p->qhead + i) % p->qcap];
}

/* Room for n more; false (and the client dropped) without memory. */
static bool make_room(struct peer *p, unsigned n)
{
	if (p->qlen + n <= p->qcap)
		return true;
	unsigned cap = p->qcap ? 2 * p->qcap : 64;
	while (cap < p->qlen + n)
		cap *= 2;
	struct outmsg *q = malloc(cap * sizeof(*q));
	if (!q) {
		mark_dead(p, -ENOMEM);
		return false;
	}
	for (unsigned i = 0; i < p->qlen; i++)
		q[i] = *at(p, i);
	free(p->q);
	p->q = q;
	p->qcap = cap;
	p->qhead = 0;
	return true;
}

static void vecs_put(struct vecs *v)
{
	if (!v || --v->refs)
		return;
	for (unsigned i = 0; i < SMQ_SERVER_MAX_VECTORS; i++)
		if (v->efd[i] >= 0)
			close(v->efd[i]);
	free(v);
}

static void drop_msg(struct outmsg *m)
{
	if (m->kind == OUT_RUN)
		vecs_put(m->of);
}

/* The kernel refused a send for the descriptors we have in flight, sent
 * and not yet received, which it bounds by our limit of open files
 * unless we may exceed it: a client's, or several clients', that do not
 * read.  No event says when they have read, so the send goes again at
 * the retry timer; meanwhile p waits, as a full socket does. */
static void refs_wait(struct smq_server *s, struct peer *p)
{
	struct itimerspec it = { { 0, 0 }, { 0, RETRY_MS * 1000000L } };

	p->refs_wait = true;
	if (s->retry_armed)
		return;
	if (timerfd_settime(s->retry_fd, 0, &it, NULL) < 0)
		mark_dead(p, -errno);
	else
		s->retry_armed = true;
}

void smq_srv_retry(struct smq_server *s)
{
	uint64_t n;

	if (read(s->retry_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	s->retry_armed = false;
	for (unsigned i = 0; i < s->nslots; i++) {
		struct peer *p = s->slot[i];
		if (p && p->refs_wait && !p->dead) {
			p->refs_wait = false;
			smq_srv_peer_flush(s, p);
		}
	}
}

/* Sends what can go now, in order; the rest waits for EPOLLOUT, or for
 * the retry timer. */
void smq_srv_peer_flush(struct smq_server *s, struct peer *p)
{
	while (p->qlen && !p->dead && !p->refs_wait) {
		struct outmsg *m = at(p, 0);
		int fd = m->kind == OUT_RUN ? m->of->efd[m->next] : m->fd;
		int err = send_msg(p->sock, m->value, fd);
		if (err == -EAGAIN) {
			set_want_out(s, p, true);
			return;
		}
		if (err == -ETOOMANYREFS) {
			/* the timer sends again, not EPOLLOUT: the socket has
			 * room, and EPOLLOUT would fire at once, for ever */
			set_want_out(s, p, false);
			refs_wait(s, p);
			return;
		}
		if (err) {
			mark_dead(p, send_error(err));
			return;
		}
		if (m->kind == OUT_RUN && ++m->next < s->vectors)
			continue;
		drop_msg(m);
		p->qhead = (p->qhead + 1) % p->qcap;
		p->qlen--;
	}
	if (!p->dead && !p->refs_wait)
		set_want_out(s, p, false);
}

/* Queues a message for p (fd borrowed: it stays open while queued). */
static void peer_send(struct smq_server *s, struct peer *p, int64_t value,
		      int fd)
{
	if (p->dead || !make_room(p, 1))
		return;
	*at(p, p->qlen++) = (struct outmsg){ OUT_MSG, value, fd, NULL, 0 };
	if (!p->want_out && !p->refs_wait)
		smq_srv_peer_flush(s, p);
}

/* Queues o's vectors for p: its ID once per vector with each eventfd. */
static void peer_send_run(struct smq_server *s, struct peer *p,
			  struct peer *o)
{
	if (p->dead || !make_room(p, 1))
		return;
	o->vecs->refs++;
	*at(p, p->qlen++) = (struct outmsg){ OUT_RUN, o->id, -1, o->vecs, 0 };
	if (!p->want_out && !p->refs_wait)
		smq_srv_peer_flush(s, p);
}

/* o leaves: what p still has to be told of it.  A run not begun is
 * dropped, and p is never told of o at all: a join and a departure
 * cancel out, so what a client that does not read costs stays bounded by
 * the peers connected.  A run begun (only the first in the queue can be)
 * goes on, with o's eventfds that it keeps open, then the removal, as for
 * every peer p was told of: nothing here takes a descriptor, so a server
 * at its limit of open files drops no client for it. */
static void forget_peer(struct smq_server *s, struct peer *p, struct peer *o)
{
	for (unsigned i = 0; i < p->qlen; i++) {
		struct outmsg *m = at(p, i);
		if (m->kind != OUT_RUN || m->of != o->vecs)
			continue;
		if (m->next == 0 || p->dead) {
			drop_msg(m);
			for (unsigned j = i; j + 1 < p->qlen; j++)
				*at(p, j) = *at(p, j + 1);
			p->qlen--;
			return;   /* never told: no removal */
		}
		break;
	}
	peer_send(s, p, o->id, -1);
}

void smq_srv_peer_free(struct peer *p)
{
	for (unsigned i = 0; i < p->qlen; i++)
		drop_msg(at(p, i));
	free(p->q);
	vecs_put(p->vecs);
	if (p->sock >= 0)
		close(p->sock);
	free(p);
}

/* ---- events ---- */

int smq_srv_reserve_events(struct smq_server *s, unsigned n)
{
	if (s->evcap >= n)
		return 0;
	struct smq_server_event *ev = malloc(n * sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	for (unsigned i = 0; i < s->evlen; i++)
		ev[i] = s->ev[(s->evhead + i) % s->evcap];
	free(s->ev);
	s->ev = ev;
	s->evcap = n;
	s->evhead = 0;
	return 0;
}

/* Room is reserved before every round (smq_srv_reserve_events), so an
 * event is never lost for want of memory. */
static void push_event(struct smq_server *s, int type, unsigned peer, int pid,
		       int err)
{
	if (s->evlen == s->evcap)
		return;
	s->ev[(s->evhead + s->evlen) % s->evcap] =
		(struct smq_server_event){ type, peer, pid, err };
	s->evlen++;
}

/* ---- joining and leaving ---- */

/* The ID after the last one given, skipping those in use, wrapping after
 * the highest: a freed ID comes back only after every other.  QEMU's
 * ivshmem device frees a peer's table of eventfds when the peer leaves and
 * writes into it when the same ID joins again (hw/misc/ivshmem.c,
 * close_peer_eventfds() and process_msg_connect()): an ID given again at
 * once corrupts the heap of every guest that saw it leave.  QEMU's own
 * example server hands IDs out in this order too. */
static int free_id(struct smq_server *s, unsigned *id)
{
	unsigned i = s->next_id;

	if (s->npeers >= SMQ_SERVER_MAX_PEERS)
		return -ENOSPC;
	/* ends: an ID past the table is free, and one is free in it when
	 * the table holds them all */
	while (i < s->nslots && s->slot[i])
		i = (i + 1) % SMQ_SERVER_MAX_PEERS;
	if (i >= s->nslots) {
		unsigned n = s->nslots ? 2 * s->nslots : 16;
		while (n <= i)
			n *= 2;
		if (n > SMQ_SERVER_MAX_PEERS)
			n = SMQ_SERVER_MAX_PEERS;
		struct peer **slot = realloc(s->slot, n * sizeof(*slot));
		if (!slot)
			return -ENOMEM;
		memset(slot + s->nslots, 0, (n - s->nslots) * sizeof(*slot));
		s->slot = slot;
		s->nslots = n;
	}
	*id = i;
	s->next_id = (i + 1) % SMQ_SERVER_MAX_PEERS;
	return 0;
}

static int peer_pid(int sock)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    cred.pid <= 0)
		return -1;
	return cred.pid;
}

/* Out of file descriptors: take the connection with the fd we kept for
 * that, and refuse it, rather than see the listening socket stay ready
 * for ever. */
static int refuse_for_fds(struct smq_server *s, int err)
{
	int fd, pid = -1;

	if (s->reserve_fd < 0 &&
	    (s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
		return err;   /* nothing to give up: the caller says so */
	close(s->reserve_fd);
	fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0) {
		pid = peer_pid(fd);
		close(fd);
		push_event(s, SMQ_PEER_REFUSED, 0, pid, err);
	}
	s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	return 0;
}

/* The order of QEMU's ivshmem spec: version, ID, memory; the newcomer to
 * the others; the others to the newcomer, by ID; its own vectors.  Every
 * peer in the table is told of every other, even one found gone in this
 * round and not yet reaped: its removal follows (QEMU's server does the
 * same), and the rule of forget_peer() holds for every pair. */
int smq_srv_accept_client(struct smq_server *s)
{
	struct peer *p;
	unsigned id;
	int fd, pid, err;

	fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE)
			return refuse_for_fds(s, -errno);
		return 0;   /* EAGAIN, ECONNABORTED: nothing to take */
	}
	pid = peer_pid(fd);
	p = calloc(1, sizeof(*p));
	if (!p) {
		err = -ENOMEM;
		goto refuse;
	}
	p->sock = -1;
	if (!(p->vecs = malloc(sizeof(*p->vecs)))) {
		err = -ENOMEM;
		goto refuse;
	}
	p->vecs->refs = 1;
	for (unsigned v = 0; v < SMQ_SERVER_MAX_VECTORS; v++)
		p->vecs->efd[v] = -1;
	for (unsigned v = 0; v < s->vectors; v++)
		if ((p->vecs->efd[v] = eventfd(0, EFD_CLOEXEC)) < 0) {
			err = -errno;
			goto refuse;
		}
	if ((err = free_id(s, &id)))
		goto refuse;
	struct epoll_event e = { .events = EPOLLIN | EPOLLRDHUP, .data.ptr = p };
	if (epoll_ctl(s->epoll_fd, EPOLL_CTL_ADD, fd, &e) < 0) {
		err = -errno;
		goto refuse;
	}
	p->sock = fd;
	p->id = id;
	p->pid = pid;
	s->slot[id] = p;
	s->npeers++;
	push_event(s, SMQ_PEER_JOINED, id, pid, 0);

	peer_send(s, p, IVSHMEM_PROTOCOL_VERSION, -1);
	peer_send(s, p, id, -1);
	peer_send(s, p, -1, s->mem_fd);
	for (unsigned i = 0; i < s->nslots; i++)
		if (s->slot[i] && s->slot[i] != p)
			peer_send_run(s, s->slot[i], p);
	for (unsigned i = 0; i < s->nslots; i++)
		if (s->slot[i] && s->slot[i] != p)
			peer_send_run(s, p, s->slot[i]);
	peer_send_run(s, p, p);
	return 0;
refuse:
	if (p)
		smq_srv_peer_free(p);
	close(fd);
	push_event(s, SMQ_PEER_REFUSED, 0, pid, err);
	return 0;
}

/* Anything a client sends breaks the one-way protocol; end of file is a
 * client that left. */
void smq_srv_client_input(struct peer *p, uint32_t events)
{
	char c;
	ssize_t n = recv(p->sock, &c, 1, MSG_DONTWAIT);

	if (n > 0)
		mark_dead(p, -EPROTO);
	else if (n == 0 || errno == ECONNRESET)
		mark_dead(p, 0);
	else if (errno != EAGAIN && errno != EINTR)
		mark_dead(p, -errno);
	else if (events & (EPOLLHUP | EPOLLERR))
		mark_dead(p, 0);
}

/* Removes the dead, reports them, and tells the others; telling may kill
 * more (a client gone), so until none is left. */
void smq_srv_reap(struct smq_server *s)
{
	bool again = true;

	while (again) {
		again = false;
		for (unsigned i = 0; i < s->nslots; i++) {
			struct peer *p = s->slot[i];
			if (!p || !p->dead)
				continue;
			s->slot[i] = NULL;
			s->npeers--;
			epoll_ctl(s->epoll_fd, EPOLL_CTL_DEL, p->sock, NULL);
			push_event(s, SMQ_PEER_LEFT, p->id, p->pid, p->dead_err);
			for (unsigned j = 0; j < s->nslots; j++)
				if (s->slot[j])
					forget_peer(s, s->slot[j], p);
			smq_srv_peer_free(p);
			again = true;
		}
	}
}
