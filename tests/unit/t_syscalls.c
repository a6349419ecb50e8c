/* The system calls of the message path, counted, not timed.  Two boards
 * bounce messages through the futex doorbell, each in a child that
 * this test traces (ptrace): between two markers it counts every system
 * call each side makes, and the test build's hook counts the sleeps each
 * receiver arms (SMQ_HOOK_ARM).  For every message:
 *  - at most one wake (FUTEX_WAKE), and only of a receiver asleep: a side
 *    wakes no more often than it sends, nor than its peer armed a sleep
 *    (once per sleep: a batch sent to a sleeper rings it once), and
 *    never a receiver that busy-polls;
 *  - at most one wait (FUTEX_WAIT*) per sleep armed;
 *  - no other system call (a clock read counts only where this machine's
 *    clock is a system call, not a vDSO read).
 * A look at /proc beside every ring (is the sleeper alive?) once cost six
 * system calls a message and doubled the sleeping path's half round trip
 * unseen: that is what this test is for.  A sender still looks once per
 * receiving process, at its first ring: each side rings its peer once
 * before the count.  Over shm (or file, SMQ_TEST_TRANSPORT): the futex
 * doorbell, the one a wake and a wait are each one system call of. */
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include "testint.h"
#include "testlib.h"

#ifndef SMQ_COUNT_FAR
#error "t_syscalls needs the test build's hooks (SMQ_COUNT_FAR)"
#endif

#define ROUNDS 2000     /* round trips of a ping-pong */
#define BATCHES 200     /* batches of BATCH messages, each answered once */
#define BATCH 8
#define NOT_TRACED 77   /* a child this kernel does not let us trace */

/* What each side does between its markers. */
enum phase { P_CLOCK, P_SLEEP, P_BATCH, P_POLL, PHASES };
static const char *const phase_name[PHASES] = {
	"a clock read", "ping-pong, both asleep between messages",
	"batches of 8 to a receiver asleep", "ping-pong, both busy-polling",
};
static const unsigned phase_flags[PHASES] = { 0, SMQ_SLEEP, SMQ_SLEEP,
					      SMQ_POLL };

/* Markers: a system call the library never makes, with an argument no
 * caller passes (getpriority fails on it). */
#define MARK_BEGIN 0x534d5100
#define MARK_END 0x534d5180

#define OTHERS 8        /* other system calls named in a failure */
struct calls {
	uint64_t wakes, waits, clock, other;
	long other_nr[OTHERS];
};

struct shared {
	_Atomic unsigned meet[PHASES];
	uint64_t arms[2][PHASES];       /* sleeps armed, by the hook */
	uint64_t sent[2][PHASES];
	struct calls calls[2][PHASES];  /* by the tracer */
	_Atomic uint64_t held, batch_sent;      /* batches, P_BATCH */
};

static struct shared *sh;
static const char *spec;
static uint64_t arms;
static bool holding;

/* In the batches, side 1 holds where it is about to sleep, armed, until
 * side 0 has sent a whole batch: the batch meets a sleeper that has not
 * woken yet, and rings it once. */
static void count_arms(enum smq_hook where)
{
	if (where == SMQ_HOOK_ARM)
		arms++;
	if (where != SMQ_HOOK_SLEEP || !holding)
		return;
	uint64_t b = sh->held + 1;
	sh->held = b;
	while (sh->batch_sent != b)
		cpu_relax();
}

static void mark(long at)
{
	syscall(SYS_getpriority, at, 0);
}

/* Both sides at the same phase before either counts; the waits here are
 * not counted. */
static void meet(enum phase p)
{
	sh->meet[p]++;
	while (sh->meet[p] < 2)
		sched_yield();
}

static void send_seq(struct smq_queue *tx, uint64_t seq)
{
	OK(smq_send(tx, &seq, sizeof(seq), 10000));
}

static void receive_seq(struct smq_queue *rx, uint64_t want)
{
	uint64_t got = ~0ull;
	size_t n;

	OK(smq_receive(rx, &got, sizeof(got), &n, NULL, 10000));
	if (n != sizeof(got) || got != want)
		FAIL("received %llu (%zu bytes), expected %llu",
		     (unsigned long long)got, n, (unsigned long long)want);
}

/* Each side rings its peer once before the count, the peer surely
 * asleep: a sender looks at a sleeping receiver's process once, at its
 * first ring (is it alive?), and not at the rings after. */
#define WARM (~0ull)
static void warm_up(unsigned me, struct smq_queue *rx, struct smq_queue *tx)
{
	for (unsigned turn = 0; turn < 2; turn++) {
		if (turn != me) {
			receive_seq(rx, WARM);
			continue;
		}
		WAIT_UNTIL(__atomic_load_n(&tx->wake->sleep_epoch,
					   __ATOMIC_ACQUIRE) & 1, 10,
			   "side %u's peer to sleep", me);
		send_seq(tx, WARM);
	}
}

/* In the sleeping ping-pong, every SURE_ASLEEP-th message waits until
 * its receiver sleeps, so that each side wakes its peer at least that
 * often: left to itself, a side whose peer is held at every wake-up
 * (this test traces both, stopping each at every system call) may never
 * find it asleep, and its wakes would go untested (it happened: "side 0
 * ... woke 0").  A spin on the receiver's sleep word, which makes no
 * system call; the receiver waits for this very message, so it arms. */
#define SURE_ASLEEP 16
static void peer_asleep_now_and_then(enum phase p, struct smq_queue *tx,
				     uint64_t i)
{
	if (p != P_SLEEP || i % SURE_ASLEEP)
		return;
	while (!(__atomic_load_n(&tx->wake->sleep_epoch, __ATOMIC_ACQUIRE) & 1))
		cpu_relax();
}

/* Side 0 leads: it sends first, and sends the batches. */
static uint64_t run_phase(enum phase p, unsigned me, struct smq_queue *rx,
			  struct smq_queue *tx)
{
	uint64_t sent = 0;

	if (p == P_CLOCK) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		return 0;
	}
	if (p == P_BATCH) {
		for (uint64_t b = 0; b < BATCHES; b++) {
			if (me == 0) {
				/* side 1 armed its sleep and holds */
				while (sh->held != b + 1)
					cpu_relax();
				for (uint64_t i = 0; i < BATCH; i++)
					send_seq(tx, b * BATCH + i);
				sh->batch_sent = b + 1;
				receive_seq(rx, b);
				continue;
			}
			for (uint64_t i = 0; i < BATCH; i++)
				receive_seq(rx, b * BATCH + i);
			send_seq(tx, b);
		}
		return me == 0 ? BATCHES * BATCH : BATCHES;
	}
	for (uint64_t i = 0; i < ROUNDS; i++, sent++) {
		if (me == 0) {
			peer_asleep_now_and_then(p, tx, i);
			send_seq(tx, i);
			receive_seq(rx, i);
		} else {
			receive_seq(rx, i);
			peer_asleep_now_and_then(p, tx, i);
			send_seq(tx, i);
		}
	}
	return sent;
}

/* Board me receives queue me and sends on the other. */
static int side(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg;
	struct smq_window *w;

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
		return NOT_TRACED;
	raise(SIGSTOP);
	test_pin((int)me);
	OK(smq_open(spec, me, 0, &w));
	smq_test_hook = count_arms;
	for (enum phase p = 0; p < PHASES; p++) {
		struct smq_queue *rx, *tx;
		OK(smq_queue_open(w, me, SMQ_RECEIVER, phase_flags[p], &rx));
		OK(smq_queue_open(w, 1 - me, SMQ_SENDER, phase_flags[p], &tx));
		meet(p);
		if (phase_flags[p] == SMQ_SLEEP)
			warm_up(me, rx, tx);
		arms = 0;
		holding = p == P_BATCH && me == 1;
		mark(MARK_BEGIN + p);
		uint64_t sent = run_phase(p, me, rx, tx);
		mark(MARK_END + p);
		holding = false;
		sh->arms[me][p] = arms;
		sh->sent[me][p] = sent;
		OK(smq_queue_close(tx));
		OK(smq_queue_close(rx));
	}
	OK(smq_close(w));
	return 0;
}

/* One system call's entry, of a side in phase p. */
static void count_call(struct calls *c, const struct __ptrace_syscall_info *si)
{
	long nr = (long)si->entry.nr;
	int op = (int)(si->entry.args[1] & FUTEX_CMD_MASK);

	if (nr == SYS_futex && op == FUTEX_WAKE)
		c->wakes++;
	else if (nr == SYS_futex && (op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET))
		c->waits++;
#ifdef SYS_futex_waitv
	else if (nr == SYS_futex_waitv)
		c->waits++;
#endif
	else if (nr == SYS_clock_gettime)
		c->clock++;
	else if (c->other++ < OTHERS)
		c->other_nr[c->other - 1] = nr;
}

struct tracee {
	pid_t pid;
	int phase;      /* counting phase, or -1 */
	bool done;
};

/* A tracee stopped at a system call's entry or exit. */
static void syscall_stop(struct tracee *t, unsigned me)
{
	struct __ptrace_syscall_info si;

	if (ptrace(PTRACE_GET_SYSCALL_INFO, t->pid, (void *)sizeof(si), &si) < 0)
		FAIL("PTRACE_GET_SYSCALL_INFO: %s", strerror(errno));
	if (si.op != PTRACE_SYSCALL_INFO_ENTRY)
		return;
	uint64_t a = si.entry.args[0];
	if (si.entry.nr == SYS_getpriority && a >= MARK_BEGIN &&
	    a < MARK_BEGIN + PHASES)
		t->phase = (int)(a - MARK_BEGIN);
	else if (si.entry.nr == SYS_getpriority && a >= MARK_END &&
		 a < MARK_END + PHASES)
		t->phase = -1;
	else if (t->phase >= 0)
		count_call(&sh->calls[me][t->phase], &si);
}

/* Follows both sides to their exit; false if this kernel lets us trace
 * neither. */
static bool trace(struct tracee *t)
{
	unsigned left = 2;

	for (unsigned i = 0; i < 2; i++) {
		int st;
		if (waitpid(t[i].pid, &st, 0) != t[i].pid)
			FAIL("waitpid: %s", strerror(errno));
		if (WIFEXITED(st) && WEXITSTATUS(st) == NOT_TRACED)
			return false;
		if (!WIFSTOPPED(st))
			FAIL("side %u did not stop to be traced (0x%x)", i, st);
		if (ptrace(PTRACE_SETOPTIONS, t[i].pid, NULL,
			   (void *)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)) < 0)
			FAIL("PTRACE_SETOPTIONS: %s", strerror(errno));
		ptrace(PTRACE_SYSCALL, t[i].pid, NULL, NULL);
	}
	test_waiting("both sides to finish their phases");
	while (left) {
		int st, sig = 0;
		pid_t pid = waitpid(-1, &st, __WALL);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0)
			FAIL("waitpid: %s", strerror(errno));
		unsigned me = pid == t[0].pid ? 0 : 1;
		if (pid != t[me].pid)
			continue;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				FAIL("side %u failed (status 0x%x)", me, st);
			t[me].done = true;
			left--;
			continue;
		}
		if (WIFSTOPPED(st) && WSTOPSIG(st) == (SIGTRAP | 0x80))
			syscall_stop(&t[me], me);
		else if (WIFSTOPPED(st))
			sig = WSTOPSIG(st);  /* delivered as it came */
		ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig);
	}
	test_waiting(NULL);
	return true;
}

/* The system calls a message path could be tempted to make, by name;
 * others by number. */
static const char *call_name(long nr)
{
	static const struct { long nr; const char *name; } known[] = {
		{ SYS_openat, "openat" }, { SYS_read, "read" },
		{ SYS_close, "close" }, { SYS_write, "write" },
		{ SYS_kill, "kill" }, { SYS_getpid, "getpid" },
		{ SYS_gettid, "gettid" }, { SYS_sched_yield, "sched_yield" },
		{ SYS_nanosleep, "nanosleep" },
		{ SYS_clock_nanosleep, "clock_nanosleep" },
		{ SYS_membarrier, "membarrier" }, { SYS_ppoll, "ppoll" },
		{ SYS_futex, "futex (neither wake nor wait)" },
	};
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i].nr == nr)
			return known[i].name;
	return NULL;
}

static void say_others(const struct calls *c, char *buf, size_t cap)
{
	size_t n = 0;

	buf[0] = 0;
	for (uint64_t i = 0; i < c->other && i < OTHERS && n < cap; i++) {
		const char *name = call_name(c->other_nr[i]);
		n += name ? (size_t)snprintf(buf + n, cap - n, " %s", name)
			  : (size_t)snprintf(buf + n, cap - n, " %ld",
					     c->other_nr[i]);
	}
}

static void judge(bool clock_is_call)
{
	for (enum phase p = P_SLEEP; p < PHASES; p++)
		for (unsigned me = 0; me < 2; me++) {
			const struct calls *c = &sh->calls[me][p];
			uint64_t peer_arms = sh->arms[1 - me][p];
			uint64_t others = c->other + (clock_is_call ? 0 : c->clock);
			char nrs[256];
			printf("%s: side %u sent %llu, armed %llu sleeps, woke "
			       "%llu, waited %llu, other calls %llu\n",
			       phase_name[p], me,
			       (unsigned long long)sh->sent[me][p],
			       (unsigned long long)sh->arms[me][p],
			       (unsigned long long)c->wakes,
			       (unsigned long long)c->waits,
			       (unsigned long long)others);
			say_others(c, nrs, sizeof(nrs));
			if (others)
				FAIL("%s: side %u made %llu system calls beside "
				     "its wakes and waits (the first:%s%s)",
				     phase_name[p], me,
				     (unsigned long long)others, nrs,
				     c->clock && !clock_is_call ? " and clock_gettime" : "");
			if (c->wakes > sh->sent[me][p])
				FAIL("%s: side %u woke %llu times for %llu "
				     "messages", phase_name[p], me,
				     (unsigned long long)c->wakes,
				     (unsigned long long)sh->sent[me][p]);
			if (c->wakes > peer_arms)
				FAIL("%s: side %u woke %llu times, its peer "
				     "armed %llu sleeps", phase_name[p], me,
				     (unsigned long long)c->wakes,
				     (unsigned long long)peer_arms);
			if (c->waits > sh->arms[me][p])
				FAIL("%s: side %u waited %llu times, armed "
				     "%llu sleeps", phase_name[p], me,
				     (unsigned long long)c->waits,
				     (unsigned long long)sh->arms[me][p]);
			/* the sleeping phases slept: else they prove nothing */
			if (phase_flags[p] == SMQ_SLEEP && (!c->waits ||
							    !c->wakes))
				FAIL("%s: side %u never slept or never woke its "
				     "peer", phase_name[p], me);
		}
}

int main(void)
{
	struct tracee t[2] = { { 0, -1, false }, { 0, -1, false } };

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		FAIL("mmap: %s", strerror(errno));
	memset(sh, 0, sizeof(*sh));
	spec = test_window();
	struct smq_window *w0 = test_init(spec, 2, 2, 64, 64);
	for (unsigned i = 0; i < 2; i++)
		t[i].pid = test_fork(side, (void *)(uintptr_t)i);
	if (!trace(t)) {
		printf("this kernel does not let a process trace its "
		       "children (ptrace)\n");
		return SKIP;
	}
	OK(smq_close(w0));
	bool clock_is_call = sh->calls[0][P_CLOCK].clock != 0;
	if (clock_is_call)
		printf("a clock read is a system call here (no vDSO clock): "
		       "clock reads are not counted\n");
	judge(clock_is_call);
	uint64_t messages = 0;
	for (enum phase p = P_SLEEP; p < PHASES; p++)
		messages += sh->sent[0][p] + sh->sent[1][p];
	test_work("messages counted", messages, 2 * 2 * ROUNDS);
	return 0;
}
