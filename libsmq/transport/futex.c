/* The futex doorbell: a word in the waiter's region that a ringer changes
 * and then wakes.  It reaches only processes of one kernel, so its
 * address carries the host's boot hash. */
#include <errno.h>
#include <stdbool.h>
#include <limits.h>
#include <poll.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "base/clock.h"
#include "base/identity.h"
#include "format/format.h"
#include "common.h"

int smq_futex_bell_open(struct smq_map *m, struct smq_bell_addr *a)
{
	(void)m;
	*a = (struct smq_bell_addr){ SMQ_BELL_FUTEX, 0, 0, smq_boot_hash() };
	return 0;
}

uint32_t smq_futex_ring_kinds(struct smq_map *m)
{
	(void)m;
	return SMQ_BELL_BIT(SMQ_BELL_FUTEX);
}

void smq_futex_ring(struct smq_map *m, const struct smq_bell_addr *a,
		    struct smq_far word, uint32_t value)
{
	(void)m;
	(void)a;
	uint32_t *p = (uint32_t *)word.far_;
	__atomic_store_n(p, value, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, p, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Wakes every waiter on word, which the caller changed: a lane lock's
 * sleepers (lane.c). */
void smq_futex_wake(const uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int smq_futex_wait(struct smq_map *m, const struct smq_bell_addr *a,
		   const uint32_t *word, uint32_t seen,
		   const struct timespec *deadline)
{
	(void)m;
	(void)a;
	/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline.  A
	 * signal handler that ran ends the wait: the caller's call returns
	 * -EINTR, so that a program can stop a wait for good. */
	if (syscall(SYS_futex, word, FUTEX_WAIT_BITSET, seen, deadline, NULL,
		    FUTEX_BITSET_MATCH_ANY) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

/* Waits on several words at once (a group's queues): futex_waitv, since
 * Linux 5.16.  An older kernel waits on the first word a millisecond at a
 * time and the caller looks at every queue in between. */
int smq_futex_wait_many(const uint32_t *const *words, const uint32_t *seen,
			unsigned n, const struct timespec *deadline)
{
#ifdef SYS_futex_waitv
	struct futex_waitv v[FUTEX_WAITV_MAX];

	if (n > FUTEX_WAITV_MAX)
		n = FUTEX_WAITV_MAX;
	for (unsigned i = 0; i < n; i++)
		v[i] = (struct futex_waitv){ .val = seen[i],
					     .uaddr = (uintptr_t)words[i],
					     .flags = FUTEX_32 };
	if (syscall(SYS_futex_waitv, v, n, 0, deadline, CLOCK_MONOTONIC) >= 0 ||
	    errno == EAGAIN)
		return 0;
	if (errno != ENOSYS)
		return -errno;  /* -ETIMEDOUT, -EINTR... */
#endif
	struct timespec soon;
	smq_deadline(&soon, 1);
	bool last = deadline && smq_ts_ns(deadline) <= smq_ts_ns(&soon);
	int err = smq_futex_wait(NULL, NULL, words[0], seen[0],
				 last ? deadline : &soon);
	return err == -ETIMEDOUT && !last ? 0 : err;
}

/* Waits until eventfd fd counts a ring, or deadline (CLOCK_MONOTONIC,
 * absolute; NULL: none) passes; takes the rings.  0, -ETIMEDOUT, or
 * -EINTR when a signal handler ran. */
int smq_wait_eventfd(int fd, const struct timespec *deadline)
{
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		int n = poll(&p, 1, smq_poll_ms(deadline));
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ETIMEDOUT;
		uint64_t count;
		if (read(fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
			return -errno;
		return 0;
	}
}
