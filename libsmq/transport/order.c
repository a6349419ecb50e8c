/* Memory ordering as each kind of mapping needs it (see transport.h).
 * The hot path calls these through the window's table: the transport
 * decides once, at open, which ordering its mapping needs. */
#include <errno.h>
#include <pthread.h>
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
	true, false,
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
	compiler_barrier, true, true, false,
};

/* The same for the two Dekker pairs of the message path (a sender's top
 * before its look at the receiver's sleep; a receiver's bottom before its
 * look at a sender's wait for room): the side that is about to wait pays
 * for both with membarrier(2)'s expedited barrier on every CPU that runs
 * a process that registered for it, and every message goes without a
 * full barrier.  Only where every process of this kernel that maps the
 * window registered: each does so as it opens one (smq_order_of_kernel). */
const struct smq_order smq_order_local_asym = {
	"C11 fences, marks and waits by membarrier", c11_publish, c11_consume,
	c11_full, compiler_barrier, true, true, true,
};

void smq_heavy_barrier(void)
{
	/* registered (smq_order_of_kernel), so it does not fail; were it to,
	 * a full barrier of our own is what is left */
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) < 0)
		smq_full_fence();
}

int smq_marks_settle(void)
{
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) < 0)
		return -errno;
	return 0;
}

/* MEMBARRIER_CMD_GLOBAL is refused on nohz_full kernels and may be by a
 * seccomp filter: then every call sets its mark with a full barrier.  The
 * expedited barrier (Linux 4.16) needs this process registered: then its
 * message path leans on the waiting side's barrier (smq_order_local_asym);
 * a process that could not register keeps its full barriers, and a waiting
 * side always sends the expedited barrier where the kernel has it, for
 * the processes that did. */
static int known = -1, expedited = -1;  /* one answer per process; a
					   race asks twice */

static void forget_kernel(void);
static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, forget_kernel);
}

/* A child of fork() asks again: whether its registration came with the
 * copy of the address space is the kernel's to say, and asking costs a
 * syscall once (a window handle does not survive fork: the child opens
 * its own, which asks). */
static void forget_kernel(void)
{
	__atomic_store_n(&known, -1, __ATOMIC_RELAXED);
	__atomic_store_n(&expedited, -1, __ATOMIC_RELAXED);
}

static void ask_kernel(void)
{
	static pthread_once_t atfork = PTHREAD_ONCE_INIT;

	if (__atomic_load_n(&known, __ATOMIC_ACQUIRE) >= 0)
		return;
	pthread_once(&atfork, register_atfork);
	long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	int ex = q >= 0 && (q & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
		 (q & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) &&
		 syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED,
			 0, 0) == 0;
	__atomic_store_n(&expedited, ex, __ATOMIC_RELAXED);
	__atomic_store_n(&known, q >= 0 && (q & MEMBARRIER_CMD_GLOBAL),
			 __ATOMIC_RELEASE);
}

const struct smq_order *smq_order_of_kernel(void)
{
	ask_kernel();
	if (!__atomic_load_n(&known, __ATOMIC_ACQUIRE))
		return &smq_order_c11;
	return __atomic_load_n(&expedited, __ATOMIC_RELAXED)
	       ? &smq_order_local_asym : &smq_order_local;
}

/* Asked of every coherent window's waits, whatever its transport: a file
 * window may be the same object as another process's shm window. */
bool smq_heavy_barrier_known(void)
{
	ask_kernel();
	return __atomic_load_n(&expedited, __ATOMIC_RELAXED) > 0;
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
	device_full, false, false, false,
};
