/* The smq measurements of one size over a session: a ping-pong (pingpong
 * and bench --baseline) and a stream (bench and bench --baseline). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "session.h"

/* What the timed part of a ping-pong gathers. */
struct pingpong_run {
	uint64_t *samples, cap, n;  /* half round trips, ns */
	uint64_t errors;            /* messages that came back wrong */
	uint64_t i;                 /* round trips made, the warm-up too */
	uint64_t start, stop;       /* the timed part, now_ns() */
	double cpu, wall;           /* see cpu_window_stop() */
};

/* Bounces warm + count round trips, or for duration_ms after the warm-up;
 * times each after the warm-up.  0, or the error that stopped it. */
static int pingpong_bounce(struct session *s, size_t size, uint64_t count,
			   int duration_ms, uint64_t warm,
			   struct pingpong_run *pr)
{
	uint64_t end_by = 0, i;
	struct cpu_window win;
	int err = 0;

	cpu_window_start(&win);
	for (i = 0; !duration_ms ? i < warm + count : true; i++) {
		if (i == warm) {
			cpu_window_start(&win);
			pr->start = now_ns();
			end_by = pr->start + (uint64_t)duration_ms * 1000000ull;
		}
		if (measure_interrupted || (duration_ms && i > warm &&
					    now_ns() >= end_by))
			break;
		size_t len;
		session_fill(s->buf, size, i);
		uint64_t t0 = now_ns();
		if ((err = smq_send(s->tx, s->buf, size, s->timeout_ms)) ||
		    (err = smq_receive(s->rx, s->buf, s->wi.geometry.entry_size,
				       &len, NULL, s->timeout_ms)))
			break;
		uint64_t t1 = now_ns();
		uint64_t seq = i;
		if (size >= sizeof(seq))
			memcpy(&seq, s->buf, sizeof(seq));
		if (len != size || seq != i)
			pr->errors++;
		if (i < warm)
			continue;
		if (pr->n == pr->cap) {
			uint64_t *more = realloc(pr->samples,
						 2 * pr->cap * sizeof(*more));
			if (!more)
				break;
			pr->samples = more;
			pr->cap *= 2;
		}
		pr->samples[pr->n++] = (t1 - t0) / 2;
		if ((pr->n & 0xffff) == 0)
			progress("pingpong", pr->n, count);
	}
	pr->stop = now_ns();
	cpu_window_stop(&win, &pr->cpu, &pr->wall);
	progress_end();
	pr->i = i;
	return err;
}

/* One size: warm up, then time each round trip; count round trips, or
 * for duration_ms.  The result is named after the session's mode. */
int pingpong_size(struct session *s, size_t size, uint64_t count,
		  int duration_ms, bool histogram, struct result *r)
{
	uint64_t warm = 1000;
	struct pingpong_run pr = { .cap = count, .cpu = -1 };
	int err;

	if (duration_ms)
		pr.cap = 1u << 20;
	pr.samples = malloc(pr.cap * sizeof(*pr.samples));
	if (!pr.samples)
		return say_error("out of memory for %" PRIu64 " samples",
				 pr.cap);
	memset(s->buf, 0x5a, size);
	err = session_round(s, OP_PING, size, duration_ms ? 0 : warm + count,
			    warm);
	if (err) {
		free(pr.samples);
		return window_error(s->ctx, "pingpong", err);
	}
	err = pingpong_bounce(s, size, count, duration_ms, warm, &pr);
	struct session_msg rep;
	if (!err && (duration_ms || pr.i < warm + count))
		err = session_stop(s);
	if (!err)
		err = session_report(s, &rep);
	if (err) {
		free(pr.samples);
		return window_error(s->ctx, "pingpong", err);
	}
	if (pr.errors || rep.errors) {
		free(pr.samples);
		return say_error("pingpong of %zu bytes: %" PRIu64 " messages came "
			     "back wrong", size, pr.errors + rep.errors);
	}
	uint64_t n = pr.n;
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "smq %s", mode_name(s->mode));
	r->size = size;
	r->messages = n;
	r->seconds = n ? (double)(pr.stop - pr.start) / 1e9 : 0;
	r->msgs_per_s = r->seconds > 0 ? (double)n / r->seconds : 0;
	r->mb_per_s = r->msgs_per_s * (double)size / 1e6;
	r->has_latency = true;
	r->cpu_a = n ? pr.cpu : -1;
	r->wall_a = pr.wall;
	r->cpu_b = rep.count > warm ? rep.cpu : -1;
	r->wall_b = rep.wall;
	if (histogram) {
		r->has_histogram = true;
		lat_histogram(pr.samples, n, r->histogram);
	}
	lat_compute(pr.samples, n, &r->half_rtt);
	free(pr.samples);
	return 0;
}

uint64_t stream_auto_count(size_t size)
{
	uint64_t n = (256ull << 20) / (size ? size : 1);
	return n < 500 ? 500 : n > 1000000 ? 1000000 : n;
}

int stream_size(struct session *s, size_t size, uint64_t count,
		struct result *r)
{
	struct session_msg rep;
	struct cpu_window win;
	double cpu = -1, wall = 0;
	uint64_t i;
	int err;

	memset(s->buf, 0xa5, size);
	/* a first lap around the ring, untimed, so page faults are not timed */
	uint64_t warm = 2ull * s->wi.geometry.entries;
	err = session_round(s, OP_STREAM, size, warm, 0);
	for (i = 0; !err && i < warm; i++) {
		session_fill(s->buf, size, i);
		err = smq_send(s->tx, s->buf, size, s->timeout_ms);
	}
	if (!err)
		err = session_report(s, &rep);
	if (!err)
		err = session_round(s, OP_STREAM, size, count, 0);
	if (err)
		return window_error(s->ctx, "bench", err);
	cpu_window_start(&win);
	uint64_t start = now_ns();
	for (i = 0; i < count && !measure_interrupted; i++) {
		session_fill(s->buf, size, i);
		if ((err = smq_send(s->tx, s->buf, size, s->timeout_ms)))
			break;
		if ((i & 0xffff) == 0)
			progress("bench", i, count);
	}
	cpu_window_stop(&win, &cpu, &wall);
	progress_end();
	if (!err && i < count)
		err = session_stop(s);
	if (!err)
		err = session_report(s, &rep);
	uint64_t stop = now_ns();
	if (err)
		return window_error(s->ctx, "bench", err);
	if (rep.errors || rep.count != i)
		return say_error("bench of %zu bytes: %" PRIu64 " sent, %" PRIu64
			     " drained, %" PRIu64 " wrong", size, i, rep.count,
			     rep.errors);
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "smq %s", mode_name(s->mode));
	r->size = size;
	r->messages = i;
	r->seconds = (double)(stop - start) / 1e9;
	r->msgs_per_s = r->seconds > 0 ? (double)i / r->seconds : 0;
	r->mb_per_s = r->msgs_per_s * (double)size / 1e6;
	r->cpu_a = cpu;
	r->wall_a = wall;
	r->cpu_b = rep.cpu;
	r->wall_b = rep.wall;
	return 0;
}
