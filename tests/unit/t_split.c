/* Regions, not one window: on the split transport every board's region is
 * a shared memory object of its own, so a read of another board's region
 * is a real read of another object.  Two boards stream messages each way
 * at once, in busy-poll and in sleep mode, every one checked; the
 * library is built counting every read across regions (SMQ_COUNT_FAR),
 * and the message path must make none: only a receiver arming its sleep
 * (three words of each sending board's lane) and a sender arming its wait
 * for room on a full ring (four words of the receiver's) may read across.
 * A busy-polling receiver never arms.
 *
 * Each board sends for a time or up to a count, whichever ends first, and
 * at least a floor of messages (a busy machine makes it slower, never
 * empty: testlib's test_going()), marking its last message;
 * SMQ_SPLIT_COUNT=N sends exactly N each way instead, which is then the
 * floor. */
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "testint.h"
#include "testlib.h"

#define ESIZE 256
#define ENTRIES 64
#define LAST (1ull << 63)  /* in a message's sequence: the sender's last */

/* Each mode's time, the most a board sends in it, and the least each way
 * must carry.  Four threads busy-polling on two cores: one way may run
 * far ahead of the other (one carried 166,000 while the other carried
 * 7,000); a board that sent its most leaves the cores to the other way.
 * Beside two CPU hogs a busy-polling way whose two ends a hog keeps apart
 * carries 15,000 a second, a sleeping one 88,000 or more. */
#define POLL_SECS 2.0
#define SLEEP_SECS 1.0
#define MOST 100000
#define FLOOR 5000

#ifndef SMQ_COUNT_FAR
#error "t_split is built against the counting library (SMQ_COUNT_FAR)"
#endif

struct report {
	uint64_t message_path, arm, room, sleeps, full_waits, rings,
		 near_misses, received;
	double seconds;
};

struct side {
	const char *spec;
	unsigned board;
	unsigned mode;
	uint64_t count;         /* 0: for secs */
	double secs;
	struct test_budget budget; /* the sender's */
	struct report *rep;     /* shared with the parent */
	struct smq_window *w;
	struct smq_queue *tx, *rx;
	uint64_t sleeps, full_waits;
};

static void fill(uint8_t *buf, size_t len, uint64_t seq, unsigned board)
{
	memcpy(buf, &seq, sizeof(seq));
	for (size_t k = sizeof(seq); k < len; k++)
		buf[k] = (uint8_t)(seq * 7 + k + board);
}

static void *sender(void *p)
{
	struct side *s = p;
	uint8_t buf[ESIZE];
	uint64_t rng = s->board + 1;

	for (uint64_t i = 0;; i++) {
		bool last = s->count ? i + 1 >= s->count
				     : !test_going(&s->budget, i + 1);
		size_t len = 8 + test_rand(&rng) % (ESIZE - 8 + 1);
		fill(buf, len, i, s->board);
		if (last)
			buf[7] |= LAST >> 56;
		OK(smq_send(s->tx, buf, len, SMQ_WAIT_FOREVER));
		if (last)
			return NULL;
	}
}

static void *receiver(void *p)
{
	struct side *s = p;
	uint8_t buf[ESIZE], want[ESIZE];

	for (uint64_t i = 0;; i++) {
		size_t len;
		unsigned from;
		uint64_t seq;
		OK(smq_receive(s->rx, buf, sizeof(buf), &len, &from,
			       SMQ_WAIT_FOREVER));
		memcpy(&seq, buf, sizeof(seq));
		bool last = len >= 8 && (seq & LAST);
		seq &= ~LAST;
		buf[7] &= (uint8_t)~(LAST >> 56);
		fill(want, len, i, 1 - s->board);
		if (from != 1 - s->board || seq != i || memcmp(buf, want, len))
			FAIL("board %u: message %llu from %u: seq %llu, %s",
			     s->board, (unsigned long long)i, from,
			     (unsigned long long)seq,
			     memcmp(buf, want, len) ? "torn" : "whole");
		if (last) {
			s->rep->received = i + 1;
			return NULL;
		}
	}
}

/* A sender that waits for room on a queue with no receiver yet naps
 * (nobody can ring it) and arms again after each nap: the stream starts
 * when the other board's receiver is there, so that every arm is a
 * wait's or a wake-up's. */
static void await_receiver(struct smq_window *w, unsigned queue)
{
	struct smq_queue_info qi;

	WAIT_UNTIL(smq_queue_info(w, queue, &qi, sizeof(qi)) == 0 &&
		   qi.receiver_pid, 30, "the receiver of queue %u", queue);
}

/* One board: a sending and a receiving thread on one window handle.
 * Opening the queues reads across (named: SMQ_FAR_OPEN), and so does
 * taking a lane over from a dead sender (SMQ_FAR_TAKEOVER); arming a
 * sleep is SMQ_FAR_ARM, arming a wait for room SMQ_FAR_ROOM.  Whatever
 * else is read across while the stream runs is on the message path. */
static int board_main(void *p)
{
	struct side *s = p;
	uint64_t before[SMQ_FAR_WHYS], after[SMQ_FAR_WHYS];
	pthread_t t1, t2;

	OK(smq_open(s->spec, s->board, 0, &s->w));
	OK(smq_synchronize(s->w, 0, 10000, 1, NULL));
	OK(smq_queue_open(s->w, s->board, SMQ_RECEIVER, s->mode, &s->rx));
	OK(smq_queue_open(s->w, 1 - s->board, SMQ_SENDER, 0, &s->tx));
	await_receiver(s->w, 1 - s->board);
	for (int why = 0; why < SMQ_FAR_WHYS; why++)
		before[why] = smq_far_loads(s->w, why);
	uint64_t t0 = smq_now_ns();
	test_budget(&s->budget, s->secs, FLOOR, MOST);
	CHECK(!pthread_create(&t1, NULL, receiver, s));
	CHECK(!pthread_create(&t2, NULL, sender, s));
	CHECK(!pthread_join(t1, NULL));
	CHECK(!pthread_join(t2, NULL));
	s->rep->seconds = (double)(smq_now_ns() - t0) / 1e9;
	OK(smq_queue_close(s->rx));
	OK(smq_queue_close(s->tx));
	for (int why = 0; why < SMQ_FAR_WHYS; why++) {
		after[why] = smq_far_loads(s->w, why) - before[why];
		if (why != SMQ_FAR_OPEN && why != SMQ_FAR_TAKEOVER &&
		    why != SMQ_FAR_ARM && why != SMQ_FAR_ROOM && after[why]) {
			fprintf(stderr, "board %u: %llu reads across for reason "
				"%d while streaming\n", s->board,
				(unsigned long long)after[why], why);
			s->rep->message_path += after[why];
		}
	}
	s->rep->arm = after[SMQ_FAR_ARM];
	s->rep->room = after[SMQ_FAR_ROOM];
	/* how often the receiver rang our lane's space bell: each ring may
	 * end a wait for room, which then arms again if the ring is full */
	const struct smq_lane_wake *wake =
		at(s->w, lay_lane_wake(&s->w->lay, s->board, 1 - s->board));
	s->rep->rings = LOAD(&wake->space_bell);
	/* the counts to judge by, read after the stream was measured */
	struct smq_queue_info qi;
	OK(smq_queue_info(s->w, s->board, &qi, sizeof(qi)));
	s->sleeps = qi.sleeps;
	OK(smq_queue_info(s->w, 1 - s->board, &qi, sizeof(qi)));
	s->full_waits = qi.full_waits;
	s->rep->near_misses = smq_far_loads(s->w, -1);
	s->rep->sleeps = s->sleeps;
	s->rep->full_waits = s->full_waits;
	OK(smq_close(s->w));
	return 0;
}

static void run(const char *name, unsigned mode, uint64_t count, double secs)
{
	char spec[200], path[220];
	struct report *rep = mmap(NULL, 2 * sizeof(*rep), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct smq_window *w;
	struct smq_geometry g = { 2, 2, ENTRIES, ESIZE, NULL };
	struct stat st;

	CHECK(rep != MAP_FAILED);
	memset(rep, 0, 2 * sizeof(*rep));
	snprintf(spec, sizeof(spec), "split:%s", test_name("split"));
	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w));
	OK(smq_init(w, &g, sizeof(g)));
	OK(smq_close(w));
	/* every region is its own object */
	for (int b = 0; b < 2; b++) {
		snprintf(path, sizeof(path), "/dev/shm/%s.%d",
			 test_name("split"), b);
		CHECK(stat(path, &st) == 0 && st.st_size > 0);
	}
	struct side sides[2];
	pid_t pids[2];
	for (unsigned b = 0; b < 2; b++) {
		sides[b] = (struct side){ spec, b, mode, count, secs, { 0 },
					  &rep[b], NULL, NULL, NULL, 0, 0 };
		pids[b] = test_fork(board_main, &sides[b]);
	}
	for (unsigned b = 0; b < 2; b++)
		test_wait_ok(pids[b], "board");
	OK(smq_open(spec, 0, 0, &w));
	OK(smq_validate(w, NULL, 0));
	/* split is memory of this kernel only: marks light where it can
	 * send membarrier */
	CHECK(w->map.order == smq_order_of_kernel());
	OK(smq_close(w));
	uint64_t path_loads = rep[0].message_path + rep[1].message_path;
	uint64_t misses = rep[0].near_misses + rep[1].near_misses;
	/* each way: to board 0, to board 1 */
	uint64_t n0 = rep[0].received, n1 = rep[1].received;
	printf("%s: %llu and %llu messages each way, checked\n", name,
	       (unsigned long long)n0, (unsigned long long)n1);
	printf("%s: remote loads on the message path: %llu\n", name,
	       (unsigned long long)path_loads);
	uint64_t arms = rep[0].arm + rep[1].arm;
	uint64_t room = rep[0].room + rep[1].room;
	uint64_t sleeps = rep[0].sleeps + rep[1].sleeps;
	uint64_t waits = rep[0].full_waits + rep[1].full_waits;
	uint64_t rings = rep[0].rings + rep[1].rings;
	/* a sleeper wakes at least once a slice (SLEEP_SLICE_MS) to beat */
	uint64_t slices = (uint64_t)((rep[0].seconds + rep[1].seconds) * 1000 /
				     SLEEP_SLICE_MS) + 2;
	printf("%s: remote loads to arm a sleep: %llu (%llu sleeps)\n", name,
	       (unsigned long long)arms, (unsigned long long)sleeps);
	printf("%s: remote loads to wait for room: %llu (%llu waits, %llu "
	       "rings)\n", name, (unsigned long long)room,
	       (unsigned long long)waits, (unsigned long long)rings);
	printf("%s: near pointers into another board's region: %llu\n", name,
	       (unsigned long long)misses);
	if (path_loads || misses)
		FAIL("%s: the message path read another board's region", name);
	if (mode == SMQ_POLL && arms)
		FAIL("%s: busy polling armed a sleep", name);
	/* a receiver reads three words of the other board's lane line to arm
	 * (it may arm and then find a message: not every arm sleeps) */
	if (arms % 3 || arms > 3 * (sleeps + (n0 + n1) / 4))
		FAIL("%s: more reads to arm than sleeps can explain", name);
	/* a sender reads four words of the receiver's to arm a wait for room:
	 * once when a send starts to wait, then once after each wake-up (a
	 * ring, a slice's end) that still finds the ring full */
	if (room % 4 || room > 4 * (waits + rings + slices))
		FAIL("%s: more reads to wait for room than waits and wake-ups "
		     "explain", name);
	OK(smq_remove(spec));
	munmap(rep, 2 * sizeof(*rep));
	char what[64];
	snprintf(what, sizeof(what), "messages each way %s", name);
	test_work(what, n0 < n1 ? n0 : n1, count ? count : FLOOR);
}

int main(void)
{
	const char *env = getenv("SMQ_SPLIT_COUNT");
	uint64_t count = env ? strtoull(env, NULL, 10) : 0;

	if (env && !count)
		FAIL("SMQ_SPLIT_COUNT=%s: a count of at least 1", env);
	run("busy-polling", SMQ_POLL, count, POLL_SECS);
	run("sleeping", SMQ_SLEEP, count, SLEEP_SECS);
	return 0;
}
