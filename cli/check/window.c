/* smqctl check: the window, read as a monitor (it claims no board and
 * writes nothing): its format, generation, boards, receivers, queues full
 * behind a dead receiver, and the diagnostic queues.  Who lives is the
 * library's judgement (smq_board_info(), smq_queue_info()); a board of
 * another host is judged by two looks a heartbeat timeout apart. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

/* The fault smq_validate() found, as words: the field, where, what it
 * holds and what it should. */
static void fault_words(int err, const struct smq_fault *f, char *buf,
			size_t n)
{
	if (err == -EBUSY) {
		snprintf(buf, n, "an init or clear runs on board 0 right now");
		return;
	}
	if (!f->field[0]) {
		snprintf(buf, n, "%s", smq_strerror(err));
		return;
	}
	int len = snprintf(buf, n, "%s: field %s at offset %#" PRIx64 " holds %"
			   PRIu64 " (%s %" PRIu64 ")", smq_strerror(err),
			   f->field, f->offset, f->value,
			   fault_kind_words(f->kind), f->limit);
	if (f->board >= 0 && len > 0 && (size_t)len < n)
		snprintf(buf + len, n - (size_t)len, ", in board %d's region",
			 f->board);
}

static void next_for_fault(struct check_run *cr, int err)
{
	switch (-err) {
	case EBUSY:
		check_next(cr, CK_FORMAT, "run check again when the init or "
			   "clear on board 0 has ended");
		break;
	case SMQ_EINCOMPLETE:
		check_next(cr, CK_FORMAT, "finish it: smqctl clear (or init) on "
			   "board 0");
		break;
	case SMQ_EUNFORMATTED:
		check_next(cr, CK_FORMAT, "format it: smqctl init on board 0");
		break;
	default:
		check_next(cr, CK_FORMAT, "see which board wrote there (smqctl "
			   "dump -v names the field); the window is formatted "
			   "anew by smqctl init on board 0, which empties it");
	}
}

/* What no window holds: data that is not one (which init refuses
 * without --force), or a window cut short (a truncated file, a device
 * smaller than its layout).  True when it is one of those, said. */
static bool format_unusable(struct check_run *cr,
			    const struct smq_window_info *wi, int err,
			    const struct smq_fault *f)
{
	char shown[80], have[32], need[32];

	if (wi->not_window || err == -SMQ_EMAGIC) {
		check_set(cr, CK_FORMAT, CHECK_FAIL, "not an smq window: it holds "
			  "%s of other data, beginning \"%s\"",
			  human_bytes(wi->mapped_size, have),
			  first_bytes_text(wi, shown, sizeof(shown)));
		check_next(cr, CK_FORMAT, "name the window meant (--window); "
			   "smqctl init refuses to overwrite this data unless "
			   "--force, which loses it");
		return true;
	}
	if (err == -SMQ_ETOOSMALL && !strcmp(f->field, "window_size") &&
	    f->kind == SMQ_FAULT_AT_LEAST && f->limit > f->value) {
		check_set(cr, CK_FORMAT, CHECK_FAIL, "the window was cut short: "
			  "it maps %s (%" PRIu64 " bytes), its layout needs %s "
			  "(%" PRIu64 " bytes)", human_bytes(f->value, have),
			  f->value, human_bytes(f->limit, need), f->limit);
		check_next(cr, CK_FORMAT, "give it back its size (a file: "
			   "truncate -s %" PRIu64 " keeps what it holds), or "
			   "format it anew with smqctl init on board 0, which "
			   "empties it", f->limit);
		return true;
	}
	return false;
}

static bool check_format(struct check_run *cr, struct smq_window *w,
			 const struct smq_window_info *wi)
{
	struct smq_fault f;
	char words[400], feats[128];

	int err = smq_validate(w, &f, sizeof(f));
	if (err && format_unusable(cr, wi, err, &f))
		return false;
	if (err == -SMQ_EUNFORMATTED || (err && !wi->version)) {
		fault_words(err, &f, words, sizeof(words));
		check_set(cr, CK_FORMAT, CHECK_FAIL, "%s", words);
		next_for_fault(cr, err);
		return false;
	}
	if (err) {
		fault_words(err, &f, words, sizeof(words));
		check_set(cr, CK_FORMAT, CHECK_FAIL, "%s", words);
		next_for_fault(cr, err);
		return true;
	}
	check_set(cr, CK_FORMAT, CHECK_PASS, "valid: format %u, %u board%s, %u "
		  "queue%s and %u diagnostic, %u entries of %u bytes, %" PRIu64
		  " bytes; features: %s", wi->version, wi->geometry.boards,
		  wi->geometry.boards == 1 ? "" : "s", wi->geometry.queues,
		  wi->geometry.queues == 1 ? "" : "s", wi->diag_queues,
		  wi->geometry.entries, wi->geometry.entry_size, wi->window_size,
		  features_text(wi->features_incompat, wi->features_compat,
				feats, sizeof(feats)));
	return true;
}

/* What the boards' journals say of this generation: the init or clear
 * that made it, and each board's last sync that gave up. */
struct story {
	bool made;              /* board 0's entry of the format or clear */
	uint32_t kind;
	uint64_t emptied, queues;
	uint64_t missing[SMQ_MAX_BOARDS]; /* a sync of board b gave up
				   waiting for these boards */
};

static void read_story(struct smq_window *w, unsigned boards, uint64_t gen,
		       struct story *st)
{
	struct smq_journal_entry e;

	memset(st, 0, sizeof(*st));
	for (unsigned b = 0; b < boards; b++) {
		struct smq_journal_cursor c = { b, 0, 0, 0, 0 };
		while (smq_journal_next(w, &c, &e, sizeof(e)) == 1) {
			if (e.generation != gen)
				continue;
			if (b == 0 && (e.kind == SMQ_JOURNAL_FORMAT ||
				       e.kind == SMQ_JOURNAL_CLEAR)) {
				st->made = true;
				st->kind = e.kind;
				st->emptied = e.a;
				st->queues = e.b;
			}
			if (e.kind == SMQ_JOURNAL_GAVE_UP)
				st->missing[b] = e.a;
		}
	}
}

static void check_generation(struct check_run *cr, struct smq_window *w,
			     const struct smq_window_info *wi)
{
	struct story st;
	char made[160] = "";

	read_story(w, wi->geometry.boards, wi->generation, &st);
	if (st.made)
		snprintf(made, sizeof(made), "; board 0's journal: the %s that "
			 "made it emptied %" PRIu64 " message%s in %" PRIu64
			 " queue%s", st.kind == SMQ_JOURNAL_CLEAR ? "clear" : "init",
			 st.emptied, st.emptied == 1 ? "" : "s", st.queues,
			 st.queues == 1 ? "" : "s");
	unsigned stale = 0, first = 0;

	for (unsigned b = 0; b < wi->geometry.boards; b++) {
		struct smq_board_info bi;
		smq_board_info(w, b, &bi, sizeof(bi));
		if (bi.state != SMQ_BOARD_ABSENT && bi.generation != wi->generation
		    && !stale++)
			first = b;
	}
	if (wi->maint_phase) {
		check_set(cr, CK_GENERATION, CHECK_FAIL, "generation %" PRIu64
			  ": an init or clear of pid %u is under way or did not "
			  "finish (%s)", wi->generation, wi->maint_pid,
			  wi->maint_alive == 1 ? "it runs" : wi->maint_alive == 0
			  ? "it died" : "on board 0's host");
		check_next(cr, CK_GENERATION, "let it end, or finish it: smqctl "
			   "clear on board 0");
	} else if (stale) {
		check_set(cr, CK_GENERATION, CHECK_FAIL, "generation %" PRIu64
			  ", but %u board%s joined under another (board %u "
			  "first)", wi->generation, stale, stale == 1 ? "" : "s",
			  first);
		check_next(cr, CK_GENERATION, "restart board %u's processes "
			   "(smqctl --board %u sync)", first, first);
	} else if (wi->system_state != SMQ_SYS_READY) {
		check_set(cr, CK_GENERATION, CHECK_WARN, "generation %" PRIu64
			  ", system %s: board 0 has not declared it ready",
			  wi->generation, sys_state_word(wi->system_state));
		check_next(cr, CK_GENERATION, "synchronise every board: smqctl "
			   "--board N sync on each");
	} else {
		check_set(cr, CK_GENERATION, CHECK_PASS, "generation %" PRIu64
			  ", system ready; every board joined under it%s",
			  wi->generation, made);
	}
}

/* ": boards 0 and 1 announced and gave up", or nothing */
static const char *gave_up_words(struct smq_window *w,
				 const struct smq_board_info *bi,
				 unsigned boards, uint64_t gen, char *buf,
				 size_t n)
{
	uint64_t gave = 0, missing = 0;
	struct story st;

	read_story(w, boards, gen, &st);
	for (unsigned b = 0; b < boards; b++) {
		if (bi[b].state == SMQ_BOARD_ABSENT && bi[b].announces)
			gave |= 1ull << b;
		missing |= st.missing[b];
	}
	buf[0] = 0;
	if (gave) {
		char set[120], miss[120];
		int len = snprintf(buf, n, "; %s announced and gave up waiting",
				   board_set(gave, boards, set, sizeof(set)));
		if (missing && len > 0 && (size_t)len < n)
			snprintf(buf + len, n - (size_t)len, " (their journals: "
				 "for %s)", board_set(missing, boards, miss,
						       sizeof(miss)));
	}
	return buf;
}

static void check_board_list(struct check_run *cr, struct smq_window *w,
			     unsigned boards, uint64_t gen)
{
	struct smq_board_info bi[SMQ_MAX_BOARDS];
	unsigned absent = 0, dead = 0, unknown = 0, working = 0, never = 0;
	int first_absent = -1, first_dead = -1, first_never = -1;
	char host[80];

	for (unsigned b = 0; b < boards; b++)
		smq_board_info(w, b, &bi[b], sizeof(bi[b]));
	for (unsigned b = 0; b < boards; b++) {
		if (bi[b].state == SMQ_BOARD_ABSENT && !absent++)
			first_absent = (int)b;
		if (bi[b].state == SMQ_BOARD_ABSENT && !bi[b].announces &&
		    !never++)
			first_never = (int)b;
		if (bi[b].activity == SMQ_ACTIVITY_DEAD && !dead++)
			first_dead = (int)b;
		unknown += bi[b].activity == SMQ_ACTIVITY_UNKNOWN;
		working += bi[b].activity == SMQ_ACTIVITY_WORKING ||
			   bi[b].activity == SMQ_ACTIVITY_ATTACHED;
	}
	if (dead) {
		const struct smq_board_info *d = &bi[first_dead];
		check_set(cr, CK_BOARDS, CHECK_FAIL, "board %d is dead: %s (pid "
			  "%u%s%s, heartbeat %" PRIu64 ")%s", first_dead,
			  d->same_host ? "its processes died attached"
			  : "its heartbeat stopped", d->pid,
			  d->host[0] ? " on " : "",
			  text_safe(d->host, host, sizeof(host)), d->heartbeat,
			  dead > 1 ? ", and others" : "");
		check_next(cr, CK_BOARDS, "restart board %d's application; "
			   "smqctl --board %d dump frees what the dead left",
			   first_dead, first_dead);
	} else if (never) {
		/* a board whose sync gave up took its announcement back, but
		 * the count of its announcements stays: the one that never
		 * came is the one to start */
		char gave[160];
		check_set(cr, CK_BOARDS, CHECK_FAIL, "%u of %u boards never "
			  "announced themselves under this generation (board "
			  "%d first)%s", never, boards, first_never,
			  gave_up_words(w, bi, boards, gen, gave,
					sizeof(gave)));
		check_next(cr, CK_BOARDS, "start board %d: smqctl --board %d "
			   "sync on its host%s", first_never, first_never,
			   never < absent ? "; then sync again the boards "
			   "that gave up" : "");
	} else if (absent) {
		check_set(cr, CK_BOARDS, CHECK_FAIL, "%u of %u boards announced "
			  "themselves and gave up waiting (board %d first): "
			  "none is announced now", absent, boards, first_absent);
		check_next(cr, CK_BOARDS, "sync every board again: smqctl "
			   "--board N sync on each, board 0 too");
	} else if (unknown) {
		check_set(cr, CK_BOARDS, CHECK_WARN, "%u board%s of another "
			  "host: not seen to beat or stop", unknown,
			  unknown == 1 ? "" : "s");
		check_next(cr, CK_BOARDS, "run check again: another look "
			   "judges their heartbeats");
	} else {
		check_set(cr, CK_BOARDS, CHECK_PASS, "%u board%s announced, none "
			  "dead: %u with processes at work, %u at rest", boards,
			  boards == 1 ? "" : "s", working, boards - working);
	}
}

struct queue_tally {
	unsigned dead, full_dead, diag_held, diag_busy, stalled, stopped;
	unsigned orphaned;
	int first_dead, first_full, first_diag;
	struct smq_queue_info dead_qi, full_qi, diag_qi, stalled_qi, stopped_qi;
	struct smq_queue_info orphaned_qi;
};

static void tally_queue(struct queue_tally *t, const struct smq_queue_info *qi)
{
	bool dead = qi->receiver_state == SMQ_RECEIVER_DEAD;
	bool nobody = dead || qi->receiver_state == SMQ_RECEIVER_NONE;

	if (qi->flags & SMQ_QUEUE_DIAGNOSTIC) {
		if (qi->queued && !t->diag_held++) {
			t->first_diag = (int)qi->index;
			t->diag_qi = *qi;
		}
		return;
	}
	/* stalled with a receiver that lives (or may: another host) is the
	 * fault no other check sees; with none, or a dead one, messages wait
	 * for a receiver, as receivers and full-queues say */
	if (qi->stalled && !nobody && !t->stalled++)
		t->stalled_qi = *qi;
	if (qi->stalled && nobody && !t->orphaned++)
		t->orphaned_qi = *qi;
	if (qi->receiver_stopped > 0 && !t->stopped++)
		t->stopped_qi = *qi;
	if (dead && !t->dead++) {
		t->first_dead = (int)qi->index;
		t->dead_qi = *qi;
	}
	if (nobody && qi->capacity && qi->fill >= qi->capacity &&
	    !t->full_dead++) {
		t->first_full = (int)qi->index;
		t->full_qi = *qi;
	}
}

/* The receiver of a queue, for a sentence: "board 1's receiver (pid 7,
 * stopped: a signal or a debugger)" */
static const char *receiver_said(const struct smq_queue_info *qi, char *buf,
				 size_t n)
{
	if (qi->receiver_state == SMQ_RECEIVER_NONE)
		snprintf(buf, n, "no receiver (board %u receives it)",
			 qi->receiver);
	else
		snprintf(buf, n, "board %u's receiver (pid %u, %s%s)",
			 qi->receiver, qi->receiver_pid,
			 receiver_word(qi->receiver_state),
			 qi->receiver_stopped > 0
			 ? ", stopped: a signal or a debugger" : "");
	return buf;
}

/* Queues that hold messages nobody takes: the receiver may be alive and
 * waiting by every word of the window, and still take nothing. */
static void check_stalled(struct check_run *cr, const struct queue_tally *t)
{
	char who[160];

	if (t->stalled) {
		const struct smq_queue_info *q = &t->stalled_qi;
		check_set(cr, CK_STALLED, CHECK_FAIL, "queue %u stalled: %" PRIu64
			  " message%s wait%s, its bottom unmoved for %.1f s; %s%s",
			  q->index, q->queued, q->queued == 1 ? "" : "s",
			  q->queued == 1 ? "s" : "", (double)q->stalled_ms / 1000,
			  receiver_said(q, who, sizeof(who)),
			  t->stalled > 1 ? "; and others" : "");
		if (q->receiver_stopped > 0)
			check_next(cr, CK_STALLED, "let pid %u go on (kill -CONT "
				   "%u, or the debugger holding it)",
				   q->receiver_pid, q->receiver_pid);
		else
			check_next(cr, CK_STALLED, "see what pid %u does (it "
				   "takes no message): its application may be "
				   "stuck", q->receiver_pid);
	} else if (t->orphaned) {
		const struct smq_queue_info *q = &t->orphaned_qi;
		check_set(cr, CK_STALLED, CHECK_WARN, "queue %u: %" PRIu64
			  " message%s wait%s, %.1f s with its bottom unmoved, "
			  "for %s%s", q->index, q->queued,
			  q->queued == 1 ? "" : "s", q->queued == 1 ? "s" : "",
			  (double)q->stalled_ms / 1000,
			  q->receiver_state == SMQ_RECEIVER_DEAD
			  ? "a receiver that died" : "a receiver that is not there",
			  t->orphaned > 1 ? "; and others" : "");
		check_next(cr, CK_STALLED, "start a receiver of queue %u on "
			   "board %u", q->index, q->receiver);
	} else if (t->stopped) {
		const struct smq_queue_info *q = &t->stopped_qi;
		check_set(cr, CK_STALLED, CHECK_WARN, "queue %u: %s; it will "
			  "take no message until it goes on", q->index,
			  receiver_said(q, who, sizeof(who)));
		check_next(cr, CK_STALLED, "let pid %u go on (kill -CONT %u)",
			   q->receiver_pid, q->receiver_pid);
	} else {
		check_set(cr, CK_STALLED, CHECK_PASS, "no queue holds messages "
			  "that its receiver does not take");
	}
}

static void check_queue_list(struct check_run *cr, struct smq_window *w,
			     const struct smq_window_info *wi)
{
	struct queue_tally t;
	unsigned all = wi->geometry.queues + wi->diag_queues;

	memset(&t, 0, sizeof(t));
	t.first_dead = t.first_full = t.first_diag = -1;
	for (unsigned q = 0; q < all; q++) {
		struct smq_queue_info qi;
		smq_queue_info(w, q, &qi, sizeof(qi));
		tally_queue(&t, &qi);
	}
	if (t.dead) {
		check_set(cr, CK_RECEIVERS, CHECK_FAIL, "queue %d's receiver "
			  "(board %u, pid %u) died with the queue open%s",
			  t.first_dead, t.dead_qi.receiver,
			  t.dead_qi.receiver_pid, t.dead > 1 ? ", and others'"
			  : "");
		check_next(cr, CK_RECEIVERS, "restart the receiver of queue %d "
			   "on board %u: it takes the dead one's claim",
			   t.first_dead, t.dead_qi.receiver);
	} else {
		check_set(cr, CK_RECEIVERS, CHECK_PASS, "no receiver died with "
			  "its queue open");
	}
	if (t.full_dead) {
		const struct smq_queue_info *q = &t.full_qi;
		check_set(cr, CK_FULL, CHECK_FAIL, "queue %d is full (%" PRIu64
			  " of %" PRIu64 " in a lane, %" PRIu64 " queued) and %s: "
			  "its senders wait or fail", t.first_full, q->fill,
			  q->capacity, q->queued,
			  q->receiver_state == SMQ_RECEIVER_DEAD
			  ? "its receiver is dead" : "nobody receives it");
		check_next(cr, CK_FULL, "start a receiver of queue %d on board "
			   "%u (smqctl --board %u recv --queue %d drains it)",
			   t.first_full, q->receiver, q->receiver, t.first_full);
	} else {
		check_set(cr, CK_FULL, CHECK_PASS, "no queue is full behind a "
			  "dead or missing receiver");
	}
	check_stalled(cr, &t);
	if (t.diag_held) {
		check_set(cr, CK_DIAG, CHECK_WARN, "diagnostic queue %d holds %"
			  PRIu64 " message%s (board %u's)%s", t.first_diag,
			  t.diag_qi.queued, t.diag_qi.queued == 1 ? "" : "s",
			  t.diag_qi.receiver, t.diag_held > 1 ? ", and others"
			  : "");
		check_next(cr, CK_DIAG, "left by an interrupted measurement: "
			   "smqctl --board %u pingpong --drain drops them",
			   t.diag_qi.receiver);
	} else {
		check_set(cr, CK_DIAG, CHECK_PASS, "the %u diagnostic queues are "
			  "empty", wi->diag_queues);
	}
}

void check_window(struct check_run *cr)
{
	const char *spec = window_spec(cr->ctx);
	struct smq_window *w;
	struct smq_window_info wi;
	char words[400];

	snprintf(cr->window_name, sizeof(cr->window_name), "%s", spec);
	int err = smq_open(spec, 0, SMQ_OPEN_READONLY | SMQ_OPEN_RAW, &w);
	if (err) {
		check_set(cr, CK_FORMAT, CHECK_FAIL, "cannot open the window: %s",
			  smq_explain(spec, err, words, sizeof(words)));
		check_next(cr, CK_FORMAT, "check --window (smqctl --window help); "
			   "a window that does not exist yet is made by smqctl "
			   "init on board 0");
		check_skip_group(cr, "window", "the window did not open");
		return;
	}
	smq_window_info(w, &wi, sizeof(wi));
	if (wi.name[0])
		snprintf(cr->window_name, sizeof(cr->window_name), "%s", wi.name);
	cr->boards = wi.geometry.boards;
	cr->window_size = wi.window_size;
	cr->features_compat = wi.features_compat;
	if (!check_format(cr, w, &wi)) {
		cr->boards = 0;
		check_skip_group(cr, "window", "the window is not valid (format)");
		smq_close(w);
		return;
	}
	check_generation(cr, w, &wi);
	/* another host's boards by two looks, queues that hold messages by
	 * how long: watched until judged, a bounded while */
	smq_set_timeout(w, SMQ_TIMEOUT_STALL, cr->o->stall_ms);
	smq_watch(w, SMQ_WATCH_BOARDS | SMQ_WATCH_QUEUES, SMQ_WAIT_FOREVER);
	check_board_list(cr, w, wi.geometry.boards, wi.generation);
	check_queue_list(cr, w, &wi);
	smq_close(w);
}
