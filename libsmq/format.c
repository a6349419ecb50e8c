/* The window format: layout, checksum, signatures and validation.
 * Validation reads only; nothing here writes to a window. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

#define MAX_WINDOW (1ull << 46) /* 64 TiB: far past any BAR, no overflow */

uint32_t smq_crc32c(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;

	crc = ~crc;
	while (n--) {
		crc ^= *b++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & -(crc & 1));
	}
	return ~crc;
}

/* Over the geometry fields (bytes 8..43 of the superblock: version through
 * line_size) and the queue table. */
uint32_t smq_geometry_checksum(const void *base, const struct smq_layout *l)
{
	const struct smq_sb *sb = base;
	uint32_t crc = smq_crc32c(0, &sb->version,
				  offsetof(struct smq_sb, checksum) -
				  offsetof(struct smq_sb, version));
	return smq_crc32c(crc, (const uint8_t *)base + l->queue_table,
			  (size_t)l->queues * sizeof(struct smq_qdesc));
}

/* A word a receiver can tell from any stale one: it changes with the
 * generation, the queue, the lane and the sequence (seed 002's signed
 * control words). */
uint64_t smq_signature(uint64_t gen, unsigned q, unsigned s, uint64_t seq)
{
	uint64_t z = seq + gen * 0x9e3779b97f4a7c15ull +
		     (((uint64_t)q << 8 | s) * 0xd1b54a32d192ed03ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int fault(struct smq_fault *f, int err, const char *field,
		 uint64_t offset, uint64_t value, uint64_t limit)
{
	if (f) {
		snprintf(f->field, sizeof(f->field), "%s", field);
		f->offset = offset;
		f->value = value;
		f->limit = limit;
	}
	return -err;
}

static bool is_pow2(uint32_t x) { return x && !(x & (x - 1)); }

/* Checks a geometry's ranges; field offsets are those of the superblock. */
static int check_geometry(const struct smq_geometry *g, struct smq_fault *f)
{
	if (g->boards < 1 || g->boards > SMQ_MAX_BOARDS)
		return fault(f, SMQ_EGEOMETRY, "boards",
			     offsetof(struct smq_sb, boards), g->boards,
			     SMQ_MAX_BOARDS);
	if (g->queues < 1 || g->queues > SMQ_MAX_QUEUES)
		return fault(f, SMQ_EGEOMETRY, "queues",
			     offsetof(struct smq_sb, queues), g->queues,
			     SMQ_MAX_QUEUES);
	if (!is_pow2(g->entries) || g->entries > SMQ_MAX_ENTRIES)
		return fault(f, SMQ_EGEOMETRY, "entries",
			     offsetof(struct smq_sb, entries), g->entries,
			     SMQ_MAX_ENTRIES);
	if (g->entry_size > SMQ_MAX_ENTRY_SIZE)
		return fault(f, SMQ_EGEOMETRY, "entry_size",
			     offsetof(struct smq_sb, entry_size),
			     g->entry_size, SMQ_MAX_ENTRY_SIZE);
	return 0;
}

void smq_layout_free(struct smq_layout *l)
{
	free(l->receiver);
	free(l->rx);
	l->receiver = NULL;
	l->rx = NULL;
}

static int layout_fill(struct smq_layout *l, const struct smq_geometry *g,
		       const struct smq_qdesc *table, struct smq_fault *f)
{
	int err = check_geometry(g, f);

	if (err)
		return err;
	memset(l, 0, sizeof(*l));
	l->boards = g->boards;
	l->queues = g->queues;
	l->entries = g->entries;
	l->entry_size = g->entry_size;
	l->stride = SMQ_ALIGN(SMQ_ENTRY_HEADER + (uint64_t)g->entry_size,
			      SMQ_LINE);
	l->board_table = SMQ_SB_SIZE;
	l->queue_table = l->board_table + (uint64_t)g->boards * SMQ_LINE;
	l->bottoms_size = SMQ_ALIGN((uint64_t)g->boards * 8, SMQ_LINE);
	l->receiver = calloc(g->queues, sizeof(*l->receiver));
	l->rx = calloc(g->queues, sizeof(*l->rx));
	if (!l->receiver || !l->rx) {
		smq_layout_free(l);
		return -ENOMEM;
	}
	for (unsigned q = 0; q < g->queues; q++) {
		uint32_t r = table ? table[q].receiver
			   : g->receivers ? g->receivers[q] : q % g->boards;
		if (r >= g->boards) {
			smq_layout_free(l);
			return fault(f, table ? SMQ_ECORRUPT : EINVAL,
				     "queue_table.receiver",
				     l->queue_table + (uint64_t)q * 8 + 4, r,
				     g->boards - 1);
		}
		l->receiver[q] = (uint16_t)r;
	}

	/* Region b: notice, lane lines per queue, then the receive area
	 * of each queue b receives.  Sizes are bounded by check_geometry, so
	 * one queue's rings fit in 2^51 bytes; the sum is checked as it grows. */
	uint64_t ring_bytes = (uint64_t)g->boards * g->entries * l->stride;
	uint64_t rx_bytes = SMQ_LINE + l->bottoms_size + SMQ_LINE +
			    2 * (uint64_t)g->boards * SMQ_LINE + ring_bytes;
	uint64_t off = SMQ_ALIGN(l->queue_table +
				 (uint64_t)g->queues * sizeof(struct smq_qdesc),
				 SMQ_PAGE);
	for (unsigned b = 0; b < g->boards; b++) {
		uint64_t start = off;
		l->region[b] = off;
		off += SMQ_LINE + (uint64_t)g->queues * SMQ_LANE_LINES * SMQ_LINE;
		for (unsigned q = 0; q < g->queues; q++) {
			if (l->receiver[q] != b)
				continue;
			l->rx[q] = off;
			off += rx_bytes;
			if (off > MAX_WINDOW)
				goto too_big;
		}
		off = SMQ_ALIGN(off, SMQ_PAGE);
		l->region_size[b] = off - start;
	}
	l->size = off;
	return 0;
too_big:
	smq_layout_free(l);
	return fault(f, SMQ_EGEOMETRY, "window_size",
		     offsetof(struct smq_sb, window_size), off, MAX_WINDOW);
}

int smq_layout_compute(struct smq_layout *l, const struct smq_geometry *g)
{
	return layout_fill(l, g, NULL, NULL);
}

int smq_layout_size(const struct smq_geometry *g, uint64_t *bytes)
{
	struct smq_layout l;

	if (!g || !bytes)
		return -EINVAL;
	int err = layout_fill(&l, g, NULL, NULL);
	if (err)
		return err == -SMQ_EGEOMETRY ? -EINVAL : err;
	*bytes = l.size;
	smq_layout_free(&l);
	return 0;
}

#define SB_FIELD(name) offsetof(struct smq_sb, name)

int smq_check_static(const void *base, uint64_t size, struct smq_layout *l,
		     struct smq_fault *f)
{
	const struct smq_sb *sb = base;
	int err;

	/* init zeroes the magic first and writes it last: a zero magic is a
	 * window never formatted, or being formatted right now */
	if (size < sizeof(sb->magic))
		return fault(f, SMQ_EUNFORMATTED, "magic", 0, 0, 0);
	/* acquire: init stores the magic last, with release */
	uint64_t magic = LOAD_ACQ(&sb->magic_word), want;
	memcpy(&want, SMQ_MAGIC, sizeof(want));
	if (magic == 0)
		return fault(f, SMQ_EUNFORMATTED, "magic", 0, 0, 0);
	if (magic != want)
		return fault(f, SMQ_EMAGIC, "magic", 0, magic, 0);
	if (size < SMQ_SB_SIZE)
		return fault(f, SMQ_ETOOSMALL, "window_size",
			     SB_FIELD(window_size), size, SMQ_SB_SIZE);
	uint32_t version = LOAD(&sb->version);
	if (version != SMQ_FORMAT_VERSION)
		return fault(f, SMQ_EVERSION, "version", SB_FIELD(version),
			     version, SMQ_FORMAT_VERSION);
	if (LOAD(&sb->sb_size) != SMQ_SB_SIZE)
		return fault(f, SMQ_ECORRUPT, "sb_size", SB_FIELD(sb_size),
			     LOAD(&sb->sb_size), SMQ_SB_SIZE);
	if (LOAD(&sb->line_size) != SMQ_LINE)
		return fault(f, SMQ_ECORRUPT, "line_size", SB_FIELD(line_size),
			     LOAD(&sb->line_size), SMQ_LINE);

	struct smq_geometry g = {
		.boards = LOAD(&sb->boards), .queues = LOAD(&sb->queues),
		.entries = LOAD(&sb->entries),
		.entry_size = LOAD(&sb->entry_size),
	};
	err = check_geometry(&g, f);
	if (err)
		return err;
	uint64_t qt_end = SMQ_SB_SIZE + (uint64_t)g.boards * SMQ_LINE +
			  (uint64_t)g.queues * sizeof(struct smq_qdesc);
	if (qt_end > size)
		return fault(f, SMQ_ETOOSMALL, "window_size",
			     SB_FIELD(window_size), size, qt_end);

	/* The checksum covers the queue table: check it before using it. */
	struct smq_layout probe = {
		.queues = g.queues,
		.queue_table = SMQ_SB_SIZE + (uint64_t)g.boards * SMQ_LINE,
	};
	uint32_t sum = smq_geometry_checksum(base, &probe);
	if (sum != LOAD(&sb->checksum))
		return fault(f, SMQ_ECHECKSUM, "checksum", SB_FIELD(checksum),
			     LOAD(&sb->checksum), sum);

	const struct smq_qdesc *qt =
		(const void *)((const uint8_t *)base + probe.queue_table);
	for (unsigned q = 0; q < g.queues; q++)
		if (LOAD(&qt[q].index) != q)
			return fault(f, SMQ_ECORRUPT, "queue_table.index",
				     probe.queue_table + q * 8ull,
				     LOAD(&qt[q].index), q);
	err = layout_fill(l, &g, qt, f);
	if (err)
		return err;
	if (LOAD(&sb->window_size) != l->size) {
		err = fault(f, SMQ_ECORRUPT, "window_size",
			    SB_FIELD(window_size), LOAD(&sb->window_size),
			    l->size);
		goto fail;
	}
	if (l->size > size) {
		err = fault(f, SMQ_ETOOSMALL, "window_size",
			    SB_FIELD(window_size), size, l->size);
		goto fail;
	}

	uint64_t gen = LOAD(&sb->generation);
	uint32_t sys = LOAD(&sb->system_state);
	if (gen == 0) {
		err = fault(f, SMQ_ECORRUPT, "generation",
			    SB_FIELD(generation), 0, 1);
		goto fail;
	}
	if (sys > SMQ_SYS_READY) {
		err = fault(f, SMQ_ECORRUPT, "system_state",
			    SB_FIELD(system_state), sys, SMQ_SYS_READY);
		goto fail;
	}
	for (unsigned b = 0; b < g.boards; b++) {
		uint64_t off = l->board_table + (uint64_t)b * SMQ_LINE;
		const struct smq_board_slot *s =
			(const void *)((const uint8_t *)base + off);
		const struct smq_notice *n =
			(const void *)((const uint8_t *)base + l->region[b]);
		if (LOAD(&s->state) > SMQ_BOARD_READY) {
			err = fault(f, SMQ_ECORRUPT, "board.state", off,
				    LOAD(&s->state), SMQ_BOARD_READY);
			goto fail;
		}
		if (LOAD(&s->generation) > gen) {
			err = fault(f, SMQ_ECORRUPT, "board.generation",
				    off + 8, LOAD(&s->generation), gen);
			goto fail;
		}
		uint64_t ngen = LOAD(&n->generation);
		if (ngen > gen) {
			err = fault(f, SMQ_ECORRUPT, "notice.generation",
				    l->region[b], ngen, gen);
			goto fail;
		}
		if (ngen && LOAD(&n->check) != smq_notice_check(ngen, b)) {
			err = fault(f, SMQ_ECORRUPT, "notice.check",
				    l->region[b] + 16, LOAD(&n->check),
				    smq_notice_check(ngen, b));
			goto fail;
		}
		if (LOAD(&n->system_state) > SMQ_SYS_READY) {
			err = fault(f, SMQ_ECORRUPT, "notice.system_state",
				    l->region[b] + 8, LOAD(&n->system_state),
				    SMQ_SYS_READY);
			goto fail;
		}
	}
	for (unsigned q = 0; q < g.queues; q++) {
		const struct smq_rx *rx =
			(const void *)((const uint8_t *)base + l->rx[q]);
		if (LOAD(&rx->index) != q) {
			err = fault(f, SMQ_ECORRUPT, "queue.index", l->rx[q],
				    LOAD(&rx->index), q);
			goto fail;
		}
		if (LOAD(&rx->cursor) >= g.boards) {
			err = fault(f, SMQ_ECORRUPT, "queue.cursor",
				    l->rx[q] + 8, LOAD(&rx->cursor),
				    g.boards - 1);
			goto fail;
		}
	}
	return 0;
fail:
	smq_layout_free(l);
	return err;
}

#define AT(base, off) ((const void *)((const uint8_t *)(base) + (off)))

/* One lane's sequence numbers and the entries between bottom and top.
 * Bottoms are read before tops.  A receiver takes an entry by its signature
 * before its sender stores top, so bottom may be top + 1; a lane caught
 * mid-receive may look one entry over full, which the caller retries. */
static int check_lane(const void *base, const struct smq_layout *l,
		      unsigned q, unsigned s,
		      struct smq_fault *f)
{
	const uint64_t *bottoms = AT(base, lay_bottoms(l, q));
	const struct smq_lane_fc *fc = AT(base, lay_lane_fc(l, s, q));
	const struct smq_lane_out *out = AT(base, lay_lane_out(l, s, q));
	const struct smq_lane_in *in = AT(base, lay_lane_in(l, q, s));
	uint64_t bottom = LOAD(&bottoms[s]);
	uint64_t fcb = LOAD(&fc->bottom);
	uint64_t top = LOAD(&in->top);
	uint64_t shadow = LOAD(&out->top);
	const struct smq_rx *rx = AT(base, l->rx[q]);
	uint64_t gen = LOAD(&rx->epoch);

	if (fcb > bottom)
		return fault(f, SMQ_ECORRUPT, "lane.flow_bottom",
			     lay_lane_fc(l, s, q), fcb, bottom);
	/* the receiver takes an entry by its signature, before its sender
	 * stores top: bottom may be top + 1 */
	if (bottom > top + 1 || (top > bottom && top - bottom > l->entries))
		return fault(f, SMQ_ECORRUPT, "lane.top", lay_lane_in(l, q, s),
			     top, bottom + l->entries);
	if (shadow < top || shadow - top > 1)
		return fault(f, SMQ_ECORRUPT, "lane.sender_top",
			     lay_lane_out(l, s, q), shadow, top);
	/* what the sender believes is in flight can not exceed the ring */
	if (shadow > fcb && shadow - fcb > l->entries)
		return fault(f, SMQ_ECORRUPT, "lane.sender_top",
			     lay_lane_out(l, s, q), shadow, fcb + l->entries);
	/* The receiver takes an entry by its signature: the entry at bottom
	 * counts as queued when it carries one, even with top not yet there. */
	uint64_t end = top;
	if (bottom >= top) {
		uint64_t off = lay_ring(l, q, s) +
			       (bottom & (l->entries - 1)) * l->stride;
		const struct smq_entry *e = AT(base, off);
		if (LOAD(&e->signature) == smq_signature(gen, q, s, bottom))
			end = bottom + 1;
	}
	for (uint64_t seq = bottom; seq < end; seq++) {
		uint64_t off = lay_ring(l, q, s) +
			       (seq & (l->entries - 1)) * l->stride;
		const struct smq_entry *e = AT(base, off);
		if (seq < top &&
		    LOAD(&e->signature) != smq_signature(gen, q, s, seq))
			return fault(f, SMQ_ESIGNATURE, "entry.signature",
				     off + 8, LOAD(&e->signature), seq);
		if (LOAD(&e->size) > l->entry_size)
			return fault(f, SMQ_ECORRUPT, "entry.size", off,
				     LOAD(&e->size), l->entry_size);
		if (LOAD(&e->sender) != s)
			return fault(f, SMQ_ECORRUPT, "entry.sender", off + 4,
				     LOAD(&e->sender), s);
	}
	return 0;
}

int smq_check_dynamic(const void *base, const struct smq_layout *l,
		      struct smq_fault *f)
{
	for (unsigned q = 0; q < l->queues; q++)
		for (unsigned s = 0; s < l->boards; s++) {
			int err = 0;
			for (int tries = 0; tries < 3; tries++) {
				err = check_lane(base, l, q, s, f);
				if (!err)
					break;
			}
			if (err)
				return err;
		}
	return 0;
}
