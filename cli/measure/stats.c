/* Latency statistics and histograms (see measure.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "measure.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The p-quantile by the nearest-rank method: the smallest sample with at
 * least p of the samples at or below it. */
static double rank(const uint64_t *s, uint64_t n, double p)
{
	uint64_t k = (uint64_t)((double)n * p + 0.999999999);
	return (double)s[k ? k - 1 : 0];
}

void lat_compute(uint64_t *s, uint64_t n, struct lat_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->n = n;
	if (!n)
		return;
	qsort(s, n, sizeof(*s), cmp_u64);
	double sum = 0;
	for (uint64_t i = 0; i < n; i++)
		sum += (double)s[i];
	st->min = (double)s[0];
	st->max = (double)s[n - 1];
	st->mean = sum / (double)n;
	st->median = rank(s, n, 0.5);
	st->p95 = rank(s, n, 0.95);
	st->p99 = rank(s, n, 0.99);
	st->p999 = rank(s, n, 0.999);
}

void lat_histogram(const uint64_t *s, uint64_t n, uint64_t counts[HIST_BUCKETS])
{
	memset(counts, 0, HIST_BUCKETS * sizeof(*counts));
	for (uint64_t i = 0; i < n; i++)
		counts[s[i] ? 63 - __builtin_clzll(s[i]) : 0]++;
}

double cpu_percent(double cpu, double wall)
{
	if (cpu < 0 || !(wall > 0))
		return NAN;
	return cpu >= wall ? 100.0 : 100.0 * cpu / wall;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

double median_double(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
