/* smqctl bench: one board streams, the other drains: messages and MB per
 * second for each size (seed 002's table 1, seed 004's sweep).  With
 * --baseline: smq beside the baselines measured in the same run. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "session.h"

struct bench_opts {
	struct session_opts s;
	size_t sizes[MAX_SIZES];
	int nsizes;
	uint64_t count;
	bool baseline;
	struct result results[MAX_SIZES];
	int nresults;
};

enum { OPT_SIZE = 's', OPT_COUNT = 'c', OPT_BASELINE = 0x400 };

static const struct argp_option options[] = {
	{ "size", OPT_SIZE, "LIST", 0,
	  "Message sizes, e.g. 64,4K,1M (default 0, then doubling from 1 byte "
	  "to 1 MiB or the window's entry size)", 0 },
	{ "count", OPT_COUNT, "N", 0,
	  "Messages per size (default: 256 MiB worth, 500 to 1000000)", 0 },
	{ "baseline", OPT_BASELINE, NULL, 0,
	  "Measure smq beside the baselines on this machine (cache-line and "
	  "futex ping-pong, memcpy, POSIX message queues, pipes, Unix sockets) "
	  "and print the ratios; uses scratch windows of its own", 0 },
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
		if (o->baseline && o->s.csv)
			argp_error(st, "--baseline prints a table, or --json; not --csv");
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
	uint64_t start = now_ns();
	double cpu0 = cpu_seconds();
	for (i = 0; i < count && !measure_interrupted; i++) {
		session_fill(s->buf, size, i);
		if ((err = smq_send(s->tx, s->buf, size, s->timeout_ms)))
			break;
		if ((i & 0xffff) == 0)
			progress("bench", i, count);
	}
	progress_end();
	double cpu = cpu_seconds() - cpu0;
	if (!err && i < count)
		err = session_stop(s);
	if (!err)
		err = session_report(s, &rep);
	uint64_t stop = now_ns();
	if (err)
		return window_error(s->ctx, "bench", err);
	if (rep.errors || rep.count != i)
		return error("bench of %zu bytes: %" PRIu64 " sent, %" PRIu64
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
	r->cpu_b = rep.cpu;
	r->seconds_b = rep.wall;
	return 0;
}

static int rounds(struct session *s, void *arg)
{
	struct bench_opts *o = arg;
	char title[1024], c0[16], c1[16];
	int rc = 0;

	if (!o->nsizes) {
		o->sizes[o->nsizes++] = 0;
		for (size_t z = 1; z <= (1u << 20) && z <= s->wi.geometry.entry_size;
		     z *= 2)
			o->sizes[o->nsizes++] = z;
	}
	for (int k = 0; k < o->nsizes && !measure_interrupted; k++) {
		size_t z = o->sizes[k];
		if (z > s->wi.geometry.entry_size) {
			rc = error("size %zu is larger than the entry size %u of %s",
				   z, s->wi.geometry.entry_size, s->wi.name);
			break;
		}
		if ((rc = stream_size(s, z, o->count ? o->count : auto_count(z),
				      &o->results[o->nresults])))
			break;
		o->nresults++;
	}
	char note[256];
	session_predict(s, o->results, o->nresults, note, sizeof(note));
	snprintf(title, sizeof(title), "bench on %s: board %u (cpu %s) -> board "
		 "%u (cpu %s), queue %u, mode %s%s\n%s", s->wi.name, s->self,
		 cpu_name(o->s.cpu[0], c0), s->peer, cpu_name(o->s.cpu[1], c1),
		 s->q_peer, mode_name(s->mode),
		 measure_interrupted ? " (interrupted)" : "", note);
	if (o->nresults)
		results_print(s->ctx, &o->s, title, o->results, o->nresults, false);
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
		return error("scratch window %s: %s", spec, smq_strerror(err));
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
	o.queues[0] = o.queues[1] = -1;
	int rc = session_main(&sc, &o, run_jobs, js);
	unlink(path);
	return rc;
}

struct row {
	const char *what;
	double smq, base;       /* the figures compared */
	const char *base_name;
	bool lower_better;      /* latency: smq/base; rates: smq/base too */
	double target;          /* ratio that must hold */
	const char *unit;
};

static void print_rows(struct ctx *ctx, const struct row *r, int n)
{
	if (ctx->json) {
		printf("{\"baseline\": [\n");
		for (int i = 0; i < n; i++) {
			double ratio = r[i].base > 0 ? r[i].smq / r[i].base : 0;
			bool holds = r[i].lower_better ? ratio <= r[i].target
						       : ratio >= r[i].target;
			printf("  {\"what\": \"%s\", \"unit\": \"%s\", \"smq\": %.3f, "
			       "\"baseline\": \"%s\", \"baseline_value\": %.3f, "
			       "\"ratio\": %.3f, \"target\": \"%s%.2f\", \"holds\": "
			       "%s}%s\n", r[i].what, r[i].unit, r[i].smq,
			       r[i].base_name, r[i].base, ratio,
			       r[i].lower_better ? "<=" : ">=", r[i].target,
			       holds ? "true" : "false", i + 1 < n ? "," : "");
		}
		printf("]}\n");
		return;
	}
	printf("\n%-38s %12s  %-22s %12s %8s %8s %5s\n", "MEASURE", "SMQ",
	       "BASELINE", "VALUE", "RATIO", "TARGET", "HOLDS");
	for (int i = 0; i < n; i++) {
		double ratio = r[i].base > 0 ? r[i].smq / r[i].base : 0;
		bool holds = r[i].lower_better ? ratio <= r[i].target
					       : ratio >= r[i].target;
		char target[16];
		snprintf(target, sizeof(target), "%s%.2gx",
			 r[i].lower_better ? "<=" : ">=", r[i].target);
		printf("%-38s %12.2f  %-22s %12.2f %7.2fx %8s %5s\n", r[i].what,
		       r[i].smq, r[i].base_name, r[i].base, ratio, target,
		       holds ? "yes" : "NO");
	}
	printf("latencies are median half round trips in ns; rates in "
	       "messages/s per direction or MB/s\n");
}

static int baseline(struct ctx *ctx, struct bench_opts *o)
{
	enum { N = 4 };
	static const size_t seed_size[N] = { 0, 10, 100, 1000 };
	static const double seed_rate[N] = { 45400, 43150, 36750, 14450 };
	static const size_t big[] = { 65536, 262144, 1048576 };
	struct result poll[2 + N], sleep_[2], st64, stbig[3];
	struct result cl, fx, mq, ux, pp, mc[3];
	const char *why = NULL;
	uint64_t pp_count = o->count ? o->count : 200000;
	int rc;

	if (!o->s.cpu_set) {
		o->s.cpu[0] = cpu_pick(0);
		o->s.cpu[1] = cpu_pick(1);
		o->s.cpu_set = true;
	}
	int a = o->s.cpu[0], b = o->s.cpu[1];
	measure_signals();

	/* smq: small entries for small messages, big ones for big */
	struct job pj[2 + N], sj[2], tj[1], bj[3];
	for (int i = 0; i < 2; i++) {
		pj[i] = (struct job){ false, i ? 64 : 0, pp_count, &poll[i] };
		sj[i] = (struct job){ false, i ? 64 : 0, pp_count / 10, &sleep_[i] };
	}
	for (int i = 0; i < N; i++)
		pj[2 + i] = (struct job){ false, seed_size[i], pp_count, &poll[2 + i] };
	tj[0] = (struct job){ true, 64, 1000000, &st64 };
	for (int i = 0; i < 3; i++)
		bj[i] = (struct job){ true, big[i], auto_count(big[i]) * 2, &stbig[i] };
	struct jobs jp = { pj, 2 + N }, js = { sj, 2 }, jt = { tj, 1 };
	if ((rc = scratch_run(ctx, &o->s, SMQ_POLL, 256, 1024, &jp)) ||
	    (rc = scratch_run(ctx, &o->s, SMQ_SLEEP, 256, 1024, &js)) ||
	    (rc = scratch_run(ctx, &o->s, 0, 256, 1024, &jt)))
		return rc;
	/* big messages: entries of their own size, a ring of 2 to 4 MiB */
	for (int i = 0; i < 3; i++) {
		struct jobs one = { &bj[i], 1 };
		uint32_t entries = (uint32_t)((2u << 20) / big[i]);
		if ((rc = scratch_run(ctx, &o->s, 0, entries < 4 ? 4 : entries,
				      (uint32_t)big[i], &one)))
			return rc;
	}

	/* the baselines, same CPUs, same run */
#define BASE(call, name) do { why = NULL; \
		if (isatty(2)) \
			fprintf(stderr, "\r\033[Kbench --baseline: %s", name); \
		if ((rc = (call))) \
			return error("baseline %s: %s", name, why ? why : strerror(-rc)); \
	} while (0)
	BASE(baseline_cacheline_pingpong(a, b, pp_count, &cl, &why), "cache line");
	BASE(baseline_futex_pingpong(a, b, pp_count / 10, &fx, &why), "futex");
	BASE(baseline_stream(STREAM_MQUEUE, 64, 200000, a, b, &mq, &why),
	     "POSIX message queue");
	BASE(baseline_stream(STREAM_UNIX, 64, 200000, a, b, &ux, &why),
	     "Unix socket");
	BASE(baseline_stream(STREAM_PIPE, 64, 200000, a, b, &pp, &why), "pipe");
	for (int i = 0; i < 3; i++)
		BASE(baseline_memcpy(big[i], 1ull << 30, &mc[i], &why), "memcpy");
#undef BASE
	if (isatty(2))
		fputs("\r\033[K", stderr);

	struct row rows[32];
	int n = 0;
	char *names[16];
	int nn = 0;
	for (int i = 0; i < 2; i++) {
		rows[n++] = (struct row){ i ? "poll half RTT, 64 B (ns)"
					    : "poll half RTT, 0 B (ns)",
			poll[i].half_rtt.median, cl.half_rtt.median,
			"cache-line ping-pong", true, 2.0, "ns" };
	}
	for (int i = 0; i < 2; i++)
		rows[n++] = (struct row){ i ? "sleep half RTT, 64 B (ns)"
					    : "sleep half RTT, 0 B (ns)",
			sleep_[i].half_rtt.median, fx.half_rtt.median,
			"futex ping-pong", true, 1.3, "ns" };
	rows[n++] = (struct row){ "stream 64 B (msgs/s)", st64.msgs_per_s,
				  mq.msgs_per_s, "POSIX mqueue", false, 10, "msgs/s" };
	rows[n++] = (struct row){ "stream 64 B (msgs/s)", st64.msgs_per_s,
				  ux.msgs_per_s, "Unix socket", false, 5, "msgs/s" };
	rows[n++] = (struct row){ "stream 64 B (msgs/s)", st64.msgs_per_s,
				  pp.msgs_per_s, "pipe", false, 1, "msgs/s" };
	for (int i = 0; i < 3; i++) {
		char *w = malloc(48);
		snprintf(w, 48, "stream %zu KiB (MB/s)", big[i] / 1024);
		names[nn++] = w;
		rows[n++] = (struct row){ w, stbig[i].mb_per_s, mc[i].mb_per_s,
					  "memcpy, one core", false, 0.7, "MB/s" };
	}
	for (int i = 0; i < N; i++) {
		char *w = malloc(48);
		snprintf(w, 48, "poll ping-pong %zu B (msgs/s/dir)", seed_size[i]);
		names[nn++] = w;
		rows[n++] = (struct row){ w, poll[2 + i].msgs_per_s, seed_rate[i],
					  "seed 000, figure 10", false, 30,
					  "msgs/s" };
	}
	if (!ctx->json) {
		printf("smq against baselines measured in this run, CPUs %d and %d\n",
		       a, b);
		printf("cache-line ping-pong %.0f ns half RTT (%.0f/s per "
		       "direction); futex ping-pong %.0f ns\n", cl.half_rtt.median,
		       cl.msgs_per_s, fx.half_rtt.median);
	}
	print_rows(ctx, rows, n);
	for (int i = 0; i < nn; i++)
		free(names[i]);
	return measure_interrupted ? 1 : 0;
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	static struct bench_opts o;

	session_opts_init(&o.s);
	o.s.mode = 0;  /* streaming: spin, then sleep */
	parse_cmd(&argp, argc, argv, &o, ctx);
	if (o.baseline)
		return baseline(ctx, &o);
	return session_main(ctx, &o.s, rounds, &o);
}

const struct cmd cmd_bench = { "bench", run, &argp,
			       "measure streaming throughput" };
