/* The two halves of the in-flight mark, as a store-buffering litmus test.
 *
 * A call stores its mark, runs its transport's mark barrier and loads its
 * notice; board 0 stores the notice, runs smq_marks_settle() and loads the
 * mark.  If both loads saw the old values, a stale call would write into
 * the new layout.  On shm and split the call's barrier is a compiler
 * barrier only, and the pair is sound only because board 0's settle runs a
 * barrier on every CPU (membarrier).
 *
 * The message path's two Dekker pairs are the same litmus: a send or a
 * take against a side about to wait, each side with smq_dekker() of the
 * shm transport's table.  They are run where a thread of ours has just
 * exited on the call's CPU: Linux then leaves that CPU out of
 * membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) until it runs another
 * process, so a pair that leans on that barrier for one side (as smq's
 * did) is caught here.
 *
 * Every call queues stores to cold lines before its mark, as a send's
 * payload does, so that the mark waits in the store buffer: a barrier that
 * does not reach the call's CPU is then seen missing in many rounds, not
 * in one of millions.
 *
 * The same rounds with board 0's side reduced to a compiler barrier show
 * that this machine reorders a store and a later load (x86 does, often):
 * that proves the litmus can fail.  Then the real pair must show no round
 * where both loads missed, nor must the pair of full barriers.  Needs two
 * CPUs; skips on one, or where the kernel refuses membarrier. */
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "testint.h"
#include "testlib.h"

enum side { LIGHT, FULL, NONE, WAIT, EXPEDITED };

/* the stores a call queues before its mark, each to a line of its own
 * page, in a buffer larger than the caches */
enum { QUEUED = 40, QUEUE_BYTES = 64 << 20, QUEUE_STRIDE = 4096 + 64 };

struct litmus {
	_Alignas(64) _Atomic uint64_t go;      /* round the call may run */
	_Alignas(64) _Atomic uint64_t done;    /* round the call has run */
	_Alignas(64) uint64_t mark;            /* the call's store */
	_Alignas(64) uint64_t notice;          /* board 0's store */
	_Alignas(64) uint64_t seen_notice;     /* the call's load */
	const struct smq_order *call;          /* the call's barrier */
	bool dekker;                           /* smq_dekker(call), not
						  call->mark() */
	unsigned char *queue;                  /* QUEUE_BYTES */
	uint64_t rounds;
};

/* two CPUs this process may run on: board 0's side, the call's */
static int cpu_board0, cpu_call;
static unsigned char *queue;

/* Board 0 starts its half up to about a microsecond late, so that some
 * rounds overlap the call's, whatever the time the call takes to see go. */
static const unsigned spin_call = 1, spin_board0 = 1024;
static void spin_a_little(uint64_t *rng, unsigned up_to)
{
	for (unsigned i = (unsigned)(test_rand(rng) % up_to); i; i--)
		__asm__ __volatile__("" ::: "memory");
}

/* The call: mark, its barrier, the notice. */
static void *call_side(void *p)
{
	struct litmus *l = p;
	uint64_t rng = 7;
	size_t at = 0;

	CHECK(test_pin(cpu_call) == 0);
	for (uint64_t r = 1;; r++) {
		/* board 0 may end the run early: then it lowers rounds */
		while (atomic_load_explicit(&l->go, memory_order_acquire) != r)
			if (__atomic_load_n(&l->rounds, __ATOMIC_ACQUIRE) < r)
				return NULL;
		spin_a_little(&rng, spin_call);
		for (unsigned i = 0; i < QUEUED; i++) {
			l->queue[at] = (unsigned char)r;
			at = (at + QUEUE_STRIDE) % QUEUE_BYTES;
		}
		__asm__ __volatile__("" ::: "memory");  /* queued first */
		__atomic_store_n(&l->mark, r, __ATOMIC_RELAXED);
		if (l->dekker)
			smq_dekker(l->call);
		else
			l->call->mark();
		__atomic_store_n(&l->seen_notice,
				 __atomic_load_n(&l->notice, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
		atomic_store_explicit(&l->done, r, memory_order_release);
	}
	return NULL;
}

/* The scheme the message path had before: the side about to wait runs a
 * full barrier and sends membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) for
 * both, the other side a compiler barrier. */
static void expedited(void)
{
	smq_full_fence();
	CHECK(syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) == 0);
}

/* Board 0's side, round by round, up to *rounds of them or secs seconds,
 * whichever comes first, and at least floor (a membarrier costs a grace
 * period on every CPU: on a busy machine a fixed count could take any
 * time; testlib's test_going()); *rounds becomes the rounds run.  Returns
 * the rounds where neither load saw the other's store. */
static uint64_t run(const struct smq_order *call, enum side board0,
		    uint64_t *rounds_io, unsigned secs, uint64_t floor)
{
	uint64_t rounds = *rounds_io;
	struct test_budget b;
	struct litmus *l = calloc(1, sizeof(*l));
	pthread_t th;
	uint64_t rng = 11, both_missed = 0;

	CHECK(l);
	test_budget(&b, secs, floor, rounds);
	l->call = call;
	l->dekker = board0 == WAIT;
	l->queue = queue;
	l->rounds = rounds;
	CHECK(test_pin(cpu_board0) == 0);
	CHECK(pthread_create(&th, NULL, call_side, l) == 0);
	uint64_t r;
	for (r = 1; r <= rounds; r++) {
		if ((r & 255) == 0 && !test_going(&b, r - 1)) {
			/* round r - 1 is done: the call side ends there */
			__atomic_store_n(&l->rounds, r - 1, __ATOMIC_RELEASE);
			break;
		}
		atomic_store_explicit(&l->go, r, memory_order_release);
		spin_a_little(&rng, spin_board0);
		__atomic_store_n(&l->notice, r, __ATOMIC_RELAXED);
		if (board0 == LIGHT)
			OK(smq_marks_settle());
		else if (board0 == WAIT)
			smq_dekker(call);
		else if (board0 == EXPEDITED)
			expedited();
		else if (board0 == FULL)
			smq_order_c11.full();
		else
			__asm__ __volatile__("" ::: "memory");
		uint64_t seen_mark = __atomic_load_n(&l->mark, __ATOMIC_RELAXED);
		while (atomic_load_explicit(&l->done, memory_order_acquire) != r)
			;
		if (seen_mark != r && l->seen_notice != r)
			both_missed++;
	}
	CHECK(pthread_join(th, NULL) == 0);
	free(l);
	*rounds_io = r - 1;
	return both_missed;
}

/* Rounds of the pair in chunks of 2000, each on a new call thread started
 * just after the last one exited on the same CPU, up to 200,000 rounds or
 * 10 s, and at least 20,000.  Returns the rounds where both missed. */
static uint64_t chunks(const struct smq_order *call, enum side board0,
		       uint64_t *rounds)
{
	uint64_t missed = 0;
	struct timespec t0, t;

	*rounds = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		uint64_t k = 2000;
		missed += run(call, board0, &k, 60, k);
		*rounds += k;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (*rounds < 200000 &&
		 (*rounds < 20000 || (t.tv_sec - t0.tv_sec) +
		  (t.tv_nsec - t0.tv_nsec) / 1e9 < 10));
	return missed;
}

int main(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) < 2) {
		printf("one CPU: a store and a later load cannot be seen "
		       "reordered from another\n");
		return SKIP;
	}
	cpu_board0 = cpu_call = -1;
	for (int c = 0; c < CPU_SETSIZE && cpu_call < 0; c++)
		if (CPU_ISSET(c, &set))
			*(cpu_board0 < 0 ? &cpu_board0 : &cpu_call) = c;
	if (!smq_order_of_kernel()->light) {
		printf("this kernel refuses membarrier(MEMBARRIER_CMD_GLOBAL): "
		       "every mark has a full barrier here\n");
		return SKIP;
	}
	CHECK(queue = malloc(QUEUE_BYTES));
	memset(queue, 0, QUEUE_BYTES);
	/* each run is bounded by time and must reach a floor of rounds, so
	 * that a busy machine makes it slower, never empty */
	uint64_t n = 200000, control = run(&smq_order_local, NONE, &n, 10,
					   20000);
	printf("control, compiler barriers on both sides: both loads missed "
	       "in %llu of %llu rounds\n", (unsigned long long)control,
	       (unsigned long long)n);
	uint64_t nf = 200000, full = run(&smq_order_c11, FULL, &nf, 10, 20000);
	printf("full barriers on both sides: both missed in %llu of %llu "
	       "rounds\n", (unsigned long long)full, (unsigned long long)nf);
	uint64_t m = 1500, light = run(&smq_order_local, LIGHT, &m, 60, 1000);
	printf("light mark against board 0's membarrier: both missed in %llu "
	       "of %llu rounds (up to 1500, for 60 s)\n",
	       (unsigned long long)light, (unsigned long long)m);
	/* the message path's Dekker pairs with the shm transport's barriers,
	 * each chunk of rounds on a new call thread, just after the last one
	 * exited on the same CPU */
	const struct smq_order *shm = smq_order_of_kernel();
	uint64_t a, dekker = chunks(shm, WAIT, &a);
	printf("a send or take against a side about to wait (%s), each "
	       "thread after one that exited on its CPU: both missed in %llu "
	       "of %llu rounds\n", shm->name, (unsigned long long)dekker,
	       (unsigned long long)a);
	/* for the record, not judged (it is the kernel's): the same with the
	 * expedited barrier standing for the going side's full barrier */
	long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (q >= 0 && (q & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED,
		    0, 0) == 0) {
		uint64_t e, ex = chunks(&smq_order_local, EXPEDITED, &e);
		printf("for the record: a compiler barrier against a side about "
		       "to wait that sends membarrier's expedited barrier, each "
		       "thread after one that exited on its CPU: both missed in "
		       "%llu of %llu rounds%s\n", (unsigned long long)ex,
		       (unsigned long long)e, ex ? " (the kernel left that CPU "
		       "out of the barrier: smq does not lean on it)" : "");
	} else {
		printf("for the record: this kernel has no expedited "
		       "system-wide membarrier\n");
	}
	if (full || light || dekker)
		FAIL("a call and board 0 both missed each other's store");
	/* too few rounds are not to be trusted */
	test_work("rounds of the control", n, 20000);
	test_work("rounds with full barriers", nf, 20000);
	test_work("rounds against membarrier", m, 1000);
	test_work("rounds of the message path's pairs", a, 20000);
	if (!control) {
		printf("this machine showed no reordering in the control: the "
		       "litmus proved nothing here\n");
		free(queue);
		return SKIP;
	}
	free(queue);
	return 0;
}
