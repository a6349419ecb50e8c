/* No wake-up lost between the last look and the arming of a sleep.
 *
 * A receiver that finds every lane empty arms its sleep (says so in each
 * sender's lane_wake line) and then must look at its lanes once more: a
 * message that landed between its last look and the arming was sent while
 * it was awake, so its sender rang nothing.  Without that second look the
 * receiver sleeps on a message for a whole sleep slice (a second).  The
 * test build's hook (SMQ_HOOK_ARM) sends the message exactly there, from
 * another window handle of this process; the receive must return it
 * without going to sleep at all (the hooks count each sleep on the
 * doorbell, SMQ_HOOK_SLEEP, and each that ended unrung, SMQ_HOOK_SLEPT_OUT:
 * counted, not timed).  The same for a sender waiting for room: a take
 * injected just before it arms (SMQ_HOOK_ARM_ROOM) must let the send go
 * on without a sleep.  Over shm, file and split windows. */
#include "testint.h"
#include "testlib.h"

/* the least count of checks a run makes (447 here) */
TEST_FLOOR(440);

#ifndef SMQ_COUNT_FAR
#error "t_wake needs the test build's hooks (SMQ_COUNT_FAR)"
#endif

#define ROUNDS 20

static struct smq_queue *inject_tx, *inject_rx;
static enum smq_hook inject_at;
static int injected;
/* after the injection: sleeps begun on the doorbell, and ended unrung */
static unsigned sleeps, slept_out;

static void inject(enum smq_hook where)
{
	char buf[16];
	size_t n;

	if (injected && where == SMQ_HOOK_SLEEP)
		sleeps++;
	if (injected && where == SMQ_HOOK_SLEPT_OUT)
		slept_out++;
	if (where != inject_at || injected)
		return;
	injected = 1;
	if (where == SMQ_HOOK_ARM)
		OK(smq_send(inject_tx, "late", 4, 0));
	else
		OK(smq_receive(inject_rx, buf, sizeof(buf), &n, NULL, 0));
}

static void run(const char *spec, const char *name)
{
	const struct smq_geometry g = { 2, 1, 4, 64, (const uint16_t[]){ 0 } };
	struct smq_window *w0, *w1;
	struct smq_queue *rx, *tx;
	char buf[64];
	size_t n;

	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w0));
	OK(smq_init(w0, &g, sizeof(g)));
	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, SMQ_SLEEP, &rx));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	inject_tx = tx;
	inject_rx = rx;

	/* the receiver: a send lands between its last look and its arming */
	for (int i = 0; i < ROUNDS; i++) {
		injected = 0;
		sleeps = slept_out = 0;
		inject_at = SMQ_HOOK_ARM;
		smq_test_hook = inject;
		/* 5 s: a give-up bound; a receiver that slept would still
		 * return at its slice (1 s), and the count says so */
		OK(smq_receive(rx, buf, sizeof(buf), &n, NULL, 5000));
		smq_test_hook = NULL;
		if (!injected)
			FAIL("%s: the receiver never armed a sleep", name);
		CHECK(n == 4 && !memcmp(buf, "late", 4));
		if (sleeps || slept_out)
			FAIL("%s: a message sent just before the receiver armed "
			     "its sleep: it slept %u times (%u ended unrung) "
			     "before taking it: it did not look again after "
			     "arming", name, sleeps, slept_out);
		CHECK(sleeps == 0);
	}

	/* the sender: a take lands between its last look and its arming */
	for (int i = 0; i < ROUNDS; i++) {
		while (smq_send(tx, "fill", 4, 0) == 0)
			;
		injected = 0;
		sleeps = slept_out = 0;
		inject_at = SMQ_HOOK_ARM_ROOM;
		smq_test_hook = inject;
		OK(smq_send(tx, "room", 4, 5000));  /* 5 s: a give-up bound */
		smq_test_hook = NULL;
		if (!injected)
			FAIL("%s: the sender never armed a wait for room", name);
		if (sleeps || slept_out)
			FAIL("%s: room made just before the sender armed its "
			     "wait: it slept %u times (%u ended unrung) before "
			     "sending: it did not look again after arming", name,
			     sleeps, slept_out);
		CHECK(sleeps == 0);
		while (smq_receive(rx, buf, sizeof(buf), &n, NULL, 0) == 0)
			;
	}
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_close(w1));
	OK(smq_close(w0));
	printf("%s: %d receives and %d sends met at their arming, each on "
	       "without a sleep\n", name, ROUNDS, ROUNDS);
}

int main(void)
{
	char split[200];

	setenv("SMQ_TEST_TRANSPORT", "shm", 1);
	run(test_window(), "shm");
	setenv("SMQ_TEST_TRANSPORT", "file", 1);
	run(test_window(), "file");
	/* its regions go at exit, with the test's other objects */
	snprintf(split, sizeof(split), "split:%s", test_name("split"));
	run(split, "split");
	return 0;
}
