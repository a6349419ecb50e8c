/* Small helpers for the standalone test programs.  Exit 0 pass, 1 fail,
 * 77 skip (the runner counts them).
 *
 * What a test leaves behind: nothing, however it ends.  Every child a test
 * forks goes through test_fork() or test_fork_raw(), which record it (and
 * the child dies with its parent); every shared memory object or file it
 * makes is named under the test's prefix (test_window(), test_name()) or
 * lies in test_dir().  When the test's own process exits (FAIL, a passing
 * return, anything) or is stopped by SIGINT, SIGTERM or SIGHUP (what
 * run.sh's timeout sends), the children it recorded still running are
 * killed (SIGKILL, then reaped) and the objects removed.  A child's exit
 * ends the children it forked itself, never its siblings, and removes
 * nothing: the objects are the test's.
 *
 * What a test did: each CHECK, EXPECT and OK of its own process is
 * counted, and a test that passes prints "work: checks N (floor M)", M the
 * floor it states at file scope, TEST_FLOOR(M): the least count of checks
 * a run makes wherever it runs; under it, or with no floor stated, the
 * test fails.  A test bounded by time says instead what it did against
 * the least it must do, test_work(). */
#ifndef SMQ_TESTLIB_H
#define SMQ_TESTLIB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/types.h>
#include <unistd.h>
#include "smq.h"
#include "smq_tools.h"  /* the tools: tests drive them too */

#define SKIP 77

/* The least count of checks (of the test's own process) that a passing
 * run makes, stated once at file scope: TEST_FLOOR(40); */
extern const unsigned long test_check_floor __attribute__((weak));
#define TEST_FLOOR(n) const unsigned long test_check_floor = (n)

/* CHECK, EXPECT and OK evaluated by this process */
extern atomic_ulong test_checks;
#define TEST_COUNT() atomic_fetch_add_explicit(&test_checks, 1, \
					       memory_order_relaxed)

/* A failure: its message, then exit 1.  In a child (or a grandchild) it
 * is also said to the test's own process, by a signal, so that the test
 * ends at once with the child's message, whatever its process waits for
 * (a child, a condition, a call of the library that waits forever),
 * instead of waiting for a peer that cannot come.  A child the test kills
 * says nothing: only this failure path does. */
#define FAIL(...) do { fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); \
		test_failed(); } while (0)
void test_failed(void) __attribute__((noreturn));
#define CHECK(cond) do { TEST_COUNT(); \
		if (!(cond)) FAIL("check failed: %s", #cond); } while (0)
/* expect a call to return exactly want */
#define EXPECT(call, want) do { int r_ = (call); int w_ = (want); \
		TEST_COUNT(); \
		if (r_ != w_) FAIL("%s returned %d (%s), expected %d (%s)", #call, \
				   r_, smq_strerror(r_), w_, smq_strerror(w_)); } while (0)
#define OK(call) EXPECT(call, 0)

/* The work a test did against the least it must do to mean anything: prints
 * "work: WHAT N (floor M)" and fails if n is under floor (a busy machine
 * makes a test bounded by time slower, never empty).  A test that says its
 * work prints no count of checks. */
void test_work(const char *what, uint64_t n, uint64_t floor);
/* CLOCK_MONOTONIC in nanoseconds */
uint64_t test_now_ns(void);

/* A run bounded by time, against a floor: it goes on while
 * test_going(b, done), until secs have passed and at least floor was
 * done, or most was done, whichever comes first.  A machine so busy that
 * the floor is not reached in secs gets TEST_GRACE_SECS more; past that
 * the run stops short, and test_work() fails it. */
#define TEST_GRACE_SECS 30.0
struct test_budget {
	uint64_t end, last;     /* ns: secs from the start, and the grace */
	uint64_t floor, most;
};
void test_budget(struct test_budget *b, double secs, uint64_t floor,
		 uint64_t most);
/* ...exactly count, however long it takes (a count the caller set) */
void test_budget_count(struct test_budget *b, uint64_t count);
bool test_going(const struct test_budget *b, uint64_t done);

/* What the test waits for from now on (printf-style; NULL: nothing): said
 * if a signal (a timeout) stops the test.  Not for a message loop's every
 * turn: it formats. */
void test_waiting(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* Waits until cond holds, looking again after a yield, then after naps of
 * a millisecond; past secs seconds the test fails, naming what it waited
 * for (the printf-style rest).  SPIN_UNTIL looks without a pause, for the
 * waits whose moment matters (a kill aimed at a phase). */
struct test_wait {
	uint64_t start, end;
	unsigned looks;
	bool spin;
	const char *before;
	char what[160];
};
void test_wait_begin(struct test_wait *tw, double secs, bool spin,
		     const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void test_wait_more(struct test_wait *tw, const char *file, int line);
void test_wait_end(struct test_wait *tw);
#define WAIT_UNTIL(cond, secs, ...) do { struct test_wait tw_; \
		test_wait_begin(&tw_, (secs), false, __VA_ARGS__); \
		while (!(cond)) test_wait_more(&tw_, __FILE__, __LINE__); \
		test_wait_end(&tw_); } while (0)
#define SPIN_UNTIL(cond, secs, ...) do { struct test_wait tw_; \
		test_wait_begin(&tw_, (secs), true, __VA_ARGS__); \
		while (!(cond)) test_wait_more(&tw_, __FILE__, __LINE__); \
		test_wait_end(&tw_); } while (0)

/* A fresh window spec ("shm:PREFIX-N", or with SMQ_TEST_TRANSPORT=file
 * "file:/dev/shm/PREFIX-N": the same object), removed at exit.  PREFIX is
 * smq-TEST-PID of the test's own process (and -CHILDPID after it in a
 * child's names, so that no two processes make the same name). */
const char *test_window(void);
/* A shm name of the test's: "PREFIX-what", the same in every process of
 * the test (a spec is "shm:" or "split:" before it, a path "/dev/shm/");
 * removed at exit with every object whose name continues it with a '.' or
 * a '-' (a split window's regions).  Rotates 16 buffers. */
const char *test_name(const char *what);
/* A directory of the test's under /tmp, made on the first call and
 * removed with what is in it at exit. */
const char *test_dir(void);
/* The state letter of /proc's stat at path ('S' asleep, 'Z' a zombie...),
 * 0 if it cannot be read. */
char test_proc_state(const char *path);
/* Formats spec as board 0 with the given geometry; returns the handle,
 * opened with SMQ_OPEN_FORCE (it formats and clears under boards at work).
 * SMQ_TEST_CHECKSUM=1 in the environment: with checksums. */
struct smq_window *test_init(const char *spec, uint32_t boards, uint32_t queues,
			     uint32_t entries, uint32_t entry_size);
/* Pins the calling process to cpu % ncpus; returns 0 or -1. */
int test_pin(int cpu);
/* Runs fn(arg) in a child (which exits with what fn returns); returns its
 * pid.  The child is recorded (killed if the test ends first) and dies
 * with the thread that forked it: fork from one that outlives it. */
pid_t test_fork(int (*fn)(void *), void *arg);
/* fork() with the same record: 0 in the child, its pid in the parent. */
pid_t test_fork_raw(void);
/* Waits for pid; fails the test unless it exited 0.  A signal that stops
 * the test meanwhile says it waited for what.  Meanwhile whichever child
 * ends first is looked at: one of this process's children that failed
 * (FAIL, or a crash: SIGSEGV, SIGBUS, SIGABRT..., or a sanitizer's exit
 * 86) fails the test at once, naming it; the others are left for whoever
 * waits for them.  WAIT_UNTIL, SPIN_UNTIL and test_going() do the same. */
void test_wait_ok(pid_t pid, const char *what);
/* Deterministic random numbers. */
uint64_t test_rand(uint64_t *state);
/* Reads the whole window file into a malloc'd buffer. */
uint8_t *test_snapshot(const char *spec, size_t *len);
/* The file a spec names (file:PATH, shm:NAME); other specs as they are. */
const char *test_path(const char *spec);
/* Fails unless the window holds exactly the bytes of snap. */
void test_same(const uint8_t *snap, size_t len, const char *spec,
	       const char *what);
/* ...except bytes [from, to) (a handle's own in-flight marks, which a
 * stale handle may still write and free: they sit where no geometry
 * moves them) */
void test_same_except(const uint8_t *snap, size_t len, const char *spec,
		      const char *what, size_t from, size_t to);

#endif
