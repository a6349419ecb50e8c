/* Board startup and staleness: boards started in random order, a startup
 * that times out naming the missing board, stale handles after init and
 * clear, permissions and receiver claims across processes.
 *
 * Each part runs in its own process (so one failing part does not hide the
 * others); the boards of a part are child processes with their own handles,
 * sequenced through pipes. */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include "testlib.h"
#include "testint.h"

/* ---- helpers ---- */

/* A time on purpose (a random start); each use says why */
static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A one-way signal between processes: one byte through a pipe. */
struct chan { int fd[2]; };

static void chan_init(struct chan *c)
{
	if (pipe(c->fd) < 0)
		FAIL("pipe");
}

static void chan_post(struct chan *c)
{
	if (write(c->fd[1], "x", 1) != 1)
		FAIL("pipe write");
}

/* Waits at most 10 s: a peer that failed never posts. */
/* Waits for the other process's word (30 s at most): the next step of
 * what; past that the test fails naming it. */
static void chan_wait(struct chan *c, const char *what)
{
	struct pollfd p = { .fd = c->fd[0], .events = POLLIN };
	char x;

	test_waiting("%s", what);
	int n = poll(&p, 1, 30000);
	test_waiting(NULL);
	if (n != 1)
		FAIL("no word within 30 s from the other process: %s", what);
	if (read(c->fd[0], &x, 1) != 1)
		FAIL("pipe read");
}


static uint64_t generation(struct smq_window *w)
{
	struct smq_window_info wi;
	OK(smq_window_info(w, &wi, sizeof(wi)));
	return wi.generation;
}

static void wait_killed(pid_t pid)
{
	int status;
	if (waitpid(pid, &status, 0) != pid)
		FAIL("waitpid");
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
		FAIL("child not killed (status 0x%x)", status);
}

/* ---- a. eight boards, random order ---- */

struct board_arg {
	const char *spec;
	unsigned board;
	int delay_ms;
};

static int board_start(void *p)
{
	struct board_arg *a = p;
	struct smq_window *w;
	struct smq_board_info bi;
	uint64_t pending = 12345;

	sleep_ms(a->delay_ms);  /* a random start, on purpose: no state */
	OK(smq_open(a->spec, a->board, 0, &w));
	uint64_t gen = generation(w);
	EXPECT(smq_synchronize(w, 0, 5000, 2, &pending), 0);
	CHECK(pending == 0);
	OK(smq_board_info(w, a->board, &bi, sizeof(bi)));
	CHECK(bi.state == SMQ_BOARD_READY && bi.generation == gen);
	CHECK(bi.pid == (uint32_t)getpid());
	/* again: already ready, returns at once */
	EXPECT(smq_synchronize(w, 0, 0, 1, &pending), 0);
	CHECK(pending == 0);
	OK(smq_close(w));
	return 0;
}

static void part_random_start(void)
{
	const char *spec = test_window();
	const unsigned nb = 8;
	char host[32] = "";

	gethostname(host, sizeof(host) - 1);
	for (uint64_t seed = 1; seed <= 3; seed++) {
		struct smq_window *w = test_init(spec, nb, 8, 8, 64);
		struct board_arg args[8];
		unsigned order[8];
		pid_t pids[8];
		uint64_t rs = seed * 0x1234567ull;

		for (unsigned i = 0; i < nb; i++)
			order[i] = i;
		for (unsigned i = nb - 1; i > 0; i--) {
			unsigned j = (unsigned)(test_rand(&rs) % (i + 1));
			unsigned t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		uint64_t gen = generation(w);
		for (unsigned i = 0; i < nb; i++) {
			unsigned b = order[i];
			args[b] = (struct board_arg){ spec, b,
				(int)(test_rand(&rs) % 31) };
			pids[b] = test_fork(board_start, &args[b]);
		}
		for (unsigned b = 0; b < nb; b++)
			test_wait_ok(pids[b], "board startup");

		struct smq_window_info wi;
		OK(smq_window_info(w, &wi, sizeof(wi)));
		CHECK(wi.generation == gen);
		CHECK(wi.system_state == SMQ_SYS_READY);
		for (unsigned b = 0; b < nb; b++) {
			struct smq_board_info bi;
			OK(smq_board_info(w, b, &bi, sizeof(bi)));
			if (bi.state != SMQ_BOARD_READY)
				FAIL("seed %llu: board %u state %u",
				     (unsigned long long)seed, b, bi.state);
			CHECK(bi.generation == gen);
			CHECK(bi.pid == (uint32_t)pids[b]);
			CHECK(bi.heartbeat >= 1);
			CHECK(!strcmp(bi.host, host));
		}
		/* every board's notice says ready too */
		struct smq_layout l;
		struct smq_geometry g = { nb, 8, 8, 64, NULL };
		size_t len;
		OK(smq_layout_compute(&l, &g));
		uint8_t *snap = test_snapshot(spec, &len);
		for (unsigned b = 0; b < nb; b++) {
			const struct smq_notice *n =
				(const void *)(snap + lay_notice(&l, b));
			CHECK(n->generation == gen);
			CHECK(n->system_state == SMQ_SYS_READY);
		}
		free(snap);
		smq_layout_free(&l);
		OK(smq_validate(w, NULL, 0));
		OK(smq_close(w));
	}
}

/* ---- b. a board that never comes ---- */

struct late_arg {
	const char *spec;
	unsigned board;
	int timeout_ms;
	int expect;
	uint64_t expect_pending; /* the boards pending must name */
	uint64_t may_pending;    /* ...and those it may name too */
};

static int board_sync(void *p)
{
	struct late_arg *a = p;
	struct smq_window *w;
	uint64_t pending = 12345;

	OK(smq_open(a->spec, a->board, 0, &w));
	uint64_t t0 = mono_ms();
	EXPECT(smq_synchronize(w, 0, a->timeout_ms, 10, &pending), a->expect);
	uint64_t dt = mono_ms() - t0;
	if ((pending & ~a->may_pending) != a->expect_pending)
		FAIL("board %u: pending 0x%llx, expected 0x%llx", a->board,
		     (unsigned long long)pending,
		     (unsigned long long)a->expect_pending);
	if (a->expect == -ETIMEDOUT) {
		CHECK(pending & (1u << 2));
		CHECK(dt + 10 >= (uint64_t)a->timeout_ms);
	}
	OK(smq_close(w));
	return 0;
}

static void wait_state(struct smq_window *w, unsigned b, uint32_t state)
{
	struct smq_board_info bi;

	WAIT_UNTIL(smq_board_info(w, b, &bi, sizeof(bi)) == 0 &&
		   bi.state == state, 20, "board %u to reach state %u", b,
		   state);
}

static void part_timeout(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 4, 4, 8, 64);
	struct smq_board_info bi;
	struct smq_window_info wi;
	uint64_t pending = 12345, t0, dt;

	/* Board 0 alone: every other board is pending. */
	t0 = mono_ms();
	EXPECT(smq_synchronize(w, 0, 50, 10, &pending), -ETIMEDOUT);
	dt = mono_ms() - t0;
	CHECK(pending == 0xe);
	CHECK(dt >= 45);
	/* The same with poll_ms <= 0 (a default period) and timeout 0. */
	EXPECT(smq_synchronize(w, 0, 0, 0, &pending), -ETIMEDOUT);
	CHECK(pending == 0xe);
	EXPECT(smq_synchronize(w, 0, 20, -5, NULL), -ETIMEDOUT);

	/* Boards 1 and 3 come (and wait for a ready that never comes); board
	 * 0 gives up before them (then it is missing too), and each may see
	 * the other give up at the same moment. */
	struct late_arg a1 = { spec, 1, 800, -ETIMEDOUT, 0x5, 1u << 3 };
	struct late_arg a3 = { spec, 3, 800, -ETIMEDOUT, 0x5, 1u << 1 };
	pid_t p1 = test_fork(board_sync, &a1);
	pid_t p3 = test_fork(board_sync, &a3);
	wait_state(w, 1, SMQ_BOARD_INITIALIZED);
	wait_state(w, 3, SMQ_BOARD_INITIALIZED);

	t0 = mono_ms();
	pending = 12345;
	EXPECT(smq_synchronize(w, 0, 300, 10, &pending), -ETIMEDOUT);
	dt = mono_ms() - t0;
	if (pending != (1u << 2))
		FAIL("pending 0x%llx, expected 0x4", (unsigned long long)pending);
	if (dt < 290)
		FAIL("timed out after %llu ms, before 300",
		     (unsigned long long)dt);
	OK(smq_window_info(w, &wi, sizeof(wi)));
	CHECK(wi.system_state == SMQ_SYS_FORMATTED);
	OK(smq_board_info(w, 2, &bi, sizeof(bi)));
	CHECK(bi.state == SMQ_BOARD_ABSENT && bi.pid == 0);
	/* a sync that gave up took its announcement back */
	OK(smq_board_info(w, 0, &bi, sizeof(bi)));
	CHECK(bi.state == SMQ_BOARD_ABSENT && bi.announcer_pid == 0);
	test_wait_ok(p1, "board 1 timing out");
	test_wait_ok(p3, "board 3 timing out");
	for (unsigned b = 1; b < 4; b += 2) {
		OK(smq_board_info(w, b, &bi, sizeof(bi)));
		if (bi.state != SMQ_BOARD_ABSENT || bi.announcer_pid)
			FAIL("board %u gave up its sync but stays %s, announcer "
			     "pid %u: board 0 would count it", b,
			     bi.state == SMQ_BOARD_INITIALIZED ? "initialized"
			     : "ready", bi.announcer_pid);
		CHECK(bi.announces == 1);
	}

	/* Board 2 comes late, and boards 1 and 3 again: now everyone gets
	 * ready; those that gave up are counted only once they are back. */
	struct late_arg a2 = { spec, 2, 5000, 0, 0, 0 };
	pid_t p2 = test_fork(board_sync, &a2);
	wait_state(w, 2, SMQ_BOARD_INITIALIZED);
	EXPECT(smq_synchronize(w, 0, 200, 2, &pending), -ETIMEDOUT);
	CHECK(pending == 0xa);
	a1.timeout_ms = a3.timeout_ms = 5000;
	a1.expect = a3.expect = 0;
	a1.expect_pending = a3.expect_pending = 0;
	a1.may_pending = a3.may_pending = 0;
	p1 = test_fork(board_sync, &a1);
	p3 = test_fork(board_sync, &a3);
	OK(smq_synchronize(w, 0, 5000, 2, &pending));
	CHECK(pending == 0);
	test_wait_ok(p1, "board 1 back");
	test_wait_ok(p2, "board 2 late");
	test_wait_ok(p3, "board 3 back");
	OK(smq_window_info(w, &wi, sizeof(wi)));
	CHECK(wi.system_state == SMQ_SYS_READY);
	for (unsigned b = 0; b < 4; b++) {
		OK(smq_board_info(w, b, &bi, sizeof(bi)));
		CHECK(bi.state == SMQ_BOARD_READY && bi.announcer_pid == 0);
		CHECK(bi.generation == wi.generation);
		/* board 0 announced at each of its syncs, after giving up */
		CHECK(b == 0 || bi.announces == (b == 2 ? 1u : 2u));
	}
	OK(smq_close(w));
}

/* Two processes announce the same board: the second is refused, with
 * the first one's pid, while the first still waits in sync; once the
 * board is ready, sync is a no-op for any process of it. */
static int second_announcer(void *p)
{
	const char *spec = p;
	struct smq_window *w;
	struct smq_holdout h;

	OK(smq_open(spec, 1, 0, &w));
	int err = smq_synchronize(w, 0, 100, 5, NULL);
	OK(smq_holdout(w, &h, sizeof(h)));
	OK(smq_close(w));
	if (err != -EBUSY)
		FAIL("a second process announcing board 1 got %d (%s), not "
		     "-EBUSY", err, smq_strerror(err));
	return (int)(h.pid & 0x7f);
}

static void part_one_announcer(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 2, 2, 8, 64);
	struct late_arg a1 = { spec, 1, 3000, 0, 0, 0 };
	struct smq_board_info bi;
	int status;

	pid_t p1 = test_fork(board_sync, &a1);
	wait_state(w, 1, SMQ_BOARD_INITIALIZED);
	OK(smq_board_info(w, 1, &bi, sizeof(bi)));
	CHECK(bi.announcer_pid == (uint32_t)p1);
	pid_t p2 = test_fork(second_announcer, (void *)spec);
	CHECK(waitpid(p2, &status, 0) == p2 && WIFEXITED(status));
	if (WEXITSTATUS(status) != (p1 & 0x7f))
		FAIL("the refusal named pid ...%d, not the announcer %d",
		     WEXITSTATUS(status), (int)p1);
	OK(smq_synchronize(w, 0, 5000, 2, NULL));
	test_wait_ok(p1, "board 1");
	/* ready: another process of board 1 synchronises at once */
	a1.timeout_ms = 100;
	test_wait_ok(test_fork(board_sync, &a1), "board 1 again");
	OK(smq_close(w));
}

/* An announcer killed in sync: board 0 does not count its board, whose
 * processes died; a new one announces in its place. */
static int killed_announcer(void *p)
{
	struct smq_window *w;

	OK(smq_open(p, 1, 0, &w));
	smq_synchronize(w, 0, SMQ_WAIT_FOREVER, 5, NULL);
	return 1;
}

static void part_killed_announcer(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 2, 2, 8, 64);
	struct late_arg a1 = { spec, 1, 5000, 0, 0, 0 };
	struct smq_board_info bi;
	uint64_t pending;

	pid_t p = test_fork(killed_announcer, (void *)spec);
	wait_state(w, 1, SMQ_BOARD_INITIALIZED);
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
	OK(smq_board_info(w, 1, &bi, sizeof(bi)));
	CHECK(bi.activity == SMQ_ACTIVITY_DEAD && bi.dead_handles == 1 &&
	      bi.announcer_pid == 0);
	EXPECT(smq_synchronize(w, 0, 100, 2, &pending), -ETIMEDOUT);
	if (pending != 2)
		FAIL("board 0 counted board 1, whose announcer was killed "
		     "(pending 0x%llx)", (unsigned long long)pending);
	/* another process of board 1 attaches and beats, announcing
	 * nothing: its attach lets the dead handle go, and board 1 is still
	 * not there */
	struct smq_window *w1;
	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_heartbeat(w1));
	OK(smq_close(w1));
	OK(smq_board_info(w, 1, &bi, sizeof(bi)));
	CHECK(bi.dead_handles == 0);
	EXPECT(smq_synchronize(w, 0, 100, 2, &pending), -ETIMEDOUT);
	if (pending != 2)
		FAIL("board 0 counted board 1, whose announcer was killed, once "
		     "another process of it attached (pending 0x%llx)",
		     (unsigned long long)pending);
	pid_t p1 = test_fork(board_sync, &a1);
	OK(smq_synchronize(w, 0, 5000, 2, &pending));
	test_wait_ok(p1, "board 1 in its place");
	OK(smq_close(w));
}

/* ---- a process that closes while another judges it ---- */

/* Board 1's process (queue < 0) or queue 0's receiver, on board 0: it
 * closes and exits when told. */
struct closer {
	const char *spec;
	int queue;
	struct chan ready, go;
	pid_t pid;
	int held;               /* judgements the hook held */
};
static struct closer *closing;

static int close_when_told(void *p)
{
	struct closer *c = p;
	struct smq_window *w;
	struct smq_queue *q = NULL;

	OK(smq_open(c->spec, c->queue < 0 ? 1 : 0, 0, &w));
	if (c->queue < 0)
		OK(smq_announce(w));
	else
		OK(smq_queue_open(w, (unsigned)c->queue, SMQ_RECEIVER,
				  SMQ_SLEEP, &q));
	chan_post(&c->ready);
	chan_wait(&c->go, "the word to close");
	if (q)
		OK(smq_queue_close(q));
	OK(smq_close(w));
	return 0;
}

/* The first judgement, its tag read: the process closes and exits (a
 * zombie, not yet reaped) before the judgement looks it up. */
static void close_while_judged(enum smq_hook where)
{
	siginfo_t si;

	if (where != SMQ_HOOK_JUDGE || closing->held++)
		return;
	chan_post(&closing->go);
	if (waitid(P_PID, (id_t)closing->pid, &si, WEXITED | WNOWAIT) < 0)
		FAIL("waitid");
}

static void start_closer(struct closer *c, const char *spec, int queue)
{
	*c = (struct closer){ spec, queue, { { -1, -1 } }, { { -1, -1 } }, 0, 0 };
	chan_init(&c->ready);
	chan_init(&c->go);
	closing = c;
	c->pid = test_fork(close_when_told, c);
	chan_wait(&c->ready, queue < 0 ? "board 1 to announce itself"
				       : "the receiver to open its queue");
}

/* A process that closed is not one that died: judged between the read of
 * its tag and the look at its process, it counts as closed.  Else board
 * 0's sync counted a board that had just closed as missing (seen under
 * load in the random startup above), and a receiver that closed showed
 * as dead. */
static void part_closed_while_judged(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 2, 2, 8, 64);
	struct smq_board_info bi;
	struct smq_queue_info qi;
	struct closer c;

	start_closer(&c, spec, -1);
	smq_test_hook = close_while_judged;
	OK(smq_board_info(w, 1, &bi, sizeof(bi)));
	smq_test_hook = NULL;
	test_wait_ok(c.pid, "board 1 closing");
	CHECK(c.held >= 1);
	if (bi.activity != SMQ_ACTIVITY_NONE || bi.dead_handles)
		FAIL("board 1 closed while board 0 judged it and was judged "
		     "dead (activity %d, %u dead handles)", bi.activity,
		     bi.dead_handles);
	/* announced and closed: board 0 counts it */
	OK(smq_synchronize(w, 0, 0, 1, NULL));

	start_closer(&c, spec, 0);
	smq_test_hook = close_while_judged;
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	smq_test_hook = NULL;
	test_wait_ok(c.pid, "the receiver closing");
	CHECK(c.held >= 1);
	if (qi.receiver_state != SMQ_RECEIVER_NONE)
		FAIL("queue 0's receiver closed while judged and was shown "
		     "as state %d, not as none", qi.receiver_state);
	OK(smq_close(w));
}

/* A board's sync that saw the system ready stores the board ready and
 * lets its announcer's role go, then its process may close and exit at
 * once: board 0, judging it between the state it read (announced, not
 * ready) and the look at the announcer's process, finds that process
 * gone.  It finished; it did not die: board 0's sync must not count the
 * board as missing (seen as a second smq_synchronize(w, 0, 0, ...) of
 * board 0 that returned -ETIMEDOUT in the random startup above).  The
 * hook holds board 0 exactly there while board 1 finishes its sync and
 * exits. */
struct finisher {
	const char *spec;
	struct chan ready, go;
	pid_t pid;
	int held;
};
static struct finisher *finishing;

static int finish_when_told(void *p)
{
	struct finisher *f = p;
	struct smq_window *w;
	uint64_t pending;

	OK(smq_open(f->spec, 1, 0, &w));
	/* announced, the announcer's role kept: one look, no withdrawal */
	EXPECT(smq_synchronize(w, SMQ_SYNC_STAY, 0, 1, &pending), -ETIMEDOUT);
	chan_post(&f->ready);
	chan_wait(&f->go, "the word to finish its sync");
	OK(smq_synchronize(w, 0, 10000, 1, &pending));
	OK(smq_close(w));
	return 0;
}

static void finish_while_judged(enum smq_hook where)
{
	if (where != SMQ_HOOK_ANNOUNCER || finishing->held++)
		return;
	chan_post(&finishing->go);
	test_wait_ok(finishing->pid, "board 1 finishing its sync");
}

static void part_finished_while_judged(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 2, 2, 8, 64);
	struct finisher f = { spec, { { -1, -1 } }, { { -1, -1 } }, 0, 0 };
	struct smq_board_info bi;
	uint64_t pending = 12345;

	chan_init(&f.ready);
	chan_init(&f.go);
	finishing = &f;
	f.pid = test_fork(finish_when_told, &f);
	chan_wait(&f.ready, "board 1 to announce itself");
	OK(smq_synchronize(w, 0, 10000, 1, &pending));
	smq_test_hook = finish_while_judged;
	int err = smq_synchronize(w, 0, 0, 1, &pending);
	smq_test_hook = NULL;
	if (f.held != 1)
		FAIL("board 0's sync judged board 1's announcer %d times, "
		     "expected once", f.held);
	if (err)
		FAIL("board 0's second sync, once board 1 finished its sync "
		     "and exited while judged, returned %d (%s), boards "
		     "pending 0x%llx", err, smq_strerror(err),
		     (unsigned long long)pending);
	OK(smq_board_info(w, 1, &bi, sizeof(bi)));
	CHECK(bi.state == SMQ_BOARD_READY);
	OK(smq_close(w));
}

/* ---- c. stale handles ---- */

struct stale_arg {
	const char *spec;
	struct chan ready, go;
	int rounds;
};

/* Board 1: attach, open queues, let board 0 reformat, find itself stale. */
static int stale_board(void *p)
{
	struct stale_arg *a = p;
	char buf[64];
	size_t n = 777, len;
	unsigned from = 777;
	uint64_t pending = 12345;

	for (int round = 0; round < a->rounds; round++) {
		struct smq_window *w;
		struct smq_queue *tx, *rx, *q = (void *)1;
		struct smq_window_info wi;
		struct smq_board_info bi;

		OK(smq_open(a->spec, 1, 0, &w));
		OK(smq_announce(w));
		OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &tx));
		OK(smq_queue_open(w, 1, SMQ_RECEIVER, 0, &rx));
		OK(smq_send(tx, "before", 6, 0));
		uint64_t gen = generation(w);

		chan_post(&a->ready);
		chan_wait(&a->go, "board 0 to format or clear");

		uint8_t *snap = test_snapshot(a->spec, &len);
		EXPECT(smq_send(tx, "after", 5, 0), -ESTALE);
		EXPECT(smq_send(tx, "after", 5, 1000), -ESTALE);
		test_same(snap, len, a->spec, "send from a stale handle");
		EXPECT(smq_announce(w), -ESTALE);
		EXPECT(smq_heartbeat(w), -ESTALE);
		EXPECT(smq_synchronize(w, 0, 100, 1, &pending), -ESTALE);
		CHECK(pending == 0);
		EXPECT(smq_queue_open(w, 0, SMQ_SENDER, 0, &q), -ESTALE);
		CHECK(q == NULL);
		EXPECT(smq_queue_open(w, 1, SMQ_RECEIVER, 0, &q), -ESTALE);
		EXPECT(smq_receive(rx, buf, sizeof(buf), &n, &from, 0), -ESTALE);
		EXPECT(smq_receive(rx, buf, sizeof(buf), &n, &from, 100),
		       -ESTALE);
		CHECK(n == 777 && from == 777);
		EXPECT(smq_window_info(w, &wi, sizeof(wi)), -ESTALE);
		EXPECT(smq_board_info(w, 1, &bi, sizeof(bi)), -ESTALE);
		OK(smq_queue_close(tx));
		OK(smq_queue_close(rx));
		OK(smq_close(w));
		/* closing freed its marks, in its own control block */
		test_same_except(snap, len, a->spec, "calls from a stale handle",
				 lay_ctl(1) + offsetof(struct smq_ctl, slot),
				 lay_ctl(2));
		free(snap);

		/* Reattached: current again, one generation later. */
		OK(smq_open(a->spec, 1, 0, &w));
		OK(smq_window_info(w, &wi, sizeof(wi)));
		if (wi.generation != gen + 1)
			FAIL("round %d: generation %llu, expected %llu", round,
			     (unsigned long long)wi.generation,
			     (unsigned long long)gen + 1);
		OK(smq_announce(w));
		OK(smq_queue_open(w, 1, SMQ_RECEIVER, 0, &rx));
		OK(smq_queue_close(rx));
		OK(smq_close(w));
	}
	return 0;
}

static void part_stale(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 2, 2, 8, 64);
	struct smq_geometry g = { 2, 2, 8, 64, NULL };
	struct stale_arg a = { .spec = spec, .rounds = 2 };

	chan_init(&a.ready);
	chan_init(&a.go);
	pid_t pid = test_fork(stale_board, &a);
	for (int round = 0; round < a.rounds; round++) {
		chan_wait(&a.ready, "the stale board to be ready");
		uint64_t gen = generation(w);
		if (round == 0)
			OK(smq_init(w, &g, sizeof(g)));
		else
			OK(smq_clear(w, -1));
		/* board 0's own handle follows its own format */
		CHECK(generation(w) == gen + 1);
		OK(smq_validate(w, NULL, 0));
		chan_post(&a.go);
	}
	test_wait_ok(pid, "stale board 1");
	OK(smq_close(w));
}

/* smq_clear(w, 0): queue 0 emptied under a new epoch, and nothing else
 * touched: the generation, the board table, queue 1 with its receiver, a
 * sender's handle of queue 1, the window handles all go on. */
struct clear0_arg {
	const char *spec;
	struct chan ready, go, done;
};

static int clear0_board(void *p)
{
	struct clear0_arg *a = p;
	struct smq_window *w;
	struct smq_queue *tx, *rx;
	char buf[64];
	size_t n;
	unsigned from;

	OK(smq_open(a->spec, 1, 0, &w));
	OK(smq_synchronize(w, 0, 5000, 1, NULL));
	OK(smq_queue_open(w, 1, SMQ_RECEIVER, 0, &rx));
	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &tx));
	for (int i = 0; i < 3; i++)
		OK(smq_send(tx, (char[]){ 'a', (char)('0' + i) }, 2, 0));
	chan_post(&a->ready);
	chan_wait(&a->go, "board 0 to send 3 to queue 1, then clear 0");

	/* the sender of queue 0 is told; it opens the queue again */
	EXPECT(smq_send(tx, "a3", 2, 0), -ESTALE);
	OK(smq_queue_close(tx));
	OK(smq_heartbeat(w));
	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &tx));
	OK(smq_send(tx, "a4", 2, 0));
	OK(smq_queue_close(tx));
	/* the receiver of queue 1 never noticed: board 0's 3 messages from
	 * before the clear and 1 from after */
	for (int i = 0; i < 4; i++) {
		OK(smq_receive(rx, buf, sizeof(buf), &n, &from, 1000));
		CHECK(n == 2 && buf[0] == 'b' && buf[1] == '0' + i && from == 0);
	}
	EXPECT(smq_receive(rx, buf, sizeof(buf), &n, &from, 0), -EAGAIN);
	OK(smq_queue_close(rx));
	chan_post(&a->done);
	OK(smq_close(w));
	return 0;
}

static void part_clear_one(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 2, 2, 8, 64);
	struct clear0_arg a = { .spec = spec };
	struct smq_queue *tx, *rx;
	struct smq_queue_info qi, q0;
	struct smq_board_info bi;
	char buf[64];
	size_t n;
	unsigned from;

	chan_init(&a.ready);
	chan_init(&a.go);
	chan_init(&a.done);
	pid_t pid = test_fork(clear0_board, &a);
	OK(smq_synchronize(w, 0, 5000, 1, NULL));
	OK(smq_queue_open(w, 1, SMQ_SENDER, 0, &tx));
	for (int i = 0; i < 3; i++)
		OK(smq_send(tx, (char[]){ 'b', (char)('0' + i) }, 2, 0));
	chan_wait(&a.ready, "board 1 to send 3 to queue 0");
	OK(smq_queue_info(w, 0, &q0, sizeof(q0)));
	CHECK(q0.fill == 3 && q0.sent == 3);
	OK(smq_queue_info(w, 1, &qi, sizeof(qi)));
	CHECK(qi.fill == 3 && qi.receiver_pid == (uint32_t)pid);

	uint64_t gen = generation(w);
	OK(smq_clear(w, 0));
	if (generation(w) != gen)
		FAIL("a clear of queue 0 moved the generation %llu -> %llu",
		     (unsigned long long)gen,
		     (unsigned long long)generation(w));
	OK(smq_validate(w, NULL, 0));
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	CHECK(qi.fill == 0 && qi.sent == 0 && qi.top == 0 && qi.bottom == 0);
	CHECK(qi.epoch > q0.epoch);
	OK(smq_queue_info(w, 1, &qi, sizeof(qi)));
	CHECK(qi.fill == 3 && qi.receiver_pid == (uint32_t)pid);
	OK(smq_board_info(w, 1, &bi, sizeof(bi)));
	CHECK(bi.state == SMQ_BOARD_READY);
	/* our own sender of queue 1 goes on */
	OK(smq_send(tx, "b3", 2, 0));
	chan_post(&a.go);

	/* queue 0 has board 1's one new message for its (new) receiver */
	OK(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &rx));
	OK(smq_receive(rx, buf, sizeof(buf), &n, &from, 5000));
	CHECK(n == 2 && !memcmp(buf, "a4", 2) && from == 1);
	EXPECT(smq_receive(rx, buf, sizeof(buf), &n, &from, 0), -EAGAIN);
	OK(smq_queue_close(rx));
	chan_wait(&a.done, "board 1 to receive queue 1's messages");
	test_wait_ok(pid, "board 1 after clear of queue 0");
	OK(smq_queue_info(w, 1, &qi, sizeof(qi)));
	CHECK(qi.received == 4 && qi.fill == 0);
	OK(smq_queue_close(tx));
	OK(smq_validate(w, NULL, 0));
	OK(smq_close(w));
}

/* Board 0's own queue handles, opened before its own init or clear, are
 * from an older generation too: they must not write into the new one. */
static void part_stale_own(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 2, 2, 8, 64);
	struct smq_geometry g = { 2, 2, 8, 64, NULL };
	struct smq_geometry big = { 2, 2, 1024, 4096, NULL };
	struct smq_queue *tx, *rx;
	char buf[64];
	size_t n, len;
	unsigned from;

	for (int round = 0; round < 3; round++) {
		OK(smq_queue_open(w, 1, SMQ_SENDER, 0, &tx));
		OK(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &rx));
		switch (round) {
		case 0: OK(smq_clear(w, -1)); break;
		case 1: OK(smq_init(w, &g, sizeof(g))); break;
		case 2: OK(smq_init(w, &big, sizeof(big))); break; /* the window grows */
		}
		uint8_t *snap = test_snapshot(spec, &len);
		EXPECT(smq_send(tx, "old", 3, 0), -ESTALE);
		EXPECT(smq_receive(rx, buf, sizeof(buf), &n, &from, 0), -ESTALE);
		test_same(snap, len, spec, "queue handles from before the format");
		free(snap);
		OK(smq_queue_close(tx));
		OK(smq_queue_close(rx));
		OK(smq_validate(w, NULL, 0));
	}
	OK(smq_close(w));
}

/* A re-init with another geometry moves every offset: where a stale board
 * looks for its notice may now hold anything.  The new geometry is chosen
 * (when one is found) so that the old notice of board 1 falls on a lane's
 * top, which then counts up to the old generation. */
struct regeo_arg {
	const char *spec;
	struct chan ready, go;
};

static int regeo_board(void *p)
{
	struct regeo_arg *a = p;
	struct smq_window *w;
	struct smq_queue *tx, *q = (void *)1;
	size_t len;

	OK(smq_open(a->spec, 1, 0, &w));
	OK(smq_announce(w));
	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &tx));
	chan_post(&a->ready);
	chan_wait(&a->go, "board 0 to init another geometry");

	uint8_t *snap = test_snapshot(a->spec, &len);
	EXPECT(smq_announce(w), -ESTALE);
	EXPECT(smq_heartbeat(w), -ESTALE);
	EXPECT(smq_send(tx, "x", 1, 0), -ESTALE);
	EXPECT(smq_queue_open(w, 0, SMQ_SENDER, 0, &q), -ESTALE);
	EXPECT(smq_synchronize(w, 0, 0, 1, NULL), -ESTALE);
	test_same(snap, len, a->spec, "stale board after a new geometry");
	free(snap);
	OK(smq_queue_close(tx));
	OK(smq_close(w));
	return 0;
}

static void part_stale_geometry(void)
{
	const char *spec = test_window();
	struct smq_geometry og = { 2, 1, 1, 64, NULL };
	struct smq_geometry ng = { 2, 3, 4, 64, NULL };
	struct smq_window *w = test_init(spec, og.boards, og.queues, og.entries,
					  og.entry_size);
	struct smq_layout lo, ln;
	unsigned hit_q = 0, hit_s = 0;
	bool hit = false;

	OK(smq_layout_compute(&lo, &og));
	for (uint32_t nq = 2; nq <= 64 && !hit; nq++)
		for (uint32_t ne = 1; ne <= 16 && !hit; ne *= 2) {
			struct smq_geometry g = { 2, nq, ne, 64, NULL };
			OK(smq_layout_compute(&ln, &g));
			for (unsigned q = 0; q < nq && !hit; q++)
				for (unsigned s = 0; s < 2 && !hit; s++)
					if (lay_lane_in(&ln, q, s) ==
					    lay_notice(&lo, 1)) {
						hit = true;
						hit_q = q;
						hit_s = s;
						ng = g;
					}
			smq_layout_free(&ln);
		}
	smq_layout_free(&lo);

	struct regeo_arg a = { .spec = spec };
	chan_init(&a.ready);
	chan_init(&a.go);
	pid_t pid = test_fork(regeo_board, &a);
	chan_wait(&a.ready, "board 1 to open its sender");
	uint64_t gen = generation(w);
	OK(smq_init(w, &ng, sizeof(ng)));
	/* traffic in the new window: a lane's top reaches the old generation */
	struct smq_window *ws = w;
	struct smq_queue *tx;
	if (hit_s != 0)
		OK(smq_open(spec, hit_s, 0, &ws));
	OK(smq_queue_open(ws, hit_q, SMQ_SENDER, 0, &tx));
	for (uint64_t i = 0; i < gen; i++)
		OK(smq_send(tx, "y", 1, 0));
	OK(smq_queue_close(tx));
	if (ws != w)
		OK(smq_close(ws));
	chan_post(&a.go);
	test_wait_ok(pid, "stale board after a new geometry");
	OK(smq_validate(w, NULL, 0));
	OK(smq_close(w));
}

/* ---- d. permissions and receiver claims ---- */

struct claim_arg {
	const char *spec;
	struct chan ready;
	unsigned queue;
};

static int other_receiver(void *p)
{
	struct claim_arg *a = p;
	struct smq_window *w;
	struct smq_queue *q = (void *)1;

	OK(smq_open(a->spec, 0, 0, &w));
	EXPECT(smq_queue_open(w, a->queue, SMQ_RECEIVER, 0, &q), -EBUSY);
	CHECK(q == NULL);
	/* a sender on the same queue is fine */
	OK(smq_queue_open(w, a->queue, SMQ_SENDER, 0, &q));
	OK(smq_queue_close(q));
	OK(smq_close(w));
	return 0;
}

static int hold_receiver(void *p)
{
	struct claim_arg *a = p;
	struct smq_window *w;
	struct smq_queue *q;
	char buf[64];
	size_t n;

	OK(smq_open(a->spec, 0, 0, &w));
	OK(smq_queue_open(w, a->queue, SMQ_RECEIVER, SMQ_SLEEP, &q));
	chan_post(&a->ready);
	/* asleep on the doorbell until killed */
	for (;;)
		smq_receive(q, buf, sizeof(buf), &n, NULL, SMQ_WAIT_FOREVER);
	return 1;
}

static int board1_denied(void *p)
{
	struct claim_arg *a = p;
	struct smq_window *w;
	struct smq_queue *q = (void *)1;
	struct smq_geometry g = { 2, 2, 8, 64, NULL };
	size_t len;

	OK(smq_open(a->spec, 1, 0, &w));
	OK(smq_announce(w));
	uint8_t *snap = test_snapshot(a->spec, &len);
	EXPECT(smq_init(w, &g, sizeof(g)), -EPERM);
	EXPECT(smq_clear(w, -1), -EPERM);
	EXPECT(smq_clear(w, 0), -EPERM);
	EXPECT(smq_clear(w, 1), -EPERM);
	test_same(snap, len, a->spec, "init and clear from board 1");
	free(snap);
	EXPECT(smq_queue_open(w, 4, SMQ_SENDER, 0, &q), -EINVAL);
	CHECK(q == NULL);
	EXPECT(smq_queue_open(w, 4, SMQ_RECEIVER, 0, &q), -EINVAL);
	/* queue 0 is board 0's */
	EXPECT(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &q), -EPERM);
	CHECK(q == NULL);
	OK(smq_queue_open(w, 1, SMQ_RECEIVER, 0, &q));
	OK(smq_queue_close(q));
	OK(smq_close(w));
	return 0;
}

static void part_permissions(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 2, 2, 8, 64), *w1;
	struct claim_arg a = { .spec = spec, .queue = 0 };
	struct smq_queue *rx, *rx2 = (void *)1, *tx;
	struct smq_queue_info qi;
	char buf[64];
	size_t n, len;
	unsigned from;

	test_wait_ok(test_fork(board1_denied, &a), "board 1 denied");

	/* Out of range queues, for clear and open. */
	uint8_t *snap = test_snapshot(spec, &len);
	uint64_t gen = generation(w);
	EXPECT(smq_clear(w, 4), -EINVAL);
	EXPECT(smq_clear(w, 1000), -EINVAL);
	test_same(snap, len, spec, "smq_clear of queue 4");
	free(snap);
	CHECK(generation(w) == gen);
	EXPECT(smq_queue_open(w, 4, SMQ_SENDER, 0, &rx2), -EINVAL);
	CHECK(rx2 == NULL);
	EXPECT(smq_queue_open(w, 4, SMQ_RECEIVER, 0, &rx2), -EINVAL);
	EXPECT(smq_queue_open(w, 0xffffffffu, SMQ_SENDER, 0, &rx2), -EINVAL);
	EXPECT(smq_queue_open(w, 1, SMQ_RECEIVER, 0, &rx2), -EPERM);
	EXPECT(smq_queue_open(w, 0, (enum smq_role)3, 0, &rx2), -EINVAL);
	EXPECT(smq_queue_open(w, 0, SMQ_RECEIVER, SMQ_POLL | SMQ_SLEEP, &rx2),
	       -EINVAL);

	/* One receiver per queue: a second one here is this process's own
	 * (-SMQ_EHOLDING), elsewhere busy. */
	OK(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &rx));
	EXPECT(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &rx2), -SMQ_EHOLDING);
	CHECK(rx2 == NULL);
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	CHECK(qi.receiver_pid == (uint32_t)getpid());
	test_wait_ok(test_fork(other_receiver, &a), "second receiver");
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	CHECK(qi.receiver_pid == (uint32_t)getpid());
	OK(smq_queue_close(rx));
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	CHECK(qi.receiver_pid == 0);

	/* A receiver killed while it holds the queue (asleep in receive). */
	chan_init(&a.ready);
	pid_t holder = test_fork(hold_receiver, &a);
	chan_wait(&a.ready, "the holding receiver to open its queue");
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	CHECK(qi.receiver_pid == (uint32_t)holder);
	WAIT_UNTIL(smq_queue_info(w, 0, &qi, sizeof(qi)) == 0 && qi.sleeping,
		   10, "the holding receiver (pid %d) to sleep", (int)holder);
	EXPECT(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &rx2), -EBUSY);
	test_wait_ok(test_fork(other_receiver, &a), "receiver while held");
	kill(holder, SIGKILL);
	wait_killed(holder);

	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	OK(smq_send(tx, "k1", 2, 0));
	OK(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &rx));
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	CHECK(qi.receiver_pid == (uint32_t)getpid() && !qi.sleeping);
	OK(smq_receive(rx, buf, sizeof(buf), &n, &from, 1000));
	CHECK(n == 2 && !memcmp(buf, "k1", 2) && from == 1);
	OK(smq_send(tx, "k2", 2, 0));
	OK(smq_receive(rx, buf, sizeof(buf), &n, &from, 1000));
	CHECK(n == 2 && !memcmp(buf, "k2", 2) && from == 1);
	OK(smq_queue_close(rx));
	OK(smq_queue_close(tx));
	OK(smq_validate(w, NULL, 0));
	OK(smq_close(w1));
	OK(smq_close(w));
}

/* ---- main: each part in its own process ---- */

struct part {
	const char *name;
	void (*fn)(void);
};

static int run(void *p)
{
	((const struct part *)p)->fn();
	/* not _exit: what it printed is flushed, and the children it left
	 * are ended (its windows go with the test's, at the end) */
	exit(0);
}

/* Two processes of a board each count a beat and store it in the board's
 * slot; the one that counted first may store last.  What a handle shows
 * never goes back within a generation (Prometheus takes a counter that
 * does for a reset); a new format starts it again. */
static void part_heartbeat_monotonic(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 2, 1, 8, 64), *mon;
	struct smq_board_info bi;

	OK(smq_open(spec, 0, SMQ_OPEN_READONLY, &mon));
	struct smq_board_slot *s = at(w, lay_slot(1));
	STORE(&s->heartbeat, 100);
	OK(smq_board_info(mon, 1, &bi, sizeof(bi)));
	CHECK(bi.heartbeat == 100);
	STORE(&s->heartbeat, 90);
	OK(smq_board_info(mon, 1, &bi, sizeof(bi)));
	if (bi.heartbeat != 100)
		FAIL("a heartbeat stored out of order went back to %llu",
		     (unsigned long long)bi.heartbeat);
	STORE(&s->heartbeat, 120);
	OK(smq_board_info(mon, 1, &bi, sizeof(bi)));
	CHECK(bi.heartbeat == 120);
	OK(smq_clear(w, -1));
	OK(smq_board_info(mon, 1, &bi, sizeof(bi)));
	CHECK(bi.heartbeat == 0);
	OK(smq_close(mon));
	OK(smq_close(w));
}

int main(void)
{
	static const struct part parts[] = {
		{ "a heartbeat never goes back", part_heartbeat_monotonic },
		{ "random startup of 8 boards", part_random_start },
		{ "synchronize timeout", part_timeout },
		{ "one announcer per board", part_one_announcer },
		{ "an announcer killed in sync", part_killed_announcer },
		{ "closed while judged", part_closed_while_judged },
		{ "finished while judged", part_finished_while_judged },
		{ "stale after init and clear", part_stale },
		{ "permissions and receiver claims", part_permissions },
		{ "clear of one queue", part_clear_one },
		{ "stale queue handles of board 0", part_stale_own },
		{ "stale board after a new geometry", part_stale_geometry },
	};
	const size_t n = sizeof(parts) / sizeof(parts[0]);
	size_t passed = 0;

	/* each part in a process of its own: one failing does not hide the
	 * others */
	for (size_t i = 0; i < n; i++) {
		int status;
		pid_t pid = test_fork(run, (void *)&parts[i]);
		test_waiting("the part \"%s\" (pid %d)", parts[i].name,
			     (int)pid);
		if (waitpid(pid, &status, 0) != pid)
			FAIL("waitpid");
		test_waiting(NULL);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			fprintf(stderr, "t_sync: FAIL: %s (status 0x%x)\n",
				parts[i].name, status);
		else
			passed++;
	}
	test_work("parts passed", passed, n);
	return 0;
}
