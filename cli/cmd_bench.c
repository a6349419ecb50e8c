/* smqctl bench: one board streams, the other drains: messages and MB per
 * second for each size, from 0 bytes to 1 MiB.  With --baseline: smq beside
 * the baselines measured in the same run, on the same two CPUs. */
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
		uint64_t n = o->count ? o->count : stream_auto_count(z);
		if ((rc = stream_size(s, z, n, &o->results[o->nresults])))
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
		return baseline_compare(ctx, &o.s, o.count);
	o.s.sizes = o.sizes;
	o.s.nsizes = o.nsizes;
	return session_main(ctx, &o.s, rounds, &o);
}

const struct cmd cmd_bench = { "bench", run, &argp,
			       "measure streaming throughput" };
