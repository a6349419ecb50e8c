/* Queues: the message path.  A queue has one lane per sending board; a
 * lane's ring and top live in the receiver's region, its bottom and flow
 * control in the sender's, so each side only reads memory local to it and
 * only writes across the bus (seed 000, section 6.1).  Fields that change
 * at every message and fields that change only on sleep and wake-up sit on
 * different lines, so that at every message only the entry's own lines and
 * one line of each side's progress move between the boards. */
#include <signal.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

#define DEFAULT_SPIN_NS 20000
#define SLEEP_SLICE_MS 1000  /* a sleeper wakes this often to heartbeat */
#define HEARTBEAT_EVERY 1024 /* messages between heartbeats of a busy board */

/* A process or thread of this host that no longer exists. */
static bool dead(uint32_t id)
{
	return !smq_pid_alive(id);
}

static int lane_lock(struct smq_queue *q, const struct timespec *deadline);
static void lane_unlock(struct smq_queue *q);
static void lane_recover(struct smq_queue *q);

static const struct smq_entry *entry_at(const struct smq_queue *q, unsigned s,
					uint64_t seq)
{
	const struct smq_layout *l = &q->w->lay;
	return (const void *)(q->rings + ((uint64_t)s * l->entries +
					  (seq & (l->entries - 1))) * l->stride);
}

/* The receiver's view of lane s at sequence bottom: where the next entry
 * is and the signature it will carry once written. */
static void lane_expect(struct smq_queue *q, unsigned s, uint64_t bottom)
{
	q->heads[s] = entry_at(q, s, bottom);
	q->expect[s] = smq_signature(q->epoch, q->index, s, bottom);
}

static void free_queue(struct smq_queue *q)
{
	free(q->fcs);
	free(q->wakes);
	free(q->space_rung);
	free(q->heads);
	free(q->expect);
	free(q);
}

int smq_queue_open(struct smq_window *w, unsigned index, enum smq_role role,
		   unsigned flags, struct smq_queue **qp)
{
	const struct smq_layout *l;
	struct smq_queue *q;
	int err;

	if (!qp)
		return -EINVAL;
	*qp = NULL;
	if (!w)
		return -EINVAL;
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	if ((err = smq_stale(w)))
		return err;
	l = &w->lay;
	if (index >= l->queues || (role != SMQ_SENDER && role != SMQ_RECEIVER) ||
	    (flags & ~(unsigned)(SMQ_POLL | SMQ_SLEEP)) ||
	    (flags & SMQ_POLL && flags & SMQ_SLEEP))
		return -EINVAL;
	if (role == SMQ_RECEIVER && l->receiver[index] != w->board)
		return -EPERM;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->w = w;
	q->generation = w->generation;
	q->check = w->check;
	q->index = index;
	q->role = role;
	q->flags = flags;
	q->spin_ns = DEFAULT_SPIN_NS;
	q->pid = (uint32_t)getpid();
	struct smq_rx *rx = at(w, l->rx[index]);
	if (role == SMQ_SENDER) {
		q->out = at(w, lay_lane_out(l, w->board, index));
		q->fc = at(w, lay_lane_fc(l, w->board, index));
		q->wake = at(w, lay_lane_wake(l, w->board, index));
		q->in = at(w, lay_lane_in(l, index, w->board));
		q->ask = at(w, lay_lane_ask(l, index, w->board));
		q->ring = at(w, lay_ring(l, index, w->board));
		q->bell = at(w, lay_bell(l, index));
		q->epoch = LOAD(&rx->epoch); /* one read across the bus */
		q->tid = (uint32_t)gettid();
		/* acquire: the receiver's reads of the slots below bottom happen
		 * before we may write them */
		uint64_t top = LOAD(&q->out->top), bottom = LOAD_ACQ(&q->fc->bottom);
		if (bottom > top + 1 || (top > bottom && top - bottom > l->entries)) {
			free_queue(q);
			return -SMQ_ECORRUPT;
		}
		q->bottom_seen = bottom;
		struct timespec soon;
		smq_deadline(&soon, 100);
		if (!lane_lock(q, &soon)) {
			lane_recover(q);
			lane_unlock(q);
		}
		*qp = q;
		return 0;
	}

	q->rx = rx;
	q->bottoms = at(w, lay_bottoms(l, index));
	q->bell = at(w, lay_bell(l, index));
	q->lanes = at(w, lay_lane_in(l, index, 0));
	q->asks = at(w, lay_lane_ask(l, index, 0));
	q->rings = at(w, lay_ring(l, index, 0));
	q->epoch = LOAD(&rx->epoch);
	q->fcs = calloc(l->boards, sizeof(*q->fcs));
	q->wakes = calloc(l->boards, sizeof(*q->wakes));
	q->space_rung = calloc(l->boards, sizeof(*q->space_rung));
	q->heads = calloc(l->boards, sizeof(*q->heads));
	q->expect = calloc(l->boards, sizeof(*q->expect));
	if (!q->fcs || !q->wakes || !q->space_rung || !q->heads || !q->expect) {
		err = -ENOMEM;
		goto fail;
	}
	/* One receiver per queue; a dead one's claim is taken over. */
	uint32_t owner = 0;
	while (!__atomic_compare_exchange_n(&rx->owner, &owner, q->pid, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		if (owner == q->pid || !dead(owner)) {
			err = -EBUSY;
			goto fail;
		}
	}
	for (unsigned s = 0; s < l->boards; s++) {
		q->fcs[s] = at(w, lay_lane_fc(l, s, index));
		q->wakes[s] = at(w, lay_lane_wake(l, s, index));
		q->space_rung[s] = LOAD(&q->wakes[s]->space_bell);
		uint64_t b = LOAD(&q->bottoms[s]);
		uint64_t top = LOAD_ACQ(&q->lanes[s].top);
		if (b > top + 1 || (top > b && top - b > l->entries)) {
			STORE_REL(&rx->owner, 0);
			err = -SMQ_ECORRUPT;
			goto fail;
		}
		/* a receiver that died between its two bottom writes */
		if (LOAD(&q->fcs[s]->bottom) != b)
			STORE_REL(&q->fcs[s]->bottom, b);
		lane_expect(q, s, b);
	}
	q->cursor = LOAD(&rx->cursor) % l->boards;
	/* A receiver that died asleep left the epoch odd: wake it up. */
	q->sleep_epoch = LOAD(&rx->sleep_epoch);
	if (q->sleep_epoch & 1) {
		q->sleep_epoch++;
		STORE(&rx->sleep_epoch, q->sleep_epoch);
		for (unsigned s = 0; s < l->boards; s++)
			STORE(&q->wakes[s]->sleep_epoch, q->sleep_epoch);
	}
	*qp = q;
	return 0;
fail:
	free_queue(q);
	return err;
}

int smq_queue_close(struct smq_queue *q)
{
	if (!q)
		return -EINVAL;
	if (q->role == SMQ_RECEIVER) {
		uint32_t pid = q->pid;
		/* Only our own claim: after a re-init it may not be ours. */
		if (!smq_queue_stale(q))
			__atomic_compare_exchange_n(&q->rx->owner, &pid, 0, false,
						    __ATOMIC_RELEASE,
						    __ATOMIC_RELAXED);
	}
	free_queue(q);
	return 0;
}

int smq_queue_set_spin(struct smq_queue *q, unsigned spin_ns)
{
	if (!q)
		return -EINVAL;
	q->spin_ns = spin_ns;
	return 0;
}

/* Waits on a doorbell; or, where none can reach us, naps and lets the
 * caller look again. */
static int wait_bell(struct smq_window *w, uint32_t *bell, uint32_t seen,
		     const struct timespec *until)
{
	if (smq_must_poll(w)) {
		struct timespec nap = { 0, SMQ_POLL_NAP_NS };
		if (!smq_past(until))
			nanosleep(&nap, NULL);
		return 0;
	}
	return w->map.tp->wait(&w->map, bell, seen, until);
}

static void ring_bell(struct smq_window *w, uint32_t *bell)
{
	if (w->map.tp->ring)
		w->map.tp->ring(&w->map, bell);
}

/* A sleeper wakes by the caller's deadline, or after one slice to beat. */
static void sleep_slice(struct timespec *slice, const struct timespec *deadline)
{
	smq_deadline(slice, SLEEP_SLICE_MS);
	if (deadline && (deadline->tv_sec < slice->tv_sec ||
			 (deadline->tv_sec == slice->tv_sec &&
			  deadline->tv_nsec < slice->tv_nsec)))
		*slice = *deadline;
}

/* ---- sending ---- */

/* A sender that died after signing entry seq but before storing top left
 * a whole entry that the receiver takes (or has taken): carry on after
 * it, never write over it.  Its signature can only be there if that send
 * wrote it.  Reads one line across the bus: only when a sender opens or
 * takes the lane over from a dead one, never per message. */
static void lane_recover(struct smq_queue *q)
{
	const struct smq_layout *l = &q->w->lay;
	uint64_t seq = LOAD(&q->out->top);
	const struct smq_entry *e = (const void *)
		(q->ring + (seq & (l->entries - 1)) * l->stride);

	if (LOAD_ACQ(&e->signature) ==
	    smq_signature(q->epoch, q->index, q->w->board, seq)) {
		STORE_REL(&q->out->top, seq + 1);
		STORE_REL(&q->in->top, seq + 1);
	}
}

/* The lane lock serialises the senders of one board; it lives in that
 * board's own memory.  A holder that died is detected and replaced, and
 * what it left half done is recovered.  A stale handle never touches the
 * word: after a re-init it may be anything of the new layout.  A holder is
 * waited for until deadline (NULL: forever): a lock held past it by a live
 * process is a stuck or corrupted lane, not a reason to hang. */
static int lane_lock(struct smq_queue *q, const struct timespec *deadline)
{
	uint32_t cur = 0;
	unsigned spins = 0;

	if (smq_queue_stale(q))
		return -ESTALE;
	while (!__atomic_compare_exchange_n(&q->out->lock, &cur, q->tid, false,
					    __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED)) {
		if (++spins % 256 == 0) {
			if (smq_queue_stale(q))
				return -ESTALE;
			if (deadline && smq_past(deadline))
				return -ETIMEDOUT;
			if (dead(cur) &&
			    __atomic_compare_exchange_n(&q->out->lock, &cur,
							q->tid, false,
							__ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED)) {
				lane_recover(q);
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

/* One attempt, for the uncontended case: no stale check needed, the
 * caller checked it just before. */
static bool lane_trylock(struct smq_queue *q)
{
	uint32_t cur = 0;
	return __atomic_compare_exchange_n(&q->out->lock, &cur, q->tid, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void lane_unlock(struct smq_queue *q)
{
	STORE_REL(&q->out->lock, 0);
}

/* Room in the ring for sequence seq?  Reads the receiver's bottom only when
 * the copy we have says no. */
static bool room(struct smq_queue *q, uint64_t seq)
{
	uint32_t entries = q->w->lay.entries;

	if (seq - q->bottom_seen < entries)
		return true;
	q->bottom_seen = LOAD_ACQ(&q->fc->bottom);
	return seq - q->bottom_seen < entries;
}

/* Called with the lock held and the lane full.  Declares that we wait for
 * room (under the lock, so the declaration only grows), drops the lock and
 * sleeps until the receiver rings or the deadline passes.  Returns 0 with
 * the lock held again, or an error without it. */
static int wait_for_room(struct smq_queue *q, uint64_t seq,
			 const struct timespec *deadline)
{
	struct timespec lock_by;
	uint64_t spin_until = smq_now_ns() + DEFAULT_SPIN_NS;
	int err = 0;

	lane_unlock(q);
	while (smq_now_ns() < spin_until) {
		for (int i = 0; i < 64; i++) {
			if (room(q, seq))
				goto relock;
			cpu_relax();
		}
	}
	if ((err = lane_lock(q, deadline)))
		return err;
	if (LOAD(&q->out->top) != seq || room(q, seq))
		return 0;
	uint32_t bell = LOAD(&q->wake->space_bell);
	STORE(&q->ask->space_wait, (uint64_t)bell + 1);
	FENCE();
	if (room(q, seq))
		return 0;
	lane_unlock(q);
	smq_beat(q->w);
	struct timespec slice;
	sleep_slice(&slice, deadline);
	err = wait_bell(q->w, &q->wake->space_bell, bell, &slice);
	if (err == -ETIMEDOUT)
		err = 0;  /* the caller checks its own deadline */
	if (err)
		return err;
relock:
	/* past the caller's deadline, still take the lock to look once more */
	if (deadline && smq_past(deadline)) {
		smq_deadline(&lock_by, 1);
		deadline = &lock_by;
	}
	return lane_lock(q, deadline);
}

int smq_send(struct smq_queue *q, const void *data, size_t len, int timeout_ms)
{
	struct timespec deadline;
	bool timed = false;
	int err;

	if (!q || q->role != SMQ_SENDER || (len && !data))
		return -EINVAL;
	struct smq_window *w = q->w;
	const struct smq_layout *l = &w->lay;
	if (len > l->entry_size)
		return -EMSGSIZE;
	/* The lock is held for one copy at a time.  Uncontended it costs one
	 * exchange and no clock read; contended, waiting for it counts against
	 * the timeout (0 still allows a millisecond).  A stale handle never
	 * touches it. */
	if ((err = smq_queue_stale(q)))
		return err;
	if (!lane_trylock(q)) {
		if (timeout_ms > 0) {
			smq_deadline(&deadline, timeout_ms);
			timed = true;
		} else if (timeout_ms == 0) {
			smq_deadline(&deadline, 1);
		}
		err = lane_lock(q, timeout_ms < 0 ? NULL : &deadline);
		if (err)
			return err == -ETIMEDOUT && timeout_ms == 0 ? -EAGAIN : err;
	}
	uint64_t seq = LOAD(&q->out->top);
	while (!room(q, seq)) {
		if (q->bottom_seen == seq + 1) {
			/* A sender died between its signature and its top, and
			 * the receiver took that entry: carry on after it. */
			seq = q->bottom_seen;
			STORE_REL(&q->out->top, seq);
			STORE_REL(&q->in->top, seq);
			continue;
		}
		if (q->bottom_seen > seq || seq - q->bottom_seen > l->entries) {
			err = -SMQ_ECORRUPT;
			goto out;
		}
		if (timeout_ms == 0) {
			err = -EAGAIN;
			goto out;
		}
		if (!timed && timeout_ms > 0) {
			smq_deadline(&deadline, timeout_ms);
			timed = true;
		}
		STORE(&q->out->full_waits, LOAD(&q->out->full_waits) + 1);
		if ((err = wait_for_room(q, seq, timed ? &deadline : NULL)))
			return err;  /* the lock is not held */
		seq = LOAD(&q->out->top);
		if (!room(q, seq) && timed && smq_past(&deadline)) {
			err = -ETIMEDOUT;
			goto out;
		}
	}

	/* Payload, then header, then signature, then top: a receiver that sees
	 * the signature (or top) sees a whole entry. */
	uint8_t *slot = q->ring + (seq & (l->entries - 1)) * l->stride;
	struct smq_entry *e = (struct smq_entry *)slot;
	if (len)
		memcpy(slot + SMQ_ENTRY_HEADER, data, len);
	STORE(&e->size, (uint32_t)len);
	STORE(&e->sender, (uint16_t)w->board);
	if (w->map.wc)
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* A re-init may have begun during the copy: do not publish into it. */
	if ((err = smq_queue_stale(q)))
		goto out;
	STORE_REL(&e->signature, smq_signature(q->epoch, q->index, w->board, seq));
	STORE_REL(&q->out->top, seq + 1);
	STORE_REL(&q->in->top, seq + 1);
	STORE(&q->out->messages, LOAD(&q->out->messages) + 1);
	STORE(&q->out->bytes, LOAD(&q->out->bytes) + len);

	/* Notify only a sleeper, once per sleep (rule 5). */
	FENCE();
	uint64_t ep = LOAD(&q->wake->sleep_epoch);
	if ((ep & 1) && ep != q->rung_epoch) {
		q->rung_epoch = ep;
		STORE(&q->out->doorbells, LOAD(&q->out->doorbells) + 1);
		ring_bell(w, &q->bell->doorbell);
	}
	if ((seq & (HEARTBEAT_EVERY - 1)) == 0)
		smq_beat(w);
out:
	lane_unlock(q);
	return err;
}

/* ---- receiving ---- */

/* The first lane whose next entry carries its signature, starting after
 * the last one served (rotating fairness between sending boards, as seed
 * 002's groups).  One line read per lane, in the receiver's own memory,
 * and that line brings the entry's header and first bytes along. */
static int ready_lane(struct smq_queue *q)
{
	unsigned boards = q->w->lay.boards;
	unsigned s = q->cursor;

	for (unsigned i = 0; i < boards; i++, s = s + 1 == boards ? 0 : s + 1)
		if (LOAD_ACQ(&q->heads[s]->signature) == q->expect[s])
			return (int)s;
	return -1;
}

/* A lane whose top says an entry is there that does not verify.  Top is
 * stored after the signature, so a signature read again after top is
 * final.  We take an entry as soon as its signature is there, so our bottom
 * may be one past a top its sender is about to store.  The turn passes on,
 * so the other sending boards are served. */
static int bad_lane(struct smq_queue *q)
{
	const struct smq_layout *l = &q->w->lay;

	for (unsigned s = 0; s < l->boards; s++) {
		uint64_t bottom = LOAD(&q->bottoms[s]);
		uint64_t top = LOAD_ACQ(&q->lanes[s].top);
		int err = 0;
		if (top == bottom || top + 1 == bottom)
			continue;
		if (top < bottom || top - bottom > l->entries)
			err = -SMQ_ECORRUPT;
		else if (LOAD_ACQ(&q->heads[s]->signature) != q->expect[s])
			err = -SMQ_ESIGNATURE;
		if (err) {
			q->cursor = s + 1 == l->boards ? 0 : s + 1;
			STORE(&q->rx->cursor, q->cursor);
			return err;
		}
	}
	return 0;
}

static void set_sleep_epoch(struct smq_queue *q, uint64_t ep)
{
	q->sleep_epoch = ep;
	STORE(&q->rx->sleep_epoch, ep);
	for (unsigned s = 0; s < q->w->lay.boards; s++)
		STORE(&q->wakes[s]->sleep_epoch, ep);
}

/* Declare sleep in every sender's flow control, look once more, sleep on
 * the doorbell.  A sender stores the signature, fences, then reads the
 * epoch; we store the epoch, fence, then read the signature: one of us
 * sees the other. */
static int sleep_on_bell(struct smq_queue *q, const struct timespec *deadline)
{
	struct smq_window *w = q->w;
	uint32_t bell = LOAD(&q->bell->doorbell);
	int err = 0;

	if ((err = smq_queue_stale(q)))
		return err;
	set_sleep_epoch(q, q->sleep_epoch + 1);
	FENCE();
	if (ready_lane(q) < 0 && !(err = bad_lane(q))) {
		struct timespec slice;
		sleep_slice(&slice, deadline);
		STORE(&q->rx->sleeps, LOAD(&q->rx->sleeps) + 1);
		smq_beat(w);
		err = wait_bell(w, &q->bell->doorbell, bell, &slice);
		/* a re-init may have happened while we slept: write nothing */
		int stale = smq_queue_stale(q);
		if (stale)
			return stale;
		if (LOAD(&q->bell->doorbell) != bell)
			STORE(&q->rx->wakeups, LOAD(&q->rx->wakeups) + 1);
	}
	set_sleep_epoch(q, q->sleep_epoch + 1);
	return err;
}

/* Wait until some lane has a message; returns it, or a negative error. */
static int wait_for_message(struct smq_queue *q, int timeout_ms)
{
	struct timespec deadline;
	uint64_t spin_until = 0, now, next_beat;
	int s, err;

	if (timeout_ms >= 0)
		smq_deadline(&deadline, timeout_ms);
	now = smq_now_ns();
	next_beat = now + SLEEP_SLICE_MS * 1000000ull;
	if (!(q->flags & SMQ_SLEEP))
		spin_until = now + q->spin_ns;
	/* SMQ_SLEEP looks once between sleeps; the others poll a while */
	int polls = q->flags & SMQ_SLEEP ? 1 : 128;
	for (;;) {
		for (int i = 0; i < polls; i++) {
			if ((s = ready_lane(q)) >= 0)
				return s;
			cpu_relax();
		}
		if ((err = smq_queue_stale(q)) || (err = bad_lane(q)))
			return err;
		if (timeout_ms >= 0 && smq_past(&deadline))
			return timeout_ms == 0 ? -EAGAIN : -ETIMEDOUT;
		/* a busy-polling receiver is alive too */
		if ((now = smq_now_ns()) >= next_beat) {
			smq_beat(q->w);
			next_beat = now + SLEEP_SLICE_MS * 1000000ull;
		}
		if (q->flags & SMQ_POLL || now < spin_until)
			continue;
		err = sleep_on_bell(q, timeout_ms >= 0 ? &deadline : NULL);
		if (err && err != -ETIMEDOUT)
			return err;
	}
}

int smq_receive(struct smq_queue *q, void *buf, size_t cap, size_t *len,
		unsigned *sender, int timeout_ms)
{
	int s, err;

	if (!q || q->role != SMQ_RECEIVER || (cap && !buf))
		return -EINVAL;
	struct smq_window *w = q->w;
	const struct smq_layout *l = &w->lay;
	if ((err = smq_queue_stale(q)))
		return err;
	if ((s = ready_lane(q)) < 0 && (s = wait_for_message(q, timeout_ms)) < 0)
		return s;

	const struct smq_entry *e = q->heads[s];
	uint32_t next = s + 1 == (int)l->boards ? 0 : (uint32_t)s + 1;
	uint32_t size = LOAD(&e->size);
	if (size > l->entry_size || LOAD(&e->sender) != s) {
		q->cursor = next;
		STORE(&q->rx->cursor, next);
		return -SMQ_ECORRUPT;
	}
	if (len)
		*len = size;
	if (size > cap)
		return -EMSGSIZE;  /* it stays queued */
	if (size)
		memcpy(buf, (const uint8_t *)e + SMQ_ENTRY_HEADER, size);
	if (sender)
		*sender = (unsigned)s;

	/* Our bottom first (local), then the sender's copy (across the bus). */
	uint64_t bottom = LOAD(&q->bottoms[s]) + 1;
	STORE_REL(&q->bottoms[s], bottom);
	STORE_REL(&q->fcs[s]->bottom, bottom);
	lane_expect(q, (unsigned)s, bottom);
	q->cursor = next;
	STORE(&q->rx->cursor, next);
	uint64_t n = LOAD(&q->rx->messages) + 1;
	STORE(&q->rx->messages, n);
	STORE(&q->rx->bytes, LOAD(&q->rx->bytes) + size);

	/* Ring a sender that waits for room, once per declaration. */
	FENCE();
	uint64_t want = LOAD(&q->asks[s].space_wait);
	if (want == (uint64_t)q->space_rung[s] + 1) {
		q->space_rung[s]++;
		ring_bell(w, &q->wakes[s]->space_bell);
	}
	if ((n & (HEARTBEAT_EVERY - 1)) == 0)
		smq_beat(w);
	return 0;
}
