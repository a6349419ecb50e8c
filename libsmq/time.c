#include <signal.h>
#include <string.h>
#include "internal.h"

uint64_t smq_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t smq_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* An absolute CLOCK_MONOTONIC deadline timeout_ms from now. */
void smq_deadline(struct timespec *ts, int timeout_ms)
{
	uint64_t t = smq_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	ts->tv_sec = (time_t)(t / 1000000000ull);
	ts->tv_nsec = (long)(t % 1000000000ull);
}

bool smq_past(const struct timespec *deadline)
{
	uint64_t d = (uint64_t)deadline->tv_sec * 1000000000ull +
		     (uint64_t)deadline->tv_nsec;
	return smq_now_ns() >= d;
}

/* kill(0) also answers for a thread id; EPERM means it exists.  A zombie
 * (exited, not yet reaped) holds nothing any more: it counts as dead. */
bool smq_pid_alive(uint32_t id)
{
	char path[64], buf[512];

	/* 0 and what does not fit a pid_t would make kill() signal groups */
	if (id == 0 || id > 0x3fffffff)
		return false;
	if (kill((pid_t)id, 0) < 0 && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%u/stat", id);
	FILE *f = fopen(path, "re");
	if (!f)
		return true;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *paren = strrchr(buf, ')');
	return !(paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X'));
}
