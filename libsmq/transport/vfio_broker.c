/* A vfio broker: the process of a board that holds its PCI device through
 * VFIO (one process may hold a VFIO group) and hands the device's file
 * and its MSI-X vectors' eventfds to the board's other processes, over a
 * UNIX socket whose permission bits decide who may attach.  A process
 * that has the device file maps the BARs and rings as the opener does
 * (smq_vfio_adopt()); the broker keeps the MSI-X routing and gives each
 * waiter a vector of its own.  The protocol: transport/broker_proto.h;
 * the client: transport/broker.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "format/abi.h"
#include "broker_proto.h"
#include "doorbell_dev.h"
#include "common.h"
#include "vfio.h"

#define BATCH 8

struct client {
	int sock, pid;
	uint64_t vecs;          /* bit v: vector v is this client's */
	struct client *next;
};

struct smq_broker {
	int listen_fd, epoll_fd;
	int reserve_fd;         /* given up to refuse a client when out of
				   descriptors (-1: none held) */
	char *socket_path;
	dev_t sock_dev;         /* the socket we made, to remove only it */
	ino_t sock_ino;
	struct smq_vfio *v;
	struct smq_doorbell *db;        /* NULL: the device has no doorbell */
	int bar;
	uint64_t size;
	unsigned vectors;
	uint64_t used;          /* vectors some client holds */
	struct client *clients;
	unsigned nclients;
	struct smq_broker_event ev[2 * BATCH];
	unsigned nev;
	bool deaf;              /* the listening socket out of the epoll set
				   (no descriptor to refuse a client with) */
};

/* "pci:BDF" or "pci:BDF/BAR": the device and the BAR (-1: the one its
 * doorbell table entry names, else the largest). */
static int parse_window(const char *spec, char *bdf, size_t n, int *bar)
{
	const char *slash;
	char *end;

	if (!spec || strncmp(spec, "pci:", 4))
		return -EPROTONOSUPPORT;
	spec += 4;
	slash = strchr(spec, '/');
	size_t len = slash ? (size_t)(slash - spec) : strlen(spec);
	if (!len || len >= n)
		return -EINVAL;
	memcpy(bdf, spec, len);
	bdf[len] = 0;
	*bar = -1;
	if (slash) {
		long b = strtol(slash + 1, &end, 10);
		if (end == slash + 1 || *end || b < 0 || b > 5)
			return -EINVAL;
		*bar = (int)b;
	}
	return 0;
}

static int largest_bar(struct smq_vfio *v)
{
	uint64_t best = 0;
	int bar = -ENXIO;

	for (unsigned i = 0; i < 6; i++) {
		struct smq_vfio_bar b;
		if (!smq_vfio_bar_info(v, i, &b) && b.mappable && b.size > best) {
			best = b.size;
			bar = (int)i;
		}
	}
	return bar;
}

/* The device as the pci transport opens it: memory decoding and bus
 * mastering on, the doorbell found, the window's BAR mapped (so that a
 * BAR VFIO will not map is refused here, not in every client), every
 * vector routed before anyone may ring. */
static int open_device(struct smq_broker *b, const char *window)
{
	char bdf[32];
	void *base;
	int err, bar;

	if ((err = parse_window(window, bdf, sizeof(bdf), &bar)) ||
	    (err = smq_vfio_open(&b->v, bdf)) ||
	    (err = smq_vfio_enable(b->v, true)))
		return err;
	err = smq_doorbell_open(&b->db, b->v);
	if (err == -ENODEV || err == -EOPNOTSUPP)
		b->db = NULL;
	else if (err)
		return err;
	if (bar < 0)
		bar = b->db ? smq_doorbell_type(b->db)->shm_bar
			    : largest_bar(b->v);
	if (bar < 0)
		return bar;
	err = smq_vfio_map_bar(b->v, (unsigned)bar, &base, &b->size);
	if (err == -ENOENT || err == -EOPNOTSUPP)
		return -ENXIO;
	if (err)
		return err;
	b->bar = bar;
	if (b->db) {
		int n = smq_doorbell_vectors(b->db);
		if (n > BROKER_MAX_VECTORS)
			n = BROKER_MAX_VECTORS;
		if (n > 0 && (err = smq_vfio_msix_enable(b->v, (unsigned)n)))
			return err;
		b->vectors = n > 0 ? (unsigned)n : 0;
	}
	return 0;
}

static int make_socket(struct smq_broker *b, const char *path, unsigned mode)
{
	struct sockaddr_un a;
	struct stat st;
	bool stale;
	int err;

	if ((err = smq_unix_address(path, &a)) ||
	    (err = smq_unix_probe(&a, SOCK_SEQPACKET, &stale)))
		return err;
	if (stale && unlink(path) < 0 && errno != ENOENT)
		return -errno;
	if ((b->listen_fd = smq_unix_listen(&a, SOCK_SEQPACKET, mode, 16,
					    &st)) < 0) {
		err = b->listen_fd;
		b->listen_fd = -1;
		return err;
	}
	b->sock_dev = st.st_dev;
	b->sock_ino = st.st_ino;
	return 0;
}

int smq_broker_open(const struct smq_broker_config *config, size_t size,
		    struct smq_broker **bp)
{
	struct smq_broker_config c;
	struct smq_broker *b;
	int err;

	if (!bp)
		return -EINVAL;
	*bp = NULL;
	if ((err = smq_struct_in(&c, sizeof(c), config, size,
				 SMQ_LEAST_BROKER_CONFIG)))
		return err;
	if (!c.socket_path || !c.window || (c.mode & ~07777u))
		return -EINVAL;
	if (!(b = calloc(1, sizeof(*b))))
		return -ENOMEM;
	b->listen_fd = b->epoll_fd = -1;
	b->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (!(b->socket_path = strdup(c.socket_path))) {
		if (b->reserve_fd >= 0)
			close(b->reserve_fd);
		free(b);
		return -ENOMEM;
	}
	/* the device first: a broker that cannot hold it makes no socket */
	if ((err = open_device(b, c.window)) ||
	    (err = make_socket(b, c.socket_path, c.mode ? c.mode : 0600)))
		goto fail;
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = NULL };
	if ((b->epoll_fd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    epoll_ctl(b->epoll_fd, EPOLL_CTL_ADD, b->listen_fd, &e) < 0) {
		err = -errno;
		goto fail;
	}
	*bp = b;
	return 0;
fail:
	smq_broker_close(b);
	return err;
}

int smq_broker_fd(struct smq_broker *b)
{
	return b ? b->epoll_fd : -EINVAL;
}

static void push(struct smq_broker *b, int type, const struct client *c,
		 int err)
{
	if (b->nev < sizeof(b->ev) / sizeof(b->ev[0]))
		b->ev[b->nev++] = (struct smq_broker_event){
			type, c->pid, (unsigned)__builtin_popcountll(c->vecs),
			err };
}

/* Out of descriptors: the connection is taken with the one kept for
 * that and refused (said as a client dropped with the error), rather than
 * left to keep the listening socket ready for ever: a busy loop that
 * would never return to the caller. */
static void refuse_for_fds(struct smq_broker *b, int err)
{
	struct client c = { .pid = -1 };

	if (b->reserve_fd < 0 &&
	    (b->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		/* nothing to give up: stop listening until a client leaves */
		epoll_ctl(b->epoll_fd, EPOLL_CTL_DEL, b->listen_fd, NULL);
		b->deaf = true;
		return;
	}
	close(b->reserve_fd);
	int fd = accept4(b->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
			c.pid = cred.pid;
		close(fd);
		push(b, SMQ_CLIENT_DETACHED, &c, err);
	}
	b->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void accept_client(struct smq_broker *b)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct client *c;
	/* non-blocking: a client that does not read its answers is
	 * dropped, never waited for */
	int fd = accept4(b->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE)
			refuse_for_fds(b, -errno);
		return;   /* EAGAIN, ECONNABORTED: nothing to take */
	}
	struct broker_msg m = { BROKER_MAGIC, BK_HELLO, BROKER_VERSION, 0, 0,
				b->vectors, b->bar, "" };
	snprintf(m.bdf, sizeof(m.bdf), "%s", smq_vfio_bdf(b->v));
	struct epoll_event e = { .events = EPOLLIN | EPOLLRDHUP };
	if (!(c = calloc(1, sizeof(*c))) ||
	    broker_send(fd, &m, smq_vfio_device_fd(b->v)) < 0) {
		free(c);
		close(fd);
		return;
	}
	c->sock = fd;
	c->pid = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
		 cred.pid > 0 ? cred.pid : -1;
	e.data.ptr = c;
	if (epoll_ctl(b->epoll_fd, EPOLL_CTL_ADD, fd, &e) < 0) {
		free(c);
		close(fd);
		return;
	}
	c->next = b->clients;
	b->clients = c;
	b->nclients++;
	push(b, SMQ_CLIENT_ATTACHED, c, 0);
}

static void drop_client(struct smq_broker *b, struct client *c, int err)
{
	push(b, SMQ_CLIENT_DETACHED, c, err);
	b->used &= ~c->vecs;
	epoll_ctl(b->epoll_fd, EPOLL_CTL_DEL, c->sock, NULL);
	close(c->sock);
	if (b->deaf) {  /* a descriptor free again: listen again */
		struct epoll_event e = { .events = EPOLLIN, .data.ptr = NULL };
		b->deaf = epoll_ctl(b->epoll_fd, EPOLL_CTL_ADD, b->listen_fd,
				    &e) < 0;
	}
	for (struct client **p = &b->clients; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	b->nclients--;
	free(c);
}

/* A request: TAKE a vector (the lowest free), or GIVE one back. */
static void serve_client(struct smq_broker *b, struct client *c)
{
	struct broker_msg m;
	int fd = -1;
	ssize_t n = broker_recv(c->sock, &m, &fd, 0);

	if (fd >= 0)
		close(fd);
	if (n == -EAGAIN)
		return;
	if (n == 0 || n == -ECONNRESET) {
		drop_client(b, c, 0);
		return;
	}
	if (n < 0 || m.magic != BROKER_MAGIC ||
	    (m.type != BK_TAKE && m.type != BK_GIVE)) {
		/* descriptors lost: the client sent some, which it never
		 * does */
		drop_client(b, c, n < 0 && n != -EMFILE ? (int)n : -EPROTO);
		return;
	}
	if (m.type == BK_GIVE) {
		if (m.vector < b->vectors && (c->vecs & (1ull << m.vector))) {
			c->vecs &= ~(1ull << m.vector);
			b->used &= ~(1ull << m.vector);
		}
		return;
	}
	struct broker_msg r = { BROKER_MAGIC, BK_VECTOR, BROKER_VERSION,
				-EBUSY, 0, b->vectors, b->bar, "" };
	for (unsigned v = 0; v < b->vectors; v++)
		if (!(b->used & (1ull << v))) {
			r.error = 0;
			r.vector = v;
			break;
		}
	int err = broker_send(c->sock, &r, r.error ? -1 :
			      smq_vfio_msix_fd(b->v, r.vector));
	if (err) {
		/* gone, or not reading its answers: not ours to wait for */
		drop_client(b, c, err == -EPIPE || err == -ECONNRESET ? 0 : err);
	} else if (!r.error) {
		b->used |= 1ull << r.vector;
		c->vecs |= 1ull << r.vector;
	}
}

int smq_broker_next(struct smq_broker *b, int timeout_ms,
		    struct smq_broker_event *out, size_t size)
{
	if (!b || !out || size < SMQ_LEAST_BROKER_EVENT)
		return -EINVAL;
	for (;;) {
		struct epoll_event e[BATCH];
		int n;

		if (b->nev) {
			smq_struct_out(out, size, &b->ev[0], sizeof(b->ev[0]));
			memmove(&b->ev[0], &b->ev[1],
				--b->nev * sizeof(b->ev[0]));
			return 0;
		}
		n = epoll_wait(b->epoll_fd, e, BATCH, timeout_ms);
		if (n < 0)
			return -errno;  /* -EINTR: a signal handler ran */
		if (n == 0)
			return -ETIMEDOUT;
		for (int i = 0; i < n; i++) {
			if (!e[i].data.ptr)
				accept_client(b);
			else
				serve_client(b, e[i].data.ptr);
		}
		timeout_ms = 0;   /* what was ready is done */
	}
}

int smq_broker_info(struct smq_broker *b, struct smq_broker_info *out,
		    size_t size)
{
	struct smq_broker_info info;

	if (!b || !out || size < SMQ_LEAST_BROKER_INFO)
		return -EINVAL;
	memset(&info, 0, sizeof(info));
	snprintf(info.device, sizeof(info.device), "%s", smq_vfio_bdf(b->v));
	info.bar = b->bar;
	info.memory_size = b->size;
	info.vectors = b->vectors;
	info.clients = b->nclients;
	return smq_struct_out(out, size, &info, sizeof(info));
}

int smq_broker_close(struct smq_broker *b)
{
	struct stat st;
	int err = 0;

	if (!b)
		return -EINVAL;
	while (b->clients)
		drop_client(b, b->clients, 0);
	if (b->listen_fd >= 0) {
		close(b->listen_fd);
		/* only the socket we made: another broker may have replaced
		 * it since */
		if (lstat(b->socket_path, &st) == 0 && S_ISSOCK(st.st_mode) &&
		    st.st_dev == b->sock_dev && st.st_ino == b->sock_ino &&
		    unlink(b->socket_path) < 0 && errno != ENOENT)
			err = -errno;
	}
	if (b->epoll_fd >= 0)
		close(b->epoll_fd);
	if (b->reserve_fd >= 0)
		close(b->reserve_fd);
	if (b->db)
		smq_doorbell_close(b->db);
	smq_vfio_close(b->v);
	free(b->socket_path);
	free(b);
	return err;
}
