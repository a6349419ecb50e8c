/* smq_watch(): a monitor's wait until what it sees of the boards and
 * queues is judged (work.c's judgement, read through the infos), above
 * both. */
#include <stdlib.h>
#include <string.h>
#include "window.h"

/* What a watch still waits for in one look: a board or receiver of
 * another host seen once, a queue holding messages seen neither to drain
 * (its bottom moved since the watch's first look) nor to stall. */
static bool watch_open(struct smq_window *w, unsigned flags, uint64_t *first,
		       unsigned nb, unsigned nq, bool first_look)
{
	bool open = false;

	for (unsigned b = 0; b < nb; b++) {
		struct smq_board_info bi;
		smq_board_info(w, b, &bi, sizeof(bi));
		if (flags & SMQ_WATCH_BOARDS)
			open |= bi.activity == SMQ_ACTIVITY_UNKNOWN ||
				(bi.state != SMQ_BOARD_ABSENT && bi.alive < 0);
	}
	for (unsigned q = 0; q < nq; q++) {
		struct smq_queue_info qi;
		smq_queue_info(w, q, &qi, sizeof(qi));
		if (flags & SMQ_WATCH_BOARDS)
			open |= qi.receiver_state == SMQ_RECEIVER_UNKNOWN;
		if (first_look)
			first[q] = qi.bottom;
		if (flags & SMQ_WATCH_QUEUES)
			open |= qi.queued && !qi.stalled && qi.bottom == first[q];
	}
	return open;
}

int smq_watch(struct smq_window *w, unsigned flags, int timeout_ms)
{
	struct smq_window_info wi;
	struct timespec deadline;

	if (!w || !flags || (flags & ~(SMQ_WATCH_BOARDS | SMQ_WATCH_QUEUES)) ||
	    timeout_ms < -1)
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	if (timeout_ms < 0) {
		/* a look past the longest judgement asked for */
		timeout_ms = flags & SMQ_WATCH_BOARDS
			     ? SMQ_HEARTBEAT_TIMEOUT_MS + 100 : 0;
		if ((flags & SMQ_WATCH_QUEUES) && w->stall_ms < INT32_MAX - 100 &&
		    w->stall_ms + 100 > timeout_ms)
			timeout_ms = w->stall_ms + 100;
	}
	smq_deadline(&deadline, timeout_ms);
	uint64_t *first = NULL;
	unsigned nb = 0, nq = 0;
	int err = 0;
	for (bool first_look = true;; first_look = false) {
		err = smq_window_info(w, &wi, sizeof(wi));
		if (err && err != -ESTALE)
			break;
		unsigned n = wi.geometry.queues + wi.diag_queues;
		if (n != nq || wi.geometry.boards != nb) {
			/* a new layout: what was first seen is of the old one */
			free(first);
			if (!(first = calloc(n ? n : 1, sizeof(*first)))) {
				err = -ENOMEM;
				break;
			}
			first_look = true;
			nb = wi.geometry.boards;
			nq = n;
		}
		if (!watch_open(w, flags, first, nb, nq, first_look)) {
			err = 0;
			break;
		}
		int left = smq_ms_left(&deadline);
		if (!left) {
			err = -ETIMEDOUT;
			break;
		}
		if ((err = smq_sleep_ms(left < 100 ? left : 100)))
			break;  /* -EINTR: a signal handler ran */
	}
	free(first);
	return err;
}
