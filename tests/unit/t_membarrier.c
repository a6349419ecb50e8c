/* Feature membarrier: the barrier a send leaves out, and when it may.
 *
 * A send makes one full barrier after its message, for two Dekker pairs:
 * its top against the receiver's sleep word, its release of the lane lock
 * against a sender of its board asleep on that lock.  Where every process
 * that maps the window runs under one kernel (shm:, split:), the other
 * side of each pair may pay instead, with a barrier on every CPU
 * (membarrier(2)), and a send of one message (a burst keeps it) leaves
 * its own out:
 * - while the receiver busy-polls and never sleeps (it says so in each
 *   lane's lane_wake.rx_polls); a receiver opened to sleep stores 2 (not
 *   said), sends that barrier, then stores 0, before it can sleep; one
 *   killed before its barrier (the hook SMQ_HOOK_POLLS_TAKING_BACK)
 *   leaves the 2, and the next receiver runs the barrier;
 * - and while no sender has slept on a lock the handle may hold (its
 *   slot's lock_waited, set by the first to sleep there, who then sends
 *   the barrier).
 * The test build's hook SMQ_HOOK_NO_BARRIER counts the sends that left it
 * out (counted, not timed).  Over a file: window (its memory may also be
 * a virtual machine's, which membarrier does not reach) no send may.
 * That the other side's MEMBARRIER_CMD_GLOBAL stands in for a barrier on
 * this machine is t_marks's litmus (a light mark against board 0's). */
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include "testint.h"
#include "testlib.h"

/* the least count of checks a run makes */
TEST_FLOOR(230);

#ifndef SMQ_COUNT_FAR
#error "t_membarrier needs the test build's hooks (SMQ_COUNT_FAR)"
#endif

#define SENDS 8

/* Between the test and its second sender, a child process. */
struct shared {
	atomic_uint skipped;    /* the child's sends that left it out */
	atomic_uint lock_sleeps; /* ours, asleep on the lane lock */
	atomic_int cmd, done, waited;
};
static struct shared *sh;
static atomic_uint skipped;  /* ours */
static const char *spec;

enum cmd { SEND = 1, HOLD, RELEASE, QUIT };

static void count_hook(enum smq_hook where)
{
	if (where == SMQ_HOOK_NO_BARRIER)
		atomic_fetch_add(&skipped, 1);
	if (where == SMQ_HOOK_LOCK_SLEEP)
		atomic_fetch_add(&sh->lock_sleeps, 1);
}

static void child_hook(enum smq_hook where)
{
	if (where == SMQ_HOOK_NO_BARRIER)
		atomic_fetch_add(&sh->skipped, 1);
}

static atomic_uint taking_back;  /* ours: opens that took rx_polls back */

static void taking_hook(enum smq_hook where)
{
	if (where == SMQ_HOOK_POLLS_TAKING_BACK)
		atomic_fetch_add(&taking_back, 1);
}

static void die_hook(enum smq_hook where)
{
	if (where == SMQ_HOOK_POLLS_TAKING_BACK)
		_exit(0);
}

/* A receiver that may sleep, killed between its 2s and its barrier */
static int dying_receiver(void *arg)
{
	struct smq_window *w;
	struct smq_queue *q;

	(void)arg;
	OK(smq_open(spec, 0, 0, &w));
	smq_test_hook = die_hook;
	smq_queue_open(w, 0, SMQ_RECEIVER, 0, &q);
	FAIL("the receiver's open never reached its barrier");
	return 1;
}

/* The queue's other sender of board 1: sends, or holds the lane lock (a
 * loan) until told, as the test says; reports its slot's lock_waited. */
static int second_sender(void *arg)
{
	struct smq_window *w;
	struct smq_queue *q;
	void *p;

	(void)arg;
	OK(smq_open(spec, 1, 0, &w));
	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &q));
	smq_test_hook = child_hook;
	for (int n = 1;; n++) {
		WAIT_UNTIL(atomic_load(&sh->cmd) != 0, 60, "command %d", n);
		int c = atomic_exchange(&sh->cmd, 0);
		if (c == SEND) {
			OK(smq_send(q, "two", 3, 5000));
		} else if (c == HOLD) {
			OK(smq_loan(q, 4, &p, 0));  /* the lane lock, held */
			memcpy(p, "held", 4);
		} else if (c == RELEASE) {
			OK(smq_loan_submit(q, 4));
		}
		atomic_store(&sh->waited, (int)LOAD(&q->slot->lock_waited));
		atomic_store(&sh->done, n);
		if (c == QUIT)
			break;
	}
	smq_test_hook = NULL;
	OK(smq_queue_close(q));
	OK(smq_close(w));
	return 0;
}

static int commands;

static void command(enum cmd c, const char *what)
{
	atomic_store(&sh->cmd, (int)c);
	commands++;
	WAIT_UNTIL(atomic_load(&sh->done) == commands, 60, "%s", what);
}

static uint32_t rx_polls(struct smq_window *w)
{
	const struct smq_lane_wake *k = at(w, lay_lane_wake(&w->lay, 1, 0));
	return LOAD(&k->rx_polls);
}

/* The word as a receiver elsewhere left it */
static void set_rx_polls(struct smq_window *w, uint32_t v)
{
	struct smq_lane_wake *k = at(w, lay_lane_wake(&w->lay, 1, 0));
	STORE(&k->rx_polls, v);
}

/* n sends of ours; how many left the barrier out */
static unsigned sends(struct smq_queue *tx, unsigned n)
{
	unsigned before = atomic_load(&skipped);

	smq_test_hook = count_hook;
	for (unsigned i = 0; i < n; i++)
		OK(smq_send(tx, "one", 3, 5000));
	smq_test_hook = NULL;
	return atomic_load(&skipped) - before;
}

static void drain(struct smq_queue *rx, unsigned n)
{
	char buf[64];
	size_t len;

	for (unsigned i = 0; i < n; i++)
		OK(smq_receive(rx, buf, sizeof(buf), &len, NULL, 5000));
	EXPECT(smq_receive(rx, buf, sizeof(buf), &len, NULL, 0), -EAGAIN);
}

/* SENDS sends of tx, received by rx: every one makes its barrier */
static void all_barriers(struct smq_queue *tx, struct smq_queue *rx,
			 const char *name, const char *what)
{
	unsigned n = sends(tx, SENDS);

	if (n)
		FAIL("%s: %s, %u sends left out their barrier", name, what, n);
	CHECK(n == 0);
	drain(rx, SENDS);
}

static void run(const char *window, const char *name, bool light)
{
	const struct smq_geometry g = { 2, 1, 64, 64, (const uint16_t[]){ 0 } };
	struct smq_window *w0, *w1;
	struct smq_queue *rx, *tx;
	unsigned n;

	spec = window;
	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w0));
	OK(smq_init(w0, &g, sizeof(g)));
	OK(smq_open(spec, 1, 0, &w1));
	CHECK(w0->lay.features & SMQ_FEATURE_MEMBARRIER);
	CHECK(w0->map.order->light == light);
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));

	/* a receiver that busy-polls: said where membarrier reaches all */
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, SMQ_POLL, &rx));
	if (rx_polls(w0) != (light ? 1u : 0u))
		FAIL("%s: a busy-polling receiver left rx_polls %u", name,
		     rx_polls(w0));
	CHECK(rx->polls == light);
	/* a receiver of this kernel that maps the same object by shm: says
	 * it; a sender that maps it as a file leaves nothing out all the
	 * same */
	if (!light)
		set_rx_polls(w0, 1);
	n = sends(tx, SENDS);
	if (n != (light ? SENDS : 0))
		FAIL("%s: %u of %d sends to a busy-polling receiver left out "
		     "their barrier (want %d)", name, n, SENDS,
		     light ? SENDS : 0);
	CHECK(n == (light ? SENDS : 0u));
	/* a burst keeps it (without it, bursts through a small ring moved
	 * fewer messages) */
	struct iovec iov[4];
	for (int i = 0; i < 4; i++)
		iov[i] = (struct iovec){ "four", 4 };
	unsigned before = atomic_load(&skipped);
	smq_test_hook = count_hook;
	EXPECT(smq_send_burst(tx, iov, 4, 5000), 4);
	smq_test_hook = NULL;
	if (atomic_load(&skipped) != before)
		FAIL("%s: a burst left out its barrier", name);
	CHECK(atomic_load(&skipped) == before);
	drain(rx, SENDS + 4);

	/* a receiver that may sleep, killed as it takes it back: the word
	 * is 2 (every send barriers), and the next receiver finishes it */
	if (light) {
		OK(smq_queue_close(rx));
		pid_t dying = test_fork(dying_receiver, NULL);
		test_wait_ok(dying, "the receiver killed as it took it back");
		if (rx_polls(w0) != 2)
			FAIL("%s: a receiver killed before its barrier left "
			     "rx_polls %u, not 2", name, rx_polls(w0));
		CHECK(rx_polls(w0) == 2);
		OK(smq_queue_open(w0, 0, SMQ_RECEIVER, SMQ_POLL, &rx));
		set_rx_polls(w0, 2);
		all_barriers(tx, rx, name, "while rx_polls is 2");
	}
	OK(smq_queue_close(rx));
	/* a receiver that may sleep takes it back: every send barriers */
	unsigned took = atomic_load(&taking_back);
	smq_test_hook = taking_hook;
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &rx));
	smq_test_hook = NULL;
	if (rx_polls(w0))
		FAIL("%s: a receiver that may sleep left rx_polls set", name);
	if (atomic_load(&taking_back) != took + 1)
		FAIL("%s: a receiver that may sleep found rx_polls set and "
		     "ran no barrier", name);
	CHECK(!rx->polls && !rx->nap);
	all_barriers(tx, rx, name, "to a receiver that may sleep");
	OK(smq_queue_close(rx));

	/* a window made without the feature: nothing said, nothing left out
	 * (its layout as a window of an earlier version gives it) */
	w0->lay.features &= ~SMQ_FEATURE_MEMBARRIER;
	w1->lay.features &= ~SMQ_FEATURE_MEMBARRIER;
	struct smq_queue *tx0;
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx0));
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, SMQ_POLL, &rx));
	CHECK(rx_polls(w0) == 0 && !rx->polls);
	set_rx_polls(w0, 1);  /* as a receiver that knew the feature left it */
	all_barriers(tx0, rx, name, "without the feature");
	OK(smq_queue_close(rx));
	OK(smq_queue_close(tx0));
	set_rx_polls(w0, 0);
	w0->lay.features |= SMQ_FEATURE_MEMBARRIER;
	w1->lay.features |= SMQ_FEATURE_MEMBARRIER;

	/* two senders of board 1: the child's sends leave the barrier out
	 * until we have slept on a lock it held, and never after */
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, SMQ_POLL, &rx));
	commands = 0;
	memset(sh, 0, sizeof(*sh));
	pid_t child = test_fork(second_sender, NULL);
	command(SEND, "the second sender's first send");
	CHECK(atomic_load(&sh->skipped) == (light ? 1u : 0u));
	CHECK(atomic_load(&sh->waited) == 0);
	/* our send waits for the lock the child holds: it spins, then
	 * sleeps on it; a relay releases it once we sleep (a send that found
	 * the lock free before its sleep tries again) */
	unsigned sleeps = atomic_load(&sh->lock_sleeps);
	for (int round = 0; atomic_load(&sh->lock_sleeps) == sleeps &&
			    round < 20; round++) {
		command(HOLD, "the second sender holding the lane lock");
		struct timespec t = { 0, 20000000 };
		pid_t relay = test_fork_raw();
		if (relay == 0) {
			/* the release, once we are asleep on the lock */
			WAIT_UNTIL(atomic_load(&sh->lock_sleeps) > sleeps, 60,
				   "the test asleep on the lane lock");
			nanosleep(&t, NULL);
			atomic_store(&sh->cmd, RELEASE);
			_exit(0);
		}
		commands++;
		smq_test_hook = count_hook;
		OK(smq_send(tx, "one", 3, 5000));
		smq_test_hook = NULL;
		WAIT_UNTIL(atomic_load(&sh->done) == commands, 60,
			   "the release %d", round);
		test_wait_ok(relay, "the relay of the release");
	}
	if (atomic_load(&sh->lock_sleeps) == sleeps)
		FAIL("%s: our send never slept on the held lane lock", name);
	if (!atomic_load(&sh->waited))
		FAIL("%s: a sender slept on the lock; the holder's slot does "
		     "not say so (lock_waited)", name);
	before = atomic_load(&sh->skipped);
	command(SEND, "the second sender's send after our wait");
	if (atomic_load(&sh->skipped) != before)
		FAIL("%s: a holder a sender slept on left its barrier out",
		     name);
	CHECK(atomic_load(&sh->skipped) == before);
	command(QUIT, "the second sender's close");
	test_wait_ok(child, "the second sender");
	char buf[64];
	size_t len;
	while (smq_receive(rx, buf, sizeof(buf), &len, NULL, 0) == 0)
		;
	OK(smq_queue_close(rx));
	OK(smq_queue_close(tx));
	OK(smq_close(w1));
	OK(smq_close(w0));
	printf("%s: %s\n", name, light
	       ? "sends to a busy-polling receiver left their barrier out, "
		 "and made it again after a receiver that may sleep, without "
		 "the feature, and once a sender slept on their lock"
	       : "no send left its barrier out");
}

int main(void)
{
	char split[200];

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	bool light = smq_order_of_kernel()->light;
	if (!light)
		printf("SKIP membarrier cases: this kernel refuses "
		       "MEMBARRIER_CMD_GLOBAL (nohz_full, or a seccomp filter)\n");
	setenv("SMQ_TEST_TRANSPORT", "shm", 1);
	run(test_window(), "shm", light);
	setenv("SMQ_TEST_TRANSPORT", "file", 1);
	run(test_window(), "file", false);
	snprintf(split, sizeof(split), "split:%s", test_name("split"));
	run(split, "split", light);
	return 0;
}
