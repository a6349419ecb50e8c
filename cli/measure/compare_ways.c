/* bench --baseline: the ways of sending beside their yardsticks, RUNS
 * times each, in turn: a 64-byte stream through a ring of 16 entries by
 * single calls and by bursts, against a bare two-core ring of 16 slots;
 * single calls through 256 entries against a ring of 256; streams written
 * and read in place (loans) against copies doing the same work; and the
 * machine's state while they ran, a cache-line ping-pong. */
#include <math.h>
#include <stdbool.h>
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

/* The yardstick of a 64 B stream: the bare ring of slots, into out. */
static int ring64_run(const struct ways *w, uint32_t slots, struct result *out)
{
	struct ring_params rp = { .size = 64, .slot_size = SMALL_ENTRY_SIZE,
				  .slots = slots, .count = w->count[0],
				  .cpu_a = w->a, .cpu_b = w->b };
	const char *why = NULL;
	int rc;

	if (isatty(2))
		fprintf(stderr, "\r\033[Kbench --baseline: two-core ring, %u "
			"slots", slots);
	if ((rc = baseline_ring(&rp, out, &why)))
		return say_error("baseline two-core ring: %s",
				 why ? why : strerror(-rc));
	return 0;
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
	int rc = two_jobs(ctx, so, r, SMQ_POLL, RING16, SMALL_ENTRY_SIZE, one,
			  many);

	return rc ? rc : ring64_run(w, RING16, &w->ring[r]);
}

/* Run r of a 64 B stream through 256 entries by single calls, the bare
 * ring of 256 slots right after; both busy-poll, as through 16. */
static int ring256_run(struct ctx *ctx, struct session_opts *so,
		       struct ways *w, int r)
{
	struct job one = { true, 64, w->count[0], &w->single256[r], { 0 } };
	struct jobs js = { &one, 1 };
	int rc = scratch_run(ctx, so, SMQ_POLL, SMALL_ENTRIES, SMALL_ENTRY_SIZE,
			     0, &js);

	return rc ? rc : ring64_run(w, SMALL_ENTRIES, &w->ring256[r]);
}

/* Run r of size i: copies and loans doing the same work (every byte made
 * and checked), both busy-polling. */
static int size_run(struct ctx *ctx, struct session_opts *so, struct ways *w,
		    int r, int i)
{
	size_t z = way_size[i];
	struct job copy = { true, z, w->count[i], &w->copy[r][i],
			    { false, true, 0 } };
	struct job loan = { true, z, w->count[i], &w->zc[r][i],
			    { true, true, 0 } };

	return two_jobs(ctx, so, r, SMQ_POLL, way_entries(z), way_entry_size(z),
			copy, loan);
}

/* The machine's state before group k of run r (after the last: k =
 * WAYS_GROUPS): a short cache-line ping-pong. */
static int probe(struct ways *w, int r, int k)
{
	const char *why = NULL;
	uint64_t n = w->pp_count >= 4000 ? w->pp_count / 4 : w->pp_count;
	int rc;

	if (isatty(2))
		fprintf(stderr, "\r\033[Kbench --baseline: cache line");
	if ((rc = baseline_cacheline_pingpong(w->a, w->b, n, &w->cl[r][k],
					      &why)))
		return say_error("baseline cache line: %s",
				 why ? why : strerror(-rc));
	return 0;
}

/* The machine's quick state: the tenth percentile of the state probes of
 * the runs made (not the quickest, which one lucky probe would set). */
static double fastest(const struct ways *w)
{
	double v[WAYS_MAX_RUNS * (WAYS_GROUPS + 1)];
	int n = 0;

	for (int r = 0; r < w->runs; r++)
		for (int k = 0; k <= WAYS_GROUPS; k++)
			if (w->cl[r][k].half_rtt.median > 0)
				v[n++] = w->cl[r][k].half_rtt.median;
	if (!n)
		return NAN;
	median_double(v, n);  /* sorts them */
	return v[n / 10];
}

/* Group g of run r: the state around it, the slower of its two probes,
 * in *ns; 0 fast, 1 slow, -1 when the two disagree (the machine changed
 * state within it: the run is not compared). */
static int state_of(const struct ways *w, int r, int g, double best,
		    double *ns)
{
	double x = w->cl[r][g].half_rtt.median;
	double y = w->cl[r][g + 1].half_rtt.median;
	double hi = x > y ? x : y, lo = x < y ? x : y;

	*ns = hi;
	if (!(lo > 0) || hi > STATE_GAP * lo)
		return -1;
	return hi <= STATE_GAP * best ? 0 : 1;
}

/* Whether every group has RUNS runs in one state. */
static bool enough(const struct ways *w)
{
	double best = fastest(w), ns;

	for (int g = 0; g < WAYS_GROUPS; g++) {
		int n[2] = { 0, 0 };
		for (int r = 0; r < w->runs; r++) {
			int st = state_of(w, r, g, best, &ns);
			if (st >= 0)
				n[st]++;
		}
		if (n[0] < RUNS && n[1] < RUNS)
			return false;
	}
	return true;
}

int measure_ways(struct ctx *ctx, struct session_opts *so, struct ways *w)
{
	int rc;

	for (int r = 0; r < WAYS_MAX_RUNS && !measure_interrupted; r++) {
		if (r >= RUNS && enough(w))
			break;
		if ((rc = probe(w, r, 0)) || (rc = ring16_run(ctx, so, w, r)) ||
		    (rc = probe(w, r, 1)) || (rc = ring256_run(ctx, so, w, r)))
			return rc;
		for (int i = 0; i < NWAYS && !measure_interrupted; i++)
			if ((rc = probe(w, r, i + 2)) ||
			    (rc = size_run(ctx, so, w, r, i)))
				return rc;
		if (measure_interrupted || (rc = probe(w, r, WAYS_GROUPS)))
			return measure_interrupted ? 0 : rc;
		w->runs = r + 1;
	}
	return 0;
}

/* A rate of a message of size z: msgs/s for a small message, MB/s for
 * the others. */
static double rate_of(const struct result *x, size_t z)
{
	return z <= SMALL_ENTRY_SIZE ? x->msgs_per_s : x->mb_per_s;
}

/* What one comparison of the ways compares: group g's figures of smq
 * (run r's at x[r * stride]) and of its yardstick (y, NULL when absent:
 * then why). */
struct pair {
	const char *what, *base_name, *absent;
	int g;
	const struct result *x, *y;
	int stride;
	size_t z;
	double target;
};

/* Fills slot's picks with the runs of p in state st: how many. */
static int pick_runs(struct ways *w, const struct pair *p, int slot, int st,
		     double best)
{
	double (*pk)[WAYS_MAX_RUNS] = w->pick[slot];
	double ns;
	int n = 0;

	for (int r = 0; r < w->runs; r++) {
		if (state_of(w, r, p->g, best, &ns) != st)
			continue;
		pk[0][n] = rate_of(&p->x[r * p->stride], p->z);
		pk[1][n] = p->y ? rate_of(&p->y[r * p->stride], p->z) : NAN;
		pk[2][n] = ns;
		if (pk[0][n] > 0 && (!p->y || pk[1][n] > 0))
			n++;
	}
	return n;
}

/* The rows of one comparison, into rows: one for each state a run of it
 * was compared in; one row when none was, or when its yardstick is
 * absent (named for the state of most runs).  How many. */
static int pair_rows(struct ways *w, const struct pair *p, struct row *rows,
		     int slot)
{
	double best = fastest(w);
	int n[2], nr = 0;

	for (int st = 0; st < 2; st++)
		n[st] = pick_runs(w, p, slot + st, st, best);
	for (int st = 0; st < 2; st++) {
		bool one = !p->y || (!n[0] && !n[1]);
		if (one ? st != (n[1] > n[0]) : !n[st])
			continue;
		double (*pk)[WAYS_MAX_RUNS] = w->pick[slot + st];
		double a[WAYS_MAX_RUNS], b[WAYS_MAX_RUNS];
		memcpy(a, pk[0], sizeof(a));
		memcpy(b, pk[1], sizeof(b));
		struct row_runs *rr = &w->picked[slot + st];
		*rr = (struct row_runs){ n[st], pk[0], pk[1], pk[2],
					 st ? "slow" : "fast" };
		struct row *o = &rows[nr++];
		*o = (struct row){ "", p->z <= SMALL_ENTRY_SIZE ? "msgs/s" : "MB/s",
				   n[st] ? median_double(a, n[st]) : NAN,
				   n[st] && p->y ? median_double(b, n[st]) : NAN,
				   p->base_name, false, p->target,
				   p->y ? NULL : p->absent, p->y ? rr : NULL,
				   NAN };
		snprintf(o->what, sizeof(o->what), "%s, %s, %d run%s", p->what,
			 rr->state, n[st], n[st] == 1 ? "" : "s");
		if (p->y && !n[st])
			o->absent = "no run of it saw one machine state "
				    "throughout";
	}
	return nr;
}

int ways_rows(struct ways *w, struct row *rows)
{
	int nr = 0, slot = 0;
	struct pair p[3 + NWAYS];
	char what[NWAYS][32], bursts[32];
	int np = 0;

	snprintf(bursts, sizeof(bursts), "16 entries, bursts of %d", WAYS_BURST);
	p[np++] = (struct pair){ "16 entries, 64 B", "two-core ring, 16 slots",
				 NULL, 0, w->single, w->ring, 1, 64, 0.5 };
	p[np++] = (struct pair){ bursts, "two-core ring, 16 slots", NULL, 0,
				 w->burst, w->ring, 1, 64, 0.9 };
	p[np++] = (struct pair){ "stream 64 B", "two-core ring", NULL, 1,
				 w->single256, w->ring256, 1, 64, 0.9 };
	for (int i = 0; i < NWAYS; i++) {
		size_t z = way_size[i];
		char zs[16];
		snprintf(zs, sizeof(zs), z >= (1u << 20) ? "%zu MiB" :
			 z >= 1024 ? "%zu KiB" : "%zu B",
			 z >= (1u << 20) ? z >> 20 : z >= 1024 ? z >> 10 : z);
		char *zc = what[i];
		snprintf(zc, sizeof(what[0]), "zero-copy %s", zs);
		p[np++] = (struct pair){ zc, "copies, same work", NULL, i + 2,
					 &w->zc[0][i], &w->copy[0][i], NWAYS, z,
					 zc_target[i] };
	}
	for (int i = 0; i < np; i++, slot += 2)
		nr += pair_rows(w, &p[i], rows + nr, slot);
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
	m[n++] = &w->single256[0];
	m[n++] = &w->ring256[0];
	for (int i = 0; i < NWAYS; i++) {
		m[n++] = &w->copy[0][i];
		m[n++] = &w->zc[0][i];
	}
	m[n++] = &w->cl[0][0];
	return n;
}

void ways_states(const struct ways *w, double ns[2], int n[2])
{
	double v[2][WAYS_MAX_RUNS * (WAYS_GROUPS + 1)], best = fastest(w);

	n[0] = n[1] = 0;
	for (int r = 0; r < w->runs; r++)
		for (int k = 0; k <= WAYS_GROUPS; k++) {
			double x = w->cl[r][k].half_rtt.median;
			if (x > 0) {
				int st = x > STATE_GAP * best;
				v[st][n[st]++] = x;
			}
		}
	for (int st = 0; st < 2; st++)
		ns[st] = n[st] ? median_double(v[st], n[st]) : NAN;
}

void ways_text(const struct ways *w)
{
	double ns[2];
	int n[2];

	ways_states(w, ns, n);
	printf("machine state beside the rows of 16 and 256 entries and "
	       "zero-copy (a cache-line ping-pong before and after each group "
	       "of them, %d runs): fast %.0f ns half RTT (%d probes)", w->runs,
	       ns[0], n[0]);
	if (n[1])
		printf(", slow %.0f ns (%d probes)", ns[1], n[1]);
	else
		printf(", slow not seen");
	printf("; a run counts in the state its two probes agree on within "
	       "%.1fx, fast within %.1fx of the tenth percentile of the "
	       "probes\n", STATE_GAP, STATE_GAP);
}
