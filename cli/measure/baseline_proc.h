/* The baselines smq is compared with, measured in the same run on the same
 * CPUs: a raw cache-line ping-pong, a raw futex ping-pong, a bare
 * single-producer single-consumer ring between two cores, single-core
 * memcpy, and streams through a pipe, a Unix SEQPACKET socket and a POSIX
 * message queue.  Nothing here uses libsmq: these are the yardsticks.
 *
 * The second side of each is a forked child.  It is pinned, ignores SIGINT
 * (the terminal sends it to the whole group, but the parent decides when to
 * stop, so a stopped run still reports what it measured), dies with its
 * parent (PR_SET_PDEATHSIG) so an orphan never spins, leaves with _exit and
 * is always reaped.  The parent's CPU affinity is restored on return. */
#ifndef SMQ_BASELINE_PROC_H
#define SMQ_BASELINE_PROC_H

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include "measure.h"

#define WARMUP_ROUNDS 1000
/* The two words sit two lines apart, not one: the adjacent-line prefetcher
 * of many x86 cores moves 128-byte pairs, which would make them neighbours. */
#define LINE_GAP 128
#define SPIN_CHECK 4096            /* spins between looks at measure_interrupted */
#define SPIN_PEER 65536            /* spins between looks at the other process */
#define SLICE_NS 100000000L        /* a sleeper's timeout, to notice a dead peer */
#define REAP_GRACE_NS 10000000000ull  /* a child that does not leave is killed */
#define PROGRESS_EVERY 65536       /* rounds, copies or messages */
#define STOP64 UINT64_MAX          /* never a round number */
#define STOP32 0x80000000u         /* futex rounds count in 31 bits */

/* What the child tells the parent; the parent reads it after a flag or after
 * reaping the child. */
struct control {
	uint32_t ready;      /* the child is pinned and waits for the first message */
	uint32_t timed;      /* the child finished the warm-up (ping-pongs) */
	int err;             /* the child's negative errno, or 0 */
	const char *why;     /* a static string: fork keeps its address valid */
	double cpu;          /* the child's CPU seconds while timed, -1 unknown */
	double wall;         /* and the wall seconds it measured them over */
	uint64_t received;   /* messages the reader took (streams) */
	uint64_t end_ns;     /* when it took the last one */
	uint64_t wrong;      /* messages that came wrong (the ring) */
	uint64_t first_wrong;
};

struct shared {
	_Alignas(LINE_GAP) uint64_t ping;   /* cache line: A -> B */
	_Alignas(LINE_GAP) uint64_t pong;   /* cache line: B -> A */
	_Alignas(LINE_GAP) uint32_t fping;  /* futex word: A -> B */
	_Alignas(LINE_GAP) uint32_t fpong;  /* futex word: B -> A */
	_Alignas(LINE_GAP) struct control ctl;
};
_Static_assert(sizeof(struct shared) <= 4096, "the shared state fits a page");

static const struct timespec slice = { 0, SLICE_NS };

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Shared futexes (not _PRIVATE): the two sides are separate processes. */
static inline long futex(uint32_t *word, int op, uint32_t val,
			 const struct timespec *ts)
{
	return syscall(SYS_futex, word, op, val, ts, NULL, 0);
}

static inline void futex_wake(uint32_t *word)
{
	futex(word, FUTEX_WAKE, 1, NULL);
}

static inline void raise_flag(uint32_t *flag)
{
	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
	futex_wake(flag);
}

/* The second process */
struct peer {
	pid_t pid;
	bool reaped;
	int status;
};

struct affinity {
	bool saved;
	cpu_set_t set;
};

extern char why_buf[160];  /* reasons that name a limit's value */

int fail(const char **why, const char *reason, int err);
struct shared *shared_get(void);
void shared_put(struct shared *sh);
bool peer_alive(struct peer *p);
void peer_reap(struct peer *p, bool kill_now);
bool peer_exited_ok(const struct peer *p);
int peer_error(const struct control *ctl, const char **why);
int wait_flag(uint32_t *flag, struct peer *p);

/* One spin of a busy wait for the other process: relaxes, and every
 * SPIN_CHECK spins looks at measure_interrupted, every SPIN_PEER at the
 * other process.  0, -EINTR or -ECHILD.  Inline: it is the hot loop of the
 * busy-polling measurements. */
static inline int spin_wait(unsigned *spins, struct peer *p)
{
	cpu_relax();
	if (++*spins % SPIN_CHECK)
		return 0;
	if (measure_interrupted)
		return -EINTR;
	if (*spins % SPIN_PEER == 0) {
		if (!peer_alive(p))
			return -ECHILD;
		sched_yield();  /* unpinned, the other may share our CPU */
	}
	return 0;
}

void affinity_restore(const struct affinity *a);
int start_peer(int cpu_a, struct affinity *aff, struct peer *peer,
	       const char **why);
void child_setup(pid_t parent, int cpu, const struct affinity *before,
		 struct control *ctl);
void result_init(struct result *r, const char *name, size_t size);
void result_rates(struct result *r, uint64_t messages, uint64_t ns);
/* A stream's result, once the reader (B) took sent messages, the last at
 * sh->ctl.end_ns, from t0 on: 0, or -EIO with *why set when it missed
 * some or the clock did not advance.  cpu and wall: the writer's. */
int reader_result(const struct shared *sh, uint64_t sent, uint64_t t0,
		  double cpu, double wall, struct result *r, const char **why);
int two_cpus_check(int cpu_a, int cpu_b, const char *same, const char *one,
		   const char **why);

#endif
