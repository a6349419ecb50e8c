/* One board, loopback: open, init, send, receive, sizes, info. */
#include "testlib.h"

/* the least count of checks a run makes (14 here) */
TEST_FLOOR(14);

int main(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 1, 2, 8, 100);
	struct smq_queue *tx, *rx;
	char buf[128];
	size_t len;
	unsigned from;

	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &tx));
	OK(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &rx));
	OK(smq_send(tx, "hello", 5, 0));
	OK(smq_receive(rx, buf, sizeof(buf), &len, &from, 0));
	CHECK(len == 5 && !memcmp(buf, "hello", 5) && from == 0);
	EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0), -EAGAIN);

	struct smq_queue_info qi;
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	CHECK(qi.sent == 1 && qi.received == 1 && qi.fill == 0 &&
	      qi.bytes_sent == 5 && qi.receiver_pid == (uint32_t)getpid());
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_validate(w, NULL, 0));
	OK(smq_close(w));
	return 0;
}
