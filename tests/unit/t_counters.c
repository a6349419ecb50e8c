/* A counter counts events: one send that meets a full ring and waits is
 * one full wait, however many naps or spins the wait took. */
#include <sys/wait.h>
#include "testlib.h"

/* the least count of checks a run makes (16 here) */
TEST_FLOOR(16);

static uint64_t full_waits(struct smq_window *w, unsigned queue)
{
	struct smq_queue_info qi;

	OK(smq_queue_info(w, queue, &qi, sizeof(qi)));
	return qi.full_waits;
}

static int drain_later(void *arg)
{
	const char *spec = arg;
	struct smq_window *w;
	struct smq_queue *q;
	char buf[64];
	size_t n;
	unsigned from;
	struct smq_lane_info li;

	OK(smq_open(spec, 0, 0, &w));
	OK(smq_queue_open(w, 0, SMQ_RECEIVER, SMQ_POLL, &q));
	/* room only once board 1's send waits for it: a wait to count */
	WAIT_UNTIL(!smq_lane_info(w, 0, 1, &li, sizeof(li)) &&
		   li.sender_waiting, 20, "board 1's send to wait for room");
	OK(smq_receive(q, buf, sizeof(buf), &n, &from, 1000));
	OK(smq_queue_close(q));
	OK(smq_close(w));
	return 0;
}

int main(void)
{
	const char *spec = test_window();
	struct smq_window *w0 = test_init(spec, 2, 1, 2, 64), *w1;
	struct smq_queue *q;

	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &q));
	OK(smq_send(q, "a", 1, 0));
	OK(smq_send(q, "b", 1, 0));
	/* full, no wait asked: no wait counted */
	EXPECT(smq_send(q, "c", 1, 0), -EAGAIN);
	CHECK(full_waits(w0, 0) == 0);
	/* one send waits 0.3 s in vain: one full wait */
	EXPECT(smq_send(q, "c", 1, 300), -ETIMEDOUT);
	uint64_t n = full_waits(w0, 0);
	if (n != 1)
		FAIL("a send that waited 0.3 s on a full ring counted %llu full "
		     "waits, not 1", (unsigned long long)n);
	/* one send waits until a receiver makes room: one more */
	pid_t pid = test_fork(drain_later, (void *)spec);
	OK(smq_send(q, "c", 1, 5000));
	test_wait_ok(pid, "receiver");
	n = full_waits(w0, 0);
	if (n != 2)
		FAIL("two sends that waited counted %llu full waits, not 2",
		     (unsigned long long)n);
	OK(smq_queue_close(q));
	OK(smq_close(w1));
	OK(smq_close(w0));
	printf("full waits: one per send that waited on a full ring\n");
	return 0;
}
