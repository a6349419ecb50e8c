/* What time it is here, and how long is left until a deadline.  Time is
 * local: only this host's monotonic clock measures how long anything
 * took; clocks of different hosts are never compared.  Every deadline of
 * the library is an absolute CLOCK_MONOTONIC timespec, as futexes take
 * them, and is counted down here only. */
#include <errno.h>
#include <stdint.h>
#include "clock.h"

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

int64_t smq_now_ms(void)
{
	return (int64_t)(smq_now_ns() / 1000000ull);
}

int smq_ms_left(const struct timespec *deadline)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t ms = (int64_t)(deadline->tv_sec - now.tv_sec) * 1000 +
		     (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? (ms < INT32_MAX ? (int)ms : INT32_MAX) : 0;
}

int smq_poll_ms(const struct timespec *deadline)
{
	return deadline ? smq_ms_left(deadline) : -1;
}

struct timespec *smq_time_left(const struct timespec *deadline,
			       struct timespec *left)
{
	if (!deadline)
		return NULL;
	uint64_t d = smq_ts_ns(deadline), now = smq_now_ns();
	uint64_t l = d > now ? d - now : 0;     /* past: one look, no sleep */
	left->tv_sec = (time_t)(l / 1000000000ull);
	left->tv_nsec = (long)(l % 1000000000ull);
	return left;
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
	return smq_now_ns() >= smq_ts_ns(deadline);
}

int smq_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	return nanosleep(&ts, NULL) < 0 && errno == EINTR ? -EINTR : 0;
}
