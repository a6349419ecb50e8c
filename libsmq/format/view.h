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

/* The byte of the nseg segments at seg that holds canonical [off, off +
 * len) whole, or NULL. */
static inline uint8_t *smq_segments_at(const struct smq_segment *seg,
				       unsigned nseg, uint64_t off,
				       uint64_t len)
{
	for (unsigned i = 0; i < nseg; i++) {
		const struct smq_segment *s = &seg[i];
		if (off >= s->start && len <= s->len &&
		    off - s->start <= s->len - len)
			return s->ptr + (off - s->start);
	}
	return NULL;
}

/* A read-only view of a window through its segments: what validation and
 * snapshots read.  at() is NULL for a range no segment holds. */
struct smq_view {
	const struct smq_segment *seg;
	unsigned nseg;
};
/* format.c */
const void *smq_view_at(const struct smq_view *v, uint64_t off, uint64_t len);

#endif
