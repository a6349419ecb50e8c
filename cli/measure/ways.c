/* How a measurement moves its messages (see session.h): copied by
 * smq_send and smq_receive, many per call by their bursts, or written and
 * read in place (a loan; smq_peek and smq_commit); and the application's
 * work on each, the same whichever way it moves: with verify, every byte
 * made by the sender and checked by the receiver. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif
#include "session.h"

/* ---- the payload ---- */

/* Word i of message seq: its own base, then a step per word, so that a
 * word out of place or of another message shows.  Made as it is stored,
 * never read back: a loan over PCI is write-only memory.  Four words at a
 * time in two vectors of two (GCC's and clang's vector extension, SSE2 on
 * x86-64): the work of a quick application, a few times faster than a
 * word at a time, so that the figures are those of moving the bytes. */
#define PATTERN_MUL 0x9e3779b97f4a7c15ull
#define PATTERN_STEP 0xd1b54a32d192ed03ull
typedef uint64_t words2 __attribute__((vector_size(16)));

static inline uint64_t pattern_word(uint64_t seq, size_t i)
{
	return (seq + 1) * PATTERN_MUL + i * PATTERN_STEP;
}

/* Words i to i + 3 of message seq's pattern in a and b; step: 4 words. */
static inline void pattern_four(uint64_t seq, size_t i, words2 *a, words2 *b,
				words2 *step)
{
	uint64_t w = pattern_word(seq, i);

	*a = (words2){ w, w + PATTERN_STEP };
	*b = (words2){ w + 2 * PATTERN_STEP, w + 3 * PATTERN_STEP };
	*step = (words2){ 4 * PATTERN_STEP, 4 * PATTERN_STEP };
}

/* Bytes [off, off + n) of message seq's pattern, off a multiple of 8. */
static void pattern_at(uint8_t *dst, size_t off, size_t n, uint64_t seq)
{
	words2 a, b, step;
	size_t i = 0;

	pattern_four(seq, off / 8, &a, &b, &step);
	for (; i + 32 <= n; i += 32, a += step, b += step) {
		memcpy(dst + i, &a, 16);
		memcpy(dst + i + 16, &b, 16);
	}
	uint64_t w = pattern_word(seq, (off + i) / 8);
	for (; i + 8 <= n; i += 8, w += PATTERN_STEP)
		memcpy(dst + i, &w, 8);
	if (i < n)
		memcpy(dst + i, &w, n - i);
}

/* Message seq's pattern written into a loan, size bytes at dst: by
 * ordinary stores, or (stream, x86-64) its whole lines by streaming
 * stores, which write a line without reading it first; the line the
 * header shares and a last partial line take ordinary stores. */
static void pattern_stream(uint8_t *dst, size_t size, uint64_t seq,
			   bool stream)
{
	size_t i = 0;
#if defined(__x86_64__)
	size_t head = (size_t)(-(uintptr_t)dst & 63);
	if (stream && head < size) {
		size_t end = head + ((size - head) & ~(size_t)63);
		words2 a, b, step;

		pattern_at(dst, 0, head, seq);
		pattern_four(seq, head / 8, &a, &b, &step);
		for (i = head; i < end; i += 32, a += step, b += step) {
			_mm_stream_si128((__m128i *)(dst + i), (__m128i)a);
			_mm_stream_si128((__m128i *)(dst + i + 16), (__m128i)b);
		}
		/* before the submit's stores, which order only ordinary
		 * ones */
		_mm_sfence();
	}
#else
	(void)stream;
#endif
	if (i < size)
		pattern_at(dst + i, i, size - i, seq);
}

void payload_fill(void *dst, size_t size, uint64_t seq, bool verify)
{
	if (verify)
		pattern_at(dst, 0, size, seq);
	else
		session_fill(dst, size, seq);
}

bool payload_ok(const void *src, size_t len, size_t size, uint64_t seq,
		bool verify)
{
	const uint8_t *p = src;

	if (len != size)
		return false;
	if (!verify) {
		uint64_t got = seq;
		if (size >= sizeof(got))
			memcpy(&got, p, sizeof(got));
		return got == seq;
	}
	words2 a, b, step, x, y, d = { 0, 0 };
	size_t i = 0;
	pattern_four(seq, 0, &a, &b, &step);
	for (; i + 32 <= size; i += 32, a += step, b += step) {
		memcpy(&x, p + i, 16);
		memcpy(&y, p + i + 16, 16);
		d |= (x ^ a) | (y ^ b);
	}
	uint64_t w = pattern_word(seq, i / 8), diff = d[0] | d[1], v;
	for (; i + 8 <= size; i += 8, w += PATTERN_STEP) {
		memcpy(&v, p + i, 8);
		diff |= v ^ w;
	}
	if (i < size) {
		v = w;
		memcpy(&v, p + i, size - i);
		diff |= v ^ w;
	}
	return !diff;
}

/* ---- buffers ---- */

int way_bufs_get(struct way_bufs *b, const struct how *h, size_t size)
{
	memset(b, 0, sizeof(*b));
	b->n = h->burst > 1 ? h->burst : 1;
	/* room for a control message too, which ends a round */
	b->each = size > sizeof(struct session_msg) ? size
						    : sizeof(struct session_msg);
	b->each = (b->each + 63) & ~(size_t)63;
	if (posix_memalign((void **)&b->mem, 64, b->n * b->each) ||
	    !(b->iov = calloc(b->n, sizeof(*b->iov))) ||
	    !(b->in = calloc(b->n, sizeof(*b->in))) ||
	    !(b->lens = calloc(b->n, sizeof(*b->lens)))) {
		way_bufs_put(b);
		return -ENOMEM;
	}
	memset(b->mem, 0, b->n * b->each);  /* faulted in before timing */
	for (unsigned i = 0; i < b->n; i++)
		b->in[i] = (struct iovec){ b->mem + i * b->each, b->each };
	return 0;
}

void way_bufs_put(struct way_bufs *b)
{
	free(b->mem);
	free(b->iov);
	free(b->in);
	free(b->lens);
	memset(b, 0, sizeof(*b));
}

/* ---- sending ---- */

/* Which way to write a loan of size bytes.  Which is quicker depends on
 * where the receiver's cache is: an ordinary store to a line the receiver
 * read last fetches that line from the receiver's cache first, cheap when
 * the two CPUs share a cache and several times a streaming store's cost
 * when they do not (or when the hypervisor moves one).  So a large loan
 * is timed, and every so often written the other way, one message: the
 * quicker way is kept, and the tries grow rarer while they lose.  A small
 * message stays in the cache and is written by ordinary stores. */
#define STREAM_FROM 1024
#define TRY_FIRST 16
#define TRY_MOST 1024
static bool loan_streams(const struct loan_way *lw, bool *trial)
{
#if defined(__x86_64__)
	*trial = lw->cost > 0 && lw->since >= lw->every;
	return lw->stream != *trial;
#else
	(void)lw;
	*trial = false;
	return false;
#endif
}

/* ...and what loan took ns for size bytes, written that way, teaches */
static void loan_learn(struct loan_way *lw, size_t size, bool trial,
		       uint64_t ns)
{
	double c = (double)ns / (double)size;

	if (!trial) {
		lw->cost = lw->cost > 0 ? lw->cost + (c - lw->cost) / 8 : c;
		if (!lw->every)
			lw->every = TRY_FIRST;
		lw->since++;
		return;
	}
	lw->since = 0;
	if (c < 0.9 * lw->cost) {
		lw->stream = !lw->stream;
		lw->cost = c;
		lw->every = TRY_FIRST;
	} else if (lw->every < TRY_MOST) {
		lw->every *= 2;
	}
}

/* One message written in place.  On a window with checksums the bytes go
 * through smq_loan_write, which sums them as it copies: made a piece at a
 * time in a buffer that stays in the cache. */
static int loan_send(struct session *s, size_t size, uint64_t seq)
{
	enum { PIECE = 4096 };
	uint8_t piece[PIECE];
	void *p;
	int err;

	MEASURE_WAIT(err, smq_loan(s->tx, size, &p, s->timeout_ms));
	if (err)
		return err;
	if (!s->checksum) {
		if (size < STREAM_FROM) {
			pattern_at(p, 0, size, seq);
			return smq_loan_submit(s->tx, size);
		}
		if (s->loan_way.size != size)
			s->loan_way = (struct loan_way){ .size = size };
		bool trial, stream = loan_streams(&s->loan_way, &trial);
		uint64_t t0 = now_ns();
		pattern_stream(p, size, seq, stream);
		if ((err = smq_loan_submit(s->tx, size)))
			return err;
		loan_learn(&s->loan_way, size, trial, now_ns() - t0);
		return 0;
	}
	for (size_t off = 0; off < size && !err; off += PIECE) {
		size_t n = size - off < PIECE ? size - off : PIECE;
		pattern_at(piece, off, n, seq);
		err = smq_loan_write(s->tx, off, piece, n);
	}
	if (err) {
		smq_loan_abort(s->tx);
		return err;
	}
	return smq_loan_submit(s->tx, size);
}

int way_send(struct session *s, const struct how *h, struct way_bufs *b,
	     size_t size, uint64_t seq, unsigned n)
{
	int err = 0;

	if (h->zero_copy) {
		for (unsigned i = 0; i < n && !err; i++)
			err = loan_send(s, size, seq + i);
		return err;
	}
	if (h->burst <= 1) {
		for (unsigned i = 0; i < n && !err; i++) {
			payload_fill(b->mem, size, seq + i, h->verify);
			MEASURE_WAIT(err, smq_send(s->tx, b->mem, size,
						   s->timeout_ms));
		}
		return err;
	}
	for (unsigned i = 0; i < n; i++) {
		uint8_t *m = b->mem + i * b->each;
		payload_fill(m, size, seq + i, h->verify);
		b->iov[i] = (struct iovec){ m, size };
	}
	/* as many as the ring has room for; then the rest */
	for (unsigned done = 0; done < n;) {
		int k;
		MEASURE_WAIT(k, smq_send_burst(s->tx, b->iov + done, n - done,
					       s->timeout_ms));
		if (k < 0)
			return k;
		done += (unsigned)k;
	}
	return 0;
}

/* ---- receiving ---- */

/* One message found at data, len bytes: the round's stop, or checked as
 * message seq.  true: it was the stop. */
static inline bool take_one(struct session *s, const struct how *h,
		     const void *data, size_t len, size_t size, uint64_t seq,
		     struct way_got *got)
{
	if (len == sizeof(struct session_msg) &&
	    is_ctl(data, len, s->id, OP_STOP)) {
		got->stop = true;
		return true;
	}
	/* the pattern of every byte out of line; seq alone here, as the bare
	 * ring's reader looks at it */
	bool verify = h->verify || h->zero_copy;
	uint64_t first = seq;
	if (len >= sizeof(first))
		memcpy(&first, data, sizeof(first));
	if (verify ? !payload_ok(data, len, size, seq, true)
		   : len != size || first != seq)
		got->wrong++;
	got->n++;
	return false;
}

static int peek_receive(struct session *s, const struct how *h,
			size_t size, uint64_t seq, int timeout_ms,
			struct way_got *got)
{
	const void *data;
	size_t len;
	int err;

	MEASURE_WAIT(err, smq_peek(s->rx, &data, &len, NULL, timeout_ms));

	if (err)
		return err;
	take_one(s, h, data, len, size, seq, got);
	return smq_commit(s->rx);
}

/* Takes one message or a burst; err: what the call returned. */
static int receive_call(struct session *s, const struct how *h,
			struct way_bufs *b, size_t size, uint64_t seq,
			unsigned max, int timeout_ms, struct way_got *got)
{
	int err;

	if (h->zero_copy)
		return peek_receive(s, h, size, seq, timeout_ms, got);
	if (h->burst <= 1 || max <= 1) {
		size_t len;
		MEASURE_WAIT(err, smq_receive(s->rx, b->mem, b->each, &len,
					      NULL, timeout_ms));
		if (!err)
			take_one(s, h, b->mem, len, size, seq, got);
		return err;
	}
	if (max > b->n)
		max = b->n;
	int k;
	MEASURE_WAIT(k, smq_receive_burst(s->rx, b->in, max, b->lens,
					  NULL, timeout_ms));
	if (k < 0)
		return k;
	for (int i = 0; i < k; i++)
		if (take_one(s, h, b->in[i].iov_base, b->lens[i], size,
			     seq + (uint64_t)i, got))
			break;
	return 0;
}

/* A busy-polling wait ends on no signal: a forked peer whose run died
 * (measure_orphaned) looks between slices of its wait this long. */
#define SLICE_MS 250

int way_receive(struct session *s, const struct how *h, struct way_bufs *b,
		size_t size, uint64_t seq, unsigned max, int timeout_ms,
		struct way_got *got)
{
	int err;

	memset(got, 0, sizeof(*got));
	for (int left = timeout_ms;;) {
		int slice = left >= 0 && left < SLICE_MS ? left : SLICE_MS;
		err = receive_call(s, h, b, size, seq, max, slice, got);
		if (measure_orphaned)
			return -EINTR;
		if ((err != -ETIMEDOUT && err != -EAGAIN) ||
		    (left >= 0 && (left -= slice) <= 0))
			break;
	}
	if (err != -SMQ_EPAYLOAD)
		return err;
	/* refused for its checksum, and taken off the ring: it came wrong */
	got->n++;
	got->wrong++;
	return 0;
}

/* ---- names ---- */

const char *how_words(const struct how *h, char *buf, size_t len)
{
	if (h->zero_copy)
		snprintf(buf, len, ", zero-copy");
	else if (h->burst > 1)
		snprintf(buf, len, ", bursts of %u%s", h->burst,
			 h->verify ? ", verified" : "");
	else
		snprintf(buf, len, "%s", h->verify ? ", verified" : "");
	return buf;
}
