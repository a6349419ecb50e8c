/* smqctl check between boards: what a board measures towards another.
 * Doorbells: round trips to the other asleep on its doorbell, then
 * polling; the raw link: posted writes into its scratch data by unit size
 * and single reads of it; the queue: a ping-pong and a stream over the
 * diagnostic queues.  Figures are printed, never judged by speed: only a
 * doorbell that does not arrive, or messages that come wrong, fail. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wire.h"

#define PINGS 20
#define BELL_BOUND_MS 500       /* a sleeper wakes by itself every 1000 */
#define WARM_PING 2000          /* the sequence of the uncounted first ping
				   (the counted ones are 0.., the polled
				   ones 1000..) */
#define ASLEEP_MS 200
#define PING_SIZE 64
#define PINGPONGS 2000
#define WARMUP 100
#define STREAM_MESSAGES 2000
#define STREAM_SIZE 4096
#define RAW_BYTES (4u << 20)
#define READS 1000

static void data_head(const struct agent *a, uint8_t *buf, int op,
		      uint64_t seq)
{
	struct wire_head h = { WIRE_MAGIC, (uint16_t)op, (uint16_t)a->self,
			       a->id, seq };
	memcpy(buf, &h, sizeof(h));
}

/* The pong of ping seq from board from, within timeout_ms: 0, or
 * -ETIMEDOUT. */
static int wait_pong(struct agent *a, unsigned from, uint64_t seq,
		     int timeout_ms)
{
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000ull;
	struct wire_head h;

	for (;;) {
		int64_t left = (int64_t)(end - now_ns()) / 1000000;
		size_t len;
		int err = smq_receive(a->rx, a->buf, a->entry_size, &len, NULL,
				      left > 0 ? (int)left : 0);
		if (err == -EAGAIN)
			err = -ETIMEDOUT;
		if (err)
			return err;
		if (len < sizeof(h))
			continue;
		memcpy(&h, a->buf, sizeof(h));
		if (h.magic == WIRE_MAGIC && h.id == a->id && h.op == OP_PONG &&
		    h.from == from && h.seq == seq)
			return 0;
	}
}

static int ping(struct agent *a, unsigned to, uint64_t seq)
{
	uint8_t buf[PING_SIZE] = { 0 };

	data_head(a, buf, OP_PING, seq);
	return smq_send(a->tx[to], buf, sizeof(buf), a->timeout_ms);
}

/* Until board b's receiver sleeps on its doorbell: true, with its count
 * of sleeps in *sleeps, or false after ASLEEP_MS.  sleeping says only that
 * it armed its sleep: until it has looked at its lanes once more, a ping
 * reaches it without the doorbell, and a doorbell that is never delivered
 * would pass.  Its count of sleeps grows past that look.  *sleeps is the
 * count read before our last ping (a sleep counted since then is one past
 * its look), or UINT64_MAX when there was none: then a sleep seen for a
 * millisecond, its count unchanged, is taken (enough to say that it
 * sleeps at all; sleeping_pings pings once before it counts). */
static bool asleep(struct agent *a, unsigned b, uint64_t *sleeps)
{
	uint64_t end = now_ns() + ASLEEP_MS * 1000000ull, since = 0, at = 0;
	struct smq_queue_info qi;

	do {
		if (smq_queue_info(a->w, a->diag0 + b, &qi, sizeof(qi)) ||
		    !qi.sleeping) {
			since = 0;
		} else if (*sleeps != UINT64_MAX) {
			if (qi.sleeps > *sleeps)
				goto yes;
		} else if (!since || qi.sleeps != at) {
			since = now_ns();
			at = qi.sleeps;
		} else if (now_ns() - since >= 1000000) {
			goto yes;
		}
		usleep(20);
	} while (now_ns() < end);
	return false;
yes:
	*sleeps = qi.sleeps;
	return true;
}

static double median_of(uint64_t *ns, uint64_t n, struct lat_stats *st)
{
	if (!n)
		return NAN;
	lat_compute(ns, n, st);
	return st->median;
}

/* Pings to the sleeper, each once it sleeps: delivered when its pong
 * comes within BELL_BOUND_MS (else it woke by itself, a slice later). */
static void sleeping_pings(struct agent *a, unsigned b, struct bell_fig *f,
			   uint64_t *rtt, uint64_t sleeps)
{
	/* a ping first, not counted: each sleep after its pong is counted
	 * past sleeps, whatever the sleeper was doing when we read it */
	if (ping(a, b, WARM_PING))
		return;
	if (wait_pong(a, b, WARM_PING, 3 * BELL_BOUND_MS)) {
		f->pings = f->late = 1;  /* not even its slice woke it */
		return;
	}
	for (unsigned k = 0; k < PINGS && f->late < 2; k++) {
		if (!asleep(a, b, &sleeps)) {
			f->why = -EAGAIN;
			return;
		}
		uint64_t t0 = now_ns();
		if (ping(a, b, k))
			return;
		f->pings++;
		if (!wait_pong(a, b, k, BELL_BOUND_MS)) {
			rtt[f->delivered++] = now_ns() - t0;
			continue;
		}
		f->late++;
		/* its own slice wakes it: the pong, before the next ping */
		if (wait_pong(a, b, k, 3 * BELL_BOUND_MS))
			return;
	}
}

void measure_bells(struct agent *a, unsigned b, struct bell_fig *f)
{
	uint64_t rtt[PINGS], polled[PINGS];
	struct smq_board_info bi;
	struct lat_stats st;
	struct wire_msg m;
	uint64_t sleeps = UINT64_MAX;

	memset(f, 0, sizeof(*f));
	f->median_ns = f->p99_ns = f->max_ns = f->polled_median_ns = NAN;
	if (agent_sender(a, b))
		f->why = -EINVAL;
	/* asleep, it has waited, and shown its doorbell in its board slot */
	else if (!asleep(a, b, &sleeps))
		f->why = -EAGAIN;
	else if (smq_board_info(a->w, b, &bi, sizeof(bi)),
		 bi.doorbell.kind == SMQ_BELL_NONE)
		f->why = -ENOTSUP;
	if (!f->why && !agent_mode(a, SERVE_POLL))
		sleeping_pings(a, b, f, rtt, sleeps);
	/* the same, the sleeper polling: what the wake-up adds */
	wire_init(a, &m, OP_MODE);
	m.b = SERVE_POLL;
	if (!f->why && !agent_send(a, b, &m, a->timeout_ms) &&
	    !agent_wait(a, OP_READY, (int)b, &m, a->timeout_ms))
		for (unsigned k = 0; k < PINGS; k++) {
			uint64_t t0 = now_ns();
			if (ping(a, b, 1000 + k) ||
			    wait_pong(a, b, 1000 + k, a->timeout_ms))
				break;
			polled[f->polled++] = now_ns() - t0;
		}
	wire_init(a, &m, OP_END);
	if (!agent_send(a, b, &m, a->timeout_ms))
		agent_wait(a, OP_ENDED, (int)b, &m, a->timeout_ms);
	agent_mode(a, SERVE_SPIN);
	if (f->delivered) {
		f->median_ns = median_of(rtt, f->delivered, &st);
		f->p99_ns = st.p99;
		f->max_ns = st.max;
	}
	f->polled_median_ns = median_of(polled, f->polled, &st);
}

void measure_raw(struct agent *a, unsigned b, struct raw_fig *f)
{
	uint64_t reads[READS];
	struct lat_stats st;
	uint8_t *buf = malloc(SMQ_SCRATCH_DATA);

	for (int k = 0; k < CHECK_RAW_SIZES; k++)
		f->mb_per_s[k] = NAN;
	f->read_median_ns = f->read_p99_ns = NAN;
	if (!buf || !a->scratch) {
		free(buf);
		return;
	}
	for (size_t i = 0; i < SMQ_SCRATCH_DATA; i++)
		buf[i] = (uint8_t)(i * 131 + a->self);
	for (int k = 0; k < CHECK_RAW_SIZES; k++) {
		size_t size = check_raw_sizes[k];
		uint64_t t0 = now_ns();
		if (smq_scratch_write(a->w, b, 0, buf, size,
				      (unsigned)(RAW_BYTES / size)))
			break;
		double s = (double)(now_ns() - t0) / 1e9;
		f->mb_per_s[k] = s > 0 ? RAW_BYTES / s / 1e6 : NAN;
	}
	unsigned n = 0;
	for (unsigned i = 0; i < READS; i++) {
		uint64_t word, t0 = now_ns();
		/* a new line each time, not one the last read brought in */
		size_t off = (size_t)i * 4160 % (SMQ_SCRATCH_DATA - 8) & ~7ul;
		if (smq_scratch_read(a->w, b, off, &word, sizeof(word)))
			break;
		reads[n++] = now_ns() - t0;
	}
	f->read_median_ns = median_of(reads, n, &st);
	f->read_p99_ns = n ? st.p99 : NAN;
	free(buf);
}

static void pingpong(struct agent *a, unsigned b, struct queue_fig *f)
{
	uint64_t *rtt = malloc(PINGPONGS * sizeof(*rtt));
	struct lat_stats st;
	unsigned n = 0;

	if (!rtt) {
		f->errors++;
		return;
	}
	uint64_t start = 0;
	for (unsigned k = 0; k < WARMUP + PINGPONGS; k++) {
		uint64_t t0 = now_ns();
		if (k == WARMUP)
			start = t0;
		if (ping(a, b, k) || wait_pong(a, b, k, a->timeout_ms)) {
			f->errors++;
			break;
		}
		if (k >= WARMUP)
			rtt[n++] = now_ns() - t0;
	}
	if (n == PINGPONGS) {
		f->half_rtt_ns = median_of(rtt, n, &st) / 2;
		f->msgs_per_s = n / ((double)(now_ns() - start) / 1e9);
	}
	free(rtt);
}

void measure_queue(struct agent *a, unsigned b, struct queue_fig *f)
{
	struct wire_msg m;

	memset(f, 0, sizeof(*f));
	f->half_rtt_ns = f->msgs_per_s = f->stream_mb_per_s = NAN;
	f->stream_size = a->entry_size < STREAM_SIZE ? a->entry_size
						     : STREAM_SIZE;
	if (agent_sender(a, b)) {
		f->errors++;
		return;
	}
	pingpong(a, b, f);
	uint8_t *buf = calloc(1, f->stream_size);
	uint64_t t0 = now_ns(), sent = 0;
	for (; buf && !f->errors && sent < STREAM_MESSAGES; sent++) {
		data_head(a, buf, OP_STREAM, sent);
		if (smq_send(a->tx[b], buf, f->stream_size, a->timeout_ms))
			f->errors++;
	}
	free(buf);
	wire_init(a, &m, OP_END);
	if (agent_send(a, b, &m, a->timeout_ms) ||
	    agent_wait(a, OP_ENDED, (int)b, &m, a->timeout_ms)) {
		f->errors++;
		return;
	}
	double s = (double)(now_ns() - t0) / 1e9;
	f->stream_count = m.nonce;
	f->errors += m.count + (m.nonce != sent);
	if (!f->errors && s > 0)
		f->stream_mb_per_s = (double)sent * (double)f->stream_size /
				     s / 1e6;
}
