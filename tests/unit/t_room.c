/* A sender waiting for room waits as its handle's mode says, as a receiver
 * waiting for a message does: SMQ_POLL polls and never sleeps, and a clear
 * of the queue neither waits for such a sender nor is missed by it; the
 * default spins a while and then sleeps;
 * SMQ_SLEEP sleeps at once.  The test build's hook SMQ_HOOK_ARM_ROOM
 * fires where a sender arms its sleep: it counts the sleeps, and
 * SMQ_HOOK_RUNG and SMQ_HOOK_SLEPT_OUT how each ended.  Room comes from a
 * thread that takes one message once the sender waits for it (it armed a
 * sleep, or, polling, counted a full wait): states, never a time. */
#include <pthread.h>
#include "testint.h"
#include "testlib.h"

/* the least count of checks a run makes (86 to 91 here: the looks of
 * the waits for the sender count too) */
TEST_FLOOR(80);

#ifndef SMQ_COUNT_FAR
#error "t_room needs the test build's hooks (SMQ_COUNT_FAR)"
#endif

static _Atomic int armed, rung, slept_out;

static void count(enum smq_hook where)
{
	if (where == SMQ_HOOK_ARM_ROOM)
		armed++;
	else if (where == SMQ_HOOK_RUNG)
		rung++;
	else if (where == SMQ_HOOK_SLEPT_OUT)
		slept_out++;
}

/* the full waits counted on queue 0 */
static uint64_t full_waits(struct smq_window *w)
{
	struct smq_queue_info qi;
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	return qi.full_waits;
}

/* Waits until the sender waits for room: armed its sleep (sleeping), or
 * (polling) met the full ring, counted once it waits. */
static void await_sender(struct smq_window *w, uint64_t waits, bool polls)
{
	if (polls)
		WAIT_UNTIL(full_waits(w) > waits, 30,
			   "the sender to wait for room (a full wait counted)");
	else
		WAIT_UNTIL(armed > 0, 30, "the sender to arm its sleep");
}

struct taker {
	struct smq_queue *rx;
	struct smq_window *w;
	uint64_t waits;
	bool polls;
	int err;
	int slept_out;          /* the sleeps ended unrung before the take */
};

static void *take_later(void *arg)
{
	struct taker *t = arg;
	char buf[64];
	size_t n;

	await_sender(t->w, t->waits, t->polls);
	t->slept_out = slept_out;
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

/* A send into a full ring, room made by a take once it waits: it must
 * wait for it and then go on, overwriting nothing, and no sleep of its
 * may end at its slice after the take (the take rings it, or the look
 * after arming sees the room); returns the sleeps it armed. */
static int send_when_room(unsigned flags, const char *mode)
{
	struct fixture f = { 0 };
	struct taker t = { 0 };
	pthread_t th;
	char buf[64];
	size_t n;

	open_full(&f, flags);
	t = (struct taker){ f.rx, f.w0, full_waits(f.w0), flags & SMQ_POLL,
			    0, 0 };
	armed = rung = slept_out = 0;
	smq_test_hook = count;
	CHECK(pthread_create(&th, NULL, take_later, &t) == 0);
	OK(smq_send(f.tx, "room", 4, 5000));  /* 5 s: a give-up bound */
	CHECK(pthread_join(th, NULL) == 0);
	smq_test_hook = NULL;
	OK(t.err);
	/* it waited for the take: three of the fill, then its message */
	for (int i = 0; i < 3; i++) {
		OK(smq_receive(f.rx, buf, sizeof(buf), &n, NULL, 0));
		CHECK(n == 4 && !memcmp(buf, "fill", 4));
	}
	OK(smq_receive(f.rx, buf, sizeof(buf), &n, NULL, 0));
	CHECK(n == 4 && !memcmp(buf, "room", 4));
	if (slept_out != t.slept_out)
		FAIL("%s: a sender asleep for room slept its slice out after "
		     "the take (%d rung, %d slept out, %d before the take): the "
		     "take did not ring it", mode, (int)rung, (int)slept_out,
		     t.slept_out);
	CHECK(slept_out == t.slept_out);
	printf("%s: a send into a full ring went on after the take; sleeps "
	       "armed: %d (%d rung, %d slept out)\n", mode, (int)armed,
	       (int)rung, (int)slept_out);
	close_all(&f);
	return armed;
}

struct clearer {
	struct smq_window *w0;
	uint64_t waits;
	int err;
};

static void *clear_later(void *arg)
{
	struct clearer *c = arg;

	await_sender(c->w0, c->waits, true);
	c->err = smq_clear(c->w0, 0);
	return NULL;
}

int main(void)
{
	/* SMQ_POLL never sleeps; the default does, past its spin; so does
	 * SMQ_SLEEP, at once */
	if (send_when_room(SMQ_POLL, "SMQ_POLL") != 0)
		FAIL("SMQ_POLL: a sender that polls armed a sleep");
	if (send_when_room(0, "default") < 1)
		FAIL("default: a sender waiting for room never slept (it "
		     "spins 20 us)");
	if (send_when_room(SMQ_SLEEP, "SMQ_SLEEP") < 1)
		FAIL("SMQ_SLEEP: a sender waiting for room never slept");

	/* a polling sender with a deadline and no room: -ETIMEDOUT, no sleep */
	struct fixture f = { 0 };
	open_full(&f, SMQ_POLL);
	armed = 0;
	smq_test_hook = count;
	uint64_t waits = full_waits(f.w0);
	int err = smq_send(f.tx, "none", 4, 200);
	smq_test_hook = NULL;
	/* it waited (one full wait), never slept, and gave up */
	if (err != -ETIMEDOUT || armed || full_waits(f.w0) != waits + 1)
		FAIL("SMQ_POLL with no room: %d, %d sleeps, %llu full waits "
		     "(want -ETIMEDOUT, none, one)", err, (int)armed,
		     (unsigned long long)(full_waits(f.w0) - waits));
	printf("SMQ_POLL with no room and a 200 ms timeout: -ETIMEDOUT after "
	       "one full wait, no sleep\n");

	/* a clear of the queue under a polling sender: the clear does not
	 * wait for it (its mark is down), and the send learns of it: its
	 * -ESTALE says the clear came while it polled (a clear that waited
	 * for it would come after its 5 s, a give-up bound: -ETIMEDOUT) */
	struct clearer c = { f.w0, full_waits(f.w0), 0 };
	pthread_t th;
	CHECK(pthread_create(&th, NULL, clear_later, &c) == 0);
	err = smq_send(f.tx, "none", 4, 5000);
	CHECK(pthread_join(th, NULL) == 0);
	if (c.err)
		FAIL("a clear under a polling sender failed: %s",
		     smq_strerror(c.err));
	if (err != -ESTALE)
		FAIL("a sender polling for room through a clear of its queue "
		     "returned %d (%s), not -ESTALE", err, smq_strerror(err));
	printf("a clear under a sender polling for room: the send returned "
	       "-ESTALE\n");
	OK(smq_queue_close(f.tx));
	f.tx = NULL;
	close_all(&f);
	return 0;
}
