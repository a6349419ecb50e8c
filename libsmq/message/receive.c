/* Receiving.  A message is taken by its signature, which the receiver
 * reads in its own memory; the same line brings the entry's header and
 * first bytes.  smq_peek() finds it, smq_commit() takes it: only the take
 * writes, and only inside the in-flight mark. */
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include "queue.h"

/* Asks the processor to bring the first two lines (the header and the
 * first bytes of the payload) of lane s's n entries from seq into its
 * cache, where they are read next: our own memory, so no read crosses the
 * bus.  A burst's entries then miss together rather than one after the
 * other, and the next entries' misses overlap the caller's work on this
 * one.  A hint: a line the sender is still writing is only fetched again. */
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

/* How many entries past a take are fetched ahead: a few, and never more
 * than half the ring, the half the sender may be writing. */
#define AHEAD 4
static inline unsigned ahead(const struct smq_queue *q)
{
	return q->entries / 2 < AHEAD ? q->entries / 2 : AHEAD;
}

bool smq_queue_ready(struct smq_queue *q)
{
	return q->peeked >= 0 || smq_ready_lane(q) >= 0;
}

/* The next message: its lane, with its size and check read after its
 * signature matched, and the notice read after those (a stale handle's
 * signature may match too).  The lane is held as peeked.  A header out of
 * bounds is damage: -SMQ_ECORRUPT, the message left (without checksums
 * nothing says which of its fields is wrong), or, with checksums, taken
 * off as one that fails its check. */
static int next_message(struct smq_queue *q, int timeout_ms,
			const struct smq_entry **ep, uint32_t *sizep,
			uint32_t *checkp)
{
	int s, err;

	unsigned which;
	if ((s = q->peeked) < 0 && (s = smq_ready_lane(q)) < 0 &&
	    (s = smq_wait_any(&q, 1, timeout_ms, &which)) < 0)
		return s;
	smq_consume(q->w->map.order);
	TEST_HOOK(SMQ_HOOK_PEEK);
	const struct smq_entry *e = q->heads[s];
	uint32_t size = LOAD(&e->size);
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
		smq_pass_turn(q, (unsigned)s);
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
static int take(struct smq_queue *q, unsigned s, unsigned n, uint64_t bytes,
		bool corrupt)
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
	prefetch_entries(q, s, bottom, ahead(q));
	smq_pass_turn(q, s);
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
		smq_rx_beat(q, 0);
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
	const struct smq_entry *e;
	uint32_t size, check;
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
	const struct smq_entry *e;
	uint32_t size, check;
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
	/* checked as it is copied: what was checked is what the caller gets */
	if (q->checksum) {
		if (smq_entry_check(size, q->expect[s], buf, payload, size) !=
		    check)
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
		q->entries - 1,
		smq_signature_key(q->epoch, q->index, q->lane_board[s]),
		q->entry_size, q->checksum, q->w->map.order };
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
		if (smq_entry_check(size, sig, buf, payload, size) != check)
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

	if (most > ahead(q))  /* the take before fetched the first ones */
		prefetch_entries(q, s, bottom + ahead(q), most - ahead(q));
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
		      int timeout_ms, size_t *lens, unsigned *senders)
{
	size_t len;
	unsigned sender, which;
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
	int s = q->peeked >= 0 ? q->peeked : smq_ready_lane(q);
	if (s < 0 && (s = smq_wait_any(&q, 1, timeout_ms, &which)) < 0)
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
	const struct smq_entry *e;
	uint32_t size, check;
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
	if (q->checksum &&
	    smq_entry_check(size, q->expect[s], bufs[0].iov_base, payload,
			    size) != check) {
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
