/* A measurement session between two boards: the lower-numbered board
 * (the initiator) drives rounds with control messages; the other board
 * echoes (ping-pong) or drains (stream) and reports its CPU time.
 * Used by pingpong and bench, over one pair of queues of the window. */
#ifndef SMQ_SESSION_H
#define SMQ_SESSION_H

#include <string.h>
#include <sys/uio.h>
#include "control.h"
#include "measure.h"
#include "../smqctl.h"

/* How a round moves its messages: the options --zero-copy, --burst and
 * --verify, which the driving board's round message passes on. */
struct how {
	bool zero_copy;         /* written in place (smq_loan), read in place
				   (smq_peek, smq_commit); verifies */
	bool verify;            /* every byte made by the sender and checked
				   by the receiver; else only the size and
				   the sequence number of the first 8 */
	uint32_t burst;         /* messages per call (smq_send_burst,
				   smq_receive_burst); 0 or 1: one */
};
#define MAX_BURST 256

struct session {
	struct smq_window *w;
	struct smq_window_info wi;
	unsigned self, peer;
	unsigned q_self, q_peer;    /* we receive on q_self, send on q_peer */
	struct smq_queue *rx, *tx;
	uint64_t id;
	uint8_t *buf;               /* the window's entry_size bytes */
	uint32_t entry_size;        /* the largest message of our queue */
	uint64_t capacity;          /* entries of a lane, the smaller of
				       the two queues' */
	char notify[64];            /* how our receiver is woken */
	int mode;                   /* the receivers' mode */
	bool greeted;               /* peer: answered this session's hello */
	bool checksum;              /* the window sums its entries: a loan is
				       filled through smq_loan_write */
	int timeout_ms;             /* for a peer that stopped answering */
	struct ctx *ctx;
	struct loan_way {           /* how our loans are written (ways.c) */
		bool stream;        /* by streaming stores */
		unsigned since;     /* loans since the other way was tried */
		unsigned every;     /* ...and how many between two tries */
		double cost;        /* ns per byte of the way in use, recent */
		size_t size;        /* ...of loans of this size: another
				       starts over */
	} loan_way;
};

/* Options both commands take. */
struct session_opts {
	int mode;               /* SMQ_POLL, SMQ_SLEEP, or 0 (spin, then sleep) */
	int cpu[2];             /* initiator's and peer's CPU, -1: don't pin */
	bool cpu_set;
	bool peer_mode;         /* --peer: only this board's half */
	int peer_board;         /* -1: 1 for board 0, else 0 */
	int queues[2];          /* -1: the first queue each board receives */
	bool csv, histogram;
	bool force;             /* run where the figures would mislead, or
				   on application queues */
	bool drain;             /* drop leftovers in our diagnostic queue */
	bool cpu_checked;       /* session_cpu_check was done already */
	int timeout_ms;         /* -T: for the peer's answers; 0: the
				   default (10 s, with --peer 60 s) */
	struct how how;         /* --zero-copy, --burst, --verify */
	const size_t *sizes;    /* the command's sizes, checked against the */
	int nsizes;             /* window before the first round */
};
void session_opts_init(struct session_opts *o);
/* After parsing: what the options cannot say alone (--csv with --json).
 * 0, or the exit status. */
int session_opts_check(const struct ctx *ctx, const struct session_opts *o);
/* Refuses (exit 2) when both sides would busy-poll on one CPU, unless
 * --force, where it warns.  polls: the measurement busy-polls.  0, or the
 * exit status. */
int session_cpu_check(const struct session_opts *o, bool polls);
/* The option parser both commands include as a child. */
extern const struct argp session_argp;

/* --size and --count, which both commands take: a child parser of its own
 * whose help texts each command gives (size_doc, count_doc), as a count
 * means round trips to one and messages to the other. */
struct size_opts {
	const char *size_doc, *count_doc;
	size_t sizes[MAX_SIZES];
	int nsizes;
	uint64_t count;         /* 0: not given */
};
extern const struct argp size_argp;
/* What the parsers of both commands share: ARGP_KEY_INIT gives their
 * children, in this order, size_argp, the command's own options and
 * session_argp their inputs (sz, own, s); ARGP_KEY_ARG refuses the
 * argument.  ARGP_ERR_UNKNOWN for the keys it does not take. */
error_t measure_cmd_parse(int key, char *arg, struct argp_state *st,
			  struct size_opts *sz, void *own,
			  struct session_opts *s);
/* The children of both commands, in the order of measure_cmd_parse's
 * inputs; own: the argp of the command's own options. */
#define MEASURE_CMD_CHILDREN(own) {					\
	{ &size_argp, 0, NULL, 0 },					\
	{ &(own), 0, NULL, 0 },						\
	{ &session_argp, 0, "Measurement options:", 2 },		\
	{ 0 }								\
}

/* Sets everything up and runs: in the default mode, forks the peer; with
 * --peer, serves if this board is not the initiator.  Calls run_rounds on
 * the initiator.  Returns the exit status. */
int session_main(struct ctx *ctx, struct session_opts *o,
		 int (*run_rounds)(struct session *s, void *arg), void *arg);

/* control.c: the control messages.  After an error of a session's call:
 * the peer named when it did not answer in time, the window's words
 * otherwise.  Returns 1. */
int session_error(const struct session *s, const char *what, int err);
/* Says op (OP_READY, OP_QUIT...), with nothing more, to the peer.  0 or
 * the error of the send. */
int session_tell(struct session *s, uint32_t op);
/* The initiator says hello until the peer answers for this session, up to
 * timeout_ms (forever when negative); say: tells the user, after a while,
 * to start the peer.  0, -ETIMEDOUT, -EINTR or the error of a call. */
int session_hello(struct session *s, int timeout_ms, bool say);

/* Initiator side */
int session_round(struct session *s, uint32_t op, uint64_t size,
		  uint64_t count, uint64_t warm, const struct how *h);
int session_stop(struct session *s);
int session_report(struct session *s, struct session_msg *r);

/* ways.c: moving the messages of a round as a struct how says.  Message
 * seq's payload: with verify, a pattern of its own in every byte; else
 * seq in its first 8 bytes (session_fill). */
void payload_fill(void *dst, size_t size, uint64_t seq, bool verify);
bool payload_ok(const void *src, size_t len, size_t size, uint64_t seq,
		bool verify);
/* A round's buffers: a message each of a burst (or one), 64-byte aligned */
struct way_bufs {
	uint8_t *mem;
	size_t each;            /* bytes apart, at least a control message */
	unsigned n;
	struct iovec *iov;      /* a burst to send */
	struct iovec *in;       /* the n buffers a burst is received into */
	size_t *lens;
};
int way_bufs_get(struct way_bufs *b, const struct how *h, size_t size);
void way_bufs_put(struct way_bufs *b);
/* Sends messages seq to seq + n - 1 of size bytes (n at most the burst):
 * 0 or the error of the call that failed. */
int way_send(struct session *s, const struct how *h, struct way_bufs *b,
	     size_t size, uint64_t seq, unsigned n);
/* What way_receive took: messages (the stop not counted), how many came
 * wrong (size or payload), and whether the round's stop came. */
struct way_got {
	unsigned n;
	uint64_t wrong;
	bool stop;
};
/* Takes up to max messages (as the burst allows; one otherwise), the
 * first waited for up to timeout_ms, and checks them as seq, seq + 1...
 * of size bytes.  0 or the error of the call. */
int way_receive(struct session *s, const struct how *h, struct way_bufs *b,
		size_t size, uint64_t seq, unsigned max, int timeout_ms,
		struct way_got *got);
/* ", zero-copy", ", bursts of 8", ", verified" or "" */
const char *how_words(const struct how *h, char *buf, size_t len);

const char *mode_name(int mode);
/* When the window is on a PCI BAR with a PCIe link: the bound on
 * messages/s for each result's size by the PCIe cost model of the
 * pcie-bench study, and a line saying which link; else a line saying why
 * there is none.  Fills r[i].predicted. */
void session_predict(const struct session *s, struct result *r, int n,
		     char *note, size_t len);
/* "3", or "-" for a side left unpinned (or pinned by itself, --peer) */
const char *cpu_name(int cpu, char buf[16]);

/* rounds.c: one size of a ping-pong (for pingpong and bench --baseline) */
int pingpong_size(struct session *s, size_t size, uint64_t count,
		  int duration_ms, bool histogram, const struct how *h,
		  struct result *r);
/* rounds.c: one size of a stream */
int stream_size(struct session *s, size_t size, uint64_t count,
		const struct how *h, struct result *r);
/* Messages of a stream of size bytes when no count is given: 256 MiB
 * worth, 500 to 1000000. */
uint64_t stream_auto_count(size_t size);
/* bench --baseline (compare.c): smq beside the baselines on scratch
 * windows of its own, count round trips or messages of each (0: the
 * defaults).  Returns the exit status. */
int baseline_compare(struct ctx *ctx, struct session_opts *o, uint64_t count);

/* What a run was, for its output. */
struct run_info {
	const char *command;        /* "pingpong" or "bench" */
	const struct session *s;    /* window, boards, queues, mode */
	int cpu[2];                 /* this board's and the peer's, -1: not
				       pinned (or pinned elsewhere) */
	bool interrupted;
	char prediction[256];       /* session_predict's line */
	const struct how *how;      /* how the messages moved */
};

/* Output of a list of results: text table, --json or --csv (the CSV
 * columns are the keys of the JSON rows, in the same order). */
void results_print(struct ctx *ctx, const struct session_opts *o,
		   const struct run_info *ri, const struct result *r, int n,
		   bool latency);
/* The end of a command's rounds: predicts (session_predict), prints what
 * was measured, and returns rc, or 1 when interrupted. */
int rounds_report(struct session *s, const struct session_opts *o,
		  struct run_info *ri, struct result *r, int n, bool latency,
		  int rc);
/* A result's row, for JSON (j) or, when j is NULL, as CSV; header: the
 * CSV header instead.  Shared with bench --baseline. */
void result_row(struct json *j, const struct result *r, bool latency);
void result_csv_header(bool latency);
/* A latency histogram of half round trips, in the terminal. */
void histogram_print(const uint64_t counts[HIST_BUCKETS]);


#endif
