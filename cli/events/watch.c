/* Events: two looks at a window compared (events.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "events.h"

/* A look far later than asked for: the watcher fell behind. */
#define LAG_SLACK_NS 500000000ull
/* A receiver asleep this long with messages queued did not answer. */
#define UNANSWERED_NS 1000000000ull

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void free_look(struct ev_look *l)
{
	free(l->boards);
	free(l->queues);
	memset(l, 0, sizeof(*l));
}

int ev_watch_open(struct ev_watch *ew, const char *spec, int interval_ms)
{
	memset(ew, 0, sizeof(*ew));
	ew->spec = spec;
	ew->interval_ms = interval_ms;
	ew->prev = &ew->looks[0];
	ew->cur = &ew->looks[1];
	return 0;
}

void ev_watch_close(struct ev_watch *ew)
{
	if (ew->w)
		smq_close(ew->w);
	free_look(&ew->looks[0]);
	free_look(&ew->looks[1]);
	free(ew->full);
	free(ew->asleep_since);
	free(ew->unanswered);
	free(ew->stalled);
	free(ew->stopped);
	memset(ew, 0, sizeof(*ew));
}

static int grow(struct ev_look *l, unsigned boards, unsigned queues)
{
	struct smq_board_info *b = realloc(l->boards, boards * sizeof(*b));
	if (b)
		l->boards = b;
	struct smq_queue_info *q = realloc(l->queues,
					   (queues ? queues : 1) * sizeof(*q));
	if (q)
		l->queues = q;
	return b && q ? 0 : -ENOMEM;
}

/* Reads the window once into l; 0, or why it cannot be read. */
static int take_look(struct ev_watch *ew, struct ev_look *l)
{
	int err;

	l->ok = false;
	l->mono_ns = clock_ns(CLOCK_MONOTONIC);
	l->real_ns = clock_ns(CLOCK_REALTIME);
	if (!ew->w) {
		if ((err = smq_open(ew->spec, 0, SMQ_OPEN_READONLY, &ew->w))) {
			ew->w = NULL;
			return err;
		}
		if (ew->stall_ms)
			smq_set_timeout(ew->w, SMQ_TIMEOUT_STALL, ew->stall_ms);
	}
	err = smq_window_info(ew->w, &l->wi, sizeof(l->wi));
	if (err == -EIDRM) {  /* removed: attach afresh next time */
		smq_close(ew->w);
		ew->w = NULL;
	}
	if (err && err != -ESTALE)
		return err;
	unsigned nb = l->wi.geometry.boards;
	unsigned nq = l->wi.geometry.queues + l->wi.diag_queues;
	if ((err = grow(l, nb, nq)))
		return err;
	for (unsigned b = 0; b < nb; b++)
		smq_board_info(ew->w, b, &l->boards[b], sizeof(l->boards[b]));
	for (unsigned q = 0; q < nq; q++)
		smq_queue_info(ew->w, q, &l->queues[q], sizeof(l->queues[q]));
	l->nboards = nb;
	l->nqueues = nq;
	l->ok = true;
	return 0;
}

/* ---- comparing two looks ---- */

struct emit {
	int (*fn)(const struct event *, void *);
	void *arg;
	uint64_t now;
	int rc;
	bool journaled;         /* the window's journals say what they say */
};

/* What a journal says, when the window has one: not guessed as well from
 * two looks (a watcher that looks late still reads it there) */
static bool journal_says(enum ev_type t)
{
	switch (t) {
	case EV_GENERATION: case EV_QUEUE_CLEARED: case EV_BOARD_ANNOUNCED:
	case EV_SYSTEM_READY: case EV_BOARD_REBOOTED: case EV_QUEUE_FULL:
	case EV_QUEUE_DRAINED: case EV_RECEIVER_ATTACHED: case EV_RECEIVER_GONE:
	case EV_MESSAGES_CORRUPT:
		return true;
	default:
		return false;
	}
}

static void emit(struct emit *em, struct event e)
{
	if (em->journaled && !e.journal && !e.holds && journal_says(e.type))
		return;
	if (!e.journal)
		e.time_ns = em->now;
	if (!e.count)
		e.count = 1;
	if (!em->rc)
		em->rc = em->fn(&e, em->arg);
}

static struct event ev(enum ev_type t, int board, int queue)
{
	return (struct event){ .type = t, .board = board, .queue = queue };
}

static void board_events(struct emit *em, unsigned b,
			 const struct smq_board_info *p,
			 const struct smq_board_info *c)
{
	struct event e = ev(EV_BOARD_ANNOUNCED, (int)b, -1);

	memcpy(e.host, c->host, sizeof(e.host));
	if (p && p->boot && c->boot && p->boot != c->boot)
		emit(em, (e.type = EV_BOARD_REBOOTED, e));
	/* an edge counter: every announcement since the last look */
	uint32_t n = p ? c->announces - p->announces : 0;
	if (p && c->announces < p->announces)
		n = c->announces;  /* emptied by a format: counted anew */
	if (n) {
		e.type = EV_BOARD_ANNOUNCED;
		e.count = n;
		e.pid = c->announcer_pid ? c->announcer_pid : c->pid;
		e.old_pid = p->pid != e.pid ? p->pid : 0;
		emit(em, e);
		e.count = 0;
		e.old_pid = 0;
	}
	if (p && p->state != SMQ_BOARD_READY && c->state == SMQ_BOARD_READY)
		emit(em, (e.type = EV_BOARD_READY, e.pid = c->pid, e));
	if (c->activity == SMQ_ACTIVITY_DEAD &&
	    (!p || p->activity != SMQ_ACTIVITY_DEAD))
		emit(em, (e.type = EV_BOARD_DEAD, e.pid = c->pid, e));
	if (p && (p->activity == SMQ_ACTIVITY_ATTACHED ||
		  p->activity == SMQ_ACTIVITY_WORKING) &&
	    c->activity == SMQ_ACTIVITY_NONE)
		emit(em, (e.type = EV_BOARD_GONE, e.pid = p->pid, e));
	/* back from the dead: a process at it again, or what the dead left
	 * taken down (a sync of the board does) and the board at rest */
	if (p && p->activity == SMQ_ACTIVITY_DEAD &&
	    c->activity != SMQ_ACTIVITY_DEAD &&
	    c->activity != SMQ_ACTIVITY_UNKNOWN) {
		e.type = EV_BOARD_RESTARTED;
		e.pid = c->activity == SMQ_ACTIVITY_NONE ? 0 : c->pid;
		e.old_pid = p->pid != e.pid ? p->pid : 0;
		emit(em, e);
	}
}

static bool lives(int state)
{
	return state == SMQ_RECEIVER_WAITING || state == SMQ_RECEIVER_AWAY;
}

static void receiver_events(struct emit *em, unsigned q,
			    const struct smq_queue_info *p,
			    const struct smq_queue_info *c)
{
	struct event e = ev(EV_RECEIVER_GONE, -1, (int)q);
	uint64_t opened = p ? c->receiver_opens - p->receiver_opens : 0;

	e.board = (int)c->receiver;
	/* the one seen last left (or died unseen) before another opened */
	if (p && lives(p->receiver_state) &&
	    (c->receiver_state == SMQ_RECEIVER_NONE ||
	     (opened && c->receiver_pid != p->receiver_pid)))
		emit(em, (e.pid = p->receiver_pid, e));
	if (opened) {
		e.type = EV_RECEIVER_ATTACHED;
		e.count = opened;
		e.pid = c->receiver_pid;
		e.to = c->receiver_takeovers - p->receiver_takeovers;
		emit(em, e);
		e.count = 0;
		e.to = 0;
		/* ...and closed again before this look */
		if (c->receiver_state == SMQ_RECEIVER_NONE)
			emit(em, (e.type = EV_RECEIVER_GONE, e.pid = 0,
				  e.count = opened, e));
		e.count = 0;
	}
	if (c->receiver_state == SMQ_RECEIVER_DEAD &&
	    (!p || p->receiver_state != SMQ_RECEIVER_DEAD || opened))
		emit(em, (e.type = EV_RECEIVER_DEAD, e.pid = c->receiver_pid, e));
}

static void fill_events(struct ev_watch *ew, struct emit *em, unsigned q,
			const struct smq_queue_info *p,
			const struct smq_queue_info *c)
{
	struct event e = ev(EV_QUEUE_FULL, (int)c->receiver, (int)q);
	bool full = c->capacity && c->fill >= c->capacity;
	/* sends that met it full: they waited, or were refused at once
	 * (a 32-bit count in the window: its difference modulo 2^32) */
	uint64_t waits = p ? c->full_waits - p->full_waits +
			     (uint32_t)(c->full_refusals - p->full_refusals)
			   : 0;

	e.from = c->fill;
	e.to = c->capacity;
	if (full && !ew->full[q]) {
		e.count = waits;
		emit(em, e);
	} else if (!full && !ew->full[q] && waits) {
		/* full and drained again between two looks: the senders that
		 * waited say so */
		e.count = waits;
		emit(em, e);
		emit(em, (e.type = EV_QUEUE_DRAINED, e));
	} else if (!full && ew->full[q]) {
		emit(em, (e.type = EV_QUEUE_DRAINED, e));
	}
	ew->full[q] = full;
}

/* A queue that held messages with its bottom unmoved for the stall time
 * (the library's judgement), and its receiver stopped by a signal or a
 * debugger; and both over. */
static void stuck_events(struct ev_watch *ew, struct emit *em, unsigned q,
			 const struct smq_queue_info *c)
{
	struct event e = ev(EV_QUEUE_STALLED, (int)c->receiver, (int)q);

	e.pid = c->receiver_pid;
	if (c->stalled && !ew->stalled[q]) {
		e.from = (uint64_t)c->stalled_ms;
		e.to = c->queued;
		emit(em, e);
	} else if (!c->stalled && ew->stalled[q]) {
		emit(em, (e.type = EV_QUEUE_RESUMED, e));
	}
	ew->stalled[q] = c->stalled;
	if (c->receiver_stopped > 0 && !ew->stopped[q])
		emit(em, (e.type = EV_RECEIVER_STOPPED, e));
	else if (!c->receiver_stopped && ew->stopped[q])
		emit(em, (e.type = EV_RECEIVER_CONTINUED, e));
	ew->stopped[q] = c->receiver_stopped > 0;
}

/* A receiver that sleeps on with messages queued for UNANSWERED_NS: its
 * doorbell was not answered (or never rung). */
static void bell_events(struct ev_watch *ew, struct emit *em, unsigned q,
			const struct smq_queue_info *c, uint64_t mono)
{
	bool stuck = c->sleeping && c->queued;

	if (!stuck) {
		ew->asleep_since[q] = 0;
		ew->unanswered[q] = false;
		return;
	}
	if (!ew->asleep_since[q])
		ew->asleep_since[q] = mono;
	if (!ew->unanswered[q] && mono - ew->asleep_since[q] >= UNANSWERED_NS) {
		struct event e = ev(EV_DOORBELL_UNANSWERED, (int)c->receiver,
				    (int)q);
		e.pid = c->receiver_pid;
		e.from = (mono - ew->asleep_since[q]) / 1000000;
		e.to = c->queued;
		emit(em, e);
		ew->unanswered[q] = true;
	}
}

static int track(struct ev_watch *ew, unsigned queues)
{
	if (queues <= ew->cap)
		return 0;
	bool *f = realloc(ew->full, queues * sizeof(*f));
	uint64_t *a = f ? realloc(ew->asleep_since, queues * sizeof(*a)) : NULL;
	bool *u = a ? realloc(ew->unanswered, queues * sizeof(*u)) : NULL;
	bool *st = u ? realloc(ew->stalled, queues * sizeof(*st)) : NULL;
	bool *sp = st ? realloc(ew->stopped, queues * sizeof(*sp)) : NULL;
	if (f)
		ew->full = f;
	if (a)
		ew->asleep_since = a;
	if (u)
		ew->unanswered = u;
	if (st)
		ew->stalled = st;
	if (sp)
		ew->stopped = sp;
	if (!sp)
		return -ENOMEM;
	for (unsigned q = ew->cap; q < queues; q++) {
		ew->full[q] = ew->unanswered[q] = false;
		ew->stalled[q] = ew->stopped[q] = false;
		ew->asleep_since[q] = 0;
	}
	ew->cap = queues;
	return 0;
}

/* What a clear of queue q ended, said as plainly as its start was: a
 * full queue has room, a receiver's claim (a dead one's too) is gone. */
static void cleared_events(struct ev_watch *ew, struct emit *em, unsigned q,
			   const struct smq_queue_info *p,
			   const struct smq_queue_info *c)
{
	struct event e = ev(EV_QUEUE_DRAINED, (int)c->receiver, (int)q);

	if (ew->full[q] && !(c->capacity && c->fill >= c->capacity))
		emit(em, e);
	ew->full[q] = false;
	if (p->receiver_state != SMQ_RECEIVER_NONE &&
	    c->receiver_state == SMQ_RECEIVER_NONE)
		emit(em, (e.type = EV_RECEIVER_GONE, e.pid = p->receiver_pid, e));
	if (ew->stalled[q] && !c->stalled)
		emit(em, (e.type = EV_QUEUE_RESUMED, e.pid = 0, e));
	ew->stalled[q] = false;
}

/* Everything that changed from p (NULL: the first look, or one of an
 * older generation) to c.  After a format (formatted) the tables started
 * empty and the system formatted: what they hold now all happened since,
 * compared with that. */
static void compare(struct ev_watch *ew, struct emit *em,
		    const struct ev_look *p, const struct ev_look *c,
		    bool formatted)
{
	static const struct smq_board_info empty;
	static const struct smq_queue_info fresh;

	if (p && !p->wi.maint_phase && c->wi.maint_phase) {
		struct event e = ev(EV_MAINTENANCE, 0, -1);
		e.pid = c->wi.maint_pid;
		emit(em, e);
	}
	uint32_t was = p ? p->wi.system_state
		       : formatted ? SMQ_SYS_FORMATTED : SMQ_SYS_READY;
	if (was != SMQ_SYS_READY && c->wi.system_state == SMQ_SYS_READY)
		emit(em, ev(EV_SYSTEM_READY, -1, -1));
	for (unsigned b = 0; b < c->nboards; b++)
		board_events(em, b, p && b < p->nboards ? &p->boards[b]
			     : formatted ? &empty : NULL, &c->boards[b]);
	for (unsigned q = 0; q < c->nqueues; q++) {
		const struct smq_queue_info *pq =
			p && q < p->nqueues ? &p->queues[q]
			: formatted ? &fresh : NULL;
		const struct smq_queue_info *cq = &c->queues[q];
		if (pq && pq != &fresh && pq->epoch != cq->epoch) {
			struct event e = ev(EV_QUEUE_CLEARED, (int)cq->receiver,
					    (int)q);
			e.from = pq->epoch;
			e.to = cq->epoch;
			emit(em, e);
			cleared_events(ew, em, q, pq, cq);
			pq = NULL;  /* a new queue: as if first seen */
		}
		receiver_events(em, q, pq, cq);
		if (pq && cq->corrupt != pq->corrupt) {
			struct event e = ev(EV_MESSAGES_CORRUPT,
					    (int)cq->receiver, (int)q);
			e.count = cq->corrupt - pq->corrupt;
			e.to = cq->corrupt;
			emit(em, e);
		}
		fill_events(ew, em, q, pq, cq);
		stuck_events(ew, em, q, cq);
		bell_events(ew, em, q, cq, c->mono_ns);
	}
}

/* ---- the journals ---- */

bool ev_watch_since(struct ev_watch *ew, const char *since)
{
	char *end;

	if (!strcmp(since, "all")) {
		ew->since = EV_SINCE_ALL;
		return true;
	}
	if (!strncmp(since, "gen:", 4)) {
		ew->since = EV_SINCE_GEN;
		ew->since_gen = strtoull(since + 4, &end, 10);
		return since[4] >= '0' && since[4] <= '9' && !*end;
	}
	ew->since = EV_SINCE_SEQ;
	for (const char *p = since;;) {
		unsigned long b = strtoul(p, &end, 10);
		if (end == p || *end != ':' || b >= SMQ_MAX_BOARDS)
			return false;
		p = end + 1;
		uint64_t seq = strtoull(p, &end, 10);
		if (end == p || !seq || (*end && *end != ','))
			return false;
		ew->since_seq[b] = seq;
		if (!*end)
			return true;
		p = end + 1;
	}
}

/* --cursor FILE: "board B incarnation I next N" lines */
static void cursor_load(struct ev_watch *ew)
{
	FILE *f = ew->cursor_file ? fopen(ew->cursor_file, "r") : NULL;
	unsigned b;
	unsigned long long inc, next;

	if (!f)
		return;
	while (fscanf(f, " board %u incarnation %llu next %llu", &b, &inc,
		      &next) == 3)
		if (b < SMQ_MAX_BOARDS && inc && next) {
			ew->jc[b].incarnation = inc;
			ew->jc[b].next = next;
		}
	fclose(f);
}

int ev_watch_cursor_save(const struct ev_watch *ew)
{
	char tmp[4096];

	if (!ew->cursor_file || !ew->cursors_set)
		return 0;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", ew->cursor_file) >=
	    sizeof(tmp))
		return -ENAMETOOLONG;
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -errno;
	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++)
		if (ew->jc[b].incarnation && ew->jc[b].next)
			fprintf(f, "board %u incarnation %llu next %llu\n", b,
				(unsigned long long)ew->jc[b].incarnation,
				(unsigned long long)ew->jc[b].next);
	if (fflush(f) || ferror(f) || fsync(fileno(f))) {
		int err = -errno;
		fclose(f);
		unlink(tmp);
		return err ? err : -EIO;
	}
	fclose(f);
	return rename(tmp, ew->cursor_file) ? -errno : 0;
}

/* Where each board's journal is read from (--since), set at the first
 * look that finds journals; a cursor file overrides it for the boards it
 * names. */
static void set_cursors(struct ev_watch *ew, const struct ev_look *c)
{
	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++) {
		struct smq_journal_cursor *jc = &ew->jc[b];
		memset(jc, 0, sizeof(*jc));
		jc->board = b;
		if (b >= c->nboards)
			continue;
		uint64_t head = c->boards[b].journal_head;
		bool from_now = ew->since == EV_SINCE_NOW ||
				(ew->since == EV_SINCE_SEQ && !ew->since_seq[b]);
		if (from_now || ew->since == EV_SINCE_SEQ) {
			jc->next = from_now ? head : ew->since_seq[b];
			jc->incarnation = c->boards[b].journal_incarnation;
		}
	}
	cursor_load(ew);
	ew->cursors_set = true;
}

/* The board a queue's event is about: its receiving board */
static int queue_board(const struct ev_look *c, uint32_t q)
{
	return q < c->nqueues ? (int)c->queues[q].receiver : -1;
}

static const enum ev_type kind_type[] = {
	[SMQ_JOURNAL_FORMAT] = EV_GENERATION,
	[SMQ_JOURNAL_CLEAR] = EV_GENERATION,
	[SMQ_JOURNAL_CLEAR_QUEUE] = EV_QUEUE_CLEARED,
	[SMQ_JOURNAL_EMPTIED] = EV_QUEUE_EMPTIED,
	[SMQ_JOURNAL_ANNOUNCE] = EV_BOARD_ANNOUNCED,
	[SMQ_JOURNAL_READY] = EV_SYSTEM_READY,
	[SMQ_JOURNAL_GAVE_UP] = EV_SYNC_GAVE_UP,
	[SMQ_JOURNAL_BOOT] = EV_BOARD_REBOOTED,
	[SMQ_JOURNAL_OPEN] = EV_RECEIVER_ATTACHED,
	[SMQ_JOURNAL_CLOSE] = EV_RECEIVER_GONE,
	[SMQ_JOURNAL_TAKEOVER] = EV_TAKEOVER,
	[SMQ_JOURNAL_FULL] = EV_QUEUE_FULL,
	[SMQ_JOURNAL_ROOM] = EV_QUEUE_DRAINED,
	[SMQ_JOURNAL_DAMAGED] = EV_MESSAGES_CORRUPT,
	[SMQ_JOURNAL_UNANSWERED] = EV_DOORBELL_UNANSWERED,
};

/* An entry of a journal, or what its reader says of the ring, as an
 * event; false for a kind this smqctl does not know (a newer writer). */
static bool journal_event(const struct smq_journal_entry *je,
			  const struct ev_look *c, uint64_t now,
			  struct event *e)
{
	memset(e, 0, sizeof(*e));
	e->journal = true;
	e->jboard = je->board;
	e->jkind = je->kind;
	e->seq = je->seq;
	e->generation = je->generation;
	e->a = je->a;
	e->b = je->b;
	e->role = je->role;
	e->queue = je->queue == SMQ_NO_QUEUE ? -1 : (int)je->queue;
	e->board = e->queue >= 0 ? queue_board(c, je->queue) : (int)je->board;
	e->pid = je->pid;
	e->count = 1;
	e->time_ns = je->time_ns;
	switch (je->kind) {
	case SMQ_JOURNAL_LOST:
	case SMQ_JOURNAL_ABANDONED:
	case SMQ_JOURNAL_BROKEN:
	case SMQ_JOURNAL_RESTARTED:
		e->type = je->kind == SMQ_JOURNAL_LOST ? EV_JOURNAL_LOST
			  : je->kind == SMQ_JOURNAL_ABANDONED
			  ? EV_JOURNAL_ABANDONED
			  : je->kind == SMQ_JOURNAL_BROKEN ? EV_JOURNAL_DAMAGED
			  : EV_JOURNAL_RESTARTED;
		e->board = (int)je->board;
		e->count = je->kind == SMQ_JOURNAL_LOST ? je->a : 1;
		e->time_ns = now;  /* the reader's say, not the writer's */
		return true;
	default:
		/* EV_GENERATION is 0: the kinds are named by their range */
		if (je->kind < SMQ_JOURNAL_FORMAT ||
		    je->kind > SMQ_JOURNAL_UNANSWERED)
			return false;
	}
	e->type = kind_type[je->kind];
	if (je->kind == SMQ_JOURNAL_OPEN && je->role == SMQ_SENDER)
		e->type = EV_SENDER_ATTACHED;
	if (je->kind == SMQ_JOURNAL_CLOSE && je->role == SMQ_SENDER)
		e->type = EV_SENDER_GONE;
	if (je->kind == SMQ_JOURNAL_FORMAT || je->kind == SMQ_JOURNAL_CLEAR) {
		e->from = je->epoch;
		e->to = je->generation;
		e->board = -1;
	} else if (je->kind == SMQ_JOURNAL_CLEAR_QUEUE) {
		e->from = je->b;
		e->to = je->epoch;
	} else if (je->kind == SMQ_JOURNAL_TAKEOVER) {
		e->old_pid = (uint32_t)je->a;
	} else if (je->kind == SMQ_JOURNAL_READY) {
		e->board = -1;
	} else if (je->kind == SMQ_JOURNAL_BOOT) {
		e->from = je->a;
		e->to = je->b;
	} else if (je->kind == SMQ_JOURNAL_FULL) {
		e->from = e->to = je->a;  /* a lane holds its ring */
	} else if (je->kind == SMQ_JOURNAL_UNANSWERED) {
		e->from = je->a;
	}
	return true;
}

#define JOURNAL_STEP 512   /* entries a board, a step: the rest next */

/* Every board's new journal entries, merged: by generation, then board
 * (clocks of different boards are never compared), each board's in its
 * own order. */
static int journal_events(struct ev_watch *ew, struct emit *em,
			  const struct ev_look *c)
{
	unsigned nb = c->nboards;

	ew->has_journal = c->wi.features_incompat & SMQ_FEATURE_JOURNAL;
	em->journaled = ew->has_journal;
	if (!ew->has_journal || !nb)
		return 0;
	if (!ew->w && smq_open(ew->spec, 0, SMQ_OPEN_READONLY, &ew->w)) {
		ew->w = NULL;
		return 0;
	}
	if (!ew->cursors_set)
		set_cursors(ew, c);
	struct smq_journal_entry *all = calloc((size_t)nb * JOURNAL_STEP,
					       sizeof(*all));
	unsigned n[SMQ_MAX_BOARDS] = { 0 }, at[SMQ_MAX_BOARDS] = { 0 };
	if (!all)
		return -ENOMEM;
	for (unsigned b = 0; b < nb; b++) {
		while (n[b] < JOURNAL_STEP &&
		       smq_journal_next(ew->w, &ew->jc[b],
					&all[b * JOURNAL_STEP + n[b]],
					sizeof(*all)) == 1)
			n[b]++;
		ew->cursor_moved |= n[b] != 0;
	}
	for (;;) {
		int pick = -1;
		for (unsigned b = 0; b < nb; b++) {
			if (at[b] == n[b])
				continue;
			const struct smq_journal_entry *x =
				&all[b * JOURNAL_STEP + at[b]];
			if (pick < 0 || x->generation <
			    all[pick * JOURNAL_STEP + at[pick]].generation)
				pick = (int)b;
		}
		if (pick < 0)
			break;
		const struct smq_journal_entry *je =
			&all[pick * JOURNAL_STEP + at[pick]++];
		struct event e;
		bool note = je->kind >= SMQ_JOURNAL_LOST;
		if (ew->since == EV_SINCE_GEN && !note &&
		    je->generation < ew->since_gen)
			continue;
		if (journal_event(je, c, em->now, &e))
			emit(em, e);
	}
	free(all);
	return 0;
}

/* The events from the last look to the one just taken into ew->cur. */
static int step(struct ev_watch *ew,
		int (*fn)(const struct event *e, void *arg), void *arg)
{
	struct ev_look *p = ew->prev, *c = ew->cur;
	struct emit em = { fn, arg, 0, 0, false };
	bool first = !p->mono_ns;

	em.now = c->real_ns;
	/* While an init or clear runs, the tables may be half rewritten: the
	 * boards and queues are compared as they were, so that what it does
	 * is one event (a generation, a queue cleared) once it is done; so is
	 * a queue being cleared (epoch 0), from its old epoch to its new. */
	bool alike = c->ok && p->ok && p->wi.generation == c->wi.generation &&
		    p->nboards == c->nboards && p->nqueues == c->nqueues;
	if (alike && c->wi.maint_phase) {
		memcpy(c->boards, p->boards, c->nboards * sizeof(*c->boards));
		memcpy(c->queues, p->queues, c->nqueues * sizeof(*c->queues));
	}
	for (unsigned q = 0; alike && q < c->nqueues; q++)
		if (!c->queues[q].epoch)
			c->queues[q] = p->queues[q];
	if (!first && c->mono_ns - p->mono_ns >
		      2ull * (uint64_t)ew->interval_ms * 1000000ull + LAG_SLACK_NS) {
		struct event e = ev(EV_LAGGED, -1, -1);
		e.from = (c->mono_ns - p->mono_ns) / 1000000;
		e.to = (uint64_t)ew->interval_ms;
		emit(&em, e);
	}
	if (!c->ok) {
		if (!ew->said_unreadable) {
			struct event e = ev(EV_WINDOW_UNREADABLE, -1, -1);
			e.err = ew->err;
			smq_explain(ew->spec, e.err, e.why, sizeof(e.why));
			emit(&em, e);
			ew->said_unreadable = true;
		}
	} else {
		if (ew->said_unreadable && !first)
			emit(&em, ev(EV_WINDOW_READABLE, -1, -1));
		ew->said_unreadable = false;
		if (track(ew, c->nqueues))
			return -ENOMEM;
		if (journal_events(ew, &em, c))
			return -ENOMEM;
		/* a window removed and made again starts at generation 1
		 * again: its format time tells it from the one before */
		bool same = !first && p->ok &&
			    p->wi.generation == c->wi.generation &&
			    p->wi.format_time_ns == c->wi.format_time_ns;
		if (!first && p->ok && !same) {
			struct event e = ev(EV_GENERATION, -1, -1);
			e.from = p->wi.generation;
			e.to = c->wi.generation;
			emit(&em, e);
			memset(ew->full, 0, ew->cap * sizeof(*ew->full));
			memset(ew->stalled, 0, ew->cap * sizeof(*ew->stalled));
		}
		compare(ew, &em, same ? p : NULL, c, !first && p->ok && !same);
	}
	/* the look just taken is the next one's base; an unreadable one
	 * keeps only its time */
	if (!c->ok && p->ok) {
		p->mono_ns = c->mono_ns;
	} else {
		ew->prev = c;
		ew->cur = p;
	}
	return em.rc;
}

/* ---- what holds now ---- */

static bool receiver_lives(int state)
{
	return state == SMQ_RECEIVER_WAITING || state == SMQ_RECEIVER_AWAY;
}

static void queue_holds(struct emit *em, unsigned q,
			const struct smq_queue_info *qi)
{
	bool full = qi->capacity && qi->fill >= qi->capacity;
	struct event e = ev(EV_QUEUE_FULL, (int)qi->receiver, (int)q);

	e.pid = qi->receiver_pid;
	e.holds = true;
#define QHOLD(cond, t) do { if (cond) emit(em, (e.type = (t), e)); } while (0)
	QHOLD(receiver_lives(qi->receiver_state), EV_RECEIVER_ATTACHED);
	QHOLD(qi->receiver_state == SMQ_RECEIVER_NONE, EV_RECEIVER_GONE);
	QHOLD(qi->receiver_state == SMQ_RECEIVER_DEAD, EV_RECEIVER_DEAD);
	QHOLD(qi->receiver_stopped > 0, EV_RECEIVER_STOPPED);
	QHOLD(!qi->receiver_stopped, EV_RECEIVER_CONTINUED);
	e.from = qi->fill;
	e.to = qi->capacity;
	QHOLD(full, EV_QUEUE_FULL);
	QHOLD(!full, EV_QUEUE_DRAINED);
	e.from = (uint64_t)qi->stalled_ms;
	e.to = qi->queued;
	QHOLD(qi->stalled, EV_QUEUE_STALLED);
	QHOLD(!qi->stalled, EV_QUEUE_RESUMED);
#undef QHOLD
}

int ev_watch_holds(struct ev_watch *ew,
		   int (*fn)(const struct event *e, void *arg), void *arg)
{
	const struct ev_look *l = ew->prev;
	struct emit em = { fn, arg, l->real_ns, 0, false };
	struct event e;

	if (!l->ok) {
		e = ev(EV_WINDOW_UNREADABLE, -1, -1);
		e.err = ew->err;
		smq_explain(ew->spec, e.err, e.why, sizeof(e.why));
		e.holds = true;
		emit(&em, e);
		return em.rc;
	}
#define HOLD(cond, type, b, q) do { if (cond) { e = ev(type, b, q); \
		e.holds = true; emit(&em, e); } } while (0)
	HOLD(true, EV_WINDOW_READABLE, -1, -1);
	HOLD(l->wi.system_state == SMQ_SYS_READY, EV_SYSTEM_READY, -1, -1);
	HOLD(l->wi.maint_phase, EV_MAINTENANCE, 0, -1);
	for (unsigned i = 0; i < l->nboards; i++) {
		const struct smq_board_info *bi = &l->boards[i];
		int b = (int)i;
		HOLD(bi->state != SMQ_BOARD_ABSENT, EV_BOARD_ANNOUNCED, b, -1);
		HOLD(bi->state == SMQ_BOARD_READY, EV_BOARD_READY, b, -1);
		HOLD(bi->activity == SMQ_ACTIVITY_DEAD, EV_BOARD_DEAD, b, -1);
		HOLD(bi->activity == SMQ_ACTIVITY_NONE, EV_BOARD_GONE, b, -1);
	}
	for (unsigned i = 0; i < l->nqueues; i++)
		queue_holds(&em, i, &l->queues[i]);
#undef HOLD
	return em.rc;
}

static int guarded_look(void *p)
{
	struct ev_watch *ew = p;
	return take_look(ew, ew->cur);
}

int ev_watch_step(struct ev_watch *ew,
		  int (*fn)(const struct event *e, void *arg), void *arg)
{
	ew->err = bus_guarded(guarded_look, ew);
	if (ew->err == -SMQ_ETOOSMALL && ew->w) {
		/* cut short by a bus error: a fresh attach next time */
		smq_close(ew->w);
		ew->w = NULL;
	}
	return step(ew, fn, arg);
}

int ev_watch_feed(struct ev_watch *ew, int err,
		  const struct smq_window_info *wi,
		  const struct smq_board_info *boards, unsigned nboards,
		  const struct smq_queue_info *queues, unsigned nqueues,
		  uint64_t mono_ns, uint64_t real_ns,
		  int (*fn)(const struct event *e, void *arg), void *arg)
{
	struct ev_look *c = ew->cur;

	c->ok = false;
	c->mono_ns = mono_ns;
	c->real_ns = real_ns;
	ew->err = err;
	if (!err && !(ew->err = grow(c, nboards, nqueues))) {
		c->wi = *wi;
		memcpy(c->boards, boards, nboards * sizeof(*boards));
		memcpy(c->queues, queues, nqueues * sizeof(*queues));
		c->nboards = nboards;
		c->nqueues = nqueues;
		c->ok = true;
	}
	return step(ew, fn, arg);
}
