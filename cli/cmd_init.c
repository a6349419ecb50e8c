/* smqctl init: format the window (system board only). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "smqctl.h"

struct init_opts {
	struct smq_geometry g;
	bool queues_set, force;
	int mode;               /* permission bits, -1: leave as created */
	int timeout_ms;         /* the handshake with the boards */
	uint16_t receivers[SMQ_MAX_QUEUES];
	uint64_t senders[SMQ_MAX_QUEUES];  /* 0: every board */
	uint32_t nassign, assign_q[256], assign_b[256];
	uint32_t nsets, set_q[256];
	uint64_t set_mask[256];
};

/* -q is a queue in every other command, -s a PCI slot: the number of
 * queues and the entry size have long options only; so has --force,
 * which should be spelled out. */
enum { OPT_QUEUES = 0x100, OPT_ENTRY_SIZE, OPT_FORCE, OPT_TIMEOUT,
       OPT_SENDERS };

static const struct argp_option options[] = {
	{ "boards", 'n', "N", 0, "Number of boards, 1 to 64 (default 2)", 0 },
	{ "queues", OPT_QUEUES, "N", 0,
	  "Number of queues (default: one per board)", 0 },
	{ "entries", 'e', "N", 0,
	  "Entries per ring, a power of two (default 64)", 0 },
	{ "entry-size", OPT_ENTRY_SIZE, "BYTES", 0,
	  "Largest message in bytes, with K or M (default 1K, at most 16M)", 0 },
	{ "receiver", 'r', "Q:B", 0,
	  "Queue Q is received by board B (default: board Q mod boards); "
	  "repeatable", 0 },
	{ "senders", OPT_SENDERS, "Q:B,B...", 0,
	  "Only boards B... send on queue Q: only they get a lane (memory) "
	  "in it (default: every board); repeatable", 0 },
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
	case 'n':
		o->g.boards = arg_u32(st, "--boards", arg, 1, SMQ_MAX_BOARDS);
		break;
	case OPT_QUEUES:
		o->g.queues = arg_u32(st, "--queues", arg, 1, SMQ_MAX_QUEUES);
		o->queues_set = true;
		break;
	case 'e':
		o->g.entries = arg_u32(st, "--entries", arg, 1, SMQ_MAX_ENTRIES);
		if (o->g.entries & (o->g.entries - 1))
			argp_error(st, "--entries %s is not a power of two", arg);
		break;
	case OPT_ENTRY_SIZE:
		o->g.entry_size = (uint32_t)arg_size(st, "--entry-size", arg, 0,
						     SMQ_MAX_ENTRY_SIZE);
		break;
	case 'r': {
		char *colon = strchr(arg, ':');
		if (!colon || colon == arg || !colon[1])
			argp_error(st, "--receiver needs QUEUE:BOARD, not '%s'", arg);
		if (o->nassign == 256)
			argp_error(st, "at most 256 --receiver options");
		*colon = 0;
		o->assign_q[o->nassign] = arg_u32(st, "--receiver queue", arg, 0,
						  SMQ_MAX_QUEUES - 1);
		o->assign_b[o->nassign] = arg_u32(st, "--receiver board",
						  colon + 1, 0, SMQ_MAX_BOARDS - 1);
		*colon = ':';
		o->nassign++;
		break;
	}
	case OPT_SENDERS: {
		char *colon = strchr(arg, ':');
		if (!colon || colon == arg || !colon[1])
			argp_error(st, "--senders needs QUEUE:BOARD,BOARD..., not "
				   "'%s'", arg);
		if (o->nsets == 256)
			argp_error(st, "at most 256 --senders options");
		*colon = 0;
		o->set_q[o->nsets] = arg_u32(st, "--senders queue", arg, 0,
					     SMQ_MAX_QUEUES - 1);
		uint64_t mask = 0;
		for (char *b = colon + 1, *next; b; b = next) {
			if ((next = strchr(b, ',')))
				*next++ = 0;
			mask |= 1ull << arg_u32(st, "--senders board", b, 0,
						 SMQ_MAX_BOARDS - 1);
		}
		o->set_mask[o->nsets++] = mask;
		break;
	}
	case OPT_FORCE:
		o->force = true;
		break;
	case OPT_TIMEOUT:
		o->timeout_ms = arg_duration(st, "--timeout", arg);
		break;
	case 'm': {
		char *end;
		errno = 0;
		long v = strtol(arg, &end, 8);
		if (end == arg || *end || errno || v < 0 || v > 07777)
			argp_error(st, "--mode needs octal permission bits such as "
				   "0600 or 0660, not '%s'", arg);
		o->mode = (int)v;
		break;
	}
	case ARGP_KEY_END:
		if (!o->queues_set)
			o->g.queues = o->g.boards;
		for (uint32_t i = 0; i < o->nassign; i++) {
			if (o->assign_q[i] >= o->g.queues)
				argp_error(st, "--receiver %u:%u: queue %u does not "
					   "exist: %u queues", o->assign_q[i],
					   o->assign_b[i], o->assign_q[i],
					   o->g.queues);
			if (o->assign_b[i] >= o->g.boards)
				argp_error(st, "--receiver %u:%u: board %u does not "
					   "exist: %u boards", o->assign_q[i],
					   o->assign_b[i], o->assign_b[i],
					   o->g.boards);
		}
		for (uint32_t i = 0; i < o->nsets; i++) {
			if (o->set_q[i] >= o->g.queues)
				argp_error(st, "--senders %u:...: queue %u does not "
					   "exist: %u queues", o->set_q[i],
					   o->set_q[i], o->g.queues);
			uint64_t m = o->set_mask[i];
			if (o->g.boards < 64 && m >> o->g.boards)
				argp_error(st, "--senders %u:...: board %u does not "
					   "exist: %u boards", o->set_q[i],
					   63 - __builtin_clzll(m), o->g.boards);
		}
		break;
	default:
		return no_operands(key, arg, st);
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"Format the window as the system board (board 0): every queue empty, "
	"a new generation.  Boards attached under the old generation get a "
	"stale error on their next call.", NULL, NULL, NULL
};

/* What init found instead of a window: its size and first bytes. */
static int not_a_window(struct ctx *ctx, const struct smq_window_info *wi)
{
	char shown[80], size[32];
	size_t n = wi->mapped_size < sizeof(wi->first_bytes)
		   ? (size_t)wi->mapped_size : sizeof(wi->first_bytes);
	char text[sizeof(wi->first_bytes) + 1];

	memcpy(text, wi->first_bytes, n);
	text[n] = 0;
	for (size_t i = 0; i < n; i++)
		if (!text[i])
			text[i] = '.';
	return say_error("%s holds %s (%" PRIu64 " bytes) that is not an smq window "
		     "(it begins \"%s\"): init will not overwrite it; name "
		     "another window, or --force to format it anyway",
		     window_spec(ctx), human_bytes(wi->mapped_size, size),
		     wi->mapped_size, text_safe(text, shown, sizeof(shown)));
}

/* What init made: the window's geometry and its receivers. */
static void print_formatted(struct ctx *ctx, const struct init_opts *o,
			    struct smq_window *w)
{
	struct smq_window_info wi;
	char size[32];

	smq_window_info(w, &wi, sizeof(wi));
	if (ctx->json) {
		struct json j;
		json_open(&j, stdout);
		json_begin(&j, NULL, '{');
		json_str(&j, "window", wi.name);
		json_u64(&j, "version", wi.version);
		json_u64(&j, "generation", wi.generation);
		json_u64(&j, "boards", wi.geometry.boards);
		json_u64(&j, "queues", wi.geometry.queues);
		json_u64(&j, "entries", wi.geometry.entries);
		json_u64(&j, "entry_size", wi.geometry.entry_size);
		json_u64(&j, "window_size", wi.window_size);
		json_begin(&j, "receivers", '[');
		for (uint32_t q = 0; q < o->g.queues; q++)
			json_u64(&j, NULL, o->receivers[q]);
		json_end(&j, ']');
		json_begin(&j, "senders", '[');
		for (uint32_t q = 0; q < o->g.queues; q++) {
			json_begin(&j, NULL, '[');
			for (unsigned b = 0; b < o->g.boards; b++)
				if (!o->senders[q] || (o->senders[q] >> b & 1))
					json_u64(&j, NULL, b);
			json_end(&j, ']');
		}
		json_end(&j, ']');
		json_end(&j, '}');
		json_close(&j);
	} else {
		printf("formatted %s: generation %" PRIu64 "\n", wi.name,
		       wi.generation);
		printf("  %u boards, %u queues, %u entries of %u bytes per "
		       "sending board\n", wi.geometry.boards, wi.geometry.queues,
		       wi.geometry.entries, wi.geometry.entry_size);
		printf("  uses %s (%" PRIu64 " bytes)\n",
		       human_bytes(wi.window_size, size), wi.window_size);
		if (ctx->verbose || o->nassign || o->nsets)
			for (uint32_t q = 0; q < o->g.queues; q++) {
				char set[200];
				printf("  queue %u: received by board %u, sent on "
				       "by %s\n", q, o->receivers[q],
				       board_set(o->senders[q] ? o->senders[q]
						 : ~0ull, o->g.boards, set,
						 sizeof(set)));
			}
	}
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	static struct init_opts o;
	struct smq_window *w;
	char size[32];
	uint64_t bytes;
	int err;

	o.g = (struct smq_geometry){ 2, 0, 64, 1024, NULL };
	o.mode = -1;
	o.timeout_ms = 5000;
	parse_cmd(&argp, argc, argv, &o, ctx);
	if (ctx->board != 0)
		return say_error("only the system board (board 0) formats a window, "
			     "not board %u", ctx->board);
	for (uint32_t q = 0; q < o.g.queues; q++)
		o.receivers[q] = (uint16_t)(q % o.g.boards);
	for (uint32_t i = 0; i < o.nassign; i++)
		o.receivers[o.assign_q[i]] = (uint16_t)o.assign_b[i];
	o.g.receivers = o.receivers;
	memset(o.senders, 0, sizeof(o.senders));
	for (uint32_t i = 0; i < o.nsets; i++)
		o.senders[o.set_q[i]] = o.set_mask[i];
	struct smq_shape shape = { o.g, o.nsets ? o.senders : NULL, 0 };
	if ((err = smq_shape_size(&shape, sizeof(shape), &bytes)))
		return say_error("a window of %u boards, %u queues, %u entries of %u "
			     "bytes is too large", o.g.boards, o.g.queues,
			     o.g.entries, o.g.entry_size);

	err = smq_open(window_spec(ctx), 0,
		       SMQ_OPEN_CREATE | SMQ_OPEN_RAW |
		       (o.force ? SMQ_OPEN_FORCE : 0),
		       &w);
	if (err)
		return open_error(ctx, err);
	smq_set_timeout(w, SMQ_TIMEOUT_HANDSHAKE, o.timeout_ms);
	err = smq_init_shape(w, &shape, sizeof(shape));
	/* processes of another host at work, not judged yet: judged after a
	 * second look (a process only waiting in sync is not at work) */
	if (err == -SMQ_EATWORK && at_work_unknown(w, -1))
		err = smq_init_shape(w, &shape, sizeof(shape));
	if (err) {
		struct smq_window_info before;
		int rc;
		smq_window_info(w, &before, sizeof(before));
		if (err == -ENOSPC || err == -EFBIG)
			rc = say_error("window %s cannot grow to %s: it has %" PRIu64
				       " bytes (%s)", window_spec(ctx),
				       human_bytes(bytes, size),
				       before.mapped_size, smq_strerror(err));
		else if (err == -SMQ_ENOTWINDOW)
			rc = not_a_window(ctx, &before);
		else  /* it reads who holds the window through w */
			rc = maint_error(ctx, w, "init", -1, err,
					 o.timeout_ms);
		smq_close(w);
		return rc;
	}
	if (o.mode >= 0 && (err = smq_set_mode(w, (unsigned)o.mode))) {
		smq_close(w);
		return say_error("formatted %s, but cannot set its mode to %04o: %s",
			     window_spec(ctx), (unsigned)o.mode,
			     err == -EOPNOTSUPP ? "this transport has no "
			     "permission bits" : smq_strerror(err));
	}
	print_formatted(ctx, &o, w);
	smq_close(w);
	return 0;
}

const struct cmd cmd_init = { "init", run, &argp,
			      "format the window (system board)" };
