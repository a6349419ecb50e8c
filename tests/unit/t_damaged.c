/* Bursts and group receives over damaged entries (the window feature
 * "checksum").  Damage comes as a stray write would: bytes of the window
 * flipped through a mapping of its own, never through the library.
 *
 * A burst receive takes the whole entries of a lane up to the first that
 * fails its check, which the next call refuses alone (SMQ_EPAYLOAD, its
 * size and sender said, taken off and counted as corrupt); the call after
 * goes on with the next one.  A damaged payload, check or size, first in
 * a burst or in its middle: every good message is delivered once, in its
 * order, and no damaged one is.
 *
 * A group receive meets a damaged entry of one member as a receive of
 * that member does (SMQ_EPAYLOAD naming the member's queue), and the turn
 * passes on: the other members' messages come in their rotating order,
 * and the damaged member's next message in its turn; smq_group_peek the
 * same. */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include "testint.h"
#include "testlib.h"

TEST_FLOOR(75);

#define ESIZE 128
#define ENTRIES 16

/* A stray write: the bytes of the window's file at off xor'ed with mask,
 * through a mapping of the file of its own. */
static void flip(const char *spec, uint64_t off, uint8_t mask)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t base = off & ~(uint64_t)(page - 1);
	int fd = open(test_path(spec), O_RDWR | O_CLOEXEC);

	if (fd < 0)
		FAIL("open %s: %s", test_path(spec), strerror(errno));
	uint8_t *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
			  MAP_SHARED, fd, (off_t)base);
	if (p == MAP_FAILED)
		FAIL("mmap %s: %s", test_path(spec), strerror(errno));
	p[off - base] ^= mask;
	munmap(p, (size_t)page);
	close(fd);
}

/* Where a byte of entry seq of board s's lane of queue q lies. */
static uint64_t entry_at(struct smq_window *w, unsigned q, unsigned s,
			 uint64_t seq, uint64_t off)
{
	return lay_entry(&w->lay, q, s, seq) + off;
}
#define PAYLOAD(k) (SMQ_ENTRY_HEADER + (k))
#define SIZE_FIELD offsetof(struct smq_entry, size)
#define CHECK_FIELD offsetof(struct smq_entry, check)

/* Message i: its length and bytes. */
static size_t msg_len(unsigned i)
{
	return 20 + (i * 7) % 90;
}

static void msg_fill(uint8_t *m, unsigned i)
{
	for (size_t k = 0; k < msg_len(i); k++)
		m[k] = (uint8_t)(i * 37 + k * 11 + 1);
}

static void send_msg(struct smq_queue *tx, unsigned i)
{
	uint8_t m[ESIZE];

	msg_fill(m, i);
	OK(smq_send(tx, m, msg_len(i), 0));
}

/* The burst in bufs[0..n) holds messages first, first + 1, ... */
static void expect_burst(const struct iovec *bufs, const size_t *lens,
			 const unsigned *from, int n, unsigned first)
{
	uint8_t m[ESIZE];

	for (int k = 0; k < n; k++) {
		msg_fill(m, first + (unsigned)k);
		if (lens[k] != msg_len(first + (unsigned)k) || from[k] != 1 ||
		    memcmp(bufs[k].iov_base, m, lens[k]))
			FAIL("burst entry %d: %zu bytes from board %u, "
			     "expected message %u (%zu bytes from board 1)",
			     k, lens[k],
			     from[k], first + (unsigned)k,
			     msg_len(first + (unsigned)k));
	}
}

/* A burst receive's result: want messages (or a negative error). */
static void want_burst(int got, int want, const char *what)
{
	TEST_COUNT();
	if (got != want)
		FAIL("%s: the burst returned %d%s%s, expected %d%s%s", what,
		     got, got < 0 ? " " : " messages",
		     got < 0 ? smq_strerror(got) : "", want,
		     want < 0 ? " " : " messages",
		     want < 0 ? smq_strerror(want) : "");
}

static int burst(struct smq_queue *rx, struct iovec *bufs, size_t *lens,
		 unsigned *from)
{
	for (unsigned k = 0; k < ENTRIES; k++) {
		memset(bufs[k].iov_base, 0xcb, ESIZE);
		lens[k] = (size_t)-1;
		from[k] = 99;
	}
	return smq_receive_burst(rx, bufs, ENTRIES, lens, from, 0);
}

/* Messages 0..9 of board 1 on queue 0: 2 payload, 4 check, 5 payload
 * (two damaged in a row), 7 size, damaged; then one more burst whose
 * first entry is damaged. */
static void bursts(const char *spec)
{
	static uint8_t space[ENTRIES][ESIZE];
	struct iovec bufs[ENTRIES];
	size_t lens[ENTRIES];
	unsigned from[ENTRIES];
	struct smq_window *w0, *w1;
	struct smq_queue *rx, *tx;
	struct smq_queue_info qi;

	for (unsigned k = 0; k < ENTRIES; k++)
		bufs[k] = (struct iovec){ space[k], ESIZE };
	w0 = test_init(spec, 2, 1, ENTRIES, ESIZE);
	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &rx));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	for (unsigned i = 0; i < 10; i++)
		send_msg(tx, i);
	flip(spec, entry_at(w0, 0, 1, 2, PAYLOAD(5)), 0x04);
	flip(spec, entry_at(w0, 0, 1, 4, CHECK_FIELD + 1), 0x40);
	flip(spec, entry_at(w0, 0, 1, 5, PAYLOAD(msg_len(5) - 1)), 0x80);
	/* a size still within the entry, so only the check tells */
	flip(spec, entry_at(w0, 0, 1, 7, SIZE_FIELD), 0x01);

	int n = burst(rx, bufs, lens, from);
	want_burst(n, 2, "messages 0 and 1, before the damaged 2");
	expect_burst(bufs, lens, from, n, 0);
	want_burst(burst(rx, bufs, lens, from), -SMQ_EPAYLOAD,
		   "message 2, its payload damaged");
	CHECK(lens[0] == msg_len(2) && from[0] == 1);
	want_burst(n = burst(rx, bufs, lens, from), 1,
		   "message 3, before the damaged 4");
	expect_burst(bufs, lens, from, n, 3);
	want_burst(burst(rx, bufs, lens, from), -SMQ_EPAYLOAD,
		   "message 4, its check damaged");
	CHECK(lens[0] == msg_len(4) && from[0] == 1);
	want_burst(burst(rx, bufs, lens, from), -SMQ_EPAYLOAD,
		   "message 5, its payload damaged");
	CHECK(lens[0] == msg_len(5) && from[0] == 1);
	want_burst(n = burst(rx, bufs, lens, from), 1,
		   "message 6, before the damaged 7");
	expect_burst(bufs, lens, from, n, 6);
	want_burst(burst(rx, bufs, lens, from), -SMQ_EPAYLOAD,
		   "message 7, its size damaged");
	CHECK(lens[0] == (msg_len(7) ^ 1) && from[0] == 1);
	want_burst(n = burst(rx, bufs, lens, from), 2, "messages 8 and 9");
	expect_burst(bufs, lens, from, n, 8);
	want_burst(burst(rx, bufs, lens, from), -EAGAIN, "an empty queue");

	/* the first of a burst damaged: refused alone, the rest follow */
	for (unsigned i = 10; i < 14; i++)
		send_msg(tx, i);
	flip(spec, entry_at(w0, 0, 1, 10, PAYLOAD(0)), 0x01);
	want_burst(burst(rx, bufs, lens, from), -SMQ_EPAYLOAD,
		   "message 10, first of the burst, damaged");
	CHECK(lens[0] == msg_len(10) && from[0] == 1);
	want_burst(n = burst(rx, bufs, lens, from), 3, "messages 11 to 13");
	expect_burst(bufs, lens, from, n, 11);
	want_burst(burst(rx, bufs, lens, from), -EAGAIN, "an empty queue");

	OK(smq_queue_info(w0, 0, &qi, sizeof(qi)));
	if (qi.corrupt != 5 || qi.received != 9)
		FAIL("after 5 damaged and 9 good messages the queue counts "
		     "%llu corrupt and %llu received",
		     (unsigned long long)qi.corrupt,
		     (unsigned long long)qi.received);
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_close(w1));
	OK(smq_close(w0));
}

/* Receives from g into a guarded buffer: the error, with the message's
 * queue; a message must be number want of queue wq. */
static int group_take(struct smq_group *g, unsigned *queue, int want,
		      unsigned wq)
{
	uint8_t buf[ESIZE], m[ESIZE];
	size_t len = (size_t)-1;
	unsigned from = 99;

	*queue = 99;
	int err = smq_group_receive(g, buf, sizeof(buf), &len, &from, queue, 0);
	if (!err) {
		msg_fill(m, (unsigned)want);
		if (*queue != wq || from != 1 ||
		    len != msg_len((unsigned)want) || memcmp(buf, m, len))
			FAIL("group receive: %zu bytes of queue %u from board "
			     "%u, expected message %d of queue %u", len, *queue,
			     from, want, wq);
	}
	return err;
}

/* Queues 0, 1 and 2, all received by board 0, in one group; board 1
 * sends messages 3q and 3q + 1 and 3q + 2 on queue q.  Damaged: the first
 * of queue 1, the second of queue 2 (met by a peek). */
static void group(const char *spec)
{
	const unsigned members[] = { 0, 1, 2 };
	struct smq_window *w0, *w1;
	struct smq_queue *tx[3];
	struct smq_group *g;
	struct smq_queue_info qi;
	unsigned queue;
	const void *data;
	size_t len;
	unsigned from;

	/* every queue received by board 0 */
	struct smq_shape sh = {
		{ 2, 3, ENTRIES, ESIZE, (const uint16_t[]){ 0, 0, 0 } }, NULL,
		SMQ_SHAPE_CHECKSUM, NULL, 0, 0, 0
	};
	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE,
		    &w0));
	OK(smq_init_shape(w0, &sh, sizeof(sh)));
	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_group_open_queues(w0, members, 3, SMQ_RECEIVER, 0, &g));
	for (unsigned q = 0; q < 3; q++) {
		OK(smq_queue_open(w1, q, SMQ_SENDER, 0, &tx[q]));
		for (unsigned i = 0; i < 3; i++)
			send_msg(tx[q], 3 * q + i);
	}
	flip(spec, entry_at(w0, 1, 1, 0, PAYLOAD(3)), 0x10);
	flip(spec, entry_at(w0, 2, 1, 1, PAYLOAD(msg_len(7) / 2)), 0x02);

	/* in turn: 0, then 1 (refused), 2, 0, 1, 2 (peeked, refused), 0,
	 * 1, then nothing */
	OK(group_take(g, &queue, 0, 0));
	EXPECT(group_take(g, &queue, 0, 0), -SMQ_EPAYLOAD);
	CHECK(queue == 1);
	OK(group_take(g, &queue, 6, 2));
	OK(group_take(g, &queue, 1, 0));
	OK(group_take(g, &queue, 4, 1));
	len = (size_t)-1;
	from = 99;
	EXPECT(smq_group_peek(g, &data, &len, &from, &queue, 0),
	       -SMQ_EPAYLOAD);
	CHECK(queue == 2 && from == 1 && len == msg_len(7));
	EXPECT(smq_group_commit(g), -ENOMSG);
	OK(group_take(g, &queue, 2, 0));
	OK(group_take(g, &queue, 5, 1));
	OK(group_take(g, &queue, 8, 2));
	EXPECT(group_take(g, &queue, 0, 0), -EAGAIN);

	uint64_t corrupt = 0, received = 0;
	for (unsigned q = 0; q < 3; q++) {
		OK(smq_queue_info(w0, q, &qi, sizeof(qi)));
		corrupt += qi.corrupt;
		received += qi.received;
	}
	if (corrupt != 2 || received != 7)
		FAIL("after 2 damaged and 7 good messages the group's queues "
		     "count %llu corrupt and %llu received",
		     (unsigned long long)corrupt, (unsigned long long)received);
	for (unsigned q = 0; q < 3; q++)
		OK(smq_queue_close(tx[q]));
	OK(smq_group_close(g));
	OK(smq_close(w1));
	OK(smq_close(w0));
}

int main(void)
{
	const char *spec = test_window();

	setenv("SMQ_TEST_CHECKSUM", "1", 1);
	bursts(spec);
	printf("burst receives over damaged entries: each refused alone, "
	       "the good ones delivered in order\n");
	group(spec);
	printf("group receives over damaged entries: each refused naming "
	       "its queue, the others in their turn\n");
	return 0;
}
