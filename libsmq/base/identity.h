/* Who a process or thread is, across reboots and pid reuse (identity.c):
 * beneath the window handle, which names its holders by these tags, and
 * the futex doorbell, which names its waiters' host. */
#ifndef SMQ_IDENTITY_H
#define SMQ_IDENTITY_H

#include <stdint.h>

uint64_t smq_tag_self(void);            /* this process */
uint64_t smq_tag_thread(void);          /* this thread */
static inline uint32_t smq_tag_pid(uint64_t tag) { return (uint32_t)(tag >> 32); }
/* 1: that process (or thread) of this host runs; 0: it does not (it
 * exited, its pid was reused, or it ran before this host's last boot). */
int smq_tag_alive(uint64_t tag);
/* 1: that process of this host is stopped (a signal, a debugger); 0: it
 * runs; -1: it cannot be told (not of this host, gone, hidden). */
int smq_tag_stopped(uint64_t tag);
/* A 64-bit hash of this kernel's boot id (changes at every boot; equal
 * for every process of one host). */
uint64_t smq_boot_hash(void);

#endif
