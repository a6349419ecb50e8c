/* Memory ordering as each kind of mapping needs it (see transport.h).
 * The hot path calls these through the window's table: the transport
 * decides once, at open, which ordering its mapping needs. */
#include "transport.h"

static void c11_publish(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }
static void c11_consume(void) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }
static void c11_full(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

const struct smq_order smq_order_c11 = {
	"C11 fences", c11_publish, c11_consume, c11_full,
};

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
};
