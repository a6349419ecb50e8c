/* libsmq internals: far memory, another board's region, and the one
 * way to reach it.  A far pointer can only be written through (FAR_STORE*,
 * smq_far_copy): the message path never reads across the bus.  A read is
 * a named exception (FAR_LOAD, with its reason), counted in test builds
 * (SMQ_COUNT_FAR) in the far_loads[] of the handle that made it.  Near
 * memory, this board's own region, is read and written through plain
 * pointers (window.h's smq_near()). */
#ifndef SMQ_FAR_H
#define SMQ_FAR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "format/format.h"

struct smq_far {
	uint8_t *far_;
};
static inline struct smq_far smq_far_offset(struct smq_far p, uint64_t off)
{
	return (struct smq_far){ p.far_ + off };
}

/* Handle slot i of the control block at c, and the walk over them all:
 * s (a struct smq_far) at each in turn. */
static inline struct smq_far smq_far_slot(struct smq_far c, unsigned i)
{
	return smq_far_offset(c, offsetof(struct smq_ctl, slot) +
				 (uint64_t)i * sizeof(struct smq_handle_slot));
}
#define SMQ_EACH_FAR_SLOT(s, c) \
	for (unsigned smq_i_ = 0; smq_i_ < SMQ_SLOTS && \
	     ((s) = smq_far_slot((c), smq_i_), 1); smq_i_++)

/* Why a far read happens (each one is a named exception). */
enum smq_far_why {
	SMQ_FAR_OPEN,        /* attaching; opening a queue */
	SMQ_FAR_TAKEOVER,    /* a lane left by a dead sender */
	SMQ_FAR_ARM,         /* a receiver arming its sleep: flushes our
				posted writes and reads each sender's top */
	SMQ_FAR_ROOM,        /* a sender arming its wait for room: flushes
				and reads the receiver's bottom */
	SMQ_FAR_MAINTAIN,    /* init and clear: the handshake */
	SMQ_FAR_STARTUP,     /* announce, synchronise */
	SMQ_FAR_SNAPSHOT,    /* dump, top, validation */
	SMQ_FAR_MAP,         /* check: the window's map, the raw link */
	SMQ_FAR_WHYS
};

#define FAR_FIELD(f, type, field) \
	((__typeof__(((type *)0)->field) *)((f).far_ + offsetof(type, field)))
#define FAR_STORE(f, type, field, v) STORE(FAR_FIELD(f, type, field), (v))
#define FAR_STORE_REL(f, type, field, v) STORE_REL(FAR_FIELD(f, type, field), (v))
/* ...a plain word of type at f */
#define FAR_STORE_WORD(f, type, v) STORE_REL((type *)(f).far_, (v))
/* memcpy of n bytes between buffers that do not overlap, inline up to
 * 64 bytes: a stream's small messages, whose copy costs less than the call
 * to memcpy and its choice of a way to copy.  Two copies of 32, 16, 8 or 4
 * bytes, the first and the last, which overlap in the middle (the same
 * bytes to the same place). */
#define SMQ_MOVE(d, s, n, k) do { memcpy((d), (s), k); \
		memcpy((d) + (n) - k, (s) + (n) - k, k); } while (0)
static inline void smq_copy(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	if (n > 64)
		memcpy(d, s, n);
	else if (n >= 32)
		SMQ_MOVE(d, s, n, 32);
	else if (n >= 16)
		SMQ_MOVE(d, s, n, 16);
	else if (n >= 8)
		SMQ_MOVE(d, s, n, 8);
	else if (n >= 4)
		SMQ_MOVE(d, s, n, 4);
	else if (n) {
		uint8_t x = s[0], y = s[n / 2], z = s[n - 1];
		d[0] = x;
		d[n / 2] = y;
		d[n - 1] = z;
	}
}

static inline void smq_far_copy(struct smq_far dst, uint64_t off,
				const void *src, size_t n)
{
	SMQ_TOUCH(dst.far_ + off, n, 1);
	smq_copy(dst.far_ + off, src, n);
}
/* ...n bytes, returning crc continued over them (smq_crc32c()'s way):
 * up to SMQ_SUM_FIRST bytes summed as they are copied (src read once),
 * longer ones summed from src first, then copied by memcpy.  The copying
 * sum stores as it goes, and a store must own its line before it lands:
 * the lines of a receiver's ring, which the receiver has just read, come
 * back a few at a time (as many as the processor keeps stores waiting),
 * each a trip to the other CPU, while memcpy moves a long buffer as whole
 * lines asked for ahead.  Summed as copied, a checked stream of 64 KiB
 * messages ran at a fifth of the rate of an unchecked one on a 2-CPU AMD
 * EPYC VM whose CPUs were 260 ns apart, summed first at 0.7 of it; from
 * 2 KiB on summing first won there, and lost 5% at 2 KiB when the CPUs
 * were near (doc/message-path.md).  src is the caller's, in its cache;
 * the entry gets what was summed unless the caller changes src during
 * the call, which tears the message in any case (with checksums its
 * receiver may refuse it instead). */
#define SMQ_SUM_FIRST 1024
static inline uint32_t smq_far_sum_copy(struct smq_far dst, uint64_t off,
					const void *src, size_t n,
					uint32_t crc)
{
	SMQ_TOUCH(dst.far_ + off, n, 1);
	if (n <= SMQ_SUM_FIRST)
		return smq_crc32c_copy(crc, dst.far_ + off, src, n);
	crc = smq_crc32c(crc, src, n);
	memcpy(dst.far_ + off, src, n);
	return crc;
}
/* ...an entry's payload, returning its check: up to SMQ_SUM_FIRST bytes
 * summed as copied (src read once), longer ones as above */
static inline uint32_t smq_far_copy_entry(struct smq_far dst, uint64_t off,
					  const void *src, size_t n,
					  uint64_t signature)
{
	if (n > SMQ_SUM_FIRST)
		return smq_far_sum_copy(dst, off, src, n,
					smq_entry_check((uint32_t)n, signature,
							NULL, src, 0));
	SMQ_TOUCH(dst.far_ + off, n, 1);
	return smq_entry_check((uint32_t)n, signature, dst.far_ + off, src, n);
}
/* A hint, no access: the processor may fetch the line at f for writing,
 * taking it from the cache that holds it, before the stores that write it.
 * A store must own its line before it lands, and a send's full barrier
 * waits until its stores have landed: a sender that asks for an entry's
 * lines a few sends ahead makes their trip overlap the sends between
 * (send.c).  Ignored for memory that is not write-back (a BAR mapped
 * uncached or write-combining).  On x86, PREFETCHW: a no-op on processors
 * before it, and plain compilers emit a read prefetch for a write. */
static inline void smq_far_prefetch_write(struct smq_far f)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const uint8_t *)f.far_));
#else
	__builtin_prefetch(f.far_, 1);
#endif
}
/* How many entries on a sender asks for the lines of (above), in a ring
 * of entries: half of it, at most 16, on Intel, where 64-byte single
 * calls through 256 entries moved 1.57x as many with it (a 2-CPU Xeon
 * VM); 0 elsewhere: on a 2-CPU AMD EPYC VM (Zen 4) the same calls moved
 * 0.63x to 0.67x as many with it, through 16 entries or 256, its CPUs
 * near or far, and no other processor was measured
 * (doc/message-path.md).  Once, at a queue's open. */
static inline uint32_t smq_far_ahead(uint32_t entries)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	if (__builtin_cpu_is("intel"))
		return entries / 2 < 16 ? entries / 2 : 16;
#endif
	(void)entries;
	return 0;
}
/* The named exception: a read across the bus. */
#ifdef SMQ_COUNT_FAR
#define FAR_LOAD(w, why, f, type, field) \
	(__atomic_fetch_add(&(w)->far_loads[why], 1, __ATOMIC_RELAXED), \
	 LOAD(FAR_FIELD(f, type, field)))
#else
#define FAR_LOAD(w, why, f, type, field) \
	((void)(why), LOAD(FAR_FIELD(f, type, field)))
#endif
/* ...of a plain word of type at f */
#ifdef SMQ_COUNT_FAR
#define FAR_LOAD_WORD(w, why, f, type) \
	(__atomic_fetch_add(&(w)->far_loads[why], 1, __ATOMIC_RELAXED), \
	 LOAD((type *)(f).far_))
#else
#define FAR_LOAD_WORD(w, why, f, type) ((void)(why), LOAD((type *)(f).far_))
#endif

#endif
