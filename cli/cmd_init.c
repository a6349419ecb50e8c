/* smqctl init: format the window (system board only), with a shape given
 * by options or by a description file; or say what it would make and
 * whether it fits (--dry-run), make the rings as large as a window of
 * fixed size allows (--fit), keep a window that holds the shape already
 * (--keep).  The parts are in init/, the shape in shape/. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "init/init.h"

struct init_opts {
	struct shape_opts shape;
	bool force, dry_run, fit, keep, grow;
	int mode;               /* permission bits, -1: leave as created */
	int timeout_ms;         /* the handshake with the boards */
};

/* --force should be spelled out: long options only; -T is a timeout in
 * every command */
enum { OPT_TIMEOUT = 'T', OPT_FORCE = 0x100, OPT_DRY_RUN, OPT_FIT, OPT_KEEP,
       OPT_GROW };

static const struct argp_option options[] = {
	{ "dry-run", OPT_DRY_RUN, NULL, 0,
	  "Print the layout (each part and its bytes, the diagnostic queues' "
	  "share apart; with -v each board's region), the window, and what "
	  "init would do, decided as init decides (the same refusals, words "
	  "and exit status; the messages it would empty), without writing or "
	  "creating anything", 0 },
	{ "grow", OPT_GROW, NULL, 0,
	  "Grow a window object that had its size before smq first formatted "
	  "it (a QEMU memory-backend file, truncate -s) to a larger shape: "
	  "without it, init refuses, whatever --force says", 0 },
	{ "fit", OPT_FIT, NULL, 0,
	  "On a window of fixed size (a BAR, an object another program "
	  "sized): the most entries, a power of two (at most --entries if "
	  "given), that fit", 0 },
	{ "keep", OPT_KEEP, NULL, 0,
	  "Keep a window that already holds exactly this shape and is sound: "
	  "its generation, its messages and the boards at work on it (board "
	  "0 rebooting alone rejoins); format any other", 0 },
	{ "force", OPT_FORCE, NULL, 0,
	  "Format even while processes are at work (a queue open, a "
	  "receiver), over a window of another format version or with a "
	  "feature it does not know, over data that is not a window, and a "
	  "window object of another user or that others may write (made "
	  "ours, mode 0600)", 0 },
	{ "timeout", OPT_TIMEOUT, "TIME", 0,
	  "Wait this long for every board to leave the calls it began under "
	  "the old generation (default 5s; inf: no bound)", 0 },
	{ "mode", 'm', "OCTAL", 0,
	  "Permission bits of the window's file (created 0600: only its "
	  "owner may attach), e.g. 0660 for a group of users", 0 },
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct init_opts *o = st->input;

	switch (key) {
	case ARGP_KEY_INIT:
		st->child_inputs[0] = &o->shape;
		break;
	case OPT_DRY_RUN:
		o->dry_run = true;
		break;
	case OPT_FIT:
		o->fit = true;
		break;
	case OPT_KEEP:
		o->keep = true;
		break;
	case OPT_FORCE:
		o->force = true;
		break;
	case OPT_GROW:
		o->grow = true;
		break;
	case OPT_TIMEOUT:
		o->timeout_ms = arg_duration(st, "--timeout", arg);
		break;
	case 'm':
		o->mode = (int)arg_mode(st, arg);
		break;
	default:
		return no_operands(key, arg, st);
	}
	return 0;
}

static const struct argp_child children[] = {
	{ &shape_argp, 0, "The window's shape (or --from FILE):", 1 },
	{ 0 }
};

static const struct argp argp = {
	options, parse, NULL,
	"Format the window as the system board (board 0): every queue empty, "
	"a new generation.  Boards attached under the old generation get a "
	"stale error on their next call.  It says how many messages it "
	"emptied, and where.", children, NULL, NULL
};

/* What init found instead of a window: its size and first bytes. */
static int not_a_window(struct ctx *ctx, const struct smq_window_info *wi)
{
	char shown[80], size[32];

	return say_error("%s holds %s (%" PRIu64 " bytes) that is not an smq window "
		     "(it begins \"%s\"): init will not overwrite it; name "
		     "another window, or --force to format it anyway",
		     window_spec(ctx), human_bytes(wi->mapped_size, size),
		     wi->mapped_size, first_bytes_text(wi, shown, sizeof(shown)));
}

/* The window cannot grow to the shape: what it needs, what is there,
 * and what would fit. */
static int no_room(struct ctx *ctx, const struct shape_opts *s,
		   uint64_t need, uint64_t have)
{
	char words[160], a[32], b[32];
	struct shape_fit f;

	say_error("init: %s need %s (%" PRIu64 " bytes), but window %s holds "
		  "%s (%" PRIu64 " bytes), which init does not grow (a BAR, "
		  "or an object another program sized; --grow grows an object "
		  "by name); nothing was written",
		  shape_words(s, words, sizeof(words)), human_bytes(need, a),
		  need, window_spec(ctx), human_bytes(have, b), have);
	shape_fit(s, have, &f);
	print_fit(stderr, "  ", s, &f);
	if (f.entries)
		fprintf(stderr, "  (--fit picks the most entries that fit)\n");
	return 1;
}

/* --fit: the most entries that fit the window as it is. */
static int pick_entries(struct ctx *ctx, struct shape_opts *s)
{
	struct window_look l;
	uint32_t upto = s->given & (1u << SHAPE_ENTRIES) ? s->g.entries
							 : SMQ_MAX_ENTRIES;
	uint64_t bytes;
	char words[160], a[32], b[32];

	window_look(ctx, &l, false);
	if (!l.fixed_size)
		return say_error("init --fit: window %s %s: it grows to what "
				 "the layout needs, so there is no size to "
				 "fit; give --entries", window_spec(ctx),
				 l.exists ? "has no fixed size"
					  : "does not exist yet");
	uint32_t e = shape_most_entries(s, l.fixed_size, upto, &bytes);
	if (e) {
		s->g.entries = e;
		return 0;
	}
	s->g.entries = 1;
	say_error("init --fit: not even 1 entry a ring fits: %s need %s (%"
		  PRIu64 " bytes), window %s holds %s (%" PRIu64 " bytes)",
		  shape_words(s, words, sizeof(words)), human_bytes(bytes, a),
		  bytes, window_spec(ctx), human_bytes(l.fixed_size, b),
		  l.fixed_size);
	struct shape_fit f;
	shape_fit(s, l.fixed_size, &f);
	print_fit(stderr, "  ", s, &f);
	return 1;
}

/* What init made, or kept: the window's geometry and its receivers. */
static void print_window(struct ctx *ctx, const struct init_opts *o,
			 struct smq_window *w, const struct keep_look *k)
{
	const struct shape_opts *s = &o->shape;
	struct smq_window_info wi;
	struct smq_emptied e;
	char size[32], gone[400];

	smq_window_info(w, &wi, sizeof(wi));
	memset(&e, 0, sizeof(e));
	if (!k->same)
		smq_emptied(w, &e, sizeof(e));
	bool checksum = wi.features_incompat & SMQ_FEATURE_CHECKSUM;
	if (ctx->json) {
		struct json j;
		json_open(&j, stdout);
		json_begin(&j, NULL, '{');
		json_str(&j, "window", wi.name);
		json_u64(&j, "version", wi.version);
		json_u64(&j, "generation", wi.generation);
		json_bool(&j, "kept", k->same);
		json_shape_keys(&j, s, checksum, wi.features_compat &
				SMQ_FEATURE_SCRATCH);
		json_u64(&j, "window_size", wi.window_size);
		json_u64(&j, "fixed_size", wi.fixed_size);
		if (k->same)
			json_null(&j, "emptied");
		else
			json_emptied(&j, &e);
		json_end(&j, '}');
		json_close(&j);
	} else {
		if (k->same)
			printf("kept %s: generation %" PRIu64 " (it holds this "
			       "shape; %s)\n", wi.name, wi.generation,
			       o->mode >= 0 ? "only its mode was set"
					    : "nothing was written");
		else
			printf("formatted %s: generation %" PRIu64 "\n",
			       wi.name, wi.generation);
		printf("  %u boards, %u queues, %u entries of %u bytes per "
		       "sending board%s\n", wi.geometry.boards,
		       wi.geometry.queues, wi.geometry.entries,
		       wi.geometry.entry_size,
		       checksum ? ", each with a checksum" : "");
		printf("  uses %s (%" PRIu64 " bytes)", human_bytes(wi.window_size,
		       size), wi.window_size);
		if (wi.fixed_size)
			printf(" of the %s it holds", human_bytes(wi.fixed_size,
			       size));
		printf("\n");
		if (!k->same && e.known)
			printf("  emptied %s\n", emptied_text(&e, gone,
							   sizeof(gone)));
		if (o->fit)
			printf("  --fit: %u entries, the most that fit\n",
			       wi.geometry.entries);
		if (k->asked && !k->same)
			printf("  --keep: formatted, as %s\n", k->why);
		if (ctx->verbose || (s->given & (1u << SHAPE_RECEIVER)) ||
		    s->any_sets)
			for (uint32_t q = 0; q < s->g.queues; q++) {
				char set[200];
				printf("  queue %u: received by board %u, sent on "
				       "by %s\n", q, s->receivers[q],
				       board_set(s->senders[q] ? s->senders[q]
						 : ~0ull, s->g.boards, set,
						 sizeof(set)));
			}
	}
}

/* The mode asked for, set on the window's object. */
static int set_mode(struct ctx *ctx, const struct init_opts *o,
		    struct smq_window *w, const char *done)
{
	int err;

	if (o->mode < 0 || !(err = smq_set_mode(w, (unsigned)o->mode)))
		return 0;
	return say_error("%s %s, but cannot set its mode to %04o: %s", done,
			 window_spec(ctx), (unsigned)o->mode,
			 err == -EOPNOTSUPP ? "this transport has no "
			 "permission bits" : smq_strerror(err));
}

static int kept(struct ctx *ctx, const struct init_opts *o,
		const struct keep_look *k)
{
	struct smq_window *w;
	int err, rc = 0;

	/* a mode is set as if formatting: a board 0 rebooted alone gets the
	 * window as its unit says, kept or not */
	if (o->mode >= 0) {
		if ((err = smq_open(window_spec(ctx), 0, 0, &w)))
			return open_error(ctx, err);
		rc = set_mode(ctx, o, w, "kept");
		smq_close(w);
		if (rc)
			return rc;
	}
	if ((err = smq_open(window_spec(ctx), 0, SMQ_OPEN_READONLY, &w)))
		return open_error(ctx, err);
	print_window(ctx, o, w, k);
	smq_close(w);
	return 0;
}

/* Why init failed on w, err from smq_init_shape(). */
static int init_error(struct ctx *ctx, const struct init_opts *o,
		      struct smq_window *w, int err, uint64_t bytes)
{
	struct smq_window_info before;
	char size[32];

	smq_window_info(w, &before, sizeof(before));
	if (err == -ENOSPC || err == -EFBIG)
		return say_error("window %s cannot grow to %s: it has %" PRIu64
				 " bytes (%s)", window_spec(ctx),
				 human_bytes(bytes, size), before.mapped_size,
				 smq_strerror(err));
	if (err == -SMQ_ENOTWINDOW)
		return not_a_window(ctx, &before);
	/* it reads who holds the window through w */
	return maint_error(ctx, w, "init", -1, err, o->timeout_ms);
}

/* The shape init makes, its bytes, and the window opened as init opens
 * it (create: the real init; its dry run creates nothing).  0; or 1 said,
 * with *w NULL; or, for a dry run of a window that does not exist yet,
 * -ENOENT. */
static int init_open(struct ctx *ctx, const struct init_opts *o,
		     struct smq_shape *shape, uint64_t *bytes, bool create,
		     struct smq_window **w)
{
	*w = NULL;
	*shape = shape_of(&o->shape);
	if (o->grow)
		shape->flags |= SMQ_SHAPE_GROW;
	if (smq_shape_size(shape, sizeof(*shape), bytes))
		return say_error("a window of %u boards, %u queues, %u entries "
				 "of %u bytes is too large", o->shape.g.boards,
				 o->shape.g.queues, o->shape.g.entries,
				 o->shape.g.entry_size);
	int err = smq_open(window_spec(ctx), 0, (create ? SMQ_OPEN_CREATE : 0) |
			   SMQ_OPEN_RAW | (o->force ? SMQ_OPEN_FORCE : 0), w);
	if (err == -ENOENT && !create)
		return -ENOENT;
	if (err)
		return open_error(ctx, err);
	smq_set_timeout(*w, SMQ_TIMEOUT_HANDSHAKE, o->timeout_ms);
	return 0;
}

/* The decision init makes: 0, or why not (-ENOSPC: the window's fixed
 * size).  dry: nothing is written (smq_init_dry_run()). */
static int init_decide(const struct init_opts *o, struct smq_window *w,
		       const struct smq_shape *shape, uint64_t bytes, bool dry)
{
	struct smq_window_info wi;

	smq_window_info(w, &wi, sizeof(wi));
	if (wi.fixed_size && bytes > wi.fixed_size && !o->grow)
		return -ENOSPC;
	return dry ? smq_init_dry_run(w, shape, sizeof(*shape))
		   : smq_init_shape(w, shape, sizeof(*shape));
}

/* ...said as init says it, the real one and the dry run alike: 1. */
static int init_refused(struct ctx *ctx, const struct init_opts *o,
			struct smq_window *w, int err, uint64_t bytes,
			const struct keep_look *k)
{
	struct smq_window_info wi;
	int rc;

	smq_window_info(w, &wi, sizeof(wi));
	if (err == -ENOSPC && wi.fixed_size && bytes > wi.fixed_size)
		rc = no_room(ctx, &o->shape, bytes, wi.fixed_size);
	else
		rc = init_error(ctx, o, w, err, bytes);
	if (k->asked)
		fprintf(stderr, "  (--keep did not keep it: %s)\n", k->why);
	return rc;
}

static int format(struct ctx *ctx, const struct init_opts *o,
		  const struct keep_look *k)
{
	struct smq_shape shape;
	struct smq_window *w;
	uint64_t bytes;
	int rc;

	if ((rc = init_open(ctx, o, &shape, &bytes, true, &w)))
		return rc;
	if ((rc = init_decide(o, w, &shape, bytes, false))) {
		rc = init_refused(ctx, o, w, rc, bytes, k);
		smq_close(w);
		return rc;
	}
	if ((rc = set_mode(ctx, o, w, "formatted"))) {
		smq_close(w);
		return rc;
	}
	print_window(ctx, o, w, k);
	smq_close(w);
	return 0;
}

/* --dry-run: the layout, the window, and init's decision as init makes
 * it: the same refusal, words and exit status. */
static int dry_run(struct ctx *ctx, const struct init_opts *o,
		   const struct keep_look *k)
{
	struct init_verdict v;
	struct smq_shape shape;
	struct smq_window *w;
	uint64_t bytes;

	memset(&v, 0, sizeof(v));
	int rc = init_open(ctx, o, &shape, &bytes, false, &w), err = 0;
	if (rc > 0)
		return rc;
	if (w) {
		v.exists = true;
		smq_window_info(w, &v.wi, sizeof(v.wi));
		/* a window that holds the shape is kept: nothing to decide */
		if (!k->same)
			err = init_decide(o, w, &shape, bytes, true);
		smq_emptied(w, &v.emptied, sizeof(v.emptied));
	}
	v.refused = err != 0;
	print_layout(ctx, &o->shape, &v, k);
	rc = err ? init_refused(ctx, o, w, err, bytes, k) : 0;
	if (w)
		smq_close(w);
	return rc;
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	static struct init_opts o;
	struct keep_look k;
	int rc;

	shape_defaults(&o.shape);
	o.mode = -1;
	o.timeout_ms = 5000;
	parse_cmd(&argp, argc, argv, &o, ctx);
	if (ctx->board != 0 && !o.dry_run)
		return say_error("only the system board (board 0) formats a window, "
			     "not board %u", ctx->board);
	if ((rc = shape_ready(&o.shape)))
		return rc;
	if (o.fit && (rc = pick_entries(ctx, &o.shape)))
		return rc;
	memset(&k, 0, sizeof(k));
	if (o.keep)
		keep_look(ctx, &o.shape, &k);
	if (o.dry_run)
		return dry_run(ctx, &o, &k);
	if (k.same)
		return kept(ctx, &o, &k);
	return format(ctx, &o, &k);
}

const struct cmd cmd_init = { "init", run, &argp,
			      "format the window (system board)" };
