/* smqctl sync: board startup.  Board 0 waits for every board to announce
 * itself and then declares the system ready; another board announces
 * itself and waits for that (the SimpleMessageQueue paper's
 * boardInitialized and synchronize(nice)). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "smqctl.h"

struct sync_opts {
	int timeout_ms, interval_ms;
	bool new_generation;
};

enum { OPT_NEW_GENERATION = 0x100 };

static const struct argp_option options[] = {
	{ "timeout", 'T', "TIME", 0,
	  "Give up after TIME (default 60s; inf waits forever)", 0 },
	{ "interval", 'i', "TIME", 0,
	  "Poll period: how often a waiting board looks again (default "
	  "100ms)", 0 },
	{ "new-generation", OPT_NEW_GENERATION, NULL, 0,
	  "On a board other than 0: wait for a generation newer than the one "
	  "the window has when sync starts (a window left ready by an earlier "
	  "boot is not joined; board 0 formats it again)", 0 },
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct sync_opts *o = st->input;

	switch (key) {
	case 'T':
		o->timeout_ms = arg_duration(st, "--timeout", arg);
		break;
	case 'i':
		o->interval_ms = arg_duration(st, "--interval", arg);
		if (o->interval_ms <= 0)
			argp_error(st, "--interval must be more than 0");
		break;
	case OPT_NEW_GENERATION:
		o->new_generation = true;
		break;
	default:
		return no_operands(key, arg, st);
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"Synchronise board startup.  On board 0: wait until every board has "
	"announced itself, printing each as it arrives, then declare the system "
	"ready.  On any other board: wait for the window to be formatted, "
	"announce this board, and wait until board 0 declares the system "
	"ready (a board that reboots alone joins the generation that runs; "
	"with --new-generation it waits for board 0 to format anew).  Exit 0 "
	"when synchronised, 1 on timeout naming the missing boards.",
	NULL, NULL, NULL
};

static const char *board_list(uint64_t mask, char *buf, size_t n)
{
	size_t len = 0;
	int count = __builtin_popcountll(mask), i = 0;

	buf[0] = 0;
	for (unsigned b = 0; b < SMQ_MAX_BOARDS && len < n; b++)
		if (mask & (1ull << b)) {
			i++;
			len += (size_t)snprintf(buf + len, n - len, "%s%u",
				i == 1 ? "" : i == count ? " and " : ", ", b);
		}
	return buf;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int remaining(int64_t deadline)
{
	if (deadline < 0)
		return SMQ_WAIT_FOREVER;
	int64_t left = deadline - now_ms();
	return left > 0 ? (int)left : 0;
}

/* A line of sync --json: {"event": EVENT, K1: V1[, K2: V2]}. */
static void print_event(FILE *f, const char *event, const char *k1,
			uint64_t v1, const char *k2, uint64_t v2)
{
	struct json j;

	json_open_line(&j, f);
	json_begin(&j, NULL, '{');
	json_str(&j, "event", event);
	json_u64(&j, k1, v1);
	if (k2)
		json_u64(&j, k2, v2);
	json_end(&j, '}');
	json_close(&j);
}

static void print_arrivals(struct ctx *ctx, struct smq_window *w,
			   uint64_t arrived)
{
	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++) {
		struct smq_board_info bi;
		if (!(arrived & (1ull << b)) || smq_board_info(w, b, &bi, sizeof(bi)))
			continue;
		char host[80];
		if (ctx->json)
			print_event(stdout, "announced", "board", b, "pid",
				    bi.pid);
		else
			printf("board %u announced (pid %u on %s)\n", b, bi.pid,
			       text_safe(bi.host, host, sizeof(host)));
		fflush(stdout);
	}
}

/* Boards that announced themselves under this generation and whose
 * processes died since (the library's judgement): they will not be ready
 * unless a new process announces them. */
static uint64_t dead_boards(struct smq_window *w, unsigned boards)
{
	uint64_t dead = 0;

	for (unsigned b = 0; b < boards; b++) {
		struct smq_board_info bi;
		if (!smq_board_info(w, b, &bi, sizeof(bi)) &&
		    bi.state != SMQ_BOARD_ABSENT &&
		    bi.activity == SMQ_ACTIVITY_DEAD)
			dead |= 1ull << b;
	}
	return dead;
}

static int report_dead(uint64_t dead, struct smq_window *w)
{
	char list[256], host[80];
	struct smq_board_info bi;
	unsigned first = (unsigned)__builtin_ctzll(dead);

	smq_board_info(w, first, &bi, sizeof(bi));
	board_list(dead, list, sizeof(list));
	smq_close(w);
	return say_error("sync: board%s %s announced %s and then died (board %u "
		     "was pid %u on %s)", __builtin_popcountll(dead) == 1 ? "" : "s",
		     list, __builtin_popcountll(dead) == 1 ? "itself" : "themselves",
		     first, bi.pid, text_safe(bi.host, host, sizeof(host)));
}

/* Why each of the pending boards is not counted: never announced, or
 * announced on another host whose heartbeat this sync has not yet seen
 * move (it cannot tell a live board from a dead one there before). */
static void print_missing(struct smq_window *w, uint64_t pending)
{
	char list[256];
	uint64_t unknown = 0;

	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++) {
		struct smq_board_info bi;
		if ((pending >> b & 1) && !smq_board_info(w, b, &bi, sizeof(bi)) &&
		    bi.state != SMQ_BOARD_ABSENT &&
		    bi.activity == SMQ_ACTIVITY_UNKNOWN)
			unknown |= 1ull << b;
	}
	if (pending & ~unknown)
		fprintf(stderr, ": board%s %s never announced %s",
			__builtin_popcountll(pending & ~unknown) == 1 ? "" : "s",
			board_list(pending & ~unknown, list, sizeof(list)),
			__builtin_popcountll(pending & ~unknown) == 1 ? "itself"
								      : "themselves");
	if (unknown)
		fprintf(stderr, "%s board%s %s announced on another host, but "
			"%s heartbeat has not been seen to move (alive or "
			"not: not known yet)", pending & ~unknown ? ";" : ":",
			__builtin_popcountll(unknown) == 1 ? "" : "s",
			board_list(unknown, list, sizeof(list)),
			__builtin_popcountll(unknown) == 1 ? "its" : "their");
	fputc('\n', stderr);
}

/* A second process announcing a board whose announcer lives. */
static int announcer_busy(struct ctx *ctx, struct smq_window *w)
{
	struct smq_holdout h;
	char host[80];

	smq_holdout(w, &h, sizeof(h));
	smq_close(w);
	return say_error("sync: board %u is being announced by pid %u on %s "
		     "(another smqctl sync?): one process announces a board",
		     ctx->board, h.pid, text_safe(h.host, host, sizeof(host)));
}

/* The last look of a sync at its deadline, the board not kept announced:
 * 0 if the system is ready after all, else -ETIMEDOUT with the board's
 * announcement taken back (a slice that stayed announced may have ended
 * past the deadline: a stopped or busy process). */
static int give_up(struct smq_window *w, const struct sync_opts *o,
		   uint64_t *pending)
{
	return smq_synchronize(w, 0, 0, o->interval_ms, pending);
}

/* The flags of one slice of a sync: the board stays announced between
 * slices, and takes its announcement back only if the last one fails. */
static unsigned slice_flags(int64_t deadline, int slice)
{
	return deadline < 0 || deadline - now_ms() > slice ? SMQ_SYNC_STAY : 0;
}

static int sync_system(struct ctx *ctx, const struct sync_opts *o,
		       int64_t deadline)
{
	struct smq_window *w;
	struct smq_window_info wi;
	uint64_t pending, before;
	int err;

	if (open_window(ctx, 0, &w))
		return 1;
	smq_window_info(w, &wi, sizeof(wi));
	before = (wi.geometry.boards == 64 ? ~0ull
		  : (1ull << wi.geometry.boards) - 1) & ~1ull;
	for (;;) {
		int slice = remaining(deadline);
		if (slice < 0 || slice > o->interval_ms)
			slice = o->interval_ms;
		unsigned stay = slice_flags(deadline, slice);
		err = smq_synchronize(w, stay, slice, o->interval_ms, &pending);
		if (err == -EBUSY)
			return announcer_busy(ctx, w);
		if (err && err != -ETIMEDOUT)
			break;
		if (err == 0)
			pending = 0;
		print_arrivals(ctx, w, before & ~pending);
		before = pending;
		uint64_t dead = err ? dead_boards(w, wi.geometry.boards) & ~1ull : 0;
		if (dead)
			return report_dead(dead, w);
		if (!err) {
			if (ctx->json)
				print_event(stdout, "ready", "boards",
					    wi.geometry.boards, NULL, 0);
			else
				printf("system ready: %u board%s\n",
				       wi.geometry.boards,
				       wi.geometry.boards == 1 ? "" : "s");
			smq_close(w);
			return 0;
		}
		/* a slice that did not stay announced gave up itself: a
		 * last look would announce the board again */
		if (deadline >= 0 && now_ms() >= deadline &&
		    (!stay || (err = give_up(w, o, &pending)) == -ETIMEDOUT)) {
			fprintf(stderr, "smqctl: sync timed out after ");
			print_duration(stderr, o->timeout_ms);
			print_missing(w, pending);
			smq_close(w);
			return 1;
		}
		if (!err)
			pending = 0;
	}
	smq_close(w);
	return window_error(ctx, "sync", err);
}

/* A board other than 0 may start before board 0 has formatted the window,
 * board 0 may re-format it while we wait, or have been killed doing so
 * (its next init or clear finishes it): all mean try again. */
static bool not_yet(int err)
{
	return err == -ENOENT || err == -SMQ_EUNFORMATTED || err == -ESTALE ||
	       err == -EBUSY || err == -SMQ_ETOOSMALL ||
	       err == -SMQ_EINCOMPLETE;
}

/* The window's generation, or 0 if it has none yet. */
static uint64_t generation_now(struct ctx *ctx)
{
	struct smq_window *w;
	struct smq_window_info wi;

	if (smq_open(window_spec(ctx), ctx->board, 0, &w))
		return 0;
	smq_window_info(w, &wi, sizeof(wi));
	smq_close(w);
	return wi.generation;
}

/* The generation a handle is attached under (or, stale, the window's). */
static uint64_t generation_of(struct smq_window *w)
{
	struct smq_window_info wi;

	smq_window_info(w, &wi, sizeof(wi));
	return wi.generation;
}

static void print_ready(const struct ctx *ctx, struct smq_window *w)
{
	if (ctx->json)
		print_event(stdout, "ready", "board", ctx->board, NULL, 0);
	else {
		struct smq_window_info wi;
		smq_window_info(w, &wi, sizeof(wi));
		printf("board %u: system ready (generation %" PRIu64 ")\n",
		       ctx->board, wi.generation);
	}
}

/* Why sync gave up at the deadline: err is the last attempt's, pending
 * the boards that had not come when it was -ETIMEDOUT.  Returns 1. */
static int timed_out(const struct ctx *ctx, const struct sync_opts *o,
		     int err, uint64_t pending)
{
	char list[256];

	fprintf(stderr, "smqctl: sync timed out after ");
	print_duration(stderr, o->timeout_ms);
	if (err == -ETIMEDOUT)
		fprintf(stderr, ": board 0 did not declare the system ready "
			"(still missing: board%s %s)\n",
			__builtin_popcountll(pending) == 1 ? "" : "s",
			board_list(pending, list, sizeof(list)));
	else if (err == -ENOENT)
		fprintf(stderr, ": board 0 has not created window %s (has it run "
			"smqctl init?)\n", window_spec(ctx));
	else
		fprintf(stderr, ": board 0 has not formatted window %s (%s)\n",
			window_spec(ctx), smq_strerror(err));
	return 1;
}

static int sync_board(struct ctx *ctx, const struct sync_opts *o,
		      int64_t deadline)
{
	struct smq_window *w = NULL;
	uint64_t pending = 0, older = 0;
	bool said = false, told = false;
	int err;

	if (o->new_generation)
		older = generation_now(ctx);
	for (;;) {
		err = smq_open(window_spec(ctx), ctx->board, 0, &w);
		if (!err) {
			/* in slices of a second, to notice a system board that
			 * announced itself and died */
			for (;;) {
				int slice = remaining(deadline);
				if (slice < 0 || slice > 1000)
					slice = 1000;
				/* the generation that was there when we started
				 * is an earlier boot's: the library waits for
				 * board 0 to format anew, and attaches to it */
				unsigned flags = older && generation_of(w) <= older
						 ? SMQ_SYNC_NEW_GENERATION : 0;
				if (flags && !told && !ctx->json)
					fprintf(stderr, "smqctl: board %u: waiting for "
						"board 0 to format %s anew (it has "
						"generation %" PRIu64 ")\n", ctx->board,
						window_spec(ctx), older);
				told = told || flags;
				unsigned stay = slice_flags(deadline, slice);
				err = smq_synchronize(w, flags | stay, slice,
						      o->interval_ms, &pending);
				if (err == -EBUSY && !flags)
					return announcer_busy(ctx, w);
				/* only a slice that stayed announced needs a
				 * last look: one that did not gave up itself */
				if (err == -ETIMEDOUT && !flags && stay &&
				    deadline >= 0 && now_ms() >= deadline)
					err = give_up(w, o, &pending);
				if (err != -ETIMEDOUT ||
				    (deadline >= 0 && now_ms() >= deadline))
					break;
				/* a board 0 that is gone matters only in the
				 * generation we wait in, not in an earlier
				 * boot's */
				struct smq_window_info wi;
				smq_window_info(w, &wi, sizeof(wi));
				if (!flags && dead_boards(w, wi.geometry.boards) & 1)
					return report_dead(1, w);
			}
			if (!err) {
				print_ready(ctx, w);
				smq_close(w);
				return 0;
			}
			smq_close(w);
		}
		if (!not_yet(err) && err != -ETIMEDOUT)
			return err == -EINVAL ? open_error(ctx, err)
					      : window_error(ctx, "sync", err);
		if (deadline >= 0 && now_ms() >= deadline)
			break;
		if (!said && err != -ETIMEDOUT && ctx->verbose) {
			fprintf(stderr, "smqctl: board %u: waiting for board 0 "
				"to format %s\n", ctx->board, window_spec(ctx));
			said = true;
		}
		/* never past the deadline: a timeout is kept to within a look */
		int64_t nap = o->interval_ms, left = deadline - now_ms();
		if (deadline >= 0 && left < nap)
			nap = left > 0 ? left : 1;
		usleep((useconds_t)nap * 1000);
	}
	return timed_out(ctx, o, err, pending);
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct sync_opts o = { 60000, 100, false };

	parse_cmd(&argp, argc, argv, &o, ctx);
	int64_t deadline = o.timeout_ms < 0 ? -1 : now_ms() + o.timeout_ms;
	return ctx->board == 0 ? sync_system(ctx, &o, deadline)
			       : sync_board(ctx, &o, deadline);
}

const struct cmd cmd_sync = { "sync", run, &argp,
			      "synchronise board startup" };
