/* A sender waiting for room waits as its handle's mode says, as a receiver
 * waiting for a message does: SMQ_POLL polls and never sleeps, and a clear
 * of the queue neither waits for such a sender nor is missed by it; the
 * default spins a while and then sleeps;
 * SMQ_SLEEP sleeps at once.  The test build's hook SMQ_HOOK_ARM_ROOM
 * fires where a sender arms its sleep: it counts the sleeps.  Room comes
 * from a thread that takes one message after DELAY_MS. */
#include <pthread.h>
#include <time.h>
#include "testint.h"
#include "testlib.h"

/* the least count of checks a run makes (54 here) */
TEST_FLOOR(54);

#ifndef SMQ_COUNT_FAR
#error "t_room needs the test build's hooks (SMQ_COUNT_FAR)"
#endif

#define DELAY_MS 100

static _Atomic int armed;

static void count(enum smq_hook where)
{
	if (where == SMQ_HOOK_ARM_ROOM)
		armed++;
}

static uint64_t ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)(t.tv_sec - t0->tv_sec) * 1000 +
	       (uint64_t)((t.tv_nsec - t0->tv_nsec) / 1000000);
}

struct taker {
	struct smq_queue *rx;
	int err;
};

static void *take_later(void *arg)
{
	struct taker *t = arg;
	struct timespec d = { 0, DELAY_MS * 1000000L };
	char buf[64];
	size_t n;

	nanosleep(&d, NULL);
	t->err = smq_receive(t->rx, buf, sizeof(buf), &n, NULL, 0);
	return NULL;
}

struct fixture {
	struct smq_window *w0, *w1;
	struct smq_queue *rx, *tx;
};

static void open_full(struct fixture *f, unsigned flags)
{
	const struct smq_geometry g = { 2, 1, 4, 64, (const uint16_t[]){ 0 } };

	const char *spec = test_window();

	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &f->w0));
	OK(smq_init(f->w0, &g, sizeof(g)));
	OK(smq_open(spec, 1, 0, &f->w1));
	OK(smq_queue_open(f->w0, 0, SMQ_RECEIVER, 0, &f->rx));
	OK(smq_queue_open(f->w1, 0, SMQ_SENDER, flags, &f->tx));
	int sent = 0;
	while (smq_send(f->tx, "fill", 4, 0) == 0)
		sent++;
	CHECK(sent == 4);
}

static void close_all(struct fixture *f)
{
	if (f->tx)
		OK(smq_queue_close(f->tx));
	OK(smq_queue_close(f->rx));
	OK(smq_close(f->w1));
	OK(smq_close(f->w0));
}

/* A send into a full ring, room made by a take DELAY_MS later: it must
 * wait for it and then go on; returns the sleeps it armed. */
static int send_when_room(unsigned flags, const char *mode)
{
	struct fixture f = { 0 };
	struct taker t = { 0, 0 };
	struct timespec t0;
	pthread_t th;

	open_full(&f, flags);
	t.rx = f.rx;
	armed = 0;
	smq_test_hook = count;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(pthread_create(&th, NULL, take_later, &t) == 0);
	OK(smq_send(f.tx, "room", 4, 5000));
	uint64_t took = ms_since(&t0);
	CHECK(pthread_join(th, NULL) == 0);
	smq_test_hook = NULL;
	OK(t.err);
	if (took < DELAY_MS - 10)
		FAIL("%s: the send into a full ring returned after %llu ms, "
		     "before there was room (%d ms)", mode,
		     (unsigned long long)took, DELAY_MS);
	if (took > DELAY_MS + 800)
		FAIL("%s: room came at %d ms, the send went on only at %llu "
		     "ms", mode, DELAY_MS, (unsigned long long)took);
	printf("%s: a send into a full ring went on %llu ms after it began, "
	       "room came at %d ms; sleeps armed: %d\n", mode,
	       (unsigned long long)took, DELAY_MS, (int)armed);
	close_all(&f);
	return armed;
}

struct clearer {
	struct smq_window *w0;
	int err;
	uint64_t took;
};

static void *clear_later(void *arg)
{
	struct clearer *c = arg;
	struct timespec d = { 0, DELAY_MS * 1000000L }, t0;

	nanosleep(&d, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	c->err = smq_clear(c->w0, 0);
	c->took = ms_since(&t0);
	return NULL;
}

int main(void)
{
	/* SMQ_POLL never sleeps; the default does, past its spin; so does
	 * SMQ_SLEEP, at once */
	if (send_when_room(SMQ_POLL, "SMQ_POLL") != 0)
		FAIL("SMQ_POLL: a sender that polls armed a sleep");
	if (send_when_room(0, "default") < 1)
		FAIL("default: a sender waiting %d ms for room never slept "
		     "(it spins 20 us)", DELAY_MS);
	if (send_when_room(SMQ_SLEEP, "SMQ_SLEEP") < 1)
		FAIL("SMQ_SLEEP: a sender waiting for room never slept");

	/* a polling sender with a deadline and no room: -ETIMEDOUT, no sleep */
	struct fixture f = { 0 };
	struct timespec t0;
	open_full(&f, SMQ_POLL);
	armed = 0;
	smq_test_hook = count;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int err = smq_send(f.tx, "none", 4, 200);
	uint64_t took = ms_since(&t0);
	smq_test_hook = NULL;
	if (err != -ETIMEDOUT || armed || took < 190)
		FAIL("SMQ_POLL with no room: %d after %llu ms, %d sleeps (want "
		     "-ETIMEDOUT after 200 ms, none)", err,
		     (unsigned long long)took, (int)armed);
	printf("SMQ_POLL with no room and a 200 ms timeout: -ETIMEDOUT after "
	       "%llu ms, no sleep\n", (unsigned long long)took);

	/* a clear of the queue under a polling sender: the clear does not
	 * wait for it (its mark is down), and the send learns of it */
	struct clearer c = { f.w0, 0, 0 };
	pthread_t th;
	CHECK(pthread_create(&th, NULL, clear_later, &c) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = smq_send(f.tx, "none", 4, 5000);
	took = ms_since(&t0);
	CHECK(pthread_join(th, NULL) == 0);
	if (c.err)
		FAIL("a clear under a polling sender failed: %s",
		     smq_strerror(c.err));
	if (err != -ESTALE)
		FAIL("a sender polling for room through a clear of its queue "
		     "returned %d (%s), not -ESTALE", err, smq_strerror(err));
	if (c.took > 1000)
		FAIL("a clear waited %llu ms for a sender polling for room",
		     (unsigned long long)c.took);
	printf("a clear under a sender polling for room took %llu ms; the "
	       "send returned -ESTALE after %llu ms\n",
	       (unsigned long long)c.took, (unsigned long long)took);
	OK(smq_queue_close(f.tx));
	f.tx = NULL;
	close_all(&f);
	return 0;
}
