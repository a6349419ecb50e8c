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
		ev_emit(em, (e.type = EV_BOARD_REBOOTED, e));
	/* an edge counter: every announcement since the last look */
	uint32_t n = p ? c->announces - p->announces : 0;
	if (p && c->announces < p->announces)
		n = c->announces;  /* emptied by a format: counted anew */
	if (n) {
		e.type = EV_BOARD_ANNOUNCED;
		e.count = n;
		e.pid = c->announcer_pid ? c->announcer_pid : c->pid;
		e.old_pid = p->pid != e.pid ? p->pid : 0;
		ev_emit(em, e);
		e.count = 0;
		e.old_pid = 0;
	}
	if (p && p->state != SMQ_BOARD_READY && c->state == SMQ_BOARD_READY)
		ev_emit(em, (e.type = EV_BOARD_READY, e.pid = c->pid, e));
	if (c->activity == SMQ_ACTIVITY_DEAD &&
	    (!p || p->activity != SMQ_ACTIVITY_DEAD))
		ev_emit(em, (e.type = EV_BOARD_DEAD, e.pid = c->pid, e));
	if (p && (p->activity == SMQ_ACTIVITY_ATTACHED ||
		  p->activity == SMQ_ACTIVITY_WORKING) &&
	    c->activity == SMQ_ACTIVITY_NONE)
		ev_emit(em, (e.type = EV_BOARD_GONE, e.pid = p->pid, e));
	/* back from the dead: a process at it again, or what the dead left
	 * taken down (a sync of the board does) and the board at rest */
	if (p && p->activity == SMQ_ACTIVITY_DEAD &&
	    c->activity != SMQ_ACTIVITY_DEAD &&
	    c->activity != SMQ_ACTIVITY_UNKNOWN) {
		e.type = EV_BOARD_RESTARTED;
		e.pid = c->activity == SMQ_ACTIVITY_NONE ? 0 : c->pid;
		e.old_pid = p->pid != e.pid ? p->pid : 0;
		ev_emit(em, e);
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
		ev_emit(em, (e.pid = p->receiver_pid, e));
	if (opened) {
		e.type = EV_RECEIVER_ATTACHED;
		e.count = opened;
		e.pid = c->receiver_pid;
		e.to = c->receiver_takeovers - p->receiver_takeovers;
		ev_emit(em, e);
		e.count = 0;
		e.to = 0;
		/* ...and closed again before this look */
		if (c->receiver_state == SMQ_RECEIVER_NONE)
			ev_emit(em, (e.type = EV_RECEIVER_GONE, e.pid = 0,
				     e.count = opened, e));
		e.count = 0;
	}
	if (c->receiver_state == SMQ_RECEIVER_DEAD &&
	    (!p || p->receiver_state != SMQ_RECEIVER_DEAD || opened))
		ev_emit(em, (e.type = EV_RECEIVER_DEAD,
			     e.pid = c->receiver_pid, e));
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
		ev_emit(em, e);
	} else if (!full && !ew->full[q] && waits) {
		/* full and drained again between two looks: the senders that
		 * waited say so */
		e.count = waits;
		ev_emit(em, e);
		ev_emit(em, (e.type = EV_QUEUE_DRAINED, e));
	} else if (!full && ew->full[q]) {
		ev_emit(em, (e.type = EV_QUEUE_DRAINED, e));
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
		ev_emit(em, e);
	} else if (!c->stalled && ew->stalled[q]) {
		ev_emit(em, (e.type = EV_QUEUE_RESUMED, e));
	}
	ew->stalled[q] = c->stalled;
	if (c->receiver_stopped > 0 && !ew->stopped[q])
		ev_emit(em, (e.type = EV_RECEIVER_STOPPED, e));
	else if (!c->receiver_stopped && ew->stopped[q])
		ev_emit(em, (e.type = EV_RECEIVER_CONTINUED, e));
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
		ev_emit(em, e);
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
		ev_emit(em, e);
	ew->full[q] = false;
	if (p->receiver_state != SMQ_RECEIVER_NONE &&
	    c->receiver_state == SMQ_RECEIVER_NONE)
		ev_emit(em, (e.type = EV_RECEIVER_GONE,
			     e.pid = p->receiver_pid, e));
	if (ew->stalled[q] && !c->stalled)
		ev_emit(em, (e.type = EV_QUEUE_RESUMED, e.pid = 0, e));
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
		ev_emit(em, e);
	}
	uint32_t was = p ? p->wi.system_state
		       : formatted ? SMQ_SYS_FORMATTED : SMQ_SYS_READY;
	if (was != SMQ_SYS_READY && c->wi.system_state == SMQ_SYS_READY)
		ev_emit(em, ev(EV_SYSTEM_READY, -1, -1));
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
			ev_emit(em, e);
			cleared_events(ew, em, q, pq, cq);
			pq = NULL;  /* a new queue: as if first seen */
		}
		receiver_events(em, q, pq, cq);
		if (pq && cq->corrupt != pq->corrupt) {
			struct event e = ev(EV_MESSAGES_CORRUPT,
					    (int)cq->receiver, (int)q);
			e.count = cq->corrupt - pq->corrupt;
			e.to = cq->corrupt;
			ev_emit(em, e);
		}
		fill_events(ew, em, q, pq, cq);
		stuck_events(ew, em, q, cq);
		bell_events(ew, em, q, cq, c->mono_ns);
	}
}

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
		ev_emit(&em, e);
	}
	if (!c->ok) {
		if (!ew->said_unreadable) {
			struct event e = ev(EV_WINDOW_UNREADABLE, -1, -1);
			e.err = ew->err;
			smq_explain(ew->spec, e.err, e.why, sizeof(e.why));
			ev_emit(&em, e);
			ew->said_unreadable = true;
		}
	} else {
		if (ew->said_unreadable && !first)
			ev_emit(&em, ev(EV_WINDOW_READABLE, -1, -1));
		ew->said_unreadable = false;
		if (track(ew, c->nqueues))
			return -ENOMEM;
		if (ev_journal_events(ew, &em, c))
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
			ev_emit(&em, e);
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
#define QHOLD(cond, t) \
	do { if (cond) ev_emit(em, (e.type = (t), e)); } while (0)
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
		ev_emit(&em, e);
		return em.rc;
	}
#define HOLD(cond, type, b, q) do { if (cond) { e = ev(type, b, q); \
		e.holds = true; ev_emit(&em, e); } } while (0)
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
