/* smqctl events: what changes in the window, as it happens, one event a
 * line (text with a time, or JSON lines), from a monitor that never writes.
 * The work is in events/. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "events/events.h"

struct events_opts {
	uint64_t count;         /* 0: no limit */
	int timeout_ms;         /* SMQ_WAIT_FOREVER: none */
	int interval_ms;
};

static const struct argp_option options[] = {
	{ "count", 'c', "N", 0, "Stop after N events", 0 },
	{ "timeout", 'T', "TIME", 0, "Stop after TIME (default: never)", 0 },
	{ "interval", 'i', "TIME", 0,
	  "Look at the window this often (default 100ms); an episode shorter "
	  "than that is still counted", 0 },
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct events_opts *o = st->input;

	switch (key) {
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
	default:
		return no_operands(key, arg, st);
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"Print the window's state changes as they happen, one a line: boards "
	"announced, ready, at rest, dead or rebooted; the generation (init, "
	"clear) and a queue cleared; queues full and with room again; "
	"receivers attached, closed or dead; a doorbell not answered; the "
	"window unreadable and readable again; and when this watcher fell "
	"behind.  Text with the time, or with --json one JSON object a line.  "
	"It only reads the window.  SIGINT, SIGTERM and a closed output end "
	"it (exit 0).",
	NULL, NULL, NULL
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct out {
	struct ctx *ctx;
	uint64_t left;          /* events still to print; 0: no limit */
	bool limited, broken;
};

static int print_event(const struct event *e, void *arg)
{
	struct out *o = arg;
	char line[512], when[32];

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
	return o->limited && --o->left == 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct events_opts o = { 0, SMQ_WAIT_FOREVER, 100 };
	struct sigaction sa;
	struct ev_watch ew;

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
	struct out out = { ctx, o.count, o.count > 0, false };
	int64_t deadline = o.timeout_ms < 0 ? -1 : mono_ms() + o.timeout_ms;
	ev_watch_open(&ew, window_spec(ctx), o.interval_ms);
	while (!stop) {
		if (ev_watch_step(&ew, print_event, &out))
			break;
		if (deadline >= 0 && mono_ms() >= deadline)
			break;
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
	return 0;
}

const struct cmd cmd_events = { "events", run, &argp,
				"print the window's state changes as they "
				"happen" };
