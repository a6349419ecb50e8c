/* Two processes on different cores stream messages of random sizes that
 * carry a sequence number and a checksum: every one must arrive, in order,
 * whole, exactly once.  In busy-poll and in sleeping mode, then with three
 * sending boards on one queue and two sending processes sharing a lane.
 * SMQ_STREAM_COUNT overrides the count (the sanitizer runs use fewer). */
#include <pthread.h>
#include "testint.h"
#include "testlib.h"

#define ESIZE 512
#define ENTRIES 64

struct msg_head {
	uint64_t seq;
	uint32_t crc;      /* over the payload after the head */
	uint16_t producer; /* which sending process */
	uint16_t pad;
};

struct run {
	const char *spec;
	unsigned board;    /* board of this sender */
	unsigned producer;
	uint64_t count;
	int cpu;
	bool foreign;      /* it says it is of another host: no futex of ours
			      reaches it, and it reaches none of ours */
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
	for (uint64_t i = 0; i < r->count; i++) {
		size_t len = sizeof(struct msg_head) +
			     test_rand(&rng) % (ESIZE - sizeof(struct msg_head) + 1);
		struct msg_head *h = (void *)buf;
		for (size_t k = sizeof(*h); k < len; k++)
			buf[k] = (uint8_t)(i + k * 13 + r->producer);
		h->seq = i;
		h->producer = (uint16_t)r->producer;
		h->crc = smq_crc32c(0, buf + sizeof(*h), len - sizeof(*h));
		OK(smq_send(tx, buf, len, SMQ_WAIT_FOREVER));
	}
	OK(smq_queue_close(tx));
	OK(smq_close(w));
	return 0;
}

/* Receives producers * count messages; checks order per producer. */
static void drain(struct smq_window *w, unsigned flags, unsigned producers,
		  uint64_t count, const unsigned *board_of)
{
	struct smq_queue *rx;
	uint8_t buf[ESIZE];
	uint64_t next[8] = { 0 };
	uint64_t total = (uint64_t)producers * count;

	OK(smq_queue_open(w, 0, SMQ_RECEIVER, flags, &rx));
	for (uint64_t n = 0; n < total; n++) {
		size_t len;
		unsigned from;
		int err = smq_receive(rx, buf, sizeof(buf), &len, &from, 20000);
		if (err)
			FAIL("message %llu of %llu: %s", (unsigned long long)n,
			     (unsigned long long)total, smq_strerror(err));
		struct msg_head *h = (void *)buf;
		CHECK(len >= sizeof(*h) && h->producer < producers);
		CHECK(from == board_of[h->producer]);
		if (h->seq != next[h->producer])
			FAIL("producer %u: got seq %llu, expected %llu (%s)",
			     h->producer, (unsigned long long)h->seq,
			     (unsigned long long)next[h->producer],
			     h->seq < next[h->producer] ? "doubled" : "lost");
		CHECK(h->crc == smq_crc32c(0, buf + sizeof(*h), len - sizeof(*h)));
		next[h->producer]++;
	}
	size_t len;
	unsigned from;
	EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0), -EAGAIN);
	OK(smq_queue_close(rx));
}

static void stream(unsigned boards, unsigned producers, const unsigned *board_of,
		   unsigned flags, uint64_t count)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, boards, 1, ENTRIES, ESIZE);
	struct run runs[8];
	pid_t pids[8];

	test_pin(0);
	for (unsigned p = 0; p < producers; p++) {
		runs[p] = (struct run){ spec, board_of[p], p, count, 1, false };
		pids[p] = test_fork(sender, &runs[p]);
	}
	drain(w, flags, producers, count, board_of);
	for (unsigned p = 0; p < producers; p++)
		test_wait_ok(pids[p], "sender");

	struct smq_queue_info qi;
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	CHECK(qi.sent == producers * count && qi.received == producers * count);
	CHECK(qi.fill == 0);
	OK(smq_validate(w, NULL, 0));
	if (flags & SMQ_POLL)
		CHECK(qi.sleeps == 0 && qi.doorbells == 0);
	printf("boards %u producers %u mode %s: %llu messages, %llu sleeps, "
	       "%llu doorbells, %llu full waits\n", boards, producers,
	       flags & SMQ_POLL ? "poll" : flags & SMQ_SLEEP ? "sleep" : "spin",
	       (unsigned long long)qi.received, (unsigned long long)qi.sleeps,
	       (unsigned long long)qi.doorbells,
	       (unsigned long long)qi.full_waits);
	OK(smq_close(w));
}

static void *sender_thread(void *arg)
{
	return (void *)(intptr_t)sender(arg);
}

/* The same with threads of one process, each with its own window handle:
 * the form in which ThreadSanitizer can see the message path. */
static void stream_threads(unsigned flags, uint64_t count)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 2, 1, ENTRIES, ESIZE);
	const unsigned board_of[] = { 1, 1 };
	struct run runs[2];
	pthread_t th[2];

	for (unsigned p = 0; p < 2; p++) {
		runs[p] = (struct run){ spec, 1, p, count, 1, false };
		CHECK(pthread_create(&th[p], NULL, sender_thread, &runs[p]) == 0);
	}
	drain(w, flags, 2, count, board_of);
	for (unsigned p = 0; p < 2; p++) {
		void *rc;
		CHECK(pthread_join(th[p], &rc) == 0 && rc == NULL);
	}
	OK(smq_validate(w, NULL, 0));
	OK(smq_close(w));
}

/* A sender of another host: no futex can carry its rings, so the receiver
 * waits by napping and looking again.  Board 1 is that stranger here: it
 * shows another host in its lane, which is what a receiver reads when it
 * arms a sleep. */
static void stream_polling(uint64_t count)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 3, 1, ENTRIES, ESIZE);
	const unsigned board_of[] = { 1 };
	struct smq_queue *rx;
	char how[64];

	struct run r = { spec, 1, 0, count, 1, true };
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
	drain(w, SMQ_SLEEP, 1, count, board_of);
	test_wait_ok(pid, "sender");
	OK(smq_validate(w, NULL, 0));
	printf("polling waits: %llu messages\n", (unsigned long long)count);
	OK(smq_close(w));
}

int main(void)
{
	const char *env = getenv("SMQ_STREAM_COUNT");
	uint64_t count = env ? strtoull(env, NULL, 10) : 1000000;
	const unsigned one[] = { 1 }, three[] = { 0, 1, 2 }, shared[] = { 1, 1 };

	stream(2, 1, one, SMQ_POLL, count);
	stream(2, 1, one, SMQ_SLEEP, count);
	stream(2, 1, one, 0, count / 4);
	stream(3, 3, three, 0, count / 8);  /* a lane per board, fair turns */
	stream(2, 2, shared, 0, count / 8); /* two processes, one lane */
	stream_polling(count / 8);
	stream_threads(SMQ_SLEEP, count / 8);
	stream_threads(SMQ_POLL, count / 8);
	return 0;
}
