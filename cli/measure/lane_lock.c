/* bench --baseline: the lane lock under preemption.  Processes of one
 * board sending on one queue serialise on its lane lock; on a machine
 * busier than its CPUs, a holder loses its CPU in the middle of a send,
 * and what its waiters do meanwhile decides what the lane moves.  So:
 * senders of board 0 stream 64-byte messages to a receiver of board 1 on
 * a scratch window, beside two CPU hogs, all on the bench's two CPUs and
 * pinned to neither (the scheduler shares them out, as on a busy host),
 * for a while: two sending processes, against one alone.  In the default
 * mode, as an application waits (spin, then sleep). */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "baseline_proc.h"
#include "compare.h"

#define LANE_HOGS 2
#define LANE_MAX_SENDERS 2
#define LANE_SIZE 64
#define LANE_WARM_MS 100        /* after every process is ready, untimed */
#define LANE_POLL_MS 50         /* a child's calls time out this often to
				   look at the stop */
#define LANE_READY_NS 10000000000ull  /* children that are not ready by
				   then are a failure */

/* What the processes of a run share. */
struct lane_state {
	_Alignas(64) uint32_t go, stop;
	_Alignas(64) uint32_t ready;
	_Alignas(64) uint64_t received;
	_Alignas(64) int err;           /* a child's failure, the first */
	const char *what;               /* ...and what it did (static) */
};

static void child_failed(struct lane_state *st, int err, const char *what)
{
	int none = 0;
	if (__atomic_compare_exchange_n(&st->err, &none, err, false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		st->what = what;
	__atomic_store_n(&st->stop, 1, __ATOMIC_RELEASE);
	_exit(1);
}

static bool stopped(const struct lane_state *st)
{
	return __atomic_load_n(&st->stop, __ATOMIC_ACQUIRE);
}

/* A process that only burns its CPU, as `while :; do :; done` does. */
static void hog(const struct lane_state *st)
{
	while (!stopped(st))
		;
	_exit(0);
}

static void receiver(struct lane_state *st, const char *spec)
{
	struct smq_window *w;
	struct smq_queue *q;
	char buf[LANE_SIZE];
	size_t len;
	int err;

	if ((err = smq_open(spec, 1, 0, &w)) ||
	    (err = smq_queue_open(w, 0, SMQ_RECEIVER, 0, &q)))
		child_failed(st, err, "the receiver's open");
	__atomic_add_fetch(&st->ready, 1, __ATOMIC_RELEASE);
	while (!stopped(st)) {
		err = smq_receive(q, buf, sizeof(buf), &len, NULL,
				  LANE_POLL_MS);
		if (!err)  /* one writer: the parent only reads it */
			__atomic_store_n(&st->received,
					 __atomic_load_n(&st->received,
							 __ATOMIC_RELAXED) + 1,
					 __ATOMIC_RELAXED);
		else if (err != -ETIMEDOUT)
			child_failed(st, err, "a receive");
	}
	_exit(0);
}

static void sender(struct lane_state *st, const char *spec)
{
	struct smq_window *w;
	struct smq_queue *q;
	char msg[LANE_SIZE] = { 0 };
	int err;

	if ((err = smq_open(spec, 0, 0, &w)) ||
	    (err = smq_queue_open(w, 0, SMQ_SENDER, 0, &q)))
		child_failed(st, err, "a sender's open");
	__atomic_add_fetch(&st->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&st->go, __ATOMIC_ACQUIRE) && !stopped(st))
		sched_yield();
	while (!stopped(st)) {
		err = smq_send(q, msg, sizeof(msg), LANE_POLL_MS);
		if (err && err != -ETIMEDOUT && err != -EAGAIN)
			child_failed(st, err, "a send");
	}
	_exit(0);
}

static void nap_ms(int ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000 };
	while (nanosleep(&t, &t) < 0 && errno == EINTR && !measure_interrupted)
		;
}

/* Formats the scratch window: 2 boards, one queue that board 1 receives,
 * entries of the small messages' geometry. */
static int lane_window(const char *spec)
{
	const uint16_t receivers[] = { 1 };
	struct smq_geometry g = { 2, 1, SMALL_ENTRIES, LANE_SIZE, receivers };
	struct smq_window *w;
	int err = smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w);

	if (!err) {
		err = smq_init(w, &g, sizeof(g));
		smq_close(w);
	}
	return err;
}

/* Forks the run's processes: the hogs, the receiver, the senders. */
static int lane_fork(struct lane_state *st, const char *spec, int senders,
		     const cpu_set_t *cpus, pid_t *pid, int *n)
{
	pid_t parent = getpid();

	for (*n = 0; *n < LANE_HOGS + 1 + senders; (*n)++) {
		pid_t p = fork();
		if (p < 0)
			return -errno;
		if (p) {
			pid[*n] = p;
			continue;
		}
		signal(SIGINT, SIG_IGN);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		sched_setaffinity(0, sizeof(*cpus), cpus);
		if (*n < LANE_HOGS)
			hog(st);
		else if (*n == LANE_HOGS)
			receiver(st, spec);
		else
			sender(st, spec);
	}
	return 0;
}

/* Stops the run's processes and reaps them: each may take a call's
 * timeout to see the stop; one that does not is killed. */
static void lane_reap(struct lane_state *st, const pid_t *pid, int n)
{
	uint64_t give_up = now_ns() + REAP_GRACE_NS;

	__atomic_store_n(&st->stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < n; i++) {
		int status;
		while (waitpid(pid[i], &status, WNOHANG) == 0) {
			if (now_ns() > give_up) {
				kill(pid[i], SIGKILL);
				waitpid(pid[i], &status, 0);
				break;
			}
			nap_ms(1);
		}
	}
}

/* Naps until ms have passed since t0, or count messages (0: no count)
 * arrived since c0; the last count read. */
static uint64_t lane_timed(struct lane_state *st, uint64_t t0, uint64_t c0,
			   int ms, uint64_t count)
{
	uint64_t end = t0 + (uint64_t)ms * 1000000ull;
	uint64_t c = c0;

	if (!count) {
		nap_ms(ms);
		return __atomic_load_n(&st->received, __ATOMIC_RELAXED);
	}
	while (c - c0 < count && now_ns() < end && !measure_interrupted) {
		nap_ms(1);
		c = __atomic_load_n(&st->received, __ATOMIC_RELAXED);
	}
	return c;
}

int lane_lock_run(int senders, int cpu_a, int cpu_b, int ms, uint64_t count,
		  struct result *r)
{
	char path[128], spec[160];
	pid_t pid[LANE_HOGS + 1 + LANE_MAX_SENDERS];
	cpu_set_t cpus;
	int n = 0, err;

	/* the bench's two CPUs, or where this process may run */
	if (sched_getaffinity(0, sizeof(cpus), &cpus))
		CPU_ZERO(&cpus);
	if (cpu_a >= 0 && cpu_b >= 0) {
		CPU_ZERO(&cpus);
		CPU_SET(cpu_a, &cpus);
		CPU_SET(cpu_b, &cpus);
	}
	snprintf(path, sizeof(path), "/dev/shm/smq-bench-%d-lane", (int)getpid());
	snprintf(spec, sizeof(spec), "shm:%s", path + strlen("/dev/shm/"));
	unlink(path);
	if ((err = lane_window(spec))) {
		unlink(path);
		return say_error("scratch window %s: %s", spec,
				 smq_strerror(err));
	}
	struct lane_state *st = shared_page(sizeof(*st));
	if (!st) {
		unlink(path);
		return say_error("lane lock: no shared memory: %s",
				 strerror(errno));
	}
	memset(st, 0, sizeof(*st));
	if (isatty(2))
		fprintf(stderr, "\r\033[Kbench --baseline: lane lock, %d "
			"sender%s beside %d CPU hogs", senders,
			senders > 1 ? "s" : "", LANE_HOGS);
	err = lane_fork(st, spec, senders, &cpus, pid, &n);
	uint64_t until = now_ns() + LANE_READY_NS, c0 = 0, c1 = 0, t0 = 0,
		 t1 = 0;
	while (!err && __atomic_load_n(&st->ready, __ATOMIC_ACQUIRE) <
		       (uint32_t)senders + 1) {
		if (stopped(st) || measure_interrupted || now_ns() > until)
			err = -ETIMEDOUT;
		nap_ms(1);
	}
	if (!err) {
		__atomic_store_n(&st->go, 1, __ATOMIC_RELEASE);
		nap_ms(LANE_WARM_MS);
		c0 = __atomic_load_n(&st->received, __ATOMIC_RELAXED);
		t0 = now_ns();
		c1 = lane_timed(st, t0, c0, ms, count);
		t1 = now_ns();
	}
	lane_reap(st, pid, n);
	unlink(path);
	int child_err = st->err;
	const char *what = st->what;
	munmap(st, sizeof(*st));
	if (child_err)
		return say_error("lane lock, %d senders: %s: %s", senders, what,
				 smq_strerror(child_err));
	if (err)
		return say_error("lane lock, %d senders: %s", senders,
				 err == -ETIMEDOUT ? "its processes did not "
				 "start" : strerror(-err));
	result_init(r, senders > 1 ? "smq spin, 2 senders, 2 hogs"
				   : "smq spin, 1 sender, 2 hogs", LANE_SIZE);
	result_rates(r, c1 - c0, t1 > t0 ? t1 - t0 : 1);
	return 0;
}
