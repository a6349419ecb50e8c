/* Receiving.  A message is taken by its signature, which the receiver
 * reads in its own memory; the same line brings the entry's header and
 * first bytes.  smq_peek() finds it, smq_commit() takes it: only the take
 * writes, and only inside the in-flight mark. */
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include "queue.h"

/* The first lane whose next entry carries its signature, starting after
 * the last one served (rotating fairness between sending boards, as the
 * SCI message-passing layer's groups do).  One line read per lane. */
static int ready_lane(struct smq_queue *q)
{
	unsigned lanes = q->nlanes;
	unsigned k = q->cursor;

	for (unsigned i = 0; i < lanes; i++, k = k + 1 == lanes ? 0 : k + 1)
		if (LOAD(&q->heads[k]->signature) == q->expect[k])
			return (int)k;
	return -1;
}

/* Asks the processor to bring the first two lines (the header and the
 * first bytes of the payload) of lane s's n entries from seq into its
 * cache, where they are read next: our own memory, so no read crosses the
 * bus.  A burst's entries then miss together rather than one after the
 * other.  A take fetches nothing past itself: in a busy-polled stream
 * the entries past it are most often ones the sender has yet to write,
 * and fetching their lines takes them from it, whose barrier then waits
 * to take them back (without the fetch, 64-byte single calls through 256
 * entries moved 1.114x as many, doc/message-path.md). */
static inline void prefetch_entries(const struct smq_queue *q, unsigned s,
				    uint64_t seq, unsigned n)
{
	const uint8_t *lane = q->rings + (uint64_t)s * q->entries * q->stride;

	for (unsigned i = 0; i < n; i++) {
		const uint8_t *e = lane + ((seq + i) & (q->entries - 1)) *
				   q->stride;
		__builtin_prefetch(e);
		__builtin_prefetch(e + 64);
	}
}

/* A message's payload copied to dst and its check summed (feature
 * checksum): what was checked is what the caller gets.  Up to
 * SUM_AFTER_COPY bytes the copy comes first and the sum reads it back
 * from our cache; summed as it was copied, a checked stream of 64-byte
 * messages moved 0.71x as many (its receiver waited longer for the
 * payload's lines, doc/message-path.md).  Longer ones are summed as they
 * are copied, which reads each byte once (at 64 KiB copying first was
 * slower). */
#define SUM_AFTER_COPY 256
static inline uint32_t copy_checked(uint32_t size, uint64_t sig, void *dst,
				    const uint8_t *payload)
{
	if (size <= SUM_AFTER_COPY) {
		smq_copy(dst, payload, size);
		return smq_entry_check(size, sig, NULL, dst, size);
	}
	return smq_entry_check(size, sig, dst, payload, size);
}

bool smq_queue_ready(struct smq_queue *q)
{
	return q->peeked >= 0 || ready_lane(q) >= 0;
}

static void pass_turn(struct smq_queue *q, unsigned k)
{
	q->cursor = k + 1 == q->nlanes ? 0 : k + 1;
}

/* A lane whose top says an entry is there that does not verify.  The
 * signature at our bottom says by itself whether the lane is empty (the
 * one the slot got a lap before, or 0 in a ring's first lap) or holds the
 * next message: only another value needs the lane's top, which the sender
 * writes at every message, so a receiver that polls an empty queue never
 * pulls that line from the sender.  Top is stored after the signature, so
 * a signature read again after top is final.  We take an entry as soon as
 * its signature is there, so our bottom may be past a top its sender is
 * about to store: by one entry, or by a burst's.  Reads only: the turn passes on in our handle, so the
 * other sending boards are served. */
static int bad_lane(struct smq_queue *q, bool all)
{
	for (unsigned k = 0; k < q->nlanes; k++) {
		uint64_t sig = LOAD(&q->heads[k]->signature);
		TEST_HOOK(SMQ_HOOK_LANE_LOOK);
		uint64_t bottom = LOAD(&q->bottoms[k]);
		/* what the slot holds while empty, computed here, off the
		 * path of every take */
		uint64_t empty = bottom >= q->entries
				 ? smq_signature_at(q->keys[k],
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
			pass_turn(q, k);
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

/* The receiver's own heartbeat, and whether it waits in a call (then it
 * beats at least once a sleep slice, so that an observer of any host can
 * tell a receiver that died waiting); the board's too.  Inside the mark. */
static void rx_beat(struct smq_queue *q, uint32_t waiting)
{
	STORE(&q->rx_info->beats, LOAD(&q->rx_info->beats) + 1);
	if (LOAD(&q->rx_info->waiting) != waiting)
		STORE(&q->rx_info->waiting, waiting);
	smq_beat(q->w);
}

static void rx_beat_outside(struct smq_queue *q, uint32_t waiting)
{
	if (!smq_queue_enter(q)) {
		rx_beat(q, waiting);
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
		can_sleep &= arm_read(qs[i]) && !qs[i]->nap;
	smq_consume(order);
	TEST_HOOK(SMQ_HOOK_ARMED);
	/* the look after arming: a message that landed between our last
	 * look and the arming rang no doorbell (the sender saw us awake) */
	for (unsigned i = 0; i < n && !found; i++)
		if (ready_lane(qs[i]) >= 0 || (err = bad_lane(qs[i], false))) {
			found = true;
			*which = i;
		}
	if (!found) {
		for (unsigned i = 0; i < n; i++) {
			STORE(&qs[i]->rx->sleeps, LOAD(&qs[i]->rx->sleeps) + 1);
			rx_beat(qs[i], 1);
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
				if ((s = ready_lane(qs[j])) >= 0) {
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
				if ((s = ready_lane(qs[j])) >= 0) {
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

/* The lane whose turn it is to be taken from (the one peeked, or the
 * first ready), waiting for one as smq_wait_any() says. */
static int next_lane(struct smq_queue *q, int timeout_ms)
{
	unsigned which;
	int s;

	if ((s = q->peeked) >= 0)
		return s;
	if ((s = ready_lane(q)) >= 0)
		return s;
	return smq_wait_any(&q, 1, timeout_ms, &which);
}

/* The next message: its lane, with its size and check read after its
 * signature matched, and the notice read after those (a stale handle's
 * signature may match too).  The lane is held as peeked.  A header out of
 * bounds is damage: -SMQ_ECORRUPT, the message left (without checksums
 * nothing says which of its fields is wrong), or, with checksums, taken
 * off as one that fails its check.  Inline, as take() is, into every
 * call that receives: one message is next_message(), a copy and a take,
 * and as calls of their own their prologues and the compiler's split of
 * take() came to about 60 of the 350 instructions a 64-byte receive ran
 * (callgrind, one process). */
static inline __attribute__((always_inline)) int
next_message(struct smq_queue *q, int timeout_ms, const struct smq_entry **ep,
	     uint32_t *sizep, uint32_t *checkp)
{
	int s, err;

	if ((s = next_lane(q, timeout_ms)) < 0)
		return s;
	smq_consume(q->w->map.order);
	TEST_HOOK(SMQ_HOOK_PEEK);
	const struct smq_entry *e = q->heads[s];
	uint32_t size = LOAD(&e->size);
	/* The signature's line brought the header and the payload's first
	 * bytes; the rest is asked for now, not when the copy or the check
	 * reaches it: the wait for a line the sender just wrote starts a
	 * few dozen instructions earlier (a checked 64-byte stream moved
	 * 1.25x as many, doc/message-path.md).  Our own memory, a hint. */
	if (size > SMQ_LINE - SMQ_ENTRY_HEADER && size <= q->entry_size)
		__builtin_prefetch((const uint8_t *)e + SMQ_LINE);
	uint32_t check = LOAD(&e->check);
	smq_consume(q->w->map.order);
	if ((err = smq_queue_stale(q))) {
		q->peeked = -1;
		return err;
	}
	q->peeked = s;
	if (size > q->entry_size || (check && !q->checksum)) {
		if (q->checksum)
			return -SMQ_EPAYLOAD;  /* the caller takes it off */
		pass_turn(q, (unsigned)s);
		q->peeked = -1;
		return -SMQ_ECORRUPT;
	}
	*ep = e;
	*sizep = size;
	*checkp = check;
	return s;
}

/* Takes n entries at lane s's head off the ring (bytes their payloads):
 * our bottom (local), then the sender's copy (across the bus), once for
 * the lot; rings a sender that waits for room.  A message that failed its
 * check is counted apart from those handed over. */
static inline __attribute__((always_inline)) int
take(struct smq_queue *q, unsigned s, unsigned n, uint64_t bytes, bool corrupt)
{
	int err;

	q->peeked = -1;
	if ((err = smq_queue_enter(q)))
		return err;
	TEST_HOOK(SMQ_HOOK_COMMIT);
	struct smq_window *w = q->w;
	uint64_t bottom = LOAD(&q->bottoms[s]) + n;
	STORE_REL(&q->bottoms[s], bottom);
	smq_lane_expect(q, s, bottom);
	pass_turn(q, s);
	STORE(&q->rx->cursor, q->cursor);
	uint64_t before = LOAD(&q->rx->messages);
	uint64_t m = before + (corrupt ? 0 : n);
	if (corrupt) {
		STORE(&q->rx_info->corrupt, LOAD(&q->rx_info->corrupt) + n);
		smq_journal(w, SMQ_JOURNAL_DAMAGED, SMQ_RECEIVER, q->index,
			    q->epoch, q->lane_board[s], bottom - n);
	} else {
		STORE(&q->rx->messages, m);
		STORE(&q->rx->bytes, LOAD(&q->rx->bytes) + bytes);
	}
	/* our bottom before the sender's request: it stores the request, then
	 * reads our bottom across the bus */
	smq_dekker(w->map.order);
	uint64_t want = LOAD(&q->asks[s].space_wait);
	if (want && want == (uint64_t)q->space_rung[s] + 1) {
		struct smq_bell_addr a;
		struct smq_far word = smq_far_offset(q->wakes[s],
			offsetof(struct smq_lane_wake, space_bell));
		q->space_rung[s]++;
		memcpy(&a, &q->asks[s].bell, sizeof(a));
		/* the word moves with our count whether or not we can ring: a
		 * sender that naps sees it, and the next request matches */
		if (smq_can_ring(q->ring_kinds, w->boot, &a))
			w->map.tp->ring(&w->map, &a, word, q->space_rung[s]);
		else
			FAR_STORE_WORD(word, uint32_t, q->space_rung[s]);
	}
	TEST_HOOK(SMQ_HOOK_COMMIT_FAR);
	FAR_STORE_REL(q->fcs[s], struct smq_lane_fc, bottom, bottom);
	if (before / HEARTBEAT_EVERY != m / HEARTBEAT_EVERY)
		rx_beat(q, 0);
	smq_queue_leave(q);
	return 0;
}

/* A message that failed its check (feature checksum): taken off the ring,
 * never handed over; says whose it was. */
static int refuse(struct smq_queue *q, unsigned s, uint32_t size,
		  size_t *len, unsigned *sender)
{
	int err = take(q, s, 1, 0, true);

	if (len)
		*len = size <= q->entry_size ? size : 0;
	if (sender)
		*sender = q->lane_board[s];
	return err ? err : -SMQ_EPAYLOAD;
}

int smq_peek(struct smq_queue *q, const void **data, size_t *len,
	     unsigned *sender, int timeout_ms)
{
	const struct smq_entry *e = NULL;
	uint32_t size = 0, check = 0;
	int s;

	if (q && smq_inherited(q->w))
		return -EBADF;
	if (!q || q->role != SMQ_RECEIVER || !data)
		return -EINVAL;
	s = next_message(q, timeout_ms, &e, &size, &check);
	if (s == -SMQ_EPAYLOAD)
		return refuse(q, (unsigned)q->peeked, LOAD(&q->heads[q->peeked]->size),
			      len, sender);
	if (s < 0)
		return s;
	const uint8_t *payload = (const uint8_t *)e + SMQ_ENTRY_HEADER;
	SMQ_TOUCH(payload, size, 0);  /* the caller reads it */
	/* the ring is in our own memory: the check reads it there */
	if (q->checksum &&
	    smq_entry_check(size, q->expect[s], NULL, payload, size) != check)
		return refuse(q, (unsigned)s, size, len, sender);
	*data = payload;
	if (len)
		*len = size;
	if (sender)
		*sender = q->lane_board[s];
	return 0;
}

int smq_commit(struct smq_queue *q)
{
	if (q && smq_inherited(q->w))
		return -EBADF;
	if (!q || q->role != SMQ_RECEIVER)
		return -EINVAL;
	if (q->peeked < 0)
		return -ENOMSG;
	return take(q, (unsigned)q->peeked, 1,
		    LOAD(&q->heads[q->peeked]->size), false);
}

int smq_receive(struct smq_queue *q, void *buf, size_t cap, size_t *len,
		unsigned *sender, int timeout_ms)
{
	const struct smq_entry *e = NULL;
	uint32_t size = 0, check = 0;
	int s;

	if (q && smq_inherited(q->w))
		return -EBADF;
	if (!q || q->role != SMQ_RECEIVER || (cap && !buf))
		return -EINVAL;
	s = next_message(q, timeout_ms, &e, &size, &check);
	if (s == -SMQ_EPAYLOAD)
		return refuse(q, (unsigned)q->peeked, LOAD(&q->heads[q->peeked]->size),
			      len, sender);
	if (s < 0)
		return s;
	if (len)
		*len = size;
	if (sender)
		*sender = q->lane_board[s];
	if (size > cap)
		return -EMSGSIZE;  /* it stays queued */
	const uint8_t *payload = (const uint8_t *)e + SMQ_ENTRY_HEADER;
	SMQ_TOUCH(payload, size, 0);
	/* checked in the caller's copy: what was checked is what it gets */
	if (q->checksum) {
		if (copy_checked(size, q->expect[s], buf, payload) != check)
			return refuse(q, (unsigned)s, size, len, sender);
	} else if (size) {
		smq_copy(buf, payload, size);
	}
	return take(q, (unsigned)s, 1, size, false);
}

/* Lane s as a burst reads it: its ring, shape and signature key, read
 * from the handle once (every copy out may alias the handle for the
 * compiler). */
struct lane_r {
	const uint8_t *ring;
	uint64_t stride, mask, key;
	uint32_t entry_size;
	bool checksum;
	const struct smq_order *order;
};

static inline struct lane_r lane_r(const struct smq_queue *q, unsigned s)
{
	return (struct lane_r){
		q->rings + (uint64_t)s * q->entries * q->stride, q->stride,
		q->entries - 1, q->keys[s], q->entry_size, q->checksum,
		q->w->map.order };
}

/* Entry seq of the lane, if it is there, whole and fits buf: copied
 * (checked) out, its size returned; else -1 and nothing said (a receive
 * that meets it first says what it is). */
static inline int64_t burst_next(const struct lane_r *l, uint64_t seq,
				 void *buf, size_t cap)
{
	const struct smq_entry *e = (const void *)(l->ring +
						   (seq & l->mask) * l->stride);
	uint64_t sig = smq_signature_at(l->key, seq);

	if (LOAD(&e->signature) != sig)
		return -1;
	smq_consume(l->order);
	uint32_t size = LOAD(&e->size), check = LOAD(&e->check);
	if (size > l->entry_size || size > cap || (check && !l->checksum))
		return -1;
	const uint8_t *payload = (const uint8_t *)e + SMQ_ENTRY_HEADER;
	SMQ_TOUCH(payload, size, 0);
	if (l->checksum) {
		if (copy_checked(size, sig, buf, payload) != check)
			return -1;
	} else if (size) {
		smq_copy(buf, payload, size);
	}
	return size;
}

/* Copies out the entries of lane s from its bottom on while each is
 * there, whole and fits its buffer, up to most; their sizes in lens and
 * their sum in *bytes.  How many: 0 when the first is not (a receive of
 * it alone says why).  Takes nothing. */
static unsigned burst_copy(struct smq_queue *q, unsigned s, unsigned most,
			   const struct iovec *bufs, size_t *lens,
			   uint64_t *bytes)
{
	struct lane_r l = lane_r(q, s);
	uint64_t bottom = LOAD(&q->bottoms[s]), sum = 0;
	unsigned k = 0;

	/* all of them, so that their misses overlap */
	prefetch_entries(q, s, bottom, most);
	for (; k < most; k++) {
		int64_t got = burst_next(&l, bottom + k, bufs[k].iov_base,
					 bufs[k].iov_len);
		if (got < 0)
			break;
		lens[k] = (size_t)got;
		sum += (uint64_t)got;
	}
	*bytes = sum;
	return k;
}

/* Up to n messages of the lane whose turn it is, taken with one update of
 * bottom: the first waited for as smq_receive() waits, the others only if
 * they are there.  A sending board's messages come in its order; the turn
 * then passes to the next board.  The lane's entries are copied out in one
 * pass; a first entry that is not whole or does not fit is met as
 * smq_receive() meets it, to say what it is. */
int smq_receive_burst(struct smq_queue *q, struct iovec *bufs, unsigned n,
		      size_t *lens, unsigned *senders, int timeout_ms)
{
	size_t len;
	unsigned sender;
	int err;
	bool bad = false;

	if (q && smq_inherited(q->w))
		return -EBADF;
	if (!q || q->role != SMQ_RECEIVER || !n || !bufs || !lens)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		bad |= bufs[i].iov_len && !bufs[i].iov_base;
	if (bad)
		return -EINVAL;
	int s = next_lane(q, timeout_ms);
	if (s < 0)
		return s;
	smq_consume(q->w->map.order);
	TEST_HOOK(SMQ_HOOK_PEEK);
	/* What a stale handle copies out (its signatures may match too, its
	 * bounds are its own) is never handed over: the take's mark reads
	 * the notice, and the call fails with -ESTALE. */
	uint64_t bytes;
	unsigned most = n < q->entries ? n : q->entries;
	unsigned k = burst_copy(q, (unsigned)s, most, bufs, lens, &bytes);
	if (k) {
		for (unsigned i = 0; senders && i < k; i++)
			senders[i] = q->lane_board[s];
		if ((err = take(q, (unsigned)s, k, bytes, false)))
			return err;
		return (int)k;
	}
	/* the first, as one receive, to say what it is */
	const struct smq_entry *e = NULL;
	uint32_t size = 0, check = 0;
	s = next_message(q, timeout_ms, &e, &size, &check);
	if (s == -SMQ_EPAYLOAD) {
		err = refuse(q, (unsigned)q->peeked,
			     LOAD(&q->heads[q->peeked]->size), &len, &sender);
		lens[0] = len;
		if (senders)
			senders[0] = sender;
		return err;
	}
	if (s < 0)
		return s;
	lens[0] = size;
	if (senders)
		senders[0] = q->lane_board[s];
	if (size > bufs[0].iov_len)
		return -EMSGSIZE;  /* it stays queued */
	const uint8_t *payload = (const uint8_t *)e + SMQ_ENTRY_HEADER;
	SMQ_TOUCH(payload, size, 0);
	if (q->checksum && copy_checked(size, q->expect[s], bufs[0].iov_base,
					payload) != check) {
		err = refuse(q, (unsigned)s, size, &len, &sender);
		lens[0] = len;
		return err;
	}
	/* refused by the copy above, whole and fitting here: it changed
	 * meanwhile (damage); taken as smq_receive() takes it */
	if (size && !q->checksum)
		smq_copy(bufs[0].iov_base, payload, size);
	if ((err = take(q, (unsigned)s, 1, size, false)))
		return err;
	return 1;
}
