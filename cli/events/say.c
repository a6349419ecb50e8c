/* Events in words and in JSON (events.h). */
#include <inttypes.h>
#include <string.h>
#include "events.h"

static const char *const names[EV_TYPES] = {
	[EV_GENERATION] = "generation",
	[EV_QUEUE_CLEARED] = "queue_cleared",
	[EV_MAINTENANCE] = "maintenance",
	[EV_BOARD_ANNOUNCED] = "board_announced",
	[EV_BOARD_READY] = "board_ready",
	[EV_BOARD_GONE] = "board_gone",
	[EV_BOARD_DEAD] = "board_dead",
	[EV_BOARD_REBOOTED] = "board_rebooted",
	[EV_BOARD_RESTARTED] = "board_restarted",
	[EV_SYSTEM_READY] = "system_ready",
	[EV_QUEUE_FULL] = "queue_full",
	[EV_QUEUE_DRAINED] = "queue_drained",
	[EV_RECEIVER_ATTACHED] = "receiver_attached",
	[EV_RECEIVER_GONE] = "receiver_gone",
	[EV_RECEIVER_DEAD] = "receiver_dead",
	[EV_DOORBELL_UNANSWERED] = "doorbell_unanswered",
	[EV_MESSAGES_CORRUPT] = "messages_corrupt",
	[EV_WINDOW_UNREADABLE] = "window_unreadable",
	[EV_WINDOW_READABLE] = "window_readable",
	[EV_LAGGED] = "lagged",
	[EV_QUEUE_STALLED] = "queue_stalled",
	[EV_QUEUE_RESUMED] = "queue_resumed",
	[EV_RECEIVER_STOPPED] = "receiver_stopped",
	[EV_RECEIVER_CONTINUED] = "receiver_continued",
};

const char *event_name(enum ev_type t)
{
	return t < EV_TYPES ? names[t] : "?";
}

enum ev_type event_type(const char *name, size_t len)
{
	for (int t = 0; t < EV_TYPES; t++)
		if (strlen(names[t]) == len && !strncmp(names[t], name, len))
			return (enum ev_type)t;
	return EV_TYPES;
}

/* " (pid N on HOST)", or nothing without a pid */
static const char *who(const struct event *e, char *buf, size_t n)
{
	char host[80];

	buf[0] = 0;
	if (e->pid && e->host[0])
		snprintf(buf, n, " (pid %u on %s)", e->pid,
			 text_safe(e->host, host, sizeof(host)));
	else if (e->pid)
		snprintf(buf, n, " (pid %u)", e->pid);
	return buf;
}

static void times(const struct event *e, char *buf, size_t n)
{
	buf[0] = 0;
	if (e->count > 1)
		snprintf(buf, n, " %" PRIu64 " times", e->count);
}

void event_text(const struct event *e, char *buf, size_t n)
{
	char w[160], t[32];

	who(e, w, sizeof(w));
	times(e, t, sizeof(t));
	switch (e->type) {
	case EV_GENERATION:
		snprintf(buf, n, "window formatted anew: generation %" PRIu64
			 " -> %" PRIu64 " (init, or a clear of every queue)",
			 e->from, e->to);
		break;
	case EV_QUEUE_CLEARED:
		snprintf(buf, n, "queue %d cleared: epoch %#" PRIx64 " -> %#"
			 PRIx64, e->queue, e->from, e->to);
		break;
	case EV_MAINTENANCE:
		snprintf(buf, n, "an init or clear began on board 0%s", w);
		break;
	case EV_BOARD_ANNOUNCED:
		if (e->old_pid)
			snprintf(buf, n, "board %d announced itself%s%s, a new "
				 "process (was pid %u)", e->board, t, w,
				 e->old_pid);
		else
			snprintf(buf, n, "board %d announced itself%s%s",
				 e->board, t, w);
		break;
	case EV_BOARD_READY:
		snprintf(buf, n, "board %d ready", e->board);
		break;
	case EV_BOARD_GONE:
		snprintf(buf, n, "board %d at rest: its processes closed%s",
			 e->board, w);
		break;
	case EV_BOARD_DEAD:
		snprintf(buf, n, "board %d dead: its processes died without "
			 "closing%s", e->board, w);
		break;
	case EV_BOARD_REBOOTED:
		snprintf(buf, n, "board %d rebooted: its host's boot id changed",
			 e->board);
		break;
	case EV_BOARD_RESTARTED:
		if (!e->pid)
			snprintf(buf, n, "board %d back: what pid %u left when it "
				 "died was taken down, the board is at rest",
				 e->board, e->old_pid);
		else if (e->old_pid)
			snprintf(buf, n, "board %d back: a new process%s after "
				 "pid %u died", e->board, w, e->old_pid);
		else
			snprintf(buf, n, "board %d back: a process at it again%s",
				 e->board, w);
		break;
	case EV_SYSTEM_READY:
		snprintf(buf, n, "system ready");
		break;
	case EV_QUEUE_FULL:
		if (e->from >= e->to)
			snprintf(buf, n, "queue %d full: a lane holds %" PRIu64
				 " of %" PRIu64, e->queue, e->from, e->to);
		else
			snprintf(buf, n, "queue %d was full between two looks: "
				 "%" PRIu64 " send%s found it full", e->queue,
				 e->count, e->count == 1 ? "" : "s");
		break;
	case EV_QUEUE_DRAINED:
		snprintf(buf, n, "queue %d has room%s", e->queue,
			 e->holds ? "" : " again");
		break;
	case EV_RECEIVER_ATTACHED:
		snprintf(buf, n, "queue %d: receiver attached%s%s%s", e->queue, t,
			 w, e->to ? ", in the place of one that died" : "");
		break;
	case EV_RECEIVER_GONE:
		if (e->holds)
			snprintf(buf, n, "queue %d: no receiver", e->queue);
		else
			snprintf(buf, n, "queue %d: receiver closed the queue%s%s",
				 e->queue, t, w);
		break;
	case EV_RECEIVER_DEAD:
		snprintf(buf, n, "queue %d: receiver died with the queue open%s",
			 e->queue, w);
		break;
	case EV_DOORBELL_UNANSWERED:
		snprintf(buf, n, "queue %d: doorbell not answered: its receiver%s "
			 "sleeps on, %.1f s, with %" PRIu64 " message%s queued",
			 e->queue, w, (double)e->from / 1000, e->to,
			 e->to == 1 ? "" : "s");
		break;
	case EV_MESSAGES_CORRUPT:
		snprintf(buf, n, "queue %d: %" PRIu64 " message%s failed %s "
			 "checksum and %s refused, not delivered (%" PRIu64
			 " so far)", e->queue, e->count, e->count == 1 ? "" : "s",
			 e->count == 1 ? "its" : "their",
			 e->count == 1 ? "was" : "were", e->to);
		break;
	case EV_WINDOW_UNREADABLE:
		snprintf(buf, n, "window cannot be read: %s", e->why);
		break;
	case EV_WINDOW_READABLE:
		snprintf(buf, n, "window can be read again");
		break;
	case EV_LAGGED:
		snprintf(buf, n, "events fell behind: %" PRIu64 " ms between two "
			 "looks (interval %" PRIu64 " ms): what happened between "
			 "them is counted, not timed", e->from, e->to);
		break;
	case EV_QUEUE_STALLED:
		snprintf(buf, n, "queue %d stalled: %" PRIu64 " message%s held %.1f "
			 "s with its bottom unmoved%s%s", e->queue, e->to,
			 e->to == 1 ? "" : "s", (double)e->from / 1000,
			 e->pid ? ", its receiver" : ", and no receiver", w);
		break;
	case EV_QUEUE_RESUMED:
		snprintf(buf, n, "queue %d %s", e->queue, e->holds
			 ? "not stalled" : "moves again: its messages are taken");
		break;
	case EV_RECEIVER_STOPPED:
		snprintf(buf, n, "queue %d: receiver stopped by a signal or a "
			 "debugger%s", e->queue, w);
		break;
	case EV_RECEIVER_CONTINUED:
		snprintf(buf, n, "queue %d: receiver %s%s", e->queue,
			 e->holds ? "runs" : "runs again", w);
		break;
	default:
		snprintf(buf, n, "?");
	}
	size_t len = strlen(buf);
	if (e->holds && len + 24 < n && e->type != EV_RECEIVER_GONE &&
	    e->type != EV_QUEUE_RESUMED && e->type != EV_RECEIVER_CONTINUED &&
	    e->type != EV_QUEUE_DRAINED)
		snprintf(buf + len, n - len, " (so at the first look)");
}

void event_json(const struct event *e, struct json *j)
{
	char text[400];

	json_begin(j, NULL, '{');
	json_u64(j, "time_ns", e->time_ns);
	json_str(j, "event", event_name(e->type));
	if (e->board >= 0)
		json_i64(j, "board", e->board);
	if (e->queue >= 0)
		json_i64(j, "queue", e->queue);
	if (e->pid)
		json_u64(j, "pid", e->pid);
	if (e->old_pid)
		json_u64(j, "old_pid", e->old_pid);
	if (e->host[0])
		json_str(j, "host", e->host);
	json_u64(j, "count", e->count);
	switch (e->type) {
	case EV_GENERATION:
	case EV_QUEUE_CLEARED:
		json_u64(j, "from", e->from);
		json_u64(j, "to", e->to);
		break;
	case EV_QUEUE_FULL:
		json_u64(j, "fill", e->from);
		json_u64(j, "capacity", e->to);
		break;
	case EV_RECEIVER_ATTACHED:
		json_u64(j, "takeovers", e->to);
		break;
	case EV_MESSAGES_CORRUPT:
		json_u64(j, "corrupt", e->to);
		break;
	case EV_DOORBELL_UNANSWERED:
		json_u64(j, "asleep_ms", e->from);
		json_u64(j, "queued", e->to);
		break;
	case EV_WINDOW_UNREADABLE:
		json_str(j, "error", e->why);
		break;
	case EV_LAGGED:
		json_u64(j, "gap_ms", e->from);
		json_u64(j, "interval_ms", e->to);
		break;
	case EV_QUEUE_STALLED:
		json_u64(j, "stalled_ms", e->from);
		json_u64(j, "queued", e->to);
		break;
	default:
		break;
	}
	if (e->holds)
		json_bool(j, "holds", true);
	event_text(e, text, sizeof(text));
	json_str(j, "text", text);
	json_end(j, '}');
}
