/* The count build's model of the cache lines a message moves between the
 * two sides of a queue (SMQ_COUNT_FAR only).  Each line has the sides that
 * hold its newest copy.  A side that reads a line it does not hold fetches
 * it from the other; a side that writes a line the other holds takes it
 * from the other (fetching it, or taking the other's copy away).  Either
 * is one line moved.  The side of a call is the calling thread's
 * smq_line_side (-1: not watched), set by the test; one thread at a time. */
#include <stdint.h>
#include <string.h>
#include "format/format.h"

#ifdef SMQ_COUNT_FAR
__thread int smq_line_side = -1;

#define SLOTS (1u << 16)
static struct {
	uintptr_t line;  /* address / SMQ_LINE + 1; 0: empty */
	uint8_t holders;
} table[SLOTS];
static struct smq_line_move moves[SMQ_LINE_MOVES];
static size_t nmoves;
/* Mappings of one window (two handles of one process map it twice): an
 * address in one is the canonical offset it maps. */
struct mapping {
	uintptr_t start, len;
	uint64_t off;
};
static struct mapping maps[16];
static unsigned nmaps;

void smq_line_mapping(const void *p, uint64_t len, uint64_t off)
{
	if (nmaps < sizeof(maps) / sizeof(maps[0]))
		maps[nmaps++] = (struct mapping){ (uintptr_t)p, (uintptr_t)len,
						  off };
}

static uintptr_t canonical(uintptr_t a)
{
	for (unsigned i = 0; i < nmaps; i++)
		if (a - maps[i].start < maps[i].len)
			return (uintptr_t)(maps[i].off + (a - maps[i].start));
	return a;
}

static void touch_line(uintptr_t line, int write)
{
	unsigned side = (unsigned)smq_line_side & 1;
	uint8_t me = (uint8_t)(1u << side);
	uint32_t h = (uint32_t)((line * 0x9e3779b97f4a7c15ull) >> 48) &
		     (SLOTS - 1);

	while (table[h].line && table[h].line != line + 1)
		h = (h + 1) & (SLOTS - 1);
	if (!table[h].line) {  /* first seen: fetched from memory */
		table[h].line = line + 1;
		table[h].holders = me;
		return;
	}
	bool moved = write ? table[h].holders != me
			   : !(table[h].holders & me);
	table[h].holders = write ? me : table[h].holders | me;
	if (moved && nmoves < SMQ_LINE_MOVES)
		moves[nmoves++] = (struct smq_line_move){ line * SMQ_LINE,
							  (int)side, write };
}

void smq_line_touch(const volatile void *p, size_t n, int write)
{
	if (!n)
		return;
	uintptr_t a = canonical((uintptr_t)p);
	for (uintptr_t l = a / SMQ_LINE; l <= (a + n - 1) / SMQ_LINE; l++)
		touch_line(l, write);
}

size_t smq_line_moves(struct smq_line_move *out, size_t max)
{
	size_t n = nmoves < max ? nmoves : max;
	if (out)
		memcpy(out, moves, n * sizeof(*out));
	nmoves = 0;
	return n;
}

void smq_line_forget(void)
{
	memset(table, 0, sizeof(table));
	nmoves = 0;
	nmaps = 0;
}
#endif
