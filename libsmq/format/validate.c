/* Validation of a window: everything is checked before anything is
 * trusted (a window is memory that another board, a crash or a power-on
 * left in any state).  Reads only, through a view of the segments.  The
 * superblock, the layout and the tables here; the lanes, which move while
 * boards work, in lanes.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "hook.h"

#define SB_AT(name) offsetof(struct smq_sb, name)

/* Bytes the view maps: what a truncated window is said to have. */
static uint64_t view_size(const struct smq_view *v)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < v->nseg; i++)
		n += v->seg[i].len;
	return n;
}

/* Where tables_extra starts: the page after the queue table. */
static uint64_t extra_at(uint32_t queues)
{
	return SMQ_ALIGN(SMQ_QUEUE_TABLE + (uint64_t)queues *
			 sizeof(struct smq_qdesc), SMQ_PAGE);
}

/* Over the geometry fields (bytes 8..59 of the superblock: version
 * through diag_entry_size), line 3 (what features add), the queue table
 * and tables_extra (what features add there, written by init only). */
static uint32_t checksum_of(const struct smq_sb *sb, const struct smq_view *v,
			    uint32_t queues)
{
	const void *qt = smq_view_at(v, SMQ_QUEUE_TABLE,
				     (uint64_t)queues * sizeof(struct smq_qdesc));
	uint64_t te = sb ? LOAD(&sb->tables_extra) : 0;
	const void *extra = te ? smq_view_at(v, extra_at(queues), te) : NULL;
	if (!sb || !qt || (te && !extra))
		return 0;
	uint32_t crc = smq_crc32c(0, (const uint8_t *)sb + SB_CHECKSUM_FROM,
				  SB_CHECKSUM_TO - SB_CHECKSUM_FROM);
	crc = smq_crc32c(crc, (const uint8_t *)sb + SB_EXTRA_LINE, SMQ_LINE);
	crc = smq_crc32c(crc, qt, (size_t)queues * sizeof(struct smq_qdesc));
	return te ? smq_crc32c(crc, extra, te) : crc;
}

uint32_t smq_geometry_checksum(const struct smq_view *v, uint32_t queues)
{
	return checksum_of(sb_view(v), v, queues);
}

/* The magic, version, constants and features of the superblock; its
 * lines 0 and 3 copied into *sb. */
static int check_header(const struct smq_view *v, struct smq_sb *sb,
			struct smq_fault *f)
{
	const uint64_t *magic = smq_view_at(v, 0, 8);
	uint64_t want;

	/* init zeroes the magic first and writes it last: a zero magic is a
	 * window never formatted, or being formatted right now */
	memcpy(&want, SMQ_MAGIC, sizeof(want));
	if (!magic)
		return fault(f, SMQ_EUNFORMATTED, "magic", 0, 0, want, EXPECTED);
	uint64_t m = LOAD_ACQ(magic);  /* init stores it last, with release */
	if (m == 0)
		return fault(f, SMQ_EUNFORMATTED, "magic", 0, 0, want, EXPECTED);
	if (m != want)
		return fault(f, SMQ_EMAGIC, "magic", 0, m, want, EXPECTED);
	const struct smq_sb *live = sb_view(v);
	if (!live)
		return fault(f, SMQ_ETOOSMALL, "window_size", SB_AT(window_size),
			     view_size(v), SMQ_SB_SIZE, SMQ_FAULT_AT_LEAST);
	/* line 0 once: every bound below comes from this copy, so an init
	 * rewriting the window meanwhile can make the checks fail (and
	 * smq_confirm_fault say why), never read or write past what they
	 * checked */
	const uint64_t *from = (const uint64_t *)live;
	uint64_t *to = (uint64_t *)sb;
	for (unsigned i = 0; i < SMQ_LINE / sizeof(*to); i++)
		to[i] = LOAD(&from[i]);
	from = (const uint64_t *)((const uint8_t *)live + SB_EXTRA_LINE);
	to = (uint64_t *)((uint8_t *)sb + SB_EXTRA_LINE);
	for (unsigned i = 0; i < SMQ_LINE / sizeof(*to); i++)
		to[i] = LOAD(&from[i]);
	if (LOAD(&sb->version) != SMQ_FORMAT_VERSION)
		return fault(f, SMQ_EVERSION, "version", SB_AT(version),
			     LOAD(&sb->version), SMQ_FORMAT_VERSION, EXPECTED);
	if (LOAD(&sb->sb_size) != SMQ_SB_SIZE)
		return fault(f, SMQ_ECORRUPT, "sb_size", SB_AT(sb_size),
			     LOAD(&sb->sb_size), SMQ_SB_SIZE, EXPECTED);
	/* the value is the lowest bit this library does not know */
	uint32_t unknown = LOAD(&sb->features_incompat) &
			   ~SMQ_FEATURES_INCOMPAT_KNOWN;
	if (unknown)
		return fault(f, SMQ_EFEATURE, "features_incompat",
			     SB_AT(features_incompat), unknown & -unknown,
			     SMQ_FEATURES_INCOMPAT_KNOWN, SMQ_FAULT_KNOWN);
	uint64_t te = LOAD(&sb->tables_extra), be = LOAD(&sb->body_extra);
	if (te % SMQ_PAGE || te > 1ull << 46)
		return fault(f, SMQ_EGEOMETRY, "tables_extra", SB_AT(tables_extra),
			     te, 1ull << 46, SMQ_FAULT_PAGES);
	if (be % SMQ_PAGE || be > 1ull << 40)
		return fault(f, SMQ_EGEOMETRY, "body_extra", SB_AT(body_extra),
			     be, 1ull << 40, SMQ_FAULT_PAGES);
	/* feature journal: its entries, a power of two, and only with it */
	uint32_t je = LOAD(&sb->journal_entries);
	bool journal = LOAD(&sb->features_incompat) & SMQ_FEATURE_JOURNAL;
	if (journal && je > SMQ_JOURNAL_MAX)
		return fault(f, SMQ_EGEOMETRY, "journal_entries",
			     SB_AT(journal_entries), je, SMQ_JOURNAL_MAX, AT_MOST);
	if (journal && je < SMQ_JOURNAL_MIN)
		return fault(f, SMQ_EGEOMETRY, "journal_entries",
			     SB_AT(journal_entries), je, SMQ_JOURNAL_MIN,
			     SMQ_FAULT_AT_LEAST);
	if (journal && !smq_journal_size_ok(je)) {
		/* a power of two: the next one up is what it should be */
		uint64_t p = SMQ_JOURNAL_MIN;
		while (p < je)
			p <<= 1;
		return fault(f, SMQ_EGEOMETRY, "journal_entries",
			     SB_AT(journal_entries), je, p, EXPECTED);
	}
	if (!journal && je)
		return fault(f, SMQ_EGEOMETRY, "journal_entries",
			     SB_AT(journal_entries), je, 0, EXPECTED);
	/* feature journal takes the start of body_extra, feature scratch
	 * its end */
	uint64_t need = smq_journal_bytes(journal ? je : 0) +
			(LOAD(&sb->features_compat) & SMQ_FEATURE_SCRATCH
			 ? SMQ_SCRATCH_SIZE : 0);
	if (be < need)
		return fault(f, SMQ_EGEOMETRY, "body_extra", SB_AT(body_extra),
			     be, need, SMQ_FAULT_AT_LEAST);
	return 0;
}

static int check_geometry(const struct smq_sb *sb, struct smq_fault *f)
{
	uint32_t boards = LOAD(&sb->boards), queues = LOAD(&sb->queues);
	uint32_t entries = LOAD(&sb->entries), diag = LOAD(&sb->diag_queues);

	if (boards < 1)
		return fault(f, SMQ_EGEOMETRY, "boards", SB_AT(boards), boards, 1,
			     SMQ_FAULT_AT_LEAST);
	if (boards > SMQ_MAX_BOARDS)
		return fault(f, SMQ_EGEOMETRY, "boards", SB_AT(boards), boards,
			     SMQ_MAX_BOARDS, AT_MOST);
	if (diag != boards)
		return fault(f, SMQ_EGEOMETRY, "diag_queues", SB_AT(diag_queues),
			     diag, boards, EXPECTED);
	/* at least one application queue besides the diagnostic ones */
	if (queues <= diag)
		return fault(f, SMQ_EGEOMETRY, "queues", SB_AT(queues), queues,
			     (uint64_t)diag + 1, SMQ_FAULT_AT_LEAST);
	if (queues > SMQ_MAX_QUEUES)
		return fault(f, SMQ_EGEOMETRY, "queues", SB_AT(queues), queues,
			     SMQ_MAX_QUEUES, AT_MOST);
	if (entries > SMQ_MAX_ENTRIES)
		return fault(f, SMQ_EGEOMETRY, "entries", SB_AT(entries),
			     entries, SMQ_MAX_ENTRIES, AT_MOST);
	if (!entries || (entries & (entries - 1))) {
		/* a power of two: the next one up is what it should be */
		uint64_t p = 1;
		while (p < entries)
			p <<= 1;
		return fault(f, SMQ_EGEOMETRY, "entries", SB_AT(entries),
			     entries, p, EXPECTED);
	}
	if (LOAD(&sb->entry_size) > SMQ_MAX_ENTRY_SIZE)
		return fault(f, SMQ_EGEOMETRY, "entry_size", SB_AT(entry_size),
			     LOAD(&sb->entry_size), SMQ_MAX_ENTRY_SIZE, AT_MOST);
	return 0;
}

/* The queue table: indexes, receivers, senders, and the diagnostic
 * queues last, one received by each board, every board sending.  Fills
 * receivers[] and senders[] of the application queues. */
static int check_queue_table(const struct smq_view *v, const struct smq_sb *sb,
			     uint16_t *receivers, uint64_t *senders,
			     struct smq_fault *f)
{
	uint32_t boards = LOAD(&sb->boards), queues = LOAD(&sb->queues);
	uint32_t app = queues - LOAD(&sb->diag_queues);
	uint64_t all = boards == 64 ? ~0ull : (1ull << boards) - 1;
	const struct smq_qdesc *qt = smq_view_at(v, SMQ_QUEUE_TABLE,
						 (uint64_t)queues * sizeof(*qt));

	for (uint32_t q = 0; q < queues; q++) {
		uint64_t off = SMQ_QUEUE_TABLE + q * (uint64_t)sizeof(*qt);
		uint32_t r = LOAD(&qt[q].receiver);
		uint64_t m = LOAD(&qt[q].senders);
		uint16_t want = q < app ? 0 : SMQ_QUEUE_DIAGNOSTIC;
		if (LOAD(&qt[q].index) != q)
			return fault(f, SMQ_ECORRUPT, "queue_table.index", off,
				     LOAD(&qt[q].index), q, EXPECTED);
		if (r >= boards)
			return fault(f, SMQ_ECORRUPT, "queue_table.receiver",
				     off + 4, r, boards - 1, AT_MOST);
		if (LOAD(&qt[q].flags) != want)
			return fault(f, SMQ_ECORRUPT, "queue_table.flags", off + 6,
				     LOAD(&qt[q].flags), want, EXPECTED);
		if (q >= app && r != q - app)
			return fault(f, SMQ_ECORRUPT, "queue_table.receiver",
				     off + 4, r, q - app, EXPECTED);
		/* a sender set names boards that exist, at least one; every
		 * board sends on a diagnostic queue */
		if (!m || (m & ~all) || (q >= app && m != all))
			return fault(f, SMQ_ECORRUPT, "queue_table.senders",
				     off + 8, m, all, q >= app ? EXPECTED
				     : SMQ_FAULT_SUBSET);
		if (q < app) {
			receivers[q] = (uint16_t)r;
			senders[q] = m;
		}
	}
	return 0;
}

/* The run-time state: superblock line 1 and 2, board table, notices,
 * queue lines.  Bounds only: whether the window is usable is
 * smq_check_usable()'s question. */
static int check_state(const struct smq_view *v, const struct smq_layout *l,
		       struct smq_fault *f)
{
	const struct smq_sb *sb = sb_view(v);
	uint64_t gen = LOAD(&sb->generation);

	if (gen == 0)
		return fault(f, SMQ_ECORRUPT, "generation", SB_AT(generation), 0,
			     1, SMQ_FAULT_AT_LEAST);
	if (gen > SMQ_GENERATION_MAX)
		return fault(f, SMQ_ECORRUPT, "generation", SB_AT(generation),
			     gen, SMQ_GENERATION_MAX, AT_MOST);
	if (LOAD(&sb->maint_queue) > l->queues)
		return fault(f, SMQ_ECORRUPT, "maint_queue", SB_AT(maint_queue),
			     LOAD(&sb->maint_queue), l->queues, AT_MOST);
	if (LOAD(&sb->system_state) > SMQ_SYS_READY)
		return fault(f, SMQ_ECORRUPT, "system_state", SB_AT(system_state),
			     LOAD(&sb->system_state), SMQ_SYS_READY, AT_MOST);
	if (LOAD(&sb->maint_phase) > SMQ_MAINT_WRITING)
		return fault(f, SMQ_ECORRUPT, "maint_phase", SB_AT(maint_phase),
			     LOAD(&sb->maint_phase), SMQ_MAINT_WRITING, AT_MOST);
	for (unsigned b = 0; b < l->boards; b++) {
		const struct smq_board_slot *s =
			smq_view_at(v, lay_slot(b), sizeof(*s));
		const struct smq_ctl *c = smq_view_at(v, lay_ctl(b), sizeof(*c));
		uint64_t off = lay_slot(b), coff = lay_ctl(b);
		if (LOAD(&s->state) > SMQ_BOARD_READY)
			return fault(f, SMQ_ECORRUPT, "board.state", off,
				     LOAD(&s->state), SMQ_BOARD_READY, AT_MOST);
		if (LOAD(&s->generation) > gen)
			return fault(f, SMQ_ECORRUPT, "board.generation", off + 8,
				     LOAD(&s->generation), gen, AT_MOST);
		if (LOAD(&s->bell.kind) > SMQ_BELL_IVSHMEM)
			return fault(f, SMQ_ECORRUPT, "board.doorbell", off + 40,
				     LOAD(&s->bell.kind), SMQ_BELL_IVSHMEM, AT_MOST);
		uint64_t ngen = LOAD(&c->notice.generation);
		if (ngen > gen)
			return fault(f, SMQ_ECORRUPT, "notice.generation", coff,
				     ngen, gen, AT_MOST);
		if (ngen && LOAD(&c->notice.check) != smq_notice_check(ngen, b))
			return fault(f, SMQ_ECORRUPT, "notice.check", coff + 16,
				     LOAD(&c->notice.check),
				     smq_notice_check(ngen, b), EXPECTED);
		if (LOAD(&c->notice.system_state) > SMQ_SYS_READY)
			return fault(f, SMQ_ECORRUPT, "notice.system_state",
				     coff + 8, LOAD(&c->notice.system_state),
				     SMQ_SYS_READY, AT_MOST);
		const struct smq_handle_slot *h;
		SMQ_EACH_SLOT(h, c) {
			uint64_t hoff = coff + (uint64_t)((const uint8_t *)h -
							  (const uint8_t *)c);
			uint32_t kind = LOAD_ACQ(&h->kind);
			if (kind > SMQ_SLOT_QUEUE)
				return fault(f, SMQ_ECORRUPT, "handle.kind",
					     hoff + offsetof(struct smq_handle_slot,
							     kind),
					     kind, SMQ_SLOT_QUEUE, AT_MOST);
			if (LOAD(&h->role) > SMQ_RECEIVER)
				return fault(f, SMQ_ECORRUPT, "handle.role",
					     hoff + offsetof(struct smq_handle_slot,
							     role),
					     LOAD(&h->role), SMQ_RECEIVER, AT_MOST);
			/* a stale handle keeps its mark, and the queue of
			 * the layout it opened under */
			if (kind == SMQ_SLOT_QUEUE &&
			    LOAD(&h->generation) == gen &&
			    LOAD(&h->queue) >= l->queues)
				return fault(f, SMQ_ECORRUPT, "handle.queue",
					     hoff + offsetof(struct smq_handle_slot,
							     queue),
					     LOAD(&h->queue), l->queues - 1,
					     AT_MOST);
		}
	}
	for (unsigned q = 0; q < l->queues; q++) {
		const struct smq_rx *rx = smq_view_at(v, l->rx[q], sizeof(*rx));
		const struct smq_rx_info *ri =
			smq_view_at(v, lay_rx_info(l, q), sizeof(*ri));
		int err = smq_rx_fault(l, q, LOAD(&rx->index),
				       LOAD(&rx->cursor), LOAD(&ri->waiting),
				       f);
		if (err)
			return err;
	}
	return 0;
}

int smq_rx_fault(const struct smq_layout *l, unsigned q, uint32_t index,
		 uint32_t cursor, uint32_t waiting, struct smq_fault *f)
{
	if (index != q)
		return fault(f, SMQ_ECORRUPT, "queue.index", l->rx[q], index, q,
			     EXPECTED);
	if (cursor >= lay_lanes(l, q))
		return fault(f, SMQ_ECORRUPT, "queue.cursor", l->rx[q] + 4,
			     cursor, lay_lanes(l, q) - 1, AT_MOST);
	if (waiting > 1)
		return fault(f, SMQ_ECORRUPT, "rx_info.waiting",
			     lay_rx_info(l, q) + 4, waiting, 1, AT_MOST);
	return 0;
}

/* Every range of every region must be mapped. */
static int check_mapped(const struct smq_view *v, const struct smq_layout *l,
			struct smq_fault *f)
{
	for (unsigned b = 0; b < l->boards; b++) {
		struct smq_range r[SMQ_MAX_RANGES];
		int n = smq_layout_ranges(l, b, r);
		for (int i = 0; i < n; i++)
			if (!smq_view_at(v, r[i].start, r[i].len))
				return fault(f, SMQ_ETOOSMALL, "window_size",
					     SB_AT(window_size), view_size(v),
					     l->size, SMQ_FAULT_AT_LEAST);
	}
	return 0;
}

/* The superblock and the queue table, and the layout they give. */
int smq_check_layout(const struct smq_view *v, struct smq_layout *l,
		     struct smq_fault *f)
{
	struct smq_sb copy, *sb = &copy;  /* line 0 only */
	int err = check_header(v, sb, f);
	if (err)
		return err;
	if ((err = check_geometry(sb, f)))
		return err;
	uint32_t queues = LOAD(&sb->queues), diag = LOAD(&sb->diag_queues);
	if (!smq_view_at(v, SMQ_QUEUE_TABLE,
			 (uint64_t)queues * sizeof(struct smq_qdesc)) ||
	    (LOAD(&sb->tables_extra) &&
	     !smq_view_at(v, extra_at(queues), LOAD(&sb->tables_extra))))
		return fault(f, SMQ_ETOOSMALL, "window_size", SB_AT(window_size),
			     view_size(v), LOAD(&sb->window_size),
			     SMQ_FAULT_AT_LEAST);
	/* The checksum covers the queue table: check it before using it.
	 * It sums the geometry we copied, the one we go on with. */
	uint32_t sum = checksum_of(sb, v, queues);
	if (sum != LOAD(&sb->checksum))
		return fault(f, SMQ_ECHECKSUM, "checksum", SB_AT(checksum),
			     LOAD(&sb->checksum), sum, EXPECTED);
	/* the diagnostic queues' shape follows from the application ones' */
	uint32_t entries = LOAD(&sb->entries);
	if (LOAD(&sb->diag_entries) != smq_diag_entries(entries))
		return fault(f, SMQ_EGEOMETRY, "diag_entries",
			     SB_AT(diag_entries), LOAD(&sb->diag_entries),
			     smq_diag_entries(entries), EXPECTED);
	if (LOAD(&sb->diag_entry_size) !=
	    smq_diag_entry_size(LOAD(&sb->entry_size)))
		return fault(f, SMQ_EGEOMETRY, "diag_entry_size",
			     SB_AT(diag_entry_size), LOAD(&sb->diag_entry_size),
			     smq_diag_entry_size(LOAD(&sb->entry_size)), EXPECTED);
	uint16_t *receivers = calloc(queues, sizeof(*receivers));
	uint64_t *senders = calloc(queues, sizeof(*senders));
	if (!receivers || !senders) {
		free(receivers);
		free(senders);
		return -ENOMEM;
	}
	TEST_HOOK(SMQ_HOOK_GEOMETRY_READ);
	err = check_queue_table(v, sb, receivers, senders, f);
	struct smq_shape sh = {
		.geometry = {
			.boards = LOAD(&sb->boards), .queues = queues - diag,
			.entries = LOAD(&sb->entries),
			.entry_size = LOAD(&sb->entry_size),
			.receivers = receivers,
		},
		.senders = senders,
		.flags = (LOAD(&sb->features_incompat) & SMQ_FEATURE_CHECKSUM
			  ? SMQ_SHAPE_CHECKSUM : 0) |
			 (LOAD(&sb->features_compat) & SMQ_FEATURE_SCRATCH
			  ? SMQ_SHAPE_SCRATCH : 0) |
			 (LOAD(&sb->features_incompat) & SMQ_FEATURE_JOURNAL
			  ? 0 : SMQ_SHAPE_NO_JOURNAL),
		.journal = LOAD(&sb->journal_entries),
	};
	if (!err)
		err = smq_layout_make(l, &sh, LOAD(&sb->tables_extra),
				      LOAD(&sb->body_extra));
	free(receivers);
	free(senders);
	if (err == -SMQ_EGEOMETRY)
		return fault(f, SMQ_EGEOMETRY, "window_size", SB_AT(window_size),
			     LOAD(&sb->window_size), 1ull << 46, AT_MOST);
	if (err)
		return err;
	if (LOAD(&sb->window_size) != l->size) {
		smq_layout_free(l);
		return fault(f, SMQ_ECORRUPT, "window_size", SB_AT(window_size),
			     LOAD(&sb->window_size), l->size, EXPECTED);
	}
	/* a window formatted in an object of fixed size fits it (line 1,
	 * read where it is: the copy holds the geometry's lines only) */
	const struct smq_sb *live = sb_view(v);
	uint64_t fixed = live ? LOAD(&live->size_fixed) : 0;
	if (fixed && fixed < l->size) {
		smq_layout_free(l);
		return fault(f, SMQ_ECORRUPT, "size_fixed", SB_AT(size_fixed),
			     fixed, l->size, SMQ_FAULT_AT_LEAST);
	}
	l->compat = LOAD(&sb->features_compat) &
			     SMQ_FEATURES_COMPAT_KNOWN;
	/* a window made before the feature: its senders keep every barrier */
	if (!(LOAD(&sb->features_incompat) & SMQ_FEATURE_MEMBARRIER))
		l->features &= ~SMQ_FEATURE_MEMBARRIER;
	return 0;
}

/* Feature groups: the table fits tables_extra, each group is named once,
 * its members are distinct application queues and follow the previous
 * group's. */
int smq_check_groups(const struct smq_view *v, const struct smq_layout *l,
		     struct smq_fault *f)
{
	uint64_t at = lay_groups(l);
	uint32_t apps = l->queues - l->diag_queues, first = 0;

	if (!at)
		return 0;
	if (l->tables_extra < SMQ_PAGE)
		return fault(f, SMQ_ECORRUPT, "tables_extra", SB_AT(tables_extra),
			     l->tables_extra, SMQ_PAGE, SMQ_FAULT_AT_LEAST);
	const struct smq_group_head *h = smq_view_at(v, at, l->tables_extra);
	uint32_t groups = LOAD(&h->groups), members = LOAD(&h->members);
	if (groups < 1 || groups > SMQ_MAX_GROUPS)
		return fault(f, SMQ_ECORRUPT, "group_head.groups", at, groups,
			     groups ? SMQ_MAX_GROUPS : 1,
			     groups ? AT_MOST : SMQ_FAULT_AT_LEAST);
	if (smq_group_bytes(groups, members) > l->tables_extra ||
	    members > groups * SMQ_GROUP_MAX_MEMBERS)
		return fault(f, SMQ_ECORRUPT, "group_head.members", at + 4,
			     members, (l->tables_extra - SMQ_LINE -
				       (uint64_t)groups * SMQ_LINE) / 4, AT_MOST);
	const struct smq_group_desc *d = (const void *)(h + 1);
	const uint32_t *member = (const uint32_t *)(d + groups);
	for (uint32_t i = 0; i < groups; i++) {
		uint64_t off = at + SMQ_LINE + (uint64_t)i * SMQ_LINE;
		char name[sizeof(d->name) + 1] = { 0 };
		memcpy(name, d[i].name, sizeof(d->name));
		size_t len = strlen(name);
		bool padded = len < sizeof(d->name);
		for (size_t k = len; padded && k < sizeof(d->name); k++)
			padded = !name[k];
		if (!smq_group_name_ok(name, sizeof(name)) || !padded)
			return fault(f, SMQ_ECORRUPT, "group.name", off,
				     (uint8_t)name[0], 0, EXPECTED);
		for (uint32_t j = 0; j < i; j++)
			if (!strncmp(d[j].name, d[i].name, sizeof(d->name)))
				return fault(f, SMQ_ECORRUPT, "group.name", off,
					     i, j, EXPECTED);
		uint32_t count = LOAD(&d[i].count);
		if (LOAD(&d[i].first) != first)
			return fault(f, SMQ_ECORRUPT, "group.first", off + 32,
				     LOAD(&d[i].first), first, EXPECTED);
		if (count < 1 || count > SMQ_GROUP_MAX_MEMBERS ||
		    count > members - first)
			return fault(f, SMQ_ECORRUPT, "group.count", off + 36,
				     count, members - first < SMQ_GROUP_MAX_MEMBERS
					    ? members - first
					    : SMQ_GROUP_MAX_MEMBERS, AT_MOST);
		for (uint32_t k = first; k < first + count; k++) {
			uint64_t moff = (const uint8_t *)&member[k] -
					(const uint8_t *)h + at;
			if (LOAD(&member[k]) >= apps)
				return fault(f, SMQ_ECORRUPT, "group.member", moff,
					     LOAD(&member[k]), apps - 1, AT_MOST);
			for (uint32_t j = first; j < k; j++)
				if (member[j] == member[k])
					return fault(f, SMQ_ECORRUPT,
						     "group.member", moff,
						     member[k], j - first,
						     EXPECTED);
		}
		first += count;
	}
	if (first != members)
		return fault(f, SMQ_ECORRUPT, "group_head.members", at + 4,
			     members, first, EXPECTED);
	return 0;
}

/* Feature journal: each board's head, as init made it (the head word
 * moves, from 1: any value the writers reach). */
static int check_journals(const struct smq_view *v, const struct smq_layout *l,
			  struct smq_fault *f)
{
	char magic[8];

	memcpy(magic, SMQ_JOURNAL_MAGIC, 8);
	for (unsigned b = 0; l->journal && b < l->boards; b++) {
		uint64_t off = lay_journal(l, b);
		const struct smq_journal_head *h = smq_view_at(v, off, SMQ_LINE);
		struct smq_journal_head c;
		const uint64_t *from = (const uint64_t *)h;
		uint64_t *to = (uint64_t *)&c;
		for (unsigned i = 0; i < SMQ_LINE / 8; i++)
			to[i] = LOAD(&from[i]);
		uint64_t want;
		memcpy(&want, magic, 8);
		if (c.magic != want)
			return fault(f, SMQ_ECORRUPT, "journal.magic", off,
				     c.magic, want, EXPECTED);
		if (c.board != b)
			return fault(f, SMQ_ECORRUPT, "journal.board", off + 8,
				     c.board, b, EXPECTED);
		if (c.slots != l->journal)
			return fault(f, SMQ_ECORRUPT, "journal.slots", off + 12,
				     c.slots, l->journal, EXPECTED);
		if (c.check != smq_journal_head_check(&c))
			return fault(f, SMQ_ECORRUPT, "journal.check", off + 32,
				     c.check, smq_journal_head_check(&c),
				     EXPECTED);
		if (!c.incarnation)
			return fault(f, SMQ_ECORRUPT, "journal.incarnation",
				     off + 16, 0, 1, SMQ_FAULT_AT_LEAST);
		if (!c.head)
			return fault(f, SMQ_ECORRUPT, "journal.head", off + 40, 0,
				     1, SMQ_FAULT_AT_LEAST);
	}
	return 0;
}

int smq_check_static(const struct smq_view *v, struct smq_layout *l,
		     struct smq_fault *f)
{
	int err = smq_check_layout(v, l, f);

	if (!err)
		err = check_mapped(v, l, f);
	if (!err)
		err = check_state(v, l, f);
	if (!err)
		err = check_journals(v, l, f);
	if (!err)
		err = smq_check_groups(v, l, f);
	if (err)
		smq_layout_free(l);
	return err;
}
