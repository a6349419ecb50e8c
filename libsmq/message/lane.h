/* libsmq internals of the message path: the lane lock (lane.c), in the
 * sending board's own memory, below the queues (queue.h). */
#ifndef SMQ_LANE_H
#define SMQ_LANE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "window/window.h"

int smq_lane_lock(struct smq_queue *q, const struct timespec *deadline);
/* The release, then a full barrier, then smq_lane_wake */
void smq_lane_unlock(struct smq_queue *q);
/* The release alone, for a caller that makes a full barrier after it
 * anyway and then calls smq_lane_wake (a send).  Inline, as the flag's
 * look below: every send makes them. */
static inline void smq_lane_release(struct smq_queue *q)
{
	STORE_REL(&q->out->lock, 0);
}
void smq_lane_wake_sleepers(struct smq_queue *q);
/* Wakes the waiters asleep on the lock this handle released, if any said
 * so (its slot's lock_waiters); after the release and a full barrier */
static inline void smq_lane_wake(struct smq_queue *q)
{
	if (LOAD(&q->slot->lock_waiters))
		smq_lane_wake_sleepers(q);
}
void smq_lane_recover(struct smq_queue *q);
/* A loan given back unsubmitted: nothing published, the lock and the
 * mark down */
void smq_lane_end_loan(struct smq_queue *q);
/* A lane as the sender sees it, in its copy of bottom: that lags the
 * receiver's own by one take at most, of a message or of a burst's, so by
 * up to a ring (the receiver stores its own first; one that dies between
 * the two leaves it so until the next one opens), while another sender of
 * the board that waited for room read the receiver's own and filled the
 * ring from it: top up to two rings ahead of the copy. */
static inline bool smq_lane_copy_sane(uint64_t copy, uint64_t top,
				      uint32_t entries)
{
	return top <= copy ? copy - top <= entries
			   : top - copy <= 2ull * entries;
}

#endif
