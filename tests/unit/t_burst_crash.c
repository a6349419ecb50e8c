/* A burst's entries are signed before its one store of top, so a receiver
 * may be several entries past the top it reads, and a sender that dies
 * between the two leaves several signed entries behind.  The test build's
 * hook (SMQ_HOOK_SIGNED) stops a burst of 3 there: a receiver that takes
 * them and then looks at every lane (as it does once a second) finds
 * nothing wrong; a sender killed there leaves its 3 messages to be
 * received once each, in order, before the next sender's, whether the
 * receiver took them before the next sender opened or not, and counted
 * as sent.  A sender killed between its two stores of top (its own, then
 * the receiver's copy) leaves the copy behind until the next sender
 * opens, which stores it again. */
#include <signal.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include "testint.h"
#include "testlib.h"

/* the least count of checks a run makes (66 here) */
TEST_FLOOR(66);

#ifndef SMQ_COUNT_FAR
#error "t_burst_crash needs the test build's hooks (SMQ_COUNT_FAR)"
#endif

static const char *spec;
static struct smq_queue *rx;

static void burst_of_3(struct smq_queue *tx)
{
	struct iovec m[3] = { { "m0", 2 }, { "m1", 2 }, { "m2", 2 } };
	EXPECT(smq_send_burst(tx, m, 3, 0), 3);
}

/* At the hook: take the three signed entries, then look at every lane. */
static void take_at_hook(enum smq_hook where)
{
	char buf[16];
	size_t n;

	if (where != SMQ_HOOK_SIGNED)
		return;
	smq_test_hook = NULL;
	for (int i = 0; i < 3; i++) {
		OK(smq_receive(rx, buf, sizeof(buf), &n, NULL, 0));
		CHECK(n == 2 && buf[0] == 'm' && buf[1] == '0' + i);
	}
	rx->look_all_at = 0;
	EXPECT(smq_receive(rx, buf, sizeof(buf), &n, NULL, 0), -EAGAIN);
}

static enum smq_hook die_at;

static void die_at_hook(enum smq_hook where)
{
	if (where == die_at)
		raise(SIGKILL);
}

/* Sends a burst of 3 and is killed at the hook arg names. */
static int dying_sender(void *arg)
{
	struct smq_window *w;
	struct smq_queue *tx;

	die_at = *(const enum smq_hook *)arg;
	OK(smq_open(spec, 1, 0, &w));
	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &tx));
	smq_test_hook = die_at_hook;
	burst_of_3(tx);
	return 1;  /* not reached */
}

static void kill_sender_at(enum smq_hook where)
{
	int st;
	pid_t pid = test_fork(dying_sender, &where);

	CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st));
}

/* The lane's counts as smq_lane_info() reads them. */
static struct smq_lane_info lane(struct smq_window *w)
{
	struct smq_lane_info li;

	OK(smq_lane_info(w, 0, 1, &li, sizeof(li)));
	return li;
}

/* Every message the receiver took was counted as sent, once. */
static void sent_is_received(struct smq_window *w)
{
	struct smq_lane_info li = lane(w);
	struct smq_queue_info qi;

	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	if (li.messages != qi.received || li.bytes != qi.bytes_received)
		FAIL("lane_out.messages %llu bytes %llu, rx.messages %llu "
		     "bytes %llu", (unsigned long long)li.messages,
		     (unsigned long long)li.bytes,
		     (unsigned long long)qi.received,
		     (unsigned long long)qi.bytes_received);
}

/* Nothing left in the queue, and all of it counted as sent. */
static void drained(struct smq_window *w)
{
	char buf[16];
	size_t n;

	EXPECT(smq_receive(rx, buf, sizeof(buf), &n, NULL, 0), -EAGAIN);
	sent_is_received(w);
}

static void expect(const char *want)
{
	char buf[16];
	size_t n;

	OK(smq_receive(rx, buf, sizeof(buf), &n, NULL, 0));
	if (n != strlen(want) || memcmp(buf, want, n))
		FAIL("received '%.*s', expected '%s'", (int)n, buf, want);
}

/* The three messages of burst_of_3, in order. */
static void expect_burst(void)
{
	expect("m0");
	expect("m1");
	expect("m2");
}

int main(void)
{
	struct smq_window *w0, *w1;
	struct smq_queue *tx;

	spec = test_window();
	w0 = test_init(spec, 2, 1, 8, 16);
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &rx));
	OK(smq_open(spec, 1, 0, &w1));

	/* 1. taken before top: no fault */
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	smq_test_hook = take_at_hook;
	burst_of_3(tx);
	OK(smq_validate(w0, NULL, 0));
	OK(smq_send(tx, "after", 5, 0));
	expect("after");
	OK(smq_queue_close(tx));
	printf("burst_crash: a receiver 3 past top looked at every lane: no "
	       "fault\n");

	/* 2. the sender killed after signing, nothing taken yet */
	kill_sender_at(SMQ_HOOK_SIGNED);
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	OK(smq_send(tx, "next", 4, 0));
	expect_burst();
	expect("next");
	drained(w0);
	OK(smq_queue_close(tx));

	/* 3. the sender killed after signing, all taken before the next
	 * sender opens */
	kill_sender_at(SMQ_HOOK_SIGNED);
	expect_burst();
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	OK(smq_send(tx, "later", 5, 0));
	expect("later");
	OK(smq_validate(w0, NULL, 0));
	drained(w0);
	printf("burst_crash: a sender killed with 3 entries signed and no "
	       "top: each received once, in order, taken before or after the "
	       "next sender opened, and counted as sent\n");
	OK(smq_queue_close(tx));

	/* 4. the sender killed between its two stores of top */
	uint64_t top = lane(w0).top;
	kill_sender_at(SMQ_HOOK_TOP_STORED);
	CHECK(lane(w0).top == top);  /* the receiver's copy is behind */
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	if (lane(w0).top != top + 3)
		FAIL("lane_in.top %llu after the next sender opened, expected "
		     "%llu", (unsigned long long)lane(w0).top,
		     (unsigned long long)top + 3);
	expect_burst();
	OK(smq_validate(w0, NULL, 0));
	drained(w0);
	printf("burst_crash: a sender killed between its two stores of top: "
	       "the next sender to open stores the receiver's copy again; "
	       "counted once\n");
	OK(smq_queue_close(tx));

	/* 5. killed with its burst counted but top not stored: recovered,
	 * not counted twice */
	kill_sender_at(SMQ_HOOK_COUNTED);
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	expect_burst();
	drained(w0);
	printf("burst_crash: a sender killed between its counts and its top: "
	       "its messages received once, counted once\n");
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_close(w1));
	OK(smq_close(w0));
	return 0;
}
