/* The control messages of a measurement session (control.c), and what
 * tells one from a measured message and fills a measured one (ways.c): below
 * both, as both the session and the ways of moving messages use them. */
#ifndef SMQ_MEASURE_CONTROL_H
#define SMQ_MEASURE_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum session_op {
	OP_HELLO = 1, OP_READY, OP_PING, OP_STREAM, OP_STOP, OP_REPORT, OP_QUIT,
};

enum { HOW_ZERO_COPY = 1, HOW_VERIFY = 2 };

/* Control messages and reports share one shape, of 64 bytes, and begin
 * with this. */
#define SESSION_MAGIC 0x50504d53u  /* "SMPP" */
struct session_msg {
	uint32_t magic;
	uint32_t op;
	uint64_t id;
	uint64_t size, count;   /* the round: message size and count (0: until
				   OP_STOP) ; in a report: messages handled */
	double cpu;             /* report: CPU seconds the peer used after
				   the warm-up */
	union {
		uint64_t errors;        /* report: messages that came wrong */
		struct {                /* round: how its messages move */
			uint32_t flags; /* HOW_* */
			uint32_t burst;
		} how;
	};
	uint64_t warm;          /* round: messages of warm-up, not timed */
	double wall;            /* report: wall seconds around the CPU samples
				   of cpu, on the peer's own clock */
};
_Static_assert(sizeof(struct session_msg) == 64, "a control message");


/* What tells a control message from a measured one, and what a measured
 * message carries when it carries nothing but its number: inline, as they
 * run on every message of a measurement (a 64-byte message is as long as
 * a control message, so the magic, the first word, is looked at first). */

/* Fills a message of size bytes whose first 8 (if it has them) are seq. */
static inline void session_fill(uint8_t *buf, size_t size, uint64_t seq)
{
	if (size >= sizeof(seq))
		memcpy(buf, &seq, sizeof(seq));
}

/* Whether len bytes at buf are a control message of session id with op
 * (id 0: of any session; op 0: any op). */
static inline bool is_ctl(const uint8_t *buf, size_t len, uint64_t id,
			  uint32_t op)
{
	struct session_msg m;
	uint32_t magic;

	if (len != sizeof(m))
		return false;
	memcpy(&magic, buf, sizeof(magic));
	if (magic != SESSION_MAGIC)
		return false;
	memcpy(&m, buf, sizeof(m));
	return (!id || m.id == id) && (!op || m.op == op);
}

#endif
