/* A signal ends a wait: every call that waits returns -EINTR once a
 * signal handler (installed without SA_RESTART) ran while it slept, so
 * that a program can stop a receive of SMQ_WAIT_FOREVER for a clean
 * shutdown.  Each call runs in a thread of its own; once that thread
 * sleeps, it is signalled again and again until the call returns (a
 * signal that lands between two looks only runs the handler; the next one
 * finds the call asleep).  The waits: a receive, a peek, a burst, a
 * group's (futex_waitv), a send, a burst, a loan and a group send waiting
 * for room, a sync, a watch, the handshake of an init and of a clear, a
 * receiver that naps (no doorbell reaches it), one asleep on an ivshmem
 * window's eventfd, and the eventfd wait of the pci transport's doorbell
 * (no device here: the wait alone).  What each leaves is as a timeout
 * leaves it. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include "testint.h"
#include "testlib.h"
TEST_FLOOR(144);
#include "ivshmem_srv.h"

#define QUEUES 7
#define ENTRIES 4
#define ESIZE 64
#define LONG_MS 20000   /* a wait a signal must end long before */

static const char *spec;
static atomic_uint handled;

static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add(&handled, 1);
}

/* A call of the library, in a thread of its own. */
struct call {
	int (*fn)(void *);
	void *arg;
	atomic_int tid;
	atomic_bool done;
	int result;
	pthread_t thread;
};

static void *runner(void *p)
{
	struct call *c = p;

	atomic_store(&c->tid, (int)syscall(SYS_gettid));
	c->result = c->fn(c->arg);
	atomic_store(&c->done, true);
	return NULL;
}

/* Whether the thread is asleep in the kernel ('S' in its stat). */
static bool asleep(const struct call *c)
{
	char path[64];
	int tid = atomic_load(&c->tid);

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	return tid && test_proc_state(path) == 'S';
}

static bool returned_else_signal(struct call *c)
{
	if (atomic_load(&c->done))
		return true;
	pthread_kill(c->thread, SIGUSR1);
	return false;
}

/* Runs fn(arg) in a thread; once it sleeps, signals it until it returns.
 * Returns what it returned; the handler must have run. */
static int interrupted(const char *what, int (*fn)(void *), void *arg)
{
	struct call c = { .fn = fn, .arg = arg };
	unsigned before = atomic_load(&handled);

	CHECK(pthread_create(&c.thread, NULL, runner, &c) == 0);
	WAIT_UNTIL(asleep(&c) || atomic_load(&c.done), 60, "%s to sleep", what);
	WAIT_UNTIL(returned_else_signal(&c), 60, "%s to return on a signal",
		   what);
	CHECK(pthread_join(c.thread, NULL) == 0);
	if (c.result != -EINTR)
		FAIL("%s returned %d (%s), not -EINTR (%u signals handled)",
		     what, c.result, smq_strerror(c.result),
		     atomic_load(&handled) - before);
	TEST_COUNT();
	CHECK(atomic_load(&handled) > before);
	return c.result;
}

struct ctx {
	struct smq_window *w;
	struct smq_queue *rx0, *tx1, *rx1, *tx6, *loaner;
	struct smq_group *g, *gs;
	char buf[ESIZE];
	size_t len;
	unsigned from, queue;
	uint64_t pending;
};

static int receive_forever(void *p)
{
	struct ctx *x = p;
	return smq_receive(x->rx0, x->buf, sizeof(x->buf), &x->len, &x->from,
			   SMQ_WAIT_FOREVER);
}

static int peek(void *p)
{
	struct ctx *x = p;
	const void *data;
	return smq_peek(x->rx0, &data, &x->len, &x->from, LONG_MS);
}

static int receive_burst(void *p)
{
	struct ctx *x = p;
	struct iovec v = { x->buf, sizeof(x->buf) };
	return smq_receive_burst(x->rx0, &v, 1, &x->len, NULL, LONG_MS);
}

static int group_receive(void *p)
{
	struct ctx *x = p;
	return smq_group_receive(x->g, x->buf, sizeof(x->buf), &x->len,
				 &x->from, &x->queue, LONG_MS);
}

static int group_peek(void *p)
{
	struct ctx *x = p;
	const void *data;
	return smq_group_peek(x->g, &data, &x->len, &x->from, &x->queue,
			      LONG_MS);
}

static int send_full(void *p)
{
	struct ctx *x = p;
	return smq_send(x->tx1, "full", 4, LONG_MS);
}

static int send_burst_full(void *p)
{
	struct ctx *x = p;
	struct iovec v = { (void *)"burst", 5 };
	return smq_send_burst(x->tx1, &v, 1, LONG_MS);
}

static int loan_full(void *p)
{
	struct ctx *x = p;
	void *data;
	return smq_loan(x->tx1, 4, &data, LONG_MS);
}

static int group_send_full(void *p)
{
	struct ctx *x = p;
	x->pending = SMQ_GROUP_ALL;
	return smq_group_send(x->gs, "group", 5, &x->pending, LONG_MS);
}

/* Receivers: nothing comes; each wait ends on the signal, and the queue
 * is whole after (a message sent then is received). */
static void receivers(struct ctx *x)
{
	struct smq_queue *tx0;

	interrupted("smq_receive (forever)", receive_forever, x);
	interrupted("smq_peek", peek, x);
	interrupted("smq_receive_burst", receive_burst, x);
	interrupted("smq_group_receive", group_receive, x);
	interrupted("smq_group_peek", group_peek, x);
	OK(smq_queue_open(x->w, 0, SMQ_SENDER, 0, &tx0));
	OK(smq_send(tx0, "then", 4, 0));
	OK(smq_receive(x->rx0, x->buf, sizeof(x->buf), &x->len, &x->from, 0));
	CHECK(x->len == 4 && !memcmp(x->buf, "then", 4));
	OK(smq_queue_close(tx0));
	printf("receivers: a receive, a peek, a burst, a group's receive and "
	       "peek end on a signal\n");
}

/* Senders waiting for room in full lanes that nobody drains: nothing of
 * theirs is sent.  A group send stops at the first member it waited for:
 * the second full member's lane counts no wait. */
static void senders(struct ctx *x)
{
	struct smq_queue_info qi;
	struct smq_lane_info li;

	for (int i = 0; i < ENTRIES; i++) {
		OK(smq_send(x->tx1, "fill", 4, 0));
		OK(smq_send(x->tx6, "fill", 4, 0));
	}
	EXPECT(smq_send(x->tx1, "fill", 4, 0), -EAGAIN);
	interrupted("smq_send waiting for room", send_full, x);
	interrupted("smq_send_burst waiting for room", send_burst_full, x);
	interrupted("smq_loan waiting for room", loan_full, x);
	OK(smq_lane_info(x->w, 6, 0, &li, sizeof(li)));
	uint64_t waits6 = li.full_waits;
	interrupted("smq_group_send waiting for room", group_send_full, x);
	CHECK(x->pending == 3);
	OK(smq_lane_info(x->w, 6, 0, &li, sizeof(li)));
	CHECK(li.full_waits == waits6);
	OK(smq_queue_info(x->w, 1, &qi, sizeof(qi)));
	CHECK(qi.sent == ENTRIES && qi.queued == ENTRIES);
	/* the lane is not held: a send goes once there is room */
	OK(smq_receive(x->rx1, x->buf, sizeof(x->buf), &x->len, &x->from, 0));
	OK(smq_send(x->tx1, "room", 4, 0));
	printf("senders: a send, a burst, a loan and a group send waiting for "
	       "room end on a signal, nothing sent\n");
}

static int sync_missing(void *p)
{
	struct ctx *x = p;
	return smq_synchronize(x->w, 0, LONG_MS, 5, &x->pending);
}

static int sync_stay(void *p)
{
	struct ctx *x = p;
	return smq_synchronize(x->w, SMQ_SYNC_STAY, LONG_MS, 5, &x->pending);
}

static int watch_queue(void *p)
{
	struct ctx *x = p;
	return smq_watch(x->w, SMQ_WATCH_QUEUES, LONG_MS);
}

/* A sync waiting for board 1 ends as one that timed out: the missing
 * board said, the announcement taken back unless asked to stay. */
static void window_waits(struct ctx *x)
{
	struct smq_board_info bi;
	struct smq_queue *tx5;

	interrupted("smq_synchronize", sync_missing, x);
	CHECK(x->pending == 2);
	OK(smq_board_info(x->w, 0, &bi, sizeof(bi)));
	CHECK(bi.state == SMQ_BOARD_ABSENT);
	interrupted("smq_synchronize (stay)", sync_stay, x);
	CHECK(x->pending == 2);
	OK(smq_board_info(x->w, 0, &bi, sizeof(bi)));
	CHECK(bi.state == SMQ_BOARD_INITIALIZED);
	/* a queue that holds a message, looked at until it drains or is
	 * stalled, which it will not be for a minute */
	OK(smq_set_timeout(x->w, SMQ_TIMEOUT_STALL, 60000));
	OK(smq_queue_open(x->w, 5, SMQ_SENDER, 0, &tx5));
	OK(smq_send(tx5, "held", 4, 0));
	interrupted("smq_watch", watch_queue, x);
	OK(smq_queue_close(tx5));
	printf("a sync and a watch end on a signal\n");
}

struct maint {
	struct smq_window *w;
	int queue;              /* -1: an init */
};

static int maintain(void *p)
{
	struct maint *m = p;
	struct smq_geometry g = { 2, QUEUES, ENTRIES, ESIZE, NULL };

	return m->queue < 0 ? smq_init(m->w, &g, sizeof(g))
			    : smq_clear(m->w, m->queue);
}

/* An init and a clear waiting in their handshake for a loan to end: the
 * window as it was, the loan still the sender's to submit. */
static void handshakes(struct ctx *x)
{
	struct maint m = { NULL, -1 };
	struct smq_window_info before, after;
	struct smq_queue *rx4;
	void *data;

	OK(smq_open(spec, 0, SMQ_OPEN_FORCE, &m.w));
	OK(smq_set_timeout(m.w, SMQ_TIMEOUT_HANDSHAKE, LONG_MS));
	OK(smq_loan(x->loaner, 4, &data, 0));
	memcpy(data, "kept", 4);
	OK(smq_window_info(x->w, &before, sizeof(before)));
	interrupted("smq_init in its handshake", maintain, &m);
	m.queue = 4;
	interrupted("smq_clear of a queue in its handshake", maintain, &m);
	OK(smq_window_info(x->w, &after, sizeof(after)));
	CHECK(after.generation == before.generation && !after.maint_phase);
	OK(smq_loan_submit(x->loaner, 4));
	OK(smq_queue_open(x->w, 4, SMQ_RECEIVER, 0, &rx4));
	OK(smq_receive(rx4, x->buf, sizeof(x->buf), &x->len, &x->from, 0));
	CHECK(x->len == 4 && !memcmp(x->buf, "kept", 4));
	OK(smq_queue_close(rx4));
	OK(smq_validate(m.w, NULL, 0));
	OK(smq_close(m.w));
	printf("an init and a clear end their handshake on a signal, the "
	       "window as it was\n");
}

/* A receiver no sender can ring naps and looks again: a sender that says
 * it rings futexes of another host (its lane's host word). */
static void napping(struct ctx *x)
{
	struct smq_queue *tx0;

	OK(smq_queue_open(x->w, 0, SMQ_SENDER, 0, &tx0));
	struct smq_lane_out *o = at(x->w, lay_lane_out(&x->w->lay, 0, 0));
	char words[96];
	STORE(&o->host, LOAD(&o->host) ^ 1);
	OK(smq_queue_notify(x->rx0, words, sizeof(words)));
	CHECK(strstr(words, "cannot ring"));
	interrupted("smq_receive napping", receive_forever, x);
	OK(smq_queue_close(tx0));
	printf("a receiver that naps ends on a signal\n");
}

/* A receiver of an ivshmem window asleep on its vector's eventfd. */
static void ivshmem(struct ctx *x)
{
	struct srv sv;
	struct smq_window *w;
	struct smq_geometry g = { 1, 1, ENTRIES, ESIZE, NULL };
	char ispec[160];
	char words[64];

	OK(start_server(&sv, "eintr", NULL, 1 << 20, 2));
	snprintf(ispec, sizeof(ispec), "ivshmem:%s", sv.path);
	OK(smq_open(ispec, 0, SMQ_OPEN_RAW, &w));
	expect_event(&sv, SMQ_PEER_JOINED, 0, 0);
	OK(smq_init(w, &g, sizeof(g)));
	OK(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &x->rx0));
	OK(smq_queue_notify(x->rx0, words, sizeof(words)));
	CHECK(strstr(words, "ivshmem"));
	interrupted("smq_receive on an ivshmem window", receive_forever, x);
	OK(smq_queue_close(x->rx0));
	OK(smq_close(w));
	expect_event(&sv, SMQ_PEER_LEFT, 0, 0);
	stop_server(&sv);
	printf("a receiver asleep on an ivshmem eventfd ends on a signal\n");
}

static int eventfd_wait(void *p)
{
	struct timespec deadline;

	smq_deadline(&deadline, LONG_MS);
	return smq_wait_eventfd(*(const int *)p, &deadline);
}

/* The pci transport's doorbell, an MSI-X vector that VFIO delivers as an
 * eventfd (a vfio broker's clients wait the same way): the wait itself,
 * as pci_wait() makes it. */
static void pci_eventfd(void)
{
	int fd = eventfd(0, EFD_CLOEXEC);

	CHECK(fd >= 0);
	interrupted("the pci doorbell's eventfd wait", eventfd_wait, &fd);
	close(fd);
	printf("an eventfd wait (the pci doorbell's) ends on a signal\n");
}

static void open_all(struct ctx *x)
{
	static const uint16_t receivers[QUEUES] = { 0, 0, 0, 0, 0, 0, 0 };
	static const unsigned two[] = { 2, 3 }, full[] = { 1, 6 };
	struct smq_shape sh = { { 2, QUEUES, ENTRIES, ESIZE, receivers }, NULL,
				0, NULL, 0, 0, 0 };

	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE,
		    &x->w));
	OK(smq_init_shape(x->w, &sh, sizeof(sh)));
	OK(smq_queue_open(x->w, 0, SMQ_RECEIVER, 0, &x->rx0));
	OK(smq_queue_open(x->w, 1, SMQ_RECEIVER, 0, &x->rx1));
	OK(smq_queue_open(x->w, 1, SMQ_SENDER, 0, &x->tx1));
	OK(smq_queue_open(x->w, 4, SMQ_SENDER, 0, &x->loaner));
	OK(smq_queue_open(x->w, 6, SMQ_SENDER, 0, &x->tx6));
	OK(smq_group_open_queues(x->w, two, 2, SMQ_RECEIVER, 0, &x->g));
	OK(smq_group_open_queues(x->w, full, 2, SMQ_SENDER, 0, &x->gs));
}

int main(void)
{
	struct sigaction sa;
	struct ctx x;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;  /* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	srv_setup();
	CHECK(strstr(smq_strerror(-EINTR), "signal"));
	spec = test_window();
	memset(&x, 0, sizeof(x));
	open_all(&x);
	receivers(&x);
	senders(&x);
	window_waits(&x);
	handshakes(&x);
	napping(&x);
	OK(smq_group_close(x.gs));
	OK(smq_group_close(x.g));
	OK(smq_queue_close(x.loaner));
	OK(smq_queue_close(x.tx6));
	OK(smq_queue_close(x.tx1));
	OK(smq_queue_close(x.rx1));
	OK(smq_queue_close(x.rx0));
	OK(smq_close(x.w));
	ivshmem(&x);
	pci_eventfd();
	return 0;
}
