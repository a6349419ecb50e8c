/* The receiver's wait, on one queue or on a group's: it looks at every
 * lane, arms its sleep in each sender's memory, looks again (a ring may
 * overtake the data), and sleeps on the doorbells.  Below it, what
 * receive.c takes and peeks. */
#include <string.h>
#include <time.h>
#include "queue.h"

/* A lane whose top says an entry is there that does not verify.  The
 * signature at our bottom says by itself whether the lane is empty (the
 * one the slot got a lap before, or 0 in a ring's first lap) or holds the
 * next message: only another value needs the lane's top, which the sender
 * writes at every message, so a receiver that polls an empty queue never
 * pulls that line from the sender.  Top is stored after the signature, so
 * a signature read again after top is final.  We take an entry as soon as
 * its signature is there, so our bottom may be past a top its sender is
 * about to store: by one entry, or by a burst's.  Reads only: the turn
 * passes on in our handle, so the other sending boards are served. */
static int bad_lane(struct smq_queue *q, bool all)
{
	for (unsigned k = 0; k < q->nlanes; k++) {
		uint64_t sig = LOAD(&q->heads[k]->signature);
		TEST_HOOK(SMQ_HOOK_LANE_LOOK);
		uint64_t bottom = LOAD(&q->bottoms[k]);
		/* what the slot holds while empty, computed here, off the
		 * path of every take */
		uint64_t empty = bottom >= q->entries
				 ? smq_signature(q->epoch, q->index,
						 q->lane_board[k],
						 bottom - q->entries)
				 : 0;
		if (!all && (sig == empty || sig == q->expect[k]))
			continue;
		uint64_t top = LOAD_ACQ(&q->lanes[k].top);
		int err = 0;
		if (top <= bottom && bottom - top <= q->entries)
			continue;
		if (top < bottom || top - bottom > q->entries)
			err = -SMQ_ECORRUPT;
		else if (LOAD_ACQ(&q->heads[k]->signature) != q->expect[k])
			err = -SMQ_ESIGNATURE;
		if (err) {
			smq_pass_turn(q, k);
			return err;
		}
	}
	return 0;
}

/* What a receiver reads with no mark up, a re-init may be rewriting: a
 * fault it finds is the window's only if the notice, read after, is still
 * the one the handle was opened under. */
static int confirm(struct smq_queue *q, int err)
{
	if (!err)
		return 0;
	smq_consume(q->w->map.order);
	return smq_queue_stale(q) ? -ESTALE : err;
}

static void rx_beat_outside(struct smq_queue *q, uint32_t waiting)
{
	if (!smq_queue_enter(q)) {
		smq_rx_beat(q, waiting);
		smq_queue_leave(q);
	}
}

/* Arms a sleep: tells every sending board how to wake us (our doorbell
 * and an odd epoch, in its own memory); arm_read then reads each one's
 * top across the bus.  Each read returns only after our posted writes to
 * that board have landed, and after the entries that board wrote before
 * storing its top (a completion does not pass posted writes): so either
 * the sender stores its next top after our epoch reached it, reads the
 * epoch, and rings; or its entry is already in our memory, where we look
 * next.  No interleaving loses a wake-up, even with posted writes that
 * arrive at no promised time. */
static void arm_publish(struct smq_queue *q)
{
	struct smq_window *w = q->w;
	struct smq_bell_addr none = { 0 };
	const struct smq_bell_addr *a = q->has_bell ? &q->bell : &none;

	/* how to wake us and who sleeps (a sender of our host does not ring
	 * a receiver that died asleep), published before the odd epoch that
	 * makes a sender read them */
	for (unsigned k = 0; k < q->nlanes; k++) {
		smq_far_copy(q->wakes[k], offsetof(struct smq_lane_wake, bell), a,
			     sizeof(*a));
		FAR_STORE(q->wakes[k], struct smq_lane_wake, sleeper, w->tag);
		FAR_STORE(q->wakes[k], struct smq_lane_wake, sleeper_boot,
			  w->boot);
	}
	smq_publish(w->map.order);
	smq_set_sleep_epoch(q, q->sleep_epoch + 1);
}

/* Whether every sender that has opened its lane can ring our doorbell
 * (else we nap). */
static bool arm_read(struct smq_queue *q)
{
	struct smq_window *w = q->w;
	struct smq_bell_addr none = { 0 };
	const struct smq_bell_addr *a = q->has_bell ? &q->bell : &none;
	bool can = q->has_bell;

	for (unsigned k = 0; k < q->nlanes; k++) {
		uint32_t kinds;
		uint64_t host;
		if (q->lane_board[k] == w->board) {
			const struct smq_lane_out *o = (const void *)q->outs[k].far_;
			kinds = LOAD(&o->ring_kinds);
			host = LOAD(&o->host);
		} else {
			FAR_LOAD(w, SMQ_FAR_ARM, q->outs[k], struct smq_lane_out, top);
			kinds = FAR_LOAD(w, SMQ_FAR_ARM, q->outs[k],
					 struct smq_lane_out, ring_kinds);
			host = FAR_LOAD(w, SMQ_FAR_ARM, q->outs[k],
					struct smq_lane_out, host);
		}
		/* a lane never opened has no sender to ring us */
		if (kinds && !smq_can_ring(kinds, host, a))
			can = false;
	}
	return can;
}

static void leave_all(struct smq_queue *const *qs, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		smq_queue_leave(qs[i]);
}

/* Sets every mark, or none: on an error, *which is the queue's place. */
static int enter_all(struct smq_queue *const *qs, unsigned n, unsigned *which)
{
	for (unsigned i = 0; i < n; i++) {
		int err = smq_queue_enter(qs[i]);
		if (err) {
			leave_all(qs, i);
			*which = i;
			return err;
		}
	}
	return 0;
}

/* Sleeps on the doorbell of n queues of this board, with their marks
 * down; returns with them down.  A fault names its queue's place in
 * *which. */
static int sleep_on_bells(struct smq_queue *const *qs, unsigned n,
			  const struct timespec *deadline, unsigned *which)
{
	uint32_t seen[SMQ_GROUP_MAX_MEMBERS];
	const struct smq_order *order = qs[0]->w->map.order;
	int err, werr = 0;
	bool can_sleep = true, found = false;

	for (unsigned i = 0; i < n; i++)
		seen[i] = LOAD(&qs[i]->bell_word->doorbell);
	if ((err = enter_all(qs, n, which)))
		return err;
	TEST_HOOK(SMQ_HOOK_ARM);
	for (unsigned i = 0; i < n; i++)
		arm_publish(qs[i]);
	smq_dekker(order);
	for (unsigned i = 0; i < n; i++)
		can_sleep &= arm_read(qs[i]);
	smq_consume(order);
	TEST_HOOK(SMQ_HOOK_ARMED);
	/* the look after arming: a message that landed between our last
	 * look and the arming rang no doorbell (the sender saw us awake) */
	for (unsigned i = 0; i < n && !found; i++)
		if (smq_ready_lane(qs[i]) >= 0 || (err = bad_lane(qs[i], false))) {
			found = true;
			*which = i;
		}
	if (!found) {
		for (unsigned i = 0; i < n; i++) {
			STORE(&qs[i]->rx->sleeps, LOAD(&qs[i]->rx->sleeps) + 1);
			smq_rx_beat(qs[i], 1);
		}
		leave_all(qs, n);
		werr = smq_wait_bells(qs, n, can_sleep, seen, deadline);
		/* a re-init may have happened while we slept: write nothing */
		if ((err = enter_all(qs, n, which)))
			return err;
		for (unsigned i = 0; i < n; i++)
			if (LOAD(&qs[i]->bell_word->doorbell) != seen[i])
				STORE(&qs[i]->rx->wakeups,
				      LOAD(&qs[i]->rx->wakeups) + 1);
	}
	for (unsigned i = 0; i < n; i++)
		smq_set_sleep_epoch(qs[i], qs[i]->sleep_epoch + 1);
	leave_all(qs, n);
	return err ? err : werr;
}

/* Wait until some lane of one of n queues (a queue, or a group's) has a
 * message; returns its lane, with the queue's position in *which, or a
 * negative error.  The first queue's flags and spin say how to wait.
 * Past the first round of polls, each receiver says it waits (rx_info's
 * waiting) and beats at least once a slice until it returns. */
int smq_wait_any(struct smq_queue *const *qs, unsigned n, int timeout_ms,
		 unsigned *which)
{
	struct smq_queue *q = qs[0];
	struct timespec deadline;
	uint64_t spin_until = 0, now, next_beat = 0;
	int s, err;

	/* a stream's receiver waits a few hundred nanoseconds: a round of
	 * polls before the clock is read, which costs more than a poll */
	if (!(q->flags & SMQ_SLEEP))
		for (int i = 0; i < 128; i++) {
			for (unsigned j = 0; j < n; j++)
				if ((s = smq_ready_lane(qs[j])) >= 0) {
					*which = j;
					return s;
				}
			cpu_relax();
		}
	if (timeout_ms >= 0)
		smq_deadline(&deadline, timeout_ms);
	now = smq_now_ns();
	if (!(q->flags & SMQ_SLEEP))
		spin_until = now + q->spin_ns;
	/* SMQ_SLEEP looks once between sleeps; the others poll a while */
	int polls = q->flags & SMQ_SLEEP ? 1 : 128;
	for (;;) {
		for (int i = 0; i < polls; i++) {
			for (unsigned j = 0; j < n; j++)
				if ((s = smq_ready_lane(qs[j])) >= 0) {
					*which = j;
					goto out;
				}
			cpu_relax();
		}
		/* once a sleep slice, every lane's top too: a lane whose
		 * queued entry lost its signature to damage, back to the one
		 * an empty slot has, is said, not left to stall unseen */
		now = smq_now_ns();
		for (unsigned j = 0; j < n; j++) {
			bool all = now >= qs[j]->look_all_at;
			if (all)
				qs[j]->look_all_at = now +
					SLEEP_SLICE_MS * 1000000ull;
			if ((err = smq_queue_stale(qs[j])) ||
			    (err = confirm(qs[j], bad_lane(qs[j], all)))) {
				*which = j;
				s = err;
				goto out;
			}
		}
		if (timeout_ms >= 0 && smq_past(&deadline)) {
			s = timeout_ms == 0 ? -EAGAIN : -ETIMEDOUT;
			goto out;
		}
		/* a busy-polling receiver is alive too */
		if (now >= next_beat) {
			for (unsigned j = 0; j < n; j++)
				rx_beat_outside(qs[j], 1);
			next_beat = now + SLEEP_SLICE_MS * 1000000ull;
		}
		if (q->flags & SMQ_POLL || now < spin_until)
			continue;
		err = sleep_on_bells(qs, n, timeout_ms >= 0 ? &deadline : NULL,
				     which);
		if (err && err != -ETIMEDOUT) {
			s = err;
			goto out;
		}
	}
out:
	if (next_beat)
		for (unsigned j = 0; j < n; j++)
			rx_beat_outside(qs[j], 0);
	return s;
}
