/* Bursts and loans, on a window with and without checksums: what a burst
 * sends and takes, where it stops, and what a loan publishes, gives back
 * and refuses. */
#include <sys/uio.h>
#include "testlib.h"

/* the least count of checks a run makes (246 here) */
TEST_FLOOR(240);

#define ENTRIES 16
#define SIZE 256

static struct smq_window *format(const char *spec, unsigned flags)
{
	struct smq_window *w;
	struct smq_shape sh = { { 1, 2, ENTRIES, SIZE, NULL }, NULL, flags, NULL, 0, 0, 0 };

	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE,
		    &w));
	OK(smq_init_shape(w, &sh, sizeof(sh)));
	return w;
}

static void fill(char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (char)(seed * 31 + i * 7);
}

static void bursts(struct smq_queue *tx, struct smq_queue *rx)
{
	char out[20][SIZE], in[20][SIZE];
	struct iovec msgs[20], bufs[20];
	size_t lens[20];
	unsigned from[20];

	for (unsigned i = 0; i < 20; i++) {
		fill(out[i], SIZE, i);
		msgs[i] = (struct iovec){ out[i], 10 + i };
		bufs[i] = (struct iovec){ in[i], SIZE };
	}
	/* 20 into a ring of 16: 16 go, the rest wait for the caller */
	EXPECT(smq_send_burst(tx, msgs, 20, 0), ENTRIES);
	EXPECT(smq_send_burst(tx, msgs + 16, 4, 0), -EAGAIN);
	/* a burst takes what is there, up to n */
	EXPECT(smq_receive_burst(rx, bufs, 5, lens, from, 0), 5);
	for (unsigned i = 0; i < 5; i++)
		CHECK(lens[i] == 10 + i && from[i] == 0 &&
		      !memcmp(in[i], out[i], lens[i]));
	EXPECT(smq_send_burst(tx, msgs + 16, 4, 0), 4);
	/* it stops before a message its buffer cannot hold (left queued) */
	bufs[3].iov_len = 10;
	EXPECT(smq_receive_burst(rx, bufs, 20, lens, NULL, 0), 3);
	for (unsigned i = 0; i < 3; i++)
		CHECK(lens[i] == 15 + i && !memcmp(in[i], out[5 + i], lens[i]));
	bufs[3].iov_len = SIZE;
	/* ...and the first too big is -EMSGSIZE with its size, still queued */
	bufs[0].iov_len = 3;
	EXPECT(smq_receive_burst(rx, bufs, 20, lens, NULL, 0), -EMSGSIZE);
	CHECK(lens[0] == 18);
	bufs[0].iov_len = SIZE;
	EXPECT(smq_receive_burst(rx, bufs, 20, lens, NULL, 0), 12);
	for (unsigned i = 0; i < 12; i++)
		CHECK(lens[i] == 18 + i && !memcmp(in[i], out[8 + i], lens[i]));
	EXPECT(smq_receive_burst(rx, bufs, 20, lens, NULL, 0), -EAGAIN);
	/* nothing is written when any message is bad */
	msgs[2].iov_len = SIZE + 1;
	EXPECT(smq_send_burst(tx, msgs, 4, 0), -EMSGSIZE);
	msgs[2].iov_len = 12;
	EXPECT(smq_receive_burst(rx, bufs, 20, lens, NULL, 0), -EAGAIN);
	EXPECT(smq_send_burst(tx, msgs, 0, 0), -EINVAL);
	EXPECT(smq_receive_burst(rx, bufs, 0, lens, NULL, 0), -EINVAL);
	/* a burst of one is a send */
	EXPECT(smq_send_burst(tx, msgs, 1, 0), 1);
	size_t len;
	OK(smq_receive(rx, in[0], SIZE, &len, NULL, 0));
	CHECK(len == 10 && !memcmp(in[0], out[0], 10));
}

static void loans(struct smq_window *w, struct smq_queue **txp,
		  struct smq_queue *rx, int checksum)
{
	struct smq_queue *tx = *txp;
	char out[SIZE], in[SIZE];
	size_t len;
	void *p;

	fill(out, SIZE, 99);
	/* through smq_loan_write, in pieces: works on either window */
	OK(smq_loan(tx, SIZE, &p, 0));
	CHECK(p != NULL);
	EXPECT(smq_send(tx, "x", 1, 0), -EINPROGRESS);
	EXPECT(smq_loan(tx, 1, &p, 0), -EINPROGRESS);
	OK(smq_loan_write(tx, 0, out, 100));
	OK(smq_loan_write(tx, 100, out + 100, 50));
	EXPECT(smq_loan_write(tx, 150, out, SIZE), -EMSGSIZE);
	EXPECT(smq_receive(rx, in, SIZE, &len, NULL, 0), -EAGAIN);
	EXPECT(smq_loan_submit(tx, SIZE + 1), -EMSGSIZE);
	OK(smq_loan_submit(tx, 150));
	OK(smq_receive(rx, in, SIZE, &len, NULL, 0));
	CHECK(len == 150 && !memcmp(in, out, 150));
	EXPECT(smq_loan_submit(tx, 1), -EINVAL);

	/* an abort publishes nothing; the next send takes the entry */
	OK(smq_loan(tx, 64, &p, 0));
	memset(p, 'A', 64);
	OK(smq_loan_abort(tx));
	EXPECT(smq_receive(rx, in, SIZE, &len, NULL, 0), -EAGAIN);
	OK(smq_send(tx, "after", 5, 0));
	OK(smq_receive(rx, in, SIZE, &len, NULL, 0));
	CHECK(len == 5 && !memcmp(in, "after", 5));

	/* written through the pointer: with checksums, nothing summed it */
	OK(smq_loan(tx, 64, &p, 0));
	memcpy(p, out, 64);
	if (checksum) {
		EXPECT(smq_loan_submit(tx, 64), -EINVAL);
		EXPECT(smq_loan_write(tx, 10, out, 4), -EINVAL);
		OK(smq_loan_abort(tx));
	} else {
		OK(smq_loan_submit(tx, 64));
		OK(smq_receive(rx, in, SIZE, &len, NULL, 0));
		CHECK(len == 64 && !memcmp(in, out, 64));
	}
	/* a handle closed with its loan held gives it back: the lane is
	 * free for the next sender, nothing was published */
	struct smq_queue *tx2;
	OK(smq_loan(tx, 64, &p, 0));
	OK(smq_queue_close(tx));
	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &tx2));
	OK(smq_send(tx2, "next", 4, 0));
	OK(smq_receive(rx, in, SIZE, &len, NULL, 0));
	CHECK(len == 4 && !memcmp(in, "next", 4));
	tx = *txp = tx2;
	/* an empty loan */
	OK(smq_loan(tx, 0, &p, 0));
	OK(smq_loan_submit(tx, 0));
	OK(smq_receive(rx, in, SIZE, &len, NULL, 0));
	CHECK(len == 0);
	/* a loan waits for room as a send does */
	for (unsigned i = 0; i < ENTRIES; i++)
		OK(smq_send(tx, out, 8, 0));
	EXPECT(smq_loan(tx, 8, &p, 0), -EAGAIN);
	CHECK(p == NULL);
	EXPECT(smq_loan(tx, 8, &p, 20), -ETIMEDOUT);
	for (unsigned i = 0; i < ENTRIES; i++)
		OK(smq_receive(rx, in, SIZE, &len, NULL, 0));
}

/* A loan held is a call in flight: init waits for it, and gives up
 * (-SMQ_EHELD, the window as it was) when the handshake times out. */
static void held(struct smq_window *w, struct smq_queue *tx,
		 struct smq_queue *rx)
{
	struct smq_shape sh = { { 1, 2, ENTRIES, SIZE, NULL }, NULL, 0, NULL, 0, 0, 0 };
	struct smq_window_info before, after;
	struct smq_holdout h;
	char in[SIZE];
	size_t len;
	void *p;

	struct smq_queue_info q0, qi;
	OK(smq_window_info(w, &before, sizeof(before)));
	OK(smq_queue_info(w, 0, &q0, sizeof(q0)));
	OK(smq_loan(tx, 5, &p, 0));
	OK(smq_loan_write(tx, 0, "loan!", 5));
	OK(smq_set_timeout(w, SMQ_TIMEOUT_HANDSHAKE, 200));
	EXPECT(smq_init_shape(w, &sh, sizeof(sh)), -SMQ_EHELD);
	OK(smq_holdout(w, &h, sizeof(h)));
	CHECK(h.board == 0 && h.pid == (uint32_t)getpid());
	OK(smq_window_info(w, &after, sizeof(after)));
	CHECK(after.generation == before.generation);
	/* a clear of its queue alone waits for it too */
	EXPECT(smq_clear(w, 0), -SMQ_EHELD);
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	CHECK(qi.epoch == q0.epoch);
	OK(smq_window_info(w, &after, sizeof(after)));
	CHECK(after.generation == before.generation && after.maint_phase == 0);
	OK(smq_loan_submit(tx, 5));
	OK(smq_receive(rx, in, SIZE, &len, NULL, 0));
	CHECK(len == 5 && !memcmp(in, "loan!", 5));
}

int main(void)
{
	const char *spec = test_window();

	for (int checksum = 0; checksum < 2; checksum++) {
		struct smq_window *w = format(spec,
			checksum ? SMQ_SHAPE_CHECKSUM : 0);
		struct smq_queue *tx, *rx;
		OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &tx));
		OK(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &rx));
		bursts(tx, rx);
		loans(w, &tx, rx, checksum);
		if (!checksum)
			held(w, tx, rx);
		struct smq_queue_info qi;
		OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
		CHECK(qi.corrupt == 0 && qi.sent == qi.received);
		OK(smq_queue_close(tx));
		OK(smq_queue_close(rx));
		OK(smq_validate(w, NULL, 0));
		OK(smq_close(w));
	}
	return 0;
}
