/* An ivshmem server: the server side of QEMU's ivshmem-doorbell protocol
 * (version 0, QEMU's docs/specs/ivshmem-spec.txt).  It owns the shared
 * memory, gives every client that connects to its UNIX socket an ID and
 * one eventfd per interrupt vector, and tells every client when others
 * come and go.  The connection is one-way: each message is an 8-byte
 * little-endian signed number, with at most one file descriptor.
 *
 * Self-contained on purpose: only the public header and system headers,
 * so that the window's internals can change under it.  One thread at a
 * time uses a server handle. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "smq.h"

#define PROTOCOL_VERSION 0
#define EPOLL_BATCH 8
#define MAX_SIZE (1ull << 46)

/* A message the client's socket had no room for yet; fd is our own
 * duplicate, so the message stays valid after its peer leaves. */
struct outmsg {
	int64_t value;
	int fd;
};

struct peer {
	int sock;
	unsigned id;
	int pid;
	int efd[SMQ_SERVER_MAX_VECTORS];  /* its vectors: it reads, others ring */
	struct outmsg *q;                 /* a ring of unsent messages */
	unsigned qhead, qlen, qcap;
	bool want_out;                    /* EPOLLOUT armed */
	bool dead;
	int dead_err;                     /* 0: it closed; else why dropped */
};

struct smq_server {
	int listen_fd;
	int epoll_fd;
	int mem_fd;
	int reserve_fd;        /* given up to accept (and refuse) a client
				  when we are out of file descriptors */
	uint64_t size;
	unsigned vectors;
	char *socket_path;
	dev_t sock_dev;        /* the socket we made, to remove only it */
	ino_t sock_ino;
	struct peer **slot;    /* by ID; NULL: free */
	unsigned nslots, npeers;
	unsigned next_id;      /* where free_id() looks first */
	struct smq_server_event *ev;  /* a ring of events not yet taken */
	unsigned evhead, evlen, evcap;
	char created[256];     /* while opening: the memory we created, "shm"
				  or "file" prefixed, to remove on failure */
};

/* ---- the memory ---- */

/* The shm transport's rule for a name: it stays inside /dev/shm (1 to 200
 * of A-Z a-z 0-9 . _ -, not starting with '.', no "..").  Kept in step
 * with libsmq's shm transport. */
static bool shm_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 200 || name[0] == '.' || strstr(name, ".."))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' ||
		      c == '.'))
			return false;
	}
	return true;
}

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static int grow(int fd, uint64_t size)
{
	int err = posix_fallocate(fd, 0, (off_t)size);

	if (err == EOPNOTSUPP || err == EINVAL)
		err = ftruncate(fd, (off_t)size) < 0 ? errno : 0;
	return -err;
}

/* Opens or creates (O_EXCL first, so that we know which) a shm object or
 * a file, never through a symbolic link. */
static int open_named(const char *path, bool shm, bool *created)
{
	for (int tries = 0; tries < 8; tries++) {
		int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC;
		int fd = shm ? shm_open(path, flags | O_CREAT | O_EXCL, 0600)
			     : open(path, flags | O_CREAT | O_EXCL, 0600);
		if (fd >= 0) {
			*created = true;
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
		fd = shm ? shm_open(path, flags, 0) : open(path, flags);
		if (fd >= 0) {
			*created = false;
			return fd;
		}
		if (errno != ENOENT)   /* ENOENT: removed meanwhile, again */
			return -errno;
	}
	return -EAGAIN;
}

/* The memory, sized to a power of two: QEMU maps it as a PCI BAR, and a
 * BAR's size is a power of two. */
static int open_memory(struct smq_server *s, const char *spec, uint64_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t want = pow2_at_least(size > (uint64_t)page ? size :
				      (uint64_t)page);
	char path[256];
	bool shm, created = false;
	struct stat st;
	int fd, err;

	if (!spec) {
		fd = memfd_create("smq-ivshmem", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		if (fd < 0)
			return -errno;
		err = grow(fd, want);
		/* Nobody may resize it under the peers' mappings. */
		if (!err && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
				  F_SEAL_SEAL) < 0)
			err = -errno;
		if (err) {
			close(fd);
			return err;
		}
		s->mem_fd = fd;
		s->size = want;
		return 0;
	}
	if (!strncmp(spec, "shm:", 4) || (!strchr(spec, ':') &&
					  spec[0] != '/' && spec[0] != '.')) {
		const char *name = strncmp(spec, "shm:", 4) ? spec : spec + 4;
		if (!shm_name_ok(name))
			return -EINVAL;
		snprintf(path, sizeof(path), "/%s", name);
		shm = true;
	} else if (!strncmp(spec, "file:", 5) || spec[0] == '/' ||
		   spec[0] == '.') {
		const char *p = strncmp(spec, "file:", 5) ? spec : spec + 5;
		if (!*p)
			return -EINVAL;
		if (strlen(p) >= sizeof(path))
			return -ENAMETOOLONG;
		strcpy(path, p);
		shm = false;
	} else {
		return -EPROTONOSUPPORT;
	}

	fd = open_named(path, shm, &created);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	/* Never another user's object: its owner could resize or reuse it
	 * under the peers. */
	err = !S_ISREG(st.st_mode) ? -EINVAL : st.st_uid != geteuid() ? -EPERM : 0;
	if (err)
		goto fail;
	if ((uint64_t)st.st_size > want)   /* never shrunk */
		want = pow2_at_least((uint64_t)st.st_size);
	if (want > MAX_SIZE) {
		err = -EFBIG;
		goto fail;
	}
	/* grown by size_memory(), once the socket is ours */
	s->mem_fd = fd;
	s->size = want;
	if (created)
		snprintf(s->created, sizeof(s->created), "%s:%s",
			 shm ? "shm" : "file", path);
	return 0;
fail:
	close(fd);
	if (created && shm)
		shm_unlink(path);
	else if (created)
		unlink(path);
	return err;
}

static int size_memory(struct smq_server *s)
{
	struct stat st;

	if (fstat(s->mem_fd, &st) < 0)
		return -errno;
	return (uint64_t)st.st_size < s->size ? grow(s->mem_fd, s->size) : 0;
}

/* ---- the socket ---- */

static int socket_address(const char *path, struct sockaddr_un *a)
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

/* 0: nothing there, or a stale socket (*stale); -EADDRINUSE: a server
 * answers on it; -EEXIST: something that is not a socket. */
static int probe_socket(const struct sockaddr_un *a, bool *stale)
{
	struct stat st;
	int fd, err = 0;

	*stale = false;
	if (lstat(a->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	/* non-blocking: a server too busy to take us (EAGAIN) is alive */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)a, sizeof(*a)) == 0 ||
	    errno == EAGAIN)
		err = -EADDRINUSE;
	else if (errno == ECONNREFUSED)
		*stale = true;
	else
		err = -errno;
	close(fd);
	return err;
}

static int make_socket(struct smq_server *s, const struct sockaddr_un *a,
		       unsigned mode)
{
	struct stat st;
	int fd, err;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (const struct sockaddr *)a, sizeof(*a)) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	/* Nobody can connect before listen(): the mode is right first. */
	if (chmod(a->sun_path, (mode_t)(mode & 07777)) < 0 ||
	    lstat(a->sun_path, &st) < 0 || listen(fd, 64) < 0) {
		err = -errno;
		close(fd);
		unlink(a->sun_path);
		return err;
	}
	s->listen_fd = fd;
	s->sock_dev = st.st_dev;
	s->sock_ino = st.st_ino;
	return 0;
}

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
	struct iovec iov = { &le, sizeof(le) };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
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
		n = sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* 8 bytes on a stream socket go whole or not at all */
	return n == (ssize_t)sizeof(le) ? 0 : -EIO;
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

/* A client that lets more than four times the whole picture (every
 * peer's vectors) and a thousand more pile up unread is not reading: it
 * is dropped.  Each waiting message can hold a descriptor of ours. */
static unsigned backlog_limit(const struct smq_server *s)
{
	return 4 * (s->npeers + 1) * (s->vectors + 1) + 1024;
}

static void peer_send(struct smq_server *s, struct peer *p, int64_t value,
		      int fd)
{
	if (p->dead)
		return;
	if (p->qlen == 0) {
		int err = send_msg(p->sock, value, fd);
		if (!err)
			return;
		if (err != -EAGAIN) {
			mark_dead(p, send_error(err));
			return;
		}
	}
	if (p->qlen >= backlog_limit(s)) {
		mark_dead(p, -ENOBUFS);
		return;
	}
	if (p->qlen == p->qcap) {
		unsigned cap = p->qcap ? 2 * p->qcap : 64;
		struct outmsg *q = malloc(cap * sizeof(*q));
		if (!q) {
			mark_dead(p, -ENOMEM);
			return;
		}
		for (unsigned i = 0; i < p->qlen; i++)
			q[i] = p->q[(p->qhead + i) % p->qcap];
		free(p->q);
		p->q = q;
		p->qcap = cap;
		p->qhead = 0;
	}
	int dup_fd = -1;
	if (fd >= 0 && (dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
		mark_dead(p, -errno);
		return;
	}
	p->q[(p->qhead + p->qlen) % p->qcap] = (struct outmsg){ value, dup_fd };
	p->qlen++;
	set_want_out(s, p, true);
}

static void peer_flush(struct smq_server *s, struct peer *p)
{
	while (p->qlen && !p->dead) {
		struct outmsg *m = &p->q[p->qhead];
		int err = send_msg(p->sock, m->value, m->fd);
		if (err == -EAGAIN)
			return;
		if (err) {
			mark_dead(p, send_error(err));
			return;
		}
		if (m->fd >= 0)
			close(m->fd);
		p->qhead = (p->qhead + 1) % p->qcap;
		p->qlen--;
	}
	if (!p->dead)
		set_want_out(s, p, false);
}

static void peer_free(struct peer *p)
{
	for (unsigned i = 0; i < p->qlen; i++) {
		int fd = p->q[(p->qhead + i) % p->qcap].fd;
		if (fd >= 0)
			close(fd);
	}
	free(p->q);
	for (unsigned v = 0; v < SMQ_SERVER_MAX_VECTORS; v++)
		if (p->efd[v] >= 0)
			close(p->efd[v]);
	if (p->sock >= 0)
		close(p->sock);
	free(p);
}

/* ---- events ---- */

static int reserve_events(struct smq_server *s, unsigned n)
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

/* Room is reserved before every round (reserve_events), so an event is
 * never lost for want of memory. */
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
 * the others; the others to the newcomer, by ID; its own vectors. */
static int accept_client(struct smq_server *s)
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
	for (unsigned v = 0; v < SMQ_SERVER_MAX_VECTORS; v++)
		p->efd[v] = -1;
	for (unsigned v = 0; v < s->vectors; v++)
		if ((p->efd[v] = eventfd(0, EFD_CLOEXEC)) < 0) {
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

	peer_send(s, p, PROTOCOL_VERSION, -1);
	peer_send(s, p, id, -1);
	peer_send(s, p, -1, s->mem_fd);
	for (unsigned i = 0; i < s->nslots; i++) {
		struct peer *o = s->slot[i];
		if (o && o != p && !o->dead)
			for (unsigned v = 0; v < s->vectors; v++)
				peer_send(s, o, id, p->efd[v]);
	}
	for (unsigned i = 0; i < s->nslots; i++) {
		struct peer *o = s->slot[i];
		if (o && o != p && !o->dead)
			for (unsigned v = 0; v < s->vectors; v++)
				peer_send(s, p, o->id, o->efd[v]);
	}
	for (unsigned v = 0; v < s->vectors; v++)
		peer_send(s, p, id, p->efd[v]);
	return 0;
refuse:
	if (p)
		peer_free(p);
	close(fd);
	push_event(s, SMQ_PEER_REFUSED, 0, pid, err);
	return 0;
}

/* Anything a client sends breaks the one-way protocol; end of file is a
 * client that left. */
static void client_input(struct peer *p, uint32_t events)
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
 * more (a client that does not read), so until none is left. */
static void reap(struct smq_server *s)
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
					peer_send(s, s->slot[j], p->id, -1);
			peer_free(p);
			again = true;
		}
	}
}

/* ---- the API ---- */

int smq_server_open(struct smq_server **sp, const struct smq_server_config *c)
{
	struct smq_server *s;
	struct sockaddr_un addr;
	bool stale;
	int err;

	if (!sp)
		return -EINVAL;
	*sp = NULL;
	if (!c || !c->socket_path || c->vectors < 1 ||
	    c->vectors > SMQ_SERVER_MAX_VECTORS || c->size == 0 ||
	    c->size > MAX_SIZE || (c->mode & ~07777u))
		return -EINVAL;
	if ((err = socket_address(c->socket_path, &addr)))
		return err;
	/* First the socket: a live server there means nothing is touched. */
	if ((err = probe_socket(&addr, &stale)))
		return err;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->listen_fd = s->epoll_fd = s->mem_fd = s->reserve_fd = -1;
	s->vectors = c->vectors;
	if (!(s->socket_path = strdup(c->socket_path))) {
		free(s);
		return -ENOMEM;
	}
	if ((err = open_memory(s, c->memory, c->size)))
		goto fail;
	if ((s->epoll_fd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		err = -errno;
		goto fail;
	}
	if ((err = reserve_events(s, 2 * EPOLL_BATCH + 2)))
		goto fail;
	if (stale && unlink(addr.sun_path) < 0 && errno != ENOENT) {
		err = -errno;
		goto fail;
	}
	if ((err = make_socket(s, &addr, c->mode ? c->mode : 0600)) ||
	    (err = size_memory(s)))
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

int smq_server_next(struct smq_server *s, int timeout_ms,
		    struct smq_server_event *ev)
{
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;

	if (!s || !ev)
		return -EINVAL;
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
		if ((err = reserve_events(s, s->npeers + 2 * EPOLL_BATCH + 2)))
			return err;
		for (int i = 0; i < n; i++) {
			struct peer *p = e[i].data.ptr;
			if (!p) {
				if (!err)
					err = accept_client(s);
				continue;
			}
			if (p->dead)
				continue;
			if (e[i].events & EPOLLOUT)
				peer_flush(s, p);
			if (e[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP |
					   EPOLLERR))
				client_input(p, e[i].events);
		}
		reap(s);
		/* out of file descriptors with none to give up: say so
		 * rather than spin on a listening socket that stays ready */
		if (err && !s->evlen)
			return err;
	}
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

int smq_server_info(struct smq_server *s, struct smq_server_info *info)
{
	if (!s || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->memory_size = s->size;
	info->vectors = s->vectors;
	info->peers = s->npeers;
	return 0;
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
			peer_free(s->slot[i]);
	free(s->slot);
	free(s->ev);
	if (s->mem_fd >= 0)
		close(s->mem_fd);
	if (s->epoll_fd >= 0)
		close(s->epoll_fd);
	if (s->reserve_fd >= 0)
		close(s->reserve_fd);
	free(s->socket_path);
	free(s);
	return err;
}
