/* Maintenance: what init (init.c) and clear (clear.c) share, the
 * handshake above all (smq(7), GENERATIONS).
 *
 * Board 0 tells every board its handle is stale (the notice in its
 * control block), then reads every in-flight mark until none is up, and
 * only then writes the new layout.  A call sets its mark, fences, and
 * then reads its notice: either board 0 sees the mark and waits for it,
 * or the call sees the stale notice and writes nothing.  Marks and notices
 * sit in the control blocks, which no geometry moves, so even a call
 * delayed across several re-inits writes nowhere but its own mark.  The
 * read of a mark across the bus also flushes board 0's posted notice
 * write ahead of it.  No timer stands in for any of this: a board that
 * does not let go within the handshake timeout is named, and the window
 * is left as it was. */
#include <stdlib.h>
#include <string.h>
#include "maintain.h"

struct smq_sb *smq_maint_sb(struct smq_window *w)
{
	return smq_map_at(&w->map, 0, SMQ_SB_SIZE);
}

struct smq_far smq_maint_ctl(struct smq_window *w, unsigned b)
{
	return smq_far(w, lay_ctl(b));
}

/* ---- the maintenance lock: one board-0 process at a time ---- */

/* queue: of the call that held on, -1 none or a window handle's */
void smq_maint_holdout(struct smq_window *w, unsigned board, uint64_t tag,
			 bool same_host, int queue)
{
	memset(&w->holdout, 0, sizeof(w->holdout));
	w->holdout.board = board;
	w->holdout.queue = queue;
	w->holdout.pid = smq_tag_pid(tag);
	w->holdout.same_host = same_host;
	const struct smq_board_slot *s =
		smq_map_at(&w->map, lay_slot(board), sizeof(*s));
	if (s && s->host[0])
		memcpy(w->holdout.host, s->host, sizeof(w->holdout.host) - 1);
	if (same_host && !w->holdout.host[0])
		memcpy(w->holdout.host, w->host, sizeof(w->holdout.host) - 1);
}

/* A lock held by a process that died (killed mid-init) is taken over:
 * that is how the next init or clear finishes what it left. */
int smq_maint_lock(struct smq_window *w, bool trusted)
{
	struct smq_sb *sb = smq_maint_sb(w);
	uint64_t cur = 0;

	if (!trusted) {
		/* whatever lies there is not a lock of ours, unless a live
		 * process of this host is formatting this very window */
		cur = LOAD(&sb->maint_owner);
		if (cur && LOAD(&sb->maint_boot) == w->boot && smq_tag_alive(cur))
			goto busy;  /* a live one, perhaps another handle of ours */
		TEST_HOOK(SMQ_HOOK_MAINT_LOCKING);
		/* taken from what was read, or not at all: another init that
		 * took it meanwhile (two at once on a new window) is not
		 * formatted over */
		if (!__atomic_compare_exchange_n(&sb->maint_owner, &cur, w->tag,
						 false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			goto busy;
	} else {
		while (!__atomic_compare_exchange_n(&sb->maint_owner, &cur,
						    w->tag, false,
						    __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE)) {
			if (LOAD(&sb->maint_boot) == w->boot &&
			    smq_tag_alive(cur))
				goto busy;
			if (cur == w->tag)
				goto busy;  /* another handle of ours */
			/* dead, or of a boot before this one: take it over */
		}
	}
	STORE(&sb->maint_boot, w->boot);
	w->map.order->full();
	return 0;
busy:
	smq_maint_holdout(w, 0, cur, LOAD(&sb->maint_boot) == w->boot, -1);
	return -EALREADY;
}

void smq_maint_unlock(struct smq_window *w)
{
	struct smq_sb *sb = smq_maint_sb(w);

	STORE(&sb->maint_phase, SMQ_MAINT_NONE);
	STORE(&sb->maint_queue, 0);
	STORE(&sb->maint_from, 0);
	w->map.order->publish();
	STORE_REL(&sb->maint_owner, 0);
}

/* ---- telling the boards, and waiting for them ---- */

struct saved_notices {
	uint64_t generation[SMQ_MAX_BOARDS];
	uint32_t state[SMQ_MAX_BOARDS];
	uint32_t sys_state;
};

bool smq_maint_ctl_mapped(struct smq_window *w, unsigned b)
{
	return smq_map_at(&w->map, lay_ctl(b), SMQ_CTL_SIZE) != NULL;
}

/* Wakes every waiter of the old layout (of queue only, if only >= 0), so
 * that it sees its notice stale at once instead of at the end of its
 * sleep.  Reads the waiters' words and addresses: part of the maintenance
 * exception. */
void smq_maint_wake_all(struct smq_window *w, const struct smq_layout *old,
		     int only)
{
	const struct smq_transport *tp = w->map.tp;
	uint32_t kinds = tp->ring_kinds ? tp->ring_kinds(&w->map) : 0;

	for (unsigned q = 0; q < old->queues; q++)
		for (unsigned k = 0; k < lay_lanes(old, q); k++) {
			unsigned s = lay_lane_board(old, q, k);
			if (only >= 0 && q != (unsigned)only)
				break;
			struct smq_far wake = smq_far(w, lay_lane_wake(old, s, q));
			struct smq_far ask = smq_far(w, lay_lane_ask_k(old, q, k));
			struct smq_far bell = smq_far(w, lay_bell(old, q));
			if (!wake.far_ || !ask.far_ || !bell.far_)
				continue;
			struct smq_bell_addr a;
			if (FAR_LOAD(w, SMQ_FAR_MAINTAIN, wake, struct smq_lane_wake,
				     sleep_epoch) & 1) {
				memcpy(&a, FAR_FIELD(wake, struct smq_lane_wake, bell),
				       sizeof(a));
				if (a.kind && (kinds & SMQ_BELL_BIT(a.kind)) &&
				    (a.kind != SMQ_BELL_FUTEX || a.host == w->boot))
					tp->ring(&w->map, &a, bell, FAR_LOAD(w,
						SMQ_FAR_MAINTAIN, bell, struct smq_bell,
						doorbell) + 0x40000000u);
			}
			if (FAR_LOAD(w, SMQ_FAR_MAINTAIN, ask, struct smq_lane_ask,
				     space_wait)) {
				memcpy(&a, FAR_FIELD(ask, struct smq_lane_ask, bell),
				       sizeof(a));
				struct smq_far word = smq_far_offset(wake,
					offsetof(struct smq_lane_wake, space_bell));
				if (a.kind && (kinds & SMQ_BELL_BIT(a.kind)) &&
				    (a.kind != SMQ_BELL_FUTEX || a.host == w->boot))
					tp->ring(&w->map, &a, word, FAR_LOAD(w,
						SMQ_FAR_MAINTAIN, wake,
						struct smq_lane_wake, space_bell) +
						0x40000000u);
			}
		}
}

/* Every board's notice says "re-formatting": from now on no call of the
 * old generation begins to write. */
static void invalidate(struct smq_window *w, struct saved_notices *sv,
		       uint64_t from)
{
	struct smq_sb *sb = smq_maint_sb(w);

	sv->sys_state = LOAD(&sb->system_state);
	STORE(&sb->maint_queue, 0);  /* the whole window, even over one left */
	STORE(&sb->maint_from, from);
	/* which maintenance before its phase: a board's open that reads the
	 * phase reads the queue it names (window.c, maint_refuses) */
	w->map.order->publish();
	STORE(&sb->maint_phase, SMQ_MAINT_WAITING);
	STORE(&sb->system_state, SMQ_SYS_FORMATTING);
	TEST_HOOK(SMQ_HOOK_MAINT_TELLING);
	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++) {
		struct smq_far c = smq_maint_ctl(w, b);
		if (!smq_maint_ctl_mapped(w, b))
			continue;
		sv->generation[b] = FAR_LOAD(w, SMQ_FAR_MAINTAIN, c,
					     struct smq_ctl, notice.generation);
		sv->state[b] = FAR_LOAD(w, SMQ_FAR_MAINTAIN, c, struct smq_ctl,
					notice.system_state);
		FAR_STORE(c, struct smq_ctl, notice.system_state,
			  SMQ_SYS_FORMATTING);
		FAR_STORE(c, struct smq_ctl, notice.check, 0);
		FAR_STORE_REL(c, struct smq_ctl, notice.generation, 0);
	}
	w->map.order->full();
}

/* The invalidation undone: the handshake failed and nothing was written. */
static void restore(struct smq_window *w, const struct saved_notices *sv)
{
	struct smq_sb *sb = smq_maint_sb(w);

	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++) {
		struct smq_far c = smq_maint_ctl(w, b);
		if (!smq_maint_ctl_mapped(w, b))
			continue;
		FAR_STORE(c, struct smq_ctl, notice.system_state, sv->state[b]);
		FAR_STORE(c, struct smq_ctl, notice.check,
			  sv->generation[b] ? smq_notice_check(sv->generation[b], b)
					    : 0);
		FAR_STORE_REL(c, struct smq_ctl, notice.generation,
			      sv->generation[b]);
	}
	STORE(&sb->system_state, sv->sys_state);
}

/* Whether a mark may cover a call on queue only (< 0: on anything): a
 * queue handle's of that queue, or a window handle's (a queue handle
 * shares it when its control block is full). */
static bool covers(struct smq_window *w, struct smq_far s, int only)
{
	(void)w;  /* FAR_LOAD uses it only in counting builds */
	if (only < 0)
		return true;
	uint32_t kind = FAR_LOAD(w, SMQ_FAR_MAINTAIN, s, struct smq_handle_slot,
				 kind);
	return kind != SMQ_SLOT_QUEUE ||
	       FAR_LOAD(w, SMQ_FAR_MAINTAIN, s, struct smq_handle_slot,
			queue) == (uint32_t)only;
}

/* The first mark still up (of a call on queue only, if only >= 0), or
 * false.  A mark of a process of this host that is gone is taken down
 * here; one of another host can only be waited for (a stopped process
 * looks just like a dead one from afar). */
static bool find_busy(struct smq_window *w, int only, unsigned *board,
		      uint64_t *tag, bool *same_host, int *queue)
{
	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++) {
		if (!smq_maint_ctl_mapped(w, b))
			continue;
		struct smq_far c = smq_maint_ctl(w, b);
		struct smq_far s;
		SMQ_EACH_FAR_SLOT(s, c) {
			if (!FAR_LOAD(w, SMQ_FAR_MAINTAIN, s,
				      struct smq_handle_slot, busy) ||
			    !covers(w, s, only))
				continue;
			uint64_t t = FAR_LOAD(w, SMQ_FAR_MAINTAIN, s,
					      struct smq_handle_slot, tag);
			bool here = FAR_LOAD(w, SMQ_FAR_MAINTAIN, s,
					     struct smq_handle_slot, boot) == w->boot;
			if (t == 0 || (here && !smq_tag_alive(t))) {
				FAR_STORE(s, struct smq_handle_slot, busy, 0);
				continue;
			}
			*board = b;
			*tag = t;
			*same_host = here;
			uint32_t qi = FAR_LOAD(w, SMQ_FAR_MAINTAIN, s,
					       struct smq_handle_slot, queue);
			*queue = FAR_LOAD(w, SMQ_FAR_MAINTAIN, s,
					  struct smq_handle_slot, kind) ==
					 SMQ_SLOT_QUEUE &&
				 qi < w->lay.queues ? (int)qi : -1;
			return true;
		}
	}
	return false;
}

/* Light marks (smq_order_local) are set with no barrier of their own:
 * after the notices, before the marks, a barrier on every CPU of this
 * kernel completes them.  A light mark of another kernel cannot get one
 * from here (a shm object that also backs a virtual machine's memory), nor
 * any when this kernel refuses membarrier: those get SMQ_SETTLE_MS, far
 * longer than a store stays in a CPU's store buffer. */
static void settle_marks(struct smq_window *w)
{
	bool light = false, foreign = false;

	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++) {
		if (!smq_maint_ctl_mapped(w, b))
			continue;
		struct smq_far c = smq_maint_ctl(w, b);
		struct smq_far s;
		SMQ_EACH_FAR_SLOT(s, c) {
			if (!FAR_LOAD(w, SMQ_FAR_MAINTAIN, s,
				      struct smq_handle_slot, tag) ||
			    !(FAR_LOAD(w, SMQ_FAR_MAINTAIN, s,
				       struct smq_handle_slot, flags) &
			      SMQ_SLOT_LIGHT))
				continue;
			light = true;
			if (FAR_LOAD(w, SMQ_FAR_MAINTAIN, s,
				     struct smq_handle_slot, boot) != w->boot)
				foreign = true;
		}
	}
	if ((smq_marks_settle() && light) || foreign) {
		TEST_HOOK(SMQ_HOOK_MAINT_SETTLE);
		smq_sleep_ms(SMQ_SETTLE_MS);
	}
}

int smq_maint_handshake(struct smq_window *w, int only)
{
	struct timespec deadline;
	unsigned board;
	uint64_t tag;
	bool here;
	int queue;

	settle_marks(w);
	if (w->handshake_ms >= 0)
		smq_deadline(&deadline, w->handshake_ms);
	while (find_busy(w, only, &board, &tag, &here, &queue)) {
		if (w->handshake_ms >= 0 && smq_past(&deadline)) {
			smq_maint_holdout(w, board, tag, here, queue);
			return -SMQ_EHELD;
		}
		/* a signal ends the wait: the caller puts the window back as
		 * a handshake that failed does */
		if (smq_sleep_ms(1)) {
			smq_maint_holdout(w, board, tag, here, queue);
			return -EINTR;
		}
	}
	return 0;
}

/* Invalidate and wait; then wake every sleeper of the old layout (once
 * every mark is down, none can arm a sleep any more, so none is missed).
 * On failure the window is as it was. */
int smq_maint_quiesce(struct smq_window *w, const struct smq_layout *old,
		   uint64_t from)
{
	struct saved_notices sv;

	invalidate(w, &sv, from);
	TEST_HOOK(SMQ_HOOK_MAINT_TOLD);
	int err = smq_maint_handshake(w, -1);
	if (err && old)
		restore(w, &sv);
	if (err)
		return err;
	if (old)
		smq_maint_wake_all(w, old, -1);
	STORE(&smq_maint_sb(w)->maint_phase, SMQ_MAINT_WRITING);
	TEST_HOOK(SMQ_HOOK_MAINT_WRITING);
	return 0;
}

/* A generation newer than any the superblock or a notice has seen. */
uint64_t smq_maint_next_generation(struct smq_window *w)
{
	uint64_t gen = LOAD(&smq_maint_sb(w)->generation);

	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++)
		if (smq_maint_ctl_mapped(w, b)) {
			struct smq_far c = smq_maint_ctl(w, b);
			uint64_t n = FAR_LOAD(w, SMQ_FAR_MAINTAIN, c,
					      struct smq_ctl, notice.generation);
			gen = n > gen ? n : gen;
		}
	gen = gen > LOAD(&smq_maint_sb(w)->maint_from) ? gen
					       : LOAD(&smq_maint_sb(w)->maint_from);
	/* generations stay below 2^32: an epoch is the generation << 32 */
	return gen + 1 <= SMQ_GENERATION_MAX ? gen + 1 : 1;
}

void smq_maint_zero(struct smq_window *w, uint64_t off, uint64_t len)
{
	uint8_t *p = smq_map_at(&w->map, off, len);
	if (p)
		memset(p, 0, (size_t)len);
}

/* Publish a generation: board table emptied, every notice told, the
 * superblock last. */
void smq_maint_publish(struct smq_window *w, uint64_t gen)
{
	struct smq_sb *sb = smq_maint_sb(w);

	smq_maint_zero(w, SMQ_BOARD_TABLE, SMQ_MAX_BOARDS * SMQ_SLOT_SIZE);
	w->map.order->publish();
	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++) {
		if (!smq_maint_ctl_mapped(w, b))
			continue;
		struct smq_far c = smq_maint_ctl(w, b);
		uint64_t g = b < w->lay.boards ? gen : 0;
		FAR_STORE(c, struct smq_ctl, notice.system_state,
			  SMQ_SYS_FORMATTED);
		FAR_STORE(c, struct smq_ctl, notice.check,
			  g ? smq_notice_check(g, b) : 0);
		FAR_STORE_REL(c, struct smq_ctl, notice.generation, g);
	}
	STORE(&sb->format_time_ns, smq_realtime_ns());
	STORE(&sb->system_state, SMQ_SYS_FORMATTED);
	STORE_REL(&sb->generation, gen);
	w->generation = gen;
	w->check = smq_notice_check(gen, w->board);
	w->ctl = smq_map_at(&w->map, lay_ctl(w->board), SMQ_CTL_SIZE);
}

/* Queue q's epoch: in its rx line and, as each sender's notice of a
 * clear, in the sender's lane_wake line. */
void smq_maint_set_epoch(struct smq_window *w, const struct smq_layout *l,
		      unsigned q, uint64_t epoch)
{
	for (unsigned k = 0; k < lay_lanes(l, q); k++) {
		unsigned s = lay_lane_board(l, q, k);
		FAR_STORE(smq_far(w, lay_lane_wake(l, s, q)),
			  struct smq_lane_wake, queue_epoch, epoch);
	}
	FAR_STORE_REL(smq_far(w, l->rx[q]), struct smq_rx, epoch, epoch);
}

/* The window as it is now, not as we attached to it: its layout, mapped
 * whole, validated.  0, or why not: -EBUSY if another process of board 0
 * is re-formatting it (we hold no lock yet). */
static int reread_once(struct smq_window *w, struct smq_layout *l)
{
	struct smq_view v = smq_window_view(w);
	const struct smq_sb *sb = smq_view_at(&v, 0, sizeof(*sb));
	uint64_t gen = sb ? LOAD_ACQ(&sb->generation) : 0;
	int err = smq_check_layout(&v, l, NULL);

	if (err)
		return smq_confirm_fault(w, sb, gen, err);
	err = w->map.tp->map_layout(&w->map, l, false);
	smq_layout_free(l);
	if (err)
		return smq_confirm_fault(w, smq_maint_sb(w), gen, err);
	v = smq_window_view(w);
	return smq_confirm_fault(w, smq_maint_sb(w), gen, smq_check_static(&v, l, NULL));
}

int smq_maint_reread(struct smq_window *w, struct smq_layout *l)
{
	int err = -ESTALE;

	for (int tries = 0; tries < 3 && err == -ESTALE; tries++)
		err = reread_once(w, l);
	return err;
}

/* ---- what they empty ---- */

/* The messages waiting in queue q: each lane's published top against the
 * receiver's bottom, both in the receiver's region (read across the bus:
 * part of the maintenance exception), at most a ring a lane. */
static uint64_t queued_in(struct smq_window *w, const struct smq_layout *l,
			  unsigned q)
{
	struct smq_far bottoms = smq_far(w, lay_bottoms(l, q));
	uint64_t n = 0;

	if (!bottoms.far_)
		return 0;
	for (unsigned k = 0; k < lay_lanes(l, q); k++) {
		struct smq_far in = smq_far(w, lay_lane_in_k(l, q, k));
		if (!in.far_)
			continue;
		uint64_t top = FAR_LOAD(w, SMQ_FAR_MAINTAIN, in,
					struct smq_lane_in, top);
		uint64_t bottom = FAR_LOAD_WORD(w, SMQ_FAR_MAINTAIN,
						smq_far_offset(bottoms, 8ull * k),
						uint64_t);
		uint64_t held = top > bottom ? top - bottom : 0;
		n += held < lay_entries(l, q) ? held : lay_entries(l, q);
	}
	return n;
}

/* Queue q's n messages, added to what e says was emptied. */
static void emptied_add(struct smq_emptied *e, unsigned q, uint64_t n)
{
	e->known = 1;
	if (!n)
		return;
	e->queues++;
	e->messages += n;
	/* the most, most first; a tie keeps the lower queue first */
	unsigned i = e->listed;
	while (i > 0 && e->most[i - 1].messages < n) {
		if (i < SMQ_EMPTIED_MOST)
			e->most[i] = e->most[i - 1];
		i--;
	}
	if (i < SMQ_EMPTIED_MOST) {
		e->most[i].queue = q;
		e->most[i].pad = 0;
		e->most[i].messages = n;
		if (e->listed < SMQ_EMPTIED_MOST)
			e->listed++;
	}
}

uint64_t smq_maint_count(struct smq_window *w, const struct smq_layout *l,
			 int only, struct smq_emptied *e)
{
	uint64_t all = 0;

	e->known = 1;
	for (unsigned q = 0; q < l->queues; q++) {
		if (only >= 0 && q != (unsigned)only)
			continue;
		uint64_t n = queued_in(w, l, q);
		emptied_add(e, q, n);
		all += n;
	}
	return all;
}

void smq_maint_journal(struct smq_window *w, uint16_t kind, uint64_t from,
		       const struct smq_emptied *e)
{
	smq_journal(w, kind, 0, SMQ_NO_QUEUE, from, e->messages, e->queues);
	for (uint32_t i = 0; i < e->listed; i++)
		smq_journal(w, SMQ_JOURNAL_EMPTIED, 0, e->most[i].queue, 0,
			    e->most[i].messages, 0);
}

/* What was emptied, added to the superblock's count of all time. */
void smq_maint_emptied(struct smq_window *w, const struct smq_emptied *e)
{
	struct smq_sb *sb = smq_maint_sb(w);

	w->emptied = *e;
	if (sb && e->messages)
		STORE(&sb->emptied, LOAD(&sb->emptied) + e->messages);
}

int smq_emptied(struct smq_window *w, struct smq_emptied *e, size_t size)
{
	if (!w || !e || size < SMQ_LEAST_EMPTIED)
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	return smq_struct_out(e, size, &w->emptied, sizeof(w->emptied));
}

/* ---- refusals ---- */

/* -SMQ_EATWORK if a process other than ours is at work on what a
 * maintenance would empty (smq_check_at_work()).  One of another host
 * seen once cannot be judged yet: the handle watches its board until it
 * can (the heartbeat's two looks), and asks again, once. */
int smq_maint_at_work(struct smq_window *w, const struct smq_layout *l,
		      int only)
{
	int err = smq_check_at_work(w, l, only);

	if (err == -SMQ_EATWORK && !smq_at_work_known(w, l, only)) {
		smq_watch(w, SMQ_WATCH_BOARDS, SMQ_WAIT_FOREVER);
		err = smq_check_at_work(w, l, only);
	}
	return err;
}

/* A dry run's look at the lock: -EALREADY if a live process of this host
 * holds it (the real call would wait for nobody: it refuses). */
int smq_maint_lock_taken(struct smq_window *w)
{
	struct smq_sb *sb = smq_maint_sb(w);
	uint64_t cur = sb ? LOAD(&sb->maint_owner) : 0;

	if (!cur || LOAD(&sb->maint_boot) != w->boot || !smq_tag_alive(cur))
		return 0;
	smq_maint_holdout(w, 0, cur, true, -1);
	return -EALREADY;
}
