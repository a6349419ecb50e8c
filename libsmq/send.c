/* Sending.  Every write crosses to the receiver's region; every read is
 * of our own memory.  The receiver's bottom comes back to us, so we read
 * it locally, and only when our cached copy says the ring is full. */
#include <sched.h>
#include <string.h>
#include "queue.h"

#define DEFAULT_SPIN_NS 20000

/* A sender that died after signing entry seq but before storing top left
 * a whole entry that the receiver takes (or has taken): carry on after
 * it, never write over it.  Its signature can only be there if that send
 * wrote it.  One read across the bus: only when a sender opens or takes
 * the lane over from a dead one, never per message. */
void smq_lane_recover(struct smq_queue *q)
{
	uint64_t seq = LOAD(&q->out->top);
	struct smq_far e = smq_far_offset(q->ring,
					  (seq & (q->entries - 1)) * q->stride);

	if (FAR_LOAD(q->w, SMQ_FAR_TAKEOVER, e, struct smq_entry, signature) ==
	    smq_signature(q->epoch, q->index, q->w->board, seq)) {
		STORE_REL(&q->out->top, seq + 1);
		FAR_STORE_REL(q->in, struct smq_lane_in, top, seq + 1);
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

/* Room in the ring for sequence seq?  Reads the receiver's bottom (its copy
 * in our memory) only when the one we have seen says no.  That copy may be
 * behind what we have seen: arm_room reads the receiver's own bottom, which
 * it stores before the copy.  What we have seen only moves forward. */
static bool room(struct smq_queue *q, uint64_t seq)
{
	uint32_t entries = q->entries;

	if (seq - q->bottom_seen < entries)
		return true;
	uint64_t b = LOAD_ACQ(&q->fc->bottom);
	if (b > q->bottom_seen)
		q->bottom_seen = b;
	return seq - q->bottom_seen < entries;
}

/* Arms a wait for room: tells the receiver how to wake us, then reads its
 * bottom across the bus.  That read comes back only after our posted
 * writes have landed (a read does not pass posted writes), and it is the
 * receiver's own bottom, not a copy still in flight to us: if it shows no
 * room, the receiver's next take comes after it, sees our request and
 * rings.  Returns whether the receiver can ring us (else we nap). */
static bool arm_room(struct smq_queue *q, uint32_t seen)
{
	struct smq_window *w = q->w;
	const struct smq_layout *l = &w->lay;
	struct smq_far rx = smq_far(w, l->rx[q->index]);
	struct smq_far info = smq_far(w, lay_rx_info(l, q->index));
	struct smq_far bottom = smq_far(w, lay_bottoms(l, q->index) +
					8ull * q->lane);

	smq_far_copy(q->ask, offsetof(struct smq_lane_ask, bell), &q->bell,
		     sizeof(q->bell));
	smq_publish(w->map.order);
	FAR_STORE(q->ask, struct smq_lane_ask, space_wait, (uint64_t)seen + 1);
	smq_dekker_wait(w->map.order);
	uint64_t b = FAR_LOAD_WORD(w, SMQ_FAR_ROOM, bottom, uint64_t);
	uint32_t kinds = FAR_LOAD(w, SMQ_FAR_ROOM, info, struct smq_rx_info,
				  ring_kinds);
	uint64_t host = FAR_LOAD(w, SMQ_FAR_ROOM, info, struct smq_rx_info, host);
	bool owned = FAR_LOAD(w, SMQ_FAR_ROOM, rx, struct smq_rx, owner) != 0;
	smq_consume(w->map.order);
	if (b > q->bottom_seen)
		q->bottom_seen = b;
	return q->has_bell && owned && smq_can_ring(kinds, host, &q->bell);
}

/* Called with the mark set, the lock held and the lane full.  Declares
 * that we wait for room (under the lock, so the declaration only grows),
 * leaves, and sleeps until the receiver rings or the deadline passes.
 * Returns 0 with the mark set and the lock held again, or an error with
 * neither. */
static int wait_for_room(struct smq_queue *q, uint64_t seq,
			 const struct timespec *deadline)
{
	struct timespec lock_by;
	uint64_t spin_until = smq_now_ns() + DEFAULT_SPIN_NS;
	int err = 0;

	smq_lane_unlock(q);
	while (smq_now_ns() < spin_until) {
		for (int i = 0; i < 64; i++) {
			if (room(q, seq))
				goto relock;
			cpu_relax();
		}
	}
	if ((err = smq_lane_lock(q, deadline)))
		goto out;
	if (LOAD(&q->out->top) != seq || room(q, seq))
		return 0;
	uint32_t seen = LOAD(&q->wake->space_bell);
	TEST_HOOK(SMQ_HOOK_ARM_ROOM);
	bool can_sleep = arm_room(q, seen);
	/* the look after arming: a take between our last look and the
	 * arming rang nothing (the receiver saw no request) */
	if (room(q, seq))
		return 0;
	smq_lane_unlock(q);
	smq_queue_leave(q);
	smq_beat_outside(q->w);
	err = smq_wait_bell(q, can_sleep, &q->wake->space_bell, seen, deadline);
	if (err == -ETIMEDOUT)
		err = 0;  /* the caller checks its own deadline */
	if (!err)
		err = smq_queue_enter(q);
	if (err)
		return err;
relock:
	/* past the caller's deadline, still take the lock to look once more */
	if (deadline && smq_past(deadline)) {
		smq_deadline(&lock_by, 1);
		deadline = &lock_by;
	}
	if (!(err = smq_lane_lock(q, deadline)))
		return 0;
out:
	smq_queue_leave(q);
	return err;
}

/* Rings the receiver if it sleeps, once per sleep (notify only a sleeper,
 * many messages per notification), unless it is a process of our host
 * that died asleep (it cannot answer; the next receiver wakes anyway).
 * The value we store is ours alone: our board in the low bits, a count
 * above. */
static void ring_receiver(struct smq_queue *q)
{
	struct smq_window *w = q->w;
	uint64_t ep = LOAD(&q->wake->sleep_epoch);

	if (!(ep & 1) || ep == q->rung_epoch)
		return;
	q->rung_epoch = ep;
	struct smq_bell_addr a;
	smq_consume(w->map.order);  /* the address is stored before the epoch */
	if (LOAD(&q->wake->sleeper_boot) == w->boot &&
	    !smq_tag_alive(LOAD(&q->wake->sleeper)))
		return;
	memcpy(&a, &q->wake->bell, sizeof(a));
	if (!smq_can_ring(q->ring_kinds, w->boot, &a))
		return;  /* the receiver knows, and naps instead */
	/* a value no other ringer stores: the lane's count (under its lock)
	 * and our board */
	uint64_t n = LOAD(&q->out->doorbells) + 1;
	STORE(&q->out->doorbells, n);
	if (TEST_SKIP(SMQ_HOOK_RING))
		return;  /* test builds: a doorbell that never arrives */
	w->map.tp->ring(&w->map, &a, q->rbell, (uint32_t)(n << 6) | w->board);
}

/* Waits until the lane has room for the next message; returns its
 * sequence number, with the lock held, or an error (-EAGAIN, -ETIMEDOUT,
 * -ESTALE...) with the lock held unless wait_for_room gave it up (then
 * *left says the mark is down too). */
static int make_room(struct smq_queue *q, int timeout_ms, uint64_t *seqp,
		     bool *left)
{
	struct timespec deadline;
	bool timed = false, counted = false;
	uint64_t seq = LOAD(&q->out->top);

	while (!room(q, seq)) {
		if (q->bottom_seen == seq + 1) {
			/* A sender died between its signature and its top, and
			 * the receiver took that entry: carry on after it. */
			seq = q->bottom_seen;
			STORE_REL(&q->out->top, seq);
			FAR_STORE_REL(q->in, struct smq_lane_in, top, seq);
			continue;
		}
		if (!smq_lane_copy_sane(q->bottom_seen, seq, q->entries))
			return -SMQ_ECORRUPT;
		if (timeout_ms == 0) {
			/* an event too: the lane was full for this send */
			STORE(&q->out->full_refusals,
			      LOAD(&q->out->full_refusals) + 1);
			return -EAGAIN;
		}
		if (!timed && timeout_ms > 0) {
			smq_deadline(&deadline, timeout_ms);
			timed = true;
		}
		/* one full wait per send that waits, however many naps and
		 * wake-ups it takes (a counter counts events) */
		if (!counted)
			STORE(&q->out->full_waits, LOAD(&q->out->full_waits) + 1);
		counted = true;
		int err = wait_for_room(q, seq, timed ? &deadline : NULL);
		if (err) {
			*left = true;
			return err;
		}
		seq = LOAD(&q->out->top);
		if (!room(q, seq) && timed && smq_past(&deadline))
			return -ETIMEDOUT;
	}
	*seqp = seq;
	return 0;
}

int smq_send(struct smq_queue *q, const void *data, size_t len, int timeout_ms)
{
	bool left = false;
	uint64_t seq;
	int err;

	if (!q || q->role != SMQ_SENDER || (len && !data))
		return -EINVAL;
	struct smq_window *w = q->w;
	if (len > q->entry_size)
		return -EMSGSIZE;
	if ((err = smq_queue_enter(q)))
		return err;
	/* The lock is held for one copy at a time.  Uncontended it costs one
	 * exchange and no clock read; contended, waiting for it counts against
	 * the timeout (0 still allows a millisecond). */
	uint64_t cur = 0;
	if (!__atomic_compare_exchange_n(&q->out->lock, &cur, q->lock_tag, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		struct timespec deadline;
		smq_deadline(&deadline, timeout_ms > 0 ? timeout_ms : 1);
		err = smq_lane_lock(q, timeout_ms < 0 ? NULL : &deadline);
		if (err) {
			smq_queue_leave(q);
			return err == -ETIMEDOUT && timeout_ms == 0 ? -EAGAIN : err;
		}
	}
	if ((err = make_room(q, timeout_ms, &seq, &left))) {
		if (left)
			return err;
		goto out;
	}

	/* Payload and header, then the signature, then top, each published
	 * before the next: a receiver that sees the signature (or top) sees
	 * a whole entry, even through a write-combining mapping. */
	uint64_t at = (seq & (q->entries - 1)) * q->stride;
	struct smq_far e = smq_far_offset(q->ring, at);
	uint64_t sig = smq_signature(q->epoch, q->index, w->board, seq);
	uint32_t check = 0;
	/* the check is summed from the caller's buffer as it is copied: the
	 * window is never read back across the bus */
	if (q->checksum)
		check = smq_far_copy_entry(e, SMQ_ENTRY_HEADER, data, len,
					   sig);
	else if (len)
		smq_far_copy(e, SMQ_ENTRY_HEADER, data, len);
	FAR_STORE(e, struct smq_entry, size, (uint32_t)len);
	FAR_STORE(e, struct smq_entry, check, check);
	smq_publish(w->map.order);
	FAR_STORE(e, struct smq_entry, signature, sig);
	smq_publish(w->map.order);
	/* ours first: the published top never runs ahead of it */
	STORE(&q->out->top, seq + 1);
	FAR_STORE(q->in, struct smq_lane_in, top, seq + 1);
	STORE(&q->out->messages, LOAD(&q->out->messages) + 1);
	STORE(&q->out->bytes, LOAD(&q->out->bytes) + len);
	/* our top before the receiver's sleep word: it stores that word, then
	 * reads our top across the bus (smq(7), Sleeping and waking) */
	smq_dekker_go(w->map.order);
	ring_receiver(q);
	if ((seq & (HEARTBEAT_EVERY - 1)) == 0)
		smq_beat(w);
out:
	smq_lane_unlock(q);
	smq_queue_leave(q);
	return err;
}
