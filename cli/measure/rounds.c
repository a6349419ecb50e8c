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

/* Messages per call of a round: a burst's, or one. */
static unsigned per_call(const struct how *h)
{
	return !h->zero_copy && h->burst > 1 ? h->burst : 1;
}

/* One round trip, i: n messages there (one call of a burst), and as many
 * back, however many calls they take; those that came back wrong
 * counted. */
static int round_trip(struct session *s, const struct how *h,
		      struct way_bufs *b, size_t size, uint64_t i, unsigned n,
		      uint64_t *errors)
{
	struct way_got got;
	int err = way_send(s, h, b, size, i * n, n);

	for (unsigned back = 0; !err && back < n; back += got.n) {
		err = way_receive(s, h, b, size, i * n + back, n - back,
				  s->timeout_ms, &got);
		*errors += got.wrong + got.stop;
		if (got.stop)
			break;
	}
	return err;
}

/* Bounces warm + count round trips, or for duration_ms after the warm-up;
 * times each after the warm-up.  0, or the error that stopped it. */
static int pingpong_bounce(struct session *s, size_t size, uint64_t count,
			   int duration_ms, uint64_t warm, const struct how *h,
			   struct way_bufs *b, struct pingpong_run *pr)
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
		uint64_t t0 = now_ns();
		if ((err = round_trip(s, h, b, size, i, per_call(h),
				      &pr->errors)))
			break;
		uint64_t t1 = now_ns();
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

/* "smq poll", "smq spin, zero-copy"... */
static void result_name(struct result *r, const struct session *s,
			const struct how *h)
{
	char how[48];

	snprintf(r->name, sizeof(r->name), "smq %s%s", mode_name(s->mode),
		 how_words(h, how, sizeof(how)));
}

/* One size: warm up, then time each round trip; count round trips, or
 * for duration_ms.  The result is named after the session's mode. */
int pingpong_size(struct session *s, size_t size, uint64_t count,
		  int duration_ms, bool histogram, const struct how *h,
		  struct result *r)
{
	uint64_t warm = 1000, per = per_call(h);
	struct pingpong_run pr = { .cap = count, .cpu = -1 };
	struct way_bufs b;
	int err;

	/* a burst that the ring cannot hold would leave both sides waiting
	 * for room, each with the other's answer unread */
	if (per > s->capacity)
		return say_error("pingpong --burst %" PRIu64 ": the queues hold "
				 "%" PRIu64 " messages; a burst bounced must "
				 "fit", per, s->capacity);
	if (duration_ms)
		pr.cap = 1u << 20;
	pr.samples = malloc(pr.cap * sizeof(*pr.samples));
	if (!pr.samples || way_bufs_get(&b, h, size)) {
		free(pr.samples);
		return say_error("out of memory for %" PRIu64 " samples",
				 pr.cap);
	}
	err = session_round(s, OP_PING, size,
			    duration_ms ? 0 : (warm + count) * per, warm * per,
			    h);
	if (!err)
		err = pingpong_bounce(s, size, count, duration_ms, warm, h, &b,
				      &pr);
	way_bufs_put(&b);
	struct session_msg rep;
	if (!err && (duration_ms || pr.i < warm + count))
		err = session_stop(s);
	if (!err)
		err = session_report(s, &rep);
	if (err) {
		free(pr.samples);
		return session_error(s, "pingpong", err);
	}
	if (pr.errors || rep.errors) {
		free(pr.samples);
		return say_error("pingpong of %zu bytes: %" PRIu64 " messages came "
			     "back wrong", size, pr.errors + rep.errors);
	}
	uint64_t n = pr.n;
	memset(r, 0, sizeof(*r));
	result_name(r, s, h);
	r->size = size;
	r->messages = n;
	r->seconds = n ? (double)(pr.stop - pr.start) / 1e9 : 0;
	r->msgs_per_s = r->seconds > 0 ? (double)(n * per) / r->seconds : 0;
	r->mb_per_s = r->msgs_per_s * (double)size / 1e6;
	r->has_latency = true;
	r->cpu_a = n ? pr.cpu : -1;
	r->wall_a = pr.wall;
	r->cpu_b = rep.count > warm * per ? rep.cpu : -1;
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

/* Sends messages from to to - 1, a call (or a burst) at a time. */
static int stream_send(struct session *s, const struct how *h,
		       struct way_bufs *b, size_t size, uint64_t from,
		       uint64_t to, uint64_t *sent, bool timed)
{
	unsigned per = per_call(h);
	uint64_t shown = 0;
	int err = 0;

	for (*sent = from; *sent < to && !(timed && measure_interrupted);) {
		unsigned k = to - *sent < per ? (unsigned)(to - *sent) : per;
		if ((err = way_send(s, h, b, size, *sent, k)))
			break;
		*sent += k;
		if (timed && *sent - shown >= 0x10000) {
			progress("bench", *sent, to);
			shown = *sent;
		}
	}
	if (shown)
		progress_end();
	return err;
}

/* The round's figures, once the peer has reported. */
static void stream_result(struct result *r, const struct session *s,
			  const struct how *h, size_t size, uint64_t sent,
			  uint64_t ns, double cpu, double wall,
			  const struct session_msg *rep)
{
	memset(r, 0, sizeof(*r));
	result_name(r, s, h);
	r->size = size;
	r->messages = sent;
	r->seconds = (double)ns / 1e9;
	r->msgs_per_s = r->seconds > 0 ? (double)sent / r->seconds : 0;
	r->mb_per_s = r->msgs_per_s * (double)size / 1e6;
	r->cpu_a = cpu;
	r->wall_a = wall;
	r->cpu_b = rep->cpu;
	r->wall_b = rep->wall;
}

int stream_size(struct session *s, size_t size, uint64_t count,
		const struct how *h, struct result *r)
{
	struct session_msg rep;
	struct cpu_window win;
	struct way_bufs b;
	double cpu = -1, wall = 0;
	uint64_t i = 0;
	int err;

	if (way_bufs_get(&b, h, size))
		return say_error("out of memory for a burst of %u messages of "
				 "%zu bytes", h->burst, size);
	/* a first lap around the ring, untimed, so page faults are not timed */
	uint64_t warm = 2ull * s->wi.geometry.entries;
	err = session_round(s, OP_STREAM, size, warm, 0, h);
	if (!err)
		err = stream_send(s, h, &b, size, 0, warm, &i, false);
	if (!err)
		err = session_report(s, &rep);
	/* a message that came wrong is wrong, timed or not */
	uint64_t warm_wrong = err ? 0 : rep.errors + (rep.count != warm);
	if (!err)
		err = session_round(s, OP_STREAM, size, count, 0, h);
	if (err) {
		way_bufs_put(&b);
		return session_error(s, "bench", err);
	}
	cpu_window_start(&win);
	uint64_t start = now_ns();
	err = stream_send(s, h, &b, size, 0, count, &i, true);
	cpu_window_stop(&win, &cpu, &wall);
	way_bufs_put(&b);
	if (!err && i < count)
		err = session_stop(s);
	if (!err)
		err = session_report(s, &rep);
	uint64_t stop = now_ns();
	if (err)
		return session_error(s, "bench", err);
	if (warm_wrong)
		return say_error("bench of %zu bytes: %" PRIu64 " messages of the "
			     "untimed lap came wrong", size, warm_wrong);
	if (rep.errors || rep.count != i)
		return say_error("bench of %zu bytes: %" PRIu64 " sent, %" PRIu64
			     " drained, %" PRIu64 " wrong", size, i, rep.count,
			     rep.errors);
	stream_result(r, s, h, size, i, stop - start, cpu, wall, &rep);
	return 0;
}
