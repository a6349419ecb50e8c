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
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <mqueue.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

static int fail(const char **why, const char *reason, int err)
{
	if (why)
		*why = reason;
	return err;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Shared futexes (not _PRIVATE): the two sides are separate processes. */
static long futex(uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, word, op, val, ts, NULL, 0);
}

static void futex_wake(uint32_t *word)
{
	futex(word, FUTEX_WAKE, 1, NULL);
}

static void raise_flag(uint32_t *flag)
{
	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
	futex_wake(flag);
}

/* shared_page() memory is an anonymous shared mapping (measure.c). */
static struct shared *shared_get(void)
{
	void *p = shared_page(sizeof(struct shared));

	if (!p || p == MAP_FAILED)
		return NULL;
	memset(p, 0, sizeof(struct shared));
	return p;
}

static void shared_put(struct shared *sh)
{
	if (sh)
		munmap(sh, sizeof(*sh));
}

/* ---- the child process ---- */

struct peer {
	pid_t pid;
	bool reaped;
	int status;
};

/* False once the child has left; it is then reaped. */
static bool peer_alive(struct peer *p)
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
static void peer_reap(struct peer *p, bool kill_now)
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

static bool peer_exited_ok(const struct peer *p)
{
	return p->reaped && WIFEXITED(p->status) && WEXITSTATUS(p->status) == 0;
}

/* The error to report for a child that failed or died. */
static int peer_error(const struct control *ctl, const char **why)
{
	if (ctl->err)
		return fail(why, ctl->why ? ctl->why : "the second process failed",
			    ctl->err);
	return fail(why, "the second process died", -ECHILD);
}

/* Sleeps until the child raises flag; -EINTR when the run is interrupted,
 * -ECHILD when the child is gone. */
static int wait_flag(uint32_t *flag, struct peer *p)
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

struct affinity {
	bool saved;
	cpu_set_t set;
};

static void affinity_save(struct affinity *a)
{
	a->saved = sched_getaffinity(0, sizeof(a->set), &a->set) == 0;
}

static void affinity_restore(const struct affinity *a)
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
static int start_peer(int cpu_a, struct affinity *aff, struct peer *peer,
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

static void child_setup(pid_t parent, int cpu, const struct affinity *before,
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

static void result_init(struct result *r, const char *name, size_t size)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->size = size;
	r->cpu_a = r->cpu_b = -1;
}

/* Rates from a count and a time; mb_per_s counts payload only. */
static void result_rates(struct result *r, uint64_t messages, uint64_t ns)
{
	r->messages = messages;
	r->seconds = (double)ns / 1e9;
	r->msgs_per_s = (double)messages / r->seconds;
	r->mb_per_s = r->msgs_per_s * (double)r->size / 1e6;
}

/* ---- ping-pongs ---- */

/* A: one round on the cache lines.  0, -EINTR or -ECHILD. */
static int ping_spin(struct shared *sh, uint64_t seq, struct peer *p)
{
	unsigned spins = 0;

	__atomic_store_n(&sh->ping, seq, __ATOMIC_RELEASE);
	while (__atomic_load_n(&sh->pong, __ATOMIC_ACQUIRE) != seq) {
		cpu_relax();
		if (++spins % SPIN_CHECK)
			continue;
		if (measure_interrupted)
			return -EINTR;
		if (spins % SPIN_PEER == 0) {
			if (!peer_alive(p))
				return -ECHILD;
			sched_yield();  /* unpinned, the child may share our CPU */
		}
	}
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

static int pingpong(bool sleeping, int cpu_a, int cpu_b, uint64_t count,
		    struct result *r, const char **why)
{
	struct shared *sh = NULL;
	struct peer peer = { -1, false, 0 };
	struct affinity aff;
	uint64_t *samples = NULL, seq = 0, done = 0, t0 = 0, t_end = 0;
	struct cpu_window win;
	double cpu = -1, wall = 0;
	bool shown = false;
	int err;

	result_init(r, sleeping ? "futex" : "cache line",
		    sleeping ? sizeof(uint32_t) : sizeof(uint64_t));
	if (!count)
		return fail(why, "no round trips to measure", -EINVAL);
	if (!sleeping && cpu_a >= 0 && cpu_a == cpu_b)
		return fail(why, "a spinning ping-pong needs two different CPUs",
			    -EINVAL);
	if (!sleeping && (cpu_a < 0 || cpu_b < 0)) {
		cpu_set_t set;
		if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) < 2)
			return fail(why, "a spinning ping-pong needs two CPUs; "
				    "this process may run on one", -EINVAL);
	}
	if (count > SIZE_MAX / sizeof(*samples) ||
	    !(samples = malloc(count * sizeof(*samples))))
		return fail(why, "no memory for the latency samples", -ENOMEM);
	memset(samples, 0, count * sizeof(*samples));  /* fault in before timing */
	if (!(sh = shared_get())) {
		free(samples);
		return fail(why, "no shared memory page", -ENOMEM);
	}
	sh->ctl.cpu = -1;

	pid_t parent = getpid();
	if ((err = start_peer(cpu_a, &aff, &peer, why)))
		goto out;
	if (peer.pid == 0) {
		free(samples);  /* the parent's; the peer keeps none */
		child_pingpong(sh, sleeping, count, parent, cpu_b, &aff);
	}

	if ((err = wait_flag(&sh->ctl.ready, &peer)) || sh->ctl.err)
		goto stop;
	while (seq < WARMUP_ROUNDS)
		if ((err = sleeping ? ping_sleep(sh, ++seq, &peer)
				    : ping_spin(sh, ++seq, &peer)))
			goto stop;
	if ((err = wait_flag(&sh->ctl.timed, &peer)))
		goto stop;

	cpu_window_start(&win);
	t0 = t_end = now_ns();
	while (done < count && !measure_interrupted) {
		if ((err = sleeping ? ping_sleep(sh, ++seq, &peer)
				    : ping_spin(sh, ++seq, &peer)))
			break;
		uint64_t t = now_ns();
		samples[done++] = (t - t_end) / 2;
		t_end = t;
		if (done % PROGRESS_EVERY == 0) {
			progress(r->name, done, count);
			shown = true;
		}
	}
	cpu_window_stop(&win, &cpu, &wall);

stop:
	if (sleeping) {
		__atomic_store_n(&sh->fping, STOP32, __ATOMIC_RELEASE);
		futex_wake(&sh->fping);
	} else {
		__atomic_store_n(&sh->ping, STOP64, __ATOMIC_RELEASE);
	}
	peer_reap(&peer, false);
	if (shown)
		progress_end();
	if (err == -ECHILD || sh->ctl.err || !peer_exited_ok(&peer)) {
		err = peer_error(&sh->ctl, why);
		goto out;
	}
	if (!done) {
		err = fail(why, "interrupted before anything was measured", -EINTR);
		goto out;
	}
	if (t_end == t0) {
		err = fail(why, "the clock did not advance", -EIO);
		goto out;
	}
	err = 0;
	result_rates(r, done, t_end - t0);
	r->cpu_a = cpu;
	r->wall_a = wall;
	r->cpu_b = sh->ctl.cpu;
	r->wall_b = sh->ctl.wall;
	r->has_latency = true;
	lat_compute(samples, done, &r->half_rtt);
out:
	affinity_restore(&aff);
	shared_put(sh);
	free(samples);
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

/* ---- memcpy ---- */

int baseline_memcpy(size_t size, uint64_t bytes_total, struct result *r,
		    const char **why)
{
	void *src = NULL, *dst = NULL;
	uint64_t copies, done = 0;
	bool shown = false;

	result_init(r, "memcpy", size);
	if (!size)
		return fail(why, "a 0-byte copy moves nothing", -EINVAL);
	if (!bytes_total)
		return fail(why, "no bytes to copy", -EINVAL);
	copies = bytes_total / size + (bytes_total % size != 0);
	if (posix_memalign(&src, 64, size) || posix_memalign(&dst, 64, size)) {
		free(src);
		return fail(why, "no memory for the copy buffers", -ENOMEM);
	}
	memset(src, 0x5a, size);
	memset(dst, 0, size);
	memcpy(dst, src, size);  /* warm the caches and the TLB */

	struct cpu_window win;
	double cpu, wall;
	cpu_window_start(&win);
	uint64_t t0 = now_ns();
	while (done < copies && !measure_interrupted) {
		memcpy(dst, src, size);
		/* dst may be read here: the copies cannot be dropped or merged */
		__asm__ __volatile__("" : : "r"(dst), "r"(src) : "memory");
		if (++done % PROGRESS_EVERY == 0) {
			progress(r->name, done, copies);
			shown = true;
		}
	}
	uint64_t t1 = now_ns();
	cpu_window_stop(&win, &cpu, &wall);
	if (shown)
		progress_end();
	free(src);
	free(dst);
	if (!done)
		return fail(why, "interrupted before anything was measured", -EINTR);
	if (t1 == t0)
		return fail(why, "too short to time: copy more bytes", -EIO);
	result_rates(r, done, t1 - t0);
	r->cpu_a = cpu;
	r->wall_a = wall;
	return 0;
}

/* ---- streams ---- */

/* The writer is the parent (on cpu_a), the reader the child (on cpu_b).  The
 * time runs from just before the writer's first write to just after the
 * reader's last read: the reader passes its end time back in the shared
 * page.  A writer that stops early ends the stream: it closes a pipe (the
 * reader sees end of file), and sends a message of the wrong length on a
 * socket or a message queue (0 bytes, or 1 when messages are empty). */
struct stream {
	enum stream_kind kind;
	size_t size;
	int wfd, rfd;        /* pipe ends or the socket pair, -1 when closed */
	mqd_t mq;            /* (mqd_t)-1 when closed */
	size_t bufsize;      /* room for a message, plus one byte */
};

static char why_buf[160];  /* reasons that name a limit's value */

static long read_limit(const char *path)
{
	FILE *f = fopen(path, "re");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static const char *mq_open_why(int e, size_t msgsize)
{
	long max;

	switch (e) {
	case EINVAL:
		max = read_limit("/proc/sys/fs/mqueue/msgsize_max");
		if (max >= 0 && msgsize > (size_t)max) {
			snprintf(why_buf, sizeof(why_buf), "%zu-byte messages exceed "
				 "/proc/sys/fs/mqueue/msgsize_max (%ld)", msgsize, max);
			return why_buf;
		}
		return "mq_open refused 10 messages of this size: see "
		       "/proc/sys/fs/mqueue/msgsize_max and msg_max";
	case EMFILE:
		return "mq_open: the message queue byte limit (ulimit -q, "
		       "RLIMIT_MSGQUEUE) or the open file limit is reached";
	case ENFILE:
		return "mq_open: the system's open file limit is reached";
	case ENOSPC:
		return "mq_open: /proc/sys/fs/mqueue/queues_max is reached";
	case EACCES:
	case EPERM:
		return "mq_open: not allowed to create a message queue";
	case ENOSYS:
		return "this kernel has no POSIX message queues";
	case ENOMEM:
		return "mq_open: out of memory";
	default:
		return "mq_open failed";
	}
}

static void stream_close(struct stream *s)
{
	if (s->wfd >= 0)
		close(s->wfd);
	if (s->rfd >= 0)
		close(s->rfd);
	if (s->mq != (mqd_t)-1)
		mq_close(s->mq);
	s->wfd = s->rfd = -1;
	s->mq = (mqd_t)-1;
}

static int stream_open(struct stream *s, const char **why)
{
	int fds[2];

	switch (s->kind) {
	case STREAM_PIPE:
		if (pipe2(fds, O_CLOEXEC))
			return fail(why, "pipe failed", -errno);
		s->rfd = fds[0];
		s->wfd = fds[1];
		return 0;
	case STREAM_UNIX: {
		int sndbuf;
		socklen_t len = sizeof(sndbuf);
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds))
			return fail(why, "socketpair failed", -errno);
		s->wfd = fds[0];
		s->rfd = fds[1];
		/* The kernel refuses a datagram over the send buffer less 32
		 * bytes; grow the buffer (up to wmem_max) for big messages. */
		if (getsockopt(s->wfd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len))
			return fail(why, "getsockopt failed", -errno);
		if (s->size + 64 > (size_t)sndbuf) {
			int want = s->size > INT_MAX / 2 ? INT_MAX : (int)s->size * 2;
			setsockopt(s->wfd, SOL_SOCKET, SO_SNDBUF, &want, sizeof(want));
			len = sizeof(sndbuf);
			if (getsockopt(s->wfd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len))
				return fail(why, "getsockopt failed", -errno);
		}
		if (s->size + 32 > (size_t)sndbuf) {
			snprintf(why_buf, sizeof(why_buf), "%zu-byte messages exceed the "
				 "socket send buffer (%d; /proc/sys/net/core/wmem_max)",
				 s->size, sndbuf);
			return fail(why, why_buf, -EMSGSIZE);
		}
		return 0;
	}
	case STREAM_MQUEUE: {
		static unsigned serial;
		struct mq_attr attr = { 0 };
		char name[64];
		if (s->size > LONG_MAX)
			return fail(why, mq_open_why(EINVAL, s->size), -EINVAL);
		attr.mq_maxmsg = 10;
		attr.mq_msgsize = (long)(s->size ? s->size : 1);
		for (int tries = 0; s->mq == (mqd_t)-1; tries++) {
			snprintf(name, sizeof(name), "/smq-baseline-%ld-%u",
				 (long)getpid(),
				 __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED));
			s->mq = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
			if (s->mq == (mqd_t)-1 && (errno != EEXIST || tries == 9)) {
				int e = errno;
				return fail(why, mq_open_why(e, (size_t)attr.mq_msgsize), -e);
			}
		}
		/* The child inherits the descriptor across fork, so both
		 * sides have it open already: no name is left behind. */
		mq_unlink(name);
		return 0;
	}
	}
	return fail(why, "unknown stream kind", -EINVAL);
}

/* The writer sends one message of len bytes, whole.  deadline bounds a
 * blocked mq_send so a dead reader is noticed; it is renewed when it passes. */
static int send_msg(struct stream *s, const char *buf, size_t len,
		    struct peer *p, struct timespec *deadline)
{
	size_t off = 0;
	ssize_t n;

	switch (s->kind) {
	case STREAM_PIPE:
		while (off < len) {
			if ((n = write(s->wfd, buf + off, len - off)) >= 0)
				off += (size_t)n;
			else if (errno != EINTR)
				return -errno;
		}
		return 0;
	case STREAM_UNIX:
		while (send(s->wfd, buf, len, MSG_NOSIGNAL) < 0)
			if (errno != EINTR)
				return -errno;
		return 0;
	case STREAM_MQUEUE:
		while (mq_timedsend(s->mq, buf, len, 0, deadline) < 0) {
			if (errno == ETIMEDOUT) {
				if (!peer_alive(p))
					return -ECHILD;
				clock_gettime(CLOCK_REALTIME, deadline);
				deadline->tv_sec += 1;
			} else if (errno != EINTR) {
				return -errno;
			}
		}
		return 0;
	}
	return -EINVAL;
}

/* The reader takes one message: 1, 0 at the end of the stream, or -errno. */
static int recv_msg(struct stream *s, char *buf)
{
	size_t off = 0;
	ssize_t n;

	switch (s->kind) {
	case STREAM_PIPE:
		while (off < s->size) {
			n = read(s->rfd, buf + off, s->size - off);
			if (n > 0)
				off += (size_t)n;
			else if (n == 0)
				return off ? -EPIPE : 0;
			else if (errno != EINTR)
				return -errno;
		}
		return 1;
	case STREAM_UNIX:
		while ((n = recv(s->rfd, buf, s->bufsize, 0)) < 0)
			if (errno != EINTR)
				return -errno;
		return (size_t)n == s->size;
	case STREAM_MQUEUE:
		while ((n = mq_receive(s->mq, buf, s->bufsize, NULL)) < 0)
			if (errno != EINTR)
				return -errno;
		return (size_t)n == s->size;
	}
	return -EINVAL;
}

static void child_stream(struct stream *s, struct shared *sh, uint64_t count,
			 pid_t parent, int cpu, const struct affinity *before)
{
	struct control *ctl = &sh->ctl;
	uint64_t n;
	char *buf;
	int e = 0;

	if (s->wfd >= 0) {
		close(s->wfd);  /* else a pipe's reader never sees end of file */
		s->wfd = -1;
	}
	child_setup(parent, cpu, before, ctl);
	if (!(buf = malloc(s->bufsize))) {
		ctl->err = -ENOMEM;
		ctl->why = "no memory for the reader's buffer";
		raise_flag(&ctl->ready);
		_exit(1);
	}
	memset(buf, 0, s->bufsize);
	struct cpu_window win;
	cpu_window_start(&win);
	raise_flag(&ctl->ready);
	for (n = 0; n < count; n++)
		if ((e = recv_msg(s, buf)) <= 0)
			break;
	ctl->end_ns = now_ns();
	ctl->received = n;
	cpu_window_stop(&win, &ctl->cpu, &ctl->wall);
	free(buf);
	if (e < 0) {
		ctl->err = e;
		ctl->why = e == -EPIPE ? "the pipe ended inside a message"
				       : "the reader's read failed";
		_exit(1);
	}
	_exit(0);
}

static const char *const stream_names[] = {
	[STREAM_PIPE] = "pipe",
	[STREAM_UNIX] = "unix seqpacket",
	[STREAM_MQUEUE] = "mqueue",
};

int baseline_stream(enum stream_kind kind, size_t size, uint64_t count,
		    int cpu_a, int cpu_b, struct result *r, const char **why)
{
	struct stream s = { kind, size, -1, -1, (mqd_t)-1, 0 };
	struct peer peer = { -1, false, 0 };
	struct shared *sh = NULL;
	struct affinity aff;
	struct sigaction ign, old_pipe;
	struct timespec deadline;
	uint64_t sent = 0, t0 = 0;
	struct cpu_window win;
	double cpu = -1, wall = 0;
	char *buf = NULL;
	bool shown = false;
	int err;

	if ((unsigned)kind > STREAM_MQUEUE) {
		result_init(r, "stream", size);
		return fail(why, "unknown stream kind", -EINVAL);
	}
	result_init(r, stream_names[kind], size);
	if (!count)
		return fail(why, "no messages to measure", -EINVAL);
	if (kind == STREAM_PIPE && !size)
		return fail(why, "a pipe carries no 0-byte messages", -EINVAL);
	if (size > SIZE_MAX - 2)
		return fail(why, "messages too large", -EINVAL);
	s.bufsize = (size ? size : 1) + 1;
	if (!(buf = malloc(s.bufsize)))
		return fail(why, "no memory for the writer's buffer", -ENOMEM);
	memset(buf, 0xa5, s.bufsize);
	if (!(sh = shared_get())) {
		free(buf);
		return fail(why, "no shared memory page", -ENOMEM);
	}
	sh->ctl.cpu = -1;
	if ((err = stream_open(&s, why))) {
		stream_close(&s);
		shared_put(sh);
		free(buf);
		return err;
	}

	/* A dead reader must give the writer EPIPE, not kill the program. */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old_pipe);
	pid_t parent = getpid();
	if ((err = start_peer(cpu_a, &aff, &peer, why)))
		goto out;
	if (peer.pid == 0)
		child_stream(&s, sh, count, parent, cpu_b, &aff);
	if (s.rfd >= 0) {
		close(s.rfd);
		s.rfd = -1;
	}

	if ((err = wait_flag(&sh->ctl.ready, &peer)) || sh->ctl.err) {
		if (err == -EINTR)
			fail(why, "interrupted before anything was measured", err);
		goto stop;
	}
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 1;
	cpu_window_start(&win);
	t0 = now_ns();
	while (sent < count && !measure_interrupted) {
		if ((err = send_msg(&s, buf, size, &peer, &deadline)))
			break;
		if (++sent % PROGRESS_EVERY == 0) {
			progress(r->name, sent, count);
			shown = true;
		}
	}
	if (!err && sent < count && kind != STREAM_PIPE)
		err = send_msg(&s, buf, size ? 0 : 1, &peer, &deadline);
	cpu_window_stop(&win, &cpu, &wall);
	if (s.wfd >= 0) {
		close(s.wfd);
		s.wfd = -1;
	}

stop:
	/* On a writer's error the reader waits for more: kill it. */
	peer_reap(&peer, err && err != -ECHILD);
	if (shown)
		progress_end();
	if (err == -EINTR)
		goto out;
	/* a pipe or socket with no reader: the reader left */
	if (err == -ECHILD || err == -EPIPE || err == -ECONNRESET || sh->ctl.err ||
	    (!err && !peer_exited_ok(&peer))) {
		err = peer_error(&sh->ctl, why);
		goto out;
	}
	if (err == -EMSGSIZE && kind == STREAM_UNIX) {
		fail(why, "the socket refused a message this large", err);
		goto out;
	}
	if (err) {
		fail(why, kind == STREAM_PIPE ? "writing to the pipe failed" :
			  kind == STREAM_UNIX ? "sending on the socket failed" :
			  "mq_send failed", err);
		goto out;
	}
	if (!sh->ctl.received) {
		err = fail(why, "interrupted before anything was measured", -EINTR);
		goto out;
	}
	if (sh->ctl.received != sent) {
		err = fail(why, "the reader did not get every message", -EIO);
		goto out;
	}
	if (sh->ctl.end_ns <= t0) {
		err = fail(why, "the clock did not advance", -EIO);
		goto out;
	}
	result_rates(r, sh->ctl.received, sh->ctl.end_ns - t0);
	r->cpu_a = cpu;
	r->wall_a = wall;
	r->cpu_b = sh->ctl.cpu;
	r->wall_b = sh->ctl.wall;
out:
	affinity_restore(&aff);
	sigaction(SIGPIPE, &old_pipe, NULL);
	stream_close(&s);
	shared_put(sh);
	free(buf);
	return err;
}

/* ---- a bare two-core ring ---- */

/* What a streaming queue cannot beat when it moves bytes from one core to
 * another: the writer copies each message into a slot of a ring in shared
 * memory and publishes it, the reader copies it out and frees the slot, and
 * neither ever sleeps.  The indices count messages from 0 and never wrap;
 * each sits on lines of its own, as smq's top and bottom do. */
#define RING_HDR 16  /* a slot: the length, then the payload at +16 */

struct ring_indices {
	_Alignas(LINE_GAP) uint64_t head;     /* published: the writer's */
	_Alignas(LINE_GAP) uint64_t tail;     /* taken: the reader's */
	_Alignas(LINE_GAP) uint64_t stop_at;  /* the writer published no more
						 than this (UINT64_MAX: it
						 has not stopped early) */
};

struct ring {
	struct ring_indices *ix;
	uint8_t *slot0;
	size_t stride, map_len;
	uint32_t slots;
	uint64_t corrupt;  /* ring_params.corrupt */
};

/* Each message of the checked mode is different, byte by byte. */
static void ring_pattern(uint8_t *buf, size_t size, uint64_t seq)
{
	uint64_t x = (seq + 1) * 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < size; i++) {
		if (i % 8 == 0) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		buf[i] = (uint8_t)(x >> (8 * (i % 8)));
	}
}

/* The writer: one message into slot idx, once the reader has freed it.
 * 0, -EINTR or -ECHILD. */
static int ring_put(struct ring *rg, const uint8_t *src, size_t size,
		    uint64_t seq, uint32_t idx, uint64_t *tail_seen,
		    struct peer *p)
{
	unsigned spins = 0;

	while (seq - *tail_seen >= rg->slots) {
		*tail_seen = __atomic_load_n(&rg->ix->tail, __ATOMIC_ACQUIRE);
		if (seq - *tail_seen < rg->slots)
			break;
		cpu_relax();
		if (++spins % SPIN_CHECK)
			continue;
		if (measure_interrupted)
			return -EINTR;
		if (spins % SPIN_PEER == 0) {
			if (!peer_alive(p))
				return -ECHILD;
			sched_yield();  /* unpinned, the reader may share our CPU */
		}
	}
	uint8_t *slot = rg->slot0 + (size_t)idx * rg->stride;
	uint64_t len = size;
	memcpy(slot + RING_HDR, src, size);
	if (seq + 1 == rg->corrupt && size)
		slot[RING_HDR + size - 1] ^= 0x10;
	memcpy(slot, &len, sizeof(len));
	__atomic_store_n(&rg->ix->head, seq + 1, __ATOMIC_RELEASE);
	return 0;
}

/* The reader: takes warm + count messages (fewer when the writer stops
 * early), copies each out, frees its slot, then checks the copy. */
static void child_ring(struct ring *rg, const struct ring_params *rp,
		       uint64_t warm, struct shared *sh, pid_t parent,
		       const struct affinity *before)
{
	struct control *ctl = &sh->ctl;
	uint64_t n, total = warm + rp->count, head_seen = 0;
	uint8_t *dst = NULL, *want = NULL;
	struct cpu_window win;
	bool timing = false;
	uint32_t idx = 0;

	child_setup(parent, rp->cpu_b, before, ctl);
	if (posix_memalign((void **)&dst, 64, rp->slot_size + 8) ||
	    (rp->check_all && !(want = malloc(rp->slot_size + 8)))) {
		ctl->err = -ENOMEM;
		ctl->why = "no memory for the reader's buffer";
		raise_flag(&ctl->ready);
		_exit(1);
	}
	memset(dst, 0, rp->slot_size + 8);  /* fault it in before timing */
	raise_flag(&ctl->ready);
	for (n = 0; n < total; n++) {
		if (n == warm) {
			cpu_window_start(&win);
			timing = true;
		}
		unsigned spins = 0;
		while (head_seen <= n) {
			head_seen = __atomic_load_n(&rg->ix->head, __ATOMIC_ACQUIRE);
			if (head_seen > n)
				break;
			if (__atomic_load_n(&rg->ix->stop_at, __ATOMIC_ACQUIRE) <= n)
				goto done;
			cpu_relax();
			if (++spins % SPIN_PEER == 0 && getppid() != parent)
				_exit(1);
		}
		const uint8_t *slot = rg->slot0 + (size_t)idx * rg->stride;
		uint64_t len, seq = n;
		memcpy(&len, slot, sizeof(len));
		bool ok = len == rp->size;
		if (len > rp->slot_size)
			len = rp->slot_size;
		memcpy(dst, slot + RING_HDR, len);
		__atomic_store_n(&rg->ix->tail, n + 1, __ATOMIC_RELEASE);
		if (rp->check_all) {
			ring_pattern(want, rp->size, n);
			ok = ok && !memcmp(dst, want, rp->size);
		} else if (len >= sizeof(seq)) {
			memcpy(&seq, dst, sizeof(seq));
		}
		if ((!ok || seq != n) && !ctl->wrong++)
			ctl->first_wrong = n;
		if (++idx == rg->slots)
			idx = 0;
	}
done:
	ctl->end_ns = now_ns();
	ctl->received = n > warm ? n - warm : 0;
	if (timing)
		cpu_window_stop(&win, &ctl->cpu, &ctl->wall);
	_exit(0);
}

static int ring_map(struct ring *rg, const struct ring_params *rp,
		    const char **why)
{
	size_t hdr = (sizeof(struct ring_indices) + 4095) & ~(size_t)4095;

	memset(rg, 0, sizeof(*rg));
	if (rp->slot_size > ((size_t)1 << 40))
		return fail(why, "slots too large", -EINVAL);
	rg->stride = (RING_HDR + rp->slot_size + 63) & ~(size_t)63;
	rg->slots = rp->slots;
	rg->corrupt = rp->corrupt;
	if (rp->slots > (SIZE_MAX - hdr) / rg->stride)
		return fail(why, "a ring too large for memory", -ENOMEM);
	rg->map_len = hdr + rg->stride * rp->slots;
	void *m = mmap(NULL, rg->map_len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return fail(why, "no shared memory for the ring", -ENOMEM);
	memset(m, 0, rg->map_len);  /* allocate every page now */
	rg->ix = m;
	rg->ix->stop_at = UINT64_MAX;
	rg->slot0 = (uint8_t *)m + hdr;
	return 0;
}

int baseline_ring(const struct ring_params *rp, struct result *r,
		  const char **why)
{
	struct ring rg = { 0 };
	struct peer peer = { -1, false, 0 };
	struct shared *sh = NULL;
	struct affinity aff = { 0 };
	struct cpu_window win;
	uint8_t *src = NULL;
	uint64_t warm, seq = 0, tail_seen = 0, sent = 0, t0 = 0;
	double cpu = -1, wall = 0;
	uint32_t idx = 0;
	bool shown = false;
	int err;

	result_init(r, "ring", rp->size);
	if (!rp->count)
		return fail(why, "no messages to measure", -EINVAL);
	if (!rp->slots)
		return fail(why, "a ring needs slots", -EINVAL);
	if (rp->size > rp->slot_size)
		return fail(why, "messages larger than the slots", -EINVAL);
	if (rp->cpu_a >= 0 && rp->cpu_a == rp->cpu_b)
		return fail(why, "a busy-polling ring needs two different CPUs",
			    -EINVAL);
	if (rp->cpu_a < 0 || rp->cpu_b < 0) {
		cpu_set_t set;
		if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) < 2)
			return fail(why, "a busy-polling ring needs two CPUs; "
				    "this process may run on one", -EINVAL);
	}
	warm = 2ull * rp->slots;
	if (rp->count > UINT64_MAX - warm - 1)
		return fail(why, "too many messages", -EINVAL);
	if (posix_memalign((void **)&src, 64, rp->slot_size + 8))
		return fail(why, "no memory for the writer's buffer", -ENOMEM);
	memset(src, 0xa5, rp->slot_size + 8);
	if (!(sh = shared_get())) {
		free(src);
		return fail(why, "no shared memory page", -ENOMEM);
	}
	sh->ctl.cpu = -1;
	if ((err = ring_map(&rg, rp, why))) {
		shared_put(sh);
		free(src);
		return err;
	}

	pid_t parent = getpid();
	if ((err = start_peer(rp->cpu_a, &aff, &peer, why)))
		goto out;
	if (peer.pid == 0)
		child_ring(&rg, rp, warm, sh, parent, &aff);
	if ((err = wait_flag(&sh->ctl.ready, &peer)) || sh->ctl.err) {
		if (err == -EINTR)
			fail(why, "interrupted before anything was measured", err);
		goto stop;
	}

	/* one untimed lap and more, so no page fault is timed; then wait
	 * until the reader has taken it all */
	for (; seq < warm + rp->count && !measure_interrupted; seq++) {
		if (seq == warm) {
			unsigned spins = 0;
			while (__atomic_load_n(&rg.ix->tail, __ATOMIC_ACQUIRE) < warm &&
			       !err) {
				cpu_relax();
				if (++spins % SPIN_PEER == 0 && !peer_alive(&peer))
					err = -ECHILD;
			}
			if (err)
				break;
			cpu_window_start(&win);
			t0 = now_ns();
		}
		if (rp->check_all)
			ring_pattern(src, rp->size, seq);
		else if (rp->size >= sizeof(seq))
			memcpy(src, &seq, sizeof(seq));
		if ((err = ring_put(&rg, src, rp->size, seq, idx, &tail_seen, &peer)))
			break;
		if (++idx == rg.slots)
			idx = 0;
		if (seq >= warm && ++sent % PROGRESS_EVERY == 0) {
			progress(r->name, sent, rp->count);
			shown = true;
		}
	}
	if (t0)
		cpu_window_stop(&win, &cpu, &wall);
	/* stopped early: the reader takes what was published, then leaves */
	__atomic_store_n(&rg.ix->stop_at, seq, __ATOMIC_RELEASE);
	if (err == -EINTR)
		err = 0;

stop:
	peer_reap(&peer, err != 0);
	if (shown)
		progress_end();
	if (err == -EINTR)
		goto out;
	if (err == -ECHILD || sh->ctl.err || (!err && !peer_exited_ok(&peer))) {
		err = peer_error(&sh->ctl, why);
		goto out;
	}
	if (err) {
		fail(why, "the ring failed", err);
		goto out;
	}
	if (sh->ctl.wrong) {
		snprintf(why_buf, sizeof(why_buf), "%llu of the messages came out "
			 "of the ring wrong, the first message %llu",
			 (unsigned long long)sh->ctl.wrong,
			 (unsigned long long)sh->ctl.first_wrong);
		err = fail(why, why_buf, -EIO);
		goto out;
	}
	if (!sent || !sh->ctl.received) {
		err = fail(why, "interrupted before anything was measured", -EINTR);
		goto out;
	}
	if (sh->ctl.received != sent) {
		err = fail(why, "the reader did not get every message", -EIO);
		goto out;
	}
	if (sh->ctl.end_ns <= t0) {
		err = fail(why, "the clock did not advance", -EIO);
		goto out;
	}
	result_rates(r, sent, sh->ctl.end_ns - t0);
	r->cpu_a = cpu;
	r->wall_a = wall;
	r->cpu_b = sh->ctl.cpu;
	r->wall_b = sh->ctl.wall;
out:
	affinity_restore(&aff);
	munmap(rg.ix, rg.map_len);
	shared_put(sh);
	free(src);
	return err;
}
