/* Windows: open, attach to the layout the window holds, close; the
 * in-flight marks of our control block; how handles reach memory. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "window.h"
#include "transport/common.h"

#define DEFAULT_HANDSHAKE_MS 5000

/* The board whose region holds canonical offset off (-1: none).  The
 * control blocks are where every geometry keeps them; the bodies need a
 * layout (l may be NULL). */
int smq_owner_of(const struct smq_layout *l, uint64_t off)
{
	if (off < SMQ_CTL_OFF)
		return 0;  /* the superblock's page is board 0's */
	if (off >= SMQ_CTL_OFF && off < SMQ_BOARD_TABLE)
		return (int)((off - SMQ_CTL_OFF) / SMQ_CTL_SIZE);
	if (!l)
		return -1;
	for (unsigned b = 0; b < l->boards; b++) {
		struct smq_range r[SMQ_MAX_RANGES];
		int n = smq_layout_ranges(l, b, r);
		for (int i = 0; i < n; i++)
			if (off >= r[i].start && off - r[i].start < r[i].len)
				return (int)b;
	}
	return -1;
}

void *smq_near(struct smq_window *w, uint64_t off, uint64_t len)
{
#ifdef SMQ_COUNT_FAR
	if (smq_owner_of(&w->lay, off) != (int)w->board)
		__atomic_fetch_add(&w->near_misses, 1, __ATOMIC_RELAXED);
#endif
	return smq_map_at(&w->map, off, len);
}

const void *smq_snapshot_at(struct smq_window *w, uint64_t off, uint64_t len)
{
#ifdef SMQ_COUNT_FAR
	if (smq_owner_of(&w->lay, off) != (int)w->board)
		__atomic_fetch_add(&w->far_loads[SMQ_FAR_SNAPSHOT], 1,
				   __ATOMIC_RELAXED);
#endif
	return smq_map_at(&w->map, off, len);
}

#ifdef SMQ_COUNT_FAR
void (*smq_test_hook)(enum smq_hook where);
int (*smq_test_skip)(enum smq_hook where);
int (*smq_test_view)(unsigned self, unsigned board, int write,
		     struct smq_test_fault *f);
#endif

/* For tests: far reads by reason, and near pointers asked for far memory;
 * all zero unless built with SMQ_COUNT_FAR. */
uint64_t smq_far_loads(struct smq_window *w, int why);
uint64_t smq_far_loads(struct smq_window *w, int why)
{
#ifdef SMQ_COUNT_FAR
	if (why < 0)
		return LOAD(&w->near_misses);
	return why < SMQ_FAR_WHYS ? LOAD(&w->far_loads[why]) : 0;
#else
	(void)w;
	(void)why;
	return 0;
#endif
}

/* ---- in-flight marks ---- */

/* A mark whose owner is gone: it died, its pid was reused, or it ran
 * before this host's last boot.  Judged on this board's own host. */
static bool slot_dead(uint64_t tag)
{
	return tag && !smq_tag_alive(tag);
}

struct smq_handle_slot *smq_slot_claim(struct smq_window *w,
				       enum smq_slot_kind kind, uint32_t queue,
				       uint32_t role)
{
	struct smq_handle_slot *s;

	SMQ_EACH_SLOT(s, w->ctl) {
		uint64_t tag = LOAD(&s->tag);
		if (tag && !slot_dead(tag))
			continue;
		if (!__atomic_compare_exchange_n(&s->tag, &tag, w->tag, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		STORE(&s->busy, 0);
		STORE(&s->lock_waiters, 0);
		STORE(&s->lock_waited, 0);
		STORE(&s->boot, w->boot);
		STORE(&s->queue, queue);
		STORE(&s->role, role);
		STORE(&s->generation, w->generation);
		STORE(&s->flags, w->map.order->light ? SMQ_SLOT_LIGHT : 0u);
		/* the kind last: a reader that sees a queue handle's kind sees
		 * its queue and generation (validation judges them together) */
		w->map.order->publish();
		STORE_REL(&s->kind, (uint32_t)kind);
		return s;
	}
	return NULL;
}

void smq_slot_release(struct smq_window *w, struct smq_handle_slot *s)
{
	uint64_t tag = w->tag;

	if (!s)
		return;
	STORE(&s->busy, 0);
	STORE(&s->kind, SMQ_SLOT_FREE);
	STORE(&s->role, 0);
	__atomic_compare_exchange_n(&s->tag, &tag, 0, false, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
}

/* Marks of processes of this board that are gone: free them, so board 0
 * never waits on a dead one. */
static void release_dead_slots(struct smq_window *w)
{
	struct smq_handle_slot *s;

	SMQ_EACH_SLOT(s, w->ctl) {
		uint64_t tag = LOAD(&s->tag);
		if (slot_dead(tag) &&
		    __atomic_compare_exchange_n(&s->tag, &tag, 0, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			STORE(&s->busy, 0);
			STORE(&s->kind, SMQ_SLOT_FREE);
			STORE(&s->role, 0);
		}
	}
}

int smq_enter(struct smq_window *w)
{
	if (!w)
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	if (w->readonly)
		return -EROFS;
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	if (!w->slot && !(w->slot = smq_slot_claim(w, SMQ_SLOT_WINDOW,
						   SMQ_SLOT_NO_QUEUE, 0)))
		return smq_stale(w) ? -ESTALE : -EUSERS;
	return smq_enter_mark(w, w->slot, true, w->generation, w->check);
}

void smq_leave(struct smq_window *w)
{
	smq_leave_mark(w, w->slot, true);
}

/* ---- attaching ---- */

int smq_maint_alive(const struct smq_window *w, const struct smq_sb *sb)
{
	uint64_t owner = LOAD(&sb->maint_owner);
	if (LOAD(&sb->maint_boot) != w->boot)
		return -1;
	return smq_tag_alive(owner);
}

int smq_maint_error(const struct smq_window *w, const struct smq_sb *sb)
{
	return smq_maint_alive(w, sb) == 1 ? -EBUSY : -SMQ_EINCOMPLETE;
}

/* A fault found with no mark up may be an init or clear rewriting what we
 * read.  It is the window's only if, read after a consume barrier, the
 * superblock shows no maintenance and the generation read before the
 * checks.  A maintenance sets its phase, fences, and only then writes; it
 * stores the new generation before it sets the phase back: so a check
 * that read any of its writes finds here a phase under way or a newer
 * generation.  -EBUSY: a maintenance runs, in a live process of this
 * host; -ESTALE: one finished meanwhile (attach again); -SMQ_EINCOMPLETE:
 * one whose process died or is elsewhere.  An unformatted window stays so
 * unless a live init formats it (a killed one left it for the next). */
int smq_confirm_fault(struct smq_window *w, const struct smq_sb *sb,
		      uint64_t gen, int err)
{
	if (!err || !sb || err == -SMQ_EMAGIC || err == -SMQ_EVERSION)
		return err;  /* not a window of ours: there is no phase to read */
	w->map.order->consume();
	uint32_t phase = LOAD_ACQ(&sb->maint_phase);
	bool under_way = phase == SMQ_MAINT_WAITING ||
			 phase == SMQ_MAINT_WRITING;
	int alive = under_way ? smq_maint_alive(w, sb) : 0;
	if (alive == 1)
		return -EBUSY;
	if (LOAD(&sb->generation) != gen)
		return -ESTALE;
	return under_way && err != -SMQ_EUNFORMATTED ? -SMQ_EINCOMPLETE : err;
}

/* A board opens no window that an init or clear of all of it is
 * rewriting, or left unfinished: until it has told every notice, one it
 * has not told yet would let the board in while validation (dump) calls
 * the window unfinished.  -EBUSY and -SMQ_EINCOMPLETE as
 * smq_confirm_fault says them.  A raw open (board 0's init and clear,
 * which finish it) and a monitor attach all the same; a clear of one
 * queue refuses that queue's opens only (being_cleared). */
static int maint_refuses(struct smq_window *w)
{
	const struct smq_sb *sb = smq_map_at(&w->map, 0, sizeof(*sb));

	w->map.order->consume();
	uint32_t phase = LOAD_ACQ(&sb->maint_phase);
	if ((phase != SMQ_MAINT_WAITING && phase != SMQ_MAINT_WRITING) ||
	    LOAD(&sb->maint_queue))
		return 0;
	return smq_maint_error(w, sb);
}

/* The layout the window holds now: read it, map every region of it,
 * validate all of it.  The generation is read before the layout: if a
 * re-init slips in between, the notice shows a newer one and the handle
 * reads stale; if it makes the checks fail, smq_confirm_fault says so. */
int smq_attach(struct smq_window *w)
{
	TEST_HOOK(SMQ_HOOK_ATTACH_MAPPED);
	struct smq_view v = smq_window_view(w);
	const struct smq_sb *sb = smq_view_at(&v, 0, sizeof(*sb));
	struct smq_layout l;
	uint64_t gen = sb ? LOAD_ACQ(&sb->generation) : 0;
	int err = smq_check_layout(&v, &l, NULL);

	if (err)
		return smq_confirm_fault(w, sb, gen, err);
	err = w->map.tp->map_layout(&w->map, &l, false);
	smq_layout_free(&l);
	/* the mapping may have moved: the superblock from it again */
	sb = smq_map_at(&w->map, 0, sizeof(*sb));
	if (err)  /* too small for a geometry half rewritten, perhaps */
		return smq_confirm_fault(w, sb, gen, err);
	TEST_HOOK(SMQ_HOOK_ATTACH_LOOK);
	v = smq_window_view(w);
	if ((err = smq_check_static(&v, &l, NULL)))
		return smq_confirm_fault(w, sb, gen, err);
	if (w->board >= l.boards) {
		smq_layout_free(&l);
		return -EINVAL;
	}
	smq_layout_free(&w->lay);
	w->lay = l;
	if (!w->readonly)
		w->ctl = smq_map_at(&w->map, lay_ctl(w->board), SMQ_CTL_SIZE);
	w->generation = gen;
	w->check = smq_notice_check(gen, w->board);
	w->valid = true;
	return 0;
}

/* A monitor's handle: stale when the superblock's generation moved or a
 * maintenance is under way (its tables may be half written). */
int smq_monitor_stale(const struct smq_window *w)
{
	const struct smq_sb *sb = smq_map_at(&w->map, 0, sizeof(*sb));

	if (!sb)
		return -ESTALE;
	w->map.order->consume();
	if (LOAD_ACQ(&sb->generation) != w->generation)
		return -ESTALE;
	/* a maintenance under way may have half written the tables; one
	 * whose process died left them as the next attach finds them */
	return LOAD(&sb->maint_phase) != SMQ_MAINT_NONE &&
	       smq_maint_alive(w, sb) != 0 ? -ESTALE : 0;
}

/* A monitor follows the window: removed (-EIDRM), or formatted anew since
 * it last looked (attach again: it holds nothing a new layout moves). */
int smq_monitor_follow(struct smq_window *w)
{
	if (!w->readonly)
		return 0;
	if (w->map.tp->removed && w->map.tp->removed(&w->map))
		return -EIDRM;
	if (w->valid && !smq_monitor_stale(w))
		return 0;
	if (!w->valid && w->map.size < SMQ_SB_SIZE) {
		/* mapped before it was formatted, when it was empty: map
		 * what it holds now (a device, whose size never changes, is
		 * never opened again) */
		struct smq_map now;
		if (!smq_transport_open(&now, w->map.name, SMQ_OPEN_READONLY)) {
			w->map.tp->close(&w->map);
			w->map = now;
		}
	}
	int err = smq_attach(w);
	if (err == -EBUSY || err == -ESTALE)
		return 0;  /* being formatted: the next look attaches */
	if (err)
		w->valid = false;
	return err == -SMQ_EUNFORMATTED ? 0 : err;
}

/* ---- forks ---- */

unsigned long smq_forks;

static void forked(void)
{
	__atomic_fetch_add(&smq_forks, 1, __ATOMIC_RELAXED);
}

static pthread_once_t forks_once = PTHREAD_ONCE_INIT;
static int forks_err;

/* Counted from the first open on: a handle that exists was opened after
 * it, so every fork that copies one is counted in the child. */
static void count_forks(void)
{
	forks_err = -pthread_atfork(NULL, NULL, forked);
}

#define OPEN_FLAGS (SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE | \
		    SMQ_OPEN_READONLY)

int smq_open(const char *spec, unsigned board, unsigned flags,
	     struct smq_window **wp)
{
	struct smq_window *w;
	int err;

	if (!wp)
		return -EINVAL;
	*wp = NULL;
	if (flags & SMQ_OPEN_READONLY) {
		/* a monitor is no board, creates and forces nothing */
		if (flags & (SMQ_OPEN_CREATE | SMQ_OPEN_FORCE))
			return -EINVAL;
		board = 0;
	}
	if (board >= SMQ_MAX_BOARDS || (flags & ~(unsigned)OPEN_FLAGS))
		return -EINVAL;
	pthread_once(&forks_once, count_forks);
	if (forks_err)
		return forks_err;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->forks = __atomic_load_n(&smq_forks, __ATOMIC_RELAXED);
	w->board = board;
	w->readonly = flags & SMQ_OPEN_READONLY;
	pthread_mutex_init(&w->follow_lock, NULL);
	w->tag = smq_tag_self();
	w->boot = smq_boot_hash();
	w->handshake_ms = DEFAULT_HANDSHAKE_MS;
	w->stall_ms = SMQ_STALL_DEFAULT_MS;
	gethostname(w->host, sizeof(w->host) - 1);
	err = smq_transport_open(&w->map, spec, flags);
	if (err) {
		pthread_mutex_destroy(&w->follow_lock);
		free(w);
		return err;
	}
	err = smq_attach(w);
	if (!err && !w->readonly && !(flags & SMQ_OPEN_RAW))
		err = maint_refuses(w);
	if (w->readonly && (err == -SMQ_EUNFORMATTED ||
			    err == -SMQ_EINCOMPLETE || err == -EBUSY)) {
		/* a monitor waits for a window being formatted: its
		 * snapshots say -SMQ_EUNFORMATTED until then */
		w->valid = false;
		err = 0;
	}
	if (err && !(flags & SMQ_OPEN_RAW)) {
		smq_layout_free(&w->lay);  /* attached, then refused */
		w->map.tp->close(&w->map);
		pthread_mutex_destroy(&w->follow_lock);
		free(w);
		return err;
	}
	if (w->valid && !w->readonly)
		release_dead_slots(w);
	*wp = w;
	return 0;
}

int smq_set_mode(struct smq_window *w, unsigned mode)
{
	if (!w || (mode & ~07777u))
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	if (w->readonly)
		return -EROFS;
	if (!w->map.tp->chmod)
		return -EOPNOTSUPP;
	return w->map.tp->chmod(&w->map, mode);
}

int smq_set_timeout(struct smq_window *w, unsigned what, int timeout_ms)
{
	if (!w || timeout_ms < -1)
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	switch (what) {
	case SMQ_TIMEOUT_HANDSHAKE:
		w->handshake_ms = timeout_ms;
		return 0;
	case SMQ_TIMEOUT_STALL:
		/* never stalled: a wait forever */
		w->stall_ms = timeout_ms < 0 ? INT32_MAX : timeout_ms;
		return 0;
	default:
		return -EINVAL;
	}
}

int smq_holdout(struct smq_window *w, struct smq_holdout *h, size_t size)
{
	if (!w)
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	if (!h || size < SMQ_LEAST_HOLDOUT)
		return -EINVAL;
	return smq_struct_out(h, size, &w->holdout, sizeof(w->holdout));
}

int smq_close(struct smq_window *w)
{
	if (!w)
		return -EINVAL;
	/* a child's copy: its mapping and memory go with the child (at its
	 * exit or exec); closing it here would free the parent's slot */
	if (smq_inherited(w))
		return -EBADF;
	/* Queue and group handles reach the window through this one: freed
	 * under them, their next call would write through freed memory.
	 * Refused, the handle stays whole and every handle on it works; the
	 * caller closes them first.  (Made stale instead, they would still
	 * hold this memory, and a caller that never learns of its mistake
	 * would leak it.) */
	if (__atomic_load_n(&w->queues_open, __ATOMIC_ACQUIRE))
		return -EBUSY;
	/* A slot is in our control block, a place every geometry keeps: it
	 * is ours to free even on a stale handle. */
	if (w->ctl)
		smq_slot_release(w, w->slot);
	smq_layout_free(&w->lay);
	free(w->qobs);
	w->map.tp->close(&w->map);
	pthread_mutex_destroy(&w->follow_lock);
	free(w);
	return 0;
}

/* What every snapshot call does around its own filling: a monitor
 * follows the window first (-EIDRM: removed; a fault found attaching
 * again is said rather than the fill's), an error leaves zeros, and the
 * caller's struct gets what both sides know of ours.  Under the handle's
 * follow lock: following may map the window and its layout anew, which
 * the fills of other threads read. */
int smq_snapshot_call(struct smq_window *w, smq_snapshot_fill *fill,
		      unsigned a, unsigned b, void *info, size_t have,
		      void *out, size_t size, size_t least)
{
	if (!w || !out || !size || size < least)
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	memset(info, 0, have);
	pthread_mutex_lock(&w->follow_lock);
	int err = smq_monitor_follow(w);
	int ferr = err == -EIDRM ? err : fill(w, a, b, info);
	pthread_mutex_unlock(&w->follow_lock);
	smq_struct_out(out, size, info, have);
	return err ? err : ferr;
}
