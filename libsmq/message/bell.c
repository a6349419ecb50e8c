/* The doorbell's two ends below send.c and receive.c: whether a ringer
 * can reach a sleeper's bell, the sleep word a receiver publishes to its
 * senders, and the one wait on a bell (or a nap where none can ring),
 * which a full sender and an empty receiver share. */
#include <time.h>
#include "queue.h"
#include "transport/common.h"

/* Whether every process that may ring our doorbell can: a sender's
 * lane says what it can ring; the receiver's rx_info what it can. */
bool smq_can_ring(uint32_t kinds, uint64_t host, const struct smq_bell_addr *a)
{
	if (a->kind == SMQ_BELL_NONE || !(kinds & SMQ_BELL_BIT(a->kind)))
		return false;
	return a->kind != SMQ_BELL_FUTEX || host == a->host;
}

/* Inside the mark. */
void smq_set_sleep_epoch(struct smq_queue *q, uint64_t ep)
{
	q->sleep_epoch = ep;
	STORE(&q->rx->sleep_epoch, ep);
	for (unsigned k = 0; k < q->nlanes; k++)
		FAR_STORE(q->wakes[k], struct smq_lane_wake, sleep_epoch, ep);
}

/* A sleep slice from now, or the deadline if it comes first: a sleeper
 * wakes at least once a slice to beat. */
static void slice_until(struct timespec *slice, const struct timespec *deadline)
{
	smq_deadline(slice, SLEEP_SLICE_MS);
	if (deadline && (deadline->tv_sec < slice->tv_sec ||
			 (deadline->tv_sec == slice->tv_sec &&
			  deadline->tv_nsec < slice->tv_nsec)))
		*slice = *deadline;
}

int smq_wait_bell(struct smq_queue *q, bool can_sleep, const uint32_t *word,
		  uint32_t seen, const struct timespec *deadline)
{
	struct smq_map *m = &q->w->map;
	struct timespec slice;

	if (!can_sleep) {
		struct timespec nap = { 0, NAP_NS };
		if ((!deadline || !smq_past(deadline)) &&
		    nanosleep(&nap, NULL) < 0 && errno == EINTR)
			return -EINTR;
		return 0;
	}
	slice_until(&slice, deadline);
	TEST_HOOK(SMQ_HOOK_SLEEP);
	int err = m->tp->wait(m, &q->bell, word, seen, &slice);
	if (!err)
		TEST_HOOK(SMQ_HOOK_RUNG);
	else if (err == -ETIMEDOUT)
		TEST_HOOK(SMQ_HOOK_SLEPT_OUT);
	return err;
}

/* A group's queues share one doorbell: a futex waiter waits on every
 * queue's word at once (futex_waitv), an ivshmem or MSI-X waiter on its one
 * vector, which a ring of any of them counts. */
int smq_wait_bells(struct smq_queue *const *qs, unsigned n, bool can_sleep,
		   const uint32_t *seen, const struct timespec *deadline)
{
	struct smq_queue *q = qs[0];
	struct timespec slice;

	if (n == 1 || !can_sleep)
		return smq_wait_bell(q, can_sleep, &q->bell_word->doorbell,
				     seen[0], deadline);
	for (unsigned i = 0; i < n; i++)
		if (LOAD(&qs[i]->bell_word->doorbell) != seen[i])
			return 0;
	slice_until(&slice, deadline);
	TEST_HOOK(SMQ_HOOK_SLEEP);
	int err;
	if (q->bell.kind == SMQ_BELL_FUTEX) {
		const uint32_t *words[SMQ_GROUP_MAX_MEMBERS];
		for (unsigned i = 0; i < n; i++)
			words[i] = &qs[i]->bell_word->doorbell;
		err = smq_futex_wait_many(words, seen, n, &slice);
	} else {
		struct smq_map *m = &q->w->map;
		err = m->tp->wait(m, &q->bell, &q->bell_word->doorbell,
				  seen[0], &slice);
	}
	if (!err)
		TEST_HOOK(SMQ_HOOK_RUNG);
	else if (err == -ETIMEDOUT)
		TEST_HOOK(SMQ_HOOK_SLEPT_OUT);
	return err;
}
