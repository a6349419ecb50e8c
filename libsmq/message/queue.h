/* libsmq internals of the message path: the lane lock (lane.c) and the
 * doorbell (bell.c) below the queues (queue.c), send.c and receive.c
 * above them, groups (group.c) on top. */
#ifndef SMQ_QUEUE_H
#define SMQ_QUEUE_H

#include "window/journal.h"
#include "window/window.h"

#define SLEEP_SLICE_MS 1000  /* a sleeper wakes this often to beat */
#define HEARTBEAT_EVERY 1024 /* messages between beats of a busy board */
#define NAP_NS 50000         /* a waiter nobody can ring looks this often */

/* queue.c */
/* The receiver's view of lane k at sequence bottom: where the next entry
 * is and the signature it will carry once written (keyed by the lane's
 * board).  Inline: every take sets it. */
static inline void smq_lane_expect(struct smq_queue *q, unsigned k,
				   uint64_t bottom)
{
	q->heads[k] = (const void *)(q->rings + ((uint64_t)k * q->entries +
				     (bottom & (q->entries - 1))) * q->stride);
	q->expect[k] = smq_signature(q->epoch, q->index, q->lane_board[k],
				     bottom);
}
/* receive.c */
/* Waits until one of n queues of this board has a message (a group's
 * share one doorbell): its lane, the queue's position in *which */
int smq_wait_any(struct smq_queue *const *qs, unsigned n, int timeout_ms,
		 unsigned *which);
/* Whether a message waits (or one is peeked): one look at each lane */
bool smq_queue_ready(struct smq_queue *q);
/* queue.c: smq_queue_open with a doorbell of the caller's (a group's one
 * for its members: bell, if has_bell), or NULL: one of its own */
int smq_queue_open_bell(struct smq_window *w, unsigned index,
			enum smq_role role, unsigned flags,
			const struct smq_bell_addr *bell, bool has_bell,
			struct smq_queue **qp);
/* lane.c: the lane lock, in the sending board's own memory */
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
/* send.c: a full episode of the handle's, if one is open, said ended (its
 * refusals and waits) in the journal */
void smq_full_episode_end(struct smq_queue *q);
/* bell.c: can a process that rings kinds, on host, reach address a? */
bool smq_can_ring(uint32_t kinds, uint64_t host, const struct smq_bell_addr *a);
/* The receiver's sleep word, in its memory and every sender's (inside
 * the mark) */
void smq_set_sleep_epoch(struct smq_queue *q, uint64_t ep);

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

/* bell.c: waiting: a doorbell when every ringer can reach ours, else a nap.
 * Wakes by the caller's deadline, or after a slice to beat; -EINTR when a
 * signal handler ran, which ends the caller's wait. */
int smq_wait_bell(struct smq_queue *q, bool can_sleep, const uint32_t *word,
		  uint32_t seen, const struct timespec *deadline);
/* ...on the doorbells of n queues of one board (a group's), each seen[i]
 * its word's value before the look that found nothing */
int smq_wait_bells(struct smq_queue *const *qs, unsigned n, bool can_sleep,
		   const uint32_t *seen, const struct timespec *deadline);

#endif
