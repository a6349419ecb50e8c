/* Maintenance: init and clear, by handshake (smq(7), GENERATIONS).
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
#include "window.h"

static struct smq_sb *sb_of(struct smq_window *w)
{
	return smq_map_at(&w->map, 0, SMQ_SB_SIZE);
}

static struct smq_far ctl_far(struct smq_window *w, unsigned b)
{
	return smq_far(w, lay_ctl(b));
}

/* ---- the maintenance lock: one board-0 process at a time ---- */

/* queue: of the call that held on, -1 none or a window handle's */
static void holdout_from(struct smq_window *w, unsigned board, uint64_t tag,
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
static int maint_lock(struct smq_window *w, bool trusted)
{
	struct smq_sb *sb = sb_of(w);
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
	holdout_from(w, 0, cur, LOAD(&sb->maint_boot) == w->boot, -1);
	return -EALREADY;
}

static void maint_unlock(struct smq_window *w)
{
	struct smq_sb *sb = sb_of(w);

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

static bool ctl_mapped(struct smq_window *w, unsigned b)
{
	return smq_map_at(&w->map, lay_ctl(b), SMQ_CTL_SIZE) != NULL;
}

/* Wakes every waiter of the old layout (of queue only, if only >= 0), so
 * that it sees its notice stale at once instead of at the end of its
 * sleep.  Reads the waiters' words and addresses: part of the maintenance
 * exception. */
static void wake_all(struct smq_window *w, const struct smq_layout *old,
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
	struct smq_sb *sb = sb_of(w);

	sv->sys_state = LOAD(&sb->system_state);
	STORE(&sb->maint_queue, 0);  /* the whole window, even over one left */
	STORE(&sb->maint_from, from);
	STORE(&sb->maint_phase, SMQ_MAINT_WAITING);
	STORE(&sb->system_state, SMQ_SYS_FORMATTING);
	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++) {
		struct smq_far c = ctl_far(w, b);
		if (!ctl_mapped(w, b))
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
	struct smq_sb *sb = sb_of(w);

	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++) {
		struct smq_far c = ctl_far(w, b);
		if (!ctl_mapped(w, b))
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
		if (!ctl_mapped(w, b))
			continue;
		struct smq_far c = ctl_far(w, b);
		for (unsigned i = 0; i < SMQ_SLOTS; i++) {
			struct smq_far s = smq_far_offset(c,
				offsetof(struct smq_ctl, slot[i]));
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
		if (!ctl_mapped(w, b))
			continue;
		struct smq_far c = ctl_far(w, b);
		for (unsigned i = 0; i < SMQ_SLOTS; i++) {
			struct smq_far s = smq_far_offset(c,
				offsetof(struct smq_ctl, slot[i]));
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

static int handshake(struct smq_window *w, int only)
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
			holdout_from(w, board, tag, here, queue);
			return -SMQ_EHELD;
		}
		smq_sleep_ms(1);
	}
	return 0;
}

/* Invalidate and wait; then wake every sleeper of the old layout (once
 * every mark is down, none can arm a sleep any more, so none is missed).
 * On failure the window is as it was. */
static int quiesce(struct smq_window *w, const struct smq_layout *old,
		   uint64_t from)
{
	struct saved_notices sv;

	invalidate(w, &sv, from);
	TEST_HOOK(SMQ_HOOK_MAINT_TOLD);
	int err = handshake(w, -1);
	if (err && old)
		restore(w, &sv);
	if (err)
		return err;
	if (old)
		wake_all(w, old, -1);
	STORE(&sb_of(w)->maint_phase, SMQ_MAINT_WRITING);
	TEST_HOOK(SMQ_HOOK_MAINT_WRITING);
	return 0;
}

/* A generation newer than any the superblock or a notice has seen. */
static uint64_t next_generation(struct smq_window *w)
{
	uint64_t gen = LOAD(&sb_of(w)->generation);

	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++)
		if (ctl_mapped(w, b)) {
			struct smq_far c = ctl_far(w, b);
			uint64_t n = FAR_LOAD(w, SMQ_FAR_MAINTAIN, c,
					      struct smq_ctl, notice.generation);
			gen = n > gen ? n : gen;
		}
	gen = gen > LOAD(&sb_of(w)->maint_from) ? gen
					       : LOAD(&sb_of(w)->maint_from);
	/* generations stay below 2^32: an epoch is the generation << 32 */
	return gen + 1 <= SMQ_GENERATION_MAX ? gen + 1 : 1;
}

static void far_zero(struct smq_window *w, uint64_t off, uint64_t len)
{
	uint8_t *p = smq_map_at(&w->map, off, len);
	if (p)
		memset(p, 0, (size_t)len);
}

/* Publish a generation: board table emptied, every notice told, the
 * superblock last. */
static void publish(struct smq_window *w, uint64_t gen)
{
	struct smq_sb *sb = sb_of(w);

	far_zero(w, SMQ_BOARD_TABLE, SMQ_MAX_BOARDS * SMQ_SLOT_SIZE);
	w->map.order->publish();
	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++) {
		if (!ctl_mapped(w, b))
			continue;
		struct smq_far c = ctl_far(w, b);
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

/* ---- init ---- */

/* Data that is not a window: neither our magic, nor a superblock of ours
 * whose magic was zeroed (by an init that was stopped) or damaged, nor a
 * first page all zero. */
bool smq_foreign_data(struct smq_window *w)
{
	const uint8_t *p = smq_map_at(&w->map, 0, 8);
	const struct smq_sb *sb = smq_map_at(&w->map, 0, SMQ_SB_SIZE);

	if (!w->map.size)
		return false;
	if (p && !memcmp(p, SMQ_MAGIC, 8))
		return false;
	/* a superblock of ours, of any version so far, whose magic init had
	 * zeroed: versions 1 and 2 kept the line size at byte 40 */
	uint32_t version = sb ? LOAD(&sb->version) : 0;
	uint32_t sb_size = sb ? LOAD(&sb->sb_size) : 0;
	const uint32_t *v2_line = smq_map_at(&w->map, 40, 4);
	if (version >= 1 && version <= 2 && v2_line && *v2_line == SMQ_LINE &&
	    (sb_size == SMQ_SB_SIZE || sb_size == 256))
		return false;
	if (version == SMQ_FORMAT_VERSION && sb_size == SMQ_SB_SIZE)
		return false;
	uint64_t n = w->map.size < SMQ_PAGE ? w->map.size : SMQ_PAGE;
	const uint8_t *all = smq_map_at(&w->map, 0, n);
	for (uint64_t i = 0; all && i < n; i++)
		if (all[i])
			return true;
	return !all;
}

/* An smq window of our version or of version 2 (whose control blocks,
 * notices and marks are where and what ours are), or an init of one that
 * was stopped: its control area may hold marks of live handles. */
static bool ours(struct smq_window *w)
{
	const struct smq_sb *sb = smq_map_at(&w->map, 0, SMQ_SB_SIZE);
	uint32_t version = sb ? LOAD(&sb->version) : 0;
	return (version == 2 || version == SMQ_FORMAT_VERSION) &&
	       LOAD(&sb->sb_size) == SMQ_SB_SIZE;
}

/* Queue q's epoch: in its rx line and, as each sender's notice of a
 * clear, in the sender's lane_wake line. */
static void set_epoch(struct smq_window *w, const struct smq_layout *l,
		      unsigned q, uint64_t epoch)
{
	for (unsigned k = 0; k < lay_lanes(l, q); k++) {
		unsigned s = lay_lane_board(l, q, k);
		FAR_STORE(smq_far(w, lay_lane_wake(l, s, q)),
			  struct smq_lane_wake, queue_epoch, epoch);
	}
	FAR_STORE_REL(smq_far(w, l->rx[q]), struct smq_rx, epoch, epoch);
}

/* Feature groups: the table at the start of tables_extra (zeroed). */
static void write_groups(struct smq_window *w, const struct smq_layout *l,
			 const struct smq_shape *sh)
{
	uint64_t at = lay_groups(l);
	uint32_t first = 0;

	if (!at)
		return;
	struct smq_group_head *h = smq_map_at(&w->map, at, l->tables_extra);
	struct smq_group_desc *d = (void *)(h + 1);
	uint32_t *member = (uint32_t *)(d + sh->ngroups);
	for (uint32_t i = 0; i < sh->ngroups; i++) {
		const struct smq_group_def *g = &sh->groups[i];
		memcpy(d[i].name, g->name, strlen(g->name));
		d[i].first = first;
		d[i].count = g->count;
		for (uint32_t k = 0; k < g->count; k++)
			member[first + k] = g->queues[k];
		first += g->count;
	}
	h->groups = sh->ngroups;
	h->members = first;
}

/* Feature scratch: each area's head line and its region's guard words,
 * whose values follow from their offsets alone (smq(7)); the data areas
 * stay zero, as the bodies were zeroed. */
static void write_scratch(struct smq_window *w, const struct smq_layout *l)
{
	for (unsigned b = 0; b < l->boards; b++) {
		uint64_t off = lay_scratch_head(l, b);
		struct smq_scratch_head *h = smq_map_at(&w->map, off, SMQ_LINE);
		uint64_t *guard = smq_map_at(&w->map, lay_guard(l, b), SMQ_LINE);
		memcpy(&h->magic, SMQ_SCRATCH_MAGIC, sizeof(h->magic));
		h->board = b;
		h->size = SMQ_SCRATCH_SIZE;
		h->offset = off;
		h->check = smq_scratch_word(off +
					    offsetof(struct smq_scratch_head,
						     check));
		for (unsigned i = 0; i < SMQ_GUARD_WORDS; i++)
			guard[i] = smq_scratch_word(lay_guard(l, b) + 8 * i);
	}
}

static void write_format(struct smq_window *w, const struct smq_layout *l,
			 const struct smq_shape *sh, uint64_t gen)
{
	struct smq_sb *sb = sb_of(w);

	STORE(&sb->magic_word, 0);
	w->map.order->full();
	/* superblock lines 0, 1 and 3 (line 2 is the lock we hold), with the
	 * constants of the format at once: killed from here on, the window
	 * still shows itself ours to the next init */
	far_zero(w, 8, 2 * SMQ_LINE - 8);
	far_zero(w, offsetof(struct smq_sb, pad4), sizeof(sb->pad4));
	/* line 3 and every line a feature could take: a reader tells a
	 * feature by its bit, and finds zeros where none is */
	far_zero(w, SB_EXTRA_LINE, SMQ_SB_SIZE - SB_EXTRA_LINE);
	sb->version = SMQ_FORMAT_VERSION;
	sb->sb_size = SMQ_SB_SIZE;
	w->map.order->publish();
	far_zero(w, SMQ_BOARD_TABLE, l->tables_end - SMQ_BOARD_TABLE);
	for (unsigned b = 0; b < l->boards; b++)
		far_zero(w, l->body[b], l->body_size[b]);
	sb->version = SMQ_FORMAT_VERSION;
	sb->sb_size = SMQ_SB_SIZE;
	sb->features_incompat = l->features;
	sb->features_compat = l->compat;
	sb->boards = l->boards;
	sb->queues = l->queues;
	sb->entries = l->entries;
	sb->entry_size = l->entry_size;
	sb->window_size = l->size;
	sb->diag_queues = l->diag_queues;
	sb->diag_entries = l->diag_entries;
	sb->diag_entry_size = l->diag_entry_size;
	sb->tables_extra = l->tables_extra;
	sb->body_extra = l->body_extra;
	uint64_t epoch = gen << SMQ_EPOCH_SHIFT;
	sb->epoch_last = epoch;
	struct smq_qdesc *qt = smq_map_at(&w->map, SMQ_QUEUE_TABLE,
					  (uint64_t)l->queues * sizeof(*qt));
	for (unsigned q = 0; q < l->queues; q++) {
		struct smq_rx *rx = smq_map_at(&w->map, l->rx[q], SMQ_LINE);
		qt[q].index = q;
		qt[q].receiver = l->receiver[q];
		qt[q].flags = l->qflags[q];
		qt[q].senders = l->senders[q];
		rx->index = q;
		set_epoch(w, l, q, epoch);
	}
	write_groups(w, l, sh);
	if (l->compat & SMQ_FEATURE_SCRATCH)
		write_scratch(w, l);
	struct smq_view v = smq_window_view(w);
	sb->checksum = smq_geometry_checksum(&v, l->queues);
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
		return smq_confirm_fault(w, sb_of(w), gen, err);
	v = smq_window_view(w);
	return smq_confirm_fault(w, sb_of(w), gen, smq_check_static(&v, l, NULL));
}

static int reread(struct smq_window *w, struct smq_layout *l)
{
	int err = -ESTALE;

	for (int tries = 0; tries < 3 && err == -ESTALE; tries++)
		err = reread_once(w, l);
	return err;
}

/* No handle of ours can be attached to what is not our format: its
 * control area is whatever lay there, and is zeroed.  In our format, a
 * mark of a kind or role no handle has is damage, and is freed. */
static void tidy_control_area(struct smq_window *w, bool ours_before)
{
	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++) {
		struct smq_ctl *c = smq_map_at(&w->map, lay_ctl(b), SMQ_CTL_SIZE);
		if (!c)
			continue;
		if (!ours_before) {
			memset(c, 0, SMQ_CTL_SIZE);
			continue;
		}
		for (unsigned i = 0; i < SMQ_SLOTS; i++)
			if (LOAD(&c->slot[i].kind) > SMQ_SLOT_QUEUE ||
			    LOAD(&c->slot[i].role) > SMQ_RECEIVER)
				memset(&c->slot[i], 0, sizeof(c->slot[i]));
	}
}

int smq_init(struct smq_window *w, const struct smq_geometry *gin,
	     size_t size)
{
	struct smq_shape sh = { { 0, 0, 0, 0, NULL }, NULL, 0, NULL, 0 };
	int err;

	if (!w)
		return -EINVAL;
	if ((err = smq_struct_in(&sh.geometry, sizeof(sh.geometry), gin, size)))
		return err;
	return smq_init_shape(w, &sh, sizeof(sh));
}

int smq_init_shape(struct smq_window *w, const struct smq_shape *sin,
		   size_t size)
{
	struct smq_layout lay, old;
	struct smq_shape sh;
	const struct smq_geometry *g = &sh.geometry;
	int err;

	if (!w)
		return -EINVAL;
	if ((err = smq_struct_in(&sh, sizeof(sh), sin, size)))
		return err;
	if (w->readonly)
		return -EROFS;
	if (w->board != 0)
		return -EPERM;
	/* a window whose queues carry only empty messages is a mistake:
	 * the format reads one (smq(7)), init does not make one */
	if (!g->entry_size)
		return -EINVAL;
	if ((err = smq_layout_of_shape(&lay, &sh)))
		return err == -SMQ_EGEOMETRY ? -EINVAL : err;
	if (w->map.user_data && !w->map.force && smq_foreign_data(w)) {
		smq_layout_free(&lay);
		return -SMQ_ENOTWINDOW;
	}
	/* a window that cannot grow (a BAR, an object another program
	 * sized): refused before the lock or a notice is written */
	if (w->map.fixed_size && lay.size > w->map.fixed_size) {
		smq_layout_free(&lay);
		return -ENOSPC;
	}
	int rerr = reread(w, &old);
	bool valid_old = rerr == 0;
	bool keep_control = ours(w);
	/* a window of ours this library cannot read (another version, a
	 * feature it does not know): who is at work there cannot be told,
	 * nor what a newer smq keeps in it; only a forced init overwrites it */
	if ((rerr == -SMQ_EVERSION || rerr == -SMQ_EFEATURE) && !w->map.force) {
		err = rerr;
		goto out;
	}
	/* nobody at work is formatted under, unless forced */
	if (valid_old && !w->map.force &&
	    (err = smq_check_at_work(w, &old, -1)))
		goto out;
	/* A new window: room for the superblock (and its lock) first. */
	if ((!sb_of(w) || !ctl_mapped(w, SMQ_MAX_BOARDS - 1)) &&
	    (err = w->map.tp->map_layout(&w->map, &lay, true)))
		goto out;
	w->ctl = smq_map_at(&w->map, lay_ctl(w->board), SMQ_CTL_SIZE);
	if ((err = maint_lock(w, valid_old)))
		goto out;
	TEST_HOOK(SMQ_HOOK_MAINT_LOCKED);
	tidy_control_area(w, keep_control);
	uint64_t gen = keep_control ? next_generation(w) : 1;
	if ((err = quiesce(w, valid_old ? &old : NULL, gen - 1)))
		goto unlock;
	if ((err = w->map.tp->map_layout(&w->map, &lay, true)))
		goto unlock;  /* left invalidated: the next init finishes */
	w->valid = false;
	write_format(w, &lay, &sh, gen);
	TEST_HOOK(SMQ_HOOK_MAINT_FORMATTED);
	smq_layout_free(&w->lay);
	w->lay = lay;
	memset(&lay, 0, sizeof(lay));  /* w->lay holds its arrays now */
	publish(w, gen);
	uint64_t magic;
	memcpy(&magic, SMQ_MAGIC, sizeof(magic));
	STORE_REL(&sb_of(w)->magic_word, magic);
	w->map.order->full();
	w->valid = true;
unlock:
	maint_unlock(w);
out:
	if (valid_old)
		smq_layout_free(&old);
	smq_layout_free(&lay);
	return err;
}

/* ---- clear ---- */

/* Empties queue q and gives it epoch: its lanes, its rx area (but the
 * queue's index, which an attach checks meanwhile), so that entries left
 * in the rings never verify. */
static void clear_queue(struct smq_window *w, const struct smq_layout *l,
			unsigned q, uint64_t epoch)
{
	for (unsigned k = 0; k < lay_lanes(l, q); k++) {
		unsigned s = lay_lane_board(l, q, k);
		far_zero(w, lay_lane_out(l, s, q), SMQ_LANE_LINES * SMQ_LINE);
		far_zero(w, lay_lane_in_k(l, q, k), SMQ_LINE);
		far_zero(w, lay_lane_ask_k(l, q, k), SMQ_LINE);
	}
	far_zero(w, l->rx[q] + 4, lay_lane_in_k(l, q, 0) - l->rx[q] - 4);
	w->map.order->publish();
	set_epoch(w, l, q, epoch);
}

/* Whether a board's notice was told of a maintenance that did not
 * finish (its generation is not the superblock's). */
static bool notices_told(struct smq_window *w, const struct smq_layout *l)
{
	uint64_t gen = LOAD(&sb_of(w)->generation);

	for (unsigned b = 0; b < l->boards; b++)
		if (FAR_LOAD(w, SMQ_FAR_MAINTAIN, ctl_far(w, b), struct smq_ctl,
			     notice.generation) != gen)
			return true;
	return false;
}

/* One queue, by handshake with the calls on it alone: its receiver's and
 * senders' notices (the epoch) say "being cleared", every mark that may
 * cover a call on it comes down, it is emptied under a new epoch.  The
 * generation, the board table and every other queue stay as they are. */
static int clear_one(struct smq_window *w, const struct smq_layout *l,
		     unsigned q)
{
	struct smq_sb *sb = sb_of(w);
	uint64_t old = FAR_LOAD(w, SMQ_FAR_MAINTAIN, smq_far(w, l->rx[q]),
				struct smq_rx, epoch);
	int err;

	STORE(&sb->maint_queue, q + 1);
	STORE(&sb->maint_from, LOAD(&sb->generation));
	STORE(&sb->maint_phase, SMQ_MAINT_WAITING);
	/* the phase before any epoch: whoever finds an epoch 0 or copies
	 * that disagree finds the phase too */
	w->map.order->publish();
	set_epoch(w, l, q, 0);
	w->map.order->full();
	TEST_HOOK(SMQ_HOOK_MAINT_TOLD);
	if ((err = handshake(w, (int)q))) {
		set_epoch(w, l, q, old);
		return err;
	}
	wake_all(w, l, (int)q);
	STORE(&sb->maint_phase, SMQ_MAINT_WRITING);
	TEST_HOOK(SMQ_HOOK_MAINT_WRITING);
	uint64_t epoch = LOAD(&sb->epoch_last) + 1;
	STORE(&sb->epoch_last, epoch);
	clear_queue(w, l, q, epoch);
	/* every epoch before the phase comes down */
	w->map.order->publish();
	TEST_HOOK(SMQ_HOOK_MAINT_FORMATTED);
	return 0;
}

/* Every queue, under a new generation: every board attaches and
 * announces itself again. */
static int clear_all(struct smq_window *w, struct smq_layout *l)
{
	uint64_t gen = next_generation(w);
	int err;

	if ((err = quiesce(w, l, gen - 1)))
		return err;
	for (unsigned q = 0; q < l->queues; q++)
		clear_queue(w, l, q, gen << SMQ_EPOCH_SHIFT);
	STORE(&sb_of(w)->epoch_last, gen << SMQ_EPOCH_SHIFT);
	w->map.order->publish();
	TEST_HOOK(SMQ_HOOK_MAINT_FORMATTED);
	smq_layout_free(&w->lay);
	w->lay = *l;
	memset(l, 0, sizeof(*l));  /* w->lay holds its arrays now */
	w->valid = true;
	publish(w, gen);
	return 0;
}

int smq_clear(struct smq_window *w, int queue)
{
	struct smq_layout l;
	int err;

	if (!w)
		return -EINVAL;
	if (w->readonly)
		return -EROFS;
	if (w->board != 0)
		return -EPERM;
	/* The window as it is now: a clear or init that was killed left the
	 * notices stale, which is what this one finishes. */
	if ((err = reread(w, &l))) {
		if (err != -EBUSY)
			return err;
		/* an init under way: say whose, as the lock would */
		holdout_from(w, 0, LOAD(&sb_of(w)->maint_owner), true, -1);
		return -EALREADY;
	}
	if (queue >= (int)l.queues) {
		smq_layout_free(&l);
		return -EINVAL;
	}
	if ((err = maint_lock(w, true)))
		goto out;
	TEST_HOOK(SMQ_HOOK_MAINT_LOCKED);
	/* Under the lock, so that no other finishes it meanwhile: a
	 * maintenance whose process died left its phase: of the whole window
	 * (its notices told), finished by clearing the whole window; of one
	 * queue, by clearing that queue too. */
	struct smq_sb *sb = sb_of(w);
	uint32_t left = LOAD(&sb->maint_phase) != SMQ_MAINT_NONE
			? LOAD(&sb->maint_queue) : 0;
	bool whole = queue < 0 || notices_told(w, &l) ||
		     (LOAD(&sb->maint_phase) != SMQ_MAINT_NONE && !left);
	/* nobody at work on what it empties, unless forced: refused, the
	 * lock goes back, and what a dead one left stays for the next */
	if (!w->map.force &&
	    ((err = smq_check_at_work(w, &l, whole ? -1 : queue)) ||
	     (left && left - 1 != (unsigned)queue &&
	      (err = smq_check_at_work(w, &l, (int)left - 1))))) {
		w->map.order->publish();
		STORE_REL(&sb->maint_owner, 0);
		goto out;
	}
	bool finishing = false;
	if (whole)
		err = clear_all(w, &l);
	else if (left && left - 1 != (unsigned)queue && left - 1 < l.queues &&
		 (err = clear_one(w, &l, left - 1)))
		finishing = true;
	else
		err = clear_one(w, &l, (unsigned)queue);
	if (finishing) {
		/* the clear a dead one left is still unfinished: its phase
		 * and queue stay, for the next clear to finish (its epoch is
		 * back to what it found, 0); only the lock goes back */
		w->map.order->publish();
		STORE_REL(&sb->maint_owner, 0);
	} else {
		maint_unlock(w);
	}
out:
	smq_layout_free(&l);
	return err;
}
