/* Opening a queue checks what it will read and write as validation does,
 * and a window that fails gets no write.
 *
 * a. A lane damaged one field at a time, as a stray write leaves it: the
 *    receiver's bottom below the sender's copy of it (the case dump saw
 *    as lane.flow_bottom while a receive took a message again and wrote
 *    the evidence over), lane_in.top or lane_out.top out of their bounds,
 *    the sender's copy of bottom far behind, the queue's epoch past the
 *    last one handed out or a sender's copy of it that disagrees, and the
 *    receive area's index, cursor and waiting word.  Each open that would
 *    read or write that lane is refused with validation's error, every
 *    byte of the window as it was, and smq_validate() names the field.
 *    The window put back, both open.
 * b. What a process that died leaves half done is no damage: a receiver
 *    that died between its two bottom writes (the copy one take behind),
 *    a sender between its two top writes (the receiver's copy behind):
 *    the opens take them, and finish them.
 * c. A lane in use is never damage: while a board streams bursts to a
 *    receiver taking bursts, other processes open the queue as senders
 *    of the same lane and of another, and as receivers (-EBUSY), for a
 *    while: never refused as damaged.
 * d. Nor is a lane whose sender publishes between an open's reads: held
 *    at its look (SMQ_HOOK_OPEN_LOOK), all but its second read of
 *    lane_in.top made, the open opens, as receiver and as sender. */
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include "testint.h"
#include "testlib.h"

#ifndef SMQ_COUNT_FAR
#error "t_open_check needs the test build's hooks (SMQ_COUNT_FAR)"
#endif

#define BOARDS 3
#define ENTRIES 8
#define ESIZE 64

static const char *spec;
static struct smq_window *w[BOARDS];

/* ---- stray writes ---- */

static uint64_t peek64(uint64_t off)
{
	size_t len;
	uint8_t *snap = test_snapshot(spec, &len);
	uint64_t v;

	memcpy(&v, snap + off, sizeof(v));
	free(snap);
	return v;
}

static void poke(uint64_t off, const void *v, size_t n)
{
	int fd = open(test_path(spec), O_RDWR | O_CLOEXEC);

	if (fd < 0 || pwrite(fd, v, n, (off_t)off) != (ssize_t)n)
		FAIL("cannot write %s at %llu", test_path(spec),
		     (unsigned long long)off);
	close(fd);
}

static void poke64(uint64_t off, uint64_t v) { poke(off, &v, sizeof(v)); }
static void poke32(uint64_t off, uint32_t v) { poke(off, &v, sizeof(v)); }

/* ---- where the words of queue 1's lane of board 0 lie ---- */

static const struct smq_layout *lay(void) { return &w[0]->lay; }
#define Q 1                     /* received by board 1 */
#define S 0                     /* the damaged lane's board */
static uint64_t at_bottom(void)
{
	return lay_bottoms(lay(), Q) + 8ull * lay_lane(lay(), Q, S);
}
static uint64_t at_flow_bottom(void) { return lay_lane_fc(lay(), S, Q); }
static uint64_t at_top(void) { return lay_lane_in(lay(), Q, S); }
static uint64_t at_sender_top(void) { return lay_lane_out(lay(), S, Q); }
static uint64_t at_epoch(void)
{
	return lay()->rx[Q] + offsetof(struct smq_rx, epoch);
}
static uint64_t at_queue_epoch(unsigned s)
{
	return lay_lane_wake(lay(), s, Q) +
	       offsetof(struct smq_lane_wake, queue_epoch);
}
#define AT_EPOCH_LAST offsetof(struct smq_sb, epoch_last)

/* ---- the opens ---- */

/* Opening queue Q as role on board b: want, and no byte of the window
 * changed when want is an error; a handle opened is closed. */
static void open_as(unsigned b, enum smq_role role, int want,
		    const char *what)
{
	struct smq_queue *q = (void *)1;
	size_t len;

	/* a handle slot of board b freed naming another queue: an open that
	 * claims it before it refuses changes it */
	OK(smq_queue_open(w[b], 0, SMQ_SENDER, 0, &q));
	OK(smq_queue_close(q));
	uint8_t *snap = test_snapshot(spec, &len);
	int err = smq_queue_open(w[b], Q, role, 0, &q);
	char words[200];

	if (err != want)
		FAIL("%s: board %u opening queue %d as %s returned %d (%s), "
		     "expected %d (%s)", what, b, Q,
		     role == SMQ_SENDER ? "sender" : "receiver", err,
		     smq_strerror(err), want, smq_strerror(want));
	TEST_COUNT();
	if (err) {
		CHECK(q == NULL);
		snprintf(words, sizeof(words), "%s: board %u's refused open as "
			 "%s", what, b,
			 role == SMQ_SENDER ? "sender" : "receiver");
		test_same(snap, len, spec, words);
	} else {
		OK(smq_queue_close(q));
	}
	free(snap);
}

/* Who opens queue Q in a case: its receiver (board 1), the sender of the
 * damaged lane (board 0), the sender of another lane (board 2). */
#define RX 1u
#define TX_LANE 2u
#define TX_OTHER 4u
#define ALL (RX | TX_LANE | TX_OTHER)

/* Validation names field; the opens in mask are refused with its error,
 * writing nothing, and the others open. */
static void refused(const char *field, unsigned mask, const char *what)
{
	struct smq_fault f;
	int err = smq_validate(w[0], &f, sizeof(f));

	if (err != -SMQ_ECORRUPT || strcmp(f.field, field))
		FAIL("%s: validation says %d (%s), field %s; expected "
		     "SMQ_ECORRUPT, field %s", what, err, smq_strerror(err),
		     f.field, field);
	open_as(1, SMQ_RECEIVER, mask & RX ? -SMQ_ECORRUPT : 0, what);
	open_as(S, SMQ_SENDER, mask & TX_LANE ? -SMQ_ECORRUPT : 0, what);
	open_as(2, SMQ_SENDER, mask & TX_OTHER ? -SMQ_ECORRUPT : 0, what);
}

/* Every open of queue Q succeeds; validation finds nothing. */
static void opens(const char *what)
{
	struct smq_fault f;
	int err = smq_validate(w[0], &f, sizeof(f));

	if (err)
		FAIL("%s: validation says %d (%s), field %s", what, err,
		     smq_strerror(err), f.field);
	open_as(1, SMQ_RECEIVER, 0, what);
	open_as(S, SMQ_SENDER, 0, what);
	open_as(2, SMQ_SENDER, 0, what);
}

/* One word damaged, the opens in mask refused, the word put back. */
static void damaged64(uint64_t off, uint64_t v, const char *field,
		      unsigned mask, const char *what)
{
	uint64_t was = peek64(off);

	poke64(off, v);
	refused(field, mask, what);
	poke64(off, was);
	opens(what);
}

static void damaged32(uint64_t off, uint32_t v, const char *field,
		      unsigned mask, const char *what)
{
	uint64_t was = peek64(off);

	poke32(off, v);
	refused(field, mask, what);
	poke64(off, was);
	opens(what);
}

/* Board s sends n messages on queue Q, each taken at once unless keep. */
static void traffic(unsigned s, unsigned n, bool keep)
{
	struct smq_queue *tx, *rx;
	char buf[ESIZE];
	size_t len;

	OK(smq_queue_open(w[s], Q, SMQ_SENDER, 0, &tx));
	OK(smq_queue_open(w[1], Q, SMQ_RECEIVER, 0, &rx));
	for (unsigned i = 0; i < n; i++) {
		OK(smq_send(tx, "message", 7, 0));
		if (!keep)
			OK(smq_receive(rx, buf, sizeof(buf), &len, NULL, 0));
	}
	OK(smq_queue_close(rx));
	OK(smq_queue_close(tx));
}

static void damage(void)
{
	/* board 0's lane: 21 sent, 20 taken; board 2's: 1 sent, taken */
	traffic(S, 20, false);
	traffic(2, 1, false);
	traffic(S, 1, true);
	uint64_t b = peek64(at_bottom()), top = peek64(at_top());
	CHECK(b == 20 && top == 21 && peek64(at_flow_bottom()) == 20 &&
	      peek64(at_sender_top()) == 21);
	opens("the lane as traffic left it");

	damaged64(at_bottom(), b - 1, "lane.flow_bottom", RX | TX_LANE,
		  "bottom[k] one below the sender's copy of it");
	/* the same in the queue's last lane, board 2's */
	uint64_t last = lay_bottoms(lay(), Q) + 8ull * lay_lane(lay(), Q, 2);
	damaged64(last, peek64(last) - 1, "lane.flow_bottom",
		  RX | TX_OTHER, "board 2's bottom[k] one below its copy");
	damaged64(at_top(), b + ENTRIES + 1, "lane.top", RX | TX_LANE,
		  "lane_in.top more than a ring past bottom[k]");
	damaged64(at_top(), b - ENTRIES - 1, "lane.top", RX | TX_LANE,
		  "lane_in.top more than a ring below bottom[k]");
	damaged64(at_sender_top(), top - 1, "lane.sender_top", RX | TX_LANE,
		  "lane_out.top below lane_in.top");
	/* more than a ring past top, a ring at most past bottom */
	poke64(at_bottom(), b + ENTRIES);
	poke64(at_sender_top(), top + ENTRIES + 1);
	refused("lane.sender_top", RX | TX_LANE,
		"lane_out.top more than a ring past lane_in.top");
	poke64(at_sender_top(), top);
	poke64(at_bottom(), b);
	opens("lane_out.top and bottom[k] put back");
	damaged64(at_flow_bottom(), top - 2 * ENTRIES - 1, "lane.sender_top",
		  RX | TX_LANE,
		  "lane_fc.bottom more than two rings behind lane_out.top");

	uint64_t epoch = peek64(at_epoch());
	last = peek64(AT_EPOCH_LAST);
	CHECK(epoch && epoch <= last);
	/* every copy of the epoch moved past the last one handed out */
	for (unsigned s = 0; s < BOARDS; s++)
		poke64(at_queue_epoch(s), last + 1);
	poke64(at_epoch(), last + 1);
	refused("queue.epoch", ALL,
		"the queue's epoch past the last one handed out");
	poke64(at_epoch(), epoch);
	for (unsigned s = 0; s < BOARDS; s++)
		poke64(at_queue_epoch(s), epoch);
	opens("the epochs put back");
	damaged64(at_queue_epoch(S), epoch + 1, "lane.queue_epoch",
		  RX | TX_LANE, "a sender's copy of the epoch that disagrees");

	/* the receive area, which attaching checked: damaged since; only
	 * the receiver reads it */
	uint64_t rx = lay()->rx[Q];
	damaged32(rx + offsetof(struct smq_rx, index), Q + 1, "queue.index",
		  RX, "the receive area's index");
	damaged32(rx + offsetof(struct smq_rx, cursor), BOARDS, "queue.cursor",
		  RX, "the receive area's cursor past the last lane");
	damaged32(lay_rx_info(lay(), Q) + offsetof(struct smq_rx_info, waiting),
		  2, "rx_info.waiting", RX, "rx_info.waiting neither 0 nor 1");
}

/* ---- b. half done, not damage ---- */

static void half_done(void)
{
	uint64_t b = peek64(at_bottom()), top = peek64(at_top());

	/* a receiver that died between bottom[k] and the sender's copy */
	poke64(at_flow_bottom(), b - 1);
	opens("a receiver died between its two bottom writes");
	CHECK(peek64(at_flow_bottom()) == b);   /* the receiver's open */
	/* a sender that died between its top and the receiver's copy */
	poke64(at_top(), top - 1);
	opens("a sender died between its two top writes");
	CHECK(peek64(at_top()) == top);         /* the sender's open */
}

/* ---- d. the lane moves between an open's reads ---- */

static struct smq_queue *mover;
static int looks;

/* At the open's look, all but its second read of lane_in.top made: the
 * lane's sender publishes more. */
static void send_at_look(enum smq_hook where)
{
	if (where != SMQ_HOOK_OPEN_LOOK || looks++)
		return;
	for (int i = 0; i < ENTRIES / 2; i++)
		OK(smq_send(mover, "moving", 6, 0));
}

static void moving(void)
{
	struct smq_queue *rx;
	char buf[ESIZE];
	size_t len;

	OK(smq_queue_open(w[1], Q, SMQ_RECEIVER, 0, &rx));
	while (!smq_receive(rx, buf, sizeof(buf), &len, NULL, 0))
		;
	OK(smq_queue_close(rx));
	OK(smq_queue_open(w[S], Q, SMQ_SENDER, 0, &mover));
	for (unsigned b = 1; b < BOARDS; b++) {
		enum smq_role role = b == 1 ? SMQ_RECEIVER : SMQ_SENDER;
		struct smq_queue *q;
		unsigned opener = b == 1 ? 1 : S;
		looks = 0;
		smq_test_hook = send_at_look;
		int err = smq_queue_open(w[opener], Q, role, 0, &q);
		smq_test_hook = NULL;
		if (err)
			FAIL("board %u's open as %s, its lane moving between "
			     "its reads: %s", opener, role == SMQ_SENDER ?
			     "sender" : "receiver", smq_strerror(err));
		CHECK(looks >= 1);   /* the first, at board 0's lane */
		OK(smq_queue_close(q));
		OK(smq_queue_open(w[1], Q, SMQ_RECEIVER, 0, &rx));
		while (!smq_receive(rx, buf, sizeof(buf), &len, NULL, 0))
			;
		OK(smq_queue_close(rx));
	}
	OK(smq_queue_close(mover));
	OK(smq_validate(w[0], NULL, 0));
}

/* ---- c. a lane in use ---- */

static int streamer(void *arg)
{
	struct smq_window *sw;
	struct smq_queue *tx;
	static char m[4][16];
	struct iovec v[4];

	(void)arg;
	for (unsigned k = 0; k < 4; k++)
		v[k] = (struct iovec){ m[k], 1 + k };
	OK(smq_open(spec, S, 0, &sw));
	OK(smq_queue_open(sw, Q, SMQ_SENDER, 0, &tx));
	for (;;) {
		unsigned k = 1 + (unsigned)(random() % 4);
		int n = smq_send_burst(tx, v, k, 100);
		if (n < 0 && n != -ETIMEDOUT)
			FAIL("the streaming sender: %s", smq_strerror(n));
	}
}

static int taker(void *arg)
{
	struct smq_window *rw;
	struct smq_queue *rx;
	static char space[5][ESIZE];
	struct iovec bufs[5];
	size_t lens[5];

	(void)arg;
	for (unsigned k = 0; k < 5; k++)
		bufs[k] = (struct iovec){ space[k], ESIZE };
	OK(smq_open(spec, 1, 0, &rw));
	OK(smq_queue_open(rw, Q, SMQ_RECEIVER, 0, &rx));
	for (;;) {
		unsigned k = 1 + (unsigned)(random() % 5);
		int n = smq_receive_burst(rx, bufs, k, lens, NULL, 100);
		if (n < 0 && n != -ETIMEDOUT)
			FAIL("the taking receiver: %s", smq_strerror(n));
	}
}

static uint64_t received(void)
{
	struct smq_queue_info qi;

	OK(smq_queue_info(w[0], Q, &qi, sizeof(qi)));
	return qi.received;
}

static void in_use(void)
{
	struct test_budget budget;
	uint64_t done = 0, busy = 0;

	pid_t st = test_fork(streamer, NULL), tk = test_fork(taker, NULL);
	uint64_t before = received();
	WAIT_UNTIL(received() > before + 100, 30, "the stream to begin");
	test_budget(&budget, 2.0, 300, 1000000);
	for (; test_going(&budget, done); done++) {
		struct smq_queue *q;
		unsigned b = done % 3 == 0 ? S : 2;
		int err = smq_queue_open(w[b], Q, SMQ_SENDER, 0, &q);
		if (err)
			FAIL("board %u's open as a sender of a lane in use: %s",
			     b, smq_strerror(err));
		OK(smq_queue_close(q));
		err = smq_queue_open(w[1], Q, SMQ_RECEIVER, 0, &q);
		if (err != -EBUSY)
			FAIL("an open as a second receiver of a queue in "
			     "use: %d (%s), expected -EBUSY", err,
			     smq_strerror(err));
		busy++;
	}
	uint64_t moved = received() - before;
	kill(st, SIGKILL);
	kill(tk, SIGKILL);
	waitpid(st, NULL, 0);
	waitpid(tk, NULL, 0);
	printf("c. %llu opens beside a lane moving %llu messages: none "
	       "refused as damaged\n", (unsigned long long)(done + busy),
	       (unsigned long long)moved);
	test_work("opens of a lane in use", done, 300);
}

int main(void)
{
	spec = test_window();
	w[0] = test_init(spec, BOARDS, 3, ENTRIES, ESIZE);
	for (unsigned b = 1; b < BOARDS; b++)
		OK(smq_open(spec, b, 0, &w[b]));
	damage();
	printf("a. every damaged field refused the opens that use it, "
	       "nothing written, validation naming it\n");
	half_done();
	printf("b. what a dead receiver or sender left half done opened, "
	       "and was finished\n");
	moving();
	printf("d. a lane whose sender published between an open's reads "
	       "opened, as receiver and as sender\n");
	in_use();
	for (unsigned b = 0; b < BOARDS; b++)
		OK(smq_close(w[b]));
	return 0;
}
