/* bench --baseline: smq measured beside the baselines, on scratch windows
 * of its own (scratch.c) and the same two CPUs, and the ratios against
 * the targets. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "compare.h"
#include "session.h"

/* The SimpleMessageQueue paper's busy-polling ping-pong over the Intel
 * 21554 bridge (its figure 10), messages/s per direction. */
enum { NP = 4 };
static const size_t paper_size[NP] = { 0, 10, 100, 1000 };
static const double paper_rate[NP] = { 45400, 43150, 36750, 14450 };
enum { NB = 3 };
static const size_t big[NB] = { 65536, 262144, 1048576 };
/* poll ping-pongs: 0, 48 and 64 B against the cache line, and the paper's
 * sizes (0 B is measured once, for both) */
static const size_t poll_size[] = { 0, 48, 64, 10, 100, 1000 };
enum { NPOLL = sizeof(poll_size) / sizeof(poll_size[0]) };
/* What decides is measured RUNS times, each time beside its baseline, and
 * compared as medians: one run on a shared machine proves little.  The
 * poll half round trips of 0 and 48 B (a header and a small payload in
 * one cache line) against the cache-line ping-pong; streams with and
 * without checksums. */
enum { NRUN_POLL = 2 };
static const size_t ck_size[] = { 64, 4096, 65536 };
enum { NCK = sizeof(ck_size) / sizeof(ck_size[0]) };
static const double ck_target[NCK] = { 1.2, NAN, 1.5 };

/* Every figure of a comparison, smq's and the baselines'. */
struct figures {
	struct result pollrun[RUNS][NRUN_POLL], clrun[RUNS];
	struct result ck[RUNS][NCK][2];  /* without and with checksums */
	struct result lane[RUNS][2];     /* one sender, two: lane_lock.c */
	struct result poll[NPOLL], sleep_[2], stbig[NB];
	struct result cl, fx, rg64, rgbig[NB], mc[NB], one;
	uint64_t n;             /* --count, or 0 */
	uint64_t pp_count, sl_count, one_count, big_count[NB];
	uint64_t ck_count[NCK];
	int a, b;               /* the two CPUs */
	struct ways ways;       /* compare_ways.c */
};

/* Runs call, a baseline called name, saying so on a terminal; returns
 * from the caller with the exit status when it fails. */
#define BASE(call, name) do { why = NULL; \
		if (isatty(2)) \
			fprintf(stderr, "\r\033[Kbench --baseline: %s", name); \
		if ((rc = (call))) \
			return say_error("baseline %s: %s", name, why ? why : strerror(-rc)); \
	} while (0)

/* The small messages: smq's ping-pongs and 64-byte stream, each followed
 * by the limit it is compared with. */
static int measure_small(struct ctx *ctx, struct session_opts *so,
			 struct figures *f)
{
	const char *why = NULL;
	int a = f->a, b = f->b, rc;

	/* Each baseline right after the smq figure it is compared with, so
	 * that the load of a shared machine, which drifts, is about the same
	 * for both.  smq: small entries for small messages, big ones for big. */
	struct job pj[NPOLL], sj[2];
	for (int i = 0; i < NPOLL; i++)
		pj[i] = (struct job){ false, poll_size[i], f->pp_count,
				      &f->poll[i], { 0 } };
	for (int i = 0; i < 2; i++)
		sj[i] = (struct job){ false, i ? 64 : 0, f->sl_count,
				      &f->sleep_[i], { 0 } };
	struct jobs jp = { pj, NPOLL }, js = { sj, 2 };
	if ((rc = scratch_run(ctx, so, SMQ_POLL, SMALL_ENTRIES,
			      SMALL_ENTRY_SIZE, 0, &jp)))
		return rc;
	BASE(baseline_cacheline_pingpong(a, b, f->pp_count, &f->cl, &why),
	     "cache line");
	f->pollrun[0][0] = f->poll[0];
	f->pollrun[0][1] = f->poll[1];
	f->clrun[0] = f->cl;
	for (int r = 1; r < RUNS && !measure_interrupted; r++) {
		struct job rj[NRUN_POLL];
		for (int i = 0; i < NRUN_POLL; i++)
			rj[i] = (struct job){ false, poll_size[i], f->pp_count,
					      &f->pollrun[r][i], { 0 } };
		struct jobs jr = { rj, NRUN_POLL };
		if ((rc = scratch_run(ctx, so, SMQ_POLL, SMALL_ENTRIES,
				      SMALL_ENTRY_SIZE, 0, &jr)))
			return rc;
		BASE(baseline_cacheline_pingpong(a, b, f->pp_count,
						 &f->clrun[r], &why),
		     "cache line");
	}
	if ((rc = scratch_run(ctx, so, SMQ_SLEEP, SMALL_ENTRIES,
			      SMALL_ENTRY_SIZE, 0, &js)))
		return rc;
	BASE(baseline_futex_pingpong(a, b, f->sl_count, &f->fx, &why), "futex");
	/* the yardstick of the calls on one CPU: the ring's time per
	 * message across two (smq's stream through 256 entries is compared
	 * with it in runs, compare_ways.c) */
	struct ring_params rp = { .size = 64, .slot_size = SMALL_ENTRY_SIZE,
				  .slots = SMALL_ENTRIES, .count = f->one_count,
				  .cpu_a = a, .cpu_b = b };
	BASE(baseline_ring(&rp, &f->rg64, &why), "two-core ring");
	if (isatty(2))
		fprintf(stderr, "\r\033[Kbench --baseline: smq, one CPU");
	return one_cpu_calls(64, SMALL_ENTRIES, f->one_count, a, &f->one);
}

/* The big messages: smq's stream of each, then the ring and memcpy. */
static int measure_big(struct ctx *ctx, struct session_opts *so,
		       struct figures *f)
{
	const char *why = NULL;
	int rc;

	for (int i = 0; i < NB; i++) {
		struct job bj = { true, big[i], f->big_count[i], &f->stbig[i],
				  { 0 } };
		struct jobs one = { &bj, 1 };
		if ((rc = scratch_run(ctx, so, 0, big_entries(big[i]),
				      (uint32_t)big[i], 0, &one)))
			return rc;
		struct ring_params rp = {
			.size = big[i], .slot_size = big[i],
			.slots = big_entries(big[i]), .count = f->big_count[i],
			.cpu_a = f->a, .cpu_b = f->b };
		BASE(baseline_ring(&rp, &f->rgbig[i], &why), "two-core ring");
		BASE(baseline_memcpy(big[i], f->n ? f->n * big[i] : 1ull << 30,
				     &f->mc[i], &why), "memcpy");
	}
	return 0;
}
#undef BASE

/* Streams with and without checksums, alternately, RUNS times. */
static int measure_checksums(struct ctx *ctx, struct session_opts *so,
			     struct figures *f)
{
	int rc;

	for (int r = 0; r < RUNS && !measure_interrupted; r++)
		for (int i = 0; i < NCK; i++)
			for (int k = 0; k < 2; k++) {
				size_t z = ck_size[i];
				bool small = z <= SMALL_ENTRY_SIZE;
				struct job j = { true, z, f->ck_count[i],
						 &f->ck[r][i][k], { 0 } };
				struct jobs one = { &j, 1 };
				if ((rc = scratch_run(ctx, so, 0,
					small ? SMALL_ENTRIES : big_entries(z),
					small ? SMALL_ENTRY_SIZE : (uint32_t)z,
					k ? SMQ_SHAPE_CHECKSUM : 0, &one)))
					return rc;
				struct result *res = &f->ck[r][i][k];
				size_t len = strlen(res->name);
				if (k)
					snprintf(res->name + len,
						 sizeof(res->name) - len,
						 ", checksums");
			}
	return 0;
}

/* The lane lock beside two CPU hogs: one sender alone, then two, RUNS
 * times in turn. */
static int measure_lane_lock(struct figures *f)
{
	int rc;

	for (int r = 0; r < RUNS && !measure_interrupted; r++)
		for (int k = 0; k < 2; k++)
			if ((rc = lane_lock_run(k + 1, f->a, f->b, LANE_MS,
						f->n, &f->lane[r][k])))
				return rc;
	return 0;
}

/* The comparisons of the figures, with their targets; returns how many. */
static int compare_rows(const struct figures *f, struct row *rows)
{
	int nr = 0;

	double cl[RUNS], v[RUNS];
	for (int r = 0; r < RUNS; r++)
		cl[r] = f->clrun[r].half_rtt.median;
	double clm = median_double(cl, RUNS);
	for (int i = 0; i < NRUN_POLL; i++) {
		for (int r = 0; r < RUNS; r++)
			v[r] = f->pollrun[r][i].half_rtt.median;
		struct row *w = &rows[nr++];
		*w = (struct row){ "", "ns", median_double(v, RUNS), clm,
				   "cache-line ping-pong", true, 1.3, NULL,
				   NULL, NAN };
		row_set_spread(w, v, cl, RUNS);
		snprintf(w->what, sizeof(w->what), "poll half RTT %zu B, %d runs",
			 poll_size[i], RUNS);
	}
	rows[nr++] = (struct row){ "poll half RTT 64 B", "ns",
		f->poll[2].half_rtt.median, f->cl.half_rtt.median,
		"cache-line ping-pong", true, NAN, NULL, NULL, NAN };
	for (int i = 0; i < NCK; i++) {
		double with[RUNS], without[RUNS];
		for (int r = 0; r < RUNS; r++) {
			without[r] = 1e9 / f->ck[r][i][0].msgs_per_s;
			with[r] = 1e9 / f->ck[r][i][1].msgs_per_s;
		}
		struct row *w = &rows[nr++];
		*w = (struct row){ "", "ns/msg", median_double(with, RUNS),
				   median_double(without, RUNS), "without checksums",
				   true, ck_target[i], NULL, NULL, NAN };
		row_set_spread(w, with, without, RUNS);
		snprintf(w->what, sizeof(w->what), "checked stream %zu B, %d "
			 "runs", ck_size[i], RUNS);
	}
	for (int i = 0; i < 2; i++)
		rows[nr++] = (struct row){ "", "ns",
			f->sleep_[i].half_rtt.median, f->fx.half_rtt.median,
			"futex ping-pong", true, 1.2, NULL, NULL, NAN };
	snprintf(rows[nr - 2].what, sizeof(rows[0].what), "sleep half RTT, 0 B");
	snprintf(rows[nr - 1].what, sizeof(rows[0].what), "sleep half RTT, 64 B");
	/* the calls alone, no second CPU to wait for: what a stream of
	 * single calls cannot beat (one_cpu.c) */
	rows[nr++] = (struct row){ "64 B send + receive, one CPU", "ns/msg",
				   1e9 / f->one.msgs_per_s,
				   1e9 / f->rg64.msgs_per_s, "two-core ring", true,
				   NAN, NULL, NULL, NAN };
	for (int i = 0; i < NB; i++) {
		struct row *r = &rows[nr++];
		*r = (struct row){ "", "MB/s", f->stbig[i].mb_per_s,
				   f->rgbig[i].mb_per_s, "two-core ring", false,
				   0.8, NULL, NULL, NAN };
		snprintf(r->what, sizeof(r->what), "stream %zu KiB", big[i] / 1024);
	}
	for (int i = 0; i < NB; i++) {
		struct row *r = &rows[nr++];
		*r = (struct row){ "", "MB/s", f->stbig[i].mb_per_s,
				   f->mc[i].mb_per_s, "memcpy, one core", false,
				   NAN, NULL, NULL, NAN };
		snprintf(r->what, sizeof(r->what), "stream %zu KiB", big[i] / 1024);
	}
	double one[RUNS], two[RUNS];
	for (int r = 0; r < RUNS; r++) {
		one[r] = f->lane[r][0].msgs_per_s;
		two[r] = f->lane[r][1].msgs_per_s;
	}
	struct row *lr = &rows[nr++];
	*lr = (struct row){ "", "msgs/s", median_double(two, RUNS),
			    median_double(one, RUNS), "1 sender, 2 hogs", false,
			    0.5, NULL, NULL, NAN };
	row_set_spread(lr, two, one, RUNS);
	snprintf(lr->what, sizeof(lr->what), "lane lock, 2 senders, 2 hogs, %d "
		 "runs", RUNS);
	for (int i = 0; i < NP; i++) {
		struct row *r = &rows[nr++];
		const struct result *p = &f->poll[0];
		for (int k = 0; k < NPOLL; k++)
			if (poll_size[k] == paper_size[i])
				p = &f->poll[k];
		*r = (struct row){ "", "msgs/s", p->msgs_per_s, paper_rate[i],
				   "SMQ over 21554, fig. 10", false, 30, NULL,
				   NULL, NAN };
		snprintf(r->what, sizeof(r->what), "poll ping-pong %zu B",
			 paper_size[i]);
	}
	return nr;
}

static void compare_print(const struct ctx *ctx, const struct session_opts *so,
			  struct figures *f)
{
	struct row rows[40 + WAYS_ROWS];
	int nr = compare_rows(f, rows);
	nr += ways_rows(&f->ways, rows + nr);
	const struct result *m[29 + WAYS_MEASUREMENTS] = {
		&f->poll[0], &f->poll[1], &f->poll[2], &f->poll[3], &f->poll[4],
		&f->poll[5], &f->sleep_[0], &f->sleep_[1], &f->stbig[0],
		&f->stbig[1], &f->stbig[2], &f->cl, &f->fx, &f->rg64,
		&f->rgbig[0], &f->rgbig[1], &f->rgbig[2],
		&f->mc[0], &f->mc[1], &f->mc[2],
		&f->ck[0][0][0], &f->ck[0][0][1], &f->ck[0][1][0],
		&f->ck[0][1][1], &f->ck[0][2][0], &f->ck[0][2][1],
		&f->lane[0][0], &f->lane[0][1], &f->one,
	};
	int nm = 29;
	nm += ways_measurements(&f->ways, m + nm);

	if (ctx->json) {
		double ns[2];
		int probes[2];
		ways_states(&f->ways, ns, probes);
		rows_json("bench", f->a, f->b, measure_interrupted, ns, m, nm,
			  rows, nr);
	} else if (so->csv) {
		rows_csv(rows, nr);
	} else {
		char c0[16], c1[16], where[512];
		printf("smqctl %s bench --baseline, %s\n", SMQ_VERSION,
		       machine_words(where, sizeof(where)));
		printf("smq against baselines measured in this run, CPUs %s and %s\n",
		       cpu_name(f->a, c0), cpu_name(f->b, c1));
		printf("cache-line ping-pong %.0f ns half RTT (%.0f/s per "
		       "direction); futex ping-pong %.0f ns\n",
		       f->cl.half_rtt.median, f->cl.msgs_per_s,
		       f->fx.half_rtt.median);
		ways_text(&f->ways);
		rows_text(rows, nr);
	}
}

int baseline_compare(struct ctx *ctx, struct session_opts *so, uint64_t n)
{
	struct figures f = { .n = n };
	int rc;

	f.pp_count = n ? n : 200000;
	f.sl_count = n ? n : 20000;
	f.one_count = n ? n : 4000000;
	for (int i = 0; i < NB; i++)
		f.big_count[i] = n ? n : stream_auto_count(big[i]) * 2;
	/* four million 64-byte messages, a tenth of a second a stream, as
	 * the rows of 16 and 256 entries take: of half a million (13 ms) a
	 * checked stream took 1.24x the unchecked one's time, of 20 million
	 * 1.16x; what the short one measured more was its start
	 * (doc/message-path.md) */
	for (int i = 0; i < NCK; i++)
		f.ck_count[i] = n ? n : ck_size[i] <= 64 ? 4000000
					   : stream_auto_count(ck_size[i]) / 2;
	if (!so->cpu_set) {
		so->cpu[0] = cpu_pick(0);
		so->cpu[1] = cpu_pick(1);
		so->cpu_set = true;
	}
	/* the busy-polling measurements decide */
	if ((rc = session_cpu_check(so, true)))
		return rc;
	so->cpu_checked = true;
	f.a = f.ways.a = so->cpu[0];
	f.b = f.ways.b = so->cpu[1];
	/* a 64 B stream moves 10 to 20 million messages a second: four
	 * million make each of its runs last long enough to measure */
	f.ways.count[0] = n ? n : 4000000;
	f.ways.count[1] = f.big_count[0];       /* 64 KiB */
	f.ways.count[2] = f.big_count[NB - 1];  /* 1 MiB */
	f.ways.pp_count = f.pp_count;
	measure_signals();

	if ((rc = measure_small(ctx, so, &f)) ||
	    (rc = measure_big(ctx, so, &f)) ||
	    (rc = measure_checksums(ctx, so, &f)) ||
	    (rc = measure_ways(ctx, so, &f.ways)) ||
	    (rc = measure_lane_lock(&f)))
		return rc;
	if (isatty(2))
		fputs("\r\033[K", stderr);
	compare_print(ctx, so, &f);
	return measure_interrupted ? 1 : 0;
}
