/* smq-bench, the smq project's benchmark: smq beside other products that
 * move messages between two processes of one host, measured in the same
 * run on the same two CPUs, as ratios.  smqctl bench --baseline judges a
 * board against the limits of its memory and bus; this program compares
 * smq with what a user might pick instead: UCX's tag-matching bandwidth
 * test over its shared memory, POSIX message queues, Unix sockets and
 * pipes.  Built and run by make bench, never installed. */
#include <argp.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "products.h"
#include "../cli/measure/compare.h"

/* the sizes smq's copies and loans are measured at beside UCX */
enum { NZ = 3 };
static const size_t zsize[NZ] = { 64, 65536, 1048576 };

struct bench {
	struct ctx ctx;
	struct session_opts so;
	uint64_t n;                     /* --count, or 0 */
	int a, b;                       /* the two CPUs */
	/* smq's 64-byte stream and the three system streams after it */
	struct result st64, mq, ux, pp;
	/* RUNS runs of copies, loans and UCX at each size, in turn */
	struct result copy[RUNS][NZ], zc[RUNS][NZ], ucx[RUNS][NZ];
	int runs;                       /* runs made */
	const char *ucx_why;            /* why UCX's rows are absent */
};

/* ---- the options ---- */

enum { OPT_CPU = 0x300, OPT_CSV, OPT_JSON };

static const struct argp_option options[] = {
	{ "count", 'c', "N", 0,
	  "Messages of every measurement (default: each its own, about a "
	  "second's worth)", 0 },
	{ "cpu", OPT_CPU, "A,B", 0,
	  "The two CPUs: the sender on A, the receiver on B (default: the "
	  "first two this process may use)", 0 },
	{ "json", OPT_JSON, NULL, 0, "Print the comparisons as JSON", 0 },
	{ "csv", OPT_CSV, NULL, 0, "Print the comparisons as CSV", 0 },
	{ 0 }
};

static void parse_cpus(struct argp_state *st, const char *arg, int cpu[2])
{
	const char *comma = strchr(arg, ',');
	char first[16];

	if (!comma || (size_t)(comma - arg) >= sizeof(first))
		argp_error(st, "--cpu needs two CPUs A,B, not '%s'", arg);
	memcpy(first, arg, (size_t)(comma - arg));
	first[comma - arg] = 0;
	cpu[0] = (int)arg_u32(st, "--cpu", first, 0, CPU_SETSIZE - 1);
	cpu[1] = (int)arg_u32(st, "--cpu", comma + 1, 0, CPU_SETSIZE - 1);
	for (int i = 0; i < 2; i++)
		if (!cpu_allowed(cpu[i]))
			argp_error(st, "--cpu %s: CPU %d is not one this "
				   "process may use", arg, cpu[i]);
}

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct bench *bn = st->input;

	switch (key) {
	case 'c':
		bn->n = arg_u32(st, "--count", arg, 1, UINT32_MAX);
		return 0;
	case OPT_CPU:
		parse_cpus(st, arg, bn->so.cpu);
		bn->so.cpu_set = true;
		return 0;
	case OPT_JSON:
		bn->ctx.json = true;
		return 0;
	case OPT_CSV:
		bn->so.csv = true;
		return 0;
	case ARGP_KEY_ARG:
		argp_error(st, "unexpected argument '%s'", arg);
		return EINVAL;
	case ARGP_KEY_END:
		if (bn->ctx.json && bn->so.csv)
			argp_error(st, "--json and --csv exclude each other");
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

static const struct argp argp = {
	options, parse, NULL,
	"smq beside other products that move messages between two processes "
	"of this host (UCX's ucx_perftest, POSIX message queues, Unix "
	"sockets, pipes), measured in this run on the same two CPUs, as "
	"ratios.  The smq project's benchmark; smqctl bench --baseline judges "
	"a board against the limits of its memory and bus.",
	NULL, NULL, NULL
};

/* ---- measuring ---- */

/* Runs call, a measurement called name, saying so on a terminal; returns
 * from the caller with the exit status when it fails. */
#define MEASURE(call, name) do { why = NULL; \
		if (isatty(2)) \
			fprintf(stderr, "\r\033[Ksmq-bench: %s", name); \
		if ((rc = (call))) \
			return say_error("%s: %s", name, why ? why : strerror(-rc)); \
	} while (0)

/* smq's 64-byte stream (spin, then sleep, as an application's receiver
 * is), then the system's streams right after it. */
static int measure_streams(struct bench *bn)
{
	uint64_t n = bn->n ? bn->n : 1000000, sys = bn->n ? bn->n : 200000;
	struct job j = { true, 64, n, &bn->st64, { 0 } };
	struct jobs one = { &j, 1 };
	const char *why = NULL;
	int rc;

	if ((rc = scratch_run(&bn->ctx, &bn->so, 0, SMALL_ENTRIES,
			      SMALL_ENTRY_SIZE, 0, &one)))
		return rc;
	MEASURE(baseline_stream(STREAM_MQUEUE, 64, sys, bn->a, bn->b, &bn->mq,
				&why), "POSIX message queue");
	MEASURE(baseline_stream(STREAM_UNIX, 64, sys, bn->a, bn->b, &bn->ux,
				&why), "Unix socket");
	MEASURE(baseline_stream(STREAM_PIPE, 64, sys, bn->a, bn->b, &bn->pp,
				&why), "pipe");
	return 0;
}
#undef MEASURE

/* Run r of size i: smq's copies and loans doing the same work (every byte
 * made and checked), busy-polling as UCX's test does, then UCX; UCX
 * missing or failing leaves its rows absent, with why, and is not tried
 * again. */
static int measure_size(struct bench *bn, int r, int i)
{
	size_t z = zsize[i];
	bool small = z <= SMALL_ENTRY_SIZE;
	uint64_t n = bn->n ? bn->n : small ? 1000000 : stream_auto_count(z) * 2;
	struct job j[2] = {
		{ true, z, n, &bn->copy[r][i], { false, true, 0 } },
		{ true, z, n, &bn->zc[r][i], { true, true, 0 } },
	};
	struct jobs two = { j, 2 };
	const char *why = NULL;
	int rc;

	if ((rc = scratch_run(&bn->ctx, &bn->so, SMQ_POLL,
			      small ? SMALL_ENTRIES : big_entries(z),
			      small ? SMALL_ENTRY_SIZE : (uint32_t)z, 0, &two)))
		return rc;
	if (bn->ucx_why || measure_interrupted)
		return 0;
	if (isatty(2))
		fprintf(stderr, "\r\033[Ksmq-bench: UCX, %zu bytes", z);
	rc = baseline_ucx(z, n, bn->a, bn->b, &bn->ucx[r][i], &why);
	if (rc == -EINTR)
		return 1;
	if (rc)
		bn->ucx_why = why ? why : "ucx_perftest failed";
	return 0;
}

static int measure_all(struct bench *bn)
{
	int rc;

	if ((rc = measure_streams(bn)))
		return rc;
	for (int r = 0; r < RUNS && !measure_interrupted; r++) {
		for (int i = 0; i < NZ && !measure_interrupted; i++)
			if ((rc = measure_size(bn, r, i)))
				return rc;
		if (!measure_interrupted)
			bn->runs = r + 1;
	}
	return 0;
}

/* ---- the comparisons ---- */

static double rate_of(const struct result *x, size_t z)
{
	return z <= SMALL_ENTRY_SIZE ? x->msgs_per_s : x->mb_per_s;
}

/* Column i of smq's figures x (copies or loans) or UCX's, a run each,
 * into v; their median over the runs made. */
static double runs_median(const struct bench *bn,
			  const struct result (*x)[NZ], int i, double v[RUNS])
{
	double s[RUNS];

	for (int r = 0; r < bn->runs; r++)
		s[r] = v[r] = rate_of(&x[r][i], zsize[i]);
	return bn->runs ? median_double(s, bn->runs) : NAN;
}

static int bench_rows(const struct bench *bn, struct row *rows)
{
	int nr = 0;

	rows[nr++] = (struct row){ "stream 64 B", "msgs/s", bn->st64.msgs_per_s,
				   bn->mq.msgs_per_s, "POSIX mqueue", false,
				   10, NULL, NULL, NAN };
	rows[nr++] = (struct row){ "stream 64 B", "msgs/s", bn->st64.msgs_per_s,
				   bn->ux.msgs_per_s, "Unix socket", false, 5,
				   NULL, NULL, NAN };
	rows[nr++] = (struct row){ "stream 64 B", "msgs/s", bn->st64.msgs_per_s,
				   bn->pp.msgs_per_s, "pipe", false, 1, NULL,
				   NULL, NAN };
	for (int i = 0; i < NZ; i++) {
		size_t z = zsize[i];
		char zs[16];
		snprintf(zs, sizeof(zs), z >= (1u << 20) ? "%zu MiB" :
			 z >= 1024 ? "%zu KiB" : "%zu B",
			 z >= (1u << 20) ? z >> 20 : z >= 1024 ? z >> 10 : z);
		double uv[RUNS], sv[RUNS];
		double ucx = bn->ucx_why ? NAN
					 : runs_median(bn, bn->ucx, i, uv);
		for (int k = 0; k < 2; k++) {
			struct row *o = &rows[nr++];
			*o = (struct row){ "", z <= SMALL_ENTRY_SIZE ? "msgs/s"
								     : "MB/s",
				runs_median(bn, k ? bn->copy : bn->zc, i, sv),
				ucx,
				"UCX tag_bw", false, k ? NAN : 1, bn->ucx_why,
				NULL, NAN };
			if (!bn->ucx_why)
				row_set_spread(o, sv, uv, bn->runs);
			snprintf(o->what, sizeof(o->what), "%s %s, %d run%s",
				 k ? "copies" : "zero-copy", zs, bn->runs,
				 bn->runs == 1 ? "" : "s");
		}
	}
	return nr;
}

static void bench_print(const struct bench *bn)
{
	struct row rows[3 + 2 * NZ];
	int nr = bench_rows(bn, rows);
	const struct result *m[4 + 3 * NZ] = { &bn->st64, &bn->mq, &bn->ux,
					       &bn->pp };
	int nm = 4;

	for (int i = 0; i < NZ && bn->runs; i++) {
		m[nm++] = &bn->copy[0][i];
		m[nm++] = &bn->zc[0][i];
		if (!bn->ucx_why)
			m[nm++] = &bn->ucx[0][i];
	}
	if (bn->ctx.json) {
		double no_state[2] = { NAN, NAN };
		rows_json("smq-bench", bn->a, bn->b, measure_interrupted,
			  no_state, m, nm, rows, nr);
		return;
	}
	if (bn->so.csv) {
		rows_csv(rows, nr);
		return;
	}
	char c0[16], c1[16], where[512];
	printf("smq-bench %s, the smq project's benchmark, %s\n", SMQ_VERSION,
	       machine_words(where, sizeof(where)));
	printf("smq against other products measured in this run, CPUs %s and "
	       "%s\n", cpu_name(bn->a, c0), cpu_name(bn->b, c1));
	if (bn->ucx_why)
		printf("UCX rows absent: %s\n", bn->ucx_why);
	else
		printf("UCX: ucx_perftest -t tag_bw, UCX_TLS=%s, the sender on "
		       "the first CPU\n", ucx_transports());
	rows_text(rows, nr);
}

int main(int argc, char **argv)
{
	static struct bench bn;
	int rc;

	session_opts_init(&bn.so);
	bn.ctx.cmd = "smq-bench";
	argp_err_exit_status = EXIT_USAGE;  /* as smqctl's: 2 */
	argp_parse(&argp, argc, argv, 0, NULL, &bn);
	if (!bn.so.cpu_set) {
		bn.so.cpu[0] = cpu_pick(0);
		bn.so.cpu[1] = cpu_pick(1);
		bn.so.cpu_set = true;
	}
	/* smq busy-polls beside UCX: two CPUs or nothing to compare */
	if ((rc = session_cpu_check(&bn.so, true)))
		return rc;
	bn.so.cpu_checked = true;
	bn.a = bn.so.cpu[0];
	bn.b = bn.so.cpu[1];
	measure_signals();
	if ((rc = measure_all(&bn)))
		return finish(rc);
	if (isatty(2))
		fputs("\r\033[K", stderr);
	bench_print(&bn);
	return finish(measure_interrupted ? 1 : 0);
}
