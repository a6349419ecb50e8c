/* Who a process or thread is, across reboots and pid reuse, and this
 * host's clocks (identity.c): beneath the window handle, which names its
 * holders by these tags. */
#ifndef SMQ_IDENTITY_H
#define SMQ_IDENTITY_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

uint64_t smq_tag_self(void);            /* this process */
uint64_t smq_tag_thread(void);          /* this thread */
static inline uint32_t smq_tag_pid(uint64_t tag) { return (uint32_t)(tag >> 32); }
/* 1: that process (or thread) of this host runs; 0: it does not (it
 * exited, its pid was reused, or it ran before this host's last boot). */
int smq_tag_alive(uint64_t tag);
/* 1: that process of this host is stopped (a signal, a debugger); 0: it
 * runs; -1: it cannot be told (not of this host, gone, hidden). */
int smq_tag_stopped(uint64_t tag);
uint64_t smq_now_ns(void);
uint64_t smq_realtime_ns(void);
void smq_deadline(struct timespec *ts, int timeout_ms);
bool smq_past(const struct timespec *deadline);
/* Whole milliseconds left until deadline, 0 once it has passed. */
int smq_ms_left(const struct timespec *deadline);
/* Sleeps ms: 0, or -EINTR when a signal handler ran meanwhile (the rest
 * is not slept: a wait that naps ends with it). */
int smq_sleep_ms(int ms);

#endif
