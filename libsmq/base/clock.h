/* This host's clocks and the library's deadlines (clock.c): absolute
 * CLOCK_MONOTONIC timespecs, as futexes take them. */
#ifndef SMQ_CLOCK_H
#define SMQ_CLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

uint64_t smq_now_ns(void);              /* CLOCK_MONOTONIC */
int64_t smq_now_ms(void);             /* CLOCK_MONOTONIC, in ms */
uint64_t smq_realtime_ns(void);         /* CLOCK_REALTIME */
static inline uint64_t smq_ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}
/* The deadline timeout_ms from now. */
void smq_deadline(struct timespec *ts, int timeout_ms);
bool smq_past(const struct timespec *deadline);
/* Whole milliseconds left until deadline, 0 once it has passed. */
int smq_ms_left(const struct timespec *deadline);
/* ...as poll() takes them: -1 for no deadline (NULL). */
int smq_poll_ms(const struct timespec *deadline);
/* The time left until deadline in *left, 0 once it has passed, as
 * ppoll() takes it: left, or NULL for no deadline (NULL). */
struct timespec *smq_time_left(const struct timespec *deadline,
			       struct timespec *left);
/* Sleeps ms: 0, or -EINTR when a signal handler ran meanwhile (the rest
 * is not slept: a wait that naps ends with it). */
int smq_sleep_ms(int ms);

#endif
