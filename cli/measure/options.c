/* The options both measuring commands take (see session.h). */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "session.h"

/* ---- options ---- */

enum { OPT_WAIT = 0x200, OPT_CPU, OPT_PEER, OPT_PEER_BOARD, OPT_QUEUE_PAIR,
       OPT_CSV, OPT_FORCE, OPT_DRAIN, OPT_ZERO_COPY, OPT_BURST, OPT_VERIFY,
       OPT_OLD_MODE, OPT_OLD_QUEUES };

static const struct argp_option session_options[] = {
	{ "wait", OPT_WAIT, "HOW", 0,
	  "How each side waits (receiver for a message, sender for room): "
	  "poll (busy-poll; pingpong's default), "
	  "sleep (sleep at once) or spin (spin 20 us, then sleep; bench's "
	  "default)", 0 },
	{ "cpu", OPT_CPU, "A,B", 0,
	  "Pin this board to CPU A and the peer to CPU B (default: the first "
	  "two CPUs this process may use; with --peer only A counts and the "
	  "default is not to pin; -1 leaves a side unpinned)", 0 },
	{ "peer", OPT_PEER, NULL, 0,
	  "Run only this board's half, against the same command run on the "
	  "peer board (across real boards)", 0 },
	{ "peer-board", OPT_PEER_BOARD, "N", 0,
	  "The other board (default 1, or 0 when --board is not 0)", 0 },
	{ "queue-pair", OPT_QUEUE_PAIR, "A,B", 0,
	  "Queue A (received by the lower-numbered board) and queue B (by the "
	  "other); default: the two boards' diagnostic queues.  An "
	  "application queue needs --force", 0 },
	{ "drain", OPT_DRAIN, NULL, 0,
	  "Drop what an earlier, interrupted run left in this board's "
	  "diagnostic queue (never an application queue's messages)", 0 },
	{ "zero-copy", OPT_ZERO_COPY, NULL, 0,
	  "The sender writes each message in place in the ring (smq_loan), "
	  "the receiver checks it in place (smq_peek, smq_commit); every byte "
	  "made and checked, as --verify does with copies.  Not with --burst",
	  0 },
	{ "burst", OPT_BURST, "N", 0,
	  "Send and receive up to N messages per call (smq_send_burst, "
	  "smq_receive_burst), 1 to 256; pingpong bounces N messages each way "
	  "per round trip, at most the queues' entries", 0 },
	{ "verify", OPT_VERIFY, NULL, 0,
	  "The sender makes every byte of each message and the receiver "
	  "checks every byte, the work of an application (default: the size "
	  "and a sequence number in the first 8 bytes)", 0 },
	{ "timeout", 'T', "TIME", 0,
	  "Wait up to TIME for the peer: to answer at the start, and for each "
	  "message and each room while the sizes run (default 10s, with "
	  "--peer 60s; inf: forever).  A peer silent longer ends the run, "
	  "naming it", 0 },
	{ "csv", OPT_CSV, NULL, 0, "Print comma-separated values", 0 },
	{ "force", OPT_FORCE, NULL, 0,
	  "Run even where the measurement would be misleading (both sides "
	  "busy-polling on one CPU) or would intrude on application queues", 0 },
	/* The old names of --wait and --queue-pair, which mean something
	 * else in other commands (init's file mode and count of queues):
	 * refused, naming the new one, rather than read two ways.  The
	 * argument is optional so that every spelling reaches this message,
	 * not getopt's. */
	{ "mode", OPT_OLD_MODE, "HOW", OPTION_HIDDEN | OPTION_ARG_OPTIONAL,
	  NULL, 0 },
	{ "queues", OPT_OLD_QUEUES, "A,B", OPTION_HIDDEN | OPTION_ARG_OPTIONAL,
	  NULL, 0 },
	{ 0 }
};

void session_opts_init(struct session_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = SMQ_POLL;
	o->cpu[0] = o->cpu[1] = -1;
	o->peer_board = -1;
	o->queues[0] = o->queues[1] = -1;
}

static void two_ints(struct argp_state *st, const char *opt, const char *arg,
		     int out[2], int min, int max)
{
	char *end;
	for (int i = 0; i < 2; i++) {
		/* digits, and a minus for -1: no space, no plus */
		const char *digits = arg + (*arg == '-');
		errno = 0;
		long v = strtol(arg, &end, 10);
		if (end == arg || *digits < '0' || *digits > '9' || errno ||
		    v < min || v > max ||
		    (i == 0 && *end != ',') || (i == 1 && *end))
			argp_error(st, "%s needs two numbers A,B from %d to %d, "
				   "not '%s'", opt, min, max, arg);
		out[i] = (int)v;
		arg = end + 1;
	}
}

static error_t session_parse(int key, char *arg, struct argp_state *st)
{
	struct session_opts *o = st->input;

	switch (key) {
	case OPT_WAIT:
		if (!strcmp(arg, "poll"))
			o->mode = SMQ_POLL;
		else if (!strcmp(arg, "sleep"))
			o->mode = SMQ_SLEEP;
		else if (!strcmp(arg, "spin"))
			o->mode = 0;
		else
			argp_error(st, "--wait is poll, sleep or spin, not '%s'", arg);
		break;
	case OPT_OLD_MODE:
		argp_error(st, "--mode is the permission bits of a file or "
			   "socket (init, server, broker); how a measurement's "
			   "receivers wait is --wait poll|sleep|spin");
		break;
	case OPT_OLD_QUEUES:
		argp_error(st, "--queues is a count of queues (init, probe, "
			   "model); the two queues of a measurement are "
			   "--queue-pair A,B");
		break;
	case OPT_CPU:
		two_ints(st, "--cpu", arg, o->cpu, -1, CPU_SETSIZE - 1);
		o->cpu_set = true;
		break;
	case OPT_PEER:
		o->peer_mode = true;
		break;
	case OPT_PEER_BOARD:
		o->peer_board = (int)arg_u32(st, "--peer-board", arg, 0,
					     SMQ_MAX_BOARDS - 1);
		break;
	case OPT_QUEUE_PAIR:
		two_ints(st, "--queue-pair", arg, o->queues, 0,
			 SMQ_MAX_QUEUES - 1);
		break;
	case 'T':
		o->timeout_ms = arg_duration(st, "--timeout", arg);
		if (!o->timeout_ms)
			argp_error(st, "--timeout needs a time greater than 0, "
				   "or inf, not '%s'", arg);
		break;
	case OPT_CSV:
		o->csv = true;
		break;
	case OPT_FORCE:
		o->force = true;
		break;
	case OPT_DRAIN:
		o->drain = true;
		break;
	case OPT_ZERO_COPY:
		o->how.zero_copy = o->how.verify = true;
		break;
	case OPT_BURST:
		o->how.burst = arg_u32(st, "--burst", arg, 1, MAX_BURST);
		break;
	case OPT_VERIFY:
		o->how.verify = true;
		break;
	case ARGP_KEY_END:
		if (o->how.zero_copy && o->how.burst)
			argp_error(st, "--zero-copy and --burst exclude each "
				   "other: a loan is one message");
		/* a CPU this process may not use would leave a side unpinned
		 * while the output names the CPU; with --peer only A is ours */
		for (int i = 0; o->cpu_set && i < (o->peer_mode ? 1 : 2); i++) {
			char list[256];
			if (o->cpu[i] >= 0 && !cpu_allowed(o->cpu[i]))
				argp_error(st, "--cpu %d,%d: CPU %d is not one this "
					   "process may use (allowed: %s)", o->cpu[0],
					   o->cpu[1], o->cpu[i],
					   cpu_allowed_list(list, sizeof(list)));
		}
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int session_opts_check(const struct ctx *ctx, const struct session_opts *o)
{
	if (ctx->json && o->csv) {
		say_error("--json and --csv exclude each other");
		return EXIT_USAGE;
	}
	return 0;
}

int session_cpu_check(const struct session_opts *o, bool polls)
{
	char list[256], why[320];
	int only = cpu_allowed_count() == 1 ? cpu_pick(0) : -1;

	if (!polls || o->peer_mode)
		return 0;
	if (only >= 0)
		snprintf(why, sizeof(why), "CPU %d, the only one this process may "
			 "use (allowed: %s)", only,
			 cpu_allowed_list(list, sizeof(list)));
	else if (o->cpu[0] >= 0 && o->cpu[0] == o->cpu[1])
		snprintf(why, sizeof(why), "CPU %d (--cpu %d,%d)", o->cpu[0],
			 o->cpu[0], o->cpu[1]);
	else
		return 0;
	if (o->force) {
		say_warning("warning: both sides busy-poll on %s: each waits until the "
		     "scheduler runs the other, so the figures measure the "
		     "scheduler, not smq (--force)", why);
		return 0;
	}
	say_error("both sides would busy-poll on %s: each would wait until the "
	      "scheduler runs the other, so the figures would measure the "
	      "scheduler, not smq; give two CPUs with --cpu, or use --wait spin "
	      "or sleep, or run anyway with --force", why);
	return EXIT_USAGE;
}

const struct argp session_argp = { session_options, session_parse, NULL,
				   NULL, NULL, NULL, NULL };

/* ---- --size and --count ---- */

enum { OPT_SIZE = 'z', OPT_COUNT = 'c' };

/* Their help is the command's own (size_help): a count is of round trips
 * for one command and of messages for the other. */
static const struct argp_option size_options[] = {
	{ "size", OPT_SIZE, "LIST", 0, NULL, 0 },
	{ "count", OPT_COUNT, "N", 0, NULL, 0 },
	{ 0 }
};

static error_t size_parse(int key, char *arg, struct argp_state *st)
{
	struct size_opts *o = st->input;

	switch (key) {
	case OPT_SIZE:
		o->nsizes = arg_sizes(st, "--size", arg, o->sizes, MAX_SIZES);
		break;
	case OPT_COUNT:
		o->count = arg_u32(st, "--count", arg, 1, UINT32_MAX);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* argp frees what a filter returns when it is not text. */
static char *size_help(int key, const char *text, void *input)
{
	const struct size_opts *o = input;
	const char *doc = NULL;

	if (o && key == OPT_SIZE)
		doc = o->size_doc;
	else if (o && key == OPT_COUNT)
		doc = o->count_doc;
	return doc ? strdup(doc) : (char *)text;
}

const struct argp size_argp = { size_options, size_parse, NULL, NULL, NULL,
				size_help, NULL };

error_t measure_cmd_parse(int key, char *arg, struct argp_state *st,
			  struct size_opts *sz, void *own,
			  struct session_opts *s)
{
	switch (key) {
	case ARGP_KEY_INIT:
		st->child_inputs[0] = sz;
		st->child_inputs[1] = own;
		st->child_inputs[2] = s;
		break;
	default:
		return no_operands(key, arg, st);
	}
	return 0;
}
