/* A handle serves the process that opened it.  After fork(), every call
 * on a window, queue or group handle the child inherited is refused with
 * -EBADF, closing included, and writes nothing: the parent's receiver
 * claim, its loan and its group stay its own, and it goes on receiving.
 * The child opens a window of its own and works with that; a receiver
 * there is refused while the parent holds the queue.  And a second
 * receiver of one process is refused in words that say so. */
#include <sys/uio.h>
#include "testlib.h"
TEST_FLOOR(44);

#define QUEUES 4
#define ESIZE 64

static const char *spec;

/* What the parent holds when it forks. */
struct held {
	struct smq_window *w, *mon;
	struct smq_queue *rx, *tx, *loaner;
	struct smq_group *g, *gs;
	void *loan;
};

static struct smq_window *format(void)
{
	static const uint32_t members[] = { 2, 3 };
	static const struct smq_group_def groups[] = { { "pair", members, 2 } };
	struct smq_shape sh = { { 1, QUEUES, 8, ESIZE, NULL }, NULL,
				SMQ_SHAPE_SCRATCH, groups, 1, 0, 0 };
	struct smq_window *w;

	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE,
		    &w));
	OK(smq_init_shape(w, &sh, sizeof(sh)));
	return w;
}

/* Every call on the window handle (and on a monitor's) in the child. */
static void window_calls(struct smq_window *w)
{
	struct smq_geometry g = { 1, QUEUES, 8, ESIZE, NULL };
	struct smq_shape sh = { g, NULL, 0, NULL, 0, 0, 0 };
	struct smq_holdout h;
	struct smq_emptied e;
	struct smq_window_info wi;
	struct smq_board_info bi;
	struct smq_queue_info qi;
	struct smq_lane_info li;
	struct smq_group_info gi;
	struct smq_worker wk[4];
	struct smq_journal_cursor c = { 0 };
	struct smq_journal_entry je;
	struct smq_fault f;
	struct smq_map_result mr;
	struct smq_queue *q = NULL;
	struct smq_group *gr = NULL;
	const unsigned one[] = { 1 };
	char buf[16] = "0123456789";

	EXPECT(smq_set_mode(w, 0600), -EBADF);
	EXPECT(smq_set_timeout(w, SMQ_TIMEOUT_HANDSHAKE, 10), -EBADF);
	EXPECT(smq_holdout(w, &h, sizeof(h)), -EBADF);
	EXPECT(smq_emptied(w, &e, sizeof(e)), -EBADF);
	EXPECT(smq_init(w, &g, sizeof(g)), -EBADF);
	EXPECT(smq_init_shape(w, &sh, sizeof(sh)), -EBADF);
	EXPECT(smq_init_dry_run(w, &sh, sizeof(sh)), -EBADF);
	EXPECT(smq_clear(w, -1), -EBADF);
	EXPECT(smq_clear(w, 0), -EBADF);
	EXPECT(smq_clear_dry_run(w, -1), -EBADF);
	EXPECT(smq_announce(w), -EBADF);
	EXPECT(smq_synchronize(w, 0, 0, 1, NULL), -EBADF);
	EXPECT(smq_heartbeat(w), -EBADF);
	EXPECT(smq_queue_open(w, 1, SMQ_RECEIVER, 0, &q), -EBADF);
	EXPECT(smq_queue_open(w, 0, SMQ_SENDER, 0, &q), -EBADF);
	CHECK(q == NULL);
	EXPECT(smq_group_open(w, "pair", SMQ_SENDER, 0, &gr), -EBADF);
	EXPECT(smq_group_open_queues(w, one, 1, SMQ_RECEIVER, 0, &gr), -EBADF);
	CHECK(gr == NULL);
	EXPECT(smq_group_info(w, 0, &gi, sizeof(gi)), -EBADF);
	EXPECT(smq_window_info(w, &wi, sizeof(wi)), -EBADF);
	EXPECT(smq_board_info(w, 0, &bi, sizeof(bi)), -EBADF);
	EXPECT(smq_queue_info(w, 0, &qi, sizeof(qi)), -EBADF);
	EXPECT(smq_lane_info(w, 0, 0, &li, sizeof(li)), -EBADF);
	EXPECT(smq_workers(w, wk, 4, sizeof(wk[0])), -EBADF);
	EXPECT(smq_journal_next(w, &c, &je, sizeof(je)), -EBADF);
	EXPECT(smq_watch(w, SMQ_WATCH_QUEUES, 0), -EBADF);
	EXPECT(smq_validate(w, &f, sizeof(f)), -EBADF);
	EXPECT(smq_map_look(w, 0, &mr, sizeof(mr)), -EBADF);
	EXPECT(smq_map_clear(w), -EBADF);
	EXPECT(smq_map_write(w, 0, 1), -EBADF);
	EXPECT(smq_map_verify(w, 0, 1, &mr, sizeof(mr)), -EBADF);
	EXPECT(smq_scratch_write(w, 0, 0, buf, 8, 1), -EBADF);
	EXPECT(smq_scratch_read(w, 0, 0, buf, 8), -EBADF);
	CHECK(!strcmp(buf, "0123456789"));
	EXPECT(smq_close(w), -EBADF);
}

/* Every call on the queue handles: a receiver, a sender, one that holds a
 * loan. */
static void queue_calls(struct held *h)
{
	char buf[ESIZE], out[64];
	const void *data;
	void *loan;
	size_t len, lens[1];
	unsigned from;
	struct iovec v = { buf, sizeof(buf) };

	EXPECT(smq_receive(h->rx, buf, sizeof(buf), &len, &from, 0), -EBADF);
	EXPECT(smq_peek(h->rx, &data, &len, &from, 0), -EBADF);
	EXPECT(smq_commit(h->rx), -EBADF);
	EXPECT(smq_receive_burst(h->rx, &v, 1, lens, NULL, 0), -EBADF);
	EXPECT(smq_queue_set_spin(h->rx, 5), -EBADF);
	EXPECT(smq_queue_notify(h->rx, out, sizeof(out)), -EBADF);
	EXPECT(smq_send(h->tx, "x", 1, 0), -EBADF);
	EXPECT(smq_send_burst(h->tx, &v, 1, 0), -EBADF);
	EXPECT(smq_loan(h->tx, 4, &loan, 0), -EBADF);
	CHECK(loan == NULL);
	/* the parent's loan is not the child's to write, submit or give
	 * back */
	EXPECT(smq_loan_write(h->loaner, 0, "late", 4), -EBADF);
	EXPECT(smq_loan_submit(h->loaner, 4), -EBADF);
	EXPECT(smq_loan_abort(h->loaner), -EBADF);
	EXPECT(smq_queue_close(h->loaner), -EBADF);
	EXPECT(smq_queue_close(h->tx), -EBADF);
	EXPECT(smq_queue_close(h->rx), -EBADF);
}

static void group_calls(struct held *h)
{
	char buf[ESIZE];
	const void *data;
	size_t len;
	unsigned from, queue;
	uint64_t pending = SMQ_GROUP_ALL;

	EXPECT(smq_group_member(h->g, 0), -EBADF);
	EXPECT(smq_group_receive(h->g, buf, sizeof(buf), &len, &from, &queue,
				 0), -EBADF);
	EXPECT(smq_group_peek(h->g, &data, &len, &from, &queue, 0), -EBADF);
	EXPECT(smq_group_commit(h->g), -EBADF);
	EXPECT(smq_group_send(h->gs, "g", 1, &pending, 0), -EBADF);
	CHECK(pending == SMQ_GROUP_ALL);
	EXPECT(smq_group_close(h->gs), -EBADF);
	EXPECT(smq_group_close(h->g), -EBADF);
}

/* The child: what it inherited is refused and writes nothing; its own
 * window works, but not as a second receiver of the parent's queue. */
static int child(void *arg)
{
	struct held *h = arg;
	size_t len;
	uint8_t *snap = test_snapshot(spec, &len);
	struct smq_window *mine;
	struct smq_queue *tx, *rx = NULL;
	struct smq_window_info wi;

	queue_calls(h);
	group_calls(h);
	window_calls(h->mon);
	window_calls(h->w);
	test_same(snap, len, spec, "calls on inherited handles");
	free(snap);
	/* the words say whose the handle is */
	CHECK(strstr(smq_strerror(-EBADF), "another process"));
	CHECK(strstr(smq_strerror(-EBADF), "fork"));

	OK(smq_open(spec, 0, 0, &mine));
	OK(smq_window_info(mine, &wi, sizeof(wi)));
	CHECK(wi.generation == 1);
	EXPECT(smq_queue_open(mine, 0, SMQ_RECEIVER, 0, &rx), -EBUSY);
	CHECK(rx == NULL);
	OK(smq_queue_open(mine, 0, SMQ_SENDER, 0, &tx));
	OK(smq_send(tx, "child", 5, 0));
	OK(smq_queue_close(tx));
	OK(smq_close(mine));
	return 0;
}

static void hold(struct held *h)
{
	static const unsigned pair[] = { 2, 3 };

	h->w = format();
	OK(smq_open(spec, 0, SMQ_OPEN_READONLY, &h->mon));
	OK(smq_queue_open(h->w, 0, SMQ_RECEIVER, 0, &h->rx));
	OK(smq_queue_open(h->w, 0, SMQ_SENDER, 0, &h->tx));
	OK(smq_queue_open(h->w, 1, SMQ_SENDER, 0, &h->loaner));
	OK(smq_group_open(h->w, "pair", SMQ_RECEIVER, 0, &h->g));
	OK(smq_group_open_queues(h->w, pair, 2, SMQ_SENDER, 0, &h->gs));
	OK(smq_send(h->tx, "parent", 6, 0));
	OK(smq_loan(h->loaner, 6, &h->loan, 0));
	memcpy(h->loan, "loaned", 6);
}

/* After the child: every claim still the parent's, and every handle
 * works. */
static void still_ours(struct held *h)
{
	struct smq_queue_info qi;
	struct smq_queue *rx1;
	char buf[ESIZE];
	size_t len;
	unsigned from, queue;

	OK(smq_queue_info(h->w, 0, &qi, sizeof(qi)));
	CHECK(qi.receiver_pid == (uint32_t)getpid());
	CHECK(qi.receiver_state == SMQ_RECEIVER_AWAY);
	OK(smq_receive(h->rx, buf, sizeof(buf), &len, &from, 0));
	CHECK(len == 6 && !memcmp(buf, "parent", 6));
	OK(smq_receive(h->rx, buf, sizeof(buf), &len, &from, 0));
	CHECK(len == 5 && !memcmp(buf, "child", 5));
	EXPECT(smq_receive(h->rx, buf, sizeof(buf), &len, &from, 0), -EAGAIN);
	/* the loan is the parent's to submit, once */
	OK(smq_loan_submit(h->loaner, 6));
	OK(smq_queue_open(h->w, 1, SMQ_RECEIVER, 0, &rx1));
	OK(smq_receive(rx1, buf, sizeof(buf), &len, &from, 0));
	CHECK(len == 6 && !memcmp(buf, "loaned", 6));
	EXPECT(smq_receive(rx1, buf, sizeof(buf), &len, &from, 0), -EAGAIN);
	OK(smq_queue_close(rx1));
	OK(smq_group_send(h->gs, "both", 4, NULL, 0));
	for (int i = 0; i < 2; i++) {
		OK(smq_group_receive(h->g, buf, sizeof(buf), &len, &from,
				     &queue, 0));
		CHECK(len == 4 && queue == (unsigned)(2 + i));
	}
	OK(smq_validate(h->w, NULL, 0));
}

/* One process, one receiver handle per queue: a second one, on the same
 * window handle or another, is refused in words that say whose it is. */
static void second_receiver(struct held *h)
{
	struct smq_window *w2;
	struct smq_queue *again = NULL;
	struct smq_group *g = NULL;
	static const unsigned q0[] = { 0 };

	EXPECT(smq_queue_open(h->w, 0, SMQ_RECEIVER, 0, &again),
	       -SMQ_EHOLDING);
	OK(smq_open(spec, 0, 0, &w2));
	EXPECT(smq_queue_open(w2, 0, SMQ_RECEIVER, 0, &again), -SMQ_EHOLDING);
	EXPECT(smq_group_open_queues(w2, q0, 1, SMQ_RECEIVER, 0, &g),
	       -SMQ_EHOLDING);
	CHECK(again == NULL && g == NULL);
	OK(smq_close(w2));
	const char *words = smq_strerror(-SMQ_EHOLDING);
	CHECK(strstr(words, "this process") &&
	      !strstr(words, "another process"));
	printf("a second receiver of the process: \"%s\"\n", words);
}

int main(void)
{
	struct held h;

	spec = test_window();
	hold(&h);
	test_wait_ok(test_fork(child, &h), "the child of inherited handles");
	still_ours(&h);
	printf("after fork: every inherited handle refused, nothing written; "
	       "the parent's claims and loan its own\n");
	second_receiver(&h);
	OK(smq_group_close(h.gs));
	OK(smq_group_close(h.g));
	OK(smq_queue_close(h.loaner));
	OK(smq_queue_close(h.tx));
	OK(smq_queue_close(h.rx));
	OK(smq_close(h.mon));
	OK(smq_close(h.w));
	return 0;
}
