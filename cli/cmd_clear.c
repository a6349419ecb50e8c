/* smqctl clear: empty queues (system board only). */
#include <inttypes.h>
#include "smqctl.h"

struct clear_opts {
	struct queue_opt q;     /* --queue; -1: every queue */
	int timeout_ms;         /* the handshake with the boards */
	bool force, dry_run;
};

/* -T is a timeout in every command; --force is spelled out */
enum { OPT_TIMEOUT = 'T', OPT_FORCE = 0x100, OPT_DRY_RUN };

static const struct argp_option options[] = {
	{ "timeout", OPT_TIMEOUT, "TIME", 0,
	  "Wait this long for the calls begun on what is cleared to end "
	  "(default 5s; inf: no bound)", 0 },
	{ "force", OPT_FORCE, NULL, 0,
	  "Clear even while processes are at work on what is cleared (a "
	  "receiver, a sender with the queue open)", 0 },
	{ "dry-run", OPT_DRY_RUN, NULL, 0,
	  "Say what clear would do, decided as clear decides (the same "
	  "refusals, words and exit status; the messages it would empty), "
	  "without writing anything", 0 },
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
	case OPT_DRY_RUN:
		o->dry_run = true;
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
	"at work there, unless --force.  It says how many messages it "
	"emptied, and where.  It also finishes an init or clear that was "
	"killed.", queue_children, NULL, NULL
};

/* --dry-run: clear's decision, made as clear makes it. */
static int dry_run(struct ctx *ctx, const struct clear_opts *o,
		   struct smq_window *w)
{
	struct smq_emptied e;
	char gone[400];
	int err = smq_clear_dry_run(w, o->q.queue < 0 ? SMQ_ALL_QUEUES
						     : (unsigned)o->q.queue);

	smq_emptied(w, &e, sizeof(e));
	if (ctx->json) {
		struct json j;
		json_open(&j, stdout);
		json_begin(&j, NULL, '{');
		json_str(&j, "window", window_spec(ctx));
		json_bool(&j, "dry_run", true);
		json_i64(&j, "queue", o->q.queue);
		json_bool(&j, "refused", err != 0);
		if (err)
			json_null(&j, "emptied");
		else
			json_emptied(&j, &e);
		json_end(&j, '}');
		json_close(&j);
	} else if (!err) {
		printf("clear would empty %s\n(a dry run: nothing was "
		       "written)\n", emptied_text(&e, gone, sizeof(gone)));
	}
	if (!err)
		return 0;
	int rc = maint_error(ctx, w, "clear", o->q.queue, err, o->timeout_ms);
	if (!ctx->json)
		printf("(a dry run: nothing was written)\n");
	return rc;
}

static void print_cleared(struct ctx *ctx, const struct clear_opts *o,
			  struct smq_window *w,
			  const struct smq_window_info *before)
{
	struct smq_window_info wi;
	struct smq_emptied e;
	char gone[400];

	smq_window_info(w, &wi, sizeof(wi));
	smq_emptied(w, &e, sizeof(e));
	/* a clear of every queue left unfinished is finished first, and
	 * that clears every queue under a new generation */
	int queue = o->q.queue;
	bool finished_all = queue >= 0 && wi.generation != before->generation;
	if (finished_all)
		queue = -1;
	struct smq_queue_info qi = { 0 };
	if (queue >= 0)
		smq_queue_info(w, (unsigned)queue, &qi, sizeof(qi));
	if (ctx->json) {
		struct json j;
		json_open(&j, stdout);
		json_begin(&j, NULL, '{');
		json_str(&j, "window", wi.name);
		json_i64(&j, "queue", queue);
		json_u64(&j, "generation", wi.generation);
		if (queue >= 0)
			json_u64(&j, "epoch", qi.epoch);
		json_emptied(&j, &e);
		json_end(&j, '}');
		json_close(&j);
		return;
	}
	if (finished_all)
		printf("cleared every queue of %s: generation %" PRIu64 " (a "
		       "clear of every queue left unfinished was finished "
		       "first, queue %d with the others)\n", wi.name,
		       wi.generation, o->q.queue);
	else if (queue < 0)
		printf("cleared every queue of %s: generation %" PRIu64 "\n",
		       wi.name, wi.generation);
	else
		printf("cleared queue %d of %s: epoch %#" PRIx64 " (generation %"
		       PRIu64 " goes on)\n", o->q.queue, wi.name, qi.epoch,
		       wi.generation);
	printf("  emptied %s\n", emptied_text(&e, gone, sizeof(gone)));
}

/* A board's open refuses a window whose init or clear of every queue is
 * under way (-EBUSY) or was left unfinished (-SMQ_EINCOMPLETE); a clear is
 * what finishes the second, and refuses the first naming who runs it.  So
 * the window is opened raw then, and used if it attached (it passes the
 * static checks); else the board's open says why not. */
static int open_for_clear(struct ctx *ctx, unsigned flags,
			  struct smq_window **w)
{
	struct smq_window_info wi;
	int err = smq_open(window_spec(ctx), 0, flags, w);

	if (err == -SMQ_EINCOMPLETE || err == -EBUSY) {
		if (!smq_open(window_spec(ctx), 0, flags | SMQ_OPEN_RAW, w)) {
			/* attached; stale when its notice was told */
			int ierr = smq_window_info(*w, &wi, sizeof(wi));
			if (!ierr || ierr == -ESTALE)
				return 0;
			smq_close(*w);
			*w = NULL;
		}
	}
	return err ? open_error(ctx, err) : 0;
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct clear_opts o = { { -1, "Empty only queue Q (default: all)" },
				5000, false, false };
	struct smq_window *w;
	int err;

	parse_cmd(&argp, argc, argv, &o, ctx);
	if (ctx->board != 0)
		return say_error("only the system board (board 0) clears queues, not "
			     "board %u", ctx->board);
	if (open_for_clear(ctx, o.force ? SMQ_OPEN_FORCE : 0, &w))
		return 1;
	if (o.q.queue >= 0 && check_queue(w, (unsigned)o.q.queue)) {
		smq_close(w);
		return 1;
	}
	smq_set_timeout(w, SMQ_TIMEOUT_HANDSHAKE, o.timeout_ms);
	if (o.dry_run) {
		int rc = dry_run(ctx, &o, w);
		smq_close(w);
		return rc;
	}
	struct smq_window_info before;
	smq_window_info(w, &before, sizeof(before));
	err = smq_clear(w, o.q.queue < 0 ? SMQ_ALL_QUEUES
					 : (unsigned)o.q.queue);
	if (err) {
		int rc = maint_error(ctx, w, "clear", o.q.queue, err,
				     o.timeout_ms);
		smq_close(w);
		return rc;
	}
	print_cleared(ctx, &o, w, &before);
	smq_close(w);
	return 0;
}

const struct cmd cmd_clear = { "clear", run, &argp,
			       "empty queues (system board)" };
