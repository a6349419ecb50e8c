/* Groups: defined at init and seen alike; a send to every member that
 * names the member that timed out and sends nothing twice on a retry; a
 * receive from any member with rotating fairness, under a flood; and a
 * receive-any that sleeps on one doorbell and wakes on a send to any
 * member. */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include "testint.h"
#include "testlib.h"

#ifndef SMQ_COUNT_FAR
#error "t_group counts a sleeping receiver's wake-ups with the test build's hooks (SMQ_COUNT_FAR)"
#endif

#define BOARDS 4
#define QUEUES 4
#define ENTRIES 64

static const char *spec;

/* Every queue received by board 0; groups "all" and "odd". */
static struct smq_window *format(void)
{
	static const uint16_t receivers[QUEUES] = { 0, 0, 0, 0 };
	static const uint32_t all[] = { 0, 1, 2, 3 }, odd[] = { 3, 1 };
	static const struct smq_group_def groups[] = {
		{ "all", all, 4 }, { "odd", odd, 2 },
	};
	struct smq_shape sh = { { BOARDS, QUEUES, ENTRIES, 64, receivers },
				NULL, 0, groups, 2, 0, 0 };
	struct smq_window *w;

	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE,
		    &w));
	OK(smq_init_shape(w, &sh, sizeof(sh)));
	return w;
}

static void definitions(struct smq_window *w)
{
	struct smq_window_info wi;
	struct smq_group_info gi;
	struct smq_window *b1;
	struct smq_group *g;

	OK(smq_window_info(w, &wi, sizeof(wi)));
	CHECK(wi.groups == 2 && (wi.features_compat & SMQ_FEATURE_GROUPS));
	/* another board sees the same membership */
	OK(smq_open(spec, 1, 0, &b1));
	OK(smq_group_info(b1, 1, &gi, sizeof(gi)));
	CHECK(!strcmp(gi.name, "odd") && gi.count == 2 && gi.queues[0] == 3 &&
	      gi.queues[1] == 1);
	EXPECT(smq_group_info(b1, 2, &gi, sizeof(gi)), -ENOENT);
	EXPECT(smq_group_open(b1, "none", SMQ_SENDER, 0, &g), -ESRCH);
	CHECK(g == NULL);
	/* board 1 receives none of them */
	EXPECT(smq_group_open(b1, "all", SMQ_RECEIVER, 0, &g), -EPERM);
	OK(smq_group_open(b1, "odd", SMQ_SENDER, 0, &g));
	EXPECT(smq_group_member(g, 0), 3);
	OK(smq_group_close(g));
	/* a group is of application queues: 4 is board 0's diagnostic one */
	EXPECT(smq_group_open_queues(b1, (const unsigned[]){ 1, 4 }, 2,
				     SMQ_SENDER, 0, &g), -EINVAL);
	OK(smq_close(b1));
	OK(smq_validate(w, NULL, 0));
}

static unsigned queued(struct smq_window *w, unsigned q)
{
	struct smq_queue_info qi;
	OK(smq_queue_info(w, q, &qi, sizeof(qi)));
	return (unsigned)qi.queued;
}

/* Queue 2's receiver is stopped with its ring full: the others take the
 * message, the call names member 2, and a retry sends to it alone. */
static void send_all(struct smq_window *w)
{
	struct smq_queue *full, *rx;
	struct smq_group *g;
	uint64_t pending = SMQ_GROUP_ALL;
	char buf[64];
	size_t len;

	OK(smq_queue_open(w, 2, SMQ_SENDER, 0, &full));
	for (unsigned i = 0; i < ENTRIES; i++)
		OK(smq_send(full, "filler", 6, 0));
	OK(smq_group_open(w, "all", SMQ_SENDER, 0, &g));
	struct smq_queue_info qi;
	OK(smq_queue_info(w, 2, &qi, sizeof(qi)));
	uint64_t waits = qi.full_waits;
	EXPECT(smq_group_send(g, "to all", 6, &pending, 200), -ETIMEDOUT);
	/* it waited for room on member 2: one full wait (not its time) */
	OK(smq_queue_info(w, 2, &qi, sizeof(qi)));
	CHECK(qi.full_waits == waits + 1);
	CHECK(pending == 1u << 2);
	CHECK(queued(w, 0) == 1 && queued(w, 1) == 1 && queued(w, 3) == 1 &&
	      queued(w, 2) == ENTRIES);
	/* without waiting: the same member, still full */
	EXPECT(smq_group_send(g, "to all", 6, &pending, 0), -EAGAIN);
	CHECK(pending == 1u << 2);
	OK(smq_queue_open(w, 2, SMQ_RECEIVER, 0, &rx));
	OK(smq_receive(rx, buf, sizeof(buf), &len, NULL, 0));
	OK(smq_group_send(g, "to all", 6, &pending, 200));
	CHECK(pending == 0);
	CHECK(queued(w, 0) == 1 && queued(w, 1) == 1 && queued(w, 3) == 1 &&
	      queued(w, 2) == ENTRIES);
	for (unsigned i = 0; i < ENTRIES - 1; i++) {
		OK(smq_receive(rx, buf, sizeof(buf), &len, NULL, 0));
		CHECK(len == 6 && !memcmp(buf, "filler", 6));
	}
	OK(smq_receive(rx, buf, sizeof(buf), &len, NULL, 0));
	CHECK(len == 6 && !memcmp(buf, "to all", 6));
	OK(smq_queue_close(rx));
	for (unsigned q = 0; q < QUEUES; q += 1 + (q == 1)) {
		OK(smq_queue_open(w, q, SMQ_RECEIVER, 0, &rx));
		OK(smq_receive(rx, buf, sizeof(buf), &len, NULL, 0));
		CHECK(len == 6 && !memcmp(buf, "to all", 6));
		EXPECT(smq_receive(rx, buf, sizeof(buf), &len, NULL, 0), -EAGAIN);
		OK(smq_queue_close(rx));
	}
	OK(smq_queue_close(full));
	OK(smq_group_close(g));
}

/* Pre-filled members are served in turn, one each per round, whatever
 * their backlog; then the others once one is empty. */
static void turns(struct smq_window *w)
{
	static const unsigned fill[QUEUES] = { 40, 3, 5, 2 };
	struct smq_queue *tx[QUEUES];
	struct smq_group *g;
	unsigned got[64], n = 0, q;
	char buf[64];
	size_t len;

	for (unsigned i = 0; i < QUEUES; i++) {
		OK(smq_queue_open(w, i, SMQ_SENDER, 0, &tx[i]));
		for (unsigned k = 0; k < fill[i]; k++)
			OK(smq_send(tx[i], &k, sizeof(k), 0));
	}
	OK(smq_group_open(w, "all", SMQ_RECEIVER, 0, &g));
	/* at least once: a peeked message stays until its commit */
	const void *data, *again;
	EXPECT(smq_group_commit(g), -ENOMSG);
	OK(smq_group_peek(g, &data, &len, NULL, &q, 0));
	CHECK(q == 0 && len == sizeof(unsigned) && *(const unsigned *)data == 0);
	OK(smq_group_peek(g, &again, &len, NULL, &q, 0));
	CHECK(q == 0 && again == data);
	OK(smq_group_commit(g));
	got[n++] = q;
	while (n < 64 && !smq_group_receive(g, buf, sizeof(buf), &len, NULL, &q,
					    0))
		got[n++] = q;
	if (n != 40 + 3 + 5 + 2)
		FAIL("%u messages", n);
	/* rounds 0-1: every member; round 2: all but 3; then 0 and 2 */
	static const unsigned want[] = { 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2,
					 0, 2, 0, 2, 0 };
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (got[i] != want[i])
			FAIL("message %u came from queue %u, not %u: the "
			     "members did not take turns", i, got[i], want[i]);
	for (unsigned i = 0; i < QUEUES; i++)
		OK(smq_queue_close(tx[i]));
	OK(smq_group_close(g));
}

/* A message too long for the buffer stays queued and its member keeps
 * the turn: the next receive with room gets it, even when the member
 * whose turn came first has a message by then; and a receive too small
 * after a peek leaves the peek held until its commit. */
static void too_small(struct smq_window *w)
{
	static const char big[] = "a message too long for 4 bytes";
	struct smq_queue *tx0, *tx1, *tx3;
	struct smq_group *g;
	char buf[64];
	const void *data;
	size_t len;
	unsigned q;

	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &tx0));
	OK(smq_queue_open(w, 1, SMQ_SENDER, 0, &tx1));
	OK(smq_queue_open(w, 3, SMQ_SENDER, 0, &tx3));
	OK(smq_group_open(w, "all", SMQ_RECEIVER, 0, &g));
	/* a message of the last member: the turn is member 0's */
	OK(smq_send(tx3, "x", 1, 0));
	OK(smq_group_receive(g, buf, sizeof(buf), &len, NULL, &q, 0));
	CHECK(q == 3);
	OK(smq_send(tx3, big, sizeof(big), 0));
	EXPECT(smq_group_receive(g, buf, 4, &len, NULL, &q, 0), -EMSGSIZE);
	CHECK(q == 3 && len == sizeof(big));
	OK(smq_send(tx0, "m0", 2, 0));
	OK(smq_group_receive(g, buf, sizeof(buf), &len, NULL, &q, 0));
	if (q != 3 || len != sizeof(big) || memcmp(buf, big, len))
		FAIL("after -EMSGSIZE the next receive took queue %u's "
		     "message, not queue 3's", q);
	OK(smq_group_receive(g, buf, sizeof(buf), &len, NULL, &q, 0));
	CHECK(q == 0 && len == 2);
	/* the turn is member 1's; a peek holds queue 3's message */
	OK(smq_send(tx3, big, sizeof(big), 0));
	OK(smq_group_peek(g, &data, &len, NULL, &q, 0));
	CHECK(q == 3 && len == sizeof(big));
	OK(smq_send(tx1, "m1", 2, 0));
	EXPECT(smq_group_receive(g, buf, 4, &len, NULL, &q, 0), -EMSGSIZE);
	CHECK(q == 3);
	/* still held: the commit takes it, as smq_commit() after an
	 * smq_receive() too small does */
	OK(smq_group_commit(g));
	struct smq_queue_info qi;
	OK(smq_queue_info(w, 3, &qi, sizeof(qi)));
	CHECK(qi.queued == 0);
	OK(smq_group_receive(g, buf, sizeof(buf), &len, NULL, &q, 0));
	CHECK(q == 1 && len == 2);
	EXPECT(smq_group_receive(g, buf, sizeof(buf), &len, NULL, &q, 0),
	       -EAGAIN);
	OK(smq_queue_close(tx0));
	OK(smq_queue_close(tx1));
	OK(smq_queue_close(tx3));
	OK(smq_group_close(g));
}

/* A window formatted again under another board's handle, with many more
 * queues and no groups: where the handle's layout kept the group table
 * now lies the new queue table.  Its group calls say -ESTALE; they never
 * trust a count read there (262 queues put a diagnostic queue's
 * descriptor on the old table's count of groups). */
static void stale_table(void)
{
	static uint16_t receivers[262];
	static const uint32_t two[] = { 0, 1 };
	static const struct smq_group_def gd[] = { { "g", two, 2 } };
	struct smq_shape many = { { 2, 262, 8, 64, receivers }, NULL, 0,
				  NULL, 0, 0, 0 };
	struct smq_shape few = { { 2, 2, 8, 64, receivers }, NULL, 0, gd, 1,
				 0, 0 };
	char spec2[128];
	struct smq_window *w0, *w1;
	struct smq_group_info gi;
	struct smq_group *g = NULL;

	snprintf(spec2, sizeof(spec2), "shm:%s", test_name("stale"));
	OK(smq_open(spec2, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE,
		    &w0));
	/* sized for the larger geometry first */
	OK(smq_init_shape(w0, &many, sizeof(many)));
	OK(smq_init_shape(w0, &few, sizeof(few)));
	OK(smq_open(spec2, 1, 0, &w1));
	OK(smq_group_info(w1, 0, &gi, sizeof(gi)));
	CHECK(!strcmp(gi.name, "g") && gi.count == 2);
	OK(smq_init_shape(w0, &many, sizeof(many)));
	EXPECT(smq_group_info(w1, 0, &gi, sizeof(gi)), -ESTALE);
	CHECK(gi.count <= SMQ_GROUP_MAX_MEMBERS);
	EXPECT(smq_group_open(w1, "g", SMQ_SENDER, 0, &g), -ESTALE);
	CHECK(g == NULL);
	OK(smq_close(w1));
	OK(smq_close(w0));
}

/* A sender of board b that keeps queue q full, until killed. */
struct flood { unsigned board, queue; };
static int flooder(void *arg)
{
	const struct flood *f = arg;
	struct smq_window *w;
	struct smq_queue *tx;
	char msg[16] = "flood";

	test_pin(1);
	OK(smq_open(spec, f->board, 0, &w));
	OK(smq_queue_open(w, f->queue, SMQ_SENDER, 0, &tx));
	for (;;) {
		int err = smq_send(tx, msg, sizeof(msg), 1000);
		if (err && err != -ETIMEDOUT)
			FAIL("the flooder of board %u on queue %u: smq_send "
			     "returned %d (%s)", f->board, f->queue, err,
			     smq_strerror(err));
	}
}

/* Queue 0 flooded by three boards, queues 1 to 3 each kept backlogged by
 * one: over 100,000 messages or FLOOD_SECS, whichever ends first, and at
 * least FLOOD_FLOOR (testlib's test_going()), each member's share, and no
 * member that had messages
 * waiting passed over for more than one round of the set (the receiver
 * looks at every member's fill before each receive, with smq_queue_info:
 * its pace, which keeps the members backlogged, is that of four such
 * calls a message: 8,000 to 12,000 messages a second on two idle cores,
 * 3,700 beside two CPU hogs). */
#define FLOOD_MOST 100000
#define FLOOD_SECS 8.0
#define FLOOD_FLOOR 10000
static void flood(struct smq_window *w)
{
	static const struct flood f[] = {
		{ 1, 0 }, { 2, 0 }, { 3, 0 }, { 0, 1 }, { 0, 2 }, { 0, 3 },
	};
	pid_t pid[6];
	struct smq_group *g;
	uint64_t share[QUEUES] = { 0 }, total = 0, backlogged = 0;
	unsigned waited[QUEUES] = { 0 }, most = 0;
	char buf[64];
	size_t len;
	unsigned q;

	for (unsigned i = 0; i < 6; i++)
		pid[i] = test_fork(flooder, (void *)&f[i]);
	test_pin(0);
	OK(smq_group_open(w, "all", SMQ_RECEIVER, 0, &g));
	for (unsigned i = 0; i < QUEUES; i++)
		WAIT_UNTIL(queued(w, i) >= ENTRIES / 2, 30,
			   "queue %u half full from its flooders", i);
	struct test_budget b;
	test_budget(&b, FLOOD_SECS, FLOOD_FLOOR, FLOOD_MOST);
	for (; test_going(&b, total); total++) {
		bool waiting[QUEUES];
		for (unsigned m = 0; m < QUEUES; m++)
			waiting[m] = queued(w, m) > 0;
		OK(smq_group_receive(g, buf, sizeof(buf), &len, NULL, &q,
				     5000));
		share[q]++;
		for (unsigned m = 0; m < QUEUES; m++) {
			if (m == q) {
				waited[m] = 0;
			} else if (waiting[m]) {
				if (++waited[m] > most)
					most = waited[m];
				backlogged++;
			} else {
				waited[m] = 0;
			}
		}
	}
	/* each still flooding when killed: one that ended before failed */
	for (unsigned i = 0; i < 6; i++) {
		int status;
		kill(pid[i], SIGKILL);
		CHECK(waitpid(pid[i], &status, 0) == pid[i]);
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
			FAIL("the flooder of board %u on queue %u ended before "
			     "it was killed (status 0x%x)", f[i].board,
			     f[i].queue, status);
	}
	printf("group: over %llu messages (queue 0 flooded by 3 boards), "
	       "shares:", (unsigned long long)total);
	for (unsigned i = 0; i < QUEUES; i++)
		printf(" queue %u %.1f%%", i, 100.0 * share[i] / total);
	printf("; a member with messages waited at most %u messages of "
	       "others (%llu such waits)\n", most,
	       (unsigned long long)backlogged);
	if (most >= QUEUES)
		FAIL("a member with messages waiting was passed over %u times "
		     "in a row: more than a round of %u", most, QUEUES);
	/* the work the test did: messages, and members backlogged, not just
	 * served */
	test_work("messages received under the flood", total, FLOOD_FLOOR);
	test_work("turns a backlogged member waited", backlogged,
		  total / 2 + 1);
	OK(smq_group_close(g));
	/* what the killed senders left */
	struct smq_queue *rx;
	for (unsigned i = 0; i < QUEUES; i++) {
		OK(smq_queue_open(w, i, SMQ_RECEIVER, 0, &rx));
		while (!smq_receive(rx, buf, sizeof(buf), &len, NULL, 0))
			;
		OK(smq_queue_close(rx));
	}
}

/* A receive-any asleep sleeps on its doorbell, one sleep a slice, and
 * wakes on a send to any member (the last one here, not the first whose
 * word a plain wait would watch), rung, not at its slice: counted in the
 * receiver's process with the test build's hooks (SMQ_HOOK_SLEEP,
 * SMQ_HOOK_RUNG, SMQ_HOOK_SLEPT_OUT), in memory the test shares.  The
 * send waits until the receiver has slept a whole slice out, so that a
 * receiver that looked (spun or napped) instead of sleeping never gets
 * it. */
struct sleep_counts {
	_Atomic unsigned sleeps, rung, slept_out;
	_Atomic int last;               /* the last of those three */
	_Atomic int cpu_us;             /* the receive's CPU, for the log */
};
static struct sleep_counts *counts;

static void count_sleep(enum smq_hook where)
{
	if (where == SMQ_HOOK_SLEEP)
		counts->sleeps++;
	else if (where == SMQ_HOOK_RUNG)
		counts->rung++;
	else if (where == SMQ_HOOK_SLEPT_OUT)
		counts->slept_out++;
	else
		return;
	counts->last = (int)where;
}

static int sleeper(void *arg)
{
	struct smq_window *w;
	struct smq_group *g;
	char buf[64];
	size_t len;
	unsigned q;

	(void)arg;
	OK(smq_open(spec, 0, 0, &w));
	OK(smq_group_open(w, "all", SMQ_RECEIVER, 0, &g));
	struct timespec c0, c1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	smq_test_hook = count_sleep;
	/* 30 s: a give-up bound (the send comes after one slice) */
	OK(smq_group_receive(g, buf, sizeof(buf), &len, NULL, &q, 30000));
	smq_test_hook = NULL;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	counts->cpu_us = (int)((c1.tv_sec - c0.tv_sec) * 1000000 +
			       (c1.tv_nsec - c0.tv_nsec) / 1000);
	CHECK(q == 3 && len == 5 && !memcmp(buf, "wake!", 5));
	OK(smq_group_close(g));
	OK(smq_close(w));
	return 0;
}

static void asleep(struct smq_window *w)
{
	struct smq_queue *tx;

	counts = mmap(NULL, sizeof(*counts), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(counts != MAP_FAILED);
	memset(counts, 0, sizeof(*counts));
	pid_t pid = test_fork(sleeper, NULL);
	/* asleep: its receivers say they wait, and a slice passed unrung */
	struct smq_queue_info qi;
	WAIT_UNTIL(smq_queue_info(w, 3, &qi, sizeof(qi)) == 0 &&
		   qi.receiver_state == SMQ_RECEIVER_WAITING, 30,
		   "the group's receiver (pid %d) to wait", (int)pid);
	WAIT_UNTIL(counts->slept_out >= 1, 30, "the group's receiver (pid %d) "
		   "to sleep a slice out on its doorbell", (int)pid);
	OK(smq_queue_open(w, 3, SMQ_SENDER, 0, &tx));
	OK(smq_send(tx, "wake!", 5, 0));
	test_wait_ok(pid, "the group's receiver");
	unsigned sleeps = counts->sleeps, rung = counts->rung,
		 out = counts->slept_out;
	printf("group: asleep on 4 queues: %u sleeps on the doorbell, %u "
	       "ended at the slice, %u rung; %.1f ms of CPU in the receive\n",
	       sleeps, out, rung, counts->cpu_us / 1000.0);
	/* every sleep ended at its slice or by the one ring, the last */
	if (rung != 1 || counts->last != SMQ_HOOK_RUNG || sleeps != out + rung)
		FAIL("a receive-any asleep: %u sleeps, %u ended at the slice, "
		     "%u rung, the last %s: not woken by the send to its last "
		     "member", sleeps, out, rung,
		     counts->last == SMQ_HOOK_RUNG ? "rung" : "not rung");
	CHECK(rung == 1 && sleeps == out + rung);
	OK(smq_lane_info(w, 3, 0, &(struct smq_lane_info){ 0 },
			 sizeof(struct smq_lane_info)));
	OK(smq_queue_close(tx));
	munmap(counts, sizeof(*counts));
}

/* A group receiver asleep on its members when one of them is cleared:
 * the fault it wakes to names that member, not none. */
struct faulted { struct smq_group *g; int err; unsigned queue; };
static void *receive_asleep(void *arg)
{
	struct faulted *f = arg;
	char buf[64];
	size_t len;

	f->queue = 99;
	f->err = smq_group_receive(f->g, buf, sizeof(buf), &len, NULL,
				   &f->queue, 5000);
	return NULL;
}

static void fault_named(struct smq_window *w)
{
	struct faulted f = { 0 };
	pthread_t t;

	OK(smq_group_open(w, "all", SMQ_RECEIVER, SMQ_SLEEP, &f.g));
	CHECK(pthread_create(&t, NULL, receive_asleep, &f) == 0);
	/* asleep (nothing is sent): its receivers say they wait */
	struct smq_queue_info qi;
	WAIT_UNTIL(smq_queue_info(w, 2, &qi, sizeof(qi)) == 0 &&
		   qi.receiver_state == SMQ_RECEIVER_WAITING && qi.sleeping,
		   30, "the group's receiver to sleep");
	OK(smq_clear(w, 2));
	CHECK(pthread_join(t, NULL) == 0);
	if (f.err != -ESTALE || f.queue != 2)
		FAIL("a member cleared under a sleeping group receive: %d "
		     "(%s), queue %u; want -ESTALE naming queue 2", f.err,
		     smq_strerror(f.err), f.queue);
	OK(smq_group_close(f.g));
}

int main(void)
{
	spec = test_window();
	struct smq_window *w = format();

	definitions(w);
	send_all(w);
	turns(w);
	too_small(w);
	asleep(w);
	flood(w);
	fault_named(w);
	OK(smq_validate(w, NULL, 0));
	OK(smq_close(w));
	stale_table();
	return 0;
}
