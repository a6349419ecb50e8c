#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "testlib.h"

#define MAX_WINDOWS 32
#define MAX_KIDS 1024

atomic_ulong test_checks;

/* ---- the registry: the children and the objects a test leaves ---- */

static pid_t owner;             /* the test's own process */
static char prefix[64];         /* smq-TEST-PID: the test's objects */
static char dir[96];            /* test_dir(): /tmp/PREFIX */
static uint64_t started;
static bool worked;             /* test_work() said the work */

/* The children this process forked (a child starts with none).  Changed
 * with the stopping signals blocked, read by their handler. */
static pid_t kids[MAX_KIDS];
static int nkids;

/* What the test waits for, and since when (read by the handler). */
static const char *volatile waiting;
static volatile uint64_t waiting_since;

static const int stops[] = { SIGINT, SIGTERM, SIGHUP };

/* A child's failure, said to the test's own process by a signal no test
 * uses (they take SIGUSR1, SIGUSR2, SIGALRM), with a value of ours: a
 * parent asleep in the library (a receive of SMQ_WAIT_FOREVER) wakes for
 * it, where a look at the failures below would wait for its next turn. */
#define FAILED_SIGNAL (SIGRTMIN + 2)
#define FAILED_VALUE 0x736d7166         /* "smqf" */
static volatile sig_atomic_t failing;   /* the test's process fails already */

/* The processes of the test that failed (FAIL in a child, by pid), in
 * memory all of them share (made before main, inherited by every fork):
 * a parent sees a child's failure at its next look, even before that
 * child has exited. */
#define MAX_FAILED 64
struct failures {
	atomic_uint n;
	atomic_int pid[MAX_FAILED];
	atomic_int gone;        /* the test's process is ending: its pid
				 * may soon be another's, never signalled */
};
static struct failures *failures;

/* The test's process is on its way out (async-signal-safe) */
static void owner_going(void)
{
	if (failures && getpid() == owner)
		atomic_store(&failures->gone, 1);
}

static void block_stops(sigset_t *old)
{
	sigset_t s;

	sigemptyset(&s);
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		sigaddset(&s, stops[i]);
	sigaddset(&s, FAILED_SIGNAL);
	pthread_sigmask(SIG_BLOCK, &s, old);
}

/* Whether pid is a child of this process not yet reaped (then *running
 * says whether it has exited yet): one reaped by the test is no longer
 * ours, and its pid may be anyone's now. */
static bool ours(pid_t pid, bool *running)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (pid <= 0 || waitid(P_PID, (id_t)pid, &si,
			       WEXITED | WNOHANG | WNOWAIT) < 0)
		return false;
	*running = si.si_pid == 0;
	return true;
}

static int end_one(pid_t pid)
{
	bool running;

	if (!ours(pid, &running))
		return 0;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return running;
}

/* The children no testlib call forked (the code under test forks too:
 * t_baseline's measurements), as the kernel lists them thread by thread
 * in /proc/self/task/TID/children: killed and reaped as well. */
static int end_strays(void)
{
	char buf[1024], list[1024];
	int ended = 0, tasks = open("/proc/self/task", O_RDONLY | O_DIRECTORY |
				   O_CLOEXEC);
	long n;

	if (tasks < 0)
		return 0;
	while ((n = getdents64(tasks, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *d = (void *)(buf + off);
			off += d->d_reclen;
			if (d->d_name[0] < '0' || d->d_name[0] > '9')
				continue;
			char path[64] = "";
			size_t k = strlen(d->d_name);
			if (k + sizeof("/children") > sizeof(path))
				continue;
			memcpy(path, d->d_name, k);
			memcpy(path + k, "/children", sizeof("/children"));
			int fd = openat(tasks, path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			ssize_t len = read(fd, list, sizeof(list) - 1);
			close(fd);
			pid_t pid = 0;
			for (ssize_t i = 0; i < len; i++) {
				if (list[i] >= '0' && list[i] <= '9') {
					pid = pid * 10 + (list[i] - '0');
				} else if (pid) {
					ended += end_one(pid);
					pid = 0;
				}
			}
			if (pid)
				ended += end_one(pid);
		}
	}
	close(tasks);
	return ended;
}

/* Kills and reaps the children of this process still there; returns how
 * many were still running.  Async-signal-safe. */
static int end_kids(void)
{
	int ended = 0;

	for (int i = 0; i < nkids; i++)
		ended += end_one(kids[i]);
	nkids = 0;
	return ended + end_strays();
}

/* Forgets the children already reaped, to make room. */
static void compact_kids(void)
{
	int n = 0;
	bool running;

	for (int i = 0; i < nkids; i++)
		if (ours(kids[i], &running))
			kids[n++] = kids[i];
	nkids = n;
}

/* Removes what is in the directory fd (at most depth levels down);
 * returns how many entries went.  Async-signal-safe: getdents64, not
 * readdir (which may allocate). */
static int empty_dir(int fd, int depth, bool (*take)(const char *))
{
	char buf[2048];
	int removed = 0;
	long n;

	while ((n = getdents64(fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *d = (void *)(buf + off);
			off += d->d_reclen;
			const char *name = d->d_name;
			if (!strcmp(name, ".") || !strcmp(name, "..") ||
			    (take && !take(name)))
				continue;
			if (d->d_type == DT_DIR && depth > 0) {
				int sub = openat(fd, d->d_name, O_RDONLY |
						 O_DIRECTORY | O_NOFOLLOW |
						 O_CLOEXEC);
				if (sub >= 0) {
					removed += empty_dir(sub, depth - 1,
							     NULL);
					close(sub);
				}
				removed += unlinkat(fd, d->d_name,
						    AT_REMOVEDIR) == 0;
			} else {
				removed += unlinkat(fd, d->d_name, 0) == 0;
			}
		}
	}
	return removed;
}

/* A name of the test's: the prefix, then nothing, a '-' or a '.' */
static bool of_the_test(const char *name)
{
	size_t n = strlen(prefix);

	return !strncmp(name, prefix, n) &&
	       (name[n] == 0 || name[n] == '-' || name[n] == '.');
}

/* Removes the test's shm objects and its directory; returns how many
 * entries went.  Async-signal-safe. */
static int remove_objects(void)
{
	int removed = 0, fd = open("/dev/shm", O_RDONLY | O_DIRECTORY |
				   O_CLOEXEC);

	if (fd >= 0) {
		/* again while a pass removes something: a listing that is
		 * changed under it may skip a name */
		for (int pass = 0, r = 1; r && pass < 4; pass++) {
			lseek(fd, 0, SEEK_SET);
			removed += r = empty_dir(fd, 0, of_the_test);
		}
		close(fd);
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir[0] && fd >= 0) {
		removed += empty_dir(fd, 3, NULL);
		close(fd);
		removed += rmdir(dir) == 0;
	}
	return removed;
}

/* write(2) pieces, for the handler */
static void say(const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(2, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void say_num(uint64_t v)
{
	char b[24];
	int i = (int)sizeof(b) - 1;

	b[i] = 0;
	do {
		b[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	say(b + i);
}

/* Stopped from outside (run.sh's timeout sends SIGTERM): the children
 * go, the objects too, and the test says what it was waiting for; then
 * it dies of the signal, as it would have. */
static void on_stop(int sig)
{
	owner_going();
	int ended = end_kids();

	if (getpid() == owner) {
		int removed = remove_objects();
		const char *w = waiting;
		say(program_invocation_short_name);
		say(sig == SIGTERM ? ": stopped by SIGTERM (a timeout?)"
		    : sig == SIGINT ? ": stopped by SIGINT"
		    : ": stopped by SIGHUP");
		say(" after ");
		say_num((test_now_ns() - started) / 1000000000u);
		say(" s");
		if (w) {
			say(", waiting for ");
			say(w);
			say(" (for ");
			say_num((test_now_ns() - waiting_since) / 1000000000u);
			say(" s)");
		}
		say("; ended ");
		say_num((uint64_t)ended);
		say(" children still running, removed ");
		say_num((uint64_t)removed);
		say(" objects of the test\n");
	}
	signal(sig, SIG_DFL);
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, sig);
	raise(sig);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	_exit(128 + sig);
}

/* A process of the test below its own (a child, a grandchild) failed
 * (FAIL, CHECK, OK...) and said so: the test ends now with the child's
 * message above, whatever this process was doing, asleep in the library
 * included; its children go and its objects too, as at an exit.  A
 * signal that is not a child's failure returns (a wait it interrupted
 * may return -EINTR), and so does one that finds the test failing
 * already: its own failure is on its way out. */
static void on_child_failed(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (getpid() != owner || failing || si->si_code != SI_QUEUE ||
	    si->si_value.sival_int != FAILED_VALUE)
		return;
	const char *w = waiting;
	owner_going();
	int ended = end_kids(), removed = remove_objects();
	say(program_invocation_short_name);
	say(": a child (pid ");
	say_num((uint64_t)si->si_pid);
	say(") failed (its message is above)");
	if (w) {
		say(" while the test waited for ");
		say(w);
	}
	say(": the test ends now; ended ");
	say_num((uint64_t)ended);
	say(" children still running, removed ");
	say_num((uint64_t)removed);
	say(" objects of the test\n");
	_exit(1);
}

/* A passing test that did not say its work: its checks against the
 * floor it states (TEST_FLOOR); 1 if under it, or if it states none. */
static int checks_against_floor(void)
{
	unsigned long n = atomic_load(&test_checks);

	if (!&test_check_floor) {
		fprintf(stderr, "%s: passed with %lu checks, but states no "
			"floor (TEST_FLOOR(N) at file scope, or test_work())"
			"\n", program_invocation_short_name, n);
		return 1;
	}
	printf("work: checks %lu (floor %lu)\n", n, test_check_floor);
	if (n >= test_check_floor)
		return 0;
	fprintf(stderr, "%s: %lu checks, under its floor of %lu: some did "
		"not run\n", program_invocation_short_name, n,
		test_check_floor);
	return 1;
}

static void at_exit(int status, void *arg)
{
	sigset_t old;
	int under = 0;

	(void)arg;
	if (getpid() == owner && status == 0 && !worked)
		status = under = checks_against_floor();
	owner_going();
	block_stops(&old);
	int ended = end_kids(), removed = 0;
	if (getpid() == owner) {
		removed = remove_objects();
		if (status && status != SKIP)
			fprintf(stderr, "%s: exit %d: ended %d children still "
				"running, removed %d objects of the test\n",
				program_invocation_short_name, status, ended,
				removed);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (under) {
		/* a pass turned into a failure: exit() is on its way out */
		fflush(NULL);
		_exit(1);
	}
}

/* Objects of an earlier run of this test whose process is gone: one
 * killed outright (SIGKILL, timeout -k) could not remove them.  Its
 * children died with it. */
static bool of_a_dead_run(const char *name)
{
	size_t n = strlen("smq-") + strlen(program_invocation_short_name);
	char *end;

	if (strncmp(name, "smq-", 4) ||
	    strncmp(name + 4, program_invocation_short_name, n - 4) ||
	    name[n] != '-' || name[n + 1] < '1' || name[n + 1] > '9')
		return false;
	long pid = strtol(name + n + 1, &end, 10);
	return (*end == 0 || *end == '-' || *end == '.') && pid != owner &&
	       kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

static void remove_dead_runs(void)
{
	int fd = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		empty_dir(fd, 0, of_a_dead_run);
		close(fd);
	}
	fd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		empty_dir(fd, 3, of_a_dead_run);
		close(fd);
	}
}

/* Before main: every test linked with testlib is under the registry. */
__attribute__((constructor)) static void test_start(void)
{
	struct sigaction sa, was;

	owner = getpid();
	started = test_now_ns();
	snprintf(prefix, sizeof(prefix), "smq-%.32s-%d",
		 program_invocation_short_name, (int)owner);
	snprintf(dir, sizeof(dir), "/tmp/%s", prefix);
	remove_dead_runs();
	failures = mmap(NULL, sizeof(*failures), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (failures == MAP_FAILED)
		failures = NULL;        /* then a child's failure waits */
	on_exit(at_exit, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		sigaddset(&sa.sa_mask, stops[i]);
	sigaddset(&sa.sa_mask, FAILED_SIGNAL);
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		/* a signal ignored by who started us stays ignored */
		if (sigaction(stops[i], NULL, &was) == 0 &&
		    was.sa_handler != SIG_IGN)
			sigaction(stops[i], &sa, NULL);
	sa.sa_sigaction = on_child_failed;
	sa.sa_flags = SA_SIGINFO;
	sigaction(FAILED_SIGNAL, &sa, NULL);
}

void test_failed(void)
{
	if (getpid() == owner) {
		failing = 1;
		exit(1);
	}
	if (failures) {
		unsigned i = atomic_fetch_add(&failures->n, 1);
		if (i < MAX_FAILED)
			atomic_store(&failures->pid[i], (int)getpid());
	}
	/* what this child printed goes out before the test's process, told
	 * next, ends it (and it with a SIGKILL) */
	fflush(NULL);
	if (!failures || !atomic_load(&failures->gone))
		sigqueue(owner, FAILED_SIGNAL,
			 (union sigval){ .sival_int = FAILED_VALUE });
	exit(1);
}

/* Whether pid said it failed (FAIL) */
static bool said_failed(pid_t pid)
{
	unsigned n = atomic_load_explicit(&failures->n, memory_order_acquire);

	for (unsigned i = 0; i < n && i < MAX_FAILED; i++)
		if (atomic_load(&failures->pid[i]) == (int)pid)
			return true;
	return false;
}

/* How child pid, ended and not yet reaped, ended if no test ends one so
 * on purpose: a crash, or a sanitizer's report (exit 86, SAN_ENV of the
 * Makefile); else NULL.  Tests kill their children with SIGKILL or
 * SIGTERM, and some children exit non-zero on purpose. */
static const char *crashed(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
	    si.si_pid != pid)
		return NULL;
	if (si.si_code == CLD_EXITED)
		return si.si_status == 86 ? "exited 86 (a sanitizer's report)"
					  : NULL;
	switch (si.si_status) {
	case SIGSEGV: return "was killed by SIGSEGV";
	case SIGBUS: return "was killed by SIGBUS";
	case SIGABRT: return "was killed by SIGABRT";
	case SIGILL: return "was killed by SIGILL";
	case SIGFPE: return "was killed by SIGFPE";
	case SIGSYS: return "was killed by SIGSYS";
	case SIGTRAP: return "was killed by SIGTRAP";
	}
	return NULL;
}

/* A child of this process (but awaited, which its waiter judges) that
 * failed fails the test now, whatever this process waits for: a peer of
 * that child may wait for it forever.  crashes: look for crashes too
 * (a system call a child; the failures said are one load when none). */
static void check_kids(pid_t awaited, bool crashes)
{
	const char *how = NULL;
	bool running;
	pid_t pid = 0;

	if (!failures || (!crashes && !atomic_load_explicit(&failures->n,
						memory_order_relaxed)))
		return;
	for (int i = 0; i < nkids && !how; i++) {
		pid = kids[i];
		if (pid == awaited || !ours(pid, &running))
			continue;
		if (said_failed(pid))
			how = "failed (its message is above)";
		else if (crashes && !running)
			how = crashed(pid);
	}
	if (!how)
		return;
	const char *w = waiting;
	fprintf(stderr, "%s: a child (pid %d) %s%s%s: the test ends now\n",
		program_invocation_short_name, (int)pid, how,
		w ? " while the test waited for " : "", w ? w : "");
	test_failed();
}

pid_t test_fork_raw(void)
{
	pid_t parent = getpid();
	sigset_t old;

	fflush(NULL);
	block_stops(&old);
	if (nkids == MAX_KIDS)
		compact_kids();
	if (nkids == MAX_KIDS) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		FAIL("more than %d children at once", MAX_KIDS);
	}
	pid_t pid = fork();
	if (pid == 0) {
		nkids = 0;
		waiting = NULL;
		/* it dies with the thread that forked it (one killed outright,
		 * past any handler); if that is gone already, now */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(3);
	} else if (pid > 0) {
		kids[nkids++] = pid;
	}
	int err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0)
		FAIL("fork: %s", strerror(err));
	return pid;
}

pid_t test_fork(int (*fn)(void *), void *arg)
{
	pid_t pid = test_fork_raw();

	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

void test_wait_ok(pid_t pid, const char *what)
{
	const char *before = waiting;
	uint64_t since = waiting_since;
	char words[160];
	int status;
	pid_t r;

	snprintf(words, sizeof(words), "%s (pid %d) to exit", what, (int)pid);
	waiting_since = test_now_ns();
	waiting = words;
	/* Asleep until any child ends (none reaped: the others are their
	 * waiters'); once another lies there ended, that wait would return
	 * at once: looks again after naps instead. */
	bool others = false;
	unsigned looks = 0;
	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			break;
		check_kids(pid, true);
		if (!others) {
			siginfo_t si;
			memset(&si, 0, sizeof(si));
			if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT) == 0 &&
			    si.si_pid != pid)
				others = true;
		} else if (looks++ < 100) {
			sched_yield();
		} else {
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		}
	}
	waiting = before;
	waiting_since = since;
	if (r != pid)
		FAIL("waitpid %s", what);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		FAIL("%s failed (status 0x%x)", what, status);
}

/* ---- time, waits and work ---- */

uint64_t test_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void test_budget(struct test_budget *b, double secs, uint64_t floor,
		 uint64_t most)
{
	uint64_t now = test_now_ns();

	b->end = now + (uint64_t)(secs * 1e9);
	b->last = b->end + (uint64_t)(TEST_GRACE_SECS * 1e9);
	b->floor = floor;
	b->most = most;
}

void test_budget_count(struct test_budget *b, uint64_t count)
{
	b->end = b->last = UINT64_MAX;
	b->floor = b->most = count;
}

bool test_going(const struct test_budget *b, uint64_t done)
{
	check_kids(0, false);
	if (done >= b->most)
		return false;
	uint64_t now = test_now_ns();
	return now < b->end || (done < b->floor && now < b->last);
}

void test_waiting(const char *fmt, ...)
{
	static char words[2][160];
	static int n;
	va_list ap;

	if (!fmt) {
		waiting = NULL;
		return;
	}
	/* the other buffer: the handler may be reading this one */
	char *w = words[n ^= 1];
	va_start(ap, fmt);
	vsnprintf(w, sizeof(words[0]), fmt, ap);
	va_end(ap);
	waiting_since = test_now_ns();
	waiting = w;
}

void test_wait_begin(struct test_wait *tw, double secs, bool spin,
		     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tw->what, sizeof(tw->what), fmt, ap);
	va_end(ap);
	tw->start = test_now_ns();
	tw->end = tw->start + (uint64_t)(secs * 1e9);
	tw->looks = 0;
	tw->spin = spin;
	tw->before = waiting;
	waiting_since = tw->start;
	waiting = tw->what;
}

void test_wait_more(struct test_wait *tw, const char *file, int line)
{
	uint64_t now = test_now_ns();

	if (now > tw->end) {
		fprintf(stderr, "%s:%d: timed out after %.1f s waiting for "
			"%s\n", file, line, (double)(now - tw->start) / 1e9,
			tw->what);
		test_failed();
	}
	/* a child that failed ends the wait too; a look for crashes is a
	 * system call a child: every 64th look */
	check_kids(0, (tw->looks & 63) == 0);
	if (tw->spin) {
		tw->looks++;
		return;
	}
	/* the caller's condition is a state no event tells of: looks
	 * again after a yield, then after naps */
	if (tw->looks++ < 100) {
		sched_yield();
	} else {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

void test_wait_end(struct test_wait *tw)
{
	waiting = tw->before;
}

void test_work(const char *what, uint64_t n, uint64_t floor)
{
	worked = true;
	printf("work: %s %llu (floor %llu)\n", what, (unsigned long long)n,
	       (unsigned long long)floor);
	fflush(stdout);
	if (n < floor) {
		fprintf(stderr, "%s: %s %llu, under the floor of %llu: too "
			"little done to mean anything\n",
			program_invocation_short_name, what,
			(unsigned long long)n, (unsigned long long)floor);
		test_failed();
	}
}

/* ---- windows and names ---- */

const char *test_name(const char *what)
{
	static char name[16][160];
	static unsigned n;

	char *p = name[n++ % 16];
	snprintf(p, sizeof(name[0]), "%s-%s", prefix, what);
	return p;
}

const char *test_dir(void)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		FAIL("mkdir %s: %s", dir, strerror(errno));
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid())
		FAIL("%s is not a directory of ours", dir);
	return dir;
}

char test_proc_state(const char *path)
{
	char buf[512];
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* after the name, which ends at the last ')' */
	const char *e = strrchr(buf, ')');
	return e && e[1] == ' ' ? e[2] : 0;
}

const char *test_window(void)
{
	static char spec[MAX_WINDOWS][216];
	static int n;
	char what[32], path[200];

	if (n == MAX_WINDOWS)
		FAIL("too many test windows");
	/* a child's names are its own: a window the test makes later must
	 * not be one a child still uses */
	if (getpid() == owner)
		snprintf(what, sizeof(what), "%d", n);
	else
		snprintf(what, sizeof(what), "%d-%d", (int)getpid(), n);
	const char *name = test_name(what);
	snprintf(path, sizeof(path), "/dev/shm/%s", name);
	unlink(path);
	/* the same object, through either transport: shm (light marks) unless
	 * SMQ_TEST_TRANSPORT=file (every mark with a full barrier) */
	const char *t = getenv("SMQ_TEST_TRANSPORT");
	if (t && !strcmp(t, "file"))
		snprintf(spec[n], sizeof(spec[0]), "file:%s", path);
	else
		snprintf(spec[n], sizeof(spec[0]), "shm:%s", name);
	return spec[n++];
}

const char *test_path(const char *spec)
{
	static char path[16][256];
	static int n;

	if (!strncmp(spec, "file:", 5))
		return spec + 5;
	if (strncmp(spec, "shm:", 4))
		return spec;
	char *p = path[n++ % 16];
	snprintf(p, sizeof(path[0]), "/dev/shm/%s", spec + 4);
	return p;
}

struct smq_window *test_init(const char *spec, uint32_t boards, uint32_t queues,
			     uint32_t entries, uint32_t entry_size)
{
	struct smq_window *w;
	const char *sum = getenv("SMQ_TEST_CHECKSUM");
	struct smq_shape sh = {
		{ boards, queues, entries, entry_size, NULL }, NULL,
		sum && atoi(sum) ? SMQ_SHAPE_CHECKSUM : 0, NULL, 0, 0, 0
	};

	/* forced: the tests re-format under boards at work on purpose (those
	 * of the refusal open a handle of their own, not forced) */
	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE, &w));
	OK(smq_init_shape(w, &sh, sizeof(sh)));
	return w;
}

int test_pin(int cpu)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&set);
	CPU_SET(cpu % (n > 0 ? n : 1), &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

uint64_t test_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint8_t *test_snapshot(const char *spec, size_t *len)
{
	int fd = open(test_path(spec), O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		FAIL("snapshot %s", spec);
	uint8_t *buf = malloc((size_t)st.st_size + 1);
	if (!buf || read(fd, buf, (size_t)st.st_size) != st.st_size)
		FAIL("read %s", spec);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

void test_same(const uint8_t *snap, size_t len, const char *spec,
	       const char *what)
{
	test_same_except(snap, len, spec, what, 0, 0);
}

void test_same_except(const uint8_t *snap, size_t len, const char *spec,
		      const char *what, size_t from, size_t to)
{
	size_t n;
	uint8_t *now = test_snapshot(spec, &n);

	if (n != len)
		FAIL("%s: window size changed %zu -> %zu", what, len, n);
	for (size_t i = 0; i < n; i++)
		if (now[i] != snap[i] && (i < from || i >= to))
			FAIL("%s: window byte %zu changed 0x%02x -> 0x%02x", what,
			     i, snap[i], now[i]);
	free(now);
}
