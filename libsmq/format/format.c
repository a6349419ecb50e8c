/* The window format: layout, ranges of each region, checksum, signatures.
 * Nothing here touches a window. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "abi.h"
#include "format.h"
#include "view.h"

#define MAX_WINDOW (1ull << 46) /* 64 TiB: far past any BAR, no overflow */

void smq_layout_free(struct smq_layout *l)
{
	free(l->receiver);
	free(l->qflags);
	free(l->senders);
	free(l->rx);
	free(l->lane0);
	free(l->out_slot);
	l->receiver = NULL;
	l->qflags = NULL;
	l->senders = NULL;
	l->rx = NULL;
	l->lane0 = NULL;
	l->out_slot = NULL;
}

/* Bodies: board b's lane lines for every queue it sends on, in queue
 * order, then the rx area of each queue b receives, rounded to a page,
 * then what features add (body_extra).  Sizes are bounded by the geometry
 * checks (validate.c), so one queue's rings fit in 2^51 bytes; the sum is
 * checked as it grows. */
static int place_bodies(struct smq_layout *l)
{
	uint64_t off = l->tables_end;
	uint32_t slots[SMQ_MAX_BOARDS] = { 0 };

	for (unsigned q = 0; q < l->queues; q++)
		for (unsigned k = 0; k < lay_lanes(l, q); k++)
			l->out_slot[l->lane0[q] + k] =
				slots[lay_lane_board(l, q, k)]++;
	for (unsigned b = 0; b < l->boards; b++) {
		l->body[b] = off;
		off += (uint64_t)slots[b] * SMQ_LANE_LINES * SMQ_LINE;
		for (unsigned q = 0; q < l->queues; q++) {
			if (l->receiver[q] != b)
				continue;
			uint64_t lanes = lay_lanes(l, q);
			l->rx[q] = off;
			off += 2 * SMQ_LINE + SMQ_ALIGN(8 * lanes, SMQ_LINE) +
			       SMQ_LINE + 2 * lanes * SMQ_LINE +
			       lanes * lay_entries(l, q) * lay_stride(l, q);
			if (off > MAX_WINDOW)
				return -SMQ_EGEOMETRY;
		}
		off = SMQ_ALIGN(off, SMQ_PAGE) + l->body_extra;
		if (off > MAX_WINDOW)
			return -SMQ_EGEOMETRY;
		l->body_size[b] = off - l->body[b];
	}
	l->size = off;
	return 0;
}

static int layout_arrays(struct smq_layout *l, const struct smq_shape *sh)
{
	const struct smq_geometry *g = &sh->geometry;
	uint64_t all = l->boards == 64 ? ~0ull : (1ull << l->boards) - 1;
	uint32_t lanes = 0;

	l->receiver = calloc(l->queues, sizeof(*l->receiver));
	l->qflags = calloc(l->queues, sizeof(*l->qflags));
	l->senders = calloc(l->queues, sizeof(*l->senders));
	l->rx = calloc(l->queues, sizeof(*l->rx));
	l->lane0 = calloc(l->queues + 1, sizeof(*l->lane0));
	if (!l->receiver || !l->qflags || !l->senders || !l->rx || !l->lane0)
		return -ENOMEM;
	for (unsigned q = 0; q < l->queues; q++) {
		uint32_t r;
		uint64_t m = all;
		if (q >= g->queues) {
			r = q - g->queues;
			l->qflags[q] = SMQ_QUEUE_DIAGNOSTIC;
		} else {
			r = g->receivers ? g->receivers[q] : q % g->boards;
			if (sh->senders && sh->senders[q])
				m = sh->senders[q];
		}
		if (r >= g->boards || (m & ~all))
			return -EINVAL;
		l->receiver[q] = (uint16_t)r;
		l->senders[q] = m;
		l->lane0[q] = lanes;
		lanes += lay_lanes(l, q);
	}
	l->lane0[l->queues] = lanes;
	l->out_slot = calloc(lanes, sizeof(*l->out_slot));
	return l->out_slot ? 0 : -ENOMEM;
}

bool smq_group_name_ok(const char *name, size_t max)
{
	size_t n = 0;

	for (; n < max && name[n]; n++) {
		char c = name[n];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return false;
	}
	return n >= 1 && n <= SMQ_GROUP_NAME_MAX;
}

/* A shape's groups: named once each, of 1 to SMQ_GROUP_MAX_MEMBERS
 * distinct application queues.  The number of members, or -EINVAL. */
static int64_t group_defs_ok(const struct smq_shape *sh)
{
	int64_t members = 0;

	if (sh->ngroups > SMQ_MAX_GROUPS || (sh->ngroups && !sh->groups))
		return -EINVAL;
	for (uint32_t i = 0; i < sh->ngroups; i++) {
		const struct smq_group_def *d = &sh->groups[i];
		if (!d->name || !smq_group_name_ok(d->name, SMQ_GROUP_NAME_MAX + 1) ||
		    !d->queues || d->count < 1 || d->count > SMQ_GROUP_MAX_MEMBERS)
			return -EINVAL;
		for (uint32_t j = 0; j < i; j++)
			if (!strcmp(sh->groups[j].name, d->name))
				return -EINVAL;
		for (uint32_t k = 0; k < d->count; k++) {
			if (d->queues[k] >= sh->geometry.queues)
				return -EINVAL;
			for (uint32_t j = 0; j < k; j++)
				if (d->queues[j] == d->queues[k])
					return -EINVAL;
		}
		members += d->count;
	}
	return members;
}

int smq_layout_of_shape(struct smq_layout *l, const struct smq_shape *sh)
{
	int64_t members = group_defs_ok(sh);

	if (members < 0)
		return -SMQ_EGEOMETRY;
	int err = smq_layout_make(l, sh, smq_group_bytes(sh->ngroups,
							 (uint32_t)members),
				  smq_shape_body_extra(sh));
	if (!err && sh->ngroups)
		l->compat |= SMQ_FEATURE_GROUPS;
	return err;
}

/* g->queues counts the application queues; the layout adds one diagnostic
 * queue for each board after them.  tables_extra and body_extra are what
 * features add (the superblock's line 3). */
int smq_layout_make(struct smq_layout *l, const struct smq_shape *sh,
		    uint64_t tables_extra, uint64_t body_extra)
{
	const struct smq_geometry *g = &sh->geometry;

	if (g->boards < 1 || g->boards > SMQ_MAX_BOARDS || g->queues < 1 ||
	    g->queues + g->boards > SMQ_MAX_QUEUES || !g->entries ||
	    (g->entries & (g->entries - 1)) || g->entries > SMQ_MAX_ENTRIES ||
	    g->entry_size > SMQ_MAX_ENTRY_SIZE || tables_extra > MAX_WINDOW ||
	    body_extra > MAX_WINDOW / SMQ_MAX_BOARDS ||
	    tables_extra % SMQ_PAGE || body_extra % SMQ_PAGE)
		return -SMQ_EGEOMETRY;
	/* SMQ_SHAPE_GROW is init's, not the layout's */
	if (sh->flags & ~(SMQ_SHAPE_CHECKSUM | SMQ_SHAPE_SCRATCH |
			  SMQ_SHAPE_GROW | SMQ_SHAPE_NO_JOURNAL))
		return -SMQ_EGEOMETRY;
	/* the journal is the start of body_extra, the scratch area its end */
	uint32_t journal = smq_shape_journal(sh);
	if (journal && !smq_journal_size_ok(journal))
		return -SMQ_EGEOMETRY;
	if (body_extra < smq_journal_bytes(journal) +
			 (sh->flags & SMQ_SHAPE_SCRATCH ? SMQ_SCRATCH_SIZE : 0))
		return -SMQ_EGEOMETRY;
	memset(l, 0, sizeof(*l));
	l->journal = journal;
	l->features = (sh->flags & SMQ_SHAPE_CHECKSUM ? SMQ_FEATURE_CHECKSUM : 0) |
		      (journal ? SMQ_FEATURE_JOURNAL : 0) |
		      SMQ_FEATURE_MEMBARRIER;
	l->compat = sh->flags & SMQ_SHAPE_SCRATCH ? SMQ_FEATURE_SCRATCH : 0;
	l->boards = g->boards;
	l->diag_queues = g->boards;
	l->queues = g->queues + l->diag_queues;
	l->entries = g->entries;
	l->entry_size = g->entry_size;
	l->stride = SMQ_ALIGN(SMQ_ENTRY_HEADER + (uint64_t)g->entry_size,
			      SMQ_LINE);
	l->diag_entries = smq_diag_entries(g->entries);
	l->diag_entry_size = smq_diag_entry_size(g->entry_size);
	l->diag_stride = SMQ_ALIGN(SMQ_ENTRY_HEADER +
				   (uint64_t)l->diag_entry_size, SMQ_LINE);
	l->queue_table = SMQ_QUEUE_TABLE;
	l->tables_extra = tables_extra;
	l->body_extra = body_extra;
	l->tables_end = SMQ_ALIGN(SMQ_QUEUE_TABLE + (uint64_t)l->queues *
				  sizeof(struct smq_qdesc), SMQ_PAGE) +
			tables_extra;
	int err = layout_arrays(l, sh);
	if (!err)
		err = place_bodies(l);
	if (err)
		smq_layout_free(l);
	return err;
}

int smq_layout_compute(struct smq_layout *l, const struct smq_geometry *g)
{
	struct smq_shape sh = { *g, NULL, 0, NULL, 0, 0, 0 };
	return smq_layout_make(l, &sh, 0, smq_shape_body_extra(&sh));
}

uint32_t smq_journal_head_check(const struct smq_journal_head *h)
{
	return smq_crc32c(0, h, offsetof(struct smq_journal_head, check));
}

uint32_t smq_journal_slot_check(const struct smq_journal_slot *e, uint64_t s)
{
	struct smq_journal_slot c = *e;

	c.seq = s;
	c.check = 0;
	return smq_crc32c(0, &c, sizeof(c));
}

int smq_shape_size(const struct smq_shape *sin, size_t size, uint64_t *bytes)
{
	struct smq_shape sh;
	struct smq_layout l;
	int err;

	if (!bytes)
		return -EINVAL;
	if ((err = smq_struct_in(&sh, sizeof(sh), sin, size, SMQ_LEAST_SHAPE)))
		return err;
	err = smq_layout_of_shape(&l, &sh);
	if (err)
		return err == -SMQ_EGEOMETRY ? -EINVAL : err;
	*bytes = l.size;
	smq_layout_free(&l);
	return 0;
}

/* Where a shape's bytes go.  A queue's part in its receiver's body is its
 * receive area and rings; in each sender's, its lane lines. */
int smq_shape_parts(const struct smq_shape *sin, size_t size,
		    struct smq_shape_parts *out, size_t psize)
{
	struct smq_shape sh;
	struct smq_shape_parts p;
	struct smq_layout l;
	struct smq_range r[SMQ_MAX_RANGES];
	int err;

	if (!out || psize < SMQ_LEAST_SHAPE_PARTS)
		return -EINVAL;
	if ((err = smq_struct_in(&sh, sizeof(sh), sin, size, SMQ_LEAST_SHAPE)))
		return err;
	if ((err = smq_layout_of_shape(&l, &sh)))
		return err == -SMQ_EGEOMETRY ? -EINVAL : err;
	memset(&p, 0, sizeof(p));
	p.total = l.size;
	p.superblock = SMQ_SB_SIZE;
	p.control = (uint64_t)SMQ_MAX_BOARDS * SMQ_CTL_SIZE;
	p.tables = l.tables_end - l.tables_extra - SMQ_BOARD_TABLE;
	p.features = l.tables_extra + (uint64_t)l.boards * l.body_extra;
	for (unsigned q = 0; q < l.queues; q++) {
		bool diag = l.qflags[q] & SMQ_QUEUE_DIAGNOSTIC;
		uint64_t lanes = lay_lanes(&l, q);
		uint64_t rx = 2 * SMQ_LINE + lay_bottoms_size(&l, q) + SMQ_LINE +
			      2 * lanes * SMQ_LINE +
			      lanes * lay_entries(&l, q) * lay_stride(&l, q);
		uint64_t lines = lanes * SMQ_LANE_LINES * SMQ_LINE;
		*(diag ? &p.diag_rings : &p.app_rings) += rx;
		*(diag ? &p.diag_lanes : &p.app_lanes) += lines;
	}
	p.padding = p.total - p.superblock - p.control - p.tables -
		    p.features - p.app_lanes - p.app_rings - p.diag_lanes -
		    p.diag_rings;
	/* the control pages of boards past the geometry belong to none */
	for (unsigned b = 0; b < l.boards; b++) {
		int n = smq_layout_ranges(&l, b, r);
		for (int i = 0; i < n; i++)
			p.region[b] += r[i].len;
	}
	smq_layout_free(&l);
	return smq_struct_out(out, psize, &p, sizeof(p));
}

int smq_layout_size(const struct smq_geometry *gin, size_t size,
		    uint64_t *bytes)
{
	struct smq_shape sh = { { 0, 0, 0, 0, NULL }, NULL, 0, NULL, 0, 0, 0 };
	int err;

	if (!bytes)
		return -EINVAL;
	if ((err = smq_struct_in(&sh.geometry, sizeof(sh.geometry), gin, size,
				 SMQ_LEAST_GEOMETRY)))
		return err;
	return smq_shape_size(&sh, sizeof(sh), bytes);
}

/* Board b's region: its control block and its body; board 0's also holds
 * the superblock's page and the tables. */
int smq_layout_ranges(const struct smq_layout *l, unsigned b,
		      struct smq_range r[SMQ_MAX_RANGES])
{
	int n = 0;

	if (b == 0)
		r[n++] = (struct smq_range){ 0, SMQ_SB_SIZE };
	r[n++] = (struct smq_range){ lay_ctl(b), SMQ_CTL_SIZE };
	if (b == 0)
		r[n++] = (struct smq_range){ SMQ_BOARD_TABLE,
					     l->tables_end - SMQ_BOARD_TABLE };
	if (b < l->boards)
		r[n++] = (struct smq_range){ l->body[b], l->body_size[b] };
	return n;
}

const void *smq_view_at(const struct smq_view *v, uint64_t off, uint64_t len)
{
	return smq_segments_at(v->seg, v->nseg, off, len);
}
