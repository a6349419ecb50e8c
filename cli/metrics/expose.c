/* smqctl metrics: a reading of the window as Prometheus text (exposition
 * format 0.0.4, which OpenMetrics parsers take too).  Each family has its
 * HELP and TYPE and its samples together; names carry their unit and
 * counters end in _total, as Prometheus's naming conventions want.  What
 * a board's or a receiver's liveness is, the library judged: it is shown,
 * never judged again here. */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "metrics.h"

void mbuf_printf(struct mbuf *b, const char *fmt, ...)
{
	va_list ap;

	for (int pass = 0; pass < 2 && !b->failed; pass++) {
		size_t room = b->cap - b->len;
		va_start(ap, fmt);
		int n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->failed = true;
		} else if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		} else {
			size_t cap = b->cap ? b->cap : 4096;
			while (cap - b->len <= (size_t)n)
				cap *= 2;
			char *p = realloc(b->p, cap);
			if (!p)
				b->failed = true;
			else {
				b->p = p;
				b->cap = cap;
			}
		}
	}
}

void mbuf_free(struct mbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* A label value: backslash, double quote and newline escaped, as the
 * format wants; a byte that is not UTF-8 (a window holds any bytes)
 * becomes U+FFFD, since a label value must be UTF-8. */
static void label_value(struct mbuf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = utf8_len(p);
		if (*p == '\\' || *p == '"')
			mbuf_printf(b, "\\%c", *p);
		else if (*p == '\n')
			mbuf_printf(b, "\\n");
		else if (n)
			mbuf_printf(b, "%.*s", (int)n, (const char *)p);
		else
			mbuf_printf(b, "\xef\xbf\xbd");
		p += n ? n : 1;
	}
}

static void family(struct mbuf *b, const char *name, const char *type,
		   const char *help)
{
	mbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{window="..." and the caller adds its own labels and the value */
static void sample(struct mbuf *b, const struct metrics_src *m,
		   const char *name)
{
	mbuf_printf(b, "%s{window=\"", name);
	label_value(b, m->spec);
	mbuf_printf(b, "\"");
}

/* ---- the window ---- */

static void window_gauge(struct mbuf *b, const struct metrics_src *m,
			 const char *name, const char *help, uint64_t v)
{
	family(b, name, "gauge", help);
	sample(b, m, name);
	mbuf_printf(b, "} %" PRIu64 "\n", v);
}

static void window_families(struct mbuf *b, const struct metrics_src *m)
{
	const struct smq_window_info *wi = &m->wi;

	family(b, "smq_window_info", "gauge", "The window's shape, as labels "
	       "(transport, name, boards, queues, diagnostic queues, entries "
	       "and entry size); always 1.");
	sample(b, m, "smq_window_info");
	mbuf_printf(b, ",transport=\"");
	label_value(b, wi->transport);
	mbuf_printf(b, "\",name=\"");
	label_value(b, wi->name);
	mbuf_printf(b, "\",boards=\"%u\",queues=\"%u\",diagnostic_queues="
		    "\"%u\",entries=\"%u\",entry_size=\"%u\"} 1\n",
		    wi->geometry.boards, wi->geometry.queues, wi->diag_queues,
		    wi->geometry.entries, wi->geometry.entry_size);
	window_gauge(b, m, "smq_window_format_version", "Version of the "
		     "window format (smq(7)).", wi->version);
	window_gauge(b, m, "smq_window_generation", "Generation of the "
		     "window, bumped by every init and clear.", wi->generation);
	family(b, "smq_window_system_state", "gauge", "The system state: 1 "
	       "for the state the window is in (formatting, formatted, "
	       "ready), 0 for the others.");
	for (unsigned s = 0; s < 3; s++) {
		sample(b, m, "smq_window_system_state");
		mbuf_printf(b, ",state=\"%s\"} %d\n", sys_state_word(s),
			    wi->system_state == s);
	}
	window_gauge(b, m, "smq_window_maintenance", "1 while an init or "
		     "clear (of the window or of one queue) is under way or was "
		     "left unfinished, else 0.", wi->maint_phase != 0);
	family(b, "smq_window_formatted_timestamp_seconds", "gauge", "When "
	       "the last init or clear formatted the window (Unix time, on "
	       "the clock of the host that ran it).");
	sample(b, m, "smq_window_formatted_timestamp_seconds");
	mbuf_printf(b, "} %" PRIu64 ".%03" PRIu64 "\n",
		    wi->format_time_ns / 1000000000u,
		    wi->format_time_ns % 1000000000u / 1000000u);
	window_gauge(b, m, "smq_window_size_bytes", "Bytes of the window "
		     "that its layout uses.", wi->window_size);
	family(b, "smq_window_emptied_messages_total", "counter", "Messages "
	       "that init and clear emptied from the queues (they were "
	       "waiting, and were never delivered), since smq first formatted "
	       "the window.");
	sample(b, m, "smq_window_emptied_messages_total");
	mbuf_printf(b, "} %" PRIu64 "\n", wi->emptied);
}

/* ---- the boards ---- */

static void board_sample(struct mbuf *b, const struct metrics_src *m,
			 const char *name, unsigned board)
{
	sample(b, m, name);
	mbuf_printf(b, ",board=\"%u\"", board);
}

static void board_info_family(struct mbuf *b, const struct metrics_src *m)
{
	family(b, "smq_board_info", "gauge", "A board's host name and how "
	       "its waiters are woken (doorbell: none, futex, ivshmem), as "
	       "labels; always 1.");
	for (unsigned i = 0; i < m->nboards; i++) {
		const struct smq_board_info *bi = &m->boards[i];
		board_sample(b, m, "smq_board_info", i);
		mbuf_printf(b, ",host=\"");
		label_value(b, bi->host);
		mbuf_printf(b, "\",doorbell=\"%s\"} 1\n",
			    bell_kind_word(bi->doorbell.kind));
	}
}

static void board_families(struct mbuf *b, const struct metrics_src *m)
{
	board_info_family(b, m);
	family(b, "smq_board_state", "gauge", "A board's state: 1 for the "
	       "state it is in (absent, initialized, ready), 0 for the "
	       "others.");
	for (unsigned i = 0; i < m->nboards; i++)
		for (unsigned s = 0; s < 3; s++) {
			board_sample(b, m, "smq_board_state", i);
			mbuf_printf(b, ",state=\"%s\"} %d\n",
				    board_state_word(s), m->boards[i].state == s);
		}
	family(b, "smq_board_activity", "gauge", "What the board's processes "
	       "do: 1 for the one judged (none: no process attached, at rest; "
	       "attached; working: a queue open; dead: processes died without "
	       "closing; unknown: another host, not watched long enough), 0 "
	       "for the others.");
	for (unsigned i = 0; i < m->nboards; i++)
		for (int a = SMQ_ACTIVITY_UNKNOWN; a <= SMQ_ACTIVITY_DEAD; a++) {
			board_sample(b, m, "smq_board_activity", i);
			mbuf_printf(b, ",activity=\"%s\"} %d\n",
				    activity_key(a), m->boards[i].activity == a);
		}
	family(b, "smq_board_handles", "gauge", "Handles the board's "
	       "processes have open, but those of processes that died.");
	for (unsigned i = 0; i < m->nboards; i++) {
		board_sample(b, m, "smq_board_handles", i);
		mbuf_printf(b, "} %u\n", m->boards[i].handles);
	}
	family(b, "smq_board_dead_handles", "gauge", "Handles left open by "
	       "processes of the board that died (not yet freed).");
	for (unsigned i = 0; i < m->nboards; i++) {
		board_sample(b, m, "smq_board_dead_handles", i);
		mbuf_printf(b, "} %u\n", m->boards[i].dead_handles);
	}
	family(b, "smq_board_announcements_total", "counter", "Times the "
	       "board announced itself (smqctl sync) since the window was "
	       "last formatted.");
	for (unsigned i = 0; i < m->nboards; i++) {
		board_sample(b, m, "smq_board_announcements_total", i);
		mbuf_printf(b, "} %u\n", m->boards[i].announces);
	}
	family(b, "smq_board_alive", "gauge", "1 if a process of the board "
	       "lives (on this host by its pid, on another by its heartbeat), "
	       "0 if none does (none attached, or all died); absent while "
	       "that is not known yet.");
	for (unsigned i = 0; i < m->nboards; i++)
		if (m->boards[i].alive >= 0) {
			board_sample(b, m, "smq_board_alive", i);
			mbuf_printf(b, "} %d\n", m->boards[i].alive > 0);
		}
	family(b, "smq_board_heartbeat_age_seconds", "gauge", "Seconds since "
	       "the board's heartbeat was last seen to move, on this host's "
	       "clock; absent until it has been watched long enough.");
	for (unsigned i = 0; i < m->nboards; i++)
		if (m->boards[i].heartbeat_age_ms >= 0) {
			int64_t ms = m->boards[i].heartbeat_age_ms;
			board_sample(b, m, "smq_board_heartbeat_age_seconds",
				     i);
			mbuf_printf(b, "} %" PRId64 ".%03d\n", ms / 1000,
				    (int)(ms % 1000));
		}
	family(b, "smq_board_heartbeats_total", "counter", "Heartbeats of "
	       "the board since the window was last formatted.");
	for (unsigned i = 0; i < m->nboards; i++) {
		board_sample(b, m, "smq_board_heartbeats_total", i);
		mbuf_printf(b, "} %" PRIu64 "\n", m->boards[i].heartbeat);
	}
	family(b, "smq_journal_entries_total", "counter", "Entries the "
	       "board's processes wrote in its journal (what they did: opens, "
	       "closes, announcements, full episodes...), since its journal "
	       "was made.");
	for (unsigned i = 0; i < m->nboards; i++)
		if (m->boards[i].journal_slots) {
			board_sample(b, m, "smq_journal_entries_total", i);
			mbuf_printf(b, "} %" PRIu64 "\n",
				    m->boards[i].journal_head - 1);
		}
	family(b, "smq_journal_overwritten_total", "counter", "Entries of "
	       "the board's journal overwritten by later ones: a reader that "
	       "had not read them lost them (its ring holds the last "
	       "journal_slots).");
	for (unsigned i = 0; i < m->nboards; i++) {
		const struct smq_board_info *bi = &m->boards[i];
		if (!bi->journal_slots)
			continue;
		uint64_t n = bi->journal_head - 1;
		board_sample(b, m, "smq_journal_overwritten_total", i);
		mbuf_printf(b, "} %" PRIu64 "\n", n > bi->journal_slots
			    ? n - bi->journal_slots : 0);
	}
	family(b, "smq_board_generation", "gauge", "The window generation "
	       "the board joined under (0: it has not joined).");
	for (unsigned i = 0; i < m->nboards; i++) {
		board_sample(b, m, "smq_board_generation", i);
		mbuf_printf(b, "} %" PRIu64 "\n", m->boards[i].generation);
	}
}

/* ---- the queues ---- */

#define QF(f) offsetof(struct smq_queue_info, f)
static const struct queue_family {
	const char *name, *type, *help;
	size_t off;             /* of a uint64_t in struct smq_queue_info */
} queue_fams[] = {
	{ "smq_queue_sent_messages_total", "counter",
	  "Messages sent on the queue, by every sending board.", QF(sent) },
	{ "smq_queue_sent_bytes_total", "counter",
	  "Payload bytes sent on the queue, by every sending board.",
	  QF(bytes_sent) },
	{ "smq_queue_received_messages_total", "counter",
	  "Messages the receiving board took from the queue.", QF(received) },
	{ "smq_queue_received_bytes_total", "counter",
	  "Payload bytes the receiving board took from the queue.",
	  QF(bytes_received) },
	{ "smq_queue_doorbells_total", "counter",
	  "Doorbells senders rang to wake the sleeping receiver.",
	  QF(doorbells) },
	{ "smq_queue_full_waits_total", "counter",
	  "Sends that met a full ring and waited (one per send, however "
	  "long).", QF(full_waits) },
	{ "smq_queue_full_refusals_total", "counter",
	  "Sends that met a full ring and were not to wait (a timeout of 0): "
	  "refused at once.", QF(full_refusals) },
	{ "smq_queue_corrupt_messages_total", "counter",
	  "Messages that failed their checksum: refused by the receiver, not "
	  "delivered (windows formatted with checksums).", QF(corrupt) },
	{ "smq_queue_receiver_sleeps_total", "counter",
	  "Times the receiver went to sleep waiting for a message.",
	  QF(sleeps) },
	{ "smq_queue_receiver_wakeups_total", "counter",
	  "Times the sleeping receiver was woken.", QF(wakeups) },
	{ "smq_queue_fill_messages", "gauge",
	  "Messages waiting in the fullest lane: what a sender meets.",
	  QF(fill) },
	{ "smq_queue_queued_messages", "gauge",
	  "Messages waiting in all lanes of the queue.", QF(queued) },
	{ "smq_queue_capacity_messages", "gauge",
	  "Entries of one lane (one per sending board): a lane holding this "
	  "many is full.", QF(capacity) },
	{ "smq_queue_receiver_opens_total", "counter",
	  "Receivers that opened the queue since it was last cleared.",
	  QF(receiver_opens) },
	{ "smq_queue_receiver_takeovers_total", "counter",
	  "Receivers that opened the queue in the place of one that had died "
	  "with it open.", QF(receiver_takeovers) },
};

static void queue_sample(struct mbuf *b, const struct metrics_src *m,
			 const char *name, unsigned q)
{
	const struct smq_queue_info *qi = &m->queues[q];

	sample(b, m, name);
	mbuf_printf(b, ",queue=\"%u\",receiver=\"%u\",kind=\"%s\"", q,
		    qi->receiver, qi->flags & SMQ_QUEUE_DIAGNOSTIC
		    ? "diagnostic" : "application");
}

static void queue_families(struct mbuf *b, const struct metrics_src *m)
{
	const size_t nfams = sizeof(queue_fams) / sizeof(queue_fams[0]);

	for (size_t f = 0; f < nfams; f++) {
		const struct queue_family *qf = &queue_fams[f];
		family(b, qf->name, qf->type, qf->help);
		for (unsigned q = 0; q < m->nqueues; q++) {
			uint64_t v;
			memcpy(&v, (const char *)&m->queues[q] + qf->off,
			       sizeof(v));
			queue_sample(b, m, qf->name, q);
			mbuf_printf(b, "} %" PRIu64 "\n", v);
		}
	}
	family(b, "smq_queue_receiver_state", "gauge", "The queue's receiver: "
	       "1 for its state (none; waiting in a receive call; away: open "
	       "and alive, not waiting for a message; dead: its process died with the "
	       "queue open; unknown: another host, not watched long enough), "
	       "0 for the others.");
	for (unsigned q = 0; q < m->nqueues; q++)
		for (int r = SMQ_RECEIVER_UNKNOWN; r <= SMQ_RECEIVER_DEAD; r++) {
			queue_sample(b, m, "smq_queue_receiver_state", q);
			mbuf_printf(b, ",state=\"%s\"} %d\n",
				    receiver_word(r),
				    m->queues[q].receiver_state == r);
		}
	family(b, "smq_queue_stalled_seconds", "gauge", "Seconds this "
	       "process has seen the queue hold messages with its bottom "
	       "unmoved, on its own clock: 0 while it is empty or its receiver "
	       "takes messages (smq_queue_stalled_seconds > 60: queued but not "
	       "draining), whatever the receiver's state says.");
	for (unsigned q = 0; q < m->nqueues; q++) {
		int64_t ms = m->queues[q].stalled_ms;
		queue_sample(b, m, "smq_queue_stalled_seconds", q);
		mbuf_printf(b, "} %" PRId64 ".%03d\n", ms / 1000,
			    (int)(ms % 1000));
	}
	family(b, "smq_queue_receiver_stopped", "gauge", "1 if the queue's "
	       "receiver is a process of this host stopped by a signal or a "
	       "debugger, 0 if it runs; absent when that cannot be told (no "
	       "receiver, another host).");
	for (unsigned q = 0; q < m->nqueues; q++)
		if (m->queues[q].receiver_stopped >= 0) {
			queue_sample(b, m, "smq_queue_receiver_stopped", q);
			mbuf_printf(b, "} %d\n", m->queues[q].receiver_stopped);
		}
	family(b, "smq_queue_receiver_alive", "gauge", "1 if a live receiver "
	       "has the queue open, 0 if none has or it died; absent while "
	       "that is not known yet (a receiver on another host).");
	for (unsigned q = 0; q < m->nqueues; q++)
		if (m->queues[q].receiver_alive >= 0) {
			queue_sample(b, m, "smq_queue_receiver_alive", q);
			mbuf_printf(b, "} %d\n",
				    m->queues[q].receiver_alive > 0);
		}
}

void metrics_expose(const struct metrics_src *m, struct mbuf *out)
{
	window_gauge(out, m, "smq_up", "1 if the window could be read, 0 if "
		     "not (no window of that name, not formatted, removed); "
		     "while 0 no other smq series is exposed.", m->err == 0);
	if (m->err)
		return;
	window_families(out, m);
	board_families(out, m);
	queue_families(out, m);
}

int metrics_scrape(struct metrics_src *m, struct mbuf *out)
{
	int err = metrics_read(m);

	metrics_expose(m, out);
	return out->failed ? -ENOMEM : err;
}
