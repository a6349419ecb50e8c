/* What pingpong, bench and the baselines share. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "measure.h"

volatile sig_atomic_t measure_interrupted;

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

int cpu_pick(int which)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -1;
	for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &set) && seen++ == which)
			return cpu;
	return -1;
}

int cpu_pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) < 0 ? -errno : 0;
}

double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void *shared_page(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void on_interrupt(int sig)
{
	(void)sig;
	measure_interrupted = 1;
}

void measure_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}

static uint64_t last_progress;

void progress(const char *label, uint64_t done, uint64_t total)
{
	uint64_t t = now_ns();

	if (!isatty(2) || t - last_progress < 200000000ull)
		return;
	last_progress = t;
	fprintf(stderr, "\r\033[K%s: %llu/%llu", label, (unsigned long long)done,
		(unsigned long long)total);
}

void progress_end(void)
{
	if (isatty(2) && last_progress)
		fputs("\r\033[K", stderr);
	last_progress = 0;
}
