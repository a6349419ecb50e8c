/* Measurements shared by pingpong, bench and the baselines: pinning, a
 * second process, latency statistics, CPU time, and result rows. */
#ifndef SMQ_MEASURE_H
#define SMQ_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

/* Latency statistics of n samples in nanoseconds (sorts the array). */
struct lat_stats {
	uint64_t n;
	double min, mean, median, p95, p99, p999, max;
};
void lat_compute(uint64_t *samples, uint64_t n, struct lat_stats *st);
/* The median of n values (sorts them): what the comparisons of bench
 * --baseline are made of, in runs. */
double median_double(double *v, int n);

/* Counts of samples by powers of two of nanoseconds: bucket k holds
 * [2^k, 2^(k+1)) ns, and bucket 0 also the samples of 0 ns. */
#define HIST_BUCKETS 64
void lat_histogram(const uint64_t *samples, uint64_t n,
		   uint64_t counts[HIST_BUCKETS]);
static inline uint64_t hist_low_ns(int k) { return k ? 1ull << k : 0; }
static inline uint64_t hist_high_ns(int k) { return 2ull << k; }

/* One row of results: a ping-pong (latency filled) or a stream. */
struct result {
	char name[48];          /* "smq poll", "pipe", "futex", ... */
	size_t size;            /* message size in bytes */
	uint64_t messages;      /* per direction for a ping-pong */
	double seconds;         /* wall time of the timed part */
	double msgs_per_s;      /* per direction for a ping-pong */
	double mb_per_s;        /* payload bytes, 10^6 per second */
	bool has_latency;
	struct lat_stats half_rtt;  /* half round trip, ns */
	/* CPU seconds used by each side (A drives or writes, B answers or
	 * reads; < 0: unknown), and the wall seconds over which that side
	 * measured them, on its own clock, around the CPU samples. */
	double cpu_a, wall_a, cpu_b, wall_b;
	double predicted;       /* the PCIe model's bound on msgs_per_s, or 0 */
	bool has_histogram;
	uint64_t histogram[HIST_BUCKETS];  /* see lat_histogram() */
};

/* A CPU share in percent of one core, or NAN when not known.  A side can
 * use no more than its own wall window, since the CPU samples sit inside
 * it; what the two clocks disagree by (parts per million) is cut at 100. */
double cpu_percent(double cpu, double wall);

/* CPU time of this process over a window of wall time.  The wall clock is
 * read before the first CPU sample and after the last, so the CPU time
 * counted can never exceed the wall time, however short the window. */
struct cpu_window {
	uint64_t wall0;
	double cpu0;
};
void cpu_window_start(struct cpu_window *w);
void cpu_window_stop(const struct cpu_window *w, double *cpu, double *wall);

/* CPUs: which to use when none are given (the first two this process may
 * run on), and pinning; cpu < 0 leaves the process where it is. */
int cpu_pick(int which);
int cpu_pin(int cpu);
/* The CPUs this process may use (sched_getaffinity): how many, whether cpu
 * is one of them, and the set as a list such as "0-3,6". */
int cpu_allowed_count(void);
bool cpu_allowed(int cpu);
const char *cpu_allowed_list(char *buf, size_t len);
double cpu_seconds(void);  /* CPU time of this process, to the nanosecond */
/* When and where a measurement runs, as a line of words: the date (UTC),
 * the host's name, its processor, the CPUs online and this process's,
 * the kernel. */
const char *machine_words(char *buf, size_t len);
uint64_t now_ns(void);     /* CLOCK_MONOTONIC */

/* Memory shared with children forked after it is made; munmap it. */
void *shared_page(size_t size);

/* Set by SIGINT while a measurement runs: loops stop early and report
 * what they measured.  measure_signals() installs the handler. */
extern volatile sig_atomic_t measure_interrupted;
void measure_signals(void);
/* Set in a forked peer by SIGTERM, which the kernel sends when the run
 * that forked it dies (measure_orphan_signals() installs the handler):
 * nobody will read what it measures, so its waits end at once and it
 * closes its queues. */
extern volatile sig_atomic_t measure_orphaned;
void measure_orphan_signals(void);
/* err = call, a call of the library that waits, taken up again when a
 * signal handler ended its wait (-EINTR): a run looks at
 * measure_interrupted between its rounds and ends there, with what it
 * measured; a round stopped halfway would leave the peer's answers in
 * the queues.  An orphaned peer's wait is not taken up. */
#define MEASURE_WAIT(err, call) \
	do { (err) = (call); } while ((err) == -EINTR && !measure_orphaned)
/* Progress on stderr when it is a terminal: "label: done/total". */
void progress(const char *label, uint64_t done, uint64_t total);
void progress_end(void);

/* The baselines (baseline_*.c): each measures one thing on this machine in
 * this run.  Ping-pongs fill half_rtt and msgs_per_s per direction; streams
 * fill msgs_per_s and mb_per_s.  Return 0, or a negative errno with *why
 * set to a short reason when the baseline cannot run here. */
int baseline_cacheline_pingpong(int cpu_a, int cpu_b, uint64_t count,
				struct result *r, const char **why);
int baseline_futex_pingpong(int cpu_a, int cpu_b, uint64_t count,
			    struct result *r, const char **why);
int baseline_memcpy(size_t size, uint64_t bytes_total, struct result *r,
		    const char **why);
/* A bare single-producer single-consumer ring in shared memory: slots of
 * slot_size bytes (and a small header, in whole cache lines), the writer
 * on cpu_a copies each message in, the reader on cpu_b copies it out, both
 * busy-polling.  One untimed lap of twice the slots first, as smq's bench
 * does.  The reader checks each message's length and sequence number (its
 * first 8 bytes), as smq's bench does; with check_all, the writer fills
 * every message with a pattern of its own and the reader checks every
 * byte (slower: for tests).  A message that came wrong fails with -EIO. */
struct ring_params {
	size_t size;            /* message bytes, at most slot_size */
	size_t slot_size;
	uint32_t slots;
	uint64_t count;         /* messages timed */
	int cpu_a, cpu_b;
	bool check_all;
	uint64_t corrupt;       /* tests: 1 + the number of a message (from
				   0, the untimed lap included) whose last
				   byte the writer flips in its slot; 0: none */
};
int baseline_ring(const struct ring_params *p, struct result *r,
		  const char **why);

#endif
