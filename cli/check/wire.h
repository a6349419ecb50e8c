/* smqctl check between boards: the messages on the diagnostic queues,
 * and a board's agent.  Every board taking part receives on its own
 * diagnostic queue and sends on the others'; one board, the
 * coordinator, tells each what to do and gathers what they measured.
 * Nothing goes on an application queue; the only other writes are to the
 * scratch areas (smq_map_write(), smq_scratch_write()). */
#ifndef SMQCTL_CHECK_WIRE_H
#define SMQCTL_CHECK_WIRE_H

#include "check.h"

#define WIRE_MAGIC 0x43514d53u  /* "SMQC" */

enum wire_op {
	OP_HELLO = 1,   /* coordinator: answer READY with your looks */
	OP_READY,
	OP_CLEAR,       /* clear your scratch data */
	OP_WRITE,       /* write board a's scratch data with nonce */
	OP_VERIFY,      /* read yours back as board a wrote it (RESULT) */
	OP_RESULT,
	OP_SERVE,       /* echo board a's pings, count its stream, until END;
			   b: enum serve_mode */
	OP_MODE,        /* from the partner: receive in mode b from now */
	OP_RING,        /* ring board a's doorbell: BELLS */
	OP_BELLS,
	OP_RAW,         /* the raw link into board a: RAWFIG */
	OP_RAWFIG,
	OP_QUEUE,       /* ping-pong and stream with board a: QUEUEFIG */
	OP_QUEUEFIG,
	OP_DONE,        /* status */
	OP_QUIT,
	OP_PING, OP_PONG, OP_STREAM, OP_END, OP_ENDED,
};

enum serve_mode { SERVE_SPIN = 0, SERVE_SLEEP = 1, SERVE_POLL = 2 };

/* The head of every message; data messages (PING, STREAM) are only as
 * long as their size. */
struct wire_head {
	uint32_t magic;
	uint16_t op, from;
	uint64_t id;            /* the run */
	uint64_t seq;
};

/* What a measuring board sends back. */
struct bell_fig {
	uint32_t pings, delivered, late, polled;
	int32_t why;            /* 0, or why none: -ENOTSUP no doorbell,
				   -EAGAIN never asleep */
	uint32_t pad;
	double median_ns, p99_ns, max_ns, polled_median_ns;
};
struct raw_fig {
	double mb_per_s[CHECK_RAW_SIZES];
	double read_median_ns, read_p99_ns;
};
struct queue_fig {
	double half_rtt_ns, msgs_per_s, stream_mb_per_s;
	uint64_t stream_size, stream_count, errors;
};

struct wire_msg {
	struct wire_head h;
	uint32_t a, b;
	uint64_t nonce;
	int32_t status;
	uint32_t count;
	union {
		struct smq_map_result map;
		struct bell_fig bell;
		struct raw_fig raw;
		struct queue_fig queue;
		uint8_t bytes[128];
	} u;
};
_Static_assert(sizeof(struct wire_msg) == 176, "wire message");

/* A board's part: its handle, its receiver, its senders to the others. */
struct agent {
	struct smq_window *w;
	struct ctx *ctx;
	unsigned self, boards, diag0;   /* diag0: board 0's diagnostic queue */
	bool scratch;                   /* the window has scratch areas */
	uint32_t entry_size;            /* of the diagnostic queues */
	struct smq_queue *rx;
	int rx_mode;                    /* enum serve_mode of rx */
	struct smq_queue *tx[SMQ_MAX_BOARDS];
	uint64_t id;            /* the run; 0 until a hello says (--peer) */
	bool greeted;           /* answered this run's hello */
	int timeout_ms;
	uint8_t *buf;                   /* entry_size bytes */
	struct wire_msg stash[32];      /* taken while waiting for another */
	int nstash;
};

/* wire.c: the messages, sent and taken, under agent.c and measure.c */
void wire_init(const struct agent *a, struct wire_msg *m, int op);
/* Whether len bytes at p begin as a message of check's (WIRE_MAGIC). */
bool is_wire(const void *p, size_t len);
/* Our receiver, in mode (enum serve_mode). */
int agent_mode(struct agent *a, int mode);
/* Our sender to board to's diagnostic queue, opened once. */
int agent_sender(struct agent *a, unsigned to);
int agent_send(struct agent *a, unsigned to, const struct wire_msg *m,
	       int timeout_ms);
/* The next message op from board from (any op: 0; any board: -1) of this
 * run, within timeout_ms; messages of this run that are not it wait in
 * the stash. */
int agent_wait(struct agent *a, int op, int from, struct wire_msg *m,
	       int timeout_ms);

/* agent.c */
/* Opens board self's part: 0, or -errno with why in words. */
int agent_open(struct agent *a, struct ctx *ctx, unsigned self,
	       int timeout_ms, char *why, size_t n);
void agent_close(struct agent *a);
/* Serves the coordinator until QUIT (or its timeout, idle), or until
 * measure_interrupted (-EINTR, seen within SERVE_SLICE_MS): 0 or -errno. */
#define SERVE_SLICE_MS 100
int agent_serve(struct agent *a);
/* What the coordinator asks, done here: the handlers agent_serve runs. */
int agent_serve_pair(struct agent *a, unsigned partner, int mode,
		     unsigned coordinator);

/* measure.c: the measuring side, on board a->self */
void measure_bells(struct agent *a, unsigned sleeper, struct bell_fig *f);
void measure_raw(struct agent *a, unsigned target, struct raw_fig *f);
void measure_queue(struct agent *a, unsigned partner, struct queue_fig *f);

#endif
