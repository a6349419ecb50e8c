/* smqctl bench: one board streams, the other drains: messages and MB per
 * second for each size, from 0 bytes to 1 MiB.  With --baseline: smq beside
 * the baselines measured in the same run, on the same two CPUs. */
#include "measure/session.h"

struct bench_opts {
	struct session_opts s;
	struct size_opts sz;
	bool baseline;
	struct result results[MAX_SIZES];
	int nresults;
};

enum { OPT_BASELINE = 0x400 };

/* the help of --size and --count, which size_argp parses */
static const char size_doc[] =
	"Message sizes, e.g. 64,4K,1M (default 0, then doubling from 1 byte "
	"to 1 MiB or the window's entry size)";
static const char count_doc[] =
	"Messages per size (default: 256 MiB worth, 500 to 1000000); with "
	"--baseline, the round trips or messages of every measurement";

static const struct argp_option options[] = {
	{ "baseline", OPT_BASELINE, NULL, 0,
	  "Measure smq beside the limits of this machine (a bare two-core "
	  "ring, cache-line and futex ping-pong, memcpy, the lane lock beside "
	  "CPU hogs) and print the ratios; uses scratch windows of its own", 0 },
	{ 0 }
};

static error_t parse_own(int key, char *arg, struct argp_state *st)
{
	struct bench_opts *o = st->input;

	(void)arg;
	if (key != OPT_BASELINE)
		return ARGP_ERR_UNKNOWN;
	o->baseline = true;
	return 0;
}

/* bench's own options: the children list them after --size and --count,
 * where --list-opts has always had them */
static const struct argp own_argp = { options, parse_own, NULL, NULL, NULL,
				      NULL, NULL };

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct bench_opts *o = st->input;

	if (key == ARGP_KEY_END && o->baseline && o->s.peer_mode)
		argp_error(st, "--baseline runs both halves on scratch "
			   "windows of its own; not with --peer");
	return measure_cmd_parse(key, arg, st, &o->sz, o, &o->s);
}

static const struct argp_child children[] =
	MEASURE_CMD_CHILDREN(own_argp);

static const struct argp argp = {
	NULL, parse, NULL,
	"Stream messages from this board (--board) to a peer board, which "
	"drains and checks them, for each size: messages and MB per second and "
	"the CPU time of each side.  Both boards run here unless --peer.  "
	"Ctrl-C stops and prints what was measured.", children, NULL, NULL
};

static int rounds(struct session *s, void *arg)
{
	struct bench_opts *o = arg;
	struct run_info ri = { "bench", s, { o->s.cpu[0], o->s.cpu[1] }, false,
			       "", &o->s.how };
	int rc = 0;

	if (!o->sz.nsizes) {
		o->sz.sizes[o->sz.nsizes++] = 0;
		for (size_t z = 1; z <= (1u << 20) && z <= s->entry_size;
		     z *= 2)
			o->sz.sizes[o->sz.nsizes++] = z;
	}
	for (int k = 0; k < o->sz.nsizes && !measure_interrupted; k++) {
		size_t z = o->sz.sizes[k];
		uint64_t n = o->sz.count ? o->sz.count : stream_auto_count(z);
		if ((rc = stream_size(s, z, n, &o->s.how,
				       &o->results[o->nresults])))
			break;
		o->nresults++;
	}
	return rounds_report(s, &o->s, &ri, o->results, o->nresults, false,
			     rc);
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	static struct bench_opts o;
	int rc;

	session_opts_init(&o.s);
	o.s.mode = 0;  /* streaming: spin, then sleep */
	o.sz.size_doc = size_doc;
	o.sz.count_doc = count_doc;
	parse_cmd(&argp, argc, argv, &o, ctx);
	if ((rc = session_opts_check(ctx, &o.s)))
		return rc;
	if (o.baseline)
		return baseline_compare(ctx, &o.s, o.sz.count);
	o.s.sizes = o.sz.sizes;
	o.s.nsizes = o.sz.nsizes;
	return session_main(ctx, &o.s, rounds, &o);
}

const struct cmd cmd_bench = { "bench", run, &argp,
			       "measure streaming throughput" };
