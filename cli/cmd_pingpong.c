/* smqctl pingpong: two boards bounce messages of each size, as the
 * SimpleMessageQueue paper measured over the Intel 21554 bridge (its
 * figures 7 and 10): messages per second per direction, half round trip
 * latency, CPU time of each side. */
#include <string.h>
#include "measure/session.h"

struct pingpong_opts {
	struct session_opts s;
	size_t sizes[MAX_SIZES];
	int nsizes;
	uint64_t count;
	int duration_ms;
	struct result results[MAX_SIZES];
	int nresults;
};

enum { OPT_SIZE = 'z', OPT_COUNT = 'c', OPT_DURATION = 0x300, OPT_HIST };

static const struct argp_option options[] = {
	{ "size", OPT_SIZE, "LIST", 0,
	  "Message sizes in bytes, e.g. 0,64,4K (default 0,10,100,1000, the "
	  "sizes of the SimpleMessageQueue paper's ping-pong over the Intel "
	  "21554)", 0 },
	{ "count", OPT_COUNT, "N", 0, "Round trips per size (default 100000)", 0 },
	{ "duration", OPT_DURATION, "TIME", 0,
	  "Bounce each size for TIME instead of a count", 0 },
	{ "histogram", OPT_HIST, NULL, 0,
	  "Draw a histogram of the half round trips of each size (in the "
	  "table, or in --json)", 0 },
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct pingpong_opts *o = st->input;

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
	case OPT_DURATION:
		o->duration_ms = arg_duration(st, "--duration", arg);
		if (o->duration_ms <= 0)
			argp_error(st, "--duration must be more than 0 and finite");
		break;
	case OPT_HIST:
		o->s.histogram = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(st, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (o->count && o->duration_ms)
			argp_error(st, "--count and --duration exclude each other");
		if (o->s.histogram && o->s.csv)
			argp_error(st, "--histogram is drawn in the table or given "
				   "in --json; CSV has one line per size");
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
	"Bounce messages between this board (--board) and a peer board, for "
	"each size: messages per second per direction, half round trip latency "
	"(min, mean, median, p95, p99, p99.9, max) and the CPU time of each "
	"side.  By default both boards run here, the peer in a second process "
	"pinned to another CPU; with --peer only this board's half runs, "
	"against the same command on the peer board.  Ctrl-C stops and prints "
	"what was measured.", children, NULL, NULL
};

static int rounds(struct session *s, void *arg)
{
	struct pingpong_opts *o = arg;
	bool table = !s->ctx->json && !o->s.csv;
	struct run_info ri = { "pingpong", s, { o->s.cpu[0], o->s.cpu[1] },
			       false, "" };
	int rc = 0;

	for (int k = 0; k < o->nsizes && !measure_interrupted; k++) {
		struct result *r = &o->results[o->nresults];
		if ((rc = pingpong_size(s, o->sizes[k], o->count, o->duration_ms,
					o->s.histogram, r)))
			break;
		if (table && r->has_histogram) {
			printf("%zu bytes: ", r->size);
			histogram_print(r->histogram);
		}
		o->nresults++;
	}
	ri.interrupted = measure_interrupted;
	session_predict(s, o->results, o->nresults, ri.prediction,
			sizeof(ri.prediction));
	if (o->nresults)
		results_print(s->ctx, &o->s, &ri, o->results, o->nresults, true);
	return rc ? rc : measure_interrupted ? 1 : 0;
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	static struct pingpong_opts o;
	/* the sizes of the SimpleMessageQueue paper's figures 7 and 10 */
	static const size_t paper_sizes[] = { 0, 10, 100, 1000 };
	int rc;

	session_opts_init(&o.s);
	parse_cmd(&argp, argc, argv, &o, ctx);
	if ((rc = session_opts_check(ctx, &o.s)))
		return rc;
	if (!o.nsizes) {
		memcpy(o.sizes, paper_sizes, sizeof(paper_sizes));
		o.nsizes = 4;
	}
	if (!o.count && !o.duration_ms)
		o.count = 100000;
	o.s.sizes = o.sizes;
	o.s.nsizes = o.nsizes;
	return session_main(ctx, &o.s, rounds, &o);
}

const struct cmd cmd_pingpong = { "pingpong", run, &argp,
				  "measure ping-pong rate and latency" };
