/* smqctl top: one reading of the window (a snap), and the clocks it is
 * stamped with.  Under follow.c, which follows the window from reading to
 * reading, and signals.c, which guards a reading against SIGBUS: follow.c
 * reads through that guard. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include "top.h"

uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void *grow(void *p, unsigned *cap, unsigned want, size_t size)
{
	if (want <= *cap)
		return p;
	void *q = realloc(p, (size_t)want * size);
	if (q)
		*cap = want;
	return q;
}

int read_snap(struct smq_window *w, struct snap *s)
{
	int err = smq_window_info(w, &s->wi, sizeof(s->wi));
	if (err)
		return err;
	unsigned nb = s->wi.geometry.boards;
	unsigned nq = s->wi.geometry.queues + s->wi.diag_queues;
	unsigned bcap = s->board_cap, qcap = s->queue_cap;
	void *p = grow(s->boards, &bcap, nb, sizeof(*s->boards));
	if (!p)
		return -ENOMEM;
	s->boards = p;
	s->board_cap = bcap;
	p = grow(s->queues, &qcap, nq, sizeof(*s->queues));
	if (!p)
		return -ENOMEM;
	s->queues = p;
	s->queue_cap = qcap;
	for (unsigned b = 0; b < nb; b++)
		if ((err = smq_board_info(w, b, &s->boards[b], sizeof(s->boards[b]))))
			return err;
	for (unsigned q = 0; q < nq; q++)
		if ((err = smq_queue_info(w, q, &s->queues[q], sizeof(s->queues[q]))))
			return err;
	s->nboards = nb;
	s->nqueues = nq;
	s->mono_ns = mono_ns();
	s->real_ns = real_ns();
	return 0;
}
