/* The baselines (cli/measure/baseline_*.c, and bench/baseline_*.c of the
 * benchmark program) run with small counts and report numbers that agree
 * with each other; the two-core ring delivers every byte of
 * every message and catches one flipped byte; CPU time never exceeds the
 * wall time it was measured over, however short the run; stopped runs
 * report what they measured; no child, descriptor, message queue or CPU
 * pinning is left behind.  No timing is asserted: the machines here are
 * noisy. */
#include <dirent.h>
#include <mqueue.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/time.h>
#include <sys/wait.h>
#include "testlib.h"
#include "../cli/measure/measure.h"
#include "../bench/products.h"

/* the least count of checks a run makes (146 here) */
TEST_FLOOR(140);

#define ROUNDS 20000
#define MESSAGES 20000
#define LONG_RUN 2000000  /* stopped by a timer long before the end */

static int cpu_a = -1, cpu_b = -1;
static bool have_mqueue = true;

static bool close_to(double got, double want)
{
	double d = got > want ? got - want : want - got;
	double m = want < 0 ? -want : want;
	return m > 0 ? d <= 1e-9 * m : d == 0;
}

/* Each side's CPU time lies inside its own wall window: a share of at
 * most 100%, whatever the length of the run.  The CPU clock and the raw
 * monotonic clock may disagree by parts per million, no more. */
static void check_cpu(const struct result *r, const char *what)
{
	const double cpu[2] = { r->cpu_a, r->cpu_b };
	const double wall[2] = { r->wall_a, r->wall_b };

	for (int i = 0; i < 2; i++) {
		if (cpu[i] < 0)
			continue;
		if (!(wall[i] > 0))
			FAIL("%s: side %c used %g s of CPU over %g s", what, 'A' + i,
			     cpu[i], wall[i]);
		if (cpu[i] > wall[i] * (1 + 1e-4))
			FAIL("%s: side %c used %.9f s of CPU in %.9f s of wall time",
			     what, 'A' + i, cpu[i], wall[i]);
		double pct = cpu_percent(cpu[i], wall[i]);
		if (!(pct >= 0 && pct <= 100))
			FAIL("%s: side %c CPU share %g%%", what, 'A' + i, pct);
	}
}

/* Each check_* below is one check of testlib's count. */
static void check_result(const struct result *r, const char *what, size_t size,
			 uint64_t want, bool latency, bool stopped)
{
	TEST_COUNT();
	const struct lat_stats *l = &r->half_rtt;

	printf("%-16s %8zu B %9llu msgs %9.4f s %12.0f msg/s %10.1f MB/s",
	       r->name, r->size, (unsigned long long)r->messages, r->seconds,
	       r->msgs_per_s, r->mb_per_s);
	if (r->has_latency)
		printf("  half rtt min %.0f median %.0f p99 %.0f max %.0f ns",
		       l->min, l->median, l->p99, l->max);
	printf("  cpu %.3f/%.3f\n", r->cpu_a, r->cpu_b);

	if (!r->name[0] || !memchr(r->name, 0, sizeof(r->name)))
		FAIL("%s: no name", what);
	if (r->size != size)
		FAIL("%s: size %zu, expected %zu", what, r->size, size);
	if (stopped ? r->messages == 0 || r->messages > want : r->messages != want)
		FAIL("%s: %llu messages of %llu", what,
		     (unsigned long long)r->messages, (unsigned long long)want);
	if (!(r->seconds > 0))
		FAIL("%s: %g seconds", what, r->seconds);
	if (!close_to(r->msgs_per_s, (double)r->messages / r->seconds))
		FAIL("%s: %.17g msgs/s, %.17g expected", what, r->msgs_per_s,
		     (double)r->messages / r->seconds);
	if (!close_to(r->mb_per_s, r->msgs_per_s * (double)size / 1e6))
		FAIL("%s: %.17g MB/s, %.17g expected", what, r->mb_per_s,
		     r->msgs_per_s * (double)size / 1e6);
	if (r->has_latency != latency)
		FAIL("%s: has_latency %d", what, r->has_latency);
	if (latency) {
		if (l->n != r->messages)
			FAIL("%s: %llu samples", what, (unsigned long long)l->n);
		if (!(l->min > 0 && l->min <= l->median && l->median <= l->p95 &&
		      l->p95 <= l->p99 && l->p99 <= l->p999 && l->p999 <= l->max &&
		      l->min <= l->mean && l->mean <= l->max))
			FAIL("%s: latencies out of order: min %g mean %g median %g "
			     "p95 %g p99 %g p999 %g max %g", what, l->min, l->mean,
			     l->median, l->p95, l->p99, l->p999, l->max);
	}
	if (!(r->cpu_a == -1 || r->cpu_a >= 0) || !(r->cpu_b == -1 || r->cpu_b >= 0))
		FAIL("%s: cpu %g/%g", what, r->cpu_a, r->cpu_b);
	check_cpu(r, what);
}

static void check_refused(int rc, int want, const char *why, const char *what)
{
	TEST_COUNT();
	if (rc != want)
		FAIL("%s returned %d (%s), expected %d", what, rc, strerror(-rc), want);
	if (!why || !why[0])
		FAIL("%s: no reason given", what);
	printf("%-16s refused: %s\n", what, why);
}

/* call must fail with want and give a reason; uses the caller's why */
#define REFUSED(call, want, what) do { why = NULL; int rc_ = (call); \
		check_refused(rc_, (want), why, (what)); } while (0)

/* ---- what must be left as it was ---- */

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void check_no_children(const char *what)
{
	TEST_COUNT();
	errno = 0;
	if (waitpid(-1, NULL, WNOHANG) != -1 || errno != ECHILD)
		FAIL("%s left a child behind", what);
}

/* The queues are named /smq-baseline-PID-N and unlinked once open. */
static void check_no_mqueues(void)
{
	char name[64];

	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "/smq-baseline-%ld-%d", (long)getpid(), i);
		mqd_t q = mq_open(name, O_RDONLY);
		if (q != (mqd_t)-1) {
			mq_close(q);
			mq_unlink(name);
			FAIL("message queue %s left behind", name);
		}
	}
}

/* ---- stopping a run part way ---- */

static void on_alarm(int sig)
{
	(void)sig;
	measure_interrupted = 1;
}

static void stop_after_ms(int ms)
{
	struct itimerval it = { { 0, 0 }, { ms / 1000, (ms % 1000) * 1000 } };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;  /* no SA_RESTART: blocked calls see EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	measure_interrupted = 0;
	setitimer(ITIMER_REAL, &it, NULL);
}

static bool stop_done(void)
{
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	bool stopped;

	setitimer(ITIMER_REAL, &off, NULL);
	stopped = measure_interrupted;
	measure_interrupted = 0;
	return stopped;
}

/* A stopped run reports what it measured, or -EINTR when that was nothing. */
static void check_stopped_of(int rc, const struct result *r, const char *why,
			     const char *what, size_t size, bool latency,
			     uint64_t want)
{
	TEST_COUNT();
	bool stopped = stop_done();

	if (rc == -EINTR && stopped) {
		check_refused(rc, -EINTR, why, what);
		return;
	}
	if (rc)
		FAIL("%s returned %d (%s): %s", what, rc, strerror(-rc), why ? why : "");
	check_result(r, what, size, want, latency, stopped);
	check_no_children(what);
}

/* A run of LONG_RUN messages stopped by the timer. */
static void check_stopped(int rc, const struct result *r, const char *why,
			  const char *what, size_t size, bool latency)
{
	check_stopped_of(rc, r, why, what, size, latency, LONG_RUN);
}

/* ---- the baselines ---- */

static void test_pingpongs(bool two_cpus)
{
	struct result r;
	const char *why = NULL;
	int rc;

	if (two_cpus) {
		rc = baseline_cacheline_pingpong(cpu_a, cpu_b, ROUNDS, &r, &why);
		if (rc)
			FAIL("cache line: %d (%s): %s", rc, strerror(-rc), why);
		check_result(&r, "cache line", sizeof(uint64_t), ROUNDS, true, false);
		check_no_children("cache line");
		/* unpinned: the scheduler places them */
		rc = baseline_cacheline_pingpong(-1, -1, ROUNDS, &r, &why);
		if (rc)
			FAIL("cache line unpinned: %d (%s): %s", rc, strerror(-rc), why);
		check_result(&r, "cache line -1", sizeof(uint64_t), ROUNDS, true, false);
		check_no_children("cache line unpinned");
		REFUSED(baseline_cacheline_pingpong(cpu_a, cpu_a, ROUNDS, &r, &why),
			-EINVAL, "cache line, one cpu");
	} else {
		REFUSED(baseline_cacheline_pingpong(-1, -1, ROUNDS, &r, &why),
			-EINVAL, "cache line, one cpu");
	}

	rc = baseline_futex_pingpong(cpu_a, cpu_b, ROUNDS, &r, &why);
	if (rc)
		FAIL("futex: %d (%s): %s", rc, strerror(-rc), why);
	check_result(&r, "futex", sizeof(uint32_t), ROUNDS, true, false);
	check_no_children("futex");

	REFUSED(baseline_cacheline_pingpong(cpu_a, cpu_b, 0, &r, &why), -EINVAL,
		"cache line, 0");
	REFUSED(baseline_futex_pingpong(cpu_a, cpu_b, 0, &r, &why), -EINVAL,
		"futex, 0");

	if (two_cpus) {
		stop_after_ms(40);
		rc = baseline_cacheline_pingpong(cpu_a, cpu_b, LONG_RUN, &r, &why);
		check_stopped(rc, &r, why, "cache line stopped", sizeof(uint64_t), true);
	}
	stop_after_ms(400);  /* after the warm-up, even with slow wake-ups */
	rc = baseline_futex_pingpong(cpu_a, cpu_b, LONG_RUN, &r, &why);
	check_stopped(rc, &r, why, "futex stopped", sizeof(uint32_t), true);
}

static void test_memcpy(void)
{
	static const struct { size_t size; uint64_t total, copies; } runs[] = {
		{ 64, 1 << 20, 16384 },
		{ 1000, 1 << 20, 1049 },       /* the last copy passes the total */
		{ 64 << 10, 1 << 20, 16 },
		{ 1 << 20, 1 << 20, 1 },
		{ 4096, 100, 1 },
	};
	struct result r;
	const char *why = NULL;

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		int rc = baseline_memcpy(runs[i].size, runs[i].total, &r, &why);
		if (rc)
			FAIL("memcpy %zu: %d (%s): %s", runs[i].size, rc,
			     strerror(-rc), why);
		check_result(&r, "memcpy", runs[i].size, runs[i].copies, false, false);
		if (r.cpu_b != -1)
			FAIL("memcpy has no second side, cpu_b %g", r.cpu_b);
	}
	REFUSED(baseline_memcpy(0, 1 << 20, &r, &why), -EINVAL, "memcpy 0 B");
	REFUSED(baseline_memcpy(64, 0, &r, &why), -EINVAL, "memcpy 0 total");
}

static const char *kind_name(enum stream_kind k)
{
	return k == STREAM_PIPE ? "pipe" : k == STREAM_UNIX ? "unix" : "mqueue";
}

static void test_stream(enum stream_kind kind, size_t size, uint64_t count)
{
	struct result r;
	const char *why = NULL;
	char what[64];

	snprintf(what, sizeof(what), "%s %zu", kind_name(kind), size);
	int rc = baseline_stream(kind, size, count, cpu_a, cpu_b, &r, &why);
	if (rc)
		FAIL("%s: %d (%s): %s", what, rc, strerror(-rc), why ? why : "");
	check_result(&r, what, size, count, false, false);
	check_no_children(what);
}

static void test_streams(void)
{
	static const size_t sizes[] = { 1, 64, 4096, 64 << 10 };
	struct result r;
	const char *why = NULL;
	int rc;

	/* Message queues may be missing or limited here. */
	rc = baseline_stream(STREAM_MQUEUE, 64, 100, cpu_a, cpu_b, &r, &why);
	if (rc == -ENOSYS || rc == -EACCES || rc == -EPERM) {
		printf("mqueue not tested: %s\n", why);
		have_mqueue = false;
	}

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t n = sizes[i] > 4096 ? MESSAGES / 10 : MESSAGES;
		test_stream(STREAM_PIPE, sizes[i], n);
		test_stream(STREAM_UNIX, sizes[i], n);
		if (have_mqueue && sizes[i] <= 4096)  /* msgsize_max is 8192 by default */
			test_stream(STREAM_MQUEUE, sizes[i], n);
	}
	test_stream(STREAM_UNIX, 0, MESSAGES);
	if (have_mqueue)
		test_stream(STREAM_MQUEUE, 0, MESSAGES);

	REFUSED(baseline_stream(STREAM_PIPE, 0, MESSAGES, cpu_a, cpu_b, &r, &why),
		-EINVAL, "pipe 0 B");
	REFUSED(baseline_stream(STREAM_UNIX, 64, 0, cpu_a, cpu_b, &r, &why),
		-EINVAL, "unix, 0 messages");
	REFUSED(baseline_stream((enum stream_kind)7, 64, 10, cpu_a, cpu_b, &r, &why),
		-EINVAL, "stream kind 7");

	/* 16 MiB messages pass every default limit: refused with a reason. */
	if (have_mqueue) {
		rc = baseline_stream(STREAM_MQUEUE, 16 << 20, 10, cpu_a, cpu_b, &r, &why);
		if (rc >= 0)
			FAIL("mqueue 16 MiB accepted");
		if (!why || !why[0] || r.messages)
			FAIL("mqueue 16 MiB: %d without a reason", rc);
		printf("%-16s refused: %s\n", "mqueue 16 MiB", why);
		check_no_children("mqueue 16 MiB");
	}

	/* stopped: a pipe ends with end of file, the others with a short message */
	for (int k = STREAM_PIPE; k <= STREAM_MQUEUE; k++) {
		if (k == STREAM_MQUEUE && !have_mqueue)
			continue;
		stop_after_ms(40);
		rc = baseline_stream((enum stream_kind)k, 64, LONG_RUN, cpu_a, cpu_b,
				     &r, &why);
		check_stopped(rc, &r, why, kind_name((enum stream_kind)k), 64, false);
	}
	if (have_mqueue) {
		stop_after_ms(40);
		rc = baseline_stream(STREAM_MQUEUE, 0, LONG_RUN, cpu_a, cpu_b, &r, &why);
		check_stopped(rc, &r, why, "mqueue 0 stopped", 0, false);
	}
	stop_after_ms(40);
	rc = baseline_stream(STREAM_UNIX, 0, LONG_RUN, cpu_a, cpu_b, &r, &why);
	check_stopped(rc, &r, why, "unix 0 stopped", 0, false);
}

/* ---- the two-core ring ---- */

static int ring_run(size_t size, size_t slot_size, uint32_t slots,
		    uint64_t count, bool check_all, uint64_t corrupt,
		    struct result *r, const char **why)
{
	struct ring_params p = { .size = size, .slot_size = slot_size,
				 .slots = slots, .count = count, .cpu_a = cpu_a,
				 .cpu_b = cpu_b, .check_all = check_all,
				 .corrupt = corrupt };
	return baseline_ring(&p, r, why);
}

static void test_ring(bool two_cpus)
{
	/* the geometries bench --baseline uses, and odd ones: messages
	 * smaller than their slots, odd sizes, fewer messages than slots,
	 * counts that stop part way round the ring */
	static const struct {
		size_t size, slot_size;
		uint32_t slots;
		uint64_t count;
	} runs[] = {
		{ 64, 1024, 256, 20000 },
		{ 0, 1024, 256, 5000 },
		{ 1, 1, 16, 5001 },
		{ 7, 8, 3, 1000 },
		{ 8, 8, 2, 1000 },
		{ 1000, 1000, 4, 3 },
		{ 100, 4096, 8, 2345 },
		{ 65536, 65536, 32, 300 },
		{ 262144, 262144, 8, 50 },
		{ 1 << 20, 1 << 20, 4, 13 },
	};
	struct result r;
	const char *why = NULL;
	char what[64];
	int rc;

	if (!two_cpus) {
		REFUSED(ring_run(64, 64, 4, 10, false, 0, &r, &why), -EINVAL,
			"ring, one cpu");
		return;
	}
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		for (int all = 1; all >= 0; all--) {
			snprintf(what, sizeof(what), "ring %zu/%zux%u%s", runs[i].size,
				 runs[i].slot_size, runs[i].slots,
				 all ? " all bytes" : "");
			rc = ring_run(runs[i].size, runs[i].slot_size, runs[i].slots,
				      runs[i].count, all, 0, &r, &why);
			if (rc)
				FAIL("%s: %d (%s): %s", what, rc, strerror(-rc),
				     why ? why : "");
			check_result(&r, what, runs[i].size, runs[i].count, false,
				     false);
			check_no_children(what);
			if (r.cpu_a < 0 || r.cpu_b < 0)
				FAIL("%s: CPU time not measured", what);
		}
	}

	/* one flipped byte is caught, in the untimed lap or after it: the
	 * last byte of a message, by the full check; the last byte of the
	 * sequence number, by the ordinary one */
	static const struct { size_t size; bool all; uint64_t at; } bad[] = {
		{ 1000, true, 1 }, { 1000, true, 8 * 2 + 100 }, { 1, true, 40 },
		{ 8, false, 1 }, { 64 << 10, true, 8 * 2 + 5 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(what, sizeof(what), "ring %zu, byte flipped in %llu",
			 bad[i].size, (unsigned long long)bad[i].at - 1);
		why = NULL;
		rc = ring_run(bad[i].size, bad[i].size, 8, 500, bad[i].all,
			      bad[i].at, &r, &why);
		check_refused(rc, -EIO, why, what);
		char want[128];
		snprintf(want, sizeof(want), "1 of the messages came out of the "
			 "ring wrong, the first message %llu",
			 (unsigned long long)bad[i].at - 1);
		if (!why || strcmp(why, want))
			FAIL("%s: '%s', expected '%s'", what, why ? why : "", want);
		check_no_children(what);
	}

	REFUSED(ring_run(65, 64, 4, 10, false, 0, &r, &why), -EINVAL,
		"ring, message > slot");
	REFUSED(ring_run(64, 64, 0, 10, false, 0, &r, &why), -EINVAL,
		"ring, no slots");
	REFUSED(ring_run(64, 64, 4, 0, false, 0, &r, &why), -EINVAL,
		"ring, 0 messages");
	struct ring_params same = { .size = 64, .slot_size = 64, .slots = 4,
				    .count = 10, .cpu_a = cpu_a, .cpu_b = cpu_a };
	REFUSED(baseline_ring(&same, &r, &why), -EINVAL, "ring, one cpu");

	stop_after_ms(40);
	/* a bare ring is fast: ten times the count, and that count the
	 * bound (in the machine's fast state it moved 3.6 M in 40 ms) */
	rc = ring_run(64, 1024, 256, LONG_RUN * 10, false, 0, &r, &why);
	check_stopped_of(rc, &r, why, "ring stopped", 64, false, LONG_RUN * 10);
	stop_after_ms(300);  /* after the untimed lap of 8 MiB, checked */
	rc = ring_run(1 << 20, 1 << 20, 4, LONG_RUN, true, 0, &r, &why);
	check_stopped(rc, &r, why, "ring 1 MiB stopped", 1 << 20, false);
}

/* Runs of a few round trips or messages: the CPU shares stay at or under
 * 100% (check_result checks each). */
static void test_short_runs(bool two_cpus)
{
	struct result r;
	const char *why = NULL;
	char what[64];

	for (uint64_t n = 1; n <= 64; n *= 4) {
		int rc;
		snprintf(what, sizeof(what), "futex, %llu", (unsigned long long)n);
		if ((rc = baseline_futex_pingpong(cpu_a, cpu_b, n, &r, &why)))
			FAIL("%s: %d: %s", what, rc, why);
		check_result(&r, what, sizeof(uint32_t), n, true, false);
		snprintf(what, sizeof(what), "pipe, %llu", (unsigned long long)n);
		if ((rc = baseline_stream(STREAM_PIPE, 64, n, cpu_a, cpu_b, &r, &why)))
			FAIL("%s: %d: %s", what, rc, why);
		check_result(&r, what, 64, n, false, false);
		if (!two_cpus)
			continue;
		snprintf(what, sizeof(what), "cache line, %llu", (unsigned long long)n);
		if ((rc = baseline_cacheline_pingpong(cpu_a, cpu_b, n, &r, &why)))
			FAIL("%s: %d: %s", what, rc, why);
		check_result(&r, what, sizeof(uint64_t), n, true, false);
		snprintf(what, sizeof(what), "ring, %llu", (unsigned long long)n);
		if ((rc = ring_run(64, 64, 4, n, false, 0, &r, &why)))
			FAIL("%s: %d: %s", what, rc, why);
		check_result(&r, what, 64, n, false, false);
	}
}

/* The allowed set, as the kernel lists it in /proc/self/status. */
static void test_cpu_list(void)
{
	char got[256], want[256] = "", line[512];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f) {
		printf("cpu list not checked: no /proc/self/status\n");
		return;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Cpus_allowed_list: %255s", want) == 1)
			break;
	fclose(f);
	cpu_allowed_list(got, sizeof(got));
	printf("allowed CPUs %s (kernel: %s), %d of them\n", got, want,
	       cpu_allowed_count());
	if (strcmp(got, want))
		FAIL("allowed CPUs '%s', the kernel says '%s'", got, want);
	if (cpu_allowed_count() < 1 || !cpu_allowed(cpu_pick(0)) ||
	    cpu_allowed(-1) || cpu_allowed(CPU_SETSIZE))
		FAIL("cpu_allowed disagrees with cpu_pick");
}

/* A CPU this process may not use makes the first or the second side fail. */
static void test_bad_cpu(void)
{
	cpu_set_t set;
	struct result r;
	const char *why = NULL;
	int bad = CPU_SETSIZE - 1, rc;

	if (sched_getaffinity(0, sizeof(set), &set) || CPU_ISSET(bad, &set))
		return;
	rc = baseline_futex_pingpong(cpu_a, bad, 100, &r, &why);
	if (rc >= 0 || !why)
		FAIL("futex with cpu_b %d: %d", bad, rc);
	printf("%-16s refused: %s\n", "futex bad cpu_b", why);
	check_no_children("futex bad cpu_b");
	rc = baseline_stream(STREAM_PIPE, 64, 100, bad, cpu_b, &r, &why);
	if (rc >= 0 || !why)
		FAIL("pipe with cpu_a %d: %d", bad, rc);
	printf("%-16s refused: %s\n", "pipe bad cpu_a", why);
	rc = baseline_stream(STREAM_UNIX, 64, 100, cpu_a, bad, &r, &why);
	if (rc >= 0 || !why)
		FAIL("unix with cpu_b %d: %d", bad, rc);
	printf("%-16s refused: %s\n", "unix bad cpu_b", why);
	struct ring_params rp = { .size = 64, .slot_size = 64, .slots = 4,
				  .count = 100, .cpu_a = cpu_a, .cpu_b = bad };
	rc = baseline_ring(&rp, &r, &why);
	if (rc >= 0 || !why)
		FAIL("ring with cpu_b %d: %d", bad, rc);
	printf("%-16s refused: %s\n", "ring bad cpu_b", why);
	check_no_children("bad cpu");
}

int main(void)
{
	cpu_set_t before, after;
	int fds;

	setvbuf(stdout, NULL, _IOLBF, 0);
	cpu_a = cpu_pick(0);
	cpu_b = cpu_pick(1);
	bool two_cpus = cpu_a >= 0 && cpu_b >= 0 && cpu_a != cpu_b;
	if (!two_cpus)
		cpu_a = cpu_b = -1;
	printf("cpus %d and %d\n", cpu_a, cpu_b);
	if (sched_getaffinity(0, sizeof(before), &before))
		FAIL("sched_getaffinity");
	fds = count_fds();

	test_cpu_list();
	test_pingpongs(two_cpus);
	test_memcpy();
	test_streams();
	test_ring(two_cpus);
	test_short_runs(two_cpus);
	test_bad_cpu();

	if (sched_getaffinity(0, sizeof(after), &after) || !CPU_EQUAL(&before, &after))
		FAIL("the CPU affinity was not restored");
	if (count_fds() != fds)
		FAIL("%d descriptors open, %d before", count_fds(), fds);
	check_no_children("the baselines");
	if (have_mqueue)
		check_no_mqueues();
	return 0;
}
