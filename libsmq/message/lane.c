/* The lane lock: one sending call of a board at a time on a queue, in
 * that board's own memory; what a holder that died left half done is
 * recovered by the next.  Below queue.c (a closed handle gives its loan
 * back) and send.c (every send takes the lock). */
#include <sched.h>
#include "queue.h"

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
 * forever).  Called with the mark set: the lock word is in the layout. */
int smq_lane_lock(struct smq_queue *q, const struct timespec *deadline)
{
	uint64_t cur = 0;
	unsigned spins = 0;

	while (!__atomic_compare_exchange_n(&q->out->lock, &cur, q->lock_tag,
					    false, __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED)) {
		if (++spins % 256 == 0) {
			if (smq_queue_stale(q))
				return -ESTALE;
			if (deadline && smq_past(deadline))
				return -ETIMEDOUT;
			if (!smq_tag_alive(cur) &&
			    __atomic_compare_exchange_n(&q->out->lock, &cur,
							q->lock_tag, false,
							__ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED)) {
				smq_lane_recover(q);
				smq_journal(q->w, SMQ_JOURNAL_TAKEOVER,
					    SMQ_SENDER, q->index, q->epoch,
					    smq_tag_pid(cur), 1);
				return 0;
			}
			sched_yield();
		} else {
			cpu_relax();
		}
		cur = 0;
	}
	return 0;
}

void smq_lane_unlock(struct smq_queue *q)
{
	STORE_REL(&q->out->lock, 0);
}

void smq_lane_end_loan(struct smq_queue *q)
{
	q->loaned = false;
	smq_lane_unlock(q);
	smq_queue_leave(q);
}
