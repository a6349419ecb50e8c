/* bench --baseline: smq beside the baselines measured in the same run
 * (compare.c), on scratch windows of its own (scratch.c), and the
 * comparisons' output (print.c). */
#ifndef SMQ_COMPARE_H
#define SMQ_COMPARE_H

#include <stdbool.h>
#include "session.h"

/* What is compared is measured RUNS times, each time beside its baseline,
 * and compared as medians: one run on a shared machine proves little. */
#define RUNS 5

/* What a scratch session measures: a list of (kind, size, count). */
struct job {
	bool stream;
	size_t size;
	uint64_t count;
	struct result *out;
	struct how how;         /* zero: copies, one a call */
};
struct jobs {
	struct job *job;
	int n;
};
/* Formats a scratch window of entries of entry_size bytes (flags: its
 * SMQ_SHAPE_*), runs the jobs on it with the receivers in mode, removes
 * it.  The exit status. */
int scratch_run(struct ctx *ctx, struct session_opts *so, int mode,
		uint32_t entries, uint32_t entry_size, unsigned flags,
		struct jobs *js);
/* Formats the scratch window alone: its spec and its path (which the
 * caller unlinks when done).  0, or the exit status (said). */
int scratch_make(uint32_t entries, uint32_t entry_size, unsigned flags,
		 char *spec, size_t spec_len, char *path, size_t path_len);
/* one_cpu.c: smq's software alone: one process on one CPU sends a batch
 * of size-byte messages to itself through a window of entries of
 * SMALL_ENTRY_SIZE, receives them, checks each one's sequence number, and
 * again, count messages in all; msgs_per_s is of a send and a receive
 * together, with no second CPU to wait for.  0, or the exit status
 * (said). */
int one_cpu_calls(size_t size, uint32_t entries, uint64_t count, int cpu,
		  struct result *r);
/* Same slots as smq's scratch windows: 256 of 1 KiB for small messages;
 * for big ones, slots of their own size, 2 MiB of them, at least 4. */
#define SMALL_ENTRIES 256
#define SMALL_ENTRY_SIZE 1024
uint32_t big_entries(size_t size);

/* One comparison: smq's figure against a baseline's. */
struct row {
	char what[48];
	const char *unit;       /* "ns", "msgs/s", "MB/s" */
	double smq, base;
	const char *base_name;
	bool lower_better;      /* latencies */
	double target;          /* the ratio smq/base to reach; NAN: none,
				   the row is for information */
	const char *absent;     /* why the baseline was not measured (base
				   is then NAN); NULL: it was */
	const struct row_runs *runs;  /* a row of pairs; NULL: of
					 smq / base */
	/* a row of N runs of each side: the larger of the two sides' spreads
	 * between their runs, (max - min) / median (row_set_spread); NAN:
	 * each side measured once (a row of pairs has its runs') */
	double spread;
};
/* A row of pairs (compare_ways.c): the runs behind it, each smq's figure,
 * its yardstick's measured right after, and the machine's state around
 * the two; the ratio is the median of the runs' ratios, judged against the
 * target from PAIRS_JUDGED runs. */
struct row_runs {
	int n;
	const double *smq, *base, *state_ns;
	const char *state;      /* "fast" or "slow" */
};
/* The ratio a row shows: smq / base, or the median of its runs' ratios. */
double row_ratio(const struct row *r);
/* The spread between runs of one build a row shows: of its pairs' runs,
 * or as row_set_spread() set it from the n runs of each side, smq's and
 * the baseline's; NAN for a row of single measurements. */
double row_spread(const struct row *r);
void row_set_spread(struct row *r, const double *smq, const double *base,
		    int n);
#define PAIRS_JUDGED 3

/* compare_ways.c: the ways of sending beside their yardsticks, in runs:
 * a 64 B stream through 16 entries, single calls and bursts of
 * WAYS_BURST, with a bare ring of 16 slots; single calls through 256
 * entries with a ring of 256; copies and loans doing the same work at
 * 64 B, 64 KiB and 1 MiB.  Each group of them (the 16-entry streams; the
 * 256-entry one; each size) is bracketed by a cache-line ping-pong,
 * the machine's state: a run of a group counts only when the two agree
 * within STATE_GAP, and then in the state they show, fast (within
 * STATE_GAP of the tenth percentile of the bench's ping-pongs) or slow.
 * RUNS runs, and more, up to WAYS_MAX_RUNS, until every group has RUNS
 * runs in one state: a shared machine changes state within a bench. */
#define NWAYS 3
#define WAYS_BURST 8
#define WAYS_GROUPS (2 + NWAYS)
#define WAYS_MAX_RUNS (2 * RUNS)
#define STATE_GAP 1.5
/* a comparison in each state: the 16-entry ones, the 256-entry one, one
 * of each size */
#define WAYS_ROWS (2 * (3 + NWAYS))
struct ways {
	int a, b;                       /* the two CPUs */
	uint64_t count[NWAYS];          /* messages of each size */
	uint64_t pp_count;              /* round trips of a state probe */
	struct result single[WAYS_MAX_RUNS], burst[WAYS_MAX_RUNS],
		ring[WAYS_MAX_RUNS];
	struct result single256[WAYS_MAX_RUNS], ring256[WAYS_MAX_RUNS];
	struct result copy[WAYS_MAX_RUNS][NWAYS], zc[WAYS_MAX_RUNS][NWAYS];
	/* the state before each group and after the last */
	struct result cl[WAYS_MAX_RUNS][WAYS_GROUPS + 1];
	int runs;                       /* runs made */
	/* the runs behind the rows (ways_rows): smq, yardstick, state */
	double pick[WAYS_ROWS][3][WAYS_MAX_RUNS];
	struct row_runs picked[WAYS_ROWS];
};
/* Measures them: the exit status. */
int measure_ways(struct ctx *ctx, struct session_opts *so, struct ways *w);
/* Their comparisons, into rows: how many (at most WAYS_ROWS). */
int ways_rows(struct ways *w, struct row *rows);
/* Their first run's measurements, into m: how many (at most
 * WAYS_MEASUREMENTS). */
#define WAYS_MEASUREMENTS (6 + 2 * NWAYS)
int ways_measurements(const struct ways *w, const struct result **m);
/* The machine's states beside them: the median cache-line ping-pong half
 * round trip, ns, of the probes in the fast state and in the slow one
 * (NAN: none), and how many probes each. */
void ways_states(const struct ways *w, double ns[2], int n[2]);
/* A line for the text output: the machine's states. */
void ways_text(const struct ways *w);

/* lane_lock.c: the lane lock under preemption: messages/s of 64 bytes
 * through one queue from senders (1 or 2) processes of one board to a
 * receiver, beside two CPU hogs, all on CPUs a and b (or where this
 * process may run, when either is -1) and pinned to neither, over ms
 * milliseconds, or until count messages arrived if count is not 0 and
 * they arrive sooner.  0, or the exit status (said). */
#define LANE_MS 500
int lane_lock_run(int senders, int cpu_a, int cpu_b, int ms, uint64_t count,
		  struct result *r);

/* The comparisons as JSON (with the measurements m behind them and the
 * machine's state; command: the program's, "bench" for smqctl's), CSV or a
 * text table.  a and b: the two CPUs, -1 when not pinned. */
void rows_json(const char *command, int a, int b, bool interrupted,
	       const double state_ns[2],
	       const struct result *const *m, int nm,
	       const struct row *r, int n);
void rows_csv(const struct row *r, int n);
void rows_text(const struct row *r, int n);

#endif
