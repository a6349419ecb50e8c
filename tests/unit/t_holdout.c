/* Who smq_holdout() names after an init or clear refused with
 * -SMQ_EATWORK: the board, the process and the queue of what is at work.
 * A receiver whose process has no handle slot left of its own (its board's
 * control block full, so its queue handle shares its window's mark) is
 * found by its claim on the queue; the holdout names that queue too. */
#include <sys/wait.h>
#include "testint.h"
#include "testlib.h"

/* the least count of checks a run makes (12 here) */
TEST_FLOOR(12);

static const char *spec;
static int ready[2];

/* Board 1 takes every free slot of its control block, then opens the
 * receiver of queue 1, which must share its window's mark; then waits to
 * be killed. */
static int slotless_receiver(void *arg)
{
	struct smq_window *w;
	struct smq_queue *rx;

	(void)arg;
	OK(smq_open(spec, 1, 0, &w));
	OK(smq_enter(w));  /* the window handle's own slot */
	smq_leave(w);
	for (unsigned i = 0; i < SMQ_SLOTS; i++) {
		uint64_t free_tag = 0;
		__atomic_compare_exchange_n(&w->ctl->slot[i].tag, &free_tag,
					    w->tag, false, __ATOMIC_ACQ_REL,
					    __ATOMIC_RELAXED);
	}
	OK(smq_queue_open(w, 1, SMQ_RECEIVER, 0, &rx));
	CHECK(rx->slot_shared);
	CHECK(write(ready[1], "r", 1) == 1);
	for (;;)
		pause();
	return 0;
}

int main(void)
{
	struct smq_window *w, *w0;
	struct smq_holdout h;
	char c;

	spec = test_window();
	w = test_init(spec, 2, 2, 8, 64);
	CHECK(w->lay.receiver[1] == 1);
	CHECK(pipe(ready) == 0);
	pid_t pid = test_fork(slotless_receiver, NULL);
	CHECK(read(ready[0], &c, 1) == 1);
	OK(smq_open(spec, 0, 0, &w0));  /* not forced */
	EXPECT(smq_clear(w0, 1), -SMQ_EATWORK);
	OK(smq_holdout(w0, &h, sizeof(h)));
	if (h.board != 1 || h.pid != (uint32_t)pid || h.queue != 1)
		FAIL("holdout board %u pid %u queue %d, expected board 1 pid "
		     "%d queue 1", h.board, h.pid, h.queue, (int)pid);
	struct smq_geometry g = { .boards = 2, .queues = 2, .entries = 8,
				  .entry_size = 64 };
	EXPECT(smq_init(w0, &g, sizeof(g)), -SMQ_EATWORK);
	OK(smq_holdout(w0, &h, sizeof(h)));
	if (h.queue != 1)
		FAIL("init's holdout names queue %d, expected 1", h.queue);
	printf("holdout: a receiver sharing its window's mark, at work on "
	       "queue 1: board 1, its pid, queue 1\n");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	/* a queue number is unsigned: past the last queue, even past an
	 * int's, is -EINVAL; SMQ_ALL_QUEUES clears every queue */
	EXPECT(smq_clear(w0, 1000), -EINVAL);
	EXPECT(smq_clear(w0, SMQ_ALL_QUEUES - 1), -EINVAL);
	EXPECT(smq_clear_dry_run(w0, 1u << 31), -EINVAL);
	OK(smq_clear_dry_run(w0, SMQ_ALL_QUEUES));
	OK(smq_clear(w0, SMQ_ALL_QUEUES));
	OK(smq_close(w0));
	OK(smq_close(w));
	return 0;
}
