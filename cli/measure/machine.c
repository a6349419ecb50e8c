/* The machine a measurement runs on: CPUs, clocks, CPU time, shared
 * memory, SIGINT and progress (see measure.h). */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "measure.h"

volatile sig_atomic_t measure_interrupted;
volatile sig_atomic_t measure_orphaned;

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

int cpu_allowed_count(void)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) < 0 ? -1 : CPU_COUNT(&set);
}

bool cpu_allowed(int cpu)
{
	cpu_set_t set;

	return cpu >= 0 && cpu < CPU_SETSIZE &&
	       !sched_getaffinity(0, sizeof(set), &set) && CPU_ISSET(cpu, &set);
}

const char *cpu_allowed_list(char *buf, size_t len)
{
	cpu_set_t set;
	size_t used = 0;

	buf[0] = 0;
	if (sched_getaffinity(0, sizeof(set), &set) < 0) {
		snprintf(buf, len, "unknown");
		return buf;
	}
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		int last = cpu;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set))
			last++;
		int n = last == cpu
			? snprintf(buf + used, len - used, "%s%d", used ? "," : "", cpu)
			: snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "",
				   cpu, last);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
		cpu = last;
	}
	return buf;
}

/* Not getrusage: it counts in microseconds, which is most of a window of a
 * few round trips. */
double cpu_seconds(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return -1;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The wall window of a CPU share is on the raw monotonic clock: NTP slews
 * CLOCK_MONOTONIC by up to 500 ppm, and CPU time is not slewed. */
static uint64_t raw_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts))
		return now_ns();
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void cpu_window_start(struct cpu_window *w)
{
	w->wall0 = raw_ns();
	w->cpu0 = cpu_seconds();
}

void cpu_window_stop(const struct cpu_window *w, double *cpu, double *wall)
{
	double c = cpu_seconds();
	uint64_t t = raw_ns();

	*cpu = c >= 0 && w->cpu0 >= 0 ? c - w->cpu0 : -1;
	*wall = (double)(t - w->wall0) / 1e9;
}

/* The processor's name as the kernel gives it (x86: "model name"; else
 * the machine's architecture), into buf. */
static void cpu_model(char *buf, size_t len)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");
	struct utsname u;

	buf[0] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		if (strncmp(line, "model name", 10) || !colon)
			continue;
		snprintf(buf, len, "%s", colon + 2);
		buf[strcspn(buf, "\n")] = 0;
		break;
	}
	if (f)
		fclose(f);
	if (!buf[0] && !uname(&u))
		snprintf(buf, len, "%s", u.machine);
}

/* The CPUs this process may use as it started: a measurement pins itself
 * to one before it prints where it ran. */
static int allowed_at_start = -1;
static void __attribute__((constructor)) note_allowed(void)
{
	allowed_at_start = cpu_allowed_count();
}

const char *machine_words(char *buf, size_t len)
{
	char model[160], date[32];
	struct utsname u;
	time_t t = time(NULL);
	struct tm tm;
	long online = sysconf(_SC_NPROCESSORS_ONLN);

	cpu_model(model, sizeof(model));
	if (uname(&u))
		memset(&u, 0, sizeof(u));
	if (!gmtime_r(&t, &tm) ||
	    !strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", &tm))
		snprintf(date, sizeof(date), "an unknown date");
	snprintf(buf, len, "%s, host %s: %s, %ld CPUs online, %d this process "
		 "may use, %s %s", date, u.nodename[0] ? u.nodename : "unknown",
		 model[0] ? model : "an unknown processor", online,
		 allowed_at_start, u.sysname, u.release);
	return buf;
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

static void on_orphaned(int sig)
{
	(void)sig;
	measure_orphaned = 1;
	measure_interrupted = 1;
}

/* No SA_RESTART: a handler that ran ends the library's wait (-EINTR). */
static void handle(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

void measure_signals(void)
{
	handle(SIGINT, on_interrupt);
}

void measure_orphan_signals(void)
{
	signal(SIGINT, SIG_IGN);  /* its parent ends the run */
	handle(SIGTERM, on_orphaned);
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
