/* The broker transport: broker:SOCKET is the window of a PCI device that
 * a vfio broker (smqctl broker, smq_broker_open(3)) holds for the board.
 * The broker hands over the device's VFIO file, which is mapped and rung
 * through as the pci transport does (smq_vfio_adopt()), and an MSI-X
 * vector's eventfd per waiter.  A broker that ends is seen in every wait
 * (the socket's end), which then fails, and by monitors as a window
 * removed: the device stays open as long as a process holds its file, and
 * a restarted broker can open it only once every process let go.  The
 * protocol: broker_proto.h. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "base/clock.h"
#include "format/format.h"
#include "broker_proto.h"
#include "common.h"
#include "doorbell_dev.h"
#include "vfio.h"

int broker_send(int sock, const struct broker_msg *m, int fd)
{
	return smq_send_fd(sock, m, sizeof(*m), fd, 0);
}

int broker_recv(int sock, struct broker_msg *m, int *fd, int timeout_ms)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { m, sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	struct pollfd pf = { sock, POLLIN, 0 };
	ssize_t n;
	int r;

	*fd = -1;
	while ((r = poll(&pf, 1, timeout_ms)) < 0 && errno == EINTR)
		;
	if (r < 0)
		return -errno;
	if (r == 0)
		return timeout_ms ? -ETIMEDOUT : -EAGAIN;
	do
		n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm;
	     cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) /
					       sizeof(int); i++) {
				int f;
				memcpy(&f, CMSG_DATA(cm) + i * sizeof(int),
				       sizeof(f));
				if (*fd < 0)
					*fd = f;
				else
					close(f);
			}
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof(*m))
		return -EPROTO;
	if (mh.msg_flags & MSG_CTRUNC)
		return -EMFILE;
	return (int)n;
}

/* ---- the transport ---- */

struct broker {
	int sock;
	struct smq_vfio *v;
	struct smq_doorbell *db;        /* NULL: memory only, waiters nap */
	pthread_mutex_t lock;           /* one request at a time */
	unsigned late;                  /* answers owed to requests that
					   timed out: they may still come */
	int vec_fd[BROKER_MAX_VECTORS]; /* taken from the broker: -1 not */
};

static void broker_release(struct broker *bk)
{
	for (unsigned v = 0; v < BROKER_MAX_VECTORS; v++)
		if (bk->vec_fd[v] >= 0)
			close(bk->vec_fd[v]);
	if (bk->db)
		smq_doorbell_close(bk->db);
	smq_vfio_close(bk->v);
	if (bk->sock >= 0)
		close(bk->sock);
	pthread_mutex_destroy(&bk->lock);
	free(bk);
}

/* Connects and takes the broker's HELLO and the device file. */
static int attach(struct broker *bk, const char *path, struct broker_msg *m)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd, n, err;

	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	strcpy(a.sun_path, path);
	bk->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (bk->sock < 0)
		return -errno;
	if (connect(bk->sock, (struct sockaddr *)&a, sizeof(a)) < 0)
		return errno == EPROTOTYPE ? -EPROTO : -errno;
	n = broker_recv(bk->sock, m, &fd, BROKER_TIMEOUT_MS);
	if (n <= 0)
		return n == 0 ? -ECONNRESET : n;
	if (m->magic != BROKER_MAGIC || m->type != BK_HELLO ||
	    m->version != BROKER_VERSION || fd < 0 || m->bar < 0 ||
	    m->bar > 5 || m->vectors > BROKER_MAX_VECTORS) {
		if (fd >= 0)
			close(fd);
		return -EPROTO;
	}
	m->bdf[sizeof(m->bdf) - 1] = 0;
	err = smq_vfio_adopt(&bk->v, fd, m->bdf);
	close(fd);
	return err == -ENOTTY ? -EPROTO : err;   /* not a VFIO device */
}

static int broker_open(struct smq_map *m, const char *arg, unsigned flags)
{
	struct broker_msg hello;
	struct broker *bk;
	void *base;
	int err;

	(void)flags;  /* a device: nothing to create */
	if (!*arg || strlen(arg) >= sizeof(m->name) - 8)
		return -EINVAL;
	if (!(bk = calloc(1, sizeof(*bk))))
		return -ENOMEM;
	bk->sock = -1;
	for (unsigned v = 0; v < BROKER_MAX_VECTORS; v++)
		bk->vec_fd[v] = -1;
	pthread_mutex_init(&bk->lock, NULL);
	snprintf(m->name, sizeof(m->name), "broker:%s", arg);
	if ((err = attach(bk, arg, &hello)))
		goto fail;
	if (hello.vectors) {
		err = smq_doorbell_open(&bk->db, bk->v);
		if (err == -ENODEV || err == -EOPNOTSUPP)
			bk->db = NULL;
		else if (err)
			goto fail;
	}
	err = smq_vfio_map_bar(bk->v, (unsigned)hello.bar, &base, &m->size);
	if (err)
		goto fail;
	m->fixed_size = m->size;  /* a BAR: what the device decodes */
	m->base = base;
	m->priv = bk;
	m->order = &smq_order_device;
	smq_map_single(m);
	return 0;
fail:
	broker_release(bk);
	return err;
}

static void broker_close(struct smq_map *m)
{
	/* VFIO unmaps its BARs itself */
	m->base = NULL;
	m->nseg = 0;
	if (m->priv)
		broker_release(m->priv);
	m->priv = NULL;
}

/* An answer to BK_TAKE read and not kept (late, or its descriptor lost):
 * its vector is no one's and goes back, since the broker's vectors are
 * one pool for all its clients. */
static void give_back(struct broker *bk, const struct broker_msg *r, int fd)
{
	struct broker_msg give = { BROKER_MAGIC, BK_GIVE, BROKER_VERSION, 0,
				   r->vector, 0, 0, "" };

	if (fd >= 0)
		close(fd);
	if (r->magic == BROKER_MAGIC && r->type == BK_VECTOR && !r->error &&
	    r->vector < BROKER_MAX_VECTORS)
		broker_send(bk->sock, &give, -1);
}

/* The answers to requests that timed out, under the lock, before a new
 * request: each would be read as the new one's answer, and every answer
 * after it one behind. */
static int take_late(struct broker *bk)
{
	struct broker_msg r;
	int fd, n;

	while (bk->late) {
		n = broker_recv(bk->sock, &r, &fd, BROKER_TIMEOUT_MS);
		if (n == -EMFILE)
			n = (int)sizeof(r);   /* read, its descriptor lost */
		if (n <= 0)
			return n == 0 ? -ENOTCONN : n;
		bk->late--;
		give_back(bk, &r, fd);
	}
	return 0;
}

/* A vector of our own from the broker, for one waiter. */
static int broker_bell_open(struct smq_map *m, struct smq_bell_addr *a)
{
	struct broker *bk = m->priv;
	struct broker_msg req = { BROKER_MAGIC, BK_TAKE, BROKER_VERSION, 0, 0,
				  0, 0, "" }, r;
	int fd = -1, n;

	if (!bk->db)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&bk->lock);
	n = take_late(bk);
	if (!n)
		n = broker_send(bk->sock, &req, -1);
	if (!n) {
		n = broker_recv(bk->sock, &r, &fd, BROKER_TIMEOUT_MS);
		if (n == -ETIMEDOUT)
			bk->late++;
		else if (n == -EMFILE)
			give_back(bk, &r, fd);
	}
	pthread_mutex_unlock(&bk->lock);
	if (n <= 0)
		return n == 0 ? -ENOTCONN : n;
	if (r.magic != BROKER_MAGIC || r.type != BK_VECTOR ||
	    (!r.error && (fd < 0 || r.vector >= BROKER_MAX_VECTORS ||
			  bk->vec_fd[r.vector] >= 0))) {
		if (fd >= 0)
			close(fd);
		return -EPROTO;
	}
	if (r.error) {
		if (fd >= 0)
			close(fd);
		return r.error < 0 ? r.error : -EPROTO;
	}
	bk->vec_fd[r.vector] = fd;
	*a = (struct smq_bell_addr){ SMQ_BELL_IVSHMEM, (uint16_t)r.vector,
				     smq_doorbell_id(bk->db), 0 };
	return 0;
}

static void broker_bell_close(struct smq_map *m, const struct smq_bell_addr *a)
{
	struct broker *bk = m->priv;
	struct broker_msg req = { BROKER_MAGIC, BK_GIVE, BROKER_VERSION, 0,
				  a->vector, 0, 0, "" };

	if (a->vector >= BROKER_MAX_VECTORS || bk->vec_fd[a->vector] < 0)
		return;
	close(bk->vec_fd[a->vector]);
	bk->vec_fd[a->vector] = -1;
	pthread_mutex_lock(&bk->lock);
	broker_send(bk->sock, &req, -1);
	pthread_mutex_unlock(&bk->lock);
}

static uint32_t broker_ring_kinds(struct smq_map *m)
{
	struct broker *bk = m->priv;
	return bk->db ? SMQ_BELL_BIT(SMQ_BELL_IVSHMEM) : 0;
}

/* As the pci transport: the word (a store to the BAR), then the doorbell
 * register, through the device file the broker handed over. */
static void broker_ring(struct smq_map *m, const struct smq_bell_addr *a,
			struct smq_far word, uint32_t value)
{
	struct broker *bk = m->priv;

	__atomic_store_n((uint32_t *)word.far_, value, __ATOMIC_RELAXED);
	m->order->publish();
	smq_doorbell_ring(bk->db, a->peer, a->vector);
}

/* The vector's eventfd, and the broker's end in the same wait. */
static int broker_wait(struct smq_map *m, const struct smq_bell_addr *a,
		       const uint32_t *word, uint32_t seen,
		       const struct timespec *deadline)
{
	struct broker *bk = m->priv;
	int fd = a->vector < BROKER_MAX_VECTORS ? bk->vec_fd[a->vector] : -1;

	if (fd < 0)
		return -ENXIO;
	for (;;) {
		/* POLLRDHUP, not POLLIN: an answer to another thread's
		 * request is that thread's to read */
		struct pollfd pf[2] = { { fd, POLLIN, 0 },
					{ bk->sock, POLLRDHUP, 0 } };
		uint64_t rings;

		if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != seen)
			return 0;
		int n = poll(pf, 2, smq_poll_ms(deadline));
		if (n < 0)
			return -errno;  /* -EINTR: a signal handler ran */
		if (n == 0)
			return -ETIMEDOUT;
		if (pf[1].revents & (POLLRDHUP | POLLHUP | POLLERR))
			return -ENOTCONN;
		if (pf[0].revents) {
			if (read(fd, &rings, sizeof(rings)) < 0 &&
			    errno != EAGAIN)
				return -errno;
			return 0;
		}
	}
}

/* The broker ended: a monitor (top, events, metrics) that follows the
 * window lets the device go and attaches again, to the broker started
 * next, which can open the device only once every client let go. */
static bool broker_gone(struct smq_map *m)
{
	struct broker *bk = m->priv;
	struct pollfd pf = { bk->sock, POLLRDHUP, 0 };

	return poll(&pf, 1, 0) == 1 &&
	       (pf.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static void broker_describe(struct smq_map *m, char *buf, size_t len)
{
	struct broker *bk = m->priv;

	if (bk->db)
		snprintf(buf, len, "%s doorbell (MSI-X, broker, peer %u)",
			 smq_doorbell_type(bk->db)->name,
			 smq_doorbell_id(bk->db));
	else
		snprintf(buf, len, "polling: no doorbell this device rings");
}

static bool broker_explain(const char *path, int err, char *buf, size_t len)
{
	switch (-err) {
	case ENOENT:
	case ECONNREFUSED:
		snprintf(buf, len, "window broker:%s: no vfio broker listens "
			 "on %s (start one: smqctl --window pci:BDF broker "
			 "--socket %s)", path, path, path);
		return true;
	case EACCES:
		snprintf(buf, len, "window broker:%s: permission denied on the "
			 "broker's socket (its mode decides who may attach)",
			 path);
		return true;
	case ENOTCONN:
		snprintf(buf, len, "window broker:%s: the vfio broker stopped: "
			 "this process lets the device go, so that a broker "
			 "started again can open it; open the window again "
			 "once one runs", path);
		return true;
	case EIDRM:   /* a monitor's view of it */
		snprintf(buf, len, "window broker:%s: the vfio broker stopped: "
			 "the device was let go, to be attached again through "
			 "the broker started next", path);
		return true;
	case ECONNRESET:
		snprintf(buf, len, "window broker:%s: the broker hung up before "
			 "it handed over the device", path);
		return true;
	case EPROTO:
		snprintf(buf, len, "window broker:%s: what listens there is not "
			 "an smq vfio broker of this version (its messages are "
			 "not this library's)", path);
		return true;
	default:
		return false;
	}
}

const struct smq_transport smq_transport_broker = {
	.name = "broker",
	.help = "broker:SOCKET  the PCI device a vfio broker (smqctl broker) "
		"holds for this board: every process of the board attaches "
		"at once, with doorbells",
	.open = broker_open,
	.map_layout = smq_map_fixed_layout,
	.close = broker_close,
	.removed = broker_gone,
	.explain = broker_explain,
	.bell_open = broker_bell_open,
	.bell_close = broker_bell_close,
	.ring_kinds = broker_ring_kinds,
	.ring = broker_ring,
	.wait = broker_wait,
	.describe = broker_describe,
};
