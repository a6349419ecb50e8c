/* libsmq internals shared by queue.c, send.c and receive.c. */
#ifndef SMQ_QUEUE_H
#define SMQ_QUEUE_H

#include "handle.h"

#define SLEEP_SLICE_MS 1000  /* a sleeper wakes this often to beat */
#define HEARTBEAT_EVERY 1024 /* messages between beats of a busy board */
#define NAP_NS 50000         /* a waiter nobody can ring looks this often */

/* receive.c */
void smq_lane_expect(struct smq_queue *q, unsigned s, uint64_t bottom);
void smq_set_sleep_epoch(struct smq_queue *q, uint64_t ep);
/* send.c: the lane lock, in the sending board's own memory */
int smq_lane_lock(struct smq_queue *q, const struct timespec *deadline);
void smq_lane_unlock(struct smq_queue *q);
void smq_lane_recover(struct smq_queue *q);
/* queue.c: can a process that rings kinds, on host, reach address a? */
bool smq_can_ring(uint32_t kinds, uint64_t host, const struct smq_bell_addr *a);

/* Waiting: a doorbell when every ringer can reach ours, else a nap.
 * Wakes by the caller's deadline, or after a slice to beat. */
int smq_wait_bell(struct smq_queue *q, bool can_sleep, const uint32_t *word,
		  uint32_t seen, const struct timespec *deadline);

#endif
