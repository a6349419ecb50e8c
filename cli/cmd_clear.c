/* smqctl clear: empty queues (system board only). */
#include <inttypes.h>
#include "smqctl.h"

struct clear_opts {
	struct queue_opt q;     /* --queue; -1: every queue */
	int timeout_ms;         /* the handshake with the boards */
};

enum { OPT_TIMEOUT = 0x100 };

static const struct argp_option options[] = {
	{ "timeout", OPT_TIMEOUT, "TIME", 0,
	  "Wait this long for every board to leave the calls it began under "
	  "the old generation (default 5s; inf: no bound)", 0 },
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct clear_opts *o = st->input;

	switch (key) {
	case ARGP_KEY_INIT:
		st->child_inputs[0] = &o->q;
		break;
	case OPT_TIMEOUT:
		o->timeout_ms = arg_duration(st, "--timeout", arg);
		break;
	default:
		return no_operands(key, arg, st);
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"Empty every queue, or one, and bump the generation (system board "
	"only).  First every board leaves the calls it began (a handshake, "
	"not a timer): nothing of a call in flight lands in the cleared "
	"queues.  Every attached board gets a stale error on its next call "
	"and must attach and synchronise again.  It also finishes an init or "
	"clear that was killed.", queue_children, NULL, NULL
};

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct clear_opts o = { { -1, "Empty only queue Q (default: all)" },
				5000 };
	struct smq_window *w;
	int err;

	parse_cmd(&argp, argc, argv, &o, ctx);
	if (ctx->board != 0)
		return say_error("only the system board (board 0) clears queues, not "
			     "board %u", ctx->board);
	if (open_window(ctx, 0, &w))
		return 1;
	if (o.q.queue >= 0 && check_queue(w, (unsigned)o.q.queue)) {
		smq_close(w);
		return 1;
	}
	smq_set_timeout(w, SMQ_TIMEOUT_HANDSHAKE, o.timeout_ms);
	err = smq_clear(w, o.q.queue);
	struct smq_window_info wi;
	smq_window_info(w, &wi, sizeof(wi));
	if (err) {
		int rc = maint_error(ctx, w, "clear", err, o.timeout_ms);
		smq_close(w);
		return rc;
	}
	smq_close(w);
	if (ctx->json) {
		struct json j;
		json_open(&j, stdout);
		json_begin(&j, NULL, '{');
		json_str(&j, "window", wi.name);
		json_i64(&j, "queue", o.q.queue);
		json_u64(&j, "generation", wi.generation);
		json_end(&j, '}');
		json_close(&j);
	} else if (o.q.queue < 0)
		printf("cleared every queue of %s: generation %" PRIu64 "\n",
		       wi.name, wi.generation);
	else
		printf("cleared queue %d of %s: generation %" PRIu64 "\n",
		       o.q.queue, wi.name, wi.generation);
	return 0;
}

const struct cmd cmd_clear = { "clear", run, &argp,
			       "empty queues (system board)" };
