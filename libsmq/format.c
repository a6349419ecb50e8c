/* The window format: layout, ranges of each region, checksum, signatures.
 * Nothing here touches a window. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "abi.h"
#include "format.h"
#include "view.h"

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

/* A word a receiver can tell from any stale one: it changes with the
 * generation, the queue, the lane and the sequence (control words signed
 * with a changing bit pattern, as the SCI message-passing layer does). */
uint64_t smq_signature(uint64_t gen, unsigned q, unsigned s, uint64_t seq)
{
	uint64_t z = seq + gen * 0x9e3779b97f4a7c15ull +
		     (((uint64_t)q << 8 | s) * 0xd1b54a32d192ed03ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void smq_layout_free(struct smq_layout *l)
{
	free(l->receiver);
	free(l->qflags);
	free(l->rx);
	l->receiver = NULL;
	l->qflags = NULL;
	l->rx = NULL;
}

/* Bodies: board b's lane lines for every queue, then the rx area of each
 * queue b receives, rounded to a page.  Sizes are bounded by the geometry
 * checks (validate.c), so one queue's rings fit in 2^51 bytes; the sum is
 * checked as it grows. */
static int place_bodies(struct smq_layout *l)
{
	uint64_t head = 2 * SMQ_LINE + l->bottoms_size + SMQ_LINE +
			2 * (uint64_t)l->boards * SMQ_LINE;
	uint64_t off = l->tables_end;

	for (unsigned b = 0; b < l->boards; b++) {
		l->body[b] = off;
		off += (uint64_t)l->queues * SMQ_LANE_LINES * SMQ_LINE;
		for (unsigned q = 0; q < l->queues; q++) {
			if (l->receiver[q] != b)
				continue;
			l->rx[q] = off;
			off += head + (uint64_t)l->boards * lay_entries(l, q) *
				      lay_stride(l, q);
			if (off > MAX_WINDOW)
				return -SMQ_EGEOMETRY;
		}
		off = SMQ_ALIGN(off, SMQ_PAGE);
		l->body_size[b] = off - l->body[b];
	}
	l->size = off;
	return 0;
}

/* g->queues counts the application queues; the layout adds one diagnostic
 * queue for each board after them. */
int smq_layout_compute(struct smq_layout *l, const struct smq_geometry *g)
{
	if (g->boards < 1 || g->boards > SMQ_MAX_BOARDS || g->queues < 1 ||
	    g->queues + g->boards > SMQ_MAX_QUEUES || !g->entries ||
	    (g->entries & (g->entries - 1)) || g->entries > SMQ_MAX_ENTRIES ||
	    g->entry_size > SMQ_MAX_ENTRY_SIZE)
		return -SMQ_EGEOMETRY;
	memset(l, 0, sizeof(*l));
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
	l->tables_end = SMQ_ALIGN(SMQ_QUEUE_TABLE + (uint64_t)l->queues *
				  sizeof(struct smq_qdesc), SMQ_PAGE);
	l->bottoms_size = SMQ_ALIGN((uint64_t)g->boards * 8, SMQ_LINE);
	l->receiver = calloc(l->queues, sizeof(*l->receiver));
	l->qflags = calloc(l->queues, sizeof(*l->qflags));
	l->rx = calloc(l->queues, sizeof(*l->rx));
	if (!l->receiver || !l->qflags || !l->rx) {
		smq_layout_free(l);
		return -ENOMEM;
	}
	for (unsigned q = 0; q < l->queues; q++) {
		uint32_t r;
		if (q >= g->queues) {
			r = q - g->queues;
			l->qflags[q] = SMQ_QUEUE_DIAGNOSTIC;
		} else {
			r = g->receivers ? g->receivers[q] : q % g->boards;
		}
		if (r >= g->boards) {
			smq_layout_free(l);
			return -EINVAL;
		}
		l->receiver[q] = (uint16_t)r;
	}
	int err = place_bodies(l);
	if (err)
		smq_layout_free(l);
	return err;
}

int smq_layout_size(const struct smq_geometry *gin, size_t size,
		    uint64_t *bytes)
{
	struct smq_geometry g;
	struct smq_layout l;
	int err;

	if (!bytes)
		return -EINVAL;
	if ((err = smq_struct_in(&g, sizeof(g), gin, size)))
		return err;
	err = smq_layout_compute(&l, &g);
	if (err)
		return err == -SMQ_EGEOMETRY ? -EINVAL : err;
	*bytes = l.size;
	smq_layout_free(&l);
	return 0;
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
	for (unsigned i = 0; i < v->nseg; i++) {
		const struct smq_segment *s = &v->seg[i];
		if (off >= s->start && len <= s->len &&
		    off - s->start <= s->len - len)
			return s->ptr + (off - s->start);
	}
	return NULL;
}
