/* Small helpers for the standalone test programs.  Exit 0 pass, 1 fail,
 * 77 skip (the runner counts them). */
#ifndef SMQ_TESTLIB_H
#define SMQ_TESTLIB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/types.h>
#include <unistd.h>
#include "smq.h"

#define SKIP 77

#define FAIL(...) do { fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define CHECK(cond) do { if (!(cond)) FAIL("check failed: %s", #cond); } while (0)
/* expect a call to return exactly want */
#define EXPECT(call, want) do { int r_ = (call); int w_ = (want); \
		if (r_ != w_) FAIL("%s returned %d (%s), expected %d (%s)", #call, \
				   r_, smq_strerror(r_), w_, smq_strerror(w_)); } while (0)
#define OK(call) EXPECT(call, 0)

/* A fresh window spec ("shm:smq-test-PID-N", or with SMQ_TEST_TRANSPORT=file
 * "file:/dev/shm/smq-test-PID-N": the same object), removed at exit. */
const char *test_window(void);
/* Formats spec as board 0 with the given geometry; returns the handle,
 * opened with SMQ_OPEN_FORCE (it formats and clears under boards at work).
 * SMQ_TEST_CHECKSUM=1 in the environment: with checksums. */
struct smq_window *test_init(const char *spec, uint32_t boards, uint32_t queues,
			     uint32_t entries, uint32_t entry_size);
/* Pins the calling process to cpu % ncpus; returns 0 or -1. */
int test_pin(int cpu);
/* Runs fn(arg) in a child; returns its pid. */
pid_t test_fork(int (*fn)(void *), void *arg);
/* Waits for pid; fails the test unless it exited 0. */
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
