/* libsmq internals: how a window's bytes are reached.  Not installed.
 * A transport maps canonical ranges into memory as segments; a view reads
 * a window through them.  Both the format's validation and the transports
 * use these, so they sit below either. */
#ifndef SMQ_VIEW_H
#define SMQ_VIEW_H

#include <stdint.h>

/* A canonical range [start, start + len) mapped at ptr, in board's region. */
struct smq_segment {
	uint64_t start, len;
	uint8_t *ptr;
	unsigned board;         /* whose region; SMQ_SEG_WINDOW: a single
				   window that holds every region */
};
#define SMQ_SEG_WINDOW 0xffffu
#define SMQ_MAX_SEGMENTS 200

/* A read-only view of a window through its segments: what validation and
 * snapshots read.  at() is NULL for a range no segment holds. */
struct smq_view {
	const struct smq_segment *seg;
	unsigned nseg;
};
/* format.c */
const void *smq_view_at(const struct smq_view *v, uint64_t off, uint64_t len);

#endif
