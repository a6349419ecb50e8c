/* Snapshots for dump and top, and full validation.  They read the whole
 * window, across the bus: diagnostics, never a message path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "window.h"

static const struct smq_sb *sb_at(struct smq_window *w)
{
	return smq_snapshot_at(w, 0, SMQ_SB_SIZE);
}

static int window_info(struct smq_window *w, struct smq_window_info *info)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->transport, sizeof(info->transport), "%s",
		 w->map.tp->name);
	snprintf(info->name, sizeof(info->name), "%s", w->map.name);
	info->board = w->readonly ? SMQ_NO_BOARD : w->board;
	info->mapped_size = w->map.size;
	info->fixed_size = smq_fixed_size(w);
	info->not_window = w->map.user_data && smq_foreign_data(w);
	const uint8_t *first = smq_map_at(&w->map, 0, 1);
	if (first)
		memcpy(info->first_bytes, first,
		       w->map.size < sizeof(info->first_bytes)
		       ? (size_t)w->map.size : sizeof(info->first_bytes));
	if (w->map.tp->bell_open && w->map.tp->describe)
		w->map.tp->describe(&w->map, info->notify, sizeof(info->notify));
	else
		snprintf(info->notify, sizeof(info->notify),
			 "polling: no doorbell");
	const struct smq_sb *sb = sb_at(w);
	/* a window refused for a feature still says which */
	if (sb && !memcmp(sb->magic, SMQ_MAGIC, 8)) {
		info->features_incompat = LOAD(&sb->features_incompat);
		info->features_compat = LOAD(&sb->features_compat);
	}
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	info->version = LOAD(&sb->version);
	info->geometry.boards = w->lay.boards;
	info->geometry.queues = w->lay.queues - w->lay.diag_queues;
	info->geometry.entries = w->lay.entries;
	info->geometry.entry_size = w->lay.entry_size;
	info->diag_queues = w->lay.diag_queues;
	info->diag_entries = w->lay.diag_entries;
	info->diag_entry_size = w->lay.diag_entry_size;
	info->window_size = w->lay.size;
	info->generation = LOAD(&sb->generation);
	info->system_state = LOAD(&sb->system_state);
	info->maint_phase = LOAD(&sb->maint_phase);
	if (info->maint_phase) {
		info->maint_pid = smq_tag_pid(LOAD(&sb->maint_owner));
		info->maint_alive = smq_maint_alive(w, sb);
	}
	info->format_time_ns = LOAD(&sb->format_time_ns);
	info->emptied = LOAD(&sb->emptied);
	/* the format has no word of the window's own for this: board 0's
	 * journal is made with the window and kept by its inits and clears */
	if (w->lay.journal) {
		const struct smq_journal_head *h = smq_snapshot_at(w,
			lay_journal(&w->lay, 0), SMQ_LINE);
		info->incarnation = h ? LOAD(&h->incarnation) : 0;
	}
	info->groups = smq_group_count(w);
	return smq_stale(w);
}

static int window_fill(struct smq_window *w, unsigned unused1,
		       unsigned unused2, void *info)
{
	(void)unused1;
	(void)unused2;
	return window_info(w, info);
}

int smq_window_info(struct smq_window *w, struct smq_window_info *out,
		    size_t size)
{
	struct smq_window_info info;

	return smq_snapshot_call(w, window_fill, 0, 0, &info, sizeof(info),
				 out, size, SMQ_LEAST_WINDOW_INFO);
}

static int lane_info(struct smq_window *w, unsigned queue, unsigned sender,
		     struct smq_lane_info *info)
{
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	const struct smq_layout *l = &w->lay;
	if (queue >= l->queues || sender >= l->boards)
		return -EINVAL;
	if (!lay_sends(l, queue, sender))
		return -ENOENT;  /* the board has no lane: not a sender */
	const uint64_t *bottoms = smq_snapshot_at(w, lay_bottoms(l, queue),
						  lay_bottoms_size(l, queue));
	const struct smq_lane_in *in =
		smq_snapshot_at(w, lay_lane_in(l, queue, sender), SMQ_LINE);
	const struct smq_lane_out *out =
		smq_snapshot_at(w, lay_lane_out(l, sender, queue), SMQ_LINE);
	const struct smq_lane_wake *wake =
		smq_snapshot_at(w, lay_lane_wake(l, sender, queue), SMQ_LINE);
	const struct smq_lane_ask *ask =
		smq_snapshot_at(w, lay_lane_ask(l, queue, sender), SMQ_LINE);
	memset(info, 0, sizeof(*info));
	info->bottom = LOAD(&bottoms[lay_lane(l, queue, sender)]);
	info->top = LOAD(&in->top);
	info->fill = info->top > info->bottom ? info->top - info->bottom : 0;
	info->messages = LOAD(&out->messages);
	info->bytes = LOAD(&out->bytes);
	info->full_waits = LOAD(&out->full_waits);
	info->full_refusals = LOAD(&out->full_refusals);
	info->doorbells = LOAD(&out->doorbells);
	info->lock_pid = smq_tag_pid(LOAD(&out->lock));
	info->sender_waiting = LOAD(&ask->space_wait) &&
			       LOAD(&ask->space_wait) ==
			       LOAD(&wake->space_bell) + 1ull;
	return smq_stale(w);
}

static int queue_info(struct smq_window *w, unsigned queue,
		      struct smq_queue_info *info)
{
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	const struct smq_layout *l = &w->lay;
	if (queue >= l->queues)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	const struct smq_rx *rx = smq_snapshot_at(w, l->rx[queue], SMQ_LINE);
	info->index = queue;
	info->receiver = l->receiver[queue];
	info->flags = l->qflags[queue];
	smq_judge_receiver(w, l, queue, info);
	/* only a receiver that lives sleeps: one that died asleep left its
	 * epoch odd */
	info->sleeping = (LOAD(&rx->sleep_epoch) & 1) &&
			 (info->receiver_state == SMQ_RECEIVER_WAITING ||
			  info->receiver_state == SMQ_RECEIVER_UNKNOWN);
	info->capacity = lay_entries(l, queue);
	info->entry_size = lay_entry_size(l, queue);
	info->received = LOAD(&rx->messages);
	info->bytes_received = LOAD(&rx->bytes);
	const struct smq_rx_info *ri = smq_snapshot_at(w, lay_rx_info(l, queue),
						       SMQ_LINE);
	info->corrupt = LOAD(&ri->corrupt);
	info->sleeps = LOAD(&rx->sleeps);
	info->wakeups = LOAD(&rx->wakeups);
	info->senders = l->senders[queue];
	for (unsigned k = 0; k < lay_lanes(l, queue); k++) {
		struct smq_lane_info li;
		lane_info(w, queue, lay_lane_board(l, queue, k), &li);
		info->top += li.top;
		info->bottom += li.bottom;
		info->queued += li.fill;
		info->fill = li.fill > info->fill ? li.fill : info->fill;
		info->sent += li.messages;
		info->bytes_sent += li.bytes;
		info->full_waits += li.full_waits;
		info->full_refusals += li.full_refusals;
		info->doorbells += li.doorbells;
	}
	smq_judge_stall(w, l, queue, info);
	return smq_stale(w);
}

static int lane_fill(struct smq_window *w, unsigned queue, unsigned sender,
		     void *info)
{
	return lane_info(w, queue, sender, info);
}

static int queue_fill(struct smq_window *w, unsigned queue, unsigned unused,
		      void *info)
{
	(void)unused;
	return queue_info(w, queue, info);
}

int smq_lane_info(struct smq_window *w, unsigned queue, unsigned sender,
		  struct smq_lane_info *out, size_t size)
{
	struct smq_lane_info info;

	return smq_snapshot_call(w, lane_fill, queue, sender, &info,
				 sizeof(info), out, size, SMQ_LEAST_LANE_INFO);
}

int smq_queue_info(struct smq_window *w, unsigned queue,
		   struct smq_queue_info *out, size_t size)
{
	struct smq_queue_info info;

	return smq_snapshot_call(w, queue_fill, queue, 0, &info, sizeof(info),
				 out, size, SMQ_LEAST_QUEUE_INFO);
}

static int fault(struct smq_fault *f, int err, const char *field,
		 uint64_t offset, uint64_t value, uint64_t want)
{
	if (f) {
		snprintf(f->field, sizeof(f->field), "%s", field);
		f->offset = offset;
		f->value = value;
		f->limit = want;
		f->kind = SMQ_FAULT_EXPECTED;
	}
	return err;
}

/* Whether the calls of boards would refuse the window: an init or clear
 * under way or left unfinished, notices that disagree with the
 * superblock. */
static int check_usable(struct smq_window *w, const struct smq_view *v,
			const struct smq_layout *l, struct smq_fault *f)
{
	const struct smq_sb *sb = smq_view_at(v, 0, SMQ_SB_SIZE);
	uint64_t gen = LOAD(&sb->generation);
	uint32_t phase = LOAD(&sb->maint_phase);

	if (phase != SMQ_MAINT_NONE)
		return fault(f, smq_maint_error(w, sb), "maint_phase",
			     offsetof(struct smq_sb, maint_phase), phase, 0);
	if (LOAD(&sb->system_state) == SMQ_SYS_FORMATTING)
		return fault(f, -SMQ_EINCOMPLETE, "system_state",
			     offsetof(struct smq_sb, system_state),
			     SMQ_SYS_FORMATTING, SMQ_SYS_FORMATTED);
	for (unsigned b = 0; b < l->boards; b++) {
		const struct smq_notice *n =
			smq_view_at(v, lay_ctl(b), sizeof(*n));
		if (LOAD(&n->generation) != gen)
			return fault(f, -SMQ_EINCOMPLETE, "notice.generation",
				     lay_ctl(b), LOAD(&n->generation), gen);
	}
	return 0;
}

/* A fault seen while an init or clear rewrote the window is not the
 * window's (smq_confirm_fault): say what ran instead. */
static int confirm(struct smq_window *w, const struct smq_sb *sb, uint64_t gen,
		   int err, struct smq_fault *f)
{
	int c = smq_confirm_fault(w, sb, gen, err);

	if (c == err)
		return err;
	if (f)
		memset(f, 0, sizeof(*f));
	if (c == -ESTALE)
		return fault(f, c, "generation", offsetof(struct smq_sb, generation),
			     LOAD(&sb->generation), gen);
	return fault(f, c, "maint_phase", offsetof(struct smq_sb, maint_phase),
		     LOAD(&sb->maint_phase), SMQ_MAINT_NONE);
}

static int validate_once(struct smq_window *w, struct smq_fault *f)
{
	struct smq_layout l;
	int err;

	if (f)
		memset(f, 0, sizeof(*f));
	struct smq_view v = smq_window_view(w);
	const struct smq_sb *sb = smq_view_at(&v, 0, SMQ_SB_SIZE);
	uint64_t gen = sb ? LOAD_ACQ(&sb->generation) : 0;
	if ((err = smq_check_layout(&v, &l, f)))
		return confirm(w, sb, gen, err, f);
	/* the window may have grown since we attached (if it is too small,
	 * the static checks say how much) */
	w->map.tp->map_layout(&w->map, &l, false);
	smq_layout_free(&l);
	v = smq_window_view(w);
	sb = smq_view_at(&v, 0, SMQ_SB_SIZE);
	if ((err = smq_check_static(&v, &l, f)))
		return confirm(w, sb, gen, err, f);
#ifdef SMQ_COUNT_FAR
	__atomic_fetch_add(&w->far_loads[SMQ_FAR_SNAPSHOT], 1, __ATOMIC_RELAXED);
#endif
	if ((err = smq_check_dynamic(&v, &l, f)))
		err = confirm(w, sb, gen, err, f);
	else
		err = check_usable(w, &v, &l, f);
	smq_layout_free(&l);
	return err;
}

/* A maintenance that finished while we read: read the window it left. */
int smq_validate(struct smq_window *w, struct smq_fault *out, size_t size)
{
	struct smq_fault f;
	int err = -ESTALE;

	if (!w || (out && size < SMQ_LEAST_FAULT))
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	memset(&f, 0, sizeof(f));
	pthread_mutex_lock(&w->follow_lock);
	if (w->readonly && w->map.tp->removed && w->map.tp->removed(&w->map))
		err = -EIDRM;
	for (int tries = 0; tries < 3 && err == -ESTALE; tries++)
		err = validate_once(w, &f);
	f.board = err && err != -EIDRM
		  ? smq_owner_of(w->valid ? &w->lay : NULL, f.offset) : -1;
	pthread_mutex_unlock(&w->follow_lock);
	if (out)
		smq_struct_out(out, size, &f, sizeof(f));
	return err;
}

/* The group table (feature groups), validated at attach; it is written by
 * init only, in board 0's region: a named read at open. */
static const struct smq_group_head *group_table(struct smq_window *w)
{
	uint64_t at = lay_groups(&w->lay);
	return at ? smq_snapshot_at(w, at, w->lay.tables_extra) : NULL;
}

/* The table is read where the handle's layout put it, which a new format
 * may since have filled with anything: every count and index read is
 * bounded as validation bounds it, so a stale handle reads garbage at
 * worst, never past the table (the caller then says -ESTALE). */
int smq_group_get(struct smq_window *w, unsigned index,
		     struct smq_group_info *info)
{
	const struct smq_group_head *h = group_table(w);

	memset(info, 0, sizeof(*info));
	if (!h)
		return -ENOENT;
	uint32_t groups = LOAD(&h->groups), members = LOAD(&h->members);
	if (index >= groups)
		return -ENOENT;
	if (groups > SMQ_MAX_GROUPS ||
	    smq_group_bytes(groups, members) > w->lay.tables_extra)
		return -SMQ_ECORRUPT;
	const struct smq_group_desc *d = (const void *)(h + 1);
	const uint32_t *member = (const uint32_t *)(d + groups);
	uint32_t first = LOAD(&d[index].first), count = LOAD(&d[index].count);
	if (count > SMQ_GROUP_MAX_MEMBERS || first > members ||
	    count > members - first)
		return -SMQ_ECORRUPT;
	memcpy(info->name, d[index].name, sizeof(d->name));
	info->name[sizeof(info->name) - 1] = '\0';
	info->index = index;
	info->count = count;
	for (uint32_t k = 0; k < count; k++)
		info->queues[k] = LOAD(&member[first + k]);
	return 0;
}

static int group_fill(struct smq_window *w, unsigned index, unsigned unused,
		      void *info)
{
	(void)unused;
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	int err = smq_group_get(w, index, info);
	/* read, then the notice: a table a new format overwrote is stale */
	int stale = smq_stale(w);
	return stale ? stale : err;
}

int smq_group_info(struct smq_window *w, unsigned index,
		   struct smq_group_info *info, size_t size)
{
	struct smq_group_info mine;

	if (!w || !info)
		return -EINVAL;
	return smq_snapshot_call(w, group_fill, index, 0, &mine, sizeof(mine),
				 info, size, SMQ_LEAST_GROUP_INFO);
}

/* The number of groups the window names. */
unsigned smq_group_count(struct smq_window *w)
{
	const struct smq_group_head *h = w->valid ? group_table(w) : NULL;
	uint32_t groups = h ? LOAD(&h->groups) : 0;
	return groups <= SMQ_MAX_GROUPS ? groups : 0;  /* a stale table */
}
