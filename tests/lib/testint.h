/* For the tests that reach into the window format (they corrupt fields,
 * stall calls, look at what only the library sees). */
#ifndef SMQ_TESTINT_H
#define SMQ_TESTINT_H

#include "window/window.h"
#include "message/queue.h"
#include "transport/common.h"

/* A pointer to canonical offset off of the window w maps. */
static inline void *at(const struct smq_window *w, uint64_t off)
{
	return smq_map_at(&w->map, off, 1);
}
static inline uint64_t lay_notice(const struct smq_layout *l, unsigned b)
{
	(void)l;
	return lay_ctl(b);
}
/* window.c: far reads by reason (why < 0: near pointers asked for far
 * memory); counted only in a build with SMQ_COUNT_FAR */
uint64_t smq_far_loads(struct smq_window *w, int why);

#endif
