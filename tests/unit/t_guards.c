/* A second guard for checks that one test alone guarded, each from
 * another side, counted rather than timed:
 *  a. the look after arming a sleep: a message sent just before a
 *     receiver arms (SMQ_HOOK_ARM) is found by that look, so the receiver
 *     never sleeps (its queue counts no sleep); the same for a group whose
 *     last member gets the message, where the look must cover every
 *     member; and a take just before a sender waiting for room arms
 *     (SMQ_HOOK_ARM_ROOM): the sender never sleeps (SMQ_HOOK_SLEEP);
 *  b. a group send retried with what *pending left sends to the members
 *     still pending alone, never again to one that took it; a retry with
 *     nothing pending sends nothing;
 *  c. an aborted loan publishes nothing: no message, top and the counts
 *     unmoved, not even for the next sender's open, which would recover a
 *     signed entry as a dead sender's;
 *  d. a burst's entries are whole when they are signed: a burst receive
 *     at the hook after the signatures (SMQ_HOOK_SIGNED), before top,
 *     gets every entry whole, with checksums and without;
 *  e. validation bounds a handle slot's queue: a slot of this generation
 *     naming a queue past the last is damage (handle.queue), refused by
 *     validation and by an attach; the last queue, or a stale slot's
 *     queue of an older layout, is not;
 *  f. a burst a sender signed before it died, short of its top, is
 *     recovered whole by a send of the board that takes the dead
 *     sender's lock over and finds the ring full then: top stored on both
 *     sides (the receiver's too, though that send publishes nothing), the
 *     messages counted and queued;
 *  g. the sending boards of a queue take turns: one message of each in
 *     turn, each board's in its order; a receiver opened anew goes on
 *     from the turn the queue keeps; a burst takes the run of the lane
 *     whose turn it is, and passes the turn on. */
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include "testint.h"
#include "testlib.h"

TEST_FLOOR(330);

#ifndef SMQ_COUNT_FAR
#error "t_guards needs the test build's hooks (SMQ_COUNT_FAR)"
#endif

#define ENTRIES 8
#define ESIZE 64

/* Receivers all on board 0, senders board 1. */
static struct smq_window *fresh(const char *spec, unsigned queues,
				bool checksum, struct smq_window **w1)
{
	static const uint16_t zeros[8];
	struct smq_shape sh = {
		{ 2, queues, ENTRIES, ESIZE, zeros }, NULL,
		checksum ? SMQ_SHAPE_CHECKSUM : 0, NULL, 0, 0, 0
	};
	struct smq_window *w0;

	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE,
		    &w0));
	OK(smq_init_shape(w0, &sh, sizeof(sh)));
	OK(smq_open(spec, 1, 0, w1));
	return w0;
}

static uint64_t sleeps(struct smq_window *w, unsigned q)
{
	struct smq_queue_info qi;

	OK(smq_queue_info(w, q, &qi, sizeof(qi)));
	return qi.sleeps;
}

static uint64_t queued(struct smq_window *w, unsigned q)
{
	struct smq_queue_info qi;

	OK(smq_queue_info(w, q, &qi, sizeof(qi)));
	return qi.queued;
}

static struct smq_lane_info lane(struct smq_window *w, unsigned q)
{
	struct smq_lane_info li;

	OK(smq_lane_info(w, q, 1, &li, sizeof(li)));
	return li;
}

/* ---- a. the look after arming ---- */

static struct smq_queue *late_tx;
static int armed;

static void send_at_arm(enum smq_hook where)
{
	if (where != SMQ_HOOK_ARM || armed++)
		return;
	OK(smq_send(late_tx, "late", 4, 0));
}

#define ROUNDS 10

static struct smq_queue *room_rx;
static int sleeps_at_room;

/* A sender about to arm its wait for room: the receiver takes one (it
 * sees no request, and rings nothing); counts the sleeps that follow. */
static void take_at_arm_room(enum smq_hook where)
{
	char buf[16];
	size_t n;

	if (where == SMQ_HOOK_SLEEP)
		sleeps_at_room++;
	if (where != SMQ_HOOK_ARM_ROOM || armed++)
		return;
	OK(smq_receive(room_rx, buf, sizeof(buf), &n, NULL, 0));
}

static void look_after_arming(const char *spec)
{
	struct smq_window *w0, *w1;
	struct smq_queue *rx, *tx[3];
	struct smq_group *g;
	char buf[16];
	size_t n;
	unsigned queue;

	w0 = fresh(spec, 3, false, &w1);
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, SMQ_SLEEP, &rx));
	for (unsigned q = 0; q < 3; q++)
		OK(smq_queue_open(w1, q, SMQ_SENDER, 0, &tx[q]));
	late_tx = tx[0];
	for (int i = 0; i < ROUNDS; i++) {
		armed = 0;
		smq_test_hook = send_at_arm;
		OK(smq_receive(rx, buf, sizeof(buf), &n, NULL, 30000));
		smq_test_hook = NULL;
		CHECK(armed == 1 && n == 4 && !memcmp(buf, "late", 4));
	}
	if (sleeps(w0, 0))
		FAIL("a receiver slept %llu times of %d on a message sent just "
		     "before it armed: it did not look after arming",
		     (unsigned long long)sleeps(w0, 0), ROUNDS);
	OK(smq_queue_close(rx));

	/* a group: the message on its last member */
	OK(smq_group_open_queues(w0, (const unsigned[]){ 0, 1, 2 }, 3,
				 SMQ_RECEIVER, SMQ_SLEEP, &g));
	late_tx = tx[2];
	for (int i = 0; i < ROUNDS; i++) {
		armed = 0;
		smq_test_hook = send_at_arm;
		OK(smq_group_receive(g, buf, sizeof(buf), &n, NULL, &queue,
				     30000));
		smq_test_hook = NULL;
		CHECK(armed == 1 && queue == 2 && n == 4);
	}
	for (unsigned q = 0; q < 3; q++)
		if (sleeps(w0, q))
			FAIL("a group's receiver slept on a message sent to "
			     "its member 2 just before it armed (queue %u "
			     "counts %llu sleeps): the look after arming "
			     "missed a member", q,
			     (unsigned long long)sleeps(w0, q));
	OK(smq_group_close(g));

	/* a sender waiting for room: a take just before it arms */
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &room_rx));
	sleeps_at_room = 0;
	for (int i = 0; i < ROUNDS; i++) {
		while (!smq_send(tx[0], "full", 4, 0))
			;
		armed = 0;
		smq_test_hook = take_at_arm_room;
		OK(smq_send(tx[0], "room", 4, 30000));
		smq_test_hook = NULL;
		CHECK(armed == 1);
		while (!smq_receive(room_rx, buf, sizeof(buf), &n, NULL, 0))
			;
	}
	if (sleeps_at_room)
		FAIL("a sender slept %d times of %d on room made just before "
		     "it armed its wait: it did not look after arming",
		     sleeps_at_room, ROUNDS);
	OK(smq_queue_close(room_rx));
	for (unsigned q = 0; q < 3; q++)
		OK(smq_queue_close(tx[q]));
	OK(smq_close(w1));
	OK(smq_close(w0));
}

/* ---- b. a group send's retry ---- */

/* Queue q's receiver gets exactly the messages of want (NUL-separated,
 * ending with an empty one), then nothing. */
static void drain(struct smq_window *w, unsigned q, const char *want)
{
	struct smq_queue *rx;
	char buf[16];
	size_t n;

	OK(smq_queue_open(w, q, SMQ_RECEIVER, 0, &rx));
	for (; *want; want += strlen(want) + 1) {
		OK(smq_receive(rx, buf, sizeof(buf), &n, NULL, 0));
		if (n != strlen(want) || memcmp(buf, want, n))
			FAIL("queue %u: received '%.*s', expected '%s'", q,
			     (int)n, buf, want);
	}
	n = 0;
	int err = smq_receive(rx, buf, sizeof(buf), &n, NULL, 0);
	if (err != -EAGAIN)
		FAIL("queue %u: one message too many ('%.*s'): a member got "
		     "the message again", q, (int)n, buf);
	OK(smq_queue_close(rx));
}

static void group_retry(const char *spec)
{
	struct smq_window *w0, *w1;
	struct smq_queue *fill, *rx;
	struct smq_group *g;
	uint64_t pending = SMQ_GROUP_ALL;
	char buf[16];
	size_t n;

	w0 = fresh(spec, 3, false, &w1);
	OK(smq_queue_open(w1, 1, SMQ_SENDER, 0, &fill));
	for (unsigned i = 0; i < ENTRIES; i++)
		OK(smq_send(fill, "f", 1, 0));
	OK(smq_group_open_queues(w1, (const unsigned[]){ 0, 1, 2 }, 3,
				 SMQ_SENDER, 0, &g));
	EXPECT(smq_group_send(g, "A", 1, &pending, 0), -EAGAIN);
	CHECK(pending == 1u << 1);
	/* retried while member 1 is still full: the others get nothing */
	EXPECT(smq_group_send(g, "A", 1, &pending, 0), -EAGAIN);
	CHECK(pending == 1u << 1);
	if (queued(w0, 0) != 1 || queued(w0, 2) != 1)
		FAIL("a retry for member 1 alone left %llu and %llu messages "
		     "on members 0 and 2, expected 1 each",
		     (unsigned long long)queued(w0, 0),
		     (unsigned long long)queued(w0, 2));
	/* room on member 1: the retry goes there alone */
	OK(smq_queue_open(w0, 1, SMQ_RECEIVER, 0, &rx));
	OK(smq_receive(rx, buf, sizeof(buf), &n, NULL, 0));
	OK(smq_queue_close(rx));
	OK(smq_group_send(g, "A", 1, &pending, 0));
	CHECK(pending == 0);
	/* nothing pending: nothing sent */
	OK(smq_group_send(g, "B", 1, &pending, 0));
	CHECK(pending == 0);
	drain(w0, 0, "A\0");
	drain(w0, 1, "f\0f\0f\0f\0f\0f\0f\0A\0");
	drain(w0, 2, "A\0");
	OK(smq_group_close(g));
	OK(smq_queue_close(fill));
	OK(smq_close(w1));
	OK(smq_close(w0));
}

/* ---- c. an aborted loan ---- */

static void loan_aborted(const char *spec, bool checksum)
{
	struct smq_window *w0, *w1;
	struct smq_queue *rx, *tx;
	char buf[ESIZE];
	size_t n;
	void *p;

	w0 = fresh(spec, 1, checksum, &w1);
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &rx));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	OK(smq_loan(tx, 32, &p, 0));
	OK(smq_loan_write(tx, 0, "aborted", 7));
	OK(smq_loan_abort(tx));
	EXPECT(smq_receive(rx, buf, sizeof(buf), &n, NULL, 0), -EAGAIN);
	struct smq_lane_info li = lane(w0, 0);
	if (li.top || li.messages || li.bytes)
		FAIL("an aborted loan moved the lane: top %llu, %llu messages "
		     "of %llu bytes counted", (unsigned long long)li.top,
		     (unsigned long long)li.messages,
		     (unsigned long long)li.bytes);
	/* the next sender's open recovers what a dead sender signed: there
	 * must be nothing to recover */
	OK(smq_queue_close(tx));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	li = lane(w0, 0);
	CHECK(!li.top && !li.messages);
	rx->look_all_at = 0;
	EXPECT(smq_receive(rx, buf, sizeof(buf), &n, NULL, 0), -EAGAIN);
	OK(smq_send(tx, "after", 5, 0));
	OK(smq_receive(rx, buf, sizeof(buf), &n, NULL, 0));
	CHECK(n == 5 && !memcmp(buf, "after", 5));
	EXPECT(smq_receive(rx, buf, sizeof(buf), &n, NULL, 0), -EAGAIN);
	li = lane(w0, 0);
	CHECK(li.top == 1 && li.messages == 1 && li.bytes == 5);
	OK(smq_validate(w0, NULL, 0));
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_close(w1));
	OK(smq_close(w0));
}

/* ---- d. a burst's entries whole when signed ---- */

static struct smq_queue *burst_rx;
static int took;

static void fill_msg(char *m, unsigned i)
{
	for (unsigned k = 0; k < 10 + i; k++)
		m[k] = (char)('a' + (i * 3 + k) % 26);
}

static void take_at_signed(enum smq_hook where)
{
	static char space[4][ESIZE];
	struct iovec bufs[4];
	size_t lens[4];
	char m[ESIZE];

	if (where != SMQ_HOOK_SIGNED || took)
		return;
	smq_test_hook = NULL;
	for (unsigned k = 0; k < 4; k++)
		bufs[k] = (struct iovec){ space[k], ESIZE };
	took = smq_receive_burst(burst_rx, bufs, 4, lens, NULL, 0);
	if (took != 3)
		FAIL("a burst receive at the signatures of a burst of 3 took "
		     "%d (%s)", took, took < 0 ? smq_strerror(took) : "");
	for (unsigned k = 0; k < 3; k++) {
		fill_msg(m, k);
		if (lens[k] != 10 + k || memcmp(space[k], m, lens[k]))
			FAIL("entry %u of a burst, signed, read %zu bytes "
			     "'%.*s': it was not whole when signed", k, lens[k],
			     (int)lens[k], space[k]);
	}
}

static void burst_signed(const char *spec, bool checksum)
{
	struct smq_window *w0, *w1;
	struct smq_queue *tx;
	static char m[3][ESIZE];
	struct iovec msgs[3];

	w0 = fresh(spec, 1, checksum, &w1);
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &burst_rx));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	/* a lap of the ring first: the slots hold older entries */
	for (int lap = 0; lap < 2; lap++) {
		for (unsigned k = 0; k < ENTRIES - 3; k++)
			OK(smq_send(tx, "older one", 9, 0));
		char buf[ESIZE];
		size_t n;
		while (!smq_receive(burst_rx, buf, sizeof(buf), &n, NULL, 0))
			;
		for (unsigned k = 0; k < 3; k++) {
			fill_msg(m[k], k);
			msgs[k] = (struct iovec){ m[k], 10 + k };
		}
		took = 0;
		smq_test_hook = take_at_signed;
		EXPECT(smq_send_burst(tx, msgs, 3, 0), 3);
		smq_test_hook = NULL;
		CHECK(took == 3);
	}
	burst_rx->look_all_at = 0;
	char buf[ESIZE];
	size_t n;
	EXPECT(smq_receive(burst_rx, buf, sizeof(buf), &n, NULL, 0), -EAGAIN);
	OK(smq_validate(w0, NULL, 0));
	OK(smq_queue_close(tx));
	OK(smq_queue_close(burst_rx));
	OK(smq_close(w1));
	OK(smq_close(w0));
}

/* ---- f. what a dead sender left, recovered whole at the next open ---- */

static const char *dying_spec;

static void die_signed(enum smq_hook where)
{
	if (where == SMQ_HOOK_SIGNED)
		raise(SIGKILL);
}

/* Board 1 sends a burst of 3 and is killed once they are signed, before
 * it stores top. */
static int dying_sender(void *arg)
{
	struct smq_window *w;
	struct smq_queue *tx;
	struct iovec m[3] = { { "d0", 2 }, { "d1", 2 }, { "d2", 2 } };

	(void)arg;
	OK(smq_open(dying_spec, 1, 0, &w));
	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &tx));
	smq_test_hook = die_signed;
	smq_send_burst(tx, m, 3, 0);
	return 1;  /* not reached */
}

static void recovered_whole(const char *spec)
{
	struct smq_window *w0, *w1;
	struct smq_queue *tx, *rx;
	struct smq_queue_info qi;
	char buf[16];
	size_t n;
	int st;

	dying_spec = spec;
	w0 = fresh(spec, 1, false, &w1);
	/* a sender of the board opened first: its open recovers nothing */
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	for (unsigned i = 0; i < ENTRIES - 3; i++)
		OK(smq_send(tx, "f", 1, 0));
	pid_t pid = test_fork(dying_sender, NULL);
	CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st));
	CHECK(lane(w0, 0).top == ENTRIES - 3);
	/* its send takes the lock over from the dead holder and recovers
	 * the burst, which fills the ring: nothing more is sent */
	EXPECT(smq_send(tx, "g", 1, 0), -EAGAIN);
	struct smq_lane_info li = lane(w0, 0);
	OK(smq_queue_info(w0, 0, &qi, sizeof(qi)));
	if (li.top != ENTRIES || li.messages != ENTRIES || qi.queued != ENTRIES)
		FAIL("a burst of 3 signed by a sender that died before its "
		     "top, recovered by a send that took its lock over: the "
		     "receiver's top %llu, %llu messages counted, %llu queued; "
		     "expected %d each", (unsigned long long)li.top,
		     (unsigned long long)li.messages,
		     (unsigned long long)qi.queued, ENTRIES);
	OK(smq_validate(w0, NULL, 0));
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &rx));
	for (unsigned i = 0; i < ENTRIES; i++) {
		OK(smq_receive(rx, buf, sizeof(buf), &n, NULL, 0));
		if (i < ENTRIES - 3)
			CHECK(n == 1 && buf[0] == 'f');
		else
			CHECK(n == 2 && buf[0] == 'd' &&
			      buf[1] == '0' + (int)(i - (ENTRIES - 3)));
	}
	EXPECT(smq_receive(rx, buf, sizeof(buf), &n, NULL, 0), -EAGAIN);
	OK(smq_queue_close(rx));
	OK(smq_queue_close(tx));
	OK(smq_close(w1));
	OK(smq_close(w0));
}

/* ---- g. the sending boards' turns ---- */

/* Receives one message: from which board, and its text (board, number). */
static unsigned take_from(struct smq_queue *rx, unsigned *num)
{
	char buf[16];
	size_t n;
	unsigned from = 99;

	OK(smq_receive(rx, buf, sizeof(buf), &n, &from, 0));
	CHECK(n == 2 && buf[0] == (char)('a' + from));
	*num = (unsigned)(buf[1] - '0');
	return from;
}

static void turns(const char *spec)
{
	struct smq_window *w[3];
	struct smq_queue *tx[3], *rx;
	static const uint16_t recv0[1];
	struct smq_shape sh = { { 3, 1, ENTRIES, ESIZE, recv0 }, NULL, 0,
				NULL, 0, 0, 0 };
	unsigned num, next[3] = { 0, 0, 0 };

	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE,
		    &w[0]));
	OK(smq_init_shape(w[0], &sh, sizeof(sh)));
	for (unsigned b = 1; b < 3; b++)
		OK(smq_open(spec, b, 0, &w[b]));
	for (unsigned b = 0; b < 3; b++) {
		OK(smq_queue_open(w[b], 0, SMQ_SENDER, 0, &tx[b]));
		for (unsigned i = 0; i < 6; i++) {
			char m[2] = { (char)('a' + b), (char)('0' + i) };
			OK(smq_send(tx[b], m, 2, 0));
		}
	}
	/* one message of each board in turn, each board's in its order */
	OK(smq_queue_open(w[0], 0, SMQ_RECEIVER, 0, &rx));
	for (unsigned i = 0; i < 4; i++) {
		unsigned from = take_from(rx, &num);
		if (from != i % 3 || num != next[from])
			FAIL("message %u of the queue came from board %u "
			     "(its number %u): the turn was board %u's", i,
			     from, num, i % 3);
		next[from]++;
	}
	/* a receiver opened anew goes on from the turn its queue keeps */
	OK(smq_queue_close(rx));
	OK(smq_queue_open(w[0], 0, SMQ_RECEIVER, 0, &rx));
	unsigned from = take_from(rx, &num);
	if (from != 1 || num != next[1])
		FAIL("a receiver opened anew took board %u's message first: "
		     "the turn kept in the queue was board 1's", from);
	next[1]++;
	/* a burst takes the run of the lane whose turn it is, then passes
	 * the turn */
	static char space[8][16];
	struct iovec bufs[8];
	size_t lens[8];
	unsigned senders[8];
	for (unsigned k = 0; k < 8; k++)
		bufs[k] = (struct iovec){ space[k], 16 };
	int got = smq_receive_burst(rx, bufs, 8, lens, senders, 0);
	if (got != 5 || senders[0] != 2)
		FAIL("a burst with board 2's turn took %d messages, the first "
		     "from board %u: expected board 2's 5", got, senders[0]);
	from = take_from(rx, &num);
	if (from != 0 || num != next[0])
		FAIL("after board 2's burst, board %u's message came: the turn "
		     "was board 0's", from);
	OK(smq_queue_close(rx));
	for (unsigned b = 0; b < 3; b++) {
		OK(smq_queue_close(tx[b]));
		OK(smq_close(w[b]));
	}
}

/* ---- e. a handle slot's queue ---- */

/* A stray write: a word of the window's file, through a mapping of its
 * own. */
static void poke32(const char *spec, uint64_t off, uint32_t v)
{
	int fd = open(test_path(spec), O_RDWR | O_CLOEXEC);
	long page = sysconf(_SC_PAGESIZE);
	uint64_t base = off & ~(uint64_t)(page - 1);

	if (fd < 0)
		FAIL("open %s", test_path(spec));
	uint8_t *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
			  MAP_SHARED, fd, (off_t)base);
	if (p == MAP_FAILED)
		FAIL("mmap %s", test_path(spec));
	memcpy(p + (off - base), &v, sizeof(v));
	munmap(p, (size_t)page);
	close(fd);
}

#define SLOT(b, i, field) (lay_ctl(b) + offsetof(struct smq_ctl, slot[i]) + \
			   offsetof(struct smq_handle_slot, field))

static void handle_queue(const char *spec)
{
	struct smq_window *w0, *w1;
	struct smq_window_info wi;
	struct smq_fault f;

	w0 = fresh(spec, 3, false, &w1);
	OK(smq_close(w1));
	OK(smq_window_info(w0, &wi, sizeof(wi)));
	uint32_t queues = wi.geometry.queues + wi.diag_queues;
	/* board 1's last slot: a queue handle of this generation, a sender */
	unsigned i = SMQ_SLOTS - 1;
	poke32(spec, SLOT(1, i, generation), (uint32_t)wi.generation);
	poke32(spec, SLOT(1, i, role), SMQ_SENDER);
	poke32(spec, SLOT(1, i, queue), queues - 1);
	poke32(spec, SLOT(1, i, kind), SMQ_SLOT_QUEUE);
	OK(smq_validate(w0, &f, sizeof(f)));
	/* one past the last queue */
	poke32(spec, SLOT(1, i, queue), queues);
	EXPECT(smq_validate(w0, &f, sizeof(f)), -SMQ_ECORRUPT);
	if (strcmp(f.field, "handle.queue") || f.value != queues ||
	    f.limit != queues - 1 || f.offset != SLOT(1, i, queue) ||
	    f.board != 1)
		FAIL("a handle slot naming queue %u of %u: the fault is field "
		     "%s at %#llx holding %llu (limit %llu, board %d)", queues,
		     queues, f.field, (unsigned long long)f.offset,
		     (unsigned long long)f.value, (unsigned long long)f.limit,
		     f.board);
	EXPECT(smq_open(spec, 1, 0, &w1), -SMQ_ECORRUPT);
	CHECK(w1 == NULL);
	poke32(spec, SLOT(1, i, queue), 0xfffffff0u);
	EXPECT(smq_validate(w0, &f, sizeof(f)), -SMQ_ECORRUPT);
	CHECK(!strcmp(f.field, "handle.queue"));
	/* a stale slot keeps the queue of the layout it opened under */
	poke32(spec, SLOT(1, i, generation), (uint32_t)wi.generation - 1);
	OK(smq_validate(w0, &f, sizeof(f)));
	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_close(w1));
	OK(smq_close(w0));
}

int main(void)
{
	const char *spec = test_window();

	look_after_arming(spec);
	printf("a. a message sent as a receiver armed its sleep, found by "
	       "the look after arming: no sleep, for a queue and a group; "
	       "room made as a sender armed its wait, found so too\n");
	group_retry(spec);
	printf("b. a group send's retry went to the pending member alone\n");
	loan_aborted(spec, false);
	loan_aborted(spec, true);
	printf("c. an aborted loan published nothing, with checksums and "
	       "without\n");
	burst_signed(spec, false);
	burst_signed(spec, true);
	printf("d. a burst's entries were whole when signed, with checksums "
	       "and without\n");
	handle_queue(spec);
	printf("e. a handle slot naming a queue past the last is damage\n");
	recovered_whole(spec);
	printf("f. a dead sender's signed burst, recovered by a send taking "
	       "its lock over, its top stored on both sides\n");
	turns(spec);
	printf("g. the sending boards of a queue took turns, the turn kept "
	       "across receivers and passed on after a burst\n");
	return 0;
}
