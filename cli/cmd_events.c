/* smqctl events: what changes in the window, as it happens, one event a
 * line (text with a time, or JSON lines), from a monitor that never writes.
 * The work is in events/. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio_ext.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "events/events.h"

enum { OPT_KIND = 0x100, OPT_UNTIL, OPT_SINCE, OPT_CURSOR };

/* A set of event types, from a list of names. */
struct kinds {
	bool any;               /* a list was given */
	bool has[EV_TYPES];
};

struct events_opts {
	uint64_t count;         /* 0: no limit */
	int timeout_ms;         /* SMQ_WAIT_FOREVER: none */
	int interval_ms;
	int stall_ms;           /* --stall; 0: the library's default */
	struct queue_opt q;     /* --queue; -1: every queue */
	struct kinds kind;      /* --kind: only these */
	struct kinds wait;      /* --until: end at the first of these */
	const char *since;      /* --since */
	const char *cursor;     /* --cursor */
};

static const struct argp_option options[] = {
	{ "count", 'c', "N", 0, "Stop after N events", 0 },
	{ "timeout", 'T', "TIME", 0, "Stop after TIME (default: never); with "
	  "--until, exit 3 if the event did not come", 0 },
	{ "interval", 'i', "TIME", 0,
	  "Look at the window this often (default 100ms); an episode shorter "
	  "than that is still counted", 0 },
	{ "kind", OPT_KIND, "KIND[,KIND...]", 0,
	  "Print only events of these kinds (their JSON names, e.g. "
	  "board_ready,queue_stalled)", 0 },
	{ "until", OPT_UNTIL, "KIND[,KIND...]", 0,
	  "Exit 0 at the first event of these kinds (with --board and "
	  "--queue, of that board or queue), at once if its state already "
	  "holds (board_ready of a board that is ready)", 0 },
	{ "since", OPT_SINCE, "WHEN", 0,
	  "Replay what the boards' journals hold first, then follow: all, "
	  "gen:G (entries of generation G and later) or B:SEQ[,B:SEQ...] "
	  "(board B's from its entry SEQ); default: only what comes", 0 },
	{ "cursor", OPT_CURSOR, "FILE", 0,
	  "Keep where each board's journal was read in FILE: a run started "
	  "again goes on from there, whatever --since says (a recorder)", 0 },
	STALL_OPTION("Say a queue stalled when it holds messages whose bottom "
		     "does not move for TIME (default 5s)"),
	{ 0 }
};

static void parse_kinds(struct argp_state *st, const char *opt,
			const char *arg, struct kinds *k)
{
	const char *p = arg;

	memset(k, 0, sizeof(*k));
	k->any = true;
	for (;;) {
		size_t len = strcspn(p, ",");
		enum ev_type t = event_type(p, len);
		if (t == EV_TYPES)
			argp_error(st, "%s: no event is called '%.*s' (the names "
				   "of smqctl help events)", opt, (int)len, p);
		k->has[t] = true;
		if (!p[len])
			break;
		p += len + 1;
	}
}

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct events_opts *o = st->input;

	switch (key) {
	case ARGP_KEY_INIT:
		st->child_inputs[0] = &o->q;
		break;
	case 'c':
		o->count = arg_u32(st, "--count", arg, 1, UINT32_MAX);
		break;
	case 'T':
		o->timeout_ms = arg_duration(st, "--timeout", arg);
		break;
	case 'i':
		o->interval_ms = arg_duration(st, "--interval", arg);
		if (o->interval_ms <= 0 || o->interval_ms > 60000)
			argp_error(st, "--interval needs a time from 1ms to 60s, "
				   "not '%s'", arg);
		break;
	case OPT_KIND:
		parse_kinds(st, "--kind", arg, &o->kind);
		break;
	case OPT_UNTIL:
		parse_kinds(st, "--until", arg, &o->wait);
		break;
	case OPT_STALL:
		o->stall_ms = arg_stall(st, arg);
		break;
	case OPT_CURSOR:
		if (!*arg)
			argp_error(st, "--cursor needs a file");
		o->cursor = arg;
		break;
	case OPT_SINCE: {
		struct ev_watch probe;
		memset(&probe, 0, sizeof(probe));
		if (!ev_watch_since(&probe, arg))
			argp_error(st, "--since needs all, gen:G or "
				   "B:SEQ[,B:SEQ...], not '%s'", arg);
		o->since = arg;
		break;
	}
	default:
		return no_operands(key, arg, st);
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"Print the window's state changes as they happen, one a line: boards "
	"announced, ready, at rest, dead, back or rebooted; the generation "
	"(init, clear) and a queue cleared; queues full and with room again, "
	"stalled and moving again; receivers attached, closed, dead, stopped "
	"and running again; a doorbell not answered; the window unreadable "
	"and readable again; and when this watcher fell behind.  Text with "
	"the time, or with --json one JSON object a line.  --board N (the "
	"common option) shows only board N's events, --queue and --kind "
	"narrow them too.  It only reads the window.  SIGINT, SIGTERM and a "
	"closed output end it (exit 0; with --until, 1).",
	queue_children, NULL, NULL
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct out {
	struct ctx *ctx;
	const struct events_opts *o;
	uint64_t left;          /* events still to print; 0: no limit */
	bool limited, broken;
	bool waited;            /* --until: the event came */
};

static bool wanted(const struct out *out, const struct event *e)
{
	const struct events_opts *o = out->o;

	/* what is of the whole window (unreadable, a generation, the
	 * system ready) is every board's */
	if (out->ctx->board_set && e->board >= 0 &&
	    e->board != (int)out->ctx->board)
		return false;
	if (o->q.queue >= 0 && e->queue != o->q.queue)
		return false;
	return !o->kind.any || o->kind.has[e->type];
}

/* The reader of our output went away: a pipe whose end closed. */
static bool output_closed(void)
{
	struct pollfd p = { STDOUT_FILENO, 0, 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

static int print_event(const struct event *e, void *arg)
{
	struct out *o = arg;
	char line[512], when[32];

	if (!wanted(o, e))
		return 0;
	/* a state that holds at the first look is said only to a wait */
	if (e->holds && !o->o->wait.has[e->type])
		return 0;
	if (o->ctx->json) {
		struct json j;
		json_open_line(&j, stdout);
		event_json(e, &j);
		json_close(&j);
	} else {
		time_t t = (time_t)(e->time_ns / 1000000000ull);
		struct tm tm;
		when[0] = 0;
		if (localtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		event_text(e, line, sizeof(line));
		printf("%s.%03u  %s\n", when,
		       (unsigned)(e->time_ns / 1000000 % 1000), line);
	}
	if (fflush(stdout) || ferror(stdout)) {
		o->broken = true;
		return 1;
	}
	if (o->o->wait.has[e->type]) {
		o->waited = true;
		return 1;
	}
	return o->limited && --o->left == 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The exit status: --until says whether the event came (3: the timeout
 * passed first); else every way to end is a clean one. */
static int events_status(const struct out *out, bool timed_out)
{
	if (out->broken) {
		/* nothing more can be written, nor should be flushed: the
		 * reader left, which is how a pipe ends */
		__fpurge(stdout);
		clearerr(stdout);
	}
	if (!out->o->wait.any)
		return 0;
	if (out->waited)
		return 0;
	return timed_out ? 3 : 1;
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct events_opts o = { 0, SMQ_WAIT_FOREVER, 100, 0,
				 { -1, "Show only queue Q's events" },
				 { 0 }, { 0 }, NULL, NULL };
	struct sigaction sa;
	struct ev_watch ew;
	bool timed_out = false;

	parse_cmd(&argp, argc, argv, &o, ctx);
	/* a spec that can never name a window is a mistake, not a wait */
	struct smq_window *probe;
	int err = smq_open(window_spec(ctx), 0, SMQ_OPEN_READONLY, &probe);
	if (err == -EPROTONOSUPPORT || err == -EINVAL)
		return open_error(ctx, err);
	if (!err)
		smq_close(probe);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;  /* no SA_RESTART: a sleep ends at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);  /* a closed output: the write fails */
	struct out out = { ctx, &o, o.count, o.count > 0, false, false };
	int64_t deadline = o.timeout_ms < 0 ? -1 : mono_ms() + o.timeout_ms;
	ev_watch_open(&ew, window_spec(ctx), o.interval_ms);
	ew.stall_ms = o.stall_ms;
	if (o.since)
		ev_watch_since(&ew, o.since);
	ew.cursor_file = o.cursor;
	for (bool first = true; !stop; first = false) {
		int stepped = ev_watch_step(&ew, print_event, &out);
		/* what was printed is where the next run goes on */
		if (ew.cursor_moved && !out.broken) {
			int serr = ev_watch_cursor_save(&ew);
			if (serr)
				say_warning("cannot write --cursor %s: %s",
					    o.cursor, strerror(-serr));
			ew.cursor_moved = false;
		}
		if (stepped)
			break;
		/* --since asks for what happened; a window formatted with
		 * --journal 0 kept none (a recorder's --cursor follows it
		 * anyway: its window may get a journal at the next init) */
		if (first && o.since && !o.cursor && !ew.err &&
		    !ew.has_journal) {
			ev_watch_close(&ew);
			return say_error("%s keeps no journal (init --journal 0 "
					 "formatted it): --since has nothing "
					 "to replay; events without it follows "
					 "what happens from now", window_spec(ctx));
		}
		/* a wait for what already holds ends at once */
		if (first && o.wait.any && ev_watch_holds(&ew, print_event, &out))
			break;
		if (output_closed()) {
			out.broken = true;
			break;
		}
		if (deadline >= 0 && mono_ms() >= deadline) {
			timed_out = true;
			break;
		}
		int nap = o.interval_ms;
		if (deadline >= 0 && deadline - mono_ms() < nap)
			nap = (int)(deadline - mono_ms());
		if (nap > 0) {
			struct timespec ts = { nap / 1000,
					       (long)(nap % 1000) * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
	ev_watch_close(&ew);
	return events_status(&out, timed_out);
}

const struct cmd cmd_events = { "events", run, &argp,
				"print the window's state changes as they "
				"happen" };
