/* The journal (feature journal, smq(7) Journal), read through
 * smq_journal_next() as any reader would:
 *  - what libsmq writes of opens, closes, claims taken from the dead,
 *    clears and formats, in each board's own order;
 *  - a reader that fell behind a small journal is told exactly how many
 *    entries it lost, then reads the rest;
 *  - a writer held up between its reservation and its slot while the
 *    ring comes round (the hook between them) loses its entry and leaves
 *    the later one whole: never an older sequence over it, which a
 *    reader took for an entry abandoned;
 *  - a writer killed in the middle of an entry (the hook between its
 *    marker and its sequence) leaves that entry abandoned, and the
 *    journal goes on after it;
 *  - an entry damaged in the window's bytes is said damaged, not read as
 *    an entry; a head damaged fails validation, and init makes it anew;
 *  - an init of the same layout and a clear keep the journals, another
 *    layout makes them anew (a reader says so);
 *  - writers of four processes at once: every entry read whole, the
 *    sequences one after another, what is read, lost and broken (two
 *    writers in one slot) adding up, none abandoned.
 * Damage enters through the window's bytes. */
#include <signal.h>
#include <sys/wait.h>
#include "testlib.h"

TEST_FLOOR(1000);
#include "testint.h"
#include "window/journal.h"

static const char *spec;

static struct smq_window *init_journal(uint32_t boards, uint32_t entries,
				       uint32_t journal)
{
	struct smq_window *w;
	struct smq_shape sh = { { boards, boards, entries, 64, NULL }, NULL, 0,
				NULL, 0, 0, journal };

	/* a window of its own: an init of the same layout keeps journals */
	smq_remove(spec);
	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE,
		    &w));
	OK(smq_init_shape(w, &sh, sizeof(sh)));
	return w;
}

/* The next item of board b's journal at c: 1, 0 or an error */
static int next(struct smq_window *w, struct smq_journal_cursor *c,
		struct smq_journal_entry *e)
{
	return smq_journal_next(w, c, e, sizeof(*e));
}

static void want(struct smq_window *w, struct smq_journal_cursor *c,
		 uint32_t kind, uint32_t queue, uint32_t role, int line)
{
	struct smq_journal_entry e;
	int r = next(w, c, &e);

	if (r != 1 || e.kind != kind || e.queue != queue || e.role != role)
		FAIL("line %d: board %u entry: got %d, kind %u queue %d role "
		     "%u (seq %llu); want kind %u queue %d role %u", line,
		     c->board, r, e.kind, (int)e.queue, e.role,
		     (unsigned long long)e.seq, kind, (int)queue, role);
	TEST_COUNT();
}
#define WANT(w, c, kind, q, role) want(w, c, kind, q, role, __LINE__)

static void open_close(struct smq_window *w, unsigned q, enum smq_role role)
{
	struct smq_queue *qh;

	OK(smq_queue_open(w, q, role, 0, &qh));
	OK(smq_queue_close(qh));
}

/* ---- what is written, in order ---- */

static int hold_receiver(void *arg)
{
	struct smq_window *w;
	struct smq_queue *q;
	int *fd = arg;

	OK(smq_open(spec, 1, 0, &w));
	OK(smq_queue_open(w, 1, SMQ_RECEIVER, 0, &q));
	if (write(fd[1], "o", 1) != 1)
		return 1;
	pause();
	return 0;
}

static void written(void)
{
	struct smq_window *w0 = init_journal(2, 16, 16), *w1, *mon;
	struct smq_journal_cursor c0 = { 0, 0, 0, 0, 0 }, c1 = { 1, 0, 0, 0, 0 };
	struct smq_journal_entry e;
	int fd[2];

	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_open(spec, 0, SMQ_OPEN_READONLY, &mon));
	WANT(mon, &c0, SMQ_JOURNAL_FORMAT, SMQ_NO_QUEUE, 0);
	EXPECT(next(mon, &c0, &e), 0);
	open_close(w0, 1, SMQ_SENDER);
	open_close(w1, 1, SMQ_RECEIVER);
	WANT(mon, &c0, SMQ_JOURNAL_OPEN, 1, SMQ_SENDER);
	WANT(mon, &c0, SMQ_JOURNAL_CLOSE, 1, SMQ_SENDER);
	WANT(mon, &c1, SMQ_JOURNAL_OPEN, 1, SMQ_RECEIVER);
	WANT(mon, &c1, SMQ_JOURNAL_CLOSE, 1, SMQ_RECEIVER);
	/* a receiver killed with the queue open, its claim taken over */
	CHECK(pipe(fd) == 0);
	pid_t pid = test_fork(hold_receiver, fd);
	char c;
	CHECK(read(fd[0], &c, 1) == 1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	WANT(mon, &c1, SMQ_JOURNAL_OPEN, 1, SMQ_RECEIVER);
	EXPECT(next(mon, &c1, &e), 0);  /* a death is no board's to write */
	open_close(w1, 1, SMQ_RECEIVER);
	CHECK(next(mon, &c1, &e) == 1 && e.kind == SMQ_JOURNAL_TAKEOVER &&
	      e.queue == 1 && e.role == SMQ_RECEIVER && e.a == (uint64_t)pid);
	WANT(mon, &c1, SMQ_JOURNAL_OPEN, 1, SMQ_RECEIVER);
	WANT(mon, &c1, SMQ_JOURNAL_CLOSE, 1, SMQ_RECEIVER);
	/* a clear of a queue holding two messages, then of every queue */
	struct smq_queue *q;
	OK(smq_queue_open(w0, 1, SMQ_SENDER, 0, &q));
	OK(smq_send(q, "a", 1, 0));
	OK(smq_send(q, "b", 1, 0));
	OK(smq_queue_close(q));
	WANT(mon, &c0, SMQ_JOURNAL_OPEN, 1, SMQ_SENDER);
	WANT(mon, &c0, SMQ_JOURNAL_CLOSE, 1, SMQ_SENDER);
	OK(smq_clear(w0, 1));
	CHECK(next(mon, &c0, &e) == 1 && e.kind == SMQ_JOURNAL_CLEAR_QUEUE &&
	      e.queue == 1 && e.a == 2);
	OK(smq_clear(w0, -1));
	CHECK(next(mon, &c0, &e) == 1 && e.kind == SMQ_JOURNAL_CLEAR &&
	      e.generation == 2 && e.epoch == 1 && e.a == 0);
	/* the journals outlive a clear, and an init of the same layout */
	struct smq_window *again;
	struct smq_shape same = { { 2, 2, 16, 64, NULL }, NULL, 0, NULL, 0, 0,
				  16 };
	OK(smq_open(spec, 0, 0, &again));
	OK(smq_init_shape(again, &same, sizeof(same)));
	CHECK(next(mon, &c0, &e) == 1 && e.kind == SMQ_JOURNAL_FORMAT &&
	      e.generation == 3 && e.epoch == 2);
	EXPECT(next(mon, &c1, &e), 0);
	OK(smq_close(again));
	OK(smq_close(w0));
	OK(smq_close(w1));
	OK(smq_close(mon));
}

/* ---- a reader behind a small journal ---- */

static void lost(void)
{
	struct smq_window *w0 = init_journal(1, 16, 16), *mon;
	struct smq_journal_cursor c = { 0, 0, 0, 0, 0 };
	struct smq_journal_entry e;

	OK(smq_open(spec, 0, SMQ_OPEN_READONLY, &mon));
	WANT(mon, &c, SMQ_JOURNAL_FORMAT, SMQ_NO_QUEUE, 0);
	/* 40 entries: the 16 last are held, 24 lost to this reader */
	for (int i = 0; i < 20; i++)
		open_close(w0, 0, SMQ_SENDER);
	CHECK(next(mon, &c, &e) == 1 && e.kind == SMQ_JOURNAL_LOST &&
	      e.a == 24 && e.seq == 2);
	for (int i = 0; i < 16; i++) {
		CHECK(next(mon, &c, &e) == 1 && e.seq == 26 + (uint64_t)i);
		CHECK(e.kind == (i % 2 ? SMQ_JOURNAL_CLOSE : SMQ_JOURNAL_OPEN));
	}
	EXPECT(next(mon, &c, &e), 0);
	/* a cursor given a sequence the journal no longer holds */
	struct smq_journal_cursor old = { 0, 0, 5, 0, 0 };
	CHECK(next(mon, &old, &e) == 1 && e.kind == SMQ_JOURNAL_LOST &&
	      e.a == 21 && e.seq == 5);
	OK(smq_close(mon));
	OK(smq_close(w0));
}

/* ---- the ring going round at a hook ---- */

/* At hook `at`, window w writes 16 entries on queue `queue` (b the
 * complement of a when marked): the journal's ring of 16 comes round
 * once while the caller is held there. */
static struct round {
	enum smq_hook at;
	struct smq_window *w;
	unsigned queue;
	bool marked;
} rounder;

static void go_round(enum smq_hook where)
{
	if (where != rounder.at || !rounder.w)
		return;
	struct smq_window *w = rounder.w;
	rounder.w = NULL;
	for (uint64_t i = 0; i < 16; i++)
		smq_journal(w, SMQ_JOURNAL_EMPTIED, 0, rounder.queue, 0, i,
			    rounder.marked ? ~i : 0);
}

/* ---- a reader overtaken between its two looks at a sequence ---- */

static void overtaken(void)
{
	struct smq_window *w0 = init_journal(1, 16, 16), *mon;
	struct smq_journal_cursor c = { 0, 0, 0, 0, 0 };
	struct smq_journal_entry e;

	OK(smq_open(spec, 0, SMQ_OPEN_READONLY, &mon));
	/* the ring goes round once: the slot read holds another entry */
	rounder = (struct round){ SMQ_HOOK_JOURNAL_READ, w0, 0, false };
	smq_test_hook = go_round;
	/* entry 1 found, then overwritten before its copy: lost, never read
	 * as the entry that came after it there */
	int r = next(mon, &c, &e);
	if (r != 1 || e.kind != SMQ_JOURNAL_LOST || e.seq != 1 || e.a != 1)
		FAIL("overtaken: %d, kind %u seq %llu a %llu", r, e.kind,
		     (unsigned long long)e.seq, (unsigned long long)e.a);
	TEST_COUNT();
	smq_test_hook = NULL;
	for (uint64_t i = 0; i < 16; i++)
		CHECK(next(mon, &c, &e) == 1 &&
		      e.kind == SMQ_JOURNAL_EMPTIED && e.a == i);
	OK(smq_close(mon));
	OK(smq_close(w0));
}

/* ---- a writer held up between its reservation and its slot ---- */

static void lapped_writer(void)
{
	struct smq_window *w0 = init_journal(1, 16, 16), *w1, *mon;
	struct smq_journal_cursor c = { 0, 0, 0, 0, 0 };
	struct smq_journal_entry e;

	OK(smq_open(spec, 0, 0, &w1));
	OK(smq_open(spec, 0, SMQ_OPEN_READONLY, &mon));
	WANT(mon, &c, SMQ_JOURNAL_FORMAT, SMQ_NO_QUEUE, 0);
	/* another process's writes come round the ring: the held entry's
	 * slot holds a later entry, finished, before it is claimed */
	rounder = (struct round){ SMQ_HOOK_JOURNAL_RESERVED, w1, 1, true };
	smq_test_hook = go_round;
	smq_journal(w0, SMQ_JOURNAL_EMPTIED, 0, 0, 0, 100, ~100ull);
	smq_test_hook = NULL;
	/* the held entry (sequence 2) came round too late: lost; the one
	 * that took its slot (18) reads whole, never as abandoned */
	CHECK(next(mon, &c, &e) == 1 && e.kind == SMQ_JOURNAL_LOST &&
	      e.seq == 2 && e.a == 1);
	for (uint64_t i = 0; i < 16; i++) {
		int r = next(mon, &c, &e);
		if (r != 1 || e.kind != SMQ_JOURNAL_EMPTIED || e.queue != 1 ||
		    e.a != i || e.b != ~i)
			FAIL("lapped: entry %llu: %d, kind %u queue %u a %llu",
			     (unsigned long long)e.seq, r, e.kind, e.queue,
			     (unsigned long long)e.a);
		TEST_COUNT();
	}
	EXPECT(next(mon, &c, &e), 0);
	OK(smq_close(mon));
	OK(smq_close(w1));
	OK(smq_close(w0));
}

/* ---- a writer killed in the middle of an entry ---- */

static int hold_fd = -1;

static void hold_writing(enum smq_hook where)
{
	if (where != SMQ_HOOK_JOURNAL_WRITING || hold_fd < 0)
		return;
	if (write(hold_fd, "h", 1) == 1)
		pause();
}

static int killed_writer(void *arg)
{
	struct smq_window *w;
	int *fd = arg;

	OK(smq_open(spec, 0, 0, &w));
	hold_fd = fd[1];
	smq_test_hook = hold_writing;
	open_close(w, 0, SMQ_SENDER);  /* held in the OPEN entry */
	return 1;
}

static void abandoned(void)
{
	struct smq_window *w0 = init_journal(1, 16, 64), *mon;
	struct smq_journal_cursor c = { 0, 0, 0, 0, 0 };
	struct smq_journal_entry e;
	int fd[2];
	char ch;

	OK(smq_open(spec, 0, SMQ_OPEN_READONLY, &mon));
	WANT(mon, &c, SMQ_JOURNAL_FORMAT, SMQ_NO_QUEUE, 0);
	CHECK(pipe(fd) == 0);
	pid_t pid = test_fork(killed_writer, fd);
	CHECK(read(fd[0], &ch, 1) == 1);  /* held, the entry half written */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	open_close(w0, 0, SMQ_SENDER);
	/* not waited for: nothing now, then abandoned, then what came after */
	EXPECT(next(mon, &c, &e), 0);
	int r;
	WAIT_UNTIL((r = next(mon, &c, &e)) != 0, 20,
		   "the half-written entry said abandoned");
	CHECK(r == 1 && e.kind == SMQ_JOURNAL_ABANDONED && e.seq == 2);
	WANT(mon, &c, SMQ_JOURNAL_OPEN, 0, SMQ_SENDER);
	WANT(mon, &c, SMQ_JOURNAL_CLOSE, 0, SMQ_SENDER);
	OK(smq_close(mon));
	OK(smq_close(w0));
}

/* ---- damage, in the window's bytes ---- */

static void damaged(void)
{
	struct smq_window *w0 = init_journal(1, 16, 16), *mon;
	struct smq_journal_cursor c = { 0, 0, 0, 0, 0 };
	struct smq_journal_entry e;
	struct smq_fault f;

	open_close(w0, 0, SMQ_SENDER);
	const struct smq_layout *l = &w0->lay;
	/* entry 2 (the OPEN): a bit of its queue number flipped */
	uint8_t *slot = at(w0, lay_journal_slot(l, 0, 2));
	slot[offsetof(struct smq_journal_slot, queue)] ^= 0x04;
	OK(smq_open(spec, 0, SMQ_OPEN_READONLY, &mon));
	WANT(mon, &c, SMQ_JOURNAL_FORMAT, SMQ_NO_QUEUE, 0);
	CHECK(next(mon, &c, &e) == 1 && e.kind == SMQ_JOURNAL_BROKEN &&
	      e.seq == 2);
	WANT(mon, &c, SMQ_JOURNAL_CLOSE, 0, SMQ_SENDER);
	/* an entry whose check holds but whose kind is one only a reader
	 * says (a forged lost note): damaged too, never a note */
	open_close(w0, 0, SMQ_SENDER);
	struct smq_journal_slot *forged = at(w0, lay_journal_slot(l, 0, 4));
	forged->kind = SMQ_JOURNAL_LOST;
	forged->a = 1000;
	forged->check = smq_journal_slot_check(forged, 4);
	CHECK(next(mon, &c, &e) == 1 && e.kind == SMQ_JOURNAL_BROKEN &&
	      e.seq == 4);
	WANT(mon, &c, SMQ_JOURNAL_CLOSE, 0, SMQ_SENDER);
	/* a damaged entry is the journal's, not a fault of the window */
	OK(smq_validate(mon, &f, sizeof(f)));
	/* its head is: validation names it, and no entry is written */
	struct smq_journal_head *h = at(w0, lay_journal(l, 0));
	uint64_t head = h->head;
	((uint8_t *)h)[offsetof(struct smq_journal_head, slots)] ^= 0x01;
	EXPECT(smq_validate(mon, &f, sizeof(f)), -SMQ_ECORRUPT);
	CHECK(!strcmp(f.field, "journal.slots") &&
	      f.offset == lay_journal(l, 0) + 12);
	struct smq_queue *q;
	EXPECT(smq_queue_open(w0, 0, SMQ_SENDER, 0, &q), 0);
	OK(smq_queue_close(q));
	CHECK(h->head == head);
	/* init makes it anew: another incarnation, from 1 */
	uint64_t inc = h->incarnation;
	struct smq_shape same = { { 1, 1, 16, 64, NULL }, NULL, 0, NULL, 0, 0,
				  16 };
	OK(smq_init_shape(w0, &same, sizeof(same)));
	h = at(w0, lay_journal(&w0->lay, 0));
	CHECK(h->incarnation != inc && h->head == 2);
	OK(smq_close(mon));
	OK(smq_close(w0));
}

/* ---- another layout: the journals begin anew ---- */

static void restarted(void)
{
	struct smq_window *w0 = init_journal(2, 16, 16), *mon;
	struct smq_journal_cursor c = { 0, 0, 0, 0, 0 };
	struct smq_journal_entry e;

	OK(smq_open(spec, 0, SMQ_OPEN_READONLY, &mon));
	WANT(mon, &c, SMQ_JOURNAL_FORMAT, SMQ_NO_QUEUE, 0);
	uint64_t inc = c.incarnation;
	struct smq_shape other = { { 2, 2, 32, 64, NULL }, NULL, 0, NULL, 0, 0,
				   16 };
	OK(smq_init_shape(w0, &other, sizeof(other)));
	CHECK(next(mon, &c, &e) == 1 && e.kind == SMQ_JOURNAL_RESTARTED &&
	      e.a == inc && c.incarnation != inc);
	CHECK(next(mon, &c, &e) == 1 && e.kind == SMQ_JOURNAL_FORMAT &&
	      e.seq == 1);
	OK(smq_close(mon));
	OK(smq_close(w0));
}

/* ---- writers of four processes at once ---- */

#define WRITERS 4
#define EACH 20000

static int writer(void *arg)
{
	struct smq_window *w;
	unsigned id = (unsigned)(uintptr_t)arg;

	OK(smq_open(spec, 0, 0, &w));
	for (uint64_t i = 0; i < EACH; i++)
		smq_journal(w, SMQ_JOURNAL_EMPTIED, 0, id, 0, i, ~i);
	OK(smq_close(w));
	return 0;
}

static void concurrent(void)
{
	struct smq_window *w0 = init_journal(1, 16, 1024), *mon;
	struct smq_journal_cursor c = { 0, 0, 0, 0, 0 };
	struct smq_journal_entry e;
	uint64_t read = 0, lost = 0, broken = 0, last[WRITERS] = { 0 },
		 expect = 2;
	bool any[WRITERS] = { false };
	pid_t pid[WRITERS];

	OK(smq_open(spec, 0, SMQ_OPEN_READONLY, &mon));
	WANT(mon, &c, SMQ_JOURNAL_FORMAT, SMQ_NO_QUEUE, 0);
	for (unsigned i = 0; i < WRITERS; i++)
		pid[i] = test_fork(writer, (void *)(uintptr_t)i);
	struct smq_journal_head *h = at(w0, lay_journal(&w0->lay, 0));
	test_waiting("the writers' entries, read or lost");
	while (read + lost + broken < (uint64_t)WRITERS * EACH) {
		int r = next(mon, &c, &e);
		if (r == 0)
			continue;
		CHECK(r == 1);
		if (e.kind == SMQ_JOURNAL_LOST) {
			CHECK(e.seq == expect);
			lost += e.a;
			expect += e.a;
			continue;
		}
		/* a writer held up in the middle of its words while the ring
		 * came round wrote over the later entry's: said broken
		 * (smq(7), Writing the journal); never said abandoned */
		if (e.kind == SMQ_JOURNAL_BROKEN) {
			CHECK(e.seq == expect);
			broken++;
			expect++;
			continue;
		}
		/* whole: its fields as its writer wrote them, in order */
		if (e.kind != SMQ_JOURNAL_EMPTIED || e.seq != expect ||
		    e.queue >= WRITERS || e.b != ~e.a ||
		    (any[e.queue] && e.a <= last[e.queue]))
			FAIL("entry %llu: kind %u queue %u a %llu b %llx, "
			     "expected sequence %llu",
			     (unsigned long long)e.seq, e.kind, e.queue,
			     (unsigned long long)e.a, (unsigned long long)e.b,
			     (unsigned long long)expect);
		any[e.queue] = true;
		last[e.queue] = e.a;
		expect++;
		read++;
	}
	test_waiting(NULL);
	for (unsigned i = 0; i < WRITERS; i++)
		test_wait_ok(pid[i], "a writer");
	CHECK(h->head == 2 + (uint64_t)WRITERS * EACH);
	EXPECT(next(mon, &c, &e), 0);
	printf("%llu entries read whole, %llu lost to the reader, %llu "
	       "broken by two writers\n", (unsigned long long)read,
	       (unsigned long long)lost, (unsigned long long)broken);
	OK(smq_close(mon));
	OK(smq_close(w0));
}

int main(void)
{
	spec = test_window();
	written();
	lost();
	overtaken();
	lapped_writer();
	abandoned();
	damaged();
	restarted();
	concurrent();
	return 0;
}
