/* Two processes on different cores stream messages of random sizes that
 * carry a sequence number and a checksum: every one must arrive, in order,
 * whole, exactly once.  In busy-poll and in sleeping mode, then with three
 * sending boards on one queue and two sending processes sharing a lane.
 *
 * Each part streams for a time, not a count, and must move at least its
 * floor of messages (a busy machine makes it slower, never empty: it gets
 * some more time to reach its floor, testlib's test_going()): the senders
 * go on until the receiver says stop, and each marks its last message.
 * SMQ_STREAM_COUNT=N sends exactly N messages instead (the sanitizer runs
 * use fewer), N / 4 or N / 8 in the lesser parts, as the floor. */
#include <pthread.h>
#include <sys/mman.h>
#include "testint.h"
#include "testlib.h"

#define ESIZE 512
#define ENTRIES 64

/* Each part's time, and the least it must move: on two cores, idle or
 * with a CPU hog on each (tests/under-load.sh), a part moved 130,000
 * messages or more busy-polling, 12,000 or more in 1.5 s sleeping (a
 * wake-up every few messages; threads sleeping, 11,000 in 0.5 s), 13,000
 * or more in the others, but for two processes on one lane: from 68 (a
 * sender preempted holding the lane's lock, with a hog and the other
 * sender on its core) to a million. */
#define POLL_SECS 1.0
#define SLEEP_SECS 1.5
#define PART_SECS 0.5
#define POLL_FLOOR 20000
#define SLEEP_FLOOR 5000
#define PART_FLOOR 5000
#define LANE_FLOOR 1000
#define PART_SLEEP_FLOOR 2000

struct msg_head {
	uint64_t seq;
	uint32_t crc;      /* over the payload after the head */
	uint16_t producer; /* which sending process */
	uint16_t last;     /* the producer's last message */
};

/* The receiver's word to the senders, shared across fork. */
struct ctl {
	_Atomic bool stop; /* time is up: the next message is the last */
};

struct run {
	const char *spec;
	unsigned board;    /* board of this sender */
	unsigned producer;
	uint64_t count;    /* 0: until told to stop */
	int cpu;
	bool foreign;      /* it says it is of another host: no futex of ours
			      reaches it, and it reaches none of ours */
	struct ctl *ctl;
};

static int sender(void *arg)
{
	struct run *r = arg;
	struct smq_window *w;
	struct smq_queue *tx;
	uint8_t buf[ESIZE];
	uint64_t rng = 0x5eed + r->producer;

	test_pin(r->cpu);
	OK(smq_open(r->spec, r->board, 0, &w));
	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &tx));
	if (r->foreign)
		STORE(&tx->out->host, 0x6f74686572ull);
	for (uint64_t i = 0;; i++) {
		bool last = r->count ? i + 1 >= r->count
			    : atomic_load_explicit(&r->ctl->stop,
						   memory_order_relaxed);
		size_t len = sizeof(struct msg_head) +
			     test_rand(&rng) % (ESIZE - sizeof(struct msg_head) + 1);
		struct msg_head *h = (void *)buf;
		for (size_t k = sizeof(*h); k < len; k++)
			buf[k] = (uint8_t)(i + k * 13 + r->producer);
		h->seq = i;
		h->producer = (uint16_t)r->producer;
		h->last = last;
		h->crc = smq_crc32c(0, buf + sizeof(*h), len - sizeof(*h));
		OK(smq_send(tx, buf, len, SMQ_WAIT_FOREVER));
		if (last)
			break;
	}
	OK(smq_queue_close(tx));
	OK(smq_close(w));
	return 0;
}

/* Receives until every producer's last message came, telling them to stop
 * when the budget b ends; checks order per producer.  Returns the
 * messages. */
static uint64_t drain(struct smq_window *w, unsigned flags, unsigned producers,
		      const unsigned *board_of, const struct test_budget *b,
		      struct ctl *ctl)
{
	struct smq_queue *rx;
	uint8_t buf[ESIZE];
	uint64_t next[8] = { 0 }, n = 0;
	unsigned done = 0;
	bool ended[8] = { false };

	OK(smq_queue_open(w, 0, SMQ_RECEIVER, flags, &rx));
	test_waiting("the messages of %u senders", producers);
	while (done < producers) {
		if (!test_going(b, n))
			atomic_store_explicit(&ctl->stop, true,
					      memory_order_relaxed);
		size_t len;
		unsigned from;
		int err = smq_receive(rx, buf, sizeof(buf), &len, &from, 20000);
		if (err)
			FAIL("message %llu (%u of %u senders done): %s",
			     (unsigned long long)n, done, producers,
			     smq_strerror(err));
		struct msg_head *h = (void *)buf;
		CHECK(len >= sizeof(*h) && h->producer < producers);
		CHECK(from == board_of[h->producer] && !ended[h->producer]);
		if (h->seq != next[h->producer])
			FAIL("producer %u: got seq %llu, expected %llu (%s)",
			     h->producer, (unsigned long long)h->seq,
			     (unsigned long long)next[h->producer],
			     h->seq < next[h->producer] ? "doubled" : "lost");
		CHECK(h->crc == smq_crc32c(0, buf + sizeof(*h), len - sizeof(*h)));
		next[h->producer]++;
		if (h->last) {
			ended[h->producer] = true;
			done++;
		}
		n++;
	}
	test_waiting(NULL);
	size_t len;
	unsigned from;
	EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0), -EAGAIN);
	OK(smq_queue_close(rx));
	return n;
}

static struct ctl *ctl_new(void)
{
	struct ctl *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	CHECK(c != MAP_FAILED);
	atomic_init(&c->stop, false);
	return c;
}

/* A part's budget: secs and floor, or none (the senders count). */
static struct test_budget budget(double secs, uint64_t floor, uint64_t count)
{
	struct test_budget b;

	if (count)
		test_budget_count(&b, UINT64_MAX);
	else
		test_budget(&b, secs, floor, UINT64_MAX);
	return b;
}

static uint64_t stream(unsigned boards, unsigned producers,
		       const unsigned *board_of, unsigned flags, double secs,
		       uint64_t floor, uint64_t count)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, boards, 1, ENTRIES, ESIZE);
	struct ctl *ctl = ctl_new();
	struct run runs[8];
	pid_t pids[8];

	test_pin(0);
	for (unsigned p = 0; p < producers; p++) {
		runs[p] = (struct run){ spec, board_of[p], p, count, 1, false,
					ctl };
		pids[p] = test_fork(sender, &runs[p]);
	}
	uint64_t t0 = test_now_ns();
	struct test_budget b = budget(secs, floor, count);
	uint64_t n = drain(w, flags, producers, board_of, &b, ctl);
	double took = (double)(test_now_ns() - t0) / 1e9;
	for (unsigned p = 0; p < producers; p++)
		test_wait_ok(pids[p], "sender");

	struct smq_queue_info qi;
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	CHECK(qi.sent == n && qi.received == n);
	CHECK(qi.fill == 0);
	OK(smq_validate(w, NULL, 0));
	if (flags & SMQ_POLL)
		CHECK(qi.sleeps == 0 && qi.doorbells == 0);
	printf("boards %u producers %u mode %s: %llu messages in %.2f s, "
	       "%llu sleeps, %llu doorbells, %llu full waits\n", boards,
	       producers, flags & SMQ_POLL ? "poll" : flags & SMQ_SLEEP
	       ? "sleep" : "spin", (unsigned long long)qi.received, took,
	       (unsigned long long)qi.sleeps, (unsigned long long)qi.doorbells,
	       (unsigned long long)qi.full_waits);
	OK(smq_close(w));
	munmap(ctl, sizeof(*ctl));
	return n;
}

static void *sender_thread(void *arg)
{
	return (void *)(intptr_t)sender(arg);
}

/* The same with threads of one process, each with its own window handle:
 * the form in which ThreadSanitizer can see the message path. */
static uint64_t stream_threads(unsigned flags, double secs, uint64_t floor,
			       uint64_t count)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 2, 1, ENTRIES, ESIZE);
	const unsigned board_of[] = { 1, 1 };
	struct ctl *ctl = ctl_new();
	struct run runs[2];
	pthread_t th[2];

	for (unsigned p = 0; p < 2; p++) {
		runs[p] = (struct run){ spec, 1, p, count, 1, false, ctl };
		CHECK(pthread_create(&th[p], NULL, sender_thread, &runs[p]) == 0);
	}
	struct test_budget b = budget(secs, floor, count);
	uint64_t n = drain(w, flags, 2, board_of, &b, ctl);
	for (unsigned p = 0; p < 2; p++) {
		void *rc;
		CHECK(pthread_join(th[p], &rc) == 0 && rc == NULL);
	}
	OK(smq_validate(w, NULL, 0));
	OK(smq_close(w));
	printf("threads, mode %s: %llu messages\n", flags & SMQ_POLL ? "poll"
	       : "sleep", (unsigned long long)n);
	munmap(ctl, sizeof(*ctl));
	return n;
}

/* A sender of another host: no futex can carry its rings, so the receiver
 * waits by napping and looking again.  Board 1 is that stranger here: it
 * shows another host in its lane, which is what a receiver reads when it
 * arms a sleep. */
static uint64_t stream_polling(double secs, uint64_t floor, uint64_t count)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 3, 1, ENTRIES, ESIZE);
	const unsigned board_of[] = { 1 };
	struct ctl *ctl = ctl_new();
	struct smq_queue *rx;
	char how[64];

	struct run r = { spec, 1, 0, count, 1, true, ctl };
	pid_t pid = test_fork(sender, &r);
	/* the stranger has opened its lane: the receiver knows it can not
	 * be rung by it */
	OK(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &rx));
	const struct smq_lane_out *o = at(w, lay_lane_out(&w->lay, 1, 0));
	WAIT_UNTIL(LOAD(&o->host) == 0x6f74686572ull, 30,
		   "the stranger (pid %d) to open its lane", (int)pid);
	OK(smq_queue_notify(rx, how, sizeof(how)));
	if (strcmp(how, "polling: board 1 cannot ring this board's doorbell"))
		FAIL("notify says '%s'", how);
	OK(smq_queue_close(rx));
	struct test_budget b = budget(secs, floor, count);
	uint64_t n = drain(w, SMQ_SLEEP, 1, board_of, &b, ctl);
	test_wait_ok(pid, "sender");
	OK(smq_validate(w, NULL, 0));
	printf("polling waits: %llu messages\n", (unsigned long long)n);
	OK(smq_close(w));
	munmap(ctl, sizeof(*ctl));
	return n;
}

int main(void)
{
	const char *env = getenv("SMQ_STREAM_COUNT");
	uint64_t count = env ? strtoull(env, NULL, 10) : 0;
	const unsigned one[] = { 1 }, three[] = { 0, 1, 2 }, shared[] = { 1, 1 };
	/* by count: each sender's count, and the floor exactly that */
	uint64_t c1 = count, c4 = count / 4 ? count / 4 : count,
		 c8 = count / 8 ? count / 8 : count;
#define FLOOR(c, producers, f) ((c) ? (c) * (producers) : (f))
	uint64_t f;

	if (env && !count)
		FAIL("SMQ_STREAM_COUNT=%s: a count of at least 1", env);
	f = FLOOR(c1, 1, POLL_FLOOR);
	test_work("messages busy-polling",
		  stream(2, 1, one, SMQ_POLL, POLL_SECS, f, c1), f);
	f = FLOOR(c1, 1, SLEEP_FLOOR);
	test_work("messages sleeping",
		  stream(2, 1, one, SMQ_SLEEP, SLEEP_SECS, f, c1), f);
	f = FLOOR(c4, 1, PART_FLOOR);
	test_work("messages spinning", stream(2, 1, one, 0, PART_SECS, f, c4),
		  f);
	/* a lane per board, fair turns */
	f = FLOOR(c8, 3, PART_FLOOR);
	test_work("messages of 3 boards on one queue",
		  stream(3, 3, three, 0, PART_SECS, f, c8), f);
	f = FLOOR(c8, 2, LANE_FLOOR);
	test_work("messages of 2 processes on one lane",
		  stream(2, 2, shared, 0, PART_SECS, f, c8), f);
	f = FLOOR(c8, 1, PART_FLOOR);
	test_work("messages waited for by polling",
		  stream_polling(PART_SECS, f, c8), f);
	f = FLOOR(c8, 2, PART_SLEEP_FLOOR);
	test_work("messages of threads, sleeping",
		  stream_threads(SMQ_SLEEP, PART_SECS, f, c8), f);
	f = FLOOR(c8, 2, PART_FLOOR);
	test_work("messages of threads, busy-polling",
		  stream_threads(SMQ_POLL, PART_SECS, f, c8), f);
	return 0;
}
