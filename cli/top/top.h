/* smqctl top, in parts: one reading of the window (snap.c), following
 * the window (follow.c), the signals that must not leave the terminal
 * raw (signals.c), the text of a frame (frame.c), the live view (live.c)
 * and --once (once.c).  cmd_top.c holds the options and the command. */
#ifndef SMQCTL_TOP_H
#define SMQCTL_TOP_H

#include <signal.h>
#include "../smqctl.h"
#include "../events/events.h"

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull
/* A fresh attach this often tells a removed or replaced window. */
#define PROBE_NS NS_PER_S
/* A window that cannot be read for this long is gone, not being
 * formatted. */
#define GRACE_NS (3 * NS_PER_S)
#define RETRY_MS 200
/* The latest events kept for the live view, and the rate history: about a
 * minute of samples per queue. */
#define EVENTS_KEPT 16
#define HISTORY_S 60
#define HISTORY_MAX 240

enum sort_key { SORT_QUEUE, SORT_MSGS, SORT_BYTES, SORT_FILL, SORT_KEYS };

/* ---- one reading of the window ---- */

struct snap {
	struct smq_window_info wi;
	struct smq_board_info *boards;
	struct smq_queue_info *queues;
	unsigned nboards, nqueues;     /* valid entries */
	unsigned board_cap, queue_cap; /* allocated */
	uint64_t mono_ns, real_ns;     /* when it was taken */
};

struct rate {
	double msgs, bytes, doorbells, full_waits;
	double received;        /* messages taken by the receiver */
	double refused;         /* sends refused at once on a full lane */
};

struct row {
	unsigned queue;
	double key;
};

struct totals {
	uint64_t msgs, bytes, received, doorbells, full_waits, refused;
	uint64_t corrupt;  /* messages refused for their checksum */
	uint64_t since_mono_ns, since_real_ns;
	struct rate rate;  /* all queues, over the last interval */
};

struct recent_event {
	uint64_t real_ns;
	char text[200];
};

struct viewer {
	struct ctx *ctx;
	int interval_ms;
	int stall_ms;            /* --stall; 0: the library's default */
	struct smq_window *w;
	struct snap snaps[2];
	struct snap *cur, *next;
	bool have_frame;  /* cur holds a reading */
	bool prev_ok;     /* cur may serve as the base of the next deltas */
	bool show_rates;  /* rates[] were measured up to cur */
	bool restart_rates; /* the next frame starts the rates again */
	struct rate *rates;
	struct row *rows;
	unsigned rate_cap;
	struct totals tot;
	int sort;
	bool paused;
	unsigned first_row, page;  /* scrolling of the queue list */
	uint64_t probed_ns;
	uint64_t trouble_since;  /* since when the window cannot be read */
	int trouble;
	bool trouble_open;       /* it is attaching that fails */
	char note[160];          /* re-attached, in the header */
	struct ev_watch events;  /* fed each frame: what changed */
	struct recent_event recent[EVENTS_KEPT];
	unsigned nrecent, recent_next;
	float *history;          /* [queues][history_len] msgs/s, a ring */
	unsigned history_len, history_cap, history_pos, history_n;
};

/* ---- snap.c: a reading, and the clocks ---- */

uint64_t mono_ns(void);
uint64_t real_ns(void);
void sleep_ms(int ms);
/* p, or a new block in its place, with room for want items of size (and
 * *cap says so); NULL when out of memory, p kept.  follow.c's rows too. */
void *grow(void *p, unsigned *cap, unsigned want, size_t size);
int read_snap(struct smq_window *w, struct snap *s);

/* ---- follow.c ---- */

void sort_rows(struct viewer *v);
int take_frame(struct viewer *v);
void reset_totals(struct viewer *v);
int top_fail(struct viewer *v, int err);

/* ---- signals.c ---- */

extern volatile sig_atomic_t screen_on;
void screen_end(void);
void catch_signals(void);
int guarded_snap(struct smq_window *w, struct snap *s);

/* ---- frame.c: the text of a frame, shared by the live view and --once */

void header_text(const struct snap *s, const char *timefmt, char *buf,
		 size_t n);
void board_head(char *buf, size_t n);
void board_text(const struct snap *s, unsigned b, char *buf, size_t n);
int bar_width(int cols);
void queue_head(int barw, char *buf, size_t n);
void queue_text(const struct viewer *v, unsigned q, int barw, char *buf,
		size_t n);
void rates_text(const struct viewer *v, char *buf, size_t n);
/* queue q's rate history as a line of width w: its last samples, each a
 * level of " _.-=+*#" scaled to the most of them */
void history_text(const struct viewer *v, unsigned q, int w, char *buf,
		  size_t n);
void event_line(const struct recent_event *e, char *buf, size_t n);
void totals_text(const struct viewer *v, uint64_t now_mono, char *buf,
		 size_t n);

/* ---- live.c and once.c ---- */

int run_live(struct viewer *v);
int run_once(struct viewer *v);

#endif
