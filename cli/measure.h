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
	double cpu_a, cpu_b;    /* CPU seconds used by each side (-1 unknown) */
	double seconds_b;       /* wall time over which cpu_b was measured by
				   the other side itself; 0: the same as
				   seconds */
	double predicted;       /* the PCIe model's bound on msgs_per_s, or 0 */
};

/* CPUs: which to use when none are given (the first two this process may
 * run on), and pinning; cpu < 0 leaves the process where it is. */
int cpu_pick(int which);
int cpu_pin(int cpu);
double cpu_seconds(void);  /* user + system time of this process */
uint64_t now_ns(void);     /* CLOCK_MONOTONIC */

/* Memory shared with children forked after it is made; munmap it. */
void *shared_page(size_t size);

/* Set by SIGINT while a measurement runs: loops stop early and report
 * what they measured.  measure_signals() installs the handler. */
extern volatile sig_atomic_t measure_interrupted;
void measure_signals(void);
/* Progress on stderr when it is a terminal: "label: done/total". */
void progress(const char *label, uint64_t done, uint64_t total);
void progress_end(void);

/* The baselines (baseline.c): each measures one thing on this machine in
 * this run.  Ping-pongs fill half_rtt and msgs_per_s per direction; streams
 * fill msgs_per_s and mb_per_s.  Return 0, or a negative errno with *why
 * set to a short reason when the baseline cannot run here. */
int baseline_cacheline_pingpong(int cpu_a, int cpu_b, uint64_t count,
				struct result *r, const char **why);
int baseline_futex_pingpong(int cpu_a, int cpu_b, uint64_t count,
			    struct result *r, const char **why);
int baseline_memcpy(size_t size, uint64_t bytes_total, struct result *r,
		    const char **why);
enum stream_kind { STREAM_PIPE, STREAM_UNIX, STREAM_MQUEUE };
int baseline_stream(enum stream_kind kind, size_t size, uint64_t count,
		    int cpu_a, int cpu_b, struct result *r, const char **why);

#endif
