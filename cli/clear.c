/* smqctl clear: empty queues (system board only). */
#include <inttypes.h>
#include "smqctl.h"

struct clear_opts {
	int queue;
};

static const struct argp_option options[] = {
	{ "queue", 'q', "Q", 0, "Empty only queue Q (default: all)", 0 },
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct clear_opts *o = st->input;

	switch (key) {
	case 'q':
		o->queue = (int)arg_u32(st, "--queue", arg, 0, SMQ_MAX_QUEUES - 1);
		break;
	case ARGP_KEY_ARG:
		argp_error(st, "unexpected argument '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"Empty every queue, or one, and bump the generation (system board "
	"only).  Every attached board gets a stale error on its next call and "
	"must attach and synchronise again.", NULL, NULL, NULL
};

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct clear_opts o = { -1 };
	struct smq_window *w;
	int err;

	parse_cmd(&argp, argc, argv, &o, ctx);
	if (ctx->board != 0)
		return error("only the system board (board 0) clears queues, not "
			     "board %u", ctx->board);
	if (open_window(ctx, 0, &w))
		return 1;
	if (o.queue >= 0 && check_queue(w, (unsigned)o.queue)) {
		smq_close(w);
		return 1;
	}
	err = smq_clear(w, o.queue);
	struct smq_window_info wi;
	smq_window_info(w, &wi);
	smq_close(w);
	if (err)
		return window_error(ctx, "cannot clear window", err);
	if (ctx->json) {
		struct json j;
		json_open(&j, stdout);
		json_begin(&j, NULL, '{');
		json_str(&j, "window", wi.name);
		json_i64(&j, "queue", o.queue);
		json_u64(&j, "generation", wi.generation);
		json_end(&j, '}');
		json_close(&j);
	} else if (o.queue < 0)
		printf("cleared every queue of %s: generation %" PRIu64 "\n",
		       wi.name, wi.generation);
	else
		printf("cleared queue %d of %s: generation %" PRIu64 "\n",
		       o.queue, wi.name, wi.generation);
	return 0;
}

const struct cmd cmd_clear = { "clear", run, &argp,
			       "empty queues (system board)" };
