/* smq_close() of a window with queues or groups still open on it is
 * refused (-EBUSY): the window handle stays whole and usable, so its queue
 * and group handles never reach freed memory (run under ASan: make check
 * SAN=address,undefined).  Closed in order, everything closes. */
#include <sys/uio.h>
#include "testlib.h"
TEST_FLOOR(29);

#define ESIZE 64

int main(void)
{
	static const unsigned pair[] = { 1, 2 };
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 1, 3, 8, ESIZE);
	struct smq_queue *tx, *rx;
	struct smq_group *g;
	struct smq_queue_info qi;
	char buf[ESIZE];
	size_t len;
	unsigned from, queue;

	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &tx));
	OK(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &rx));
	EXPECT(smq_close(w), -EBUSY);
	/* the refusal changed nothing: the handles work, the claim stands */
	OK(smq_send(tx, "after", 5, 0));
	OK(smq_receive(rx, buf, sizeof(buf), &len, &from, 0));
	CHECK(len == 5 && !memcmp(buf, "after", 5));
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	CHECK(qi.receiver_pid == (uint32_t)getpid() && qi.received == 1);
	CHECK(strstr(smq_strerror(-EBUSY), "queue"));

	/* one queue left open is enough to refuse */
	OK(smq_queue_close(tx));
	EXPECT(smq_close(w), -EBUSY);
	EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0), -EAGAIN);
	OK(smq_queue_close(rx));

	/* a group holds its members open */
	OK(smq_group_open_queues(w, pair, 2, SMQ_RECEIVER, 0, &g));
	EXPECT(smq_close(w), -EBUSY);
	OK(smq_queue_open(w, 2, SMQ_SENDER, 0, &tx));
	OK(smq_send(tx, "g", 1, 0));
	OK(smq_group_receive(g, buf, sizeof(buf), &len, &from, &queue, 0));
	CHECK(len == 1 && queue == 2);
	OK(smq_queue_close(tx));
	EXPECT(smq_close(w), -EBUSY);
	/* a receiving group, asleep and woken, still on the window */
	EXPECT(smq_group_receive(g, buf, sizeof(buf), &len, &from, &queue, 20),
	       -ETIMEDOUT);
	OK(smq_group_close(g));

	/* a monitor has no queues: it closes */
	struct smq_window *mon;
	OK(smq_open(spec, 0, SMQ_OPEN_READONLY, &mon));
	OK(smq_close(mon));
	OK(smq_validate(w, NULL, 0));
	OK(smq_close(w));
	printf("close with queues or a group open: -EBUSY, the handles "
	       "whole; closed in order: 0\n");
	return 0;
}
