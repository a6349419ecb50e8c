/* Sending.  Every write crosses to the receiver's region; every read is
 * of our own memory.  The receiver's bottom comes back to us, so we read
 * it locally, and only when our cached copy says the ring is full. */
#include <sys/uio.h>
#include <string.h>
#include "queue.h"

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

/* A few polls for room, the lock held, before a send that is to wait
 * reads the clock for its deadline: in a stream the receiver frees an
 * entry within a few hundred nanoseconds. */
static bool quick_room(struct smq_queue *q, uint64_t seq)
{
	for (int i = 0; i < 64; i++) {
		if (room(q, seq))
			return true;
		cpu_relax();
	}
	return false;
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
	smq_dekker(w->map.order);
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

/* SMQ_POLL: past its spin, a sender that never sleeps polls for room
 * with its mark down (maintenance need not wait for it: it reads only its
 * own copy of the receiver's bottom, and enters again before it uses what
 * it saw), beating once a slice as a sleeper does.  0 with the mark up
 * again, at room or at the deadline (the caller looks again under the
 * lock); an error with it down. */
static int poll_for_room(struct smq_queue *q, uint64_t seq,
			 const struct timespec *deadline)
{
	uint64_t next_beat = 0;
	int err;

	smq_queue_leave(q);
	for (;;) {
		for (int i = 0; i < 64; i++) {
			if (room(q, seq))
				return smq_queue_enter(q);
			cpu_relax();
		}
		if (deadline && smq_past(deadline))
			return smq_queue_enter(q);
		if ((err = smq_queue_stale(q)))
			return err;
		uint64_t now = smq_now_ns();
		if (now >= next_beat) {
			smq_beat_outside(q->w);
			next_beat = now + SLEEP_SLICE_MS * 1000000ull;
		}
	}
}

/* Called with the mark set, the lock held and the lane full.  Polls for
 * room as the handle's mode says (SMQ_SLEEP: not at all; SMQ_POLL: until
 * room or the deadline; else its spin); then declares that we wait for
 * room (under the lock, so the declaration only grows), leaves, and
 * sleeps until the receiver rings or the deadline passes.  Returns 0 with
 * the mark set and the lock held again, or an error with neither. */
static int wait_for_room(struct smq_queue *q, uint64_t seq,
			 const struct timespec *deadline)
{
	struct timespec lock_by;
	uint64_t spin = q->flags & SMQ_SLEEP ? 0 : q->spin_ns, spin_until = 0;
	int err = 0;

	smq_lane_unlock(q);
	/* polls first, the clock after: a stream's sender waits a few hundred
	 * nanoseconds, less than a clock read costs on some machines */
	for (;;) {
		for (int i = 0; i < 64; i++) {
			if (room(q, seq))
				goto relock;
			cpu_relax();
		}
		uint64_t now = smq_now_ns();
		if (!spin_until)
			spin_until = now + spin;
		if (now >= spin_until)
			break;
	}
	if (q->flags & SMQ_POLL) {
		if ((err = poll_for_room(q, seq, deadline)))
			return err;
		goto relock;
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
	/* Whether the sleeper lives is a look at /proc: six system calls,
	 * which made at every ring cost more than the ring and the wake-up
	 * together (a sleeping receiver's half round trip went from 38 to
	 * 75 us).  So a handle looks once per receiving process, the first
	 * time it would ring it, and rings it without a look from then on:
	 * one that dies asleep after that gets one ring that nobody hears. */
	uint64_t sleeper = LOAD(&q->wake->sleeper);
	if (sleeper != q->sleeper_alive &&
	    LOAD(&q->wake->sleeper_boot) == w->boot) {
		if (!smq_tag_alive(sleeper))
			return;
		q->sleeper_alive = sleeper;
	}
	memcpy(&a, &q->wake->bell, sizeof(a));
	if (!smq_can_ring(q->ring_kinds, w->boot, &a))
		return;  /* the receiver knows, and naps instead */
	/* a value no other ringer stores: the lane's count and our board (a
	 * send rings after it released the lane lock, so the count is an
	 * atomic add: the sleeping path only) */
	uint64_t n = __atomic_add_fetch(&q->out->doorbells, 1, __ATOMIC_RELAXED);
	if (TEST_SKIP(SMQ_HOOK_RING))
		return;  /* test builds: a doorbell that never arrives */
	w->map.tp->ring(&w->map, &a, q->rbell, (uint32_t)(n << 6) | w->board);
}

/* A send that gave up waiting for room while its receiver slept on: the
 * doorbells it rang were not answered. */
static void unanswered(struct smq_queue *q, int timeout_ms)
{
	if (LOAD(&q->wake->sleep_epoch) & 1)
		smq_journal(q->w, SMQ_JOURNAL_UNANSWERED, SMQ_SENDER, q->index,
			    q->epoch, (uint64_t)timeout_ms, 0);
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
		if (q->bottom_seen > seq && q->bottom_seen - seq <= q->entries) {
			/* A sender died between its signatures and its top,
			 * and the receiver took those entries: carry on after
			 * them, counted as sent. */
			smq_lane_recover(q);
			seq = LOAD(&q->out->top);
			if (seq < q->bottom_seen) {
				/* their signatures are gone (damage): counted
				 * all the same, messages moving with top */
				uint64_t m = LOAD(&q->out->messages);
				STORE(&q->out->messages,
				      m + (q->bottom_seen - seq));
				seq = q->bottom_seen;
				STORE_REL(&q->out->top, seq);
				FAR_STORE_REL(q->in, struct smq_lane_in, top,
					      seq);
			}
			continue;
		}
		if (!smq_lane_copy_sane(q->bottom_seen, seq, q->entries))
			return -SMQ_ECORRUPT;
		if (timeout_ms == 0) {
			/* an event too: the lane was full for this send */
			smq_full_met(q);
			STORE(&q->out->full_refusals,
			      LOAD(&q->out->full_refusals) + 1);
			return -EAGAIN;
		}
		/* one full wait per send that waits, however many naps and
		 * wake-ups it takes (a counter counts events) */
		if (!counted) {
			smq_full_met(q);
			STORE(&q->out->full_waits, LOAD(&q->out->full_waits) + 1);
			counted = true;
			if (quick_room(q, seq))
				break;
		}
		if (!timed && timeout_ms > 0) {
			smq_deadline(&deadline, timeout_ms);
			timed = true;
		}
		int err = wait_for_room(q, seq, timed ? &deadline : NULL);
		if (err) {
			*left = true;
			if (err == -ETIMEDOUT)
				unanswered(q, timeout_ms);
			return err;
		}
		seq = LOAD(&q->out->top);
		if (!room(q, seq) && timed && smq_past(&deadline)) {
			unanswered(q, timeout_ms);
			return -ETIMEDOUT;
		}
	}
	if (q->full_open)
		smq_full_maybe_ended(q);
	*seqp = seq;
	return 0;
}

static inline struct smq_far entry_at(const struct smq_queue *q, uint64_t seq)
{
	return smq_far_offset(q->ring, (seq & (q->entries - 1)) * q->stride);
}

/* Asks for the lines of the entry q->ahead sends on (smq_far_ahead()),
 * where the receiver is known to be done with it: its lines come from the
 * receiver's cache while we write the entries before it, and the send
 * that writes it does not wait for them at its barrier.  Nothing the
 * receiver has yet to read is taken from it. */
static inline void write_ahead(const struct smq_queue *q, uint64_t seq)
{
	uint32_t k = q->ahead;

	if (k && seq + k - q->bottom_seen < q->entries) {
		struct smq_far e = entry_at(q, seq + k);
		smq_far_prefetch_write(e);
		smq_far_prefetch_write(smq_far_offset(e, SMQ_LINE));
	}
}

/* Sets the mark, takes the lane lock and waits for room for the next
 * message: 0 with its sequence, the mark up and the lock held; else an
 * error with neither.  The lock is held for one call at a time.
 * Uncontended it costs one exchange and no clock read; contended, waiting
 * for it counts against the timeout (0 still allows a millisecond). */
static inline int send_begin(struct smq_queue *q, int timeout_ms,
			     uint64_t *seqp)
{
	bool left = false;
	int err;

	if ((err = smq_queue_enter(q)))
		return err;
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
	if ((err = make_room(q, timeout_ms, seqp, &left)) && !left) {
		smq_lane_unlock(q);
		smq_queue_leave(q);
	}
	if (!err)
		write_ahead(q, *seqp);
	return err;
}

/* After publish, which released the lock. */
static inline void send_end(struct smq_queue *q)
{
	smq_queue_leave(q);
}

/* Our lane as a call writes it: the ring, its shape and our signature
 * key, read from the handle once, since every store into an entry may
 * alias the handle for the compiler. */
struct lane_w {
	uint8_t *ring;
	uint64_t stride, mask, key;
	bool checksum;
};

static inline struct lane_w lane_w(const struct smq_queue *q)
{
	return (struct lane_w){ q->ring.far_, q->stride, q->entries - 1,
				smq_signature_key(q->epoch, q->index,
						  q->w->board),
				q->checksum };
}

static inline struct smq_far entry_of(const struct lane_w *l, uint64_t seq)
{
	return (struct smq_far){ l->ring + (seq & l->mask) * l->stride };
}

/* Entry seq's payload and header (not its signature).  The check is summed
 * from the caller's buffer as it is copied: the window is never read back
 * across the bus. */
static inline void write_entry(const struct lane_w *l, uint64_t seq,
			       const void *data, size_t len)
{
	struct smq_far e = entry_of(l, seq);
	uint32_t check = 0;

	if (l->checksum)
		check = smq_far_copy_entry(e, SMQ_ENTRY_HEADER, data, len,
					   smq_signature_at(l->key, seq));
	else if (len)
		smq_far_copy(e, SMQ_ENTRY_HEADER, data, len);
	FAR_STORE(e, struct smq_entry, size, (uint32_t)len);
	FAR_STORE(e, struct smq_entry, check, check);
}

/* Publishes entries seq to seq + n - 1, whose payloads and headers are
 * written: then their signatures, then top, each published before the
 * next, so that a receiver that sees a signature (or top) sees a whole
 * entry, even through a write-combining mapping.  One fence and one store
 * of top for the lot.  Releases the lane lock.  Always inline: out of
 * line (GCC 12 left it there once the lock's release and wake-up were
 * added), the lane's shape goes through memory and a send runs 264
 * instructions instead of 226 (callgrind, one process, 64 B). */
static inline __attribute__((always_inline)) void
publish(struct smq_queue *q, const struct lane_w *l,
	uint64_t seq, unsigned n, uint64_t bytes)
{
	struct smq_window *w = q->w;
	const struct smq_order *order = w->map.order;

	smq_publish(order);
	for (unsigned i = 0; i < n; i++)
		FAR_STORE(entry_of(l, seq + i), struct smq_entry, signature,
			  smq_signature_at(l->key, seq + i));
	smq_publish(order);
	TEST_HOOK(SMQ_HOOK_SIGNED);
	/* counted before top: messages moves with top, so that what a
	 * sender that died between the two counted is not counted again by
	 * the recovery (lane.c) */
	STORE(&q->out->messages, LOAD(&q->out->messages) + n);
	STORE(&q->out->bytes, LOAD(&q->out->bytes) + bytes);
	TEST_HOOK(SMQ_HOOK_COUNTED);
	/* ours first: the published top never runs ahead of it */
	STORE(&q->out->top, seq + n);
	TEST_HOOK(SMQ_HOOK_TOP_STORED);
	FAR_STORE(q->in, struct smq_lane_in, top, seq + n);
	/* the lane is ours no longer: released before the barrier below,
	 * which serves two Dekker pairs at once (lane.c) */
	smq_lane_release(q);
	/* our top before the receiver's sleep word: it stores that word, then
	 * reads our top across the bus (smq(7), Sleeping and waking); our
	 * release before our look at whether a sender of our board sleeps on
	 * the lock.  Feature membarrier: a single send leaves it out while the
	 * receiver busy-polls and no sender has slept on a lock this handle
	 * holds, where the other side of both pairs sends a barrier to every
	 * CPU before it relies on ours (smq_rx_polls, lane.c): through 256
	 * entries, 64-byte single calls moved 1.1x as many without it.  A
	 * burst keeps it: without it, bursts of 8 through 16 entries moved
	 * 0.86x to 0.9x as many, the next burst's stores meeting the lines
	 * the receiver still read (doc/message-path.md). */
	if (n > 1 || !q->may_skip || LOAD(&q->wake->rx_polls) != 1 ||
	    LOAD(&q->slot->lock_waited))
		smq_dekker(order);
	else
		TEST_HOOK(SMQ_HOOK_NO_BARRIER);
	ring_receiver(q);
	smq_lane_wake(q);
	if ((seq - 1) / HEARTBEAT_EVERY != (seq + n - 1) / HEARTBEAT_EVERY)
		smq_beat(w);
}

/* What every send looks at before it waits or writes. */
static inline int send_check(const struct smq_queue *q, size_t len)
{
	if (q && smq_inherited(q->w))
		return -EBADF;
	if (!q || q->role != SMQ_SENDER)
		return -EINVAL;
	if (q->loaned)
		return -EINPROGRESS;  /* its own loan holds the lane lock */
	return len > q->entry_size ? -EMSGSIZE : 0;
}

int smq_send(struct smq_queue *q, const void *data, size_t len, int timeout_ms)
{
	uint64_t seq;
	int err;

	if (len && !data)
		return -EINVAL;
	if ((err = send_check(q, len)) || (err = send_begin(q, timeout_ms, &seq)))
		return err;
	struct lane_w l = lane_w(q);
	write_entry(&l, seq, data, len);
	publish(q, &l, seq, 1, len);
	send_end(q);
	return 0;
}

/* How many of the n entries from seq have room, at least one: the
 * receiver's bottom is read again (locally) only if the last one seen
 * does not give room for all. */
static unsigned room_for(struct smq_queue *q, uint64_t seq, unsigned n)
{
	uint64_t used = seq - q->bottom_seen;

	if (q->entries - used < n) {
		uint64_t b = LOAD_ACQ(&q->fc->bottom);
		if (b > q->bottom_seen && b <= seq)
			q->bottom_seen = b;
		used = seq - q->bottom_seen;
	}
	return q->entries - used < n ? (unsigned)(q->entries - used) : n;
}

int smq_send_burst(struct smq_queue *q, const struct iovec *msgs, unsigned n,
		   int timeout_ms)
{
	uint64_t seq, bytes = 0;
	int err;

	if ((err = send_check(q, 0)))
		return err;
	if (!n || !msgs)
		return -EINVAL;
	/* every message is looked at before anything is written */
	for (unsigned i = 0; i < n; i++) {
		if (msgs[i].iov_len && !msgs[i].iov_base)
			return -EINVAL;
		if (msgs[i].iov_len > q->entry_size)
			return -EMSGSIZE;
	}
	if ((err = send_begin(q, timeout_ms, &seq)))
		return err;
	unsigned k = room_for(q, seq, n);
	struct lane_w l = lane_w(q);
	for (unsigned i = 0; i < k; i++) {
		write_entry(&l, seq + i, msgs[i].iov_base, msgs[i].iov_len);
		bytes += msgs[i].iov_len;
	}
	publish(q, &l, seq, k, bytes);
	send_end(q);
	return (int)k;
}

/* A loan: the next entry, in place.  From here to its submit or abort the
 * handle holds its mark and the lane lock, as a send does for its copy. */
int smq_loan(struct smq_queue *q, size_t len, void **data, int timeout_ms)
{
	uint64_t seq;
	int err;

	if (!data)
		return -EINVAL;
	*data = NULL;
	if ((err = send_check(q, len)) || (err = send_begin(q, timeout_ms, &seq)))
		return err;
	q->loaned = true;
	q->loan_seq = seq;
	q->loan_cap = len;
	q->loan_summed = 0;
	q->loan_reg = 0;
	*data = entry_at(q, seq).far_ + SMQ_ENTRY_HEADER;
	return 0;
}

int smq_loan_write(struct smq_queue *q, size_t offset, const void *src,
		   size_t n)
{
	if (q && smq_inherited(q->w))
		return -EBADF;
	if (!q || !q->loaned || (n && !src))
		return -EINVAL;
	if (offset > q->loan_cap || n > q->loan_cap - offset)
		return -EMSGSIZE;
	struct smq_far e = entry_at(q, q->loan_seq);
	if (!q->checksum) {
		smq_far_copy(e, SMQ_ENTRY_HEADER + offset, src, n);
		return 0;
	}
	/* summed from the caller's bytes, in order: the sum never reads the
	 * window */
	if (offset != q->loan_summed)
		return -EINVAL;
	q->loan_reg = ~smq_far_sum_copy(e, SMQ_ENTRY_HEADER + offset, src, n,
					~q->loan_reg);
	q->loan_summed += n;
	return 0;
}

int smq_loan_submit(struct smq_queue *q, size_t len)
{
	if (q && smq_inherited(q->w))
		return -EBADF;
	if (!q || !q->loaned)
		return -EINVAL;
	if (len > q->loan_cap)
		return -EMSGSIZE;
	uint64_t seq = q->loan_seq;
	struct smq_far e = entry_at(q, seq);
	uint32_t check = 0;
	if (q->checksum) {
		/* bytes written through the pointer were never summed */
		if (q->loan_summed != len)
			return -EINVAL;
		check = smq_entry_check_join((uint32_t)len,
					     smq_signature(q->epoch, q->index,
							   q->w->board, seq),
					     q->loan_reg, len);
	}
	FAR_STORE(e, struct smq_entry, size, (uint32_t)len);
	FAR_STORE(e, struct smq_entry, check, check);
	TEST_HOOK(SMQ_HOOK_LOAN_SUBMIT);
	struct lane_w l = lane_w(q);
	publish(q, &l, seq, 1, len);
	q->loaned = false;
	send_end(q);
	return 0;
}

int smq_loan_abort(struct smq_queue *q)
{
	if (q && smq_inherited(q->w))
		return -EBADF;
	if (!q || !q->loaned)
		return -EINVAL;
	smq_lane_end_loan(q);
	return 0;
}
