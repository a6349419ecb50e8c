/* Memory ordering as each kind of mapping needs it (see transport.h).
 * The hot path calls these through the window's table: the transport
 * decides once, at open, which ordering its mapping needs. */
#include <errno.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "order.h"

static void c11_publish(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }
static void c11_consume(void) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }
static void c11_full(void) { smq_full_fence(); }

static void compiler_barrier(void) { __asm__ __volatile__("" ::: "memory"); }

const struct smq_order smq_order_c11 = {
	"C11 fences", c11_publish, c11_consume, c11_full, c11_full, false,
	true,
};

/* An in-flight mark is set at every call and read by board 0 only when it
 * maintains the window (a Dekker pair: the call stores its mark and reads
 * its notice; board 0 stores the notice and reads the marks).  Where all
 * the callers run under one kernel, board 0 pays for both sides:
 * membarrier(2) runs a full barrier on every CPU that runs user code, so
 * a call's mark, stored before its read of the notice, is visible to
 * board 0's read of the marks, or its read sees the stale notice.  A full
 * barrier per call costs as much as the copy of a small message. */
const struct smq_order smq_order_local = {
	"C11 fences, marks by membarrier", c11_publish, c11_consume, c11_full,
	compiler_barrier, true, true,
};

int smq_marks_settle(void)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) < 0)
		return -errno;
	return 0;
}

/* MEMBARRIER_CMD_GLOBAL is refused on nohz_full kernels and may be by a
 * seccomp filter: then every call sets its mark with a full barrier.  Its
 * barrier is a grace period of RCU, which every CPU passes with a full
 * barrier of its own: the expedited barrier, which interrupts the CPUs
 * that run registered processes, is not used (smq_dekker). */
static int known = -1;  /* one answer per process; a race asks twice */

const struct smq_order *smq_order_of_kernel(void)
{
	if (__atomic_load_n(&known, __ATOMIC_RELAXED) < 0) {
		long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
		__atomic_store_n(&known, q >= 0 && (q & MEMBARRIER_CMD_GLOBAL),
				 __ATOMIC_RELAXED);
	}
	return __atomic_load_n(&known, __ATOMIC_RELAXED) ? &smq_order_local
							  : &smq_order_c11;
}

/* A BAR mapped write-combining or uncached.  x86: stores to WC memory
 * are combined and drained in no promised order until an sfence; loads
 * from it may pass each other until an lfence.  arm64: device-visible
 * ordering needs the outer-shareable barriers; the inner-shareable ones
 * that C11 fences give order only among CPUs. */
#if defined(__x86_64__) || defined(__i386__)
static void device_publish(void) { __asm__ __volatile__("sfence" ::: "memory"); }
static void device_consume(void) { __asm__ __volatile__("lfence" ::: "memory"); }
static void device_full(void) { __asm__ __volatile__("mfence" ::: "memory"); }
#elif defined(__aarch64__)
static void device_publish(void) { __asm__ __volatile__("dmb oshst" ::: "memory"); }
static void device_consume(void) { __asm__ __volatile__("dmb oshld" ::: "memory"); }
static void device_full(void) { __asm__ __volatile__("dmb osh" ::: "memory"); }
#else
#define device_publish c11_full
#define device_consume c11_full
#define device_full c11_full
#endif

const struct smq_order smq_order_device = {
	"device fences", device_publish, device_consume, device_full,
	device_full, false, false,
};
