/* The ping-pongs of the baselines: a raw cache-line ping-pong and a raw
 * futex ping-pong (see baseline_proc.h). */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "baseline_proc.h"

/* A: one round on the cache lines.  0, -EINTR or -ECHILD. */
static int ping_spin(struct shared *sh, uint64_t seq, struct peer *p)
{
	unsigned spins = 0;
	int err;

	__atomic_store_n(&sh->ping, seq, __ATOMIC_RELEASE);
	while (__atomic_load_n(&sh->pong, __ATOMIC_ACQUIRE) != seq)
		if ((err = spin_wait(&spins, p)))
			return err;
	return 0;
}

/* A: one round on the futex words. */
static int ping_sleep(struct shared *sh, uint64_t seq, struct peer *p)
{
	uint32_t v = (uint32_t)seq & (STOP32 - 1), cur;

	__atomic_store_n(&sh->fping, v, __ATOMIC_RELEASE);
	futex_wake(&sh->fping);
	while ((cur = __atomic_load_n(&sh->fpong, __ATOMIC_ACQUIRE)) != v) {
		if (futex(&sh->fpong, FUTEX_WAIT, cur, &slice) < 0 &&
		    errno == ETIMEDOUT && !peer_alive(p))
			return -ECHILD;
		if (measure_interrupted)
			return -EINTR;
	}
	return 0;
}

/* B: answers one round; true when told to stop. */
static bool pong_spin(struct shared *sh, uint64_t *last, pid_t parent)
{
	unsigned spins = 0;
	uint64_t v;

	while ((v = __atomic_load_n(&sh->ping, __ATOMIC_ACQUIRE)) == *last) {
		cpu_relax();
		if (++spins % SPIN_PEER == 0 && getppid() != parent)
			_exit(1);
	}
	if (v == STOP64)
		return true;
	__atomic_store_n(&sh->pong, v, __ATOMIC_RELEASE);
	*last = v;
	return false;
}

static bool pong_sleep(struct shared *sh, uint32_t *last, pid_t parent)
{
	uint32_t v;

	while ((v = __atomic_load_n(&sh->fping, __ATOMIC_ACQUIRE)) == *last)
		if (futex(&sh->fping, FUTEX_WAIT, v, &slice) < 0 &&
		    errno == ETIMEDOUT && getppid() != parent)
			_exit(1);
	if (v == STOP32)
		return true;
	__atomic_store_n(&sh->fpong, v, __ATOMIC_RELEASE);
	futex_wake(&sh->fpong);
	*last = v;
	return false;
}

/* B: answers every round; takes its CPU time over the timed rounds, after
 * answering, so no round waits for it. */
static void child_pingpong(struct shared *sh, bool sleeping, uint64_t count,
			   pid_t parent, int cpu, const struct affinity *before)
{
	struct control *ctl = &sh->ctl;
	uint64_t n = 0, last64 = 0;
	uint32_t last32 = 0;
	struct cpu_window win;
	bool timing = false;

	child_setup(parent, cpu, before, ctl);
	raise_flag(&ctl->ready);
	while (!(sleeping ? pong_sleep(sh, &last32, parent)
			  : pong_spin(sh, &last64, parent))) {
		if (++n == WARMUP_ROUNDS) {
			cpu_window_start(&win);
			timing = true;
			raise_flag(&ctl->timed);
		} else if (n == WARMUP_ROUNDS + count) {
			cpu_window_stop(&win, &ctl->cpu, &ctl->wall);
			timing = false;
		}
	}
	if (timing)  /* stopped early */
		cpu_window_stop(&win, &ctl->cpu, &ctl->wall);
	_exit(0);
}

static int ping(struct shared *sh, bool sleeping, uint64_t seq,
		struct peer *p)
{
	return sleeping ? ping_sleep(sh, seq, p) : ping_spin(sh, seq, p);
}

/* A's side of a ping-pong: what it measured. */
struct pingpong_run {
	uint64_t *samples;      /* half round trips, ns */
	uint64_t seq, done;     /* rounds made, rounds timed */
	uint64_t t0, t_end;     /* the timed rounds, now_ns() */
	double cpu, wall;       /* see cpu_window_stop() */
	bool shown;             /* progress was shown */
};

/* A: waits for B, warms up, then times count rounds (fewer when
 * interrupted).  0, -EINTR or -ECHILD. */
static int pingpong_drive(struct shared *sh, bool sleeping, uint64_t count,
			  struct peer *peer, const char *name,
			  struct pingpong_run *pr)
{
	struct cpu_window win;
	int err;

	if ((err = wait_flag(&sh->ctl.ready, peer)) || sh->ctl.err)
		return err;
	while (pr->seq < WARMUP_ROUNDS)
		if ((err = ping(sh, sleeping, ++pr->seq, peer)))
			return err;
	if ((err = wait_flag(&sh->ctl.timed, peer)))
		return err;

	cpu_window_start(&win);
	pr->t0 = pr->t_end = now_ns();
	while (pr->done < count && !measure_interrupted) {
		if ((err = ping(sh, sleeping, ++pr->seq, peer)))
			break;
		uint64_t t = now_ns();
		pr->samples[pr->done++] = (t - pr->t_end) / 2;
		pr->t_end = t;
		if (pr->done % PROGRESS_EVERY == 0) {
			progress(name, pr->done, count);
			pr->shown = true;
		}
	}
	cpu_window_stop(&win, &pr->cpu, &pr->wall);
	return err;
}

/* A: tells B to stop, waits for it to leave, and makes the result of what
 * was measured.  0, or a negative errno with *why set. */
static int pingpong_finish(struct shared *sh, bool sleeping, int err,
			   struct peer *peer, struct pingpong_run *pr,
			   struct result *r, const char **why)
{
	if (sleeping) {
		__atomic_store_n(&sh->fping, STOP32, __ATOMIC_RELEASE);
		futex_wake(&sh->fping);
	} else {
		__atomic_store_n(&sh->ping, STOP64, __ATOMIC_RELEASE);
	}
	peer_reap(peer, false);
	if (pr->shown)
		progress_end();
	if (err == -ECHILD || sh->ctl.err || !peer_exited_ok(peer))
		return peer_error(&sh->ctl, why);
	if (!pr->done)
		return fail(why, "interrupted before anything was measured",
			    -EINTR);
	if (pr->t_end == pr->t0)
		return fail(why, "the clock did not advance", -EIO);
	result_rates(r, pr->done, pr->t_end - pr->t0);
	r->cpu_a = pr->cpu;
	r->wall_a = pr->wall;
	r->cpu_b = sh->ctl.cpu;
	r->wall_b = sh->ctl.wall;
	r->has_latency = true;
	lat_compute(pr->samples, pr->done, &r->half_rtt);
	return 0;
}

static int pingpong(bool sleeping, int cpu_a, int cpu_b, uint64_t count,
		    struct result *r, const char **why)
{
	struct shared *sh = NULL;
	struct peer peer = { -1, false, 0 };
	struct affinity aff;
	struct pingpong_run pr = { .cpu = -1 };
	int err;

	result_init(r, sleeping ? "futex" : "cache line",
		    sleeping ? sizeof(uint32_t) : sizeof(uint64_t));
	if (!count)
		return fail(why, "no round trips to measure", -EINVAL);
	if (!sleeping && (err = two_cpus_check(cpu_a, cpu_b,
			"a spinning ping-pong needs two different CPUs",
			"a spinning ping-pong needs two CPUs; this process may "
			"run on one", why)))
		return err;
	if (count > SIZE_MAX / sizeof(*pr.samples) ||
	    !(pr.samples = malloc(count * sizeof(*pr.samples))))
		return fail(why, "no memory for the latency samples", -ENOMEM);
	/* fault in before timing */
	memset(pr.samples, 0, count * sizeof(*pr.samples));
	if (!(sh = shared_get())) {
		free(pr.samples);
		return fail(why, "no shared memory page", -ENOMEM);
	}
	sh->ctl.cpu = -1;

	pid_t parent = getpid();
	if ((err = start_peer(cpu_a, &aff, &peer, why)))
		goto out;
	if (peer.pid == 0) {
		free(pr.samples);  /* the parent's; the peer keeps none */
		child_pingpong(sh, sleeping, count, parent, cpu_b, &aff);
	}
	err = pingpong_drive(sh, sleeping, count, &peer, r->name, &pr);
	err = pingpong_finish(sh, sleeping, err, &peer, &pr, r, why);
out:
	affinity_restore(&aff);
	shared_put(sh);
	free(pr.samples);
	return err;
}

int baseline_cacheline_pingpong(int cpu_a, int cpu_b, uint64_t count,
				struct result *r, const char **why)
{
	return pingpong(false, cpu_a, cpu_b, count, r, why);
}

int baseline_futex_pingpong(int cpu_a, int cpu_b, uint64_t count,
			    struct result *r, const char **why)
{
	return pingpong(true, cpu_a, cpu_b, count, r, why);
}
