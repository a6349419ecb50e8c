/* smqctl bench: one board streams, the other drains: messages and MB per
 * second for each size, from 0 bytes to 1 MiB.  With --baseline: smq beside
 * the baselines measured in the same run, on the same two CPUs. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "measure/session.h"

struct bench_opts {
	struct session_opts s;
	size_t sizes[MAX_SIZES];
	int nsizes;
	uint64_t count;
	bool baseline;
	struct result results[MAX_SIZES];
	int nresults;
};

enum { OPT_SIZE = 'z', OPT_COUNT = 'c', OPT_BASELINE = 0x400 };

static const struct argp_option options[] = {
	{ "size", OPT_SIZE, "LIST", 0,
	  "Message sizes, e.g. 64,4K,1M (default 0, then doubling from 1 byte "
	  "to 1 MiB or the window's entry size)", 0 },
	{ "count", OPT_COUNT, "N", 0,
	  "Messages per size (default: 256 MiB worth, 500 to 1000000); with "
	  "--baseline, the round trips or messages of every measurement", 0 },
	{ "baseline", OPT_BASELINE, NULL, 0,
	  "Measure smq beside the baselines on this machine (a bare two-core "
	  "ring, cache-line and futex ping-pong, POSIX message queues, pipes, "
	  "Unix sockets, memcpy) and print the ratios; uses scratch windows of "
	  "its own", 0 },
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct bench_opts *o = st->input;

	switch (key) {
	case ARGP_KEY_INIT:
		st->child_inputs[0] = &o->s;
		break;
	case OPT_SIZE:
		o->nsizes = arg_sizes(st, "--size", arg, o->sizes, MAX_SIZES);
		break;
	case OPT_COUNT:
		o->count = arg_u32(st, "--count", arg, 1, UINT32_MAX);
		break;
	case OPT_BASELINE:
		o->baseline = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(st, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (o->baseline && o->s.peer_mode)
			argp_error(st, "--baseline runs both halves on scratch "
				   "windows of its own; not with --peer");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp_child children[] = {
	{ &session_argp, 0, "Measurement options:", 2 },
	{ 0 }
};

static const struct argp argp = {
	options, parse, NULL,
	"Stream messages from this board (--board) to a peer board, which "
	"drains and checks them, for each size: messages and MB per second and "
	"the CPU time of each side.  Both boards run here unless --peer.  "
	"Ctrl-C stops and prints what was measured.", children, NULL, NULL
};

static uint64_t auto_count(size_t size)
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

static int rounds(struct session *s, void *arg)
{
	struct bench_opts *o = arg;
	struct run_info ri = { "bench", s, { o->s.cpu[0], o->s.cpu[1] }, false,
			       "" };
	int rc = 0;

	if (!o->nsizes) {
		o->sizes[o->nsizes++] = 0;
		for (size_t z = 1; z <= (1u << 20) && z <= s->entry_size;
		     z *= 2)
			o->sizes[o->nsizes++] = z;
	}
	for (int k = 0; k < o->nsizes && !measure_interrupted; k++) {
		size_t z = o->sizes[k];
		if ((rc = stream_size(s, z, o->count ? o->count : auto_count(z),
				      &o->results[o->nresults])))
			break;
		o->nresults++;
	}
	ri.interrupted = measure_interrupted;
	session_predict(s, o->results, o->nresults, ri.prediction,
			sizeof(ri.prediction));
	if (o->nresults)
		results_print(s->ctx, &o->s, &ri, o->results, o->nresults, false);
	return rc ? rc : measure_interrupted ? 1 : 0;
}

/* ---- --baseline ---- */

/* What a scratch session measures: a list of (kind, size, count). */
struct job {
	bool stream;
	size_t size;
	uint64_t count;
	struct result *out;
};
struct jobs {
	struct job *job;
	int n;
};

static int run_jobs(struct session *s, void *arg)
{
	struct jobs *js = arg;

	for (int i = 0; i < js->n && !measure_interrupted; i++) {
		struct job *j = &js->job[i];
		int rc = j->stream ? stream_size(s, j->size, j->count, j->out)
				   : pingpong_size(s, j->size, j->count, 0, false,
						   j->out);
		if (rc)
			return rc;
	}
	return 0;
}

/* Formats a scratch window of its own, runs the jobs on it, removes it. */
static int scratch_run(struct ctx *ctx, struct session_opts *so, int mode,
		       uint32_t entries, uint32_t entry_size, struct jobs *js)
{
	char path[128], spec[160];
	struct smq_geometry g = { 2, 2, entries, entry_size, NULL };
	struct smq_window *w;
	int err;

	snprintf(path, sizeof(path), "/dev/shm/smq-bench-%d-%u-%u", (int)getpid(),
		 entries, entry_size);
	snprintf(spec, sizeof(spec), "file:%s", path);
	unlink(path);
	err = smq_open(&w, spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW);
	if (!err) {
		err = smq_init(w, &g);
		smq_close(w);
	}
	if (err) {
		unlink(path);
		return say_error("scratch window %s: %s", spec, smq_strerror(err));
	}
	if (isatty(2))
		fprintf(stderr, "\r\033[Kbench --baseline: smq, %s, %u entries of %u "
			"bytes", mode_name(mode), entries, entry_size);
	struct ctx sc = *ctx;
	struct session_opts o = *so;
	sc.window = spec;
	sc.board = 0;
	o.mode = mode;
	o.peer_mode = false;
	o.peer_board = 1;
	/* its own window: its application queues, of the size measured */
	o.queues[0] = 0;
	o.queues[1] = 1;
	o.force = true;
	o.sizes = NULL;
	o.nsizes = 0;
	int rc = session_main(&sc, &o, run_jobs, js);
	unlink(path);
	return rc;
}

/* One comparison: smq's figure against a baseline's. */
struct row {
	char what[48];
	const char *unit;       /* "ns", "msgs/s", "MB/s" */
	double smq, base;
	const char *base_name;
	bool lower_better;      /* latencies */
	double target;          /* the ratio smq/base to reach; NAN: none,
				   the row is for information */
};

static double row_ratio(const struct row *r)
{
	return r->base > 0 ? r->smq / r->base : NAN;
}

/* 1 holds, 0 does not, -1 no target */
static int row_holds(const struct row *r)
{
	double ratio = row_ratio(r);

	if (isnan(r->target))
		return -1;
	return r->lower_better ? ratio <= r->target : ratio >= r->target;
}

static const char *const row_keys[] = {
	"measure", "unit", "smq", "baseline", "baseline_value", "ratio",
	"better", "target", "holds",
};

static void rows_json(int a, int b, bool interrupted,
		      const struct result *const *m, int nm,
		      const struct row *r, int n)
{
	struct json j;

	json_open(&j, stdout);
	json_begin(&j, NULL, '{');
	json_str(&j, "command", "bench");
	json_bool(&j, "baseline", true);
	if (a >= 0)
		json_i64(&j, "cpu_a", a);
	else
		json_double(&j, "cpu_a", NAN, 0);
	if (b >= 0)
		json_i64(&j, "cpu_b", b);
	else
		json_double(&j, "cpu_b", NAN, 0);
	json_bool(&j, "interrupted", interrupted);
	json_begin(&j, "measurements", '[');
	for (int i = 0; i < nm; i++)
		result_row(&j, m[i], m[i]->has_latency);
	json_end(&j, ']');
	json_begin(&j, "comparisons", '[');
	for (int i = 0; i < n; i++) {
		int holds = row_holds(&r[i]);
		json_begin(&j, NULL, '{');
		json_str(&j, row_keys[0], r[i].what);
		json_str(&j, row_keys[1], r[i].unit);
		json_double(&j, row_keys[2], r[i].smq, 3);
		json_str(&j, row_keys[3], r[i].base_name);
		json_double(&j, row_keys[4], r[i].base, 3);
		json_double(&j, row_keys[5], row_ratio(&r[i]), 6);
		json_str(&j, row_keys[6], r[i].lower_better ? "lower" : "higher");
		json_double(&j, row_keys[7], r[i].target, 2);
		if (holds < 0)
			json_double(&j, row_keys[8], NAN, 0);
		else
			json_bool(&j, row_keys[8], holds);
		json_end(&j, '}');
	}
	json_end(&j, ']');
	json_end(&j, '}');
	json_close(&j);
}

/* A figure for CSV, empty when not known. */
static void csv_num(double v, int decimals)
{
	if (isfinite(v))
		printf(",%.*f", decimals, v);
	else
		fputs(",", stdout);
}

/* A CSV field: quoted when it holds a comma or a quote ("memcpy, one
 * core"). */
static void csv_str(const char *sep, const char *s)
{
	fputs(sep, stdout);
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

static void rows_csv(const struct row *r, int n)
{
	for (size_t k = 0; k < sizeof(row_keys) / sizeof(row_keys[0]); k++)
		printf("%s%s", k ? "," : "", row_keys[k]);
	putchar('\n');
	for (int i = 0; i < n; i++) {
		int holds = row_holds(&r[i]);
		csv_str("", r[i].what);
		csv_str(",", r[i].unit);
		csv_num(r[i].smq, 3);
		csv_str(",", r[i].base_name);
		csv_num(r[i].base, 3);
		csv_num(row_ratio(&r[i]), 6);
		printf(",%s", r[i].lower_better ? "lower" : "higher");
		csv_num(r[i].target, 2);
		printf(",%s\n", holds < 0 ? "" : holds ? "true" : "false");
	}
}

static void rows_text(const struct row *r, int n)
{
	printf("\n%-30s %12s  %-24s %12s %8s %8s %5s\n", "MEASURE", "SMQ",
	       "BASELINE", "VALUE", "RATIO", "TARGET", "HOLDS");
	for (int i = 0; i < n; i++) {
		int holds = row_holds(&r[i]);
		char target[16] = "-";
		if (holds >= 0)
			snprintf(target, sizeof(target), "%s%.2gx",
				 r[i].lower_better ? "<=" : ">=", r[i].target);
		/* rounded toward missing the target, so that a ratio of
		 * 0.7996 shows 0.79x beside its NO, not 0.80x */
		double ratio = row_ratio(&r[i]);
		ratio = r[i].lower_better ? ceil(ratio * 100) / 100
					  : floor(ratio * 100) / 100;
		printf("%-30s %12.2f  %-24s %12.2f %7.2fx %8s %5s\n", r[i].what,
		       r[i].smq, r[i].base_name, r[i].base, ratio, target,
		       holds < 0 ? "-" : holds ? "yes" : "NO");
	}
	printf("latencies are median half round trips in ns; rates in "
	       "messages/s per direction or MB/s; rows without a target are "
	       "for information\n");
}

/* Same slots as smq's scratch windows: 256 of 1 KiB for small messages;
 * for big ones, slots of their own size, 2 MiB of them, at least 4. */
#define SMALL_ENTRIES 256
#define SMALL_ENTRY_SIZE 1024
static uint32_t big_entries(size_t size)
{
	uint32_t n = (uint32_t)((2u << 20) / size);
	return n < 4 ? 4 : n;
}

static int baseline(struct ctx *ctx, struct bench_opts *o)
{
	/* The SimpleMessageQueue paper's busy-polling ping-pong over the
	 * Intel 21554 bridge (its figure 10), messages/s per direction. */
	enum { NP = 4 };
	static const size_t paper_size[NP] = { 0, 10, 100, 1000 };
	static const double paper_rate[NP] = { 45400, 43150, 36750, 14450 };
	enum { NB = 3 };
	static const size_t big[NB] = { 65536, 262144, 1048576 };
	/* poll ping-pongs: 0 and 64 B against the cache line, and the paper's
	 * sizes (0 B is measured once, for both) */
	static const size_t poll_size[] = { 0, 64, 10, 100, 1000 };
	enum { NPOLL = sizeof(poll_size) / sizeof(poll_size[0]) };
	struct result poll[NPOLL], sleep_[2], st64, stbig[NB];
	struct result cl, fx, rg64, rgbig[NB], mq, ux, pp, mc[NB];
	const char *why = NULL;
	uint64_t n = o->count;
	uint64_t pp_count = n ? n : 200000, sl_count = n ? n : 20000;
	uint64_t st_count = n ? n : 1000000, sys_count = n ? n : 200000;
	uint64_t big_count[NB];
	int rc;

	for (int i = 0; i < NB; i++)
		big_count[i] = n ? n : auto_count(big[i]) * 2;
	if (!o->s.cpu_set) {
		o->s.cpu[0] = cpu_pick(0);
		o->s.cpu[1] = cpu_pick(1);
		o->s.cpu_set = true;
	}
	/* the busy-polling measurements decide */
	if ((rc = session_cpu_check(&o->s, true)))
		return rc;
	o->s.cpu_checked = true;
	int a = o->s.cpu[0], b = o->s.cpu[1];
	measure_signals();

	/* Each baseline right after the smq figure it is compared with, so
	 * that the load of a shared machine, which drifts, is about the same
	 * for both.  smq: small entries for small messages, big ones for big. */
	struct job pj[NPOLL], sj[2], tj[1], bj[NB];
	for (int i = 0; i < NPOLL; i++)
		pj[i] = (struct job){ false, poll_size[i], pp_count, &poll[i] };
	for (int i = 0; i < 2; i++)
		sj[i] = (struct job){ false, i ? 64 : 0, sl_count, &sleep_[i] };
	tj[0] = (struct job){ true, 64, st_count, &st64 };
	for (int i = 0; i < NB; i++)
		bj[i] = (struct job){ true, big[i], big_count[i], &stbig[i] };
	struct jobs jp = { pj, NPOLL }, js = { sj, 2 }, jt = { tj, 1 };
#define BASE(call, name) do { why = NULL; \
		if (isatty(2)) \
			fprintf(stderr, "\r\033[Kbench --baseline: %s", name); \
		if ((rc = (call))) \
			return say_error("baseline %s: %s", name, why ? why : strerror(-rc)); \
	} while (0)
	if ((rc = scratch_run(ctx, &o->s, SMQ_POLL, SMALL_ENTRIES,
			      SMALL_ENTRY_SIZE, &jp)))
		return rc;
	BASE(baseline_cacheline_pingpong(a, b, pp_count, &cl, &why), "cache line");
	if ((rc = scratch_run(ctx, &o->s, SMQ_SLEEP, SMALL_ENTRIES,
			      SMALL_ENTRY_SIZE, &js)))
		return rc;
	BASE(baseline_futex_pingpong(a, b, sl_count, &fx, &why), "futex");
	if ((rc = scratch_run(ctx, &o->s, 0, SMALL_ENTRIES, SMALL_ENTRY_SIZE,
			      &jt)))
		return rc;
	struct ring_params rp = { .size = 64, .slot_size = SMALL_ENTRY_SIZE,
				  .slots = SMALL_ENTRIES, .count = st_count,
				  .cpu_a = a, .cpu_b = b };
	BASE(baseline_ring(&rp, &rg64, &why), "two-core ring");
	BASE(baseline_stream(STREAM_MQUEUE, 64, sys_count, a, b, &mq, &why),
	     "POSIX message queue");
	BASE(baseline_stream(STREAM_UNIX, 64, sys_count, a, b, &ux, &why),
	     "Unix socket");
	BASE(baseline_stream(STREAM_PIPE, 64, sys_count, a, b, &pp, &why), "pipe");
	for (int i = 0; i < NB; i++) {
		struct jobs one = { &bj[i], 1 };
		if ((rc = scratch_run(ctx, &o->s, 0, big_entries(big[i]),
				      (uint32_t)big[i], &one)))
			return rc;
		rp = (struct ring_params){ .size = big[i], .slot_size = big[i],
					   .slots = big_entries(big[i]),
					   .count = big_count[i], .cpu_a = a,
					   .cpu_b = b };
		BASE(baseline_ring(&rp, &rgbig[i], &why), "two-core ring");
		BASE(baseline_memcpy(big[i], n ? n * big[i] : 1ull << 30, &mc[i],
				     &why), "memcpy");
	}
#undef BASE
	if (isatty(2))
		fputs("\r\033[K", stderr);

	struct row rows[32];
	int nr = 0;
	for (int i = 0; i < 2; i++)
		rows[nr++] = (struct row){ "", "ns", poll[i].half_rtt.median,
			cl.half_rtt.median, "cache-line ping-pong", true, 2.0 };
	snprintf(rows[nr - 2].what, sizeof(rows[0].what), "poll half RTT, 0 B");
	snprintf(rows[nr - 1].what, sizeof(rows[0].what), "poll half RTT, 64 B");
	for (int i = 0; i < 2; i++)
		rows[nr++] = (struct row){ "", "ns", sleep_[i].half_rtt.median,
			fx.half_rtt.median, "futex ping-pong", true, 1.3 };
	snprintf(rows[nr - 2].what, sizeof(rows[0].what), "sleep half RTT, 0 B");
	snprintf(rows[nr - 1].what, sizeof(rows[0].what), "sleep half RTT, 64 B");
	rows[nr++] = (struct row){ "stream 64 B", "msgs/s", st64.msgs_per_s,
				   rg64.msgs_per_s, "two-core ring", false, 0.8 };
	rows[nr++] = (struct row){ "stream 64 B", "msgs/s", st64.msgs_per_s,
				   mq.msgs_per_s, "POSIX mqueue", false, 10 };
	rows[nr++] = (struct row){ "stream 64 B", "msgs/s", st64.msgs_per_s,
				   ux.msgs_per_s, "Unix socket", false, 5 };
	rows[nr++] = (struct row){ "stream 64 B", "msgs/s", st64.msgs_per_s,
				   pp.msgs_per_s, "pipe", false, 1 };
	for (int i = 0; i < NB; i++) {
		struct row *r = &rows[nr++];
		*r = (struct row){ "", "MB/s", stbig[i].mb_per_s, rgbig[i].mb_per_s,
				   "two-core ring", false, 0.8 };
		snprintf(r->what, sizeof(r->what), "stream %zu KiB", big[i] / 1024);
	}
	for (int i = 0; i < NB; i++) {
		struct row *r = &rows[nr++];
		*r = (struct row){ "", "MB/s", stbig[i].mb_per_s, mc[i].mb_per_s,
				   "memcpy, one core", false, NAN };
		snprintf(r->what, sizeof(r->what), "stream %zu KiB", big[i] / 1024);
	}
	for (int i = 0; i < NP; i++) {
		struct row *r = &rows[nr++];
		const struct result *p = &poll[0];
		for (int k = 0; k < NPOLL; k++)
			if (poll_size[k] == paper_size[i])
				p = &poll[k];
		*r = (struct row){ "", "msgs/s", p->msgs_per_s, paper_rate[i],
				   "SMQ over 21554, fig. 10", false, 30 };
		snprintf(r->what, sizeof(r->what), "poll ping-pong %zu B",
			 paper_size[i]);
	}

	const struct result *m[] = {
		&poll[0], &poll[1], &poll[2], &poll[3], &poll[4], &sleep_[0],
		&sleep_[1], &st64, &stbig[0], &stbig[1], &stbig[2], &cl, &fx,
		&rg64, &rgbig[0], &rgbig[1], &rgbig[2], &mq, &ux, &pp, &mc[0],
		&mc[1], &mc[2],
	};
	int nm = (int)(sizeof(m) / sizeof(m[0]));
	if (ctx->json) {
		rows_json(a, b, measure_interrupted, m, nm, rows, nr);
	} else if (o->s.csv) {
		rows_csv(rows, nr);
	} else {
		char c0[16], c1[16];
		printf("smq against baselines measured in this run, CPUs %s and %s\n",
		       cpu_name(a, c0), cpu_name(b, c1));
		printf("cache-line ping-pong %.0f ns half RTT (%.0f/s per "
		       "direction); futex ping-pong %.0f ns\n", cl.half_rtt.median,
		       cl.msgs_per_s, fx.half_rtt.median);
		rows_text(rows, nr);
	}
	return measure_interrupted ? 1 : 0;
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	static struct bench_opts o;
	int rc;

	session_opts_init(&o.s);
	o.s.mode = 0;  /* streaming: spin, then sleep */
	parse_cmd(&argp, argc, argv, &o, ctx);
	if ((rc = session_opts_check(ctx, &o.s)))
		return rc;
	if (o.baseline)
		return baseline(ctx, &o);
	o.s.sizes = o.sizes;
	o.s.nsizes = o.nsizes;
	return session_main(ctx, &o.s, rounds, &o);
}

const struct cmd cmd_bench = { "bench", run, &argp,
			       "measure streaming throughput" };
