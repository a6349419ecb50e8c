/* Ring behaviour on one board (loopback lane): wrap-around with every size,
 * full ring, message too large, receive buffer too small, timeouts, and a
 * blocked receiver woken by a send from another process. */
#include <sys/wait.h>
#include <time.h>
#include "testint.h"
#include "testlib.h"

/* the least count of checks a run makes (32312 here) */
TEST_FLOOR(32000);

#define ENTRIES 8
#define ESIZE 200

/* An entry as a sender writes it, signed last (a sender that died after
 * signing leaves exactly this); its check summed if the window sums. */
static void write_entry(struct smq_window *w, struct smq_entry *e,
			const char *payload, uint64_t signature)
{
	uint32_t n = (uint32_t)strlen(payload);

	memcpy((uint8_t *)e + SMQ_ENTRY_HEADER, payload, n);
	e->size = n;
	e->check = w->lay.features & SMQ_FEATURE_CHECKSUM
		   ? smq_entry_check(n, signature, NULL, payload, n)
		   : 0;
	e->signature = signature;
}

static uint64_t ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7);
}

/* Many laps around the ring, every size from 0 to the entry size, with
 * 1..ENTRIES messages in flight. */
static void wrap_around(struct smq_queue *tx, struct smq_queue *rx)
{
	uint8_t out[ESIZE], in[ESIZE + 16];
	uint64_t sent = 0, got = 0;

	for (unsigned lap = 0; lap < 40; lap++) {
		for (size_t size = 0; size <= ESIZE; size++) {
			fill(out, size, sent);
			OK(smq_send(tx, out, size, 0));
			sent++;
			/* drain every few sends so the fill level varies */
			if ((sent % (1 + lap % ENTRIES)) && sent - got < ENTRIES)
				continue;
			while (got < sent) {
				size_t len;
				unsigned from;
				size_t want = (size_t)(got % (ESIZE + 1));
				OK(smq_receive(rx, in, sizeof(in), &len, &from, 0));
				CHECK(len == want && from == 0);
				fill(out, want, got);
				CHECK(!memcmp(in, out, want));
				got++;
			}
		}
	}
	CHECK(sent == got && sent == 40 * (ESIZE + 1));
}

static int wake_child(void *arg)
{
	const char *spec = arg;
	struct smq_window *w;
	struct smq_queue *tx;
	struct smq_queue_info qi;

	OK(smq_open(spec, 1, 0, &w));
	/* the send must find the receiver asleep, or no doorbell rings */
	WAIT_UNTIL(!smq_queue_info(w, 0, &qi, sizeof(qi)) && qi.sleeping, 20,
		   "queue 0's receiver to show asleep");
	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &tx));
	OK(smq_send(tx, "wake", 4, 0));
	return 0;
}

/* Receives one message after 1.3 s: longer than a sender's sleep slice. */
static int late_receiver(void *arg)
{
	const char *spec = arg;
	struct smq_window *w;
	struct smq_queue *rx;
	uint8_t buf[ESIZE];
	size_t len;

	OK(smq_open(spec, 0, 0, &w));
	/* on purpose, not a stand-in: the sender's wait must outlast its
	 * 1 s sleep slice */
	usleep(1300 * 1000);
	OK(smq_queue_open(w, 1, SMQ_RECEIVER, 0, &rx));
	OK(smq_receive(rx, buf, sizeof(buf), &len, NULL, 0));
	OK(smq_queue_close(rx));

	OK(smq_close(w));
	return 0;
}

int main(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 1, 1, ENTRIES, ESIZE);
	struct smq_queue *tx, *rx, *rx2;
	uint8_t buf[ESIZE + 1];
	size_t len;
	unsigned from;

	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &tx));
	OK(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &rx));
	EXPECT(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &rx2), -SMQ_EHOLDING);
	wrap_around(tx, rx);

	/* Too large: refused, nothing written. */
	memset(buf, 0xab, sizeof(buf));
	EXPECT(smq_send(tx, buf, ESIZE + 1, 0), -EMSGSIZE);
	EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0), -EAGAIN);

	/* Full ring: -EAGAIN at once, -ETIMEDOUT after the timeout, and the
	 * queued messages are untouched. */
	for (unsigned i = 0; i < ENTRIES; i++) {
		fill(buf, ESIZE, 1000 + i);
		OK(smq_send(tx, buf, ESIZE, 0));
	}
	EXPECT(smq_send(tx, "x", 1, 0), -EAGAIN);
	uint64_t t0 = ms_now();
	EXPECT(smq_send(tx, "x", 1, 50), -ETIMEDOUT);
	/* a floor, not a speed: -ETIMEDOUT no sooner than asked (a busy
	 * machine only lengthens it) */
	CHECK(ms_now() - t0 >= 49);
	struct smq_queue_info qi;
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	CHECK(qi.fill == ENTRIES && qi.full_waits >= 1);

	/* Buffer too small: an error, the size, and the message stays. */
	len = 0;
	EXPECT(smq_receive(rx, buf, ESIZE - 1, &len, &from, 0), -EMSGSIZE);
	CHECK(len == ESIZE);
	for (unsigned i = 0; i < ENTRIES; i++) {
		uint8_t want[ESIZE];
		fill(want, ESIZE, 1000 + i);
		OK(smq_receive(rx, buf, sizeof(buf), &len, &from, 0));
		CHECK(len == ESIZE && !memcmp(buf, want, ESIZE));
	}

	/* Receive timeout, in every mode. */
	unsigned modes[] = { 0, SMQ_POLL, SMQ_SLEEP };
	OK(smq_queue_close(rx));
	for (unsigned m = 0; m < 3; m++) {
		OK(smq_queue_open(w, 0, SMQ_RECEIVER, modes[m], &rx));
		t0 = ms_now();
		EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 30),
		       -ETIMEDOUT);
		CHECK(ms_now() - t0 >= 29);     /* a floor, as above */
		EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0), -EAGAIN);
		OK(smq_queue_close(rx));
	}
	OK(smq_queue_close(tx));
	OK(smq_close(w));

	/* A receiver blocked with no timeout wakes on a send from another
	 * process (two boards, queue 0 received by board 0). */
	const char *spec2 = test_window();
	w = test_init(spec2, 2, 2, ENTRIES, ESIZE);
	OK(smq_queue_open(w, 0, SMQ_RECEIVER, SMQ_SLEEP, &rx));
	pid_t pid = test_fork(wake_child, (void *)spec2);
	test_waiting("a message from board 1 (pid %d), asleep", (int)pid);
	OK(smq_receive(rx, buf, sizeof(buf), &len, &from, SMQ_WAIT_FOREVER));
	test_waiting(NULL);
	CHECK(len == 4 && !memcmp(buf, "wake", 4) && from == 1);
	test_wait_ok(pid, "sender");
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	CHECK(qi.sleeps >= 1 && qi.wakeups >= 1 && qi.doorbells == 1);
	OK(smq_queue_close(rx));

	/* A sender blocked on a full ring longer than its 1 s sleep slice
	 * still succeeds when room comes (queue 1: board 1 receives, but the
	 * test process plays board 0's receiver role through a RAW reopen is
	 * not needed: board 0 sends on queue 1 of a 1-receiver-per-board
	 * window whose receiver we make board 0 below). */
	OK(smq_close(w));
	const char *spec3 = test_window();
	struct smq_window *w3;
	struct smq_geometry g3 = { 2, 2, 2, ESIZE, (const uint16_t[]){ 0, 0 } };
	OK(smq_open(spec3, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w3));
	OK(smq_init(w3, &g3, sizeof(g3)));
	OK(smq_queue_open(w3, 1, SMQ_SENDER, 0, &tx));
	OK(smq_send(tx, "a", 1, 0));
	OK(smq_send(tx, "b", 1, 0));
	pid = test_fork(late_receiver, (void *)spec3);
	t0 = ms_now();
	test_waiting("room in a full ring, which a late receiver (pid %d) "
		     "makes", (int)pid);
	OK(smq_send(tx, "c", 1, SMQ_WAIT_FOREVER));
	test_waiting(NULL);
	/* a floor, not a speed: the send did wait across a slice */
	CHECK(ms_now() - t0 >= 1200);
	test_wait_ok(pid, "late receiver");

	/* Board 0's own handles are stale after its own clear. */
	OK(smq_queue_open(w3, 0, SMQ_RECEIVER, 0, &rx));
	OK(smq_clear(w3, -1));
	EXPECT(smq_send(tx, "d", 1, 0), -ESTALE);
	EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0), -ESTALE);
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_queue_open(w3, 0, SMQ_RECEIVER, 0, &rx));  /* claim released */
	OK(smq_queue_close(rx));
	OK(smq_close(w3));

	/* A lane whose next entry is corrupted does not hold up the others:
	 * every good message is delivered first, then the bad lane is
	 * reported, and again at every call. */
	const char *spec4 = test_window();
	struct smq_window *w4 = test_init(spec4, 2, 1, ENTRIES, ESIZE), *w4b;
	struct smq_queue *tx0, *tx1;
	OK(smq_open(spec4, 1, 0, &w4b));
	OK(smq_queue_open(w4, 0, SMQ_SENDER, 0, &tx0));
	OK(smq_queue_open(w4b, 0, SMQ_SENDER, 0, &tx1));
	OK(smq_send(tx1, "bad", 3, 0));
	for (int i = 0; i < 3; i++)
		OK(smq_send(tx0, "good", 4, 0));
	struct smq_layout lay;
	struct smq_geometry g4 = { 2, 1, ENTRIES, ESIZE, NULL };
	OK(smq_layout_compute(&lay, &g4));
	struct smq_entry *bad = (void *)((uint8_t *)at(w4, 0) + lay_ring(&lay, 0, 1));
	bad->signature ^= 1;
	smq_layout_free(&lay);
	OK(smq_queue_open(w4, 0, SMQ_RECEIVER, 0, &rx));
	int good = 0, corrupt = 0;
	for (int i = 0; i < 6 && good < 3; i++) {
		int r = smq_receive(rx, buf, sizeof(buf), &len, &from, 0);
		if (r == -SMQ_ESIGNATURE)
			corrupt++;
		else if (r == 0 && from == 0 && len == 4)
			good++;
		else
			FAIL("unexpected receive result %d from %u", r, from);
	}
	CHECK(good == 3 && corrupt == 0);
	EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0), -SMQ_ESIGNATURE);
	EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0), -SMQ_ESIGNATURE);
	OK(smq_queue_close(rx));
	OK(smq_queue_close(tx0));
	OK(smq_queue_close(tx1));
	OK(smq_close(w4b));
	OK(smq_close(w4));

	/* A sender that died between writing its entry's signature and its
	 * top: the receiver takes that entry by its signature; the next sender
	 * carries on after it, and nothing is lost or doubled. */
	const char *spec5 = test_window();
	struct smq_window *w5 = test_init(spec5, 1, 1, ENTRIES, ESIZE);
	struct smq_layout lay5;
	struct smq_geometry g5 = { 1, 1, ENTRIES, ESIZE, NULL };
	OK(smq_layout_compute(&lay5, &g5));
	OK(smq_queue_open(w5, 0, SMQ_SENDER, 0, &tx));
	OK(smq_send(tx, "one", 3, 0));
	OK(smq_queue_close(tx));
	uint8_t *base5 = at(w5, 0);
	struct smq_rx *rx5 = (void *)(base5 + lay5.rx[0]);
	struct smq_entry *e5 = (void *)(base5 + lay_ring(&lay5, 0, 0) + lay5.stride);
	write_entry(w5, e5, "two", smq_signature(rx5->epoch, 0, 0, 1));  /* and then died */
	OK(smq_queue_open(w5, 0, SMQ_RECEIVER, 0, &rx));
	const char *want5[] = { "one", "two" };
	for (int i = 0; i < 2; i++) {
		OK(smq_receive(rx, buf, sizeof(buf), &len, &from, 0));
		CHECK(len == 3 && !memcmp(buf, want5[i], 3));
	}
	EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0), -EAGAIN);
	OK(smq_validate(w5, NULL, 0));  /* bottom one past top is not corruption */
	OK(smq_queue_open(w5, 0, SMQ_SENDER, 0, &tx));
	OK(smq_send(tx, "three", 5, 0));
	OK(smq_receive(rx, buf, sizeof(buf), &len, &from, 0));
	CHECK(len == 5 && !memcmp(buf, "three", 5));
	EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0), -EAGAIN);
	struct smq_lane_info li5;
	OK(smq_lane_info(w5, 0, 0, &li5, sizeof(li5)));
	CHECK(li5.top == 3 && li5.bottom == 3);
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));

	/* The same death, but the next sender opens before the receiver has
	 * taken the entry: it must not write over it. */
	OK(smq_queue_open(w5, 0, SMQ_SENDER, 0, &tx));
	OK(smq_send(tx, "four", 4, 0));       /* seq 3, published */
	OK(smq_queue_close(tx));
	struct smq_entry *e6 = (void *)(base5 + lay_ring(&lay5, 0, 0) + 4 * lay5.stride);
	write_entry(w5, e6, "five", smq_signature(rx5->epoch, 0, 0, 4));  /* then died */
	OK(smq_queue_open(w5, 0, SMQ_SENDER, 0, &tx));
	OK(smq_send(tx, "six", 3, 0));
	OK(smq_queue_open(w5, 0, SMQ_RECEIVER, 0, &rx));
	const char *want6[] = { "four", "five", "six" };
	for (int i = 0; i < 3; i++) {
		OK(smq_receive(rx, buf, sizeof(buf), &len, &from, 0));
		CHECK(len == strlen(want6[i]) && !memcmp(buf, want6[i], len));
	}
	EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0), -EAGAIN);

	/* A live handle that takes the lane lock over from a dead holder
	 * recovers what the holder left signed. */
	pid_t gone = test_fork_raw();
	if (gone == 0)
		_exit(0);
	test_wait_ok(gone, "a process that dies at once");
	struct smq_lane_out *out5 = (void *)(base5 + lay_lane_out(&lay5, 0, 0));
	struct smq_entry *e7 = (void *)(base5 + lay_ring(&lay5, 0, 0) + 6 * lay5.stride);
	write_entry(w5, e7, "seven", smq_signature(rx5->epoch, 0, 0, 6));
	out5->lock = (uint32_t)gone;                 /* died holding the lock */
	OK(smq_send(tx, "eight", 5, 0));
	const char *want7[] = { "seven", "eight" };
	for (int i = 0; i < 2; i++) {
		OK(smq_receive(rx, buf, sizeof(buf), &len, &from, 0));
		CHECK(len == 5 && !memcmp(buf, want7[i], 5));
	}
	EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0), -EAGAIN);
	OK(smq_validate(w5, NULL, 0));

	/* A queued entry whose signature damage turned back into the one its
	 * slot has while empty (the signature of a lap before) looks empty
	 * to the signature alone: a waiting receiver reads every lane's top
	 * once a slice, and says it.  A receiver that has just looked waits
	 * out its slice first; a new one looks at once. */
	OK(smq_send(tx, "nine", 4, 0));  /* seq 8: its slot held seq 0 */
	struct smq_entry *e8 = (void *)(base5 + lay_ring(&lay5, 0, 0));
	CHECK(e8->signature == smq_signature(rx5->epoch, 0, 0, 8));
	e8->signature = smq_signature(rx5->epoch, 0, 0, 0);
	uint64_t t1 = ms_now();
	EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 3000),
	       -SMQ_ESIGNATURE);
	if (ms_now() - t1 > 1500)
		FAIL("a lane that lost its queued entry's signature was said "
		     "after %llu ms, not within a slice",
		     (unsigned long long)(ms_now() - t1));
	OK(smq_queue_close(rx));
	OK(smq_queue_open(w5, 0, SMQ_RECEIVER, 0, &rx));
	EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 10),
	       -SMQ_ESIGNATURE);
	smq_layout_free(&lay5);
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_close(w5));
	return 0;
}
