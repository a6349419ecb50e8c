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
	[EV_QUEUE_EMPTIED] = "queue_emptied",
	[EV_SYNC_GAVE_UP] = "sync_gave_up",
	[EV_SENDER_ATTACHED] = "sender_attached",
	[EV_SENDER_GONE] = "sender_gone",
	[EV_TAKEOVER] = "takeover",
	[EV_JOURNAL_LOST] = "journal_lost",
	[EV_JOURNAL_ABANDONED] = "journal_abandoned",
	[EV_JOURNAL_DAMAGED] = "journal_damaged",
	[EV_JOURNAL_RESTARTED] = "journal_restarted",
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

static const char *role_word(uint32_t role)
{
	return role == SMQ_SENDER ? "sender" : "receiver";
}

/* An entry of a journal in words; false: said as an observation is. */
static bool journal_text(const struct event *e, const char *w, char *buf,
			 size_t n)
{
	switch (e->type) {
	case EV_GENERATION:
		snprintf(buf, n, "board 0 %s: generation %" PRIu64 " -> %" PRIu64
			 ", %" PRIu64 " message%s emptied in %" PRIu64 " queue%s%s",
			 e->jkind == SMQ_JOURNAL_CLEAR ? "cleared every queue"
			 : "formatted the window (init)", e->from, e->to, e->a,
			 e->a == 1 ? "" : "s", e->b, e->b == 1 ? "" : "s",
			 e->jkind == SMQ_JOURNAL_FORMAT && !e->from
			 ? " (it held no window before)" : "");
		return true;
	case EV_QUEUE_CLEARED:
		snprintf(buf, n, "queue %d cleared: epoch %#" PRIx64 " -> %#"
			 PRIx64 ", %" PRIu64 " message%s emptied", e->queue,
			 e->from, e->to, e->a, e->a == 1 ? "" : "s");
		return true;
	case EV_QUEUE_EMPTIED:
		snprintf(buf, n, "queue %d: %" PRIu64 " message%s emptied, never "
			 "delivered", e->queue, e->a, e->a == 1 ? "" : "s");
		return true;
	case EV_BOARD_ANNOUNCED:
		snprintf(buf, n, "board %u announced itself%s: announcement %"
			 PRIu64 " of this generation", e->jboard, w, e->a);
		return true;
	case EV_SYSTEM_READY:
		snprintf(buf, n, "board 0 declared the system ready: %" PRIu64
			 " boards", e->a);
		return true;
	case EV_SYNC_GAVE_UP: {
		char missing[200];
		/* 64: no "every board", the window's count not known here */
		snprintf(buf, n, "board %u's sync gave up%s, waiting for %s%s",
			 e->jboard, w, board_set(e->a, 64, missing,
						 sizeof(missing)),
			 e->b ? "; it took its announcement back" : "");
		return true;
	}
	case EV_BOARD_REBOOTED:
		snprintf(buf, n, "board %u booted again: the first entry of a new "
			 "boot of its host%s", e->jboard, w);
		return true;
	case EV_RECEIVER_ATTACHED:
	case EV_SENDER_ATTACHED:
	case EV_RECEIVER_GONE:
	case EV_SENDER_GONE:
		snprintf(buf, n, "queue %d: board %u's %s %s%s", e->queue,
			 e->jboard, role_word(e->role),
			 e->type == EV_RECEIVER_ATTACHED ||
			 e->type == EV_SENDER_ATTACHED ? "opened it" : "closed it",
			 w);
		return true;
	case EV_TAKEOVER:
		if (e->role == SMQ_SENDER)
			snprintf(buf, n, "queue %d: board %u's lane lock taken "
				 "over%s from pid %u, which died holding it",
				 e->queue, e->jboard, w, e->old_pid);
		else
			snprintf(buf, n, "queue %d: the receiver's claim taken "
				 "over%s from pid %u, which died holding it",
				 e->queue, w, e->old_pid);
		return true;
	case EV_QUEUE_FULL:
		snprintf(buf, n, "queue %d full: a send of board %u met its lane "
			 "full%s", e->queue, e->jboard, w);
		return true;
	case EV_QUEUE_DRAINED:
		snprintf(buf, n, "queue %d has room again for board %u: %" PRIu64
			 " send%s refused, %" PRIu64 " waited meanwhile", e->queue,
			 e->jboard, e->a, e->a == 1 ? "" : "s", e->b);
		return true;
	case EV_MESSAGES_CORRUPT:
		snprintf(buf, n, "queue %d: board %" PRIu64 "'s message %" PRIu64
			 " failed its checksum and was refused, not delivered%s",
			 e->queue, e->a, e->b, w);
		return true;
	case EV_DOORBELL_UNANSWERED:
		snprintf(buf, n, "queue %d: a send of board %u gave up after %"
			 PRIu64 " ms of a full lane, its receiver asleep: the "
			 "doorbells were not answered", e->queue, e->jboard, e->a);
		return true;
	case EV_JOURNAL_LOST:
		snprintf(buf, n, "board %u's journal: %" PRIu64 " entr%s from "
			 "%" PRIu64 " lost, overwritten before they were read",
			 e->jboard, e->count, e->count == 1 ? "y" : "ies",
			 e->seq);
		return true;
	case EV_JOURNAL_ABANDONED:
		snprintf(buf, n, "board %u's journal: entry %" PRIu64 " abandoned: "
			 "begun and never finished (its writer died or stopped "
			 "in it)", e->jboard, e->seq);
		return true;
	case EV_JOURNAL_DAMAGED:
		snprintf(buf, n, "board %u's journal: entry %" PRIu64 " damaged "
			 "(it fails its check): not an event", e->jboard, e->seq);
		return true;
	case EV_JOURNAL_RESTARTED:
		snprintf(buf, n, "board %u's journal was made anew (the window "
			 "formatted to another layout)", e->jboard);
		return true;
	default:
		return false;
	}
}

void event_text(const struct event *e, char *buf, size_t n)
{
	char w[160], t[32];

	who(e, w, sizeof(w));
	times(e, t, sizeof(t));
	if (e->journal && journal_text(e, w, buf, n))
		return;
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

/* What an entry of a journal adds to an event's keys */
static void journal_json(const struct event *e, struct json *j)
{
	json_u64(j, "journal_board", e->jboard);
	json_u64(j, "seq", e->seq);
	if (e->type >= EV_JOURNAL_LOST)
		return;  /* what the reader says of the ring */
	json_u64(j, "generation", e->generation);
	if (e->queue >= 0 && e->role)
		json_str(j, "role", role_word(e->role));
	switch (e->jkind) {
	case SMQ_JOURNAL_FORMAT:
	case SMQ_JOURNAL_CLEAR:
		json_str(j, "by", e->jkind == SMQ_JOURNAL_CLEAR ? "clear"
							       : "init");
		json_u64(j, "emptied", e->a);
		json_u64(j, "queues", e->b);
		break;
	case SMQ_JOURNAL_CLEAR_QUEUE:
	case SMQ_JOURNAL_EMPTIED:
		json_u64(j, "emptied", e->a);
		break;
	case SMQ_JOURNAL_ANNOUNCE:
		json_u64(j, "announces", e->a);
		break;
	case SMQ_JOURNAL_READY:
		json_u64(j, "boards", e->a);
		break;
	case SMQ_JOURNAL_GAVE_UP:
		json_begin(j, "missing", '[');
		for (unsigned b = 0; b < 64; b++)
			if (e->a >> b & 1)
				json_u64(j, NULL, b);
		json_end(j, ']');
		json_bool(j, "withdrew", e->b);
		break;
	case SMQ_JOURNAL_ROOM:
		json_u64(j, "refusals", e->a);
		json_u64(j, "waits", e->b);
		break;
	case SMQ_JOURNAL_DAMAGED:
		json_u64(j, "sender", e->a);
		json_u64(j, "sequence", e->b);
		break;
	case SMQ_JOURNAL_UNANSWERED:
		json_u64(j, "waited_ms", e->a);
		break;
	default:
		break;
	}
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
	json_str(j, "source", e->journal ? "journal" : "observed");
	if (e->journal)
		journal_json(e, j);
	event_text(e, text, sizeof(text));
	json_str(j, "text", text);
	json_end(j, '}');
}
