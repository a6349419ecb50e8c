/* smqctl clear: empty queues (system board only). */
#include <inttypes.h>
#include "smqctl.h"

struct clear_opts {
	struct queue_opt q;     /* --queue; -1: every queue */
	int timeout_ms;         /* the handshake with the boards */
	bool force;
};

/* -T is a timeout in every command; --force is spelled out */
enum { OPT_TIMEOUT = 'T', OPT_FORCE = 0x100 };

static const struct argp_option options[] = {
	{ "timeout", OPT_TIMEOUT, "TIME", 0,
	  "Wait this long for the calls begun on what is cleared to end "
	  "(default 5s; inf: no bound)", 0 },
	{ "force", OPT_FORCE, NULL, 0,
	  "Clear even while processes are at work on what is cleared (a "
	  "receiver, a sender with the queue open)", 0 },
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
	case OPT_FORCE:
		o->force = true;
		break;
	default:
		return no_operands(key, arg, st);
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"Empty every queue, or one (system board only).  Every queue: a new "
	"generation; every attached board gets a stale error on its next call "
	"and must attach and synchronise again.  One queue (--queue): only "
	"the handles of that queue are told (they open it again); the other "
	"queues, the boards and the generation go on.  First the calls begun "
	"on what is cleared end (a handshake, not a timer): nothing of a call "
	"in flight lands in the cleared queues.  Refused while processes are "
	"at work there, unless --force.  It also finishes an init or clear "
	"that was killed.", queue_children, NULL, NULL
};

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct clear_opts o = { { -1, "Empty only queue Q (default: all)" },
				5000, false };
	struct smq_window *w;
	int err;

	parse_cmd(&argp, argc, argv, &o, ctx);
	if (ctx->board != 0)
		return say_error("only the system board (board 0) clears queues, not "
			     "board %u", ctx->board);
	if (open_window(ctx, o.force ? SMQ_OPEN_FORCE : 0, &w))
		return 1;
	if (o.q.queue >= 0 && check_queue(w, (unsigned)o.q.queue)) {
		smq_close(w);
		return 1;
	}
	smq_set_timeout(w, SMQ_TIMEOUT_HANDSHAKE, o.timeout_ms);
	struct smq_window_info before;
	smq_window_info(w, &before, sizeof(before));
	err = smq_clear(w, o.q.queue);
	if (err == -SMQ_EATWORK && at_work_unknown(w, o.q.queue))
		err = smq_clear(w, o.q.queue);
	struct smq_window_info wi;
	smq_window_info(w, &wi, sizeof(wi));
	if (err) {
		int rc = maint_error(ctx, w, "clear", o.q.queue, err,
				     o.timeout_ms);
		smq_close(w);
		return rc;
	}
	/* a clear of every queue left unfinished is finished first, and
	 * that clears every queue under a new generation */
	int queue = o.q.queue;
	bool finished_all = queue >= 0 && wi.generation != before.generation;
	if (finished_all)
		queue = -1;
	struct smq_queue_info qi = { 0 };
	if (queue >= 0)
		smq_queue_info(w, (unsigned)queue, &qi, sizeof(qi));
	smq_close(w);
	if (ctx->json) {
		struct json j;
		json_open(&j, stdout);
		json_begin(&j, NULL, '{');
		json_str(&j, "window", wi.name);
		json_i64(&j, "queue", queue);
		json_u64(&j, "generation", wi.generation);
		if (queue >= 0)
			json_u64(&j, "epoch", qi.epoch);
		json_end(&j, '}');
		json_close(&j);
	} else if (finished_all)
		printf("cleared every queue of %s: generation %" PRIu64 " (a "
		       "clear of every queue left unfinished was finished "
		       "first, queue %d with the others)\n", wi.name,
		       wi.generation, o.q.queue);
	else if (queue < 0)
		printf("cleared every queue of %s: generation %" PRIu64 "\n",
		       wi.name, wi.generation);
	else
		printf("cleared queue %d of %s: epoch %#" PRIx64 " (generation %"
		       PRIu64 " goes on)\n", o.q.queue, wi.name, qi.epoch,
		       wi.generation);
	return 0;
}

const struct cmd cmd_clear = { "clear", run, &argp,
			       "empty queues (system board)" };
