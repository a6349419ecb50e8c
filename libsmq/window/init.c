/* init: a new layout, by handshake with the boards of the old one
 * (maintain.c), or its dry run: the same decision, nothing written. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include "maintain.h"

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

/* A number no other journal of this window had: random where the kernel
 * gives one, else this process, host and time mixed. */
static uint64_t new_incarnation(const struct smq_window *w)
{
	uint64_t x = 0;

	if (getrandom(&x, sizeof(x), GRND_NONBLOCK) != sizeof(x))
		x = w->tag ^ w->boot ^ smq_now_ns() ^ (smq_realtime_ns() << 17);
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	return x ^ (x >> 29) ? x ^ (x >> 29) : 1;
}

/* Feature journal: a journal made afresh for board b (its entries were
 * zeroed with the body), begun at sequence 1. */
static void make_journal(struct smq_window *w, const struct smq_layout *l,
			 unsigned b, uint64_t gen)
{
	struct smq_journal_head *h = smq_map_at(&w->map, lay_journal(l, b),
						 SMQ_LINE);

	memcpy(&h->magic, SMQ_JOURNAL_MAGIC, sizeof(h->magic));
	h->board = b;
	h->slots = l->journal;
	h->incarnation = new_incarnation(w);
	h->made_generation = gen;
	h->check = smq_journal_head_check(h);
	h->head = 1;
}

/* Board b's body zeroed, but for its journal when it is kept: the same
 * entries at the same place, made under an earlier format, which it
 * outlives (the journal says what happened across formats). */
static void zero_body(struct smq_window *w, const struct smq_layout *l,
		      unsigned b, bool keep_journal)
{
	if (!keep_journal || !l->journal) {
		smq_maint_zero(w, l->body[b], l->body_size[b]);
		return;
	}
	uint64_t j = lay_journal(l, b), jend = j + smq_journal_bytes(l->journal);
	smq_maint_zero(w, l->body[b], j - l->body[b]);
	smq_maint_zero(w, jend, l->body[b] + l->body_size[b] - jend);
}

static void write_format(struct smq_window *w, const struct smq_layout *l,
			 const struct smq_shape *sh, uint64_t gen,
			 const bool *keep_journal)
{
	struct smq_sb *sb = smq_maint_sb(w);

	STORE(&sb->magic_word, 0);
	w->map.order->full();
	/* superblock lines 0, 1 and 3 (line 2 is the lock we hold), with the
	 * constants of the format at once: killed from here on, the window
	 * still shows itself ours to the next init */
	smq_maint_zero(w, 8, 2 * SMQ_LINE - 8);
	smq_maint_zero(w, offsetof(struct smq_sb, pad4), sizeof(sb->pad4));
	/* line 3 and every line a feature could take: a reader tells a
	 * feature by its bit, and finds zeros where none is */
	smq_maint_zero(w, SB_EXTRA_LINE, SMQ_SB_SIZE - SB_EXTRA_LINE);
	sb->version = SMQ_FORMAT_VERSION;
	sb->sb_size = SMQ_SB_SIZE;
	w->map.order->publish();
	smq_maint_zero(w, SMQ_BOARD_TABLE, l->tables_end - SMQ_BOARD_TABLE);
	for (unsigned b = 0; b < l->boards; b++)
		zero_body(w, l, b, keep_journal[b]);
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
	sb->journal_entries = l->journal;
	for (unsigned b = 0; l->journal && b < l->boards; b++)
		if (!keep_journal[b])
			make_journal(w, l, b, gen);
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
		smq_maint_set_epoch(w, l, q, epoch);
	}
	write_groups(w, l, sh);
	if (l->compat & SMQ_FEATURE_SCRATCH)
		write_scratch(w, l);
	struct smq_view v = smq_window_view(w);
	sb->checksum = smq_geometry_checksum(&v, l->queues);
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
		struct smq_handle_slot *s;
		SMQ_EACH_SLOT(s, c)
			if (LOAD(&s->kind) > SMQ_SLOT_QUEUE ||
			    LOAD(&s->role) > SMQ_RECEIVER)
				memset(s, 0, sizeof(*s));
	}
}

int smq_init(struct smq_window *w, const struct smq_geometry *gin,
	     size_t size)
{
	struct smq_shape sh = { { 0, 0, 0, 0, NULL }, NULL, 0, NULL, 0, 0, 0 };
	int err;

	if (!w)
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	if ((err = smq_struct_in(&sh.geometry, sizeof(sh.geometry), gin, size,
				 SMQ_LEAST_GEOMETRY)))
		return err;
	return smq_init_shape(w, &sh, sizeof(sh));
}

/* What init may grow: an object of the filesystem, asked by name. */
static bool grows(const struct smq_window *w, const struct smq_shape *sh)
{
	return (sh->flags & SMQ_SHAPE_GROW) && w->map.user_data;
}

/* The arguments of an init: its shape (of at least least bytes, the
 * call's) and layout, or why not. */
static int init_args(struct smq_window *w, const struct smq_shape *sin,
		     size_t size, size_t least, struct smq_shape *sh,
		     struct smq_layout *lay)
{
	int err;

	if (!w)
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	if ((err = smq_struct_in(sh, sizeof(*sh), sin, size, least)))
		return err;
	if (w->readonly)
		return -EROFS;
	if (w->board != 0)
		return -EPERM;
	/* a window whose queues carry only empty messages is a mistake:
	 * the format reads one (smq(7)), init does not make one */
	if (!sh->geometry.entry_size)
		return -EINVAL;
	err = smq_layout_of_shape(lay, sh);
	return err == -SMQ_EGEOMETRY ? -EINVAL : err;
}

/* Everything init refuses before it writes: data that is not a window, a
 * window of fixed size too small, one of another format, processes at
 * work.  The real init and its dry run decide here alike.  *valid_old:
 * old holds the window's layout as it is (the caller frees it). */
static int init_refusal(struct smq_window *w, const struct smq_shape *sh,
			const struct smq_layout *lay, struct smq_layout *old,
			bool *valid_old)
{
	*valid_old = false;
	if (w->map.user_data && !w->map.force && smq_foreign_data(w))
		return -SMQ_ENOTWINDOW;
	/* a window that cannot grow (a BAR, an object another program
	 * sized, whatever --force says): refused before anything is
	 * written */
	uint64_t fixed = smq_fixed_size(w);
	if (fixed && lay->size > fixed && !grows(w, sh))
		return -ENOSPC;
	int rerr = smq_maint_reread(w, old);
	*valid_old = rerr == 0;
	/* a window of ours this library cannot read (another version, a
	 * feature it does not know): who is at work there cannot be told,
	 * nor what a newer smq keeps in it; only a forced init overwrites it */
	if ((rerr == -SMQ_EVERSION || rerr == -SMQ_EFEATURE) && !w->map.force)
		return rerr;
	/* nobody at work is formatted under, unless forced */
	if (*valid_old && !w->map.force)
		return smq_maint_at_work(w, old, -1);
	return 0;
}

int smq_init_dry_run(struct smq_window *w, const struct smq_shape *sin,
		     size_t size)
{
	struct smq_layout lay, old;
	struct smq_shape sh;
	struct smq_emptied e;
	bool valid_old;
	int err;

	if ((err = init_args(w, sin, size, SMQ_LEAST_SHAPE_1_2, &sh, &lay)))
		return err;
	memset(&e, 0, sizeof(e));
	err = init_refusal(w, &sh, &lay, &old, &valid_old);
	if (!err)
		err = smq_maint_lock_taken(w);
	if (!err && valid_old)
		smq_maint_count(w, &old, -1, &e);
	w->emptied = e;
	if (valid_old)
		smq_layout_free(&old);
	smq_layout_free(&lay);
	return err;
}

int smq_init_shape(struct smq_window *w, const struct smq_shape *sin,
		   size_t size)
{
	struct smq_layout lay, old;
	struct smq_shape sh;
	struct smq_emptied e;
	bool valid_old;
	int err;

	if ((err = init_args(w, sin, size, SMQ_LEAST_SHAPE, &sh, &lay)))
		return err;
	memset(&e, 0, sizeof(e));
	if ((err = init_refusal(w, &sh, &lay, &old, &valid_old)))
		goto out;
	bool keep_control = smq_window_ours(w);
	uint64_t fixed = smq_fixed_size(w);
	struct smq_sb *sb = smq_maint_sb(w);
	uint64_t emptied = sb && keep_control ? LOAD(&sb->emptied) : 0;
	if (fixed && lay.size > fixed) {
		/* grown by name: the object takes the layout's size, which
		 * stays its size from now on */
		w->map.fixed_size = 0;
		fixed = lay.size;
	}
	/* A new window: room for the superblock (and its lock) first. */
	if ((!sb || !smq_maint_ctl_mapped(w, SMQ_MAX_BOARDS - 1)) &&
	    (err = w->map.tp->map_layout(&w->map, &lay, true)))
		goto out;
	w->ctl = smq_map_at(&w->map, lay_ctl(w->board), SMQ_CTL_SIZE);
	if ((err = smq_maint_lock(w, valid_old)))
		goto out;
	TEST_HOOK(SMQ_HOOK_MAINT_LOCKED);
	tidy_control_area(w, keep_control);
	uint64_t gen = keep_control ? smq_maint_next_generation(w) : 1;
	if ((err = smq_maint_quiesce(w, valid_old ? &old : NULL, gen - 1)))
		goto unlock;
	/* every mark is down: what the old layout holds is what is emptied */
	if (valid_old)
		smq_maint_count(w, &old, -1, &e);
	if ((err = w->map.tp->map_layout(&w->map, &lay, true)))
		goto unlock;  /* left invalidated: the next init finishes */
	w->valid = false;
	bool keep[SMQ_MAX_BOARDS];
	for (unsigned b = 0; b < lay.boards; b++)
		keep[b] = valid_old && b < old.boards && lay.journal &&
			  old.journal == lay.journal &&
			  lay_journal(&old, b) == lay_journal(&lay, b);
	write_format(w, &lay, &sh, gen, keep);
	sb = smq_maint_sb(w);
	STORE(&sb->size_fixed, fixed);
	STORE(&sb->emptied, emptied);
	TEST_HOOK(SMQ_HOOK_MAINT_FORMATTED);
	smq_layout_free(&w->lay);
	w->lay = lay;
	memset(&lay, 0, sizeof(lay));  /* w->lay holds its arrays now */
	smq_maint_publish(w, gen);
	smq_maint_emptied(w, &e);
	uint64_t magic;
	memcpy(&magic, SMQ_MAGIC, sizeof(magic));
	STORE_REL(&smq_maint_sb(w)->magic_word, magic);
	w->map.order->full();
	w->valid = true;
	/* from 0: a window that was not one (or not one to read) */
	smq_maint_journal(w, SMQ_JOURNAL_FORMAT, valid_old ? gen - 1 : 0, &e);
unlock:
	smq_maint_unlock(w);
out:
	if (valid_old)
		smq_layout_free(&old);
	smq_layout_free(&lay);
	if (!err || err == -SMQ_EHELD)
		w->emptied = e;
	return err;
}
