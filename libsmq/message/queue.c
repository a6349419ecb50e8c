/* Queue handles: open and close.  A queue has one lane per sending board;
 * a lane's ring and top live in the receiver's region, its bottom and flow
 * control in the sender's, so each side reads only its own memory and
 * only writes across the bus (the SimpleMessageQueue paper, section 6.1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "queue.h"

#define DEFAULT_SPIN_NS 20000

/* Receiver handles of this process that share their window's mark (the
 * control block was full): they have no slot that names their queue. */
static unsigned slotless_receivers;

static void free_queue(struct smq_queue *q)
{
	struct smq_window *w = q->w;

	if (q->has_bell && !q->bell_lent && w->map.tp->bell_close)
		w->map.tp->bell_close(&w->map, &q->bell);
	if (!q->slot_shared)
		smq_slot_release(w, q->slot);
	else if (q->role == SMQ_RECEIVER)
		__atomic_fetch_sub(&slotless_receivers, 1, __ATOMIC_RELAXED);
	free(q->lane_board);
	free(q->fcs);
	free(q->wakes);
	free(q->outs);
	free(q->space_rung);
	free(q->heads);
	free(q->expect);
	free(q->keys);
	free(q);
}

static uint32_t ring_kinds(struct smq_window *w)
{
	return w->map.tp->ring_kinds ? w->map.tp->ring_kinds(&w->map) : 0;
}

/* A word at canonical offset off, as an open reads it: a load of our own
 * region, or a read of another board's across the bus, a named exception
 * of the open (smq(7), Opening a queue); later loads come after it. */
static uint64_t open_load(struct smq_window *w, uint64_t off)
{
	uint64_t v;

	if (smq_owner_of(&w->lay, off) == (int)w->board)
		v = LOAD((const uint64_t *)smq_near(w, off, sizeof(v)));
	else
		v = FAR_LOAD_WORD(w, SMQ_FAR_OPEN, smq_far(w, off), uint64_t);
	smq_consume(w->map.order);
	return v;
}

/* Lane s of queue i as validation checks it (smq(7), checks 22 to 25),
 * its words read in the order struct smq_lane_words gives, so that a
 * lane in use never fails.  look: the look made with no mark up. */
static int lane_fault(struct smq_window *w, unsigned i, unsigned s,
		      bool look)
{
	const struct smq_layout *l = &w->lay;
	struct smq_lane_words lw;

	lw.epoch = open_load(w, l->rx[i] + offsetof(struct smq_rx, epoch));
	lw.epoch_last = open_load(w, offsetof(struct smq_sb, epoch_last));
	lw.queue_epoch = open_load(w, lay_lane_wake(l, s, i) +
				   offsetof(struct smq_lane_wake, queue_epoch));
	lw.top = open_load(w, lay_lane_in(l, i, s));
	lw.sender_top = open_load(w, lay_lane_out(l, s, i));
	lw.flow_bottom = open_load(w, lay_lane_fc(l, s, i));
	lw.bottom = open_load(w, lay_bottoms(l, i) + 8ull * lay_lane(l, i, s));
	if (look)
		TEST_HOOK(SMQ_HOOK_OPEN_LOOK);
	lw.top_after = open_load(w, lay_lane_in(l, i, s));
	return smq_lane_fault(l, i, s, &lw, NULL);
}

/* A queue whose epoch is 0, or whose copies of it disagree, is being
 * cleared (-EBUSY), or was by a process that died (-SMQ_EINCOMPLETE);
 * with no maintenance under way, the window is damaged, and so is a lane
 * or a receive area that fails validation.  Reads the superblock (board
 * 0's) at open: a named exception. */
static int being_cleared(struct smq_window *w)
{
	struct smq_far sb = smq_far(w, 0);

	if (FAR_LOAD(w, SMQ_FAR_OPEN, sb, struct smq_sb, maint_phase) ==
	    SMQ_MAINT_NONE)
		return -SMQ_ECORRUPT;
	uint64_t owner = FAR_LOAD(w, SMQ_FAR_OPEN, sb, struct smq_sb,
				  maint_owner);
	return FAR_LOAD(w, SMQ_FAR_OPEN, sb, struct smq_sb, maint_boot) ==
		       w->boot && smq_tag_alive(owner) ? -EBUSY
						       : -SMQ_EINCOMPLETE;
}

/* What an open of queue i as role reads and writes, checked as
 * validation checks it, before the open writes it: the lanes it uses,
 * and a receiver's rx and rx_info lines (check 19).  Nothing that fails
 * validation is written, so that dump still finds it.  A fault is the
 * window's only if the notice, read after, is unchanged, and no
 * maintenance runs (it may be rewriting what we read). */
static int queue_fault(struct smq_window *w, unsigned i, enum smq_role role,
		       bool look)
{
	const struct smq_layout *l = &w->lay;
	int err = 0;

	if (role == SMQ_SENDER) {
		err = lane_fault(w, i, w->board, look);
	} else {
		const struct smq_rx *rx = smq_near(w, l->rx[i], SMQ_LINE);
		const struct smq_rx_info *ri =
			smq_near(w, lay_rx_info(l, i), SMQ_LINE);
		for (unsigned k = 0; !err && k < lay_lanes(l, i); k++)
			err = lane_fault(w, i, lay_lane_board(l, i, k), look);
		if (!err)
			err = smq_rx_fault(l, i, LOAD(&rx->index),
					   LOAD(&rx->cursor),
					   LOAD(&ri->waiting), NULL);
	}
	if (!err)
		return 0;
	smq_consume(w->map.order);
	return smq_stale(w) ? -ESTALE : being_cleared(w);
}

static int open_sender(struct smq_queue *q)
{
	struct smq_window *w = q->w;
	const struct smq_layout *l = &w->lay;
	unsigned b = w->board, i = q->index;

	q->lane = lay_lane(l, i, b);
	q->out = smq_near(w, lay_lane_out(l, b, i), SMQ_LINE);
	q->fc = smq_near(w, lay_lane_fc(l, b, i), SMQ_LINE);
	q->wake = smq_near(w, lay_lane_wake(l, b, i), SMQ_LINE);
	q->in = smq_far(w, lay_lane_in(l, i, b));
	q->ask = smq_far(w, lay_lane_ask(l, i, b));
	q->ring = smq_far(w, lay_ring(l, i, b));
	q->rbell = smq_far(w, lay_bell(l, i));
	/* the epoch from our own copy, which board 0 writes with the
	 * receiver's: at open, we read the receiver's too (a copy that
	 * disagrees would sign messages the receiver never takes) */
	q->epoch_word = &q->wake->queue_epoch;
	q->epoch = LOAD_ACQ(q->epoch_word);
	if (!q->epoch || q->epoch != FAR_LOAD(w, SMQ_FAR_OPEN,
					      smq_far(w, l->rx[i]),
					      struct smq_rx, epoch))
		return being_cleared(w);
	q->lock_tag = smq_tag_thread();
	/* acquire: the receiver's reads of the slots below bottom happen
	 * before we may write them (the copy was checked with the lane) */
	q->bottom_seen = LOAD_ACQ(&q->fc->bottom);
	q->ahead = smq_far_ahead(q->entries);
	q->may_skip = w->map.order->light &&
		      (w->lay.features & SMQ_FEATURE_MEMBARRIER);
	struct timespec soon;
	smq_deadline(&soon, 100);
	if (!smq_lane_lock(q, &soon)) {
		/* no send of this board moves the lane now: it is looked at
		 * again before the first write, as validation would */
		int err = queue_fault(w, i, SMQ_SENDER, false);
		if (err) {
			smq_lane_unlock(q);
			return err;
		}
		/* what we can ring, for a receiver deciding whether to sleep */
		STORE(&q->out->host, w->boot);
		STORE(&q->out->ring_kinds, q->ring_kinds);
		smq_lane_recover(q);
		smq_lane_unlock(q);
	}
	return 0;
}

/* Whether another receiver handle of this process, on any of its window
 * handles, holds queue q's index: its handle slot names the queue and the
 * role, in our board's control block, where no format moves it.  With a
 * handle that has no slot of its own open, any claim of ours may be its. */
static bool receiver_of_ours(const struct smq_queue *q)
{
	const struct smq_window *w = q->w;

	if (__atomic_load_n(&slotless_receivers, __ATOMIC_RELAXED))
		return true;
	const struct smq_handle_slot *s;
	SMQ_EACH_SLOT(s, w->ctl) {
		if (s != q->slot && LOAD(&s->tag) == w->tag &&
		    LOAD_ACQ(&s->kind) == SMQ_SLOT_QUEUE &&
		    LOAD(&s->queue) == q->index &&
		    LOAD(&s->role) == SMQ_RECEIVER)
			return true;
	}
	return false;
}

/* One receiver per queue: another process's claim is -EBUSY, one of this
 * process's own handles' -SMQ_EHOLDING.  The claim of a process that is
 * gone (exited, its pid reused, or from before this host's last boot) is
 * taken over.
 * The receivers of a queue are processes of its receiving board, so of
 * this host: the tag alone says whether one lives (it hashes the boot,
 * so a tag of an earlier boot is dead here); owner_boot, written after
 * the claim, is for observers of other hosts, not for this check.  Our
 * own claim with no receiver handle of ours open is taken over too: a
 * handle closed while its window was stale (an init or clear under way)
 * could not give it back, and the maintenance may then have failed and
 * left the window as it was. */
static int claim_receiver(struct smq_queue *q, uint64_t *was)
{
	struct smq_window *w = q->w;
	uint64_t owner = 0;

	while (!__atomic_compare_exchange_n(&q->rx->owner, &owner, w->tag,
					    false, __ATOMIC_ACQ_REL,
					    __ATOMIC_ACQUIRE)) {
		if (owner == w->tag && receiver_of_ours(q))
			return -SMQ_EHOLDING;
		if (owner != w->tag && smq_tag_alive(owner))
			return -EBUSY;
	}
	q->owner_tag = w->tag;
	*was = owner;
	return 0;
}

/* The claim said, once the queue is found sound. */
static void record_claim(struct smq_queue *q, uint64_t owner)
{
	struct smq_window *w = q->w;

	/* edge counters, for an observer that looks less often than
	 * receivers come and go */
	STORE(&q->rx_info->opens, LOAD(&q->rx_info->opens) + 1);
	if (owner) {
		STORE(&q->rx_info->takeovers, LOAD(&q->rx_info->takeovers) + 1);
		smq_journal(w, SMQ_JOURNAL_TAKEOVER, SMQ_RECEIVER, q->index,
			    LOAD(q->epoch_word), smq_tag_pid(owner), 1);
	}
	STORE(&q->rx_info->waiting, 0);
	STORE(&q->rx_info->owner_boot, w->boot);
	STORE(&q->rx_info->host, w->boot);
	STORE(&q->rx_info->ring_kinds, q->ring_kinds);
}

static int receiver_arrays(struct smq_queue *q, unsigned lanes)
{
	q->lane_board = calloc(lanes, sizeof(*q->lane_board));
	q->fcs = calloc(lanes, sizeof(*q->fcs));
	q->wakes = calloc(lanes, sizeof(*q->wakes));
	q->outs = calloc(lanes, sizeof(*q->outs));
	q->space_rung = calloc(lanes, sizeof(*q->space_rung));
	q->heads = calloc(lanes, sizeof(*q->heads));
	q->expect = calloc(lanes, sizeof(*q->expect));
	q->keys = calloc(lanes, sizeof(*q->keys));
	return q->lane_board && q->fcs && q->wakes && q->outs &&
	       q->space_rung && q->heads && q->expect && q->keys ? 0 : -ENOMEM;
}

static int open_receiver(struct smq_queue *q)
{
	struct smq_window *w = q->w;
	const struct smq_layout *l = &w->lay;
	unsigned i = q->index, lanes = lay_lanes(l, i);
	int err;

	q->rx = smq_near(w, l->rx[i], SMQ_LINE);
	q->rx_info = smq_near(w, lay_rx_info(l, i), SMQ_LINE);
	q->bottoms = smq_near(w, lay_bottoms(l, i), lay_bottoms_size(l, i));
	q->bell_word = smq_near(w, lay_bell(l, i), SMQ_LINE);
	q->lanes = smq_near(w, lay_lane_in_k(l, i, 0), lanes * SMQ_LINE);
	q->asks = smq_near(w, lay_lane_ask_k(l, i, 0), lanes * SMQ_LINE);
	q->rings = smq_near(w, lay_ring_k(l, i, 0),
			    (uint64_t)lanes * q->entries * q->stride);
	q->epoch_word = &q->rx->epoch;
	if (!(q->epoch = LOAD_ACQ(q->epoch_word)))
		return being_cleared(w);
	q->peeked = -1;
	q->nlanes = lanes;
	if ((err = receiver_arrays(q, lanes)))
		return err;
	uint64_t was;
	if ((err = claim_receiver(q, &was)))
		return err;
	/* no other receiver moves the bottoms now: the queue is looked at
	 * again before the first write but the claim's, which a fault gives
	 * back as it was */
	if ((err = queue_fault(w, i, SMQ_RECEIVER, false))) {
		uint64_t ours = w->tag;
		__atomic_compare_exchange_n(&q->rx->owner, &ours, was, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
		return err;
	}
	record_claim(q, was);
	for (unsigned k = 0; k < lanes; k++) {
		unsigned s = lay_lane_board(l, i, k);
		q->lane_board[k] = (uint8_t)s;
		q->keys[k] = smq_signature_key(q->epoch, i, s);
		q->fcs[k] = smq_far(w, lay_lane_fc(l, s, i));
		q->wakes[k] = smq_far(w, lay_lane_wake(l, s, i));
		q->outs[k] = smq_far(w, lay_lane_out(l, s, i));
		q->space_rung[k] = FAR_LOAD(w, SMQ_FAR_OPEN, q->wakes[k],
					    struct smq_lane_wake, space_bell);
		uint64_t b = LOAD(&q->bottoms[k]);
		/* a receiver that died between its two bottom writes */
		FAR_STORE_REL(q->fcs[k], struct smq_lane_fc, bottom, b);
		smq_lane_expect(q, k, b);
	}
	q->cursor = LOAD(&q->rx->cursor) % lanes;
	smq_rx_polls(q, q->flags & SMQ_POLL);
	/* A receiver that died asleep left the epoch odd: wake it up. */
	q->sleep_epoch = LOAD(&q->rx->sleep_epoch);
	if (q->sleep_epoch & 1)
		smq_set_sleep_epoch(q, q->sleep_epoch + 1);
	return 0;
}

/* Feature membarrier (smq(7), Barriers left to the other side).  A
 * receiver that busy-polls and never sleeps says so in each lane's wake
 * line (1), and its senders leave out the barrier between their top and
 * their look at its sleep epoch: there is no sleep to miss.  Any other
 * receiver takes that back before it can sleep: it stores 2 where a word
 * is not 0 (a sender takes only 1 as said), runs a barrier on every CPU
 * of this kernel (MEMBARRIER_CMD_GLOBAL, some milliseconds, at its open;
 * a group's members share its flags, so a handle that said it polls
 * never arms), after which every sender reads a word that is not 1 and
 * makes its barrier again, and then stores 0.  A receiver killed before
 * the barrier ran leaves a 2, and the next one runs it.  Said only where
 * every process that maps the window runs under this kernel (a light
 * order), which that barrier reaches.  One that cannot be taken back (the
 * barrier refused) leaves this handle napping, never asleep on a bell,
 * and the words at 2. */
void smq_rx_polls(struct smq_queue *q, bool polls)
{
	struct smq_window *w = q->w;
	bool was = false;

	if (!(w->lay.features & SMQ_FEATURE_MEMBARRIER))
		return;
	polls = polls && w->map.order->light;
	for (unsigned k = 0; k < q->nlanes; k++) {
		uint32_t v = FAR_LOAD(w, SMQ_FAR_OPEN, q->wakes[k],
				      struct smq_lane_wake, rx_polls);
		was |= v != 0;
		FAR_STORE(q->wakes[k], struct smq_lane_wake, rx_polls,
			  polls ? 1u : v ? 2u : 0u);
	}
	q->polls = polls;
	if (!was || polls)
		return;
	TEST_HOOK(SMQ_HOOK_POLLS_TAKING_BACK);
	if (smq_marks_settle()) {
		q->nap = true;
		return;
	}
	for (unsigned k = 0; k < q->nlanes; k++)
		FAR_STORE(q->wakes[k], struct smq_lane_wake, rx_polls, 0u);
}

int smq_queue_open(struct smq_window *w, unsigned index, enum smq_role role,
		   unsigned flags, struct smq_queue **qp)
{
	return smq_queue_open_bell(w, index, role, flags, NULL, false, qp);
}

int smq_queue_open_bell(struct smq_window *w, unsigned index,
			enum smq_role role, unsigned flags,
			const struct smq_bell_addr *bell, bool has_bell,
			struct smq_queue **qp)
{
	struct smq_queue *q;
	int err;

	if (!qp)
		return -EINVAL;
	*qp = NULL;
	if (!w)
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	if (w->readonly)
		return -EROFS;
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	if (index >= w->lay.queues || (role != SMQ_SENDER && role != SMQ_RECEIVER) ||
	    (flags & ~(unsigned)(SMQ_POLL | SMQ_SLEEP)) ||
	    (flags & SMQ_POLL && flags & SMQ_SLEEP))
		return smq_stale(w) ? -ESTALE : -EINVAL;
	if (role == SMQ_RECEIVER && w->lay.receiver[index] != w->board)
		return -EPERM;
	if (role == SMQ_SENDER && !lay_sends(&w->lay, index, w->board))
		return smq_stale(w) ? -ESTALE : -SMQ_ENOTSENDER;
	/* What the open reads and writes is looked at before our mark is up,
	 * so that a damaged window gets no write at all: a re-init may be
	 * rewriting it, and a fault is the window's only if the notice, read
	 * after, is unchanged.  open_sender and open_receiver look again
	 * with the mark up, before they write. */
	if ((err = smq_stale(w)))
		return err;
	if ((err = queue_fault(w, index, role, true)))
		return err;
	if ((err = smq_enter(w)))
		return err;
	q = calloc(1, sizeof(*q));
	if (!q) {
		smq_leave(w);
		return -ENOMEM;
	}
	q->w = w;
	q->generation = w->generation;
	q->check = w->check;
	q->index = index;
	q->role = role;
	q->flags = flags;
	q->spin_ns = DEFAULT_SPIN_NS;
	q->entries = lay_entries(&w->lay, index);
	q->entry_size = lay_entry_size(&w->lay, index);
	q->stride = lay_stride(&w->lay, index);
	q->checksum = w->lay.features & SMQ_FEATURE_CHECKSUM;
	q->ring_kinds = ring_kinds(w);
	/* our own in-flight mark, or, when the control block is full, the
	 * window's shared one */
	if (!(q->slot = smq_slot_claim(w, SMQ_SLOT_QUEUE, index, role))) {
		q->slot = w->slot;
		q->slot_shared = true;
		if (role == SMQ_RECEIVER)
			__atomic_fetch_add(&slotless_receivers, 1,
					   __ATOMIC_RELAXED);
	}
	if (bell) {
		q->bell = *bell;
		q->has_bell = has_bell;
		q->bell_lent = true;
	} else if (w->map.tp->bell_open &&
		   !w->map.tp->bell_open(&w->map, &q->bell)) {
		q->has_bell = true;
	}
	err = role == SMQ_SENDER ? open_sender(q) : open_receiver(q);
	smq_leave(w);
	if (err) {
		free_queue(q);
		return err;
	}
	__atomic_fetch_add(&w->queues_open, 1, __ATOMIC_RELAXED);
	smq_journal(w, SMQ_JOURNAL_OPEN, (uint16_t)role, index, q->epoch, 0, 0);
	*qp = q;
	return 0;
}

/* A full episode, for the journal: said once as it begins, not at every
 * send that meets the lane full, and once as it ends, with what was
 * refused and waited meanwhile.  Off the message path: a send that meets
 * the lane full reads no clock (only the one that opens an episode does),
 * and while one is open every FULL_LOOK_EVERY-th send looks at the clock
 * once.  In a stream through a small ring most sends meet the lane full:
 * a clock read at each of them and another at each send that found room
 * cost a third of the rate through 16 entries (7.4 against 5.0 million
 * 64-byte messages a second, builds alternated on two pinned CPUs).  So
 * the end is judged at the looks: the first that finds no send met the
 * lane full since the look before, a second or more after the last look
 * that found one had (smq-format(7), ROOM).  Ended by them or by the close of
 * the handle. */
#define FULL_QUIET_NS 1000000000ull
#define FULL_LOOK_EVERY 16

void smq_full_met(struct smq_queue *q)
{
	q->full_seen = true;
	if (q->full_open)
		return;
	q->full_open = true;
	q->full_last_ns = smq_now_ns();
	q->full_look = FULL_LOOK_EVERY;
	q->full_waits0 = LOAD(&q->out->full_waits);
	q->full_refusals0 = LOAD(&q->out->full_refusals);
	smq_journal(q->w, SMQ_JOURNAL_FULL, SMQ_SENDER, q->index, q->epoch,
		    q->entries, 0);
}

/* A send that found room, an episode open. */
void smq_full_maybe_ended(struct smq_queue *q)
{
	if (--q->full_look)
		return;
	q->full_look = FULL_LOOK_EVERY;
	uint64_t now = smq_now_ns();
	if (q->full_seen) {
		q->full_seen = false;
		q->full_last_ns = now;
	} else if (now - q->full_last_ns >= FULL_QUIET_NS) {
		smq_full_episode_end(q);
	}
}

void smq_full_episode_end(struct smq_queue *q)
{
	if (!q->full_open)
		return;
	q->full_open = false;
	smq_journal(q->w, SMQ_JOURNAL_ROOM, SMQ_SENDER, q->index, q->epoch,
		    (uint32_t)(LOAD(&q->out->full_refusals) - q->full_refusals0),
		    LOAD(&q->out->full_waits) - q->full_waits0);
}

int smq_queue_close(struct smq_queue *q)
{
	if (!q)
		return -EINVAL;
	/* a child's copy would give up the parent's claim, its loan and its
	 * slot: it is left as it is, the child's memory with the child */
	if (smq_inherited(q->w))
		return -EBADF;
	/* a loan never submitted is given back: its lane unlocked, its mark
	 * down, nothing published */
	if (q->loaned)
		smq_lane_end_loan(q);
	/* said only by a handle of the layout it opened: a stale one's
	 * queue is no longer there to say it of */
	if (!smq_queue_stale(q)) {
		smq_full_episode_end(q);
		smq_journal(q->w, SMQ_JOURNAL_CLOSE, (uint16_t)q->role, q->index,
			    q->epoch, 0, 0);
	}
	if (q->role == SMQ_RECEIVER && q->rx && !smq_queue_enter(q)) {
		/* only our own claim: after a re-init it may not be ours */
		uint64_t tag = q->owner_tag;
		if (LOAD(&q->rx->owner) == tag)
			STORE(&q->rx_info->waiting, 0);
		__atomic_compare_exchange_n(&q->rx->owner, &tag, 0, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
		smq_queue_leave(q);
	}
	__atomic_fetch_sub(&q->w->queues_open, 1, __ATOMIC_RELAXED);
	free_queue(q);
	return 0;
}

int smq_queue_set_spin(struct smq_queue *q, unsigned spin_ns)
{
	if (!q)
		return -EINVAL;
	if (smq_inherited(q->w))
		return -EBADF;
	q->spin_ns = spin_ns;
	return 0;
}

int smq_queue_notify(struct smq_queue *q, char *buf, size_t len)
{
	if (!q || !buf || !len)
		return -EINVAL;
	if (smq_inherited(q->w))
		return -EBADF;
	struct smq_window *w = q->w;
	const struct smq_layout *l = &w->lay;
	if (q->role == SMQ_RECEIVER && (q->flags & SMQ_POLL)) {
		snprintf(buf, len, "busy polling: no doorbell is waited for");
		return smq_queue_stale(q);
	}
	if (!q->has_bell) {
		snprintf(buf, len, "polling: the %s transport has no doorbell",
			 w->map.tp->name);
		return 0;
	}
	if (q->role == SMQ_SENDER) {
		const struct smq_rx_info *ri = smq_snapshot_at(w,
			lay_rx_info(l, q->index), SMQ_LINE);
		uint32_t kinds = LOAD(&ri->ring_kinds);
		/* no kinds: no receiver yet */
		if (kinds && !smq_can_ring(kinds, LOAD(&ri->host), &q->bell)) {
			snprintf(buf, len, "polling: board %u cannot ring this "
				 "board's doorbell", l->receiver[q->index]);
			return smq_queue_stale(q);
		}
	}
	for (unsigned k = 0; q->role == SMQ_RECEIVER && k < q->nlanes; k++) {
		unsigned s = q->lane_board[k];
		const struct smq_lane_out *o =
			smq_snapshot_at(w, lay_lane_out(l, s, q->index), SMQ_LINE);
		uint32_t kinds = LOAD(&o->ring_kinds);
		if (kinds && !smq_can_ring(kinds, LOAD(&o->host), &q->bell)) {
			snprintf(buf, len, "polling: board %u cannot ring this "
				 "board's doorbell", s);
			return smq_queue_stale(q);
		}
	}
	w->map.tp->describe(&w->map, buf, len);
	return smq_queue_stale(q);
}
