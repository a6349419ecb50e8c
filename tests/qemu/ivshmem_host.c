/* ivshmem_host: the host side of tests/qemu/t_qemu_vfio.sh, a peer of the
 * guests' ivshmem-doorbell devices through libsmq's ivshmem client module.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "ivshmem/client.h"
#include "vfio_mailbox.h"

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct timespec at_ns(int64_t ns)
{
	return (struct timespec){ (time_t)(ns / 1000000000),
				  (long)(ns % 1000000000) };
}

/* Takes the server's news for up to MS milliseconds; -1 if it is gone. */
static int pump(struct ivc *c, int ms)
{
	struct pollfd p = { ivc_socket_fd(c), POLLIN, 0 };
	if (poll(&p, 1, ms) > 0 && ivc_update(c) < 0)
		return -1;
	return 0;
}

static int ring_and_wait(struct ivc *c, void *shm, int who, const char *name,
			 int64_t deadline)
{
	unsigned pid = mbox_slot(shm, who)->id;
	while (!ivc_peer_connected(c, pid)) {
		if (now_ns() > deadline || pump(c, 10) < 0) {
			printf("HOST: FAIL guest %s (id %u) is not a peer\n",
			       name, pid);
			return -1;
		}
	}
	int64_t t0 = now_ns();
	int err = ivc_ring(c, pid, VEC_HOST_RING);
	if (err) {
		printf("HOST: FAIL ring guest %s: %s\n", name, strerror(-err));
		return -1;
	}
	struct timespec end = at_ns(t0 + 10 * 1000000000LL);
	err = ivc_wait(c, VEC_HOST_ANSWER, &end);
	int64_t t1 = now_ns();
	if (err) {
		printf("HOST: FAIL guest %s did not answer on vector 0 within "
		       "10 s: %s\n", name, strerror(-err));
		return -1;
	}
	/* and on no other vector */
	for (unsigned v = 0; v < VEC_COUNT; v++) {
		struct pollfd p = { ivc_vector_fd(c, v), POLLIN, 0 };
		if (v != VEC_HOST_ANSWER && poll(&p, 1, 0) > 0) {
			printf("HOST: FAIL guest %s also rang vector %u\n",
			       name, v);
			return -1;
		}
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

	struct ivc *c;
	int err = ivc_connect(&c, argv[1], VEC_COUNT);
	if (err) {
		printf("HOST: FAIL connect %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	struct stat st;
	int mfd = ivc_memory_fd(c);
	if (fstat(mfd, &st) < 0 || st.st_size < 4096) {
		printf("HOST: FAIL the server's memory: %s\n", strerror(errno));
		return 1;
	}
	void *shm = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
			 MAP_SHARED, mfd, 0);
	if (shm == MAP_FAILED) {
		printf("HOST: FAIL mmap: %s\n", strerror(errno));
		return 1;
	}
	printf("HOST: id %d, %u vectors, %lld bytes\n", ivc_id(c),
	       ivc_vectors(c), (long long)st.st_size);
	if (ivc_vectors(c) < VEC_COUNT) {
		printf("HOST: FAIL fewer vectors than the test uses\n");
		return 1;
	}
	mbox_publish(shm, MBOX_HOST, (uint32_t)ivc_id(c), MBOX_READY);

	while (mbox_state(shm, MBOX_A) < MBOX_PEERS_DONE ||
	       mbox_state(shm, MBOX_B) < MBOX_PEERS_DONE) {
		if (now_ns() > deadline) {
			printf("HOST: FAIL the guests did not finish their "
			       "rounds (states %u %u)\n",
			       mbox_state(shm, MBOX_A), mbox_state(shm, MBOX_B));
			return 1;
		}
		if (pump(c, 10) < 0) {
			printf("HOST: FAIL the server is gone\n");
			return 1;
		}
	}
	int bad = ring_and_wait(c, shm, MBOX_A, "A", deadline) < 0;
	bad |= ring_and_wait(c, shm, MBOX_B, "B", deadline) < 0;
	mbox_publish(shm, MBOX_HOST, (uint32_t)ivc_id(c), MBOX_FINISHED);
	munmap(shm, (size_t)st.st_size);
	ivc_close(c);
	return bad;
}
