/* A full episode (smq-format(7), journal entries FULL and ROOM) costs a
 * stream through a small ring no clock reads: counted, not timed.  This
 * program's own clock_gettime() stands in for the C library's (the
 * library's calls reach it), counts the reads of the monotonic clock and
 * can move that clock forward, as a skewed clock would.
 *  - sends refused by a full lane read the clock once, as the episode
 *    opens (once read at every send: a stream through 16 entries lost a
 *    third of its rate to two clock reads per send);
 *  - sends that meet the lane full, then find room, read it at most once
 *    in FULL_LOOK_EVERY sends;
 *  - the episode still ends: no ROOM while sends meet the lane full,
 *    whatever the clock; once the clock moved past a second with sends
 *    finding room, one ROOM with the refusals and waits meanwhile;
 *  - a new episode opens at the next full lane. */
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "testlib.h"

TEST_FLOOR(20);

#define ENTRIES 16
#define ROUNDS 1600
#define FULL_LOOK_EVERY 16      /* send.c's */

static _Atomic uint64_t mono_reads;
static _Atomic int64_t skew_ns;

int clock_gettime(clockid_t id, struct timespec *ts)
{
	int r = (int)syscall(SYS_clock_gettime, id, ts);

	if (r == 0 && id == CLOCK_MONOTONIC) {
		mono_reads++;
		int64_t ns = ts->tv_nsec + skew_ns;
		ts->tv_sec += ns / 1000000000;
		ts->tv_nsec = ns % 1000000000;
	}
	return r;
}

struct fixture {
	struct smq_window *w0, *w1;
	struct smq_queue *rx, *tx;
	struct smq_journal_cursor c;    /* board 1's journal */
};

/* The next entry of board 1's journal about queue 0 with kind, or 0. */
static int journal_next_of(struct fixture *f, uint32_t kind,
			   struct smq_journal_entry *out)
{
	struct smq_journal_entry e;
	int r;

	while ((r = smq_journal_next(f->w0, &f->c, &e, sizeof(e))) == 1)
		if (e.kind == kind && e.queue == 0) {
			*out = e;
			return 1;
		}
	OK(r);
	return 0;
}

static void take_one(struct fixture *f)
{
	char buf[64];
	size_t n;
	OK(smq_receive(f->rx, buf, sizeof(buf), &n, NULL, 0));
}

int main(void)
{
	const struct smq_geometry g = { 2, 1, ENTRIES, 64,
					(const uint16_t[]){ 0 } };
	struct fixture f = { 0 };
	struct smq_journal_entry e;
	const char *spec = test_window();

	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &f.w0));
	OK(smq_init(f.w0, &g, sizeof(g)));
	OK(smq_open(spec, 1, 0, &f.w1));
	OK(smq_queue_open(f.w0, 0, SMQ_RECEIVER, 0, &f.rx));
	OK(smq_queue_open(f.w1, 0, SMQ_SENDER, 0, &f.tx));
	f.c.board = 1;

	/* the lane filled: no episode yet */
	for (int i = 0; i < ENTRIES; i++)
		OK(smq_send(f.tx, "fill", 4, 0));
	CHECK(journal_next_of(&f, SMQ_JOURNAL_FULL, &e) == 0);

	/* refused sends: one clock read, the episode's opening */
	uint64_t before = mono_reads;
	for (int i = 0; i < ROUNDS; i++)
		EXPECT(smq_send(f.tx, "more", 4, 0), -EAGAIN);
	uint64_t reads = mono_reads - before;
	if (reads > 1)
		FAIL("%d sends refused by a full lane read the clock %llu "
		     "times (at most once, as the episode opens)", ROUNDS,
		     (unsigned long long)reads);
	CHECK(journal_next_of(&f, SMQ_JOURNAL_FULL, &e) == 1 &&
	      e.a == ENTRIES);

	/* a stream through the full ring: each send meets the lane full
	 * (refused), then one is taken and the next send finds room; the
	 * clock moves on by a minute meanwhile, which ends nothing while
	 * the lane keeps meeting full */
	before = mono_reads;
	for (int i = 0; i < ROUNDS; i++) {
		EXPECT(smq_send(f.tx, "more", 4, 0), -EAGAIN);
		take_one(&f);
		OK(smq_send(f.tx, "next", 4, 0));
		if (i == ROUNDS / 2)
			skew_ns += 60 * 1000000000ll;
	}
	reads = mono_reads - before;
	if (reads > ROUNDS / FULL_LOOK_EVERY + 1)
		FAIL("%d sends into a lane met full read the clock %llu "
		     "times (at most once in %d sends)", 2 * ROUNDS,
		     (unsigned long long)reads, FULL_LOOK_EVERY);
	CHECK(journal_next_of(&f, SMQ_JOURNAL_ROOM, &e) == 0);

	/* the receiver drains, the sender goes on finding room while the
	 * clock passes a second: the episode ends once, with what it
	 * refused and waited */
	for (int i = 0; i < ENTRIES; i++)
		take_one(&f);
	for (int i = 0; i < 2 * FULL_LOOK_EVERY; i++) {
		OK(smq_send(f.tx, "room", 4, 0));
		take_one(&f);
	}
	CHECK(journal_next_of(&f, SMQ_JOURNAL_ROOM, &e) == 0);
	skew_ns += 2 * 1000000000ll;
	for (int i = 0; i < 2 * FULL_LOOK_EVERY; i++) {
		OK(smq_send(f.tx, "room", 4, 0));
		take_one(&f);
	}
	CHECK(journal_next_of(&f, SMQ_JOURNAL_ROOM, &e) == 1 &&
	      e.a == 2 * ROUNDS && e.b == 0);
	CHECK(journal_next_of(&f, SMQ_JOURNAL_ROOM, &e) == 0);

	/* the next full lane opens a new episode */
	while (smq_send(f.tx, "fill", 4, 0) == 0)
		;
	CHECK(journal_next_of(&f, SMQ_JOURNAL_FULL, &e) == 1);

	OK(smq_queue_close(f.tx));
	OK(smq_queue_close(f.rx));
	OK(smq_close(f.w1));
	OK(smq_close(f.w0));
	return 0;
}
