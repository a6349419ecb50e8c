/* clear: every queue under a new generation, or one queue under a new
 * epoch, by handshake (maintain.c); or its dry run. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "maintain.h"

/* Empties queue q and gives it epoch: its lanes, its rx area (but the
 * queue's index, which an attach checks meanwhile), so that entries left
 * in the rings never verify. */
static void clear_queue(struct smq_window *w, const struct smq_layout *l,
			unsigned q, uint64_t epoch)
{
	for (unsigned k = 0; k < lay_lanes(l, q); k++) {
		unsigned s = lay_lane_board(l, q, k);
		smq_maint_zero(w, lay_lane_out(l, s, q), SMQ_LANE_LINES * SMQ_LINE);
		smq_maint_zero(w, lay_lane_in_k(l, q, k), SMQ_LINE);
		smq_maint_zero(w, lay_lane_ask_k(l, q, k), SMQ_LINE);
	}
	smq_maint_zero(w, l->rx[q] + 4, lay_lane_in_k(l, q, 0) - l->rx[q] - 4);
	w->map.order->publish();
	smq_maint_set_epoch(w, l, q, epoch);
}

/* Whether a board's notice was told of a maintenance that did not
 * finish (its generation is not the superblock's). */
static bool notices_told(struct smq_window *w, const struct smq_layout *l)
{
	uint64_t gen = LOAD(&smq_maint_sb(w)->generation);

	for (unsigned b = 0; b < l->boards; b++)
		if (FAR_LOAD(w, SMQ_FAR_MAINTAIN, smq_maint_ctl(w, b), struct smq_ctl,
			     notice.generation) != gen)
			return true;
	return false;
}

/* One queue, by handshake with the calls on it alone: its receiver's and
 * senders' notices (the epoch) say "being cleared", every mark that may
 * cover a call on it comes down, it is emptied under a new epoch.  The
 * generation, the board table and every other queue stay as they are. */
static int clear_one(struct smq_window *w, const struct smq_layout *l,
		     unsigned q, struct smq_emptied *e)
{
	struct smq_sb *sb = smq_maint_sb(w);
	uint64_t old = FAR_LOAD(w, SMQ_FAR_MAINTAIN, smq_far(w, l->rx[q]),
				struct smq_rx, epoch);
	int err;

	STORE(&sb->maint_queue, q + 1);
	STORE(&sb->maint_from, LOAD(&sb->generation));
	w->map.order->publish();  /* the queue before the phase (maintain.c) */
	STORE(&sb->maint_phase, SMQ_MAINT_WAITING);
	/* the phase before any epoch: whoever finds an epoch 0 or copies
	 * that disagree finds the phase too */
	w->map.order->publish();
	TEST_HOOK(SMQ_HOOK_MAINT_TELLING);
	smq_maint_set_epoch(w, l, q, 0);
	w->map.order->full();
	TEST_HOOK(SMQ_HOOK_MAINT_TOLD);
	if ((err = smq_maint_handshake(w, (int)q))) {
		smq_maint_set_epoch(w, l, q, old);
		return err;
	}
	smq_maint_wake_all(w, l, (int)q);
	/* every mark on it is down: what it holds is what is emptied */
	uint64_t emptied = smq_maint_count(w, l, (int)q, e);
	STORE(&sb->maint_phase, SMQ_MAINT_WRITING);
	TEST_HOOK(SMQ_HOOK_MAINT_WRITING);
	uint64_t epoch = LOAD(&sb->epoch_last) + 1;
	STORE(&sb->epoch_last, epoch);
	clear_queue(w, l, q, epoch);
	/* every epoch before the phase comes down */
	w->map.order->publish();
	TEST_HOOK(SMQ_HOOK_MAINT_FORMATTED);
	smq_journal(w, SMQ_JOURNAL_CLEAR_QUEUE, 0, q, epoch, emptied, old);
	return 0;
}

/* Every queue, under a new generation: every board attaches and
 * announces itself again. */
static int clear_all(struct smq_window *w, struct smq_layout *l,
		     struct smq_emptied *e)
{
	uint64_t gen = smq_maint_next_generation(w);
	int err;

	if ((err = smq_maint_quiesce(w, l, gen - 1)))
		return err;
	smq_maint_count(w, l, -1, e);
	for (unsigned q = 0; q < l->queues; q++)
		clear_queue(w, l, q, gen << SMQ_EPOCH_SHIFT);
	STORE(&smq_maint_sb(w)->epoch_last, gen << SMQ_EPOCH_SHIFT);
	w->map.order->publish();
	TEST_HOOK(SMQ_HOOK_MAINT_FORMATTED);
	smq_layout_free(&w->lay);
	w->lay = *l;
	memset(l, 0, sizeof(*l));  /* w->lay holds its arrays now */
	w->valid = true;
	smq_maint_publish(w, gen);
	smq_maint_journal(w, SMQ_JOURNAL_CLEAR, gen - 1, e);
	return 0;
}

/* What a clear of queue (every queue: -1) empties: the whole window when
 * it must (a maintenance of the whole window left unfinished, its notices
 * told), and the queue a clear that died left (left: q + 1, 0 none). */
struct clear_plan {
	bool whole;
	uint32_t left;
};

static void clear_plan(struct smq_window *w, const struct smq_layout *l,
		       int queue, struct clear_plan *p)
{
	struct smq_sb *sb = smq_maint_sb(w);
	bool phase = LOAD(&sb->maint_phase) != SMQ_MAINT_NONE;

	p->left = phase ? LOAD(&sb->maint_queue) : 0;
	p->whole = queue < 0 || notices_told(w, l) || (phase && !p->left);
	if (p->left && (p->left - 1 == (unsigned)queue || p->left - 1 >= l->queues))
		p->left = 0;
}

/* Nobody at work on what it empties, unless forced: the real clear and
 * its dry run decide here alike. */
static int clear_refusal(struct smq_window *w, const struct smq_layout *l,
			 int queue, const struct clear_plan *p)
{
	int err = 0;

	if (w->map.force)
		return 0;
	if ((err = smq_maint_at_work(w, l, p->whole ? -1 : queue)))
		return err;
	return p->left ? smq_maint_at_work(w, l, (int)p->left - 1) : 0;
}

/* The window as it is now (a clear or init that was killed left the
 * notices stale, which is what this one finishes), and the queue asked
 * for in it. */
static int clear_args(struct smq_window *w, int queue, struct smq_layout *l)
{
	int err;

	if (!w)
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	if (w->readonly)
		return -EROFS;
	if (w->board != 0)
		return -EPERM;
	if ((err = smq_maint_reread(w, l))) {
		if (err != -EBUSY)
			return err;
		/* an init under way: say whose, as the lock would */
		smq_maint_holdout(w, 0, LOAD(&smq_maint_sb(w)->maint_owner),
				  true, -1);
		return -EALREADY;
	}
	if (queue >= (int)l->queues) {
		smq_layout_free(l);
		return -EINVAL;
	}
	return 0;
}

/* The queue as the maintenance below takes it: < 0 every one.  A number
 * past an int's is past the last queue too (-EINVAL from clear_args). */
static int queue_asked(unsigned queue)
{
	return queue == SMQ_ALL_QUEUES ? -1 : queue > INT_MAX ? INT_MAX
						       : (int)queue;
}

int smq_clear_dry_run(struct smq_window *w, unsigned which)
{
	int queue = queue_asked(which);
	struct smq_layout l;
	struct clear_plan p;
	struct smq_emptied e;
	int err;

	if ((err = clear_args(w, queue, &l)))
		return err;
	memset(&e, 0, sizeof(e));
	clear_plan(w, &l, queue, &p);
	if (!(err = smq_maint_lock_taken(w)) &&
	    !(err = clear_refusal(w, &l, queue, &p))) {
		smq_maint_count(w, &l, p.whole ? -1 : queue, &e);
		if (!p.whole && p.left)
			smq_maint_count(w, &l, (int)p.left - 1, &e);
	}
	w->emptied = e;
	smq_layout_free(&l);
	return err;
}

int smq_clear(struct smq_window *w, unsigned which)
{
	int queue = queue_asked(which);
	struct smq_layout l;
	struct clear_plan p;
	struct smq_emptied e;
	int err;

	if ((err = clear_args(w, queue, &l)))
		return err;
	memset(&e, 0, sizeof(e));
	if ((err = smq_maint_lock(w, true)))
		goto out;
	TEST_HOOK(SMQ_HOOK_MAINT_LOCKED);
	/* Under the lock, so that no other finishes it meanwhile: a
	 * maintenance whose process died left its phase: of the whole window
	 * (its notices told), finished by clearing the whole window; of one
	 * queue, by clearing that queue too. */
	clear_plan(w, &l, queue, &p);
	struct smq_sb *sb = smq_maint_sb(w);
	/* refused: the lock goes back, and what a dead one left stays for
	 * the next */
	if ((err = clear_refusal(w, &l, queue, &p))) {
		w->map.order->publish();
		STORE_REL(&sb->maint_owner, 0);
		goto out;
	}
	bool finishing = false;
	if (p.whole)
		err = clear_all(w, &l, &e);
	else if (p.left && (err = clear_one(w, &l, p.left - 1, &e)))
		finishing = true;
	else
		err = clear_one(w, &l, (unsigned)queue, &e);
	if (finishing) {
		/* the clear a dead one left is still unfinished: its phase
		 * and queue stay, for the next clear to finish (its epoch is
		 * back to what it found, 0); only the lock goes back */
		w->map.order->publish();
		STORE_REL(&sb->maint_owner, 0);
	} else {
		smq_maint_unlock(w);
	}
	if (!err)
		smq_maint_emptied(w, &e);
out:
	smq_layout_free(&l);
	return err;
}
