/* No wake-up lost between the last look and the arming of a sleep.
 *
 * A receiver that finds every lane empty arms its sleep (says so in each
 * sender's lane_wake line) and then must look at its lanes once more: a
 * message that landed between its last look and the arming was sent while
 * it was awake, so its sender rang nothing.  Without that second look the
 * receiver sleeps on a message for a whole sleep slice (a second).  The
 * test build's hook (SMQ_HOOK_ARM) sends the message exactly there, from
 * another window handle of this process; the receive must return it well
 * within the slice.  The same for a sender waiting for room: a take
 * injected just before it arms (SMQ_HOOK_ARM_ROOM) must let the send go
 * on at once.  Over shm, file and split windows. */
#include <time.h>
#include "testint.h"
#include "testlib.h"

/* the least count of checks a run makes (327 here) */
TEST_FLOOR(320);

#ifndef SMQ_COUNT_FAR
#error "t_wake needs the test build's hooks (SMQ_COUNT_FAR)"
#endif

#define ROUNDS 20
#define WITHIN_MS 250  /* a sleep slice is 1000 ms */

static struct smq_queue *inject_tx, *inject_rx;
static enum smq_hook inject_at;
static int injected;

static void inject(enum smq_hook where)
{
	char buf[16];
	size_t n;

	if (where != inject_at || injected)
		return;
	injected = 1;
	if (where == SMQ_HOOK_ARM)
		OK(smq_send(inject_tx, "late", 4, 0));
	else
		OK(smq_receive(inject_rx, buf, sizeof(buf), &n, NULL, 0));
}

static uint64_t ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)(t.tv_sec - t0->tv_sec) * 1000 +
	       (uint64_t)((t.tv_nsec - t0->tv_nsec) / 1000000);
}

static void run(const char *spec, const char *name)
{
	const struct smq_geometry g = { 2, 1, 4, 64, (const uint16_t[]){ 0 } };
	struct smq_window *w0, *w1;
	struct smq_queue *rx, *tx;
	char buf[64];
	size_t n;
	uint64_t worst_rx = 0, worst_tx = 0;

	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w0));
	OK(smq_init(w0, &g, sizeof(g)));
	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, SMQ_SLEEP, &rx));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	inject_tx = tx;
	inject_rx = rx;

	/* the receiver: a send lands between its last look and its arming */
	for (int i = 0; i < ROUNDS; i++) {
		struct timespec t0;
		injected = 0;
		inject_at = SMQ_HOOK_ARM;
		smq_test_hook = inject;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		OK(smq_receive(rx, buf, sizeof(buf), &n, NULL, 5000));
		uint64_t took = ms_since(&t0);
		smq_test_hook = NULL;
		if (!injected)
			FAIL("%s: the receiver never armed a sleep", name);
		CHECK(n == 4 && !memcmp(buf, "late", 4));
		if (took > WITHIN_MS)
			FAIL("%s: a message sent just before the receiver armed "
			     "its sleep waited %llu ms (a sleep slice is 1000): "
			     "it did not look again after arming", name,
			     (unsigned long long)took);
		worst_rx = took > worst_rx ? took : worst_rx;
	}

	/* the sender: a take lands between its last look and its arming */
	for (int i = 0; i < ROUNDS; i++) {
		struct timespec t0;
		while (smq_send(tx, "fill", 4, 0) == 0)
			;
		injected = 0;
		inject_at = SMQ_HOOK_ARM_ROOM;
		smq_test_hook = inject;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		OK(smq_send(tx, "room", 4, 5000));
		uint64_t took = ms_since(&t0);
		smq_test_hook = NULL;
		if (!injected)
			FAIL("%s: the sender never armed a wait for room", name);
		if (took > WITHIN_MS)
			FAIL("%s: room made just before the sender armed its wait "
			     "came %llu ms later (a sleep slice is 1000): it did "
			     "not look again after arming", name,
			     (unsigned long long)took);
		worst_tx = took > worst_tx ? took : worst_tx;
		while (smq_receive(rx, buf, sizeof(buf), &n, NULL, 0) == 0)
			;
	}
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_close(w1));
	OK(smq_close(w0));
	printf("%s: %d receives and %d sends met at their arming, each on at "
	       "once (at most %llu and %llu ms)\n", name, ROUNDS, ROUNDS,
	       (unsigned long long)worst_rx, (unsigned long long)worst_tx);
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
