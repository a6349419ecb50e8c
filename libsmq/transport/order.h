/* libsmq internals: memory ordering as each kind of mapping needs it.
 * A transport picks one table at open; the hot path calls it through the
 * window's map, never by testing what kind of memory it has. */
#ifndef SMQ_ORDER_H
#define SMQ_ORDER_H

#include <stdbool.h>

/* Memory ordering.
 * publish(): stores before it reach the other boards before stores after
 *            it (x86 write-combining: sfence; arm64: dmb oshst);
 * consume(): loads before it complete before loads after it (x86 WC:
 *            lfence; arm64: dmb oshld);
 * full():    stores before it are visible before loads after it (x86:
 *            mfence; arm64: dmb osh);
 * mark():    a call's in-flight mark before its read of the notice: full(),
 *            or, where every process that maps the window runs under this
 *            kernel, a compiler barrier that board 0's maintenance pairs
 *            with a barrier on every CPU (smq_marks_settle);
 * light:     mark() is the compiler barrier.
 * A fence orders; it does not deliver: a posted write across PCIe still
 * arrives at no promised time. */
struct smq_order {
	const char *name;
	void (*publish)(void);
	void (*consume)(void);
	void (*full)(void);
	void (*mark)(void);
	bool light;
	bool coherent;  /* C11 fences are the ones: the hot path inlines them
			   (smq_publish and friends) instead of calling */
};

/* The hot path's fences: inline where the memory is coherent, through
 * the table where it is a device's.  A full barrier on x86-64 is a locked
 * instruction on the stack, which orders every access to coherent memory
 * as mfence does and costs less (mfence also waits for write-combining
 * and non-temporal stores, which coherent mappings do not make). */
static inline void smq_full_fence(void)
{
#if defined(__x86_64__)
	__asm__ __volatile__("lock orq $0, (%%rsp)" ::: "memory", "cc");
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}
static inline void smq_publish(const struct smq_order *o)
{
	if (o->coherent)
		__atomic_thread_fence(__ATOMIC_RELEASE);
	else
		o->publish();
}
static inline void smq_consume(const struct smq_order *o)
{
	if (o->coherent)
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	else
		o->consume();
}
static inline void smq_full(const struct smq_order *o)
{
	if (o->coherent)
		smq_full_fence();
	else
		o->full();
}
/* A Dekker pair of the message path: each side stores its word, then
 * loads the other's (a receiver arming its sleep against a send, a sender
 * arming its wait for room against a take).  Both sides pay a full
 * barrier, but where the other side of a send's pairs pays with
 * MEMBARRIER_CMD_GLOBAL (feature membarrier: send.c, smq_rx_polls).  membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) sent by the side
 * about to wait cannot stand in for the other side's: Linux leaves out a
 * CPU where a thread of a registered process exited, until that CPU runs
 * another process (exit_mm() clears the CPU's membarrier state, and the
 * switch back to the same process from the lazy mm does not set it). */
static inline void smq_dekker(const struct smq_order *o)
{
	smq_full(o);
}
static inline void smq_mark(const struct smq_order *o)
{
	if (!o->coherent)
		o->mark();
	else if (o->light)
		__asm__ __volatile__("" ::: "memory");
	else
		smq_full_fence();
}
/* Plain C11 fences: memory that every board reaches coherently (a file,
 * which may also back a virtual machine's memory; an ivshmem peer). */
extern const struct smq_order smq_order_c11;
/* ...and marks set with a compiler barrier: memory only processes of this
 * kernel can map (shm:, split:), where membarrier(2) reaches them all. */
extern const struct smq_order smq_order_local;
/* Device memory: a BAR mapped uncached or write-combining. */
extern const struct smq_order smq_order_device;
/* The order for a transport of this kernel's memory: smq_order_local when
 * this kernel can send a barrier to every CPU, else smq_order_c11. */
const struct smq_order *smq_order_of_kernel(void);
/* Board 0, between invalidating the notices and reading the marks: the
 * system-wide barrier that light marks rely on.  0, or -errno when this
 * kernel cannot send it. */
int smq_marks_settle(void);

#endif
