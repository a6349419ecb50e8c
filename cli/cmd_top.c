/* smqctl top: a live view of the window: boards, queues, rates.
 *
 * Top only reads.  It attaches as --board but never announces, beats or
 * opens a queue, so watching a window cannot change what it shows, and a
 * window being formatted under it is followed, not disturbed: a stale
 * handle is replaced by a fresh attach.
 *
 * The terminal is restored on every way out (as htop does in its
 * CRT.c): normal exit, error paths (curses ends before the message is
 * printed), atexit, and the signals that end the process. */
#include <stdlib.h>
#include <string.h>
#include "top/top.h"

enum { OPT_ONCE = 0x200 };

struct top_opts {
	int interval_ms;
	int stall_ms;
	bool once;
	struct ctx *ctx;
};

static const struct argp_option options[] = {
	{ "interval", 'i', "TIME", 0,
	  "Refresh every TIME, and measure rates over it (default 1s; e.g. "
	  "0.5, 200ms, 2s)", 0 },
	STALL_OPTION("Mark a queue STALLED when it holds messages whose "
		     "bottom does not move for TIME (default 5s); with --once, "
		     "queues that hold messages are watched up to TIME first"),
	{ "once", OPT_ONCE, NULL, 0,
	  "Print one plain-text frame, with rates over one interval, and exit "
	  "(with --json, one JSON object)", 0 },
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct top_opts *o = st->input;

	switch (key) {
	case 'i':
		o->interval_ms = arg_duration(st, "--interval", arg);
		if (o->interval_ms <= 0)
			argp_error(st, "--interval needs a time greater than 0, "
				   "not '%s'", arg);
		break;
	case OPT_ONCE:
		o->once = true;
		break;
	case OPT_STALL:
		o->stall_ms = arg_stall(st, arg);
		break;
	case ARGP_KEY_END:
		if (o->ctx->json && !o->once)
			argp_error(st, "--json needs --once (the live view is "
				   "for a terminal)");
		break;
	default:
		return no_operands(key, arg, st);
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"Watch the window live: its state, boards and queues, with messages "
	"sent and received, megabytes (10^6 bytes), doorbells and sends that "
	"met a full ring (waited or refused) per second "
	"measured over each refresh.  Keys: q quit, r reset the rates and "
	"totals, s cycle the sort column (queue, msgs/s, MB/s, fill), p pause, "
	"arrows, PgUp, PgDn, Home and End scroll the queues.  A queue that "
	"holds messages its receiver does not take is marked STALLED, a "
	"receiver stopped by a signal or a debugger too.  Below them, the "
	"latest events (as smqctl events says them) and each queue's messages "
	"a second over about the last minute.  Top only reads "
	"the window, and attaches again by itself when the window is "
	"re-initialised.",
	NULL, NULL, NULL
};

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct top_opts o = { 1000, 0, false, ctx };
	struct viewer v;

	parse_cmd(&argp, argc, argv, &o, ctx);
	memset(&v, 0, sizeof(v));
	v.ctx = ctx;
	v.interval_ms = o.interval_ms;
	v.stall_ms = o.stall_ms;
	v.cur = &v.snaps[0];
	v.next = &v.snaps[1];
	ev_watch_open(&v.events, window_spec(ctx), o.interval_ms);
	/* a monitor: it claims no board and writes nothing (a read-write
	 * open would take down the board's dead handles, which are what an
	 * observer looks for) */
	if (open_window(ctx, SMQ_OPEN_READONLY, &v.w))
		return 1;
	if (check_board(ctx, v.w)) {
		smq_close(v.w);
		return 1;
	}
	if (o.stall_ms)
		smq_set_timeout(v.w, SMQ_TIMEOUT_STALL, o.stall_ms);
	catch_signals();
	reset_totals(&v);
	int rc = o.once ? run_once(&v) : run_live(&v);
	if (v.w)
		smq_close(v.w);
	for (int i = 0; i < 2; i++) {
		free(v.snaps[i].boards);
		free(v.snaps[i].queues);
	}
	free(v.rates);
	free(v.rows);
	free(v.history);
	ev_watch_close(&v.events);
	return rc;
}

const struct cmd cmd_top = { "top", run, &argp,
			     "watch boards and queues live, with rates" };
