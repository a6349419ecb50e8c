/* bench --baseline: the ways of sending beside their yardsticks, RUNS
 * times each, in turn: a 64-byte stream through a ring of 16 entries by
 * single calls and by bursts, against a bare two-core ring of 16 slots;
 * streams written and read in place (loans) against copies doing the same
 * work; both against UCX; and the machine's state while they ran, a
 * cache-line ping-pong. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "compare.h"

/* the diagnostic queues' ring, and what memory-bounded windows use */
#define RING16 16
static const size_t way_size[NWAYS] = { 64, 65536, 1048576 };
/* zero-copy against copies: the target where the payload dominates */
static const double zc_target[NWAYS] = { NAN, 1.3, 1.3 };

static uint32_t way_entries(size_t z)
{
	return z <= SMALL_ENTRY_SIZE ? SMALL_ENTRIES : big_entries(z);
}

static uint32_t way_entry_size(size_t z)
{
	return z <= SMALL_ENTRY_SIZE ? SMALL_ENTRY_SIZE : (uint32_t)z;
}

/* Two jobs in one session, their order turned every other run, so that
 * neither is always the first after the window is made; mode as
 * smq_queue_open() takes it (0: spin, then sleep). */
static int two_jobs(struct ctx *ctx, struct session_opts *so, int r,
		    int mode, uint32_t entries, uint32_t entry_size,
		    struct job a, struct job b)
{
	struct job j[2] = { r % 2 ? b : a, r % 2 ? a : b };
	struct jobs js = { j, 2 };

	return scratch_run(ctx, so, mode, entries, entry_size, 0, &js);
}

/* Run r of a 64 B stream through 16 entries: single calls, bursts, and
 * the bare ring of 16 slots right after.  smq busy-polls as the bare ring
 * does: what is compared is the message path, not a sleep and a wake-up
 * (spin mode sleeps whenever a side is preempted for its spin's 20 us,
 * which a busy shared machine does often). */
static int ring16_run(struct ctx *ctx, struct session_opts *so,
		      struct ways *w, int r)
{
	struct job one = { true, 64, w->count[0], &w->single[r], { 0 } };
	struct job many = { true, 64, w->count[0], &w->burst[r],
			    { false, false, WAYS_BURST } };
	const char *why = NULL;
	int rc;

	if ((rc = two_jobs(ctx, so, r, SMQ_POLL, RING16, SMALL_ENTRY_SIZE, one,
			   many)))
		return rc;
	struct ring_params rp = { .size = 64, .slot_size = SMALL_ENTRY_SIZE,
				  .slots = RING16, .count = w->count[0],
				  .cpu_a = w->a, .cpu_b = w->b };
	if (isatty(2))
		fprintf(stderr, "\r\033[Kbench --baseline: two-core ring, 16 "
			"slots");
	if ((rc = baseline_ring(&rp, &w->ring[r], &why)))
		return say_error("baseline two-core ring: %s",
				 why ? why : strerror(-rc));
	return 0;
}

/* Run r of each size: copies and loans doing the same work (every byte
 * made and checked), then UCX; UCX missing or failing leaves its rows
 * absent, with why, and is not tried again.  smq busy-polls, as UCX's
 * test does. */
static int zero_copy_run(struct ctx *ctx, struct session_opts *so,
			 struct ways *w, int r)
{
	const char *why = NULL;
	int rc;

	for (int i = 0; i < NWAYS && !measure_interrupted; i++) {
		size_t z = way_size[i];
		struct job copy = { true, z, w->count[i], &w->copy[r][i],
				    { false, true, 0 } };
		struct job loan = { true, z, w->count[i], &w->zc[r][i],
				    { true, true, 0 } };
		if ((rc = two_jobs(ctx, so, r, SMQ_POLL, way_entries(z),
				   way_entry_size(z), copy, loan)))
			return rc;
	}
	for (int i = 0; i < NWAYS && !w->ucx_why && !measure_interrupted;
	     i++) {
		if (isatty(2))
			fprintf(stderr, "\r\033[Kbench --baseline: UCX, %zu "
				"bytes", way_size[i]);
		rc = baseline_ucx(way_size[i], w->count[i], w->a, w->b,
				  &w->ucx[r][i], &why);
		if (rc == -EINTR)
			return 1;
		if (rc)
			w->ucx_why = why ? why : "ucx_perftest failed";
	}
	return 0;
}

int measure_ways(struct ctx *ctx, struct session_opts *so, struct ways *w)
{
	const char *why = NULL;
	int rc;

	for (int r = 0; r < RUNS && !measure_interrupted; r++) {
		if ((rc = ring16_run(ctx, so, w, r)) ||
		    (rc = zero_copy_run(ctx, so, w, r)))
			return rc;
		if (isatty(2))
			fprintf(stderr, "\r\033[Kbench --baseline: cache line");
		if ((rc = baseline_cacheline_pingpong(w->a, w->b, w->pp_count,
						      &w->cl[r], &why)))
			return say_error("baseline cache line: %s",
					 why ? why : strerror(-rc));
		w->runs = r + 1;
	}
	return 0;
}

/* The median over the runs of a rate of messages of size z (msgs/s for
 * a small message, MB/s for the others): run r's result is x[r * stride]. */
static double median_rate(const struct ways *w, const struct result *x,
			  int stride, size_t z)
{
	double v[RUNS];

	for (int r = 0; r < w->runs; r++)
		v[r] = z <= SMALL_ENTRY_SIZE ? x[r * stride].msgs_per_s
					     : x[r * stride].mb_per_s;
	return w->runs ? median_of(v, w->runs) : NAN;
}

double ways_state(const struct ways *w)
{
	double v[RUNS];

	for (int r = 0; r < w->runs; r++)
		v[r] = w->cl[r].half_rtt.median;
	return w->runs ? median_of(v, w->runs) : NAN;
}

int ways_rows(const struct ways *w, struct row *rows)
{
	int nr = 0;
	struct row *o;

	o = &rows[nr++];
	double ring = median_rate(w, w->ring, 1, 64);
	*o = (struct row){ "", "msgs/s", median_rate(w, w->single, 1, 64), ring,
			   "two-core ring, 16 slots", false, NAN, NULL };
	snprintf(o->what, sizeof(o->what), "16 entries, 64 B, %d runs", RUNS);
	o = &rows[nr++];
	*o = (struct row){ "", "msgs/s", median_rate(w, w->burst, 1, 64), ring,
			   "two-core ring, 16 slots", false, 0.9, NULL };
	snprintf(o->what, sizeof(o->what), "16 entries, bursts of %d, %d runs",
		 WAYS_BURST, RUNS);
	for (int i = 0; i < NWAYS; i++) {
		size_t z = way_size[i];
		char zs[16];
		const char *unit = z <= SMALL_ENTRY_SIZE ? "msgs/s" : "MB/s";
		double zc = median_rate(w, &w->zc[0][i], NWAYS, z);
		double copy = median_rate(w, &w->copy[0][i], NWAYS, z);
		double ucx = w->ucx_why ? NAN
					: median_rate(w, &w->ucx[0][i], NWAYS, z);
		snprintf(zs, sizeof(zs), z >= (1u << 20) ? "%zu MiB" :
			 z >= 1024 ? "%zu KiB" : "%zu B",
			 z >= (1u << 20) ? z >> 20 : z >= 1024 ? z >> 10 : z);
		o = &rows[nr++];
		*o = (struct row){ "", unit, zc, copy, "copies, same work",
				   false, zc_target[i], NULL };
		snprintf(o->what, sizeof(o->what), "zero-copy %s, %d runs",
			 zs, RUNS);
		o = &rows[nr++];
		*o = (struct row){ "", unit, zc, ucx, "UCX tag_bw", false, 1,
				   w->ucx_why };
		snprintf(o->what, sizeof(o->what), "zero-copy %s, %d runs",
			 zs, RUNS);
		o = &rows[nr++];
		*o = (struct row){ "", unit, copy, ucx, "UCX tag_bw", false, NAN,
				   w->ucx_why };
		snprintf(o->what, sizeof(o->what), "copies %s, %d runs", zs,
			 RUNS);
	}
	return nr;
}

int ways_measurements(const struct ways *w, const struct result **m)
{
	int n = 0;

	if (!w->runs)
		return 0;
	m[n++] = &w->single[0];
	m[n++] = &w->burst[0];
	m[n++] = &w->ring[0];
	for (int i = 0; i < NWAYS; i++) {
		m[n++] = &w->copy[0][i];
		m[n++] = &w->zc[0][i];
		if (!w->ucx_why)
			m[n++] = &w->ucx[0][i];
	}
	m[n++] = &w->cl[0];
	return n;
}

void ways_text(const struct ways *w)
{
	printf("machine state beside the rows of 16 entries, zero-copy and "
	       "UCX: cache-line ping-pong %.0f ns half RTT (median of %d)\n",
	       ways_state(w), w->runs);
	if (w->ucx_why)
		printf("UCX rows absent: %s\n", w->ucx_why);
	else
		printf("UCX: ucx_perftest -t tag_bw, UCX_TLS=%s, the sender on "
		       "the first CPU\n", ucx_transports());
}
