/* The bare two-core ring baseline (see baseline_proc.h). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "baseline_proc.h"

/* What a streaming queue cannot beat when it moves bytes from one core to
 * another: the writer copies each message into a slot of a ring in shared
 * memory and publishes it, the reader copies it out and frees the slot, and
 * neither ever sleeps.  The indices count messages from 0 and never wrap;
 * each sits on lines of its own, as smq's top and bottom do. */
#define RING_HDR 16  /* a slot: the length, then the payload at +16 */

struct ring_indices {
	_Alignas(LINE_GAP) uint64_t head;     /* published: the writer's */
	_Alignas(LINE_GAP) uint64_t tail;     /* taken: the reader's */
	_Alignas(LINE_GAP) uint64_t stop_at;  /* the writer published no more
						 than this (UINT64_MAX: it
						 has not stopped early) */
};

struct ring {
	struct ring_indices *ix;
	uint8_t *slot0;
	size_t stride, map_len;
	uint32_t slots;
	uint64_t corrupt;  /* ring_params.corrupt */
};

/* Each message of the checked mode is different, byte by byte. */
static void ring_pattern(uint8_t *buf, size_t size, uint64_t seq)
{
	uint64_t x = (seq + 1) * 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < size; i++) {
		if (i % 8 == 0) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		buf[i] = (uint8_t)(x >> (8 * (i % 8)));
	}
}

/* The writer: one message into slot idx, once the reader has freed it.
 * 0, -EINTR or -ECHILD. */
static int ring_put(struct ring *rg, const uint8_t *src, size_t size,
		    uint64_t seq, uint32_t idx, uint64_t *tail_seen,
		    struct peer *p)
{
	unsigned spins = 0;
	int err;

	while (seq - *tail_seen >= rg->slots) {
		*tail_seen = __atomic_load_n(&rg->ix->tail, __ATOMIC_ACQUIRE);
		if (seq - *tail_seen < rg->slots)
			break;
		if ((err = spin_wait(&spins, p)))
			return err;
	}
	uint8_t *slot = rg->slot0 + (size_t)idx * rg->stride;
	uint64_t len = size;
	memcpy(slot + RING_HDR, src, size);
	if (seq + 1 == rg->corrupt && size)
		slot[RING_HDR + size - 1] ^= 0x10;
	memcpy(slot, &len, sizeof(len));
	__atomic_store_n(&rg->ix->head, seq + 1, __ATOMIC_RELEASE);
	return 0;
}

/* The reader: takes warm + count messages (fewer when the writer stops
 * early), copies each out, frees its slot, then checks the copy. */
static void child_ring(struct ring *rg, const struct ring_params *rp,
		       uint64_t warm, struct shared *sh, pid_t parent,
		       const struct affinity *before)
{
	struct control *ctl = &sh->ctl;
	uint64_t n, total = warm + rp->count, head_seen = 0;
	uint8_t *dst = NULL, *want = NULL;
	struct cpu_window win;
	bool timing = false;
	uint32_t idx = 0;

	child_setup(parent, rp->cpu_b, before, ctl);
	if (posix_memalign((void **)&dst, 64, rp->slot_size + 8) ||
	    (rp->check_all && !(want = malloc(rp->slot_size + 8)))) {
		ctl->err = -ENOMEM;
		ctl->why = "no memory for the reader's buffer";
		raise_flag(&ctl->ready);
		_exit(1);
	}
	memset(dst, 0, rp->slot_size + 8);  /* fault it in before timing */
	raise_flag(&ctl->ready);
	for (n = 0; n < total; n++) {
		if (n == warm) {
			cpu_window_start(&win);
			timing = true;
		}
		unsigned spins = 0;
		while (head_seen <= n) {
			head_seen = __atomic_load_n(&rg->ix->head, __ATOMIC_ACQUIRE);
			if (head_seen > n)
				break;
			if (__atomic_load_n(&rg->ix->stop_at, __ATOMIC_ACQUIRE) <= n)
				goto done;
			cpu_relax();
			if (++spins % SPIN_PEER == 0 && getppid() != parent)
				_exit(1);
		}
		const uint8_t *slot = rg->slot0 + (size_t)idx * rg->stride;
		uint64_t len, seq = n;
		memcpy(&len, slot, sizeof(len));
		bool ok = len == rp->size;
		if (len > rp->slot_size)
			len = rp->slot_size;
		memcpy(dst, slot + RING_HDR, len);
		__atomic_store_n(&rg->ix->tail, n + 1, __ATOMIC_RELEASE);
		if (rp->check_all) {
			ring_pattern(want, rp->size, n);
			ok = ok && !memcmp(dst, want, rp->size);
		} else if (len >= sizeof(seq)) {
			memcpy(&seq, dst, sizeof(seq));
		}
		if ((!ok || seq != n) && !ctl->wrong++)
			ctl->first_wrong = n;
		if (++idx == rg->slots)
			idx = 0;
	}
done:
	ctl->end_ns = now_ns();
	ctl->received = n > warm ? n - warm : 0;
	if (timing)
		cpu_window_stop(&win, &ctl->cpu, &ctl->wall);
	_exit(0);
}

static int ring_map(struct ring *rg, const struct ring_params *rp,
		    const char **why)
{
	size_t hdr = (sizeof(struct ring_indices) + 4095) & ~(size_t)4095;

	memset(rg, 0, sizeof(*rg));
	if (rp->slot_size > ((size_t)1 << 40))
		return fail(why, "slots too large", -EINVAL);
	rg->stride = (RING_HDR + rp->slot_size + 63) & ~(size_t)63;
	rg->slots = rp->slots;
	rg->corrupt = rp->corrupt;
	if (rp->slots > (SIZE_MAX - hdr) / rg->stride)
		return fail(why, "a ring too large for memory", -ENOMEM);
	rg->map_len = hdr + rg->stride * rp->slots;
	void *m = mmap(NULL, rg->map_len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return fail(why, "no shared memory for the ring", -ENOMEM);
	memset(m, 0, rg->map_len);  /* allocate every page now */
	rg->ix = m;
	rg->ix->stop_at = UINT64_MAX;
	rg->slot0 = (uint8_t *)m + hdr;
	return 0;
}

/* What a ring cannot carry: 0, or a negative errno with *why set. */
static int ring_check(const struct ring_params *rp, const char **why)
{
	if (!rp->count)
		return fail(why, "no messages to measure", -EINVAL);
	if (!rp->slots)
		return fail(why, "a ring needs slots", -EINVAL);
	if (rp->size > rp->slot_size)
		return fail(why, "messages larger than the slots", -EINVAL);
	return two_cpus_check(rp->cpu_a, rp->cpu_b,
			      "a busy-polling ring needs two different CPUs",
			      "a busy-polling ring needs two CPUs; this "
			      "process may run on one", why);
}

/* The writer's side of a ring: what it measured. */
struct ring_run {
	uint64_t seq, sent;     /* messages published, messages timed */
	uint64_t t0;            /* the timed part began, now_ns(); 0: not */
	double cpu, wall;       /* see cpu_window_stop() */
	bool shown;             /* progress was shown */
};

/* Waits until the reader has taken the untimed lap: 0 or -ECHILD. */
static int ring_wait_lap(struct ring *rg, uint64_t warm, struct peer *peer)
{
	unsigned spins = 0;

	while (__atomic_load_n(&rg->ix->tail, __ATOMIC_ACQUIRE) < warm) {
		cpu_relax();
		if (++spins % SPIN_PEER == 0 && !peer_alive(peer))
			return -ECHILD;
	}
	return 0;
}

/* The writer: warm + count messages (fewer when interrupted), timing
 * those after the warm-up.  0, or the error that stopped it. */
static int ring_write(struct ring *rg, const struct ring_params *rp,
		      uint64_t warm, uint8_t *src, struct peer *peer,
		      const char *name, struct ring_run *rr)
{
	struct cpu_window win;
	uint64_t tail_seen = 0;
	uint32_t idx = 0;
	int err = 0;

	/* one untimed lap and more, so no page fault is timed; then wait
	 * until the reader has taken it all */
	for (; rr->seq < warm + rp->count && !measure_interrupted; rr->seq++) {
		uint64_t seq = rr->seq;
		if (seq == warm) {
			if ((err = ring_wait_lap(rg, warm, peer)))
				break;
			cpu_window_start(&win);
			rr->t0 = now_ns();
		}
		if (rp->check_all)
			ring_pattern(src, rp->size, seq);
		else if (rp->size >= sizeof(seq))
			memcpy(src, &seq, sizeof(seq));
		if ((err = ring_put(rg, src, rp->size, seq, idx, &tail_seen,
				    peer)))
			break;
		if (++idx == rg->slots)
			idx = 0;
		if (seq >= warm && ++rr->sent % PROGRESS_EVERY == 0) {
			progress(name, rr->sent, rp->count);
			rr->shown = true;
		}
	}
	if (rr->t0)
		cpu_window_stop(&win, &rr->cpu, &rr->wall);
	/* stopped early: the reader takes what was published, then leaves */
	__atomic_store_n(&rg->ix->stop_at, rr->seq, __ATOMIC_RELEASE);
	return err == -EINTR ? 0 : err;
}

/* Waits for the reader to leave and makes the result of what was
 * measured.  0, or a negative errno with *why set. */
static int ring_finish(struct shared *sh, int err, struct peer *peer,
		       const struct ring_run *rr, struct result *r,
		       const char **why)
{
	peer_reap(peer, err != 0);
	if (rr->shown)
		progress_end();
	if (err == -EINTR)
		return err;
	if (err == -ECHILD || sh->ctl.err || (!err && !peer_exited_ok(peer)))
		return peer_error(&sh->ctl, why);
	if (err)
		return fail(why, "the ring failed", err);
	if (sh->ctl.wrong) {
		snprintf(why_buf, sizeof(why_buf), "%llu of the messages came out "
			 "of the ring wrong, the first message %llu",
			 (unsigned long long)sh->ctl.wrong,
			 (unsigned long long)sh->ctl.first_wrong);
		return fail(why, why_buf, -EIO);
	}
	if (!rr->sent || !sh->ctl.received)
		return fail(why, "interrupted before anything was measured",
			    -EINTR);
	return reader_result(sh, rr->sent, rr->t0, rr->cpu, rr->wall, r, why);
}

int baseline_ring(const struct ring_params *rp, struct result *r,
		  const char **why)
{
	struct ring rg = { 0 };
	struct peer peer = { -1, false, 0 };
	struct shared *sh = NULL;
	struct affinity aff = { 0 };
	struct ring_run rr = { .cpu = -1 };
	uint8_t *src = NULL;
	uint64_t warm;
	int err;

	result_init(r, "ring", rp->size);
	if ((err = ring_check(rp, why)))
		return err;
	warm = 2ull * rp->slots;
	if (rp->count > UINT64_MAX - warm - 1)
		return fail(why, "too many messages", -EINVAL);
	if (posix_memalign((void **)&src, 64, rp->slot_size + 8))
		return fail(why, "no memory for the writer's buffer", -ENOMEM);
	memset(src, 0xa5, rp->slot_size + 8);
	if (!(sh = shared_get())) {
		free(src);
		return fail(why, "no shared memory page", -ENOMEM);
	}
	sh->ctl.cpu = -1;
	if ((err = ring_map(&rg, rp, why))) {
		shared_put(sh);
		free(src);
		return err;
	}

	pid_t parent = getpid();
	if ((err = start_peer(rp->cpu_a, &aff, &peer, why)))
		goto out;
	if (peer.pid == 0) {
		free(src);  /* the writer's; the reader has its own */
		child_ring(&rg, rp, warm, sh, parent, &aff);
	}
	if ((err = wait_flag(&sh->ctl.ready, &peer)) || sh->ctl.err) {
		if (err == -EINTR)
			fail(why, "interrupted before anything was measured", err);
	} else {
		err = ring_write(&rg, rp, warm, src, &peer, r->name, &rr);
	}
	err = ring_finish(sh, err, &peer, &rr, r, why);
out:
	affinity_restore(&aff);
	munmap(rg.ix, rg.map_len);
	shared_put(sh);
	free(src);
	return err;
}
