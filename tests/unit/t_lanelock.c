/* The lane lock under contention, between two processes of one board
 * sending on one queue.  A sender that finds the lock held spins a while,
 * then, where the window's memory takes a futex, sleeps on the lock word;
 * the holder's release wakes it (a send's release, which rides on the
 * send's own full barrier, and a loan given back, which makes one of its
 * own).  A holder that dies while the waiter sleeps is replaced by the
 * waiter, which looks again at the holder between naps.  Where the memory
 * takes no futex (a BAR: forced here by the transport's table with no
 * futex doorbell, which is what the decision reads), the waiter yields the
 * CPU instead and never sleeps, and recovers a dead holder the same way.
 *
 * The waiter's sleeps, wake-ups, naps slept out and yields are counted by
 * the test build's hooks; the holder releases only once the waiter sleeps
 * in the kernel (/proc/PID/syscall), so a wake-up counted is the release's,
 * not a lock that moved before the sleep.  A waiter's nap (1 to 32 ms) may
 * still end on its own just as the release comes, on a busy machine: so
 * the lock is held and released ROUNDS times, and at least one release
 * must have woken it (without the wake-up, none does). */
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "testint.h"
#include "testlib.h"
TEST_FLOOR(112);

#ifndef SMQ_COUNT_FAR
#error "t_lanelock needs the test build's hooks (SMQ_COUNT_FAR)"
#endif

#define ROUNDS 5

enum release { BY_SUBMIT, BY_ABORT, BY_DEATH };
static const char *const release_name[] = { "a loan submitted",
					    "a loan given back",
					    "the holder killed" };

/* Between the processes of one case. */
struct shared {
	atomic_uint sleeps, woken, slept_out, yields;  /* the waiter's hooks */
	atomic_int waiter_open, go, holder_ready, release, waiter_err,
		   waiter_done;     /* rounds, from 1 */
	int how;
};
static struct shared *sh;
static const char *spec;
static bool no_futex;

static void count_hook(enum smq_hook where)
{
	switch (where) {
	case SMQ_HOOK_LOCK_SLEEP:
		atomic_fetch_add(&sh->sleeps, 1);
		break;
	case SMQ_HOOK_LOCK_WOKEN:
		atomic_fetch_add(&sh->woken, 1);
		break;
	case SMQ_HOOK_LOCK_SLEPT_OUT:
		atomic_fetch_add(&sh->slept_out, 1);
		break;
	case SMQ_HOOK_LOCK_YIELD:
		atomic_fetch_add(&sh->yields, 1);
		break;
	default:
		break;
	}
}

/* The window's transport as it is, but with no futex doorbell: what the
 * lock's decision to sleep reads (a BAR's transport rings no futex). */
static struct smq_transport plain;

static struct smq_queue *open_sender(struct smq_window **wp)
{
	struct smq_queue *q;

	OK(smq_open(spec, 1, 0, wp));
	if (no_futex) {
		plain = *(*wp)->map.tp;
		plain.ring_kinds = NULL;
		(*wp)->map.tp = &plain;
	}
	OK(smq_queue_open(*wp, 0, SMQ_SENDER, 0, &q));
	return q;
}

static int waiter(void *arg)
{
	struct smq_window *w;
	struct smq_queue *q = open_sender(&w);
	int rounds = sh->how == BY_DEATH ? 1 : ROUNDS;

	(void)arg;
	atomic_store(&sh->waiter_open, 1);
	for (int r = 1; r <= rounds; r++) {
		WAIT_UNTIL(atomic_load(&sh->holder_ready) == r, 60,
			   "the holder's loan %d", r);
		smq_test_hook = count_hook;
		int err = smq_send(q, "wait", 4, -1);
		smq_test_hook = NULL;
		atomic_store(&sh->waiter_err, err);
		atomic_store(&sh->waiter_done, r);
		OK(err);
	}
	OK(smq_queue_close(q));
	OK(smq_close(w));
	return 0;
}

static int holder(void *arg)
{
	struct smq_window *w;
	struct smq_queue *q = open_sender(&w);
	void *p;

	(void)arg;
	for (int r = 1; r <= ROUNDS; r++) {
		WAIT_UNTIL(atomic_load(&sh->go) == r, 60, "round %d", r);
		OK(smq_loan(q, 4, &p, 0));  /* the lane lock, held */
		memcpy(p, "held", 4);
		atomic_store(&sh->holder_ready, r);
		WAIT_UNTIL(atomic_load(&sh->release) == r, 60,
			   "the word to release %d", r);
		if (sh->how == BY_SUBMIT)
			OK(smq_loan_submit(q, 4));
		else
			OK(smq_loan_abort(q));
	}
	OK(smq_queue_close(q));
	OK(smq_close(w));
	return 0;
}

/* Whether pid is blocked in futex(2): its lock word, the only futex the
 * waiter sleeps on.  -1: /proc does not say. */
static int in_futex(pid_t pid)
{
	char path[64], buf[64];
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	bool got = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!got || buf[0] < '0' || buf[0] > '9')
		return -1;
	return atol(buf) == SYS_futex;
}

/* The messages queue 0 holds, in order, against want (NULL-ended). */
static void expect_messages(struct smq_window *w0, const char *const *want,
			    const char *what)
{
	struct smq_queue *rx;
	char buf[64];
	size_t n;

	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, SMQ_POLL, &rx));
	for (int i = 0; want[i]; i++) {
		OK(smq_receive(rx, buf, sizeof(buf), &n, NULL, 0));
		if (n != strlen(want[i]) || memcmp(buf, want[i], n))
			FAIL("%s: message %d is \"%.*s\", not \"%s\"", what, i,
			     (int)n, buf, want[i]);
	}
	EXPECT(smq_receive(rx, buf, sizeof(buf), &n, NULL, 0), -EAGAIN);
	OK(smq_queue_close(rx));
}

/* Round r: the holder takes the lock, the waiter's send finds it held
 * and waits; once the waiter sleeps (or yields), the holder releases it,
 * or dies holding it. */
static void round_of(int r, pid_t wp, pid_t hp, const char *what)
{
	unsigned sleeps = atomic_load(&sh->sleeps);
	unsigned yields = atomic_load(&sh->yields);

	atomic_store(&sh->go, r);
	WAIT_UNTIL(atomic_load(&sh->holder_ready) == r, 60,
		   "%s: the holder's loan %d", what, r);
	if (no_futex) {
		WAIT_UNTIL(atomic_load(&sh->yields) >= yields + 8 ||
			   atomic_load(&sh->sleeps), 60,
			   "%s: the waiter yielding, round %d", what, r);
		/* never a sleep where the memory takes no futex */
		if (atomic_load(&sh->sleeps))
			FAIL("%s: the waiter slept on a lock whose memory takes "
			     "no futex", what);
	} else {
		WAIT_UNTIL(atomic_load(&sh->sleeps) > sleeps &&
			   in_futex(wp) != 0, 60,
			   "%s: the waiter asleep on the lock, round %d", what,
			   r);
	}
	if (sh->how == BY_DEATH) {
		int st;
		kill(hp, SIGKILL);
		CHECK(waitpid(hp, &st, 0) == hp && WIFSIGNALED(st));
	} else {
		atomic_store(&sh->release, r);
	}
	WAIT_UNTIL(atomic_load(&sh->waiter_done) == r, 60,
		   "%s: the waiter's send %d (the lock %s)", what, r,
		   sh->how == BY_DEATH ? "left by a dead holder" : "released");
	EXPECT(atomic_load(&sh->waiter_err), 0);
}

static void one_case(enum release how)
{
	const struct smq_geometry g = { 2, 1, 16, 64, (const uint16_t[]){ 0 } };
	const char *order[2 * ROUNDS + 1];
	struct smq_window *w0;
	char what[160];
	int rounds = how == BY_DEATH ? 1 : ROUNDS;

	snprintf(what, sizeof(what), "%s, %s", no_futex ? "no futex" : "futex",
		 release_name[how]);
	memset(sh, 0, sizeof(*sh));
	sh->how = how;
	spec = test_window();
	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w0));
	OK(smq_init(w0, &g, sizeof(g)));

	/* the waiter opens first: its open takes the lock for a moment */
	pid_t wp = test_fork(waiter, NULL);
	WAIT_UNTIL(atomic_load(&sh->waiter_open), 60, "%s: the waiter's open",
		   what);
	pid_t hp = test_fork(holder, NULL);
	for (int r = 1; r <= rounds; r++)
		round_of(r, wp, hp, what);
	test_wait_ok(wp, "the waiter");
	if (how != BY_DEATH)
		test_wait_ok(hp, "the holder");

	if (no_futex) {
		/* never a sleep where the memory takes no futex */
		if (atomic_load(&sh->sleeps))
			FAIL("%s: the waiter slept %u times on a lock whose "
			     "memory takes no futex", what,
			     atomic_load(&sh->sleeps));
	} else if (how != BY_DEATH) {
		/* a release wakes the sleeper: without it, every sleep ends
		 * at its nap */
		if (!atomic_load(&sh->woken))
			FAIL("%s: no release woke the sleeping waiter (%u "
			     "sleeps, %u naps slept out, %d rounds)", what,
			     atomic_load(&sh->sleeps),
			     atomic_load(&sh->slept_out), rounds);
	} else {
		/* nobody wakes it: its nap ends, it looks at the holder */
		CHECK(atomic_load(&sh->slept_out) >= 1);
	}

	/* the lane as one sender at a time left it: free, each message
	 * whole, in the order the lock was held */
	struct smq_lane_info li;
	OK(smq_lane_info(w0, 0, 1, &li, sizeof(li)));
	CHECK(li.lock_pid == 0);
	int n = 0;
	for (int r = 0; r < rounds; r++) {
		if (how == BY_SUBMIT)
			order[n++] = "held";
		order[n++] = "wait";
	}
	order[n] = NULL;
	expect_messages(w0, order, what);
	OK(smq_validate(w0, NULL, 0));
	OK(smq_close(w0));
	printf("%s: %d rounds, the waiter %s %u times (%u woken, %u naps "
	       "out), then sent\n", what, rounds,
	       no_futex ? "yielded" : "slept",
	       no_futex ? atomic_load(&sh->yields) : atomic_load(&sh->sleeps),
	       atomic_load(&sh->woken), atomic_load(&sh->slept_out));
}

int main(void)
{
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	for (int nf = 0; nf < 2; nf++) {
		no_futex = nf;
		one_case(BY_SUBMIT);
		one_case(BY_ABORT);
		one_case(BY_DEATH);
	}
	return 0;
}
