/* The output of a measurement: text table, JSON or CSV (see session.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "compare.h"
#include "session.h"

const char *cpu_name(int cpu, char buf[16])
{
	if (cpu < 0)
		return "-";
	snprintf(buf, 16, "%d", cpu);
	return buf;
}

const char *mode_name(int mode)
{
	return mode == SMQ_POLL ? "poll" : mode == SMQ_SLEEP ? "sleep" : "spin";
}


static void json_cpu(struct json *j, const char *key, int cpu)
{
	if (cpu < 0)
		json_null(j, key);
	else
		json_i64(j, key, cpu);
}

/* A number for CSV, empty when not known. */
static void csv_double(double v, int decimals)
{
	if (isfinite(v))
		printf(",%.*f", decimals, v);
	else
		fputs(",", stdout);
}

/* The columns of a row, in order: JSON keys and CSV header alike. */
static const char *const row_keys[] = {
	"name", "size", "messages", "seconds", "msgs_per_s", "mb_per_s",
};
static const char *const latency_keys[] = {
	"min_ns", "mean_ns", "median_ns", "p95_ns", "p99_ns", "p999_ns",
	"max_ns",
};
static const char *const tail_keys[] = {
	"cpu_a_percent", "cpu_b_percent", "predicted_msgs_per_s",
};
#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

void result_csv_header(bool latency)
{
	for (size_t i = 0; i < NKEYS(row_keys); i++)
		printf("%s%s", i ? "," : "", row_keys[i]);
	for (size_t i = 0; latency && i < NKEYS(latency_keys); i++)
		printf(",%s", latency_keys[i]);
	for (size_t i = 0; i < NKEYS(tail_keys); i++)
		printf(",%s", tail_keys[i]);
	putchar('\n');
}

void result_row(struct json *j, const struct result *r, bool latency)
{
	const struct lat_stats *l = &r->half_rtt;
	double lat[] = { l->min, l->mean, l->median, l->p95, l->p99, l->p999,
			 l->max };
	double tail[] = { cpu_percent(r->cpu_a, r->wall_a),
			  cpu_percent(r->cpu_b, r->wall_b),
			  r->predicted > 0 ? r->predicted : NAN };
	int tail_dec[] = { 1, 1, 1 };

	if (!j) {
		/* names are ours ("smq poll", "pipe"): no commas or quotes */
		printf("%s,%zu,%" PRIu64 ",%.9f,%.1f,%.3f", r->name, r->size,
		       r->messages, r->seconds, r->msgs_per_s, r->mb_per_s);
		for (size_t i = 0; latency && i < NKEYS(lat); i++)
			csv_double(r->has_latency ? lat[i] : NAN, i == 1 ? 1 : 0);
		for (size_t i = 0; i < NKEYS(tail); i++)
			csv_double(tail[i], tail_dec[i]);
		putchar('\n');
		return;
	}
	json_begin(j, NULL, '{');
	json_str(j, row_keys[0], r->name);
	json_u64(j, row_keys[1], r->size);
	json_u64(j, row_keys[2], r->messages);
	json_double(j, row_keys[3], r->seconds, 9);
	json_double(j, row_keys[4], r->msgs_per_s, 1);
	json_double(j, row_keys[5], r->mb_per_s, 3);
	for (size_t i = 0; latency && i < NKEYS(lat); i++)
		json_double(j, latency_keys[i], r->has_latency ? lat[i] : NAN,
			    i == 1 ? 1 : 0);
	for (size_t i = 0; i < NKEYS(tail); i++)
		json_double(j, tail_keys[i], tail[i], tail_dec[i]);
	if (r->has_histogram) {
		int lo = HIST_BUCKETS, hi = -1;
		for (int k = 0; k < HIST_BUCKETS; k++)
			if (r->histogram[k]) {
				lo = k < lo ? k : lo;
				hi = k;
			}
		json_begin(j, "histogram", '[');
		for (int k = lo; k <= hi; k++) {
			json_begin(j, NULL, '{');
			json_u64(j, "low_ns", hist_low_ns(k));
			json_u64(j, "high_ns", hist_high_ns(k));
			json_u64(j, "count", r->histogram[k]);
			json_end(j, '}');
		}
		json_end(j, ']');
	}
	json_end(j, '}');
}

static void results_json(const struct session_opts *o,
			 const struct run_info *ri, const struct result *r,
			 int n, bool latency)
{
	const struct session *s = ri->s;
	struct json j;

	json_open(&j, stdout);
	json_begin(&j, NULL, '{');
	json_str(&j, "command", ri->command);
	json_str(&j, "window", s->wi.name);
	json_str(&j, "transport", s->wi.transport);
	json_str(&j, "notification", s->notify);
	json_u64(&j, "entries", s->wi.geometry.entries);
	json_u64(&j, "entry_size", s->wi.geometry.entry_size);
	json_str(&j, "mode", mode_name(s->mode));
	json_bool(&j, "zero_copy", ri->how->zero_copy);
	json_u64(&j, "burst", ri->how->burst > 1 ? ri->how->burst : 1);
	json_bool(&j, "verify", ri->how->verify);
	json_u64(&j, "board", s->self);
	json_u64(&j, "peer_board", s->peer);
	json_u64(&j, "send_queue", s->q_peer);
	json_u64(&j, "receive_queue", s->q_self);
	json_cpu(&j, "cpu_a", ri->cpu[0]);
	json_cpu(&j, "cpu_b", ri->cpu[1]);
	json_bool(&j, "peer_mode", o->peer_mode);
	json_bool(&j, "interrupted", ri->interrupted);
	json_str(&j, "prediction", ri->prediction);
	json_begin(&j, "results", '[');
	for (int i = 0; i < n; i++)
		result_row(&j, &r[i], latency);
	json_end(&j, ']');
	json_end(&j, '}');
	json_close(&j);
}

void results_print(struct ctx *ctx, const struct session_opts *o,
		   const struct run_info *ri, const struct result *r, int n,
		   bool latency)
{
	const struct session *s = ri->s;
	char c0[16], c1[16], how[48];

	if (ctx->json) {
		results_json(o, ri, r, n, latency);
		return;
	}
	if (o->csv) {
		result_csv_header(latency);
		for (int i = 0; i < n; i++)
			result_row(NULL, &r[i], latency);
		return;
	}
	if (latency)
		printf("pingpong on %s: board %u (cpu %s) <-> board %u (cpu %s), "
		       "queues %u and %u, mode %s%s%s\n", s->wi.name, s->self,
		       cpu_name(ri->cpu[0], c0), s->peer, cpu_name(ri->cpu[1], c1),
		       s->q_self, s->q_peer, mode_name(s->mode),
		       how_words(ri->how, how, sizeof(how)),
		       ri->interrupted ? " (interrupted)" : "");
	else
		printf("%s on %s: board %u (cpu %s) -> board %u (cpu %s), queue "
		       "%u, mode %s%s%s\n", ri->command, s->wi.name, s->self,
		       cpu_name(ri->cpu[0], c0), s->peer, cpu_name(ri->cpu[1], c1),
		       s->q_peer, mode_name(s->mode),
		       how_words(ri->how, how, sizeof(how)),
		       ri->interrupted ? " (interrupted)" : "");
	printf("notification: %s; prediction: %s\n", s->notify,
	       ri->prediction);
	if (latency)
		printf("%8s %12s %12s  %7s %7s %7s %7s %7s %7s %8s  %5s %5s\n",
		       "SIZE", "ROUND TRIPS", "MSGS/S/DIR", "MIN", "MEAN",
		       "MEDIAN", "P95", "P99", "P99.9", "MAX", "CPU-A", "CPU-B");
	else
		printf("%8s %12s %12s %12s  %5s %5s\n", "SIZE", "MESSAGES",
		       "MSGS/S", "MB/S", "CPU-A", "CPU-B");
	bool pred = false;
	for (int i = 0; i < n; i++) {
		char a[16] = "-", b[16] = "-";
		double pa = cpu_percent(r[i].cpu_a, r[i].wall_a);
		double pb = cpu_percent(r[i].cpu_b, r[i].wall_b);
		pred |= r[i].predicted > 0;
		if (isfinite(pa))
			snprintf(a, sizeof(a), "%.0f%%", pa);
		if (isfinite(pb))
			snprintf(b, sizeof(b), "%.0f%%", pb);
		if (latency) {
			const struct lat_stats *l = &r[i].half_rtt;
			printf("%8zu %12" PRIu64 " %12.0f  %7.2f %7.2f %7.2f %7.2f "
			       "%7.2f %7.2f %8.2f  %5s %5s\n", r[i].size,
			       r[i].messages, r[i].msgs_per_s, l->min / 1e3,
			       l->mean / 1e3, l->median / 1e3, l->p95 / 1e3,
			       l->p99 / 1e3, l->p999 / 1e3, l->max / 1e3, a, b);
		} else {
			printf("%8zu %12" PRIu64 " %12.0f %12.1f  %5s %5s\n",
			       r[i].size, r[i].messages, r[i].msgs_per_s,
			       r[i].mb_per_s, a, b);
		}
	}
	if (pred) {
		printf("%8s %12s %14s\n", "SIZE", "MSGS/S", "PCIE BOUND");
		for (int i = 0; i < n; i++)
			printf("%8zu %12.0f %14.0f\n", r[i].size, r[i].msgs_per_s,
			       r[i].predicted);
	}
	if (latency)
		printf("latency: half round trip in microseconds; CPU: share of "
		       "one core used by each side\n");
}

int rounds_report(struct session *s, const struct session_opts *o,
		  struct run_info *ri, struct result *r, int n, bool latency,
		  int rc)
{
	ri->interrupted = measure_interrupted;
	session_predict(s, r, n, ri->prediction, sizeof(ri->prediction));
	if (n)
		results_print(s->ctx, o, ri, r, n, latency);
	return rc ? rc : measure_interrupted ? 1 : 0;
}

void histogram_print(const uint64_t counts[HIST_BUCKETS])
{
	uint64_t most = 0, n = 0;
	int lo = HIST_BUCKETS, hi = -1;

	for (int k = 0; k < HIST_BUCKETS; k++) {
		if (!counts[k])
			continue;
		lo = k < lo ? k : lo;
		hi = k;
		n += counts[k];
		most = counts[k] > most ? counts[k] : most;
	}
	if (!n)
		return;
	printf("half round trip histogram (%" PRIu64 " samples):\n", n);
	for (int k = lo; k <= hi; k++) {
		int bar = (int)((counts[k] * 50 + most - 1) / most);
		printf("  %9.3f - %9.3f us %10" PRIu64 " %.*s\n",
		       (double)hist_low_ns(k) / 1e3, (double)hist_high_ns(k) / 1e3,
		       counts[k], counts[k] ? bar : 0,
		       "##################################################");
	}
}

/* ---- bench --baseline ---- */

double row_ratio(const struct row *r)
{
	const struct row_runs *rr = r->runs;

	if (!rr)
		return r->base > 0 ? r->smq / r->base : NAN;
	if (!rr->n)
		return NAN;
	double v[WAYS_MAX_RUNS];
	for (int i = 0; i < rr->n; i++)
		v[i] = rr->smq[i] / rr->base[i];
	return median_double(v, rr->n);
}

/* (max - min) / median of n figures; NAN for fewer than two */
static double spread_of(const double *x, int n)
{
	double v[WAYS_MAX_RUNS];

	if (n < 2 || n > WAYS_MAX_RUNS)
		return NAN;
	memcpy(v, x, (size_t)n * sizeof(*v));
	double m = median_double(v, n);  /* sorted */
	return m > 0 ? (v[n - 1] - v[0]) / m : NAN;
}

/* the larger of two spreads, NAN where neither is known */
static double wider(double a, double b)
{
	return isnan(a) ? b : isnan(b) ? a : a > b ? a : b;
}

void row_set_spread(struct row *r, const double *smq, const double *base,
		    int n)
{
	r->spread = wider(spread_of(smq, n), spread_of(base, n));
}

double row_spread(const struct row *r)
{
	const struct row_runs *rr = r->runs;

	if (rr)
		return wider(spread_of(rr->smq, rr->n),
			     spread_of(rr->base, rr->n));
	return r->spread;
}

/* 1 holds, 0 does not, -1 no target (or no baseline, or a row of pairs
 * with too few runs to judge) */
static int row_holds(const struct row *r)
{
	double ratio = row_ratio(r);

	if (isnan(r->target) || isnan(ratio) ||
	    (r->runs && r->runs->n < PAIRS_JUDGED))
		return -1;
	return r->lower_better ? ratio <= r->target : ratio >= r->target;
}

static const char *const compare_keys[] = {
	"measure", "unit", "smq", "baseline", "baseline_value", "ratio",
	"better", "target", "holds", "absent", "spread",
};

void rows_json(const char *command, int a, int b, bool interrupted,
	       const double state_ns[2], const struct result *const *m, int nm,
	       const struct row *r, int n)
{
	struct json j;

	json_open(&j, stdout);
	json_begin(&j, NULL, '{');
	json_str(&j, "command", command);
	json_bool(&j, "baseline", true);
	if (a >= 0)
		json_i64(&j, "cpu_a", a);
	else
		json_double(&j, "cpu_a", NAN, 0);
	if (b >= 0)
		json_i64(&j, "cpu_b", b);
	else
		json_double(&j, "cpu_b", NAN, 0);
	json_bool(&j, "interrupted", interrupted);
	json_double(&j, "state_ns", state_ns[0], 0);
	json_double(&j, "slow_state_ns", state_ns[1], 0);
	json_begin(&j, "measurements", '[');
	for (int i = 0; i < nm; i++)
		result_row(&j, m[i], m[i]->has_latency);
	json_end(&j, ']');
	json_begin(&j, "comparisons", '[');
	for (int i = 0; i < n; i++) {
		int holds = row_holds(&r[i]);
		json_begin(&j, NULL, '{');
		json_str(&j, compare_keys[0], r[i].what);
		json_str(&j, compare_keys[1], r[i].unit);
		json_double(&j, compare_keys[2], r[i].smq, 3);
		json_str(&j, compare_keys[3], r[i].base_name);
		json_double(&j, compare_keys[4], r[i].base, 3);
		json_double(&j, compare_keys[5], row_ratio(&r[i]), 6);
		json_str(&j, compare_keys[6],
			 r[i].lower_better ? "lower" : "higher");
		json_double(&j, compare_keys[7], r[i].target, 2);
		if (holds < 0)
			json_double(&j, compare_keys[8], NAN, 0);
		else
			json_bool(&j, compare_keys[8], holds);
		if (r[i].absent)
			json_str(&j, compare_keys[9], r[i].absent);
		else
			json_null(&j, compare_keys[9]);
		json_double(&j, compare_keys[10], row_spread(&r[i]), 4);
		const struct row_runs *rr = r[i].runs;
		if (rr) {
			json_str(&j, "state", rr->state);
			json_begin(&j, "runs", '[');
			for (int k = 0; k < rr->n; k++) {
				json_begin(&j, NULL, '{');
				json_double(&j, "smq", rr->smq[k], 3);
				json_double(&j, "baseline", rr->base[k], 3);
				json_double(&j, "state_ns", rr->state_ns[k], 0);
				json_end(&j, '}');
			}
			json_end(&j, ']');
		}
		json_end(&j, '}');
	}
	json_end(&j, ']');
	json_end(&j, '}');
	json_close(&j);
}

/* A CSV field: quoted when it holds a comma or a quote ("memcpy, one
 * core"). */
static void csv_str(const char *sep, const char *s)
{
	fputs(sep, stdout);
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

void rows_csv(const struct row *r, int n)
{
	for (size_t k = 0; k < NKEYS(compare_keys); k++)
		printf("%s%s", k ? "," : "", compare_keys[k]);
	putchar('\n');
	for (int i = 0; i < n; i++) {
		int holds = row_holds(&r[i]);
		csv_str("", r[i].what);
		csv_str(",", r[i].unit);
		csv_double(r[i].smq, 3);
		csv_str(",", r[i].base_name);
		csv_double(r[i].base, 3);
		csv_double(row_ratio(&r[i]), 6);
		printf(",%s", r[i].lower_better ? "lower" : "higher");
		csv_double(r[i].target, 2);
		printf(",%s", holds < 0 ? "" : holds ? "true" : "false");
		csv_str(",", r[i].absent ? r[i].absent : "");
		csv_double(row_spread(&r[i]), 4);
		putchar('\n');
	}
}

/* A row's ratio to two decimals, rounded toward missing the target, so
 * that a ratio of 0.7996 shows 0.79x beside its MISSED, not 0.80x. */
static double shown_ratio(const struct row *r)
{
	double ratio = row_ratio(r);

	return r->lower_better ? ceil(ratio * 100) / 100
			       : floor(ratio * 100) / 100;
}

/* The last lines: how many targets held, and each one missed again, so
 * that a missed target is read where the output ends, not found in a
 * column of the table. */
static void targets_text(const struct row *r, int n)
{
	int judged = 0, missed = 0;

	for (int i = 0; i < n; i++) {
		int holds = row_holds(&r[i]);
		judged += holds >= 0;
		missed += holds == 0;
	}
	if (!judged) {
		printf("targets: none judged\n");
		return;
	}
	if (!missed) {
		printf("targets: all %d held\n", judged);
		return;
	}
	printf("targets: %d of %d MISSED\n", missed, judged);
	for (int i = 0; i < n; i++)
		if (row_holds(&r[i]) == 0)
			printf("MISSED %s against %s: %.2fx, target %s%.2gx\n",
			       r[i].what, r[i].base_name, shown_ratio(&r[i]),
			       r[i].lower_better ? "<=" : ">=", r[i].target);
}

void rows_text(const struct row *r, int n)
{
	printf("\n%-36s %12s  %-24s %12s %8s %7s %8s %6s\n", "MEASURE", "SMQ",
	       "BASELINE", "VALUE", "RATIO", "SPREAD", "TARGET", "HOLDS");
	for (int i = 0; i < n; i++) {
		int holds = row_holds(&r[i]);
		char target[16] = "-", spread[16] = "-";
		double sp = row_spread(&r[i]);
		if (!isnan(sp))
			snprintf(spread, sizeof(spread), "%.0f%%", 100 * sp);
		if (!isnan(r[i].target))
			snprintf(target, sizeof(target), "%s%.2gx",
				 r[i].lower_better ? "<=" : ">=", r[i].target);
		double ratio = shown_ratio(&r[i]);
		if (r[i].absent) {
			printf("%-36s %12.2f  %-24s %12s %8s %7s %8s %6s\n",
			       r[i].what, r[i].smq, r[i].base_name, "absent",
			       "-", "-", target, "-");
			continue;
		}
		printf("%-36s %12.2f  %-24s %12.2f %7.2fx %7s %8s %6s\n",
		       r[i].what, r[i].smq, r[i].base_name, r[i].base, ratio,
		       spread, target,
		       holds < 0 ? "-" : holds ? "yes" : "MISSED");
	}
	printf("latencies are median half round trips in ns; rates in "
	       "messages/s per direction or MB/s; ns/msg is the time a "
	       "stream takes per message; a row of N runs compares the "
	       "medians of N measurements of each side, taken in turn, but a "
	       "row named for a machine state (fast, slow) shows the median "
	       "of its runs' ratios, each run's smq figure to its yardstick "
	       "measured right after, and is judged from %d runs; rows "
	       "without a target are for information; an absent baseline "
	       "says why above the table; SPREAD, in a row of runs, is the "
	       "larger of its two sides' (max - min) / median between runs\n",
	       PAIRS_JUDGED);
	targets_text(r, n);
}
