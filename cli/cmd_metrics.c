/* smqctl metrics: the window's state as Prometheus text, for unattended
 * monitoring: printed once, written into a directory for node_exporter's
 * textfile collector, or served over HTTP.  The work is in metrics/; this
 * file parses the options. */
#include <string.h>
#include "metrics/metrics.h"

enum { OPT_LISTEN = 0x200, OPT_TEXTFILE };

/* --textfile repeats this often when only --count is given */
#define DEFAULT_INTERVAL_MS 15000

struct metrics_opts {
	const char *listen;
	struct listen_addr addr;
	struct textfile_opts tf;
	bool count_set;
	struct ctx *ctx;
};

static const struct argp_option options[] = {
	{ "listen", OPT_LISTEN, "ADDR:PORT", 0,
	  "Serve the metrics over HTTP at /metrics on ADDR:PORT (PORT alone: "
	  "127.0.0.1) until SIGINT or SIGTERM", 0 },
	{ "textfile", OPT_TEXTFILE, "DIR", 0,
	  "Write the metrics into DIR/smq-WINDOW.prom for node_exporter's "
	  "textfile collector, replacing the file atomically", 0 },
	{ "interval", 'i', "TIME", 0,
	  "With --textfile: write every TIME (e.g. 15s) until SIGINT or "
	  "SIGTERM", 0 },
	{ "count", 'c', "N", 0,
	  "With --textfile: stop after N writes (default interval 15s)", 0 },
	{ 0 }
};

static void check_end(struct metrics_opts *o, struct argp_state *st)
{
	if (o->ctx->json)
		argp_error(st, "--json: metrics are Prometheus text");
	if (o->listen && o->tf.dir)
		argp_error(st, "--listen and --textfile exclude each other");
	if ((o->tf.interval_ms || o->count_set) && !o->tf.dir)
		argp_error(st, "--interval and --count go with --textfile "
			   "(--listen answers each scrape)");
	if (o->count_set && !o->tf.interval_ms)
		o->tf.interval_ms = DEFAULT_INTERVAL_MS;
}

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct metrics_opts *o = st->input;
	char why[200];

	switch (key) {
	case OPT_LISTEN:
		if (listen_addr_parse(arg, &o->addr, why, sizeof(why)))
			argp_error(st, "%s", why);
		o->listen = arg;
		break;
	case OPT_TEXTFILE:
		if (!*arg)
			argp_error(st, "--textfile needs a directory");
		o->tf.dir = arg;
		break;
	case 'i':
		o->tf.interval_ms = arg_duration(st, "--interval", arg);
		if (o->tf.interval_ms <= 0)
			argp_error(st, "--interval needs a time greater than 0, "
				   "not '%s'", arg);
		break;
	case 'c':
		o->tf.count = arg_u32(st, "--count", arg, 1, UINT32_MAX);
		o->count_set = true;
		break;
	case ARGP_KEY_END:
		check_end(o, st);
		break;
	default:
		return no_operands(key, arg, st);
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"Show the window's state as Prometheus text: per queue the messages "
	"and bytes sent and received, doorbells and full waits (counters), "
	"fill and queued messages (gauges); per board its state, whether it "
	"is alive, its heartbeat's age and generation; the window's "
	"generation, system state and format version.  Printed once, or "
	"written into a directory for node_exporter (--textfile), or served "
	"over HTTP (--listen).  Metrics only read the window, as a monitor "
	"that claims no board; a long-running one follows the window through "
	"init, clear and removal (smq_up 0 while there is none).",
	NULL, NULL, NULL
};

/* Once on standard output: exit 1 (after smq_up 0) when the window
 * cannot be read, saying why. */
static int print_once(struct metrics_src *m, struct ctx *ctx)
{
	struct mbuf b = { 0 };

	metrics_read(m);
	metrics_settle(m);
	metrics_expose(m, &b);
	if (b.failed) {
		mbuf_free(&b);
		return say_error("out of memory");
	}
	fwrite(b.p, 1, b.len, stdout);
	mbuf_free(&b);
	return m->err ? window_error(ctx, "cannot read window", m->err) : 0;
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct metrics_opts o = { .ctx = ctx };
	struct metrics_src m;
	int rc;

	parse_cmd(&argp, argc, argv, &o, ctx);
	metrics_src_init(&m, window_spec(ctx));
	if (o.listen)
		rc = metrics_listen(&m, &o.addr);
	else if (o.tf.dir)
		rc = metrics_textfile(&m, &o.tf);
	else
		rc = print_once(&m, ctx);
	metrics_src_free(&m);
	return rc;
}

const struct cmd cmd_metrics = { "metrics", run, &argp,
				 "the window's state as Prometheus metrics" };
