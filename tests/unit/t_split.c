/* Regions, not one window: on the split transport every board's region is
 * a shared memory object of its own, so a read of another board's region
 * is a real read of another object.  Two boards stream 10^5 messages each
 * way at once, in busy-poll and in sleep mode, every one checked; the
 * library is built counting every read across regions (SMQ_COUNT_FAR),
 * and the message path must make none: only a receiver arming its sleep
 * (three words of each sending board's lane) and a sender arming its wait
 * for room on a full ring (four words of the receiver's) may read across.
 * A busy-polling receiver never arms.  SMQ_SPLIT_COUNT overrides the
 * count. */
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "testint.h"
#include "testlib.h"

#define ESIZE 256
#define ENTRIES 64

#ifndef SMQ_COUNT_FAR
#error "t_split is built against the counting library (SMQ_COUNT_FAR)"
#endif

struct report {
	uint64_t message_path, arm, room, sleeps, full_waits, rings,
		 near_misses;
	double seconds;
};

struct side {
	const char *spec;
	unsigned board;
	unsigned mode;
	uint64_t count;
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

	for (uint64_t i = 0; i < s->count; i++) {
		size_t len = 8 + test_rand(&rng) % (ESIZE - 8 + 1);
		fill(buf, len, i, s->board);
		OK(smq_send(s->tx, buf, len, SMQ_WAIT_FOREVER));
	}
	return NULL;
}

static void *receiver(void *p)
{
	struct side *s = p;
	uint8_t buf[ESIZE], want[ESIZE];

	for (uint64_t i = 0; i < s->count; i++) {
		size_t len;
		unsigned from;
		uint64_t seq;
		OK(smq_receive(s->rx, buf, sizeof(buf), &len, &from,
			       SMQ_WAIT_FOREVER));
		memcpy(&seq, buf, sizeof(seq));
		fill(want, len, i, 1 - s->board);
		if (from != 1 - s->board || seq != i || memcmp(buf, want, len))
			FAIL("board %u: message %llu from %u: seq %llu, %s",
			     s->board, (unsigned long long)i, from,
			     (unsigned long long)seq,
			     memcmp(buf, want, len) ? "torn" : "whole");
	}
	return NULL;
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

static void run(const char *name, unsigned mode, uint64_t count)
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
		sides[b] = (struct side){ spec, b, mode, count, &rep[b], NULL,
					  NULL, NULL, 0, 0 };
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
	printf("%s: %llu messages each way, checked\n", name,
	       (unsigned long long)count);
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
	if (arms % 3 || arms > 3 * (sleeps + count / 2))
		FAIL("%s: more reads to arm than sleeps can explain", name);
	/* a sender reads four words of the receiver's to arm a wait for room:
	 * once when a send starts to wait, then once after each wake-up (a
	 * ring, a slice's end) that still finds the ring full */
	if (room % 4 || room > 4 * (waits + rings + slices))
		FAIL("%s: more reads to wait for room than waits and wake-ups "
		     "explain", name);
	OK(smq_remove(spec));
	munmap(rep, 2 * sizeof(*rep));
}

int main(void)
{
	const char *env = getenv("SMQ_SPLIT_COUNT");
	uint64_t count = env ? strtoull(env, NULL, 10) : 100000;

	run("busy-poll", SMQ_POLL, count);
	run("sleep", SMQ_SLEEP, count);
	return 0;
}
