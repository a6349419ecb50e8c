/* smqctl metrics, in parts: reading the window and keeping the handle
 * between readings (collect.c), the Prometheus text of a reading
 * (expose.c), the file for node_exporter's textfile collector
 * (textfile.c) and the HTTP endpoint (http.c).  cmd_metrics.c holds the
 * options and the command.
 *
 * Everything here only reads the window: it is opened as a monitor
 * (SMQ_OPEN_READONLY), which claims no board and no handle slot. */
#ifndef SMQCTL_METRICS_H
#define SMQCTL_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include "../smqctl.h"

/* ---- expose.c: text into a growing buffer ---- */

struct mbuf {
	char *p;
	size_t len, cap;
	bool failed;            /* out of memory: the text is incomplete */
};
void mbuf_printf(struct mbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void mbuf_free(struct mbuf *b);

/* ---- collect.c: one reading of the window ---- */

struct metrics_src {
	const char *spec;       /* the window, and its label */
	/* Kept open between readings: a board is alive while its heartbeat
	 * moves, as this handle sees it on this host's clock. */
	struct smq_window *w;
	struct smq_window_info wi;
	struct smq_board_info *boards;
	struct smq_queue_info *queues;
	unsigned nboards, nqueues;
	unsigned board_cap, queue_cap;
	int err;                /* of the last reading: 0 up, else why not */
	int last_said;          /* the error last told on stderr (0: none) */
};

void metrics_src_init(struct metrics_src *m, const char *spec);
void metrics_src_free(struct metrics_src *m);
/* Reads the window into m (0), or says why it cannot (m->err, negative):
 * no window of that name, not formatted, removed.  A removed window is
 * let go of and the name opened again at once; a window being formatted
 * is waited for briefly.  Bounded in time. */
int metrics_read(struct metrics_src *m);
/* For a single reading: reads again while a board's liveness is not
 * known yet (a heartbeat of another host seen once), up to a little more
 * than the heartbeat timeout, as dump does. */
void metrics_settle(struct metrics_src *m);
/* On stderr, once per change: why the window cannot be read, or that it
 * can again.  A server's log then tells when smq_up changed. */
void metrics_tell(struct metrics_src *m);

/* ---- expose.c: the exposition ---- */

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
/* The reading in m as Prometheus text (format 0.0.4): smq_up, and while
 * the window is up its window, board and queue families. */
void metrics_expose(const struct metrics_src *m, struct mbuf *out);
/* metrics_read() then metrics_expose(). */
int metrics_scrape(struct metrics_src *m, struct mbuf *out);

/* ---- textfile.c ---- */

struct textfile_opts {
	const char *dir;
	int interval_ms;        /* 0: write once */
	unsigned count;         /* writes before exit; 0: until a signal */
};
/* Writes the exposition into DIR atomically, once or every interval;
 * returns the exit status. */
int metrics_textfile(struct metrics_src *m, const struct textfile_opts *o);

/* ---- http.c ---- */

struct listen_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	char text[80];          /* as the user wrote it, for messages */
};
/* "ADDR:PORT", "[ADDR6]:PORT", ":PORT" or "PORT" (then 127.0.0.1): 0, or
 * a message in err. */
int listen_addr_parse(const char *s, struct listen_addr *a, char *err,
		      size_t n);
/* Serves GET /metrics until SIGINT or SIGTERM; returns the exit status. */
int metrics_listen(struct metrics_src *m, const struct listen_addr *a);

/* Blocks SIGINT and SIGTERM in this thread (and the threads it starts):
 * the loops take them with sigwait or sigtimedwait. */
void metrics_block_signals(void);

#endif
