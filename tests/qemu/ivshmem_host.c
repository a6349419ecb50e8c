/* ivshmem_host: the host side of tests/t_qemu_vfio.sh, a client of the
 * ivshmem server beside the guests' QEMUs (the client side of the protocol
 * in QEMU's docs/specs/ivshmem-spec.txt, as much as the test needs).
 *
 *   ivshmem_host SOCKET TIMEOUT
 *
 * Writes its ID into the mailbox (tests/qemu/vfio_mailbox.h), waits until
 * both guests have done their rounds, then rings each on vector 3 and
 * waits for its answer on vector 0.  Prints "HOST: " lines; exit 0 when
 * both answered on vector 0 alone, 1 otherwise, 2 for bad usage. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "vfio_mailbox.h"

#define MAX_PEERS 8

struct peer {
	int64_t id;             /* -1: free */
	int fds[VEC_COUNT];
	unsigned nfds;
};

struct client {
	int sock;
	int64_t id;             /* -1 until the server said */
	int got_version;
	void *shm;
	size_t shm_size;
	int own[VEC_COUNT];
	unsigned nown;
	struct peer peers[MAX_PEERS];
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct peer *peer_of(struct client *c, int64_t id, int make)
{
	struct peer *free_slot = NULL;
	for (int i = 0; i < MAX_PEERS; i++) {
		if (c->peers[i].id == id)
			return &c->peers[i];
		if (c->peers[i].id < 0 && !free_slot)
			free_slot = &c->peers[i];
	}
	if (make && free_slot) {
		free_slot->id = id;
		free_slot->nfds = 0;
	}
	return make ? free_slot : NULL;
}

/* One message from the server: 8 bytes, maybe a descriptor.  0, or -1 on
 * a broken or closed connection. */
static int receive_one(struct client *c)
{
	int64_t v;
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &v, sizeof(v) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = ctl,
			      .msg_controllen = sizeof(ctl) };
	ssize_t n = recvmsg(c->sock, &msg, MSG_CMSG_CLOEXEC);
	if (n != (ssize_t)sizeof(v))
		return -1;
	int fd = -1;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&msg); h; h = CMSG_NXTHDR(&msg, h))
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(h), sizeof(fd));
	/* little-endian on the wire; this test runs on x86 */
	if (!c->got_version) {
		c->got_version = 1;
		if (v != 0) {
			printf("HOST: FAIL protocol version %lld\n", (long long)v);
			return -1;
		}
		return 0;
	}
	if (c->id < 0) {
		c->id = v;
		return 0;
	}
	if (v == -1 && fd >= 0) {
		struct stat st;
		if (fstat(fd, &st) < 0 || st.st_size < 4096)
			return -1;
		c->shm_size = (size_t)st.st_size;
		c->shm = mmap(NULL, c->shm_size, PROT_READ | PROT_WRITE,
			      MAP_SHARED, fd, 0);
		close(fd);
		return c->shm == MAP_FAILED ? -1 : 0;
	}
	if (v == c->id && fd >= 0) {
		if (c->nown < VEC_COUNT)
			c->own[c->nown++] = fd;
		else
			close(fd);
		return 0;
	}
	struct peer *p = peer_of(c, v, fd >= 0);
	if (fd >= 0) {  /* a peer's vector, in order */
		if (p && p->nfds < VEC_COUNT)
			p->fds[p->nfds++] = fd;
		else
			close(fd);
	} else if (p) {  /* the peer left */
		for (unsigned i = 0; i < p->nfds; i++)
			close(p->fds[i]);
		p->id = -1;
		p->nfds = 0;
	}
	return 0;
}

/* Takes what the server sent within MS milliseconds. */
static int pump(struct client *c, int ms)
{
	struct pollfd p = { c->sock, POLLIN, 0 };
	while (poll(&p, 1, ms) > 0) {
		if (receive_one(c) < 0)
			return -1;
		ms = 0;
	}
	return 0;
}

static int ring_and_wait(struct client *c, int who, const char *name,
			 int64_t deadline)
{
	uint32_t pid = mbox_slot(c->shm, who)->id;
	struct peer *p;
	while (!(p = peer_of(c, pid, 0)) || p->nfds < VEC_COUNT) {
		if (now_ns() > deadline || pump(c, 10) < 0) {
			printf("HOST: FAIL no eventfds for guest %s (id %u)\n",
			       name, pid);
			return -1;
		}
	}
	uint64_t one = 1, got;
	int64_t t0 = now_ns();
	if (write(p->fds[VEC_HOST_RING], &one, sizeof(one)) != sizeof(one))
		return -1;
	struct pollfd pf[VEC_COUNT];
	for (int i = 0; i < VEC_COUNT; i++)
		pf[i] = (struct pollfd){ c->own[i], POLLIN, 0 };
	int n = poll(pf, VEC_COUNT, 10000);
	int64_t t1 = now_ns();
	if (n <= 0) {
		printf("HOST: FAIL guest %s did not answer within 10 s\n", name);
		return -1;
	}
	int right = 1;
	for (int i = 0; i < VEC_COUNT; i++) {
		int fired = read(c->own[i], &got, sizeof(got)) == sizeof(got);
		if (fired != (i == VEC_HOST_ANSWER))
			right = 0;
	}
	if (!right) {
		printf("HOST: FAIL guest %s answered on another vector\n", name);
		return -1;
	}
	printf("HOST: ok guest %s answered on vector 0 alone in %.1f us\n",
	       name, (t1 - t0) / 1e3);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 || atoi(argv[2]) <= 0) {
		fprintf(stderr, "usage: ivshmem_host SOCKET TIMEOUT\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	int64_t deadline = now_ns() + (int64_t)atoi(argv[2]) * 1000000000;
	struct client c = { .sock = -1, .id = -1 };
	for (int i = 0; i < MAX_PEERS; i++)
		c.peers[i].id = -1;

	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (strlen(argv[1]) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "ivshmem_host: socket path too long\n");
		return 2;
	}
	strcpy(addr.sun_path, argv[1]);
	c.sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c.sock < 0 ||
	    connect(c.sock, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		printf("HOST: FAIL connect %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	/* The version, the ID, the memory, then the own vectors. */
	while (!c.shm || c.nown < VEC_COUNT) {
		if (now_ns() > deadline || pump(&c, 100) < 0) {
			printf("HOST: FAIL the server did not set this client "
			       "up\n");
			return 1;
		}
	}
	printf("HOST: id %lld\n", (long long)c.id);
	mbox_publish(c.shm, MBOX_HOST, (uint32_t)c.id, MBOX_READY);

	while (mbox_state(c.shm, MBOX_A) < MBOX_PEERS_DONE ||
	       mbox_state(c.shm, MBOX_B) < MBOX_PEERS_DONE) {
		if (now_ns() > deadline) {
			printf("HOST: FAIL the guests did not finish their "
			       "rounds (states %u %u)\n",
			       mbox_state(c.shm, MBOX_A),
			       mbox_state(c.shm, MBOX_B));
			return 1;
		}
		if (pump(&c, 10) < 0) {
			printf("HOST: FAIL the server closed the connection\n");
			return 1;
		}
	}
	int bad = ring_and_wait(&c, MBOX_A, "A", deadline) < 0;
	bad |= ring_and_wait(&c, MBOX_B, "B", deadline) < 0;
	mbox_publish(c.shm, MBOX_HOST, (uint32_t)c.id, MBOX_FINISHED);
	return bad;
}
