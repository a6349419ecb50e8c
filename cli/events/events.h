/* Events: what changed in a window between two looks, as the library
 * judges it.  One engine for `smqctl events` and the event list of `top`.
 *
 * A look reads the window through a monitor (it never writes); the next
 * look is compared with it.  An episode shorter than the time between two
 * looks is not lost: the window's edge counters (a board's announces, a
 * queue's receiver opens and takeovers, its full waits, its epoch, the
 * generation) say how many there were; and a watcher that fell behind (a
 * look far later than asked for) says so. */
#ifndef SMQCTL_EVENTS_H
#define SMQCTL_EVENTS_H

#include "../smqctl.h"

enum ev_type {
	EV_GENERATION,          /* init or clear of every queue */
	EV_QUEUE_CLEARED,       /* a clear of one queue (its epoch moved) */
	EV_MAINTENANCE,         /* an init or clear began, or was left */
	EV_BOARD_ANNOUNCED,
	EV_BOARD_READY,
	EV_BOARD_GONE,          /* every process closed: at rest */
	EV_BOARD_DEAD,
	EV_BOARD_REBOOTED,      /* its host's boot id changed */
	EV_BOARD_RESTARTED,     /* dead, and now a new process is at it */
	EV_SYSTEM_READY,
	EV_QUEUE_FULL,
	EV_QUEUE_DRAINED,
	EV_RECEIVER_ATTACHED,
	EV_RECEIVER_GONE,       /* closed the queue */
	EV_RECEIVER_DEAD,
	EV_DOORBELL_UNANSWERED,
	EV_MESSAGES_CORRUPT,    /* messages failed their check (checksum) */
	EV_WINDOW_UNREADABLE,   /* removed, or cannot be attached */
	EV_WINDOW_READABLE,
	EV_LAGGED,              /* the watcher fell behind */
	EV_QUEUE_STALLED,       /* held messages with its bottom unmoved */
	EV_QUEUE_RESUMED,       /* ...and its bottom moved again */
	EV_RECEIVER_STOPPED,    /* its process stopped (a signal, a debugger) */
	EV_RECEIVER_CONTINUED,  /* ...and runs again */
	/* the journal's own (smq_journal_next()) */
	EV_QUEUE_EMPTIED,       /* an init or clear emptied a queue */
	EV_SYNC_GAVE_UP,        /* a board's sync gave up */
	EV_SENDER_ATTACHED,
	EV_SENDER_GONE,
	EV_TAKEOVER,            /* a claim taken from a holder that died */
	EV_JOURNAL_LOST,        /* entries overwritten before they were read */
	EV_JOURNAL_ABANDONED,   /* an entry its writer never finished */
	EV_JOURNAL_DAMAGED,     /* an entry that failed its check */
	EV_JOURNAL_RESTARTED,   /* a journal made anew */
	EV_TYPES
};

struct event {
	enum ev_type type;
	uint64_t time_ns;       /* CLOCK_REALTIME of the look that saw it */
	int board, queue;       /* -1: not about one */
	uint32_t pid, old_pid;
	uint64_t count;         /* episodes since the last look (>= 1) */
	uint64_t from, to;      /* generation or epoch; a lag's ms and the
				   interval's */
	int err;                /* EV_WINDOW_UNREADABLE: why */
	bool holds;             /* not a change: a state that holds at the
				   first look (ev_watch_holds) */
	/* an entry of a board's journal: what that board wrote down, at its
	 * sequence (not an observation of the watcher's) */
	bool journal;
	uint32_t jboard;
	uint32_t jkind;         /* enum smq_journal_kind */
	uint32_t role;          /* a queue handle's enum smq_role */
	uint64_t seq, generation;
	uint64_t a, b;
	char why[256];          /* ...in words, the transport's cause
				   (smq_explain()) */
	char host[64];
};

/* One look at the window. */
struct ev_look {
	bool ok;
	struct smq_window_info wi;
	unsigned nboards, nqueues;
	struct smq_board_info *boards;
	struct smq_queue_info *queues;
	uint64_t mono_ns, real_ns;
};

struct ev_watch {
	const char *spec;
	struct smq_window *w;   /* a monitor */
	struct ev_look looks[2], *prev, *cur;
	bool *full;             /* [queues] a lane was full at the last look */
	uint64_t *asleep_since; /* [queues] mono_ns a doorbell went unanswered
				   from, 0 */
	bool *unanswered;       /* [queues] said already for this episode */
	bool *stalled;          /* [queues] said stalled */
	bool *stopped;          /* [queues] its receiver said stopped */
	unsigned cap;
	int interval_ms;
	int stall_ms;           /* the monitor's stall time; 0: default */
	int err;                /* of the last look */
	bool said_unreadable;
	/* the journals: a cursor per board; once the window has them, what
	 * they say is not also guessed from two looks */
	struct smq_journal_cursor jc[SMQ_MAX_BOARDS];
	bool cursors_set, has_journal;
	int since;              /* EV_SINCE_* */
	uint64_t since_gen;     /* EV_SINCE_GEN: entries of it and after */
	uint64_t since_seq[SMQ_MAX_BOARDS]; /* EV_SINCE_SEQ: 0 from now */
	/* --cursor FILE: where the cursors are kept between runs (a recorder
	 * restarted goes on where it stopped) */
	const char *cursor_file;
	bool cursor_moved;      /* to be saved */
};
/* Where the journals are read from: new entries only (from now), all
 * they hold, those of a generation and later, or per board from a
 * sequence (others from now). */
enum { EV_SINCE_NOW, EV_SINCE_ALL, EV_SINCE_GEN, EV_SINCE_SEQ };
/* --since WORDS: "all", "gen:G" or "B:SEQ[,B:SEQ...]"; false if bad */
bool ev_watch_since(struct ev_watch *ew, const char *since);
/* --cursor FILE: each board's cursor, read at the first look (a board the
 * file names goes on from there, whatever --since says) and written after
 * every look that read a journal.  0, or why it cannot be written. */
int ev_watch_cursor_save(const struct ev_watch *ew);

/* The name of an event (one word, as JSON gives it) and the event as a
 * sentence; the type of a name (EV_TYPES: none). */
const char *event_name(enum ev_type t);
enum ev_type event_type(const char *name, size_t len);
void event_text(const struct event *e, char *buf, size_t n);
/* One JSON line (no newline). */
void event_json(const struct event *e, struct json *j);

/* A watch of spec, looking every interval_ms (for lag detection). */
int ev_watch_open(struct ev_watch *ew, const char *spec, int interval_ms);
void ev_watch_close(struct ev_watch *ew);
/* Looks once and calls fn for every event since the previous look, in a
 * fixed order (window, boards, queues); the first look reports nothing
 * but what is wrong already (a dead board, a dead receiver).  Returns 0
 * or fn's first non-zero return. */
int ev_watch_step(struct ev_watch *ew,
		  int (*fn)(const struct event *e, void *arg), void *arg);
/* After a step: calls fn for each event whose state holds in the look
 * just taken (a board ready, a receiver attached, a queue full...), with
 * holds set: what a wait for an event finds already true. */
int ev_watch_holds(struct ev_watch *ew,
		   int (*fn)(const struct event *e, void *arg), void *arg);
/* The same with a look the caller took (top's frames): err its failure,
 * else the window, its boards and queues, and when it was taken. */
int ev_watch_feed(struct ev_watch *ew, int err,
		  const struct smq_window_info *wi,
		  const struct smq_board_info *boards, unsigned nboards,
		  const struct smq_queue_info *queues, unsigned nqueues,
		  uint64_t mono_ns, uint64_t real_ns,
		  int (*fn)(const struct event *e, void *arg), void *arg);

/* emit.c, for watch.c, which compares looks, and journal.c, which reads the
 * journals: an event on its way to the caller's fn.  ev_emit() drops what
 * a journal says when the window has one, dates it and stops at fn's
 * first non-zero return (rc). */
struct emit {
	int (*fn)(const struct event *, void *);
	void *arg;
	uint64_t now;
	int rc;
	bool journaled;         /* the window's journals say what they say */
};
void ev_emit(struct emit *em, struct event e);
/* journal.c: every board's new journal entries since the last step, as
 * events */
int ev_journal_events(struct ev_watch *ew, struct emit *em,
		      const struct ev_look *c);

#endif
