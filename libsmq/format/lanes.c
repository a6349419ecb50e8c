/* Validation of a window's lanes, what moves while boards work: each
 * lane's sequence numbers and the entries between bottom and top, read
 * in the order an open reads them (checks 21 to 24 of smq(7)).  The
 * layout and tables they stand in are validate.c's. */
#include "check.h"

/* Checks 21 to 24 of smq(7) on one lane's words, as validation and an
 * open read them (struct smq_lane_words says in what order). */
int smq_lane_fault(const struct smq_layout *l, unsigned q, unsigned s,
		   const struct smq_lane_words *w, struct smq_fault *f)
{
	uint32_t entries = lay_entries(l, q);
	uint64_t epoch_at = l->rx[q] + offsetof(struct smq_rx, epoch);
	uint64_t bottom = w->bottom, fcb = w->flow_bottom;
	uint64_t top = w->top, after = w->top_after, shadow = w->sender_top;

	/* the queue's epoch: 0 only while a clear of it runs (the caller's
	 * confirmation says so), never past the last one handed out, and
	 * each sender's copy the same */
	if (w->epoch == 0)
		return fault(f, SMQ_ECORRUPT, "queue.epoch", epoch_at, 0, 1,
			     SMQ_FAULT_AT_LEAST);
	if (w->epoch > w->epoch_last)
		return fault(f, SMQ_ECORRUPT, "queue.epoch", epoch_at, w->epoch,
			     w->epoch_last, AT_MOST);
	if (w->queue_epoch != w->epoch)
		return fault(f, SMQ_ECORRUPT, "lane.queue_epoch",
			     lay_lane_wake(l, s, q) +
			     offsetof(struct smq_lane_wake, queue_epoch),
			     w->queue_epoch, w->epoch, EXPECTED);
	if (fcb > bottom)
		return fault(f, SMQ_ECORRUPT, "lane.flow_bottom",
			     lay_lane_fc(l, s, q), fcb, bottom, AT_MOST);
	if (top > bottom && top - bottom > entries)
		return fault(f, SMQ_ECORRUPT, "lane.top", lay_lane_in(l, q, s),
			     top, bottom + entries, AT_MOST);
	if (bottom > after && bottom - after > entries)
		return fault(f, SMQ_ECORRUPT, "lane.top", lay_lane_in(l, q, s),
			     after, bottom + entries, AT_MOST);
	/* the sender stores its own top first, then the receiver's: ahead
	 * by a message, or by a burst's */
	if (shadow < top)
		return fault(f, SMQ_ECORRUPT, "lane.sender_top",
			     lay_lane_out(l, s, q), shadow, top,
			     SMQ_FAULT_AT_LEAST);
	if (shadow > after && shadow - after > entries)
		return fault(f, SMQ_ECORRUPT, "lane.sender_top",
			     lay_lane_out(l, s, q), shadow, after + entries,
			     AT_MOST);
	/* in flight: a ring at most past the receiver's bottom, whose copy
	 * lags it by a take (of a burst: up to a ring) */
	if (shadow > bottom && shadow - bottom > entries)
		return fault(f, SMQ_ECORRUPT, "lane.sender_top",
			     lay_lane_out(l, s, q), shadow, bottom + entries,
			     AT_MOST);
	if (shadow > fcb && shadow - fcb > 2ull * entries)
		return fault(f, SMQ_ECORRUPT, "lane.sender_top",
			     lay_lane_out(l, s, q), shadow, fcb + 2ull * entries,
			     AT_MOST);
	return 0;
}

/* One lane's sequence numbers and the entries between bottom and top.
 * Read in the order an open reads them (smq_lane_words), so that a lane
 * in use never looks out of bounds; a receiver takes an entry by its
 * signature before its sender stores top, so bottom may be past top, by
 * a burst's entries at most a ring.  A fault is looked at again by the
 * caller. */
static int check_lane(const struct smq_view *v, const struct smq_layout *l,
		      unsigned q, unsigned s, struct smq_fault *f)
{
	const uint64_t *bottoms = smq_view_at(v, lay_bottoms(l, q),
					      lay_bottoms_size(l, q));
	const struct smq_lane_fc *fc = smq_view_at(v, lay_lane_fc(l, s, q), SMQ_LINE);
	const struct smq_lane_out *out = smq_view_at(v, lay_lane_out(l, s, q), SMQ_LINE);
	const struct smq_lane_in *in = smq_view_at(v, lay_lane_in(l, q, s), SMQ_LINE);
	const struct smq_rx *rx = smq_view_at(v, l->rx[q], SMQ_LINE);
	const struct smq_lane_wake *wake =
		smq_view_at(v, lay_lane_wake(l, s, q), SMQ_LINE);
	const struct smq_sb *sb = sb_view(v);
	struct smq_lane_words w;
	uint32_t entry_size = lay_entry_size(l, q);

	w.epoch = LOAD_ACQ(&rx->epoch);
	w.epoch_last = LOAD(&sb->epoch_last);
	w.queue_epoch = LOAD(&wake->queue_epoch);
	w.top = LOAD_ACQ(&in->top);
	w.sender_top = LOAD_ACQ(&out->top);
	w.flow_bottom = LOAD_ACQ(&fc->bottom);
	w.bottom = LOAD_ACQ(&bottoms[lay_lane(l, q, s)]);
	w.top_after = LOAD(&in->top);
	int err = smq_lane_fault(l, q, s, &w, f);
	if (err)
		return err;
	/* feature membarrier: 0, 1 or 2 (a sender reads only 1 as set);
	 * the last part of check 25 */
	uint32_t polls = LOAD(&wake->rx_polls);
	if (polls > 2)
		return fault(f, SMQ_ECORRUPT, "lane.rx_polls",
			     lay_lane_wake(l, s, q) +
			     offsetof(struct smq_lane_wake, rx_polls), polls, 2,
			     AT_MOST);
	/* The entry at bottom counts as queued when it carries its signature,
	 * even with top not yet there. */
	uint64_t gen = w.epoch, bottom = w.bottom, top = w.top_after;
	uint64_t end = top;
	if (bottom >= top) {
		const struct smq_entry *e =
			smq_view_at(v, lay_entry(l, q, s, bottom), SMQ_LINE);
		if (LOAD(&e->signature) == smq_signature(gen, q, s, bottom))
			end = bottom + 1;
	}
	for (uint64_t seq = bottom; seq < end; seq++) {
		uint64_t off = lay_entry(l, q, s, seq);
		const struct smq_entry *e = smq_view_at(v, off, SMQ_LINE);
		uint64_t want = smq_signature(gen, q, s, seq);
		if (seq < top && LOAD(&e->signature) != want)
			return fault(f, SMQ_ESIGNATURE, "entry.signature",
				     off + 8, LOAD(&e->signature), want,
				     EXPECTED);
		if (LOAD(&e->size) > entry_size)
			return fault(f, SMQ_ECORRUPT, "entry.size", off,
				     LOAD(&e->size), entry_size, AT_MOST);
		/* a check is a message's to fail (the receiver refuses
		 * it), not the window's; where none is summed it is 0 */
		if (!(l->features & SMQ_FEATURE_CHECKSUM) &&
		    LOAD(&e->check) != 0)
			return fault(f, SMQ_ECORRUPT, "entry.check", off + 4,
				     LOAD(&e->check), 0, EXPECTED);
	}
	return 0;
}

int smq_check_dynamic(const struct smq_view *v, const struct smq_layout *l,
		      struct smq_fault *f)
{
	for (unsigned q = 0; q < l->queues; q++)
		for (unsigned s = 0; s < l->boards; s++) {
			int err = 0;
			if (!lay_sends(l, q, s))
				continue;
			for (int tries = 0; tries < 3; tries++)
				if (!(err = check_lane(v, l, q, s, f)))
					break;
			if (err)
				return err;
		}
	return 0;
}
