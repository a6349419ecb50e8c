/* The second process of each baseline, and what the two sides share (see
 * baseline_proc.h). */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "baseline_proc.h"

char why_buf[160];

int fail(const char **why, const char *reason, int err)
{
	if (why)
		*why = reason;
	return err;
}

/* shared_page() memory is an anonymous shared mapping (machine.c). */
struct shared *shared_get(void)
{
	void *p = shared_page(sizeof(struct shared));

	if (!p || p == MAP_FAILED)
		return NULL;
	memset(p, 0, sizeof(struct shared));
	return p;
}

void shared_put(struct shared *sh)
{
	if (sh)
		munmap(sh, sizeof(*sh));
}

/* False once the child has left; it is then reaped. */
bool peer_alive(struct peer *p)
{
	if (p->reaped)
		return false;
	pid_t got = waitpid(p->pid, &p->status, WNOHANG);
	if (got == p->pid || (got < 0 && errno == ECHILD)) {
		p->reaped = true;
		return false;
	}
	return true;
}

/* Waits for the child to leave, killing it at once when told to, or when it
 * has not left after the grace period (a bug, or a wedged machine). */
void peer_reap(struct peer *p, bool kill_now)
{
	const struct timespec nap = { 0, 1000000 };
	uint64_t give_up = now_ns() + REAP_GRACE_NS;

	if (p->pid <= 0 || p->reaped)
		return;
	if (!kill_now) {
		while (peer_alive(p) && now_ns() < give_up)
			nanosleep(&nap, NULL);
		if (p->reaped)
			return;
	}
	kill(p->pid, SIGKILL);
	while (waitpid(p->pid, &p->status, 0) < 0 && errno == EINTR)
		;
	p->reaped = true;
}

bool peer_exited_ok(const struct peer *p)
{
	return p->reaped && WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0;
}

/* The error to report for a child that failed or died. */
int peer_error(const struct control *ctl, const char **why)
{
	if (ctl->err)
		return fail(why, ctl->why ? ctl->why : "the second process failed",
			    ctl->err);
	return fail(why, "the second process died", -ECHILD);
}

/* Sleeps until the child raises flag; -EINTR when the run is interrupted,
 * -ECHILD when the child is gone. */
int wait_flag(uint32_t *flag, struct peer *p)
{
	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		if (measure_interrupted)
			return -EINTR;
		if (!peer_alive(p))
			return -ECHILD;
		futex(flag, FUTEX_WAIT, 0, &slice);
	}
	return 0;
}

/* cpu_pin() returns 0 on success; take either -1 with errno or -errno. */
static int pin(int cpu)
{
	if (cpu < 0)
		return 0;
	errno = 0;
	int e = cpu_pin(cpu);
	if (!e)
		return 0;
	if (e < -1)
		return e;
	return errno > 0 ? -errno : -EINVAL;
}

static void affinity_save(struct affinity *a)
{
	a->saved = sched_getaffinity(0, sizeof(a->set), &a->set) == 0;
}

void affinity_restore(const struct affinity *a)
{
	if (a->saved)
		sched_setaffinity(0, sizeof(a->set), &a->set);
}

/* First thing in every child.  The parent alone decides when to stop.  The
 * parent pinned itself before the fork: an unpinned child takes back the
 * affinity the parent had before, rather than share the parent's CPU. */
/* Saves this process's CPUs, pins it to cpu_a, and forks the second
 * process: peer->pid is 0 in the child.  On error the affinity saved is
 * still restored by the caller. */
int start_peer(int cpu_a, struct affinity *aff, struct peer *peer,
		      const char **why)
{
	int err;

	affinity_save(aff);
	if ((err = pin(cpu_a)))
		return fail(why, "cannot pin to the first CPU", err);
	if ((peer->pid = fork()) < 0)
		return fail(why, "fork failed", -errno);
	return 0;
}

void child_setup(pid_t parent, int cpu, const struct affinity *before,
			struct control *ctl)
{
	int e;

	signal(SIGINT, SIG_IGN);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	if (cpu < 0)
		affinity_restore(before);
	else if ((e = pin(cpu))) {
		ctl->err = e;
		ctl->why = "cannot pin the second process to its CPU";
		raise_flag(&ctl->ready);
		_exit(1);
	}
}

void result_init(struct result *r, const char *name, size_t size)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->size = size;
	r->cpu_a = r->cpu_b = -1;
}

/* Rates from a count and a time; mb_per_s counts payload only. */
void result_rates(struct result *r, uint64_t messages, uint64_t ns)
{
	r->messages = messages;
	r->seconds = (double)ns / 1e9;
	r->msgs_per_s = (double)messages / r->seconds;
	r->mb_per_s = r->msgs_per_s * (double)r->size / 1e6;
}

/* A busy-polling baseline needs two CPUs: cpu_a and cpu_b apart, and when
 * either is left unpinned, a process that may run on two.  0, or -EINVAL
 * with *why set to same (the two are one) or one (it may run on one). */
int two_cpus_check(int cpu_a, int cpu_b, const char *same, const char *one,
		   const char **why)
{
	if (cpu_a >= 0 && cpu_a == cpu_b)
		return fail(why, same, -EINVAL);
	if (cpu_a < 0 || cpu_b < 0) {
		cpu_set_t set;
		if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) < 2)
			return fail(why, one, -EINVAL);
	}
	return 0;
}

int reader_result(const struct shared *sh, uint64_t sent, uint64_t t0,
		  double cpu, double wall, struct result *r, const char **why)
{
	if (sh->ctl.received != sent)
		return fail(why, "the reader did not get every message", -EIO);
	if (sh->ctl.end_ns <= t0)
		return fail(why, "the clock did not advance", -EIO);
	result_rates(r, sent, sh->ctl.end_ns - t0);
	r->cpu_a = cpu;
	r->wall_a = wall;
	r->cpu_b = sh->ctl.cpu;
	r->wall_b = sh->ctl.wall;
	return 0;
}
