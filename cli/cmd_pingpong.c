/* smqctl pingpong: two boards bounce messages of each size, as the
 * SimpleMessageQueue paper measured over the Intel 21554 bridge (its
 * figures 7 and 10): messages per second per direction, half round trip
 * latency, CPU time of each side. */
#include <string.h>
#include "measure/session.h"

struct pingpong_opts {
	struct session_opts s;
	struct size_opts sz;
	int duration_ms;
	struct result results[MAX_SIZES];
	int nresults;
};

enum { OPT_DURATION = 0x300, OPT_HIST };

/* the help of --size and --count, which size_argp parses */
static const char size_doc[] =
	"Message sizes in bytes, e.g. 0,64,4K (default 0,10,100,1000, the "
	"sizes of the SimpleMessageQueue paper's ping-pong over the Intel "
	"21554)";
static const char count_doc[] = "Round trips per size (default 100000)";

static const struct argp_option options[] = {
	{ "duration", OPT_DURATION, "TIME", 0,
	  "Bounce each size for TIME instead of a count", 0 },
	{ "histogram", OPT_HIST, NULL, 0,
	  "Draw a histogram of the half round trips of each size (in the "
	  "table, or in --json)", 0 },
	{ 0 }
};

static error_t parse_own(int key, char *arg, struct argp_state *st)
{
	struct pingpong_opts *o = st->input;

	switch (key) {
	case OPT_DURATION:
		o->duration_ms = arg_duration(st, "--duration", arg);
		if (o->duration_ms <= 0)
			argp_error(st, "--duration must be more than 0 and finite");
		break;
	case OPT_HIST:
		o->s.histogram = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* pingpong's own options: the children list them after --size and
 * --count, where --list-opts has always had them */
static const struct argp own_argp = { options, parse_own, NULL, NULL, NULL,
				      NULL, NULL };

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct pingpong_opts *o = st->input;

	if (key == ARGP_KEY_END && o->sz.count && o->duration_ms)
		argp_error(st, "--count and --duration exclude each other");
	if (key == ARGP_KEY_END && o->s.histogram && o->s.csv)
		argp_error(st, "--histogram is drawn in the table or given "
			   "in --json; CSV has one line per size");
	return measure_cmd_parse(key, arg, st, &o->sz, o, &o->s);
}

static const struct argp_child children[] =
	MEASURE_CMD_CHILDREN(own_argp);

static const struct argp argp = {
	NULL, parse, NULL,
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
			       false, "", &o->s.how };
	int rc = 0;

	for (int k = 0; k < o->sz.nsizes && !measure_interrupted; k++) {
		struct result *r = &o->results[o->nresults];
		if ((rc = pingpong_size(s, o->sz.sizes[k], o->sz.count,
					o->duration_ms, o->s.histogram,
					&o->s.how, r)))
			break;
		if (table && r->has_histogram) {
			printf("%zu bytes: ", r->size);
			histogram_print(r->histogram);
		}
		o->nresults++;
	}
	return rounds_report(s, &o->s, &ri, o->results, o->nresults, true, rc);
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	static struct pingpong_opts o;
	/* the sizes of the SimpleMessageQueue paper's figures 7 and 10 */
	static const size_t paper_sizes[] = { 0, 10, 100, 1000 };
	int rc;

	session_opts_init(&o.s);
	o.sz.size_doc = size_doc;
	o.sz.count_doc = count_doc;
	parse_cmd(&argp, argc, argv, &o, ctx);
	if ((rc = session_opts_check(ctx, &o.s)))
		return rc;
	if (!o.sz.nsizes) {
		memcpy(o.sz.sizes, paper_sizes, sizeof(paper_sizes));
		o.sz.nsizes = 4;
	}
	if (!o.sz.count && !o.duration_ms)
		o.sz.count = 100000;
	o.s.sizes = o.sz.sizes;
	o.s.nsizes = o.sz.nsizes;
	return session_main(ctx, &o.s, rounds, &o);
}

const struct cmd cmd_pingpong = { "pingpong", run, &argp,
				  "measure ping-pong rate and latency" };
