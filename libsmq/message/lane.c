/* The lane lock: one sending call of a board at a time on a queue, in
 * that board's own memory; what a holder that died left half done is
 * recovered by the next.  Below queue.c (a closed handle gives its loan
 * back) and send.c (every send takes the lock). */
#include <sched.h>
#include "queue.h"
#include "transport/common.h"

/* Whether the receiver's copy of our top is behind it because a sender
 * died between its two stores: the entries between carry their
 * signatures (taken or not, an entry keeps its signature until the next
 * lap writes it).  A copy behind over entries that do not is damage, not
 * ours to publish. */
static bool copy_behind(struct smq_queue *q, uint64_t top)
{
	uint64_t in = FAR_LOAD(q->w, SMQ_FAR_TAKEOVER, q->in,
			       struct smq_lane_in, top);

	if (in >= top || top - in > q->entries)
		return false;
	for (uint64_t seq = in; seq < top; seq++) {
		struct smq_far e = smq_far_offset(q->ring,
			(seq & (q->entries - 1)) * q->stride);
		if (FAR_LOAD(q->w, SMQ_FAR_TAKEOVER, e, struct smq_entry,
			     signature) !=
		    smq_signature(q->epoch, q->index, q->w->board, seq))
			return false;
	}
	return true;
}

/* A sender that died after signing entries from seq on (one, or a
 * burst's) but before storing top left whole entries that the receiver
 * takes (or has taken): carry on after them, never write over them, and
 * count them as sent.  Their signatures can only be there if that send
 * wrote them.  A send counts its messages before it stores top, and
 * lane_out.messages moves with top: entries below it are counted already
 * (the sender died between its counts and its top).  One that died
 * between its two stores of top left the receiver's copy behind: it is
 * stored again, if the entries between carry their signatures.  Called
 * with the lane lock held (no send of ours is between its stores).
 * Reads across the bus: only when a sender opens or takes the lane over
 * from a dead one, never per message. */
void smq_lane_recover(struct smq_queue *q)
{
	uint64_t top = LOAD(&q->out->top), seq = top, bytes = 0;
	uint64_t counted = LOAD(&q->out->messages);

	/* counted past top by at most a ring: else not trusted (damage),
	 * and what is found is counted */
	if (counted < top || counted - top > q->entries)
		counted = top;
	for (; seq - top < q->entries; seq++) {
		struct smq_far e = smq_far_offset(q->ring,
			(seq & (q->entries - 1)) * q->stride);
		if (FAR_LOAD(q->w, SMQ_FAR_TAKEOVER, e, struct smq_entry,
			     signature) !=
		    smq_signature(q->epoch, q->index, q->w->board, seq))
			break;
		if (seq < counted)
			continue;
		smq_consume(q->w->map.order);
		uint32_t size = FAR_LOAD(q->w, SMQ_FAR_TAKEOVER, e,
					 struct smq_entry, size);
		bytes += size <= q->entry_size ? size : 0;
	}
	if (seq != top) {
		STORE_REL(&q->out->top, seq);
		if (seq > counted) {
			STORE(&q->out->messages, seq);  /* with top again */
			STORE(&q->out->bytes, LOAD(&q->out->bytes) + bytes);
		}
		FAR_STORE_REL(q->in, struct smq_lane_in, top, seq);
	} else if (copy_behind(q, top)) {
		FAR_STORE_REL(q->in, struct smq_lane_in, top, top);
	}
}

/* The lane lock serialises the senders of one board; it lives in that
 * board's own memory.  A holder that is gone (exited, its thread id
 * reused, from before a reboot) is replaced, and what it left half done
 * is recovered.  A live holder is waited for until deadline (NULL:
 * forever).  Called with the mark set: the lock word is in the layout.
 *
 * A waiter spins a while (a holder on a CPU is done within a few hundred
 * nanoseconds), then, where the memory takes a futex (the futex doorbell's
 * memory: one kernel maps it), sleeps on the lock word: a holder that
 * lost its CPU to other work gets it back sooner than if its waiters
 * spun.  Where it does not (a BAR), it yields the CPU between rounds of
 * spinning.  Either way it looks again at least every LOCK_NAP_MAX_MS:
 * whether the holder lives, the deadline, a stale handle. */
#define LOCK_SPINS 256
#define LOCK_NAP_MIN_MS 1
#define LOCK_NAP_MAX_MS 32

static bool lock_can_sleep(const struct smq_queue *q)
{
	return q->ring_kinds & SMQ_BELL_BIT(SMQ_BELL_FUTEX);
}

/* The half of the lock word that holds the thread id (a futex is 32
 * bits): never 0 while the lock is held, 0 once it is released. */
static uint32_t *lock_word(struct smq_queue *q)
{
	uint32_t *half = (uint32_t *)&q->out->lock;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return half + 1;
#else
	return half;
#endif
}

/* Tells every handle that may hold the lock that a waiter sleeps on it:
 * this board's other sender handles of the queue, and window handles (a
 * queue handle shares its window's mark when the control block is full).
 * The holder reads its own after its release (smq_lane_wake).  Feature
 * membarrier: a holder makes the barrier between its release and that
 * read only once its slot says a sender slept on its lock (lock_waited);
 * a slot marked here for the first time is followed by a barrier on every
 * CPU of this kernel (MEMBARRIER_CMD_GLOBAL, some milliseconds, once per
 * slot), after which its holder makes its barrier again.  False when
 * that barrier is refused: then we do not sleep on the lock. */
static bool flag_holders(struct smq_queue *q)
{
	struct smq_handle_slot *s;
	bool feature = q->w->lay.features & SMQ_FEATURE_MEMBARRIER;
	bool marked = false;

	SMQ_EACH_SLOT(s, q->w->ctl) {
		uint32_t kind = LOAD(&s->kind);
		if ((s == q->slot && !q->slot_shared) || !LOAD(&s->tag))
			continue;
		if ((kind == SMQ_SLOT_QUEUE && LOAD(&s->queue) == q->index &&
		     LOAD(&s->role) == SMQ_SENDER) || kind == SMQ_SLOT_WINDOW) {
			if (feature && !LOAD(&s->lock_waited)) {
				STORE(&s->lock_waited, 1);
				marked = true;
			}
			if (!LOAD(&s->lock_waiters))
				STORE(&s->lock_waiters, 1);
		}
	}
	return !marked || !smq_marks_settle();
}

static bool before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Sleeps on the lock, held as cur, for a nap at most (or until the
 * deadline).  A Dekker pair with the holder's release: we flag the
 * holders, then look at the lock; it stores 0 into the lock, then looks
 * at its flag (smq_lane_wake), so either it sees the flag and wakes us or
 * we see the lock free and do not sleep.  1: woken (or the lock had moved
 * already); 0: slept the nap out; -1: the memory takes no futex after all. */
static int lock_sleep(struct smq_queue *q, uint64_t cur,
		      const struct timespec *deadline, int *nap_ms)
{
	struct timespec until;

	if (!flag_holders(q))
		return -1;
	smq_full(q->w->map.order);
	if (LOAD(&q->out->lock) != cur)
		return 1;
	smq_deadline(&until, *nap_ms);
	if (deadline && before(deadline, &until))
		until = *deadline;
	TEST_HOOK(SMQ_HOOK_LOCK_SLEEP);
	int err = smq_futex_wait(NULL, NULL, lock_word(q), (uint32_t)(cur >> 32),
				 &until);
	if (err == -ETIMEDOUT) {
		TEST_HOOK(SMQ_HOOK_LOCK_SLEPT_OUT);
		if (*nap_ms < LOCK_NAP_MAX_MS)
			*nap_ms *= 2;
		return 0;
	}
	if (err)
		return -1;
	TEST_HOOK(SMQ_HOOK_LOCK_WOKEN);
	*nap_ms = LOCK_NAP_MIN_MS;
	return 1;
}

int smq_lane_lock(struct smq_queue *q, const struct timespec *deadline)
{
	bool can_sleep = lock_can_sleep(q), look = true;
	int nap_ms = LOCK_NAP_MIN_MS;
	unsigned spins = 0;

	for (;;) {
		uint64_t cur = 0;
		if (__atomic_compare_exchange_n(&q->out->lock, &cur, q->lock_tag,
						false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return 0;
		if (++spins % LOCK_SPINS) {
			cpu_relax();
			continue;
		}
		if (smq_queue_stale(q))
			return -ESTALE;
		if (deadline && smq_past(deadline))
			return -ETIMEDOUT;
		/* whether the holder lives: a look at /proc, so not after a
		 * sleep that a release ended */
		if (look && !smq_tag_alive(cur)) {
			if (__atomic_compare_exchange_n(&q->out->lock, &cur,
							q->lock_tag, false,
							__ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED)) {
				smq_lane_recover(q);
				smq_journal(q->w, SMQ_JOURNAL_TAKEOVER,
					    SMQ_SENDER, q->index, q->epoch,
					    smq_tag_pid(cur), 1);
				return 0;
			}
			continue;
		}
		int woken = can_sleep ? lock_sleep(q, cur, deadline, &nap_ms)
				      : -1;
		if (woken < 0) {
			can_sleep = false;
			TEST_HOOK(SMQ_HOOK_LOCK_YIELD);
			sched_yield();
		}
		look = woken <= 0;
	}
}

/* After the release and a full barrier, the flag found set: wakes the
 * sleepers that flagged this handle.  A flag cleared here and set again
 * by a waiter that sleeps anew is seen at the next release. */
void smq_lane_wake_sleepers(struct smq_queue *q)
{
	STORE(&q->slot->lock_waiters, 0);
	if (lock_can_sleep(q))
		smq_futex_wake(lock_word(q));
}

void smq_lane_unlock(struct smq_queue *q)
{
	smq_lane_release(q);
	smq_full(q->w->map.order);
	smq_lane_wake(q);
}

void smq_lane_end_loan(struct smq_queue *q)
{
	q->loaned = false;
	smq_lane_unlock(q);
	smq_queue_leave(q);
}
