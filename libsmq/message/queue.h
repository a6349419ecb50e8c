/* libsmq internals of the message path: the lane lock (lane.c) and the
 * doorbell (bell.c) below the queues (queue.c), send.c and receive.c
 * above them, groups (group.c) on top. */
#ifndef SMQ_QUEUE_H
#define SMQ_QUEUE_H

#include "window/journal.h"
#include "window/window.h"
#include "lane.h"

#define SLEEP_SLICE_MS 1000  /* a sleeper wakes this often to beat */
#define HEARTBEAT_EVERY 1024 /* messages between beats of a busy board */
#define NAP_NS 50000         /* a waiter nobody can ring looks this often */

/* queue.c */
/* The receiver's view of lane k at sequence bottom: where the next entry
 * is and the signature it will carry once written (keyed by the lane's
 * board: its key is made once, at open).  Inline: every take sets it. */
static inline void smq_lane_expect(struct smq_queue *q, unsigned k,
				   uint64_t bottom)
{
	q->heads[k] = (const void *)(q->rings + ((uint64_t)k * q->entries +
				     (bottom & (q->entries - 1))) * q->stride);
	q->expect[k] = smq_signature_at(q->keys[k], bottom);
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
/* queue.c: a sender's full episode for the journal: met (a send found
 * the lane full), maybe ended (a send found room: a look at the clock
 * every 16th), ended (its refusals and waits said, if one is open) */
void smq_full_met(struct smq_queue *q);
void smq_full_maybe_ended(struct smq_queue *q);
void smq_full_episode_end(struct smq_queue *q);
/* bell.c: can a process that rings kinds, on host, reach address a? */
bool smq_can_ring(uint32_t kinds, uint64_t host, const struct smq_bell_addr *a);
/* The receiver's sleep word, in its memory and every sender's (inside
 * the mark) */
void smq_set_sleep_epoch(struct smq_queue *q, uint64_t ep);
/* Tells the queue's senders whether we busy-poll and never sleep (feature
 * membarrier); taking it back sends a barrier to every CPU. */
void smq_rx_polls(struct smq_queue *q, bool polls);

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
