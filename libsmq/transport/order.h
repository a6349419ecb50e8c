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
};
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
