/* Feature scratch: tests of the window's map and of the raw link, for
 * smqctl check (smq(7), feature "scratch").
 *
 * A board reads what it knows another's region holds (the superblock's
 * magic, the region's notice, its scratch head and guard words) through
 * its own mapping: a view shifted by a translation offset, or one that
 * wraps, shows something else there, often something it knows from
 * elsewhere, which says how far off the view is.  Then each board writes
 * words that say who wrote them and where they were meant to land into
 * the others' scratch data areas, and the owner of each reads its own
 * memory back.  Nothing here is on the message path; every read of
 * another region is a named one (SMQ_FAR_MAP). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "window.h"

#define DATA_WORDS (SMQ_SCRATCH_DATA_SIZE / 8)
#define OFFSET_MASK ((1ull << SMQ_WORD_OFFSET_BITS) - 1)

/* How board w->board reaches board's region: test builds may inject a
 * fault (hook.h); in other builds the view is the mapping. */
struct view {
	struct smq_window *w;
	unsigned board;
	bool faulty;
	struct smq_test_fault f;
};

static void view_init(struct view *v, struct smq_window *w, unsigned board,
		      int write)
{
	memset(v, 0, sizeof(*v));
	v->w = w;
	v->board = board;
#ifdef SMQ_COUNT_FAR
	v->faulty = smq_test_view && smq_test_view(w->board, board, write,
						   &v->f);
#else
	(void)write;
#endif
}

static uint64_t view_off(const struct view *v, uint64_t off)
{
	const struct smq_layout *l = &v->w->lay;

	if (!v->faulty)
		return off;
	if (v->f.wrap && off >= l->body[v->board] &&
	    off - l->body[v->board] < l->body_size[v->board])
		off = l->body[v->board] + (off - l->body[v->board]) % v->f.wrap;
	return off + (uint64_t)v->f.shift;
}

/* A word read through the view: all ones where nothing is mapped, as a
 * read that no device answers returns. */
static uint64_t view_read(const struct view *v, uint64_t off)
{
	const uint64_t *p = smq_map_at(&v->w->map, view_off(v, off), 8);

	if (!p)
		return ~0ull;
#ifdef SMQ_COUNT_FAR
	if (v->board != v->w->board)
		__atomic_fetch_add(&v->w->far_loads[SMQ_FAR_MAP], 1,
				   __ATOMIC_RELAXED);
#endif
	return LOAD(p);
}

static void view_write(const struct view *v, uint64_t off, uint64_t word)
{
	if (v->faulty && v->f.drop)
		return;
	if (v->faulty)
		word = (word | v->f.ones) & ~v->f.zeros;
	uint64_t *p = smq_map_at(&v->w->map, view_off(v, off), 8);
	if (p)
		STORE(p, word);
}

static uint64_t data_start(const struct smq_layout *l, unsigned b)
{
	return lay_scratch(l, b);
}

static uint32_t tag_of(uint64_t nonce)
{
	uint32_t tag = (uint32_t)(nonce & 0x3ff);
	return tag == SMQ_EMPTY_TAG ? tag ^ 1 : tag;
}

/* ---- what a board knows another's region holds ---- */

struct known {
	uint64_t off, want;
	const char *what;
};
#define MAX_KNOWN (3 + 4 + SMQ_GUARD_WORDS)

static int known_of(const struct smq_window *w, unsigned b,
		    struct known k[MAX_KNOWN])
{
	const struct smq_layout *l = &w->lay;
	uint64_t magic;
	int n = 0;

	memcpy(&magic, SMQ_MAGIC, sizeof(magic));
	if (b == 0)
		k[n++] = (struct known){ 0, magic, "the superblock's magic" };
	k[n++] = (struct known){ lay_ctl(b) + offsetof(struct smq_notice, check),
				 smq_notice_check(w->generation, b),
				 "its notice's check" };
	if (l->features & SMQ_FEATURE_JOURNAL)
		k[n++] = (struct known){ lay_journal(l, b) +
					 offsetof(struct smq_journal_head, board),
					 b | (uint64_t)l->journal << 32,
					 "its journal's board and size" };
	if (!(l->compat & SMQ_FEATURE_SCRATCH))
		return n;
	uint64_t h = lay_scratch_head(l, b);
	memcpy(&magic, SMQ_SCRATCH_MAGIC, sizeof(magic));
	k[n++] = (struct known){ h, magic, "its scratch head's magic" };
	k[n++] = (struct known){ h + 8, b | (uint64_t)SMQ_SCRATCH_SIZE << 32,
				 "its scratch head's board and size" };
	k[n++] = (struct known){ h + 16, h, "its scratch head's offset" };
	k[n++] = (struct known){ h + 24, smq_scratch_word(h + 24),
				 "its scratch head's check" };
	for (unsigned i = 0; i < SMQ_GUARD_WORDS; i++)
		k[n++] = (struct known){ lay_guard(l, b) + 8 * i,
					 smq_scratch_word(lay_guard(l, b) + 8 * i),
					 "its guard words" };
	return n;
}

/* Where a word found is known to belong: a known word of any region, or
 * a word of a data area that says its own offset (cleared, or written
 * by a test of tag).  false: nothing known. */
static bool recognise(const struct smq_window *w, uint64_t word, uint32_t tag,
		      uint64_t *at)
{
	const struct smq_layout *l = &w->lay;
	struct known k[MAX_KNOWN];

	for (unsigned b = 0; b < l->boards; b++) {
		int n = known_of(w, b, k);
		for (int i = 0; i < n; i++)
			if (k[i].want == word) {
				*at = k[i].off;
				return true;
			}
	}
	uint32_t t = (uint32_t)(word >> 54);
	if (!(l->compat & SMQ_FEATURE_SCRATCH) ||
	    (t != SMQ_EMPTY_TAG && t != tag))
		return false;
	uint64_t off = word & OFFSET_MASK;
	for (unsigned b = 0; b < l->boards; b++)
		if (off >= data_start(l, b) && off % 8 == 0 &&
		    off - data_start(l, b) < SMQ_SCRATCH_DATA_SIZE) {
			*at = off;
			return true;
		}
	return false;
}

static bool power_of_two(uint64_t x)
{
	return x && !(x & (x - 1));
}

/* The first wrong word at k->off, found holding word: what it looks
 * like.  A view that wraps shows what lies lower by a power of two, while
 * what lies below that reads right; a shifted one shows everything moved
 * by the same amount. */
static void judge_read(const struct smq_window *w, struct smq_map_result *r,
		       const struct known *k, uint64_t word, bool below_ok,
		       uint32_t tag)
{
	uint64_t at;

	r->offset = k->off;
	r->found = word;
	r->expected = k->want;
	snprintf(r->what, sizeof(r->what), "%s", k->what);
	if (word == ~0ull)
		r->kind = SMQ_MAP_NOTHING;
	else if (!recognise(w, word, tag, &at))
		r->kind = SMQ_MAP_WRONG;
	else if (at < k->off && power_of_two(k->off - at) && below_ok) {
		r->kind = SMQ_MAP_ALIASED;
		r->wrap = k->off - at;
	} else {
		r->kind = SMQ_MAP_SHIFTED;
		r->shift = (int64_t)(at - k->off);
	}
}

static int look(struct smq_window *w, unsigned board, struct smq_map_result *r)
{
	struct known k[MAX_KNOWN];
	struct view v;
	bool ok_below = false;

	memset(r, 0, sizeof(*r));
	r->board = board;
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	if (board >= w->lay.boards)
		return -EINVAL;
	int n = known_of(w, board, k);
	view_init(&v, w, board, 0);
	r->words = (uint64_t)n;
	for (int i = 0; i < n; i++) {
		uint64_t word = view_read(&v, k[i].off);
		if (word == k[i].want) {
			ok_below |= !r->wrong;
			continue;
		}
		if (!r->wrong++)
			judge_read(w, r, &k[i], word, ok_below, SMQ_EMPTY_TAG);
	}
	return smq_stale(w);
}

int smq_map_look(struct smq_window *w, unsigned board,
		 struct smq_map_result *out, size_t size)
{
	struct smq_map_result r;

	if (!w || !out || size < SMQ_LEAST_MAP_RESULT)
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	pthread_mutex_lock(&w->follow_lock);
	int err = look(w, board, &r);
	pthread_mutex_unlock(&w->follow_lock);
	smq_struct_out(out, size, &r, sizeof(r));
	return err;
}

/* ---- the data areas ---- */

static int scratch_ready(struct smq_window *w, unsigned board)
{
	if (!w)
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	if (board >= w->lay.boards)
		return -EINVAL;
	return w->lay.compat & SMQ_FEATURE_SCRATCH ? 0 : -ENOTSUP;
}

/* After writing another board's region: a read of it returns only once
 * the posted writes before it have landed. */
static void flush_to(struct smq_window *w, unsigned board)
{
	const uint64_t *p = smq_map_at(&w->map, lay_scratch_head(&w->lay,
								 board), 8);

	if (board == w->board || !p)
		return;
	smq_consume(w->map.order);
	(void)FAR_LOAD_WORD(w, SMQ_FAR_MAP, ((struct smq_far){ (uint8_t *)p }),
			    uint64_t);
}

/* Fills the data area of board with word(i) through v. */
static int fill(struct smq_window *w, unsigned board, int write,
		uint32_t tag, unsigned writer)
{
	struct view v;
	int err = scratch_ready(w, board);

	if (err || (err = smq_enter(w)))
		return err;
	view_init(&v, w, board, write);
	uint64_t start = data_start(&w->lay, board);
	for (uint64_t i = 0; i < DATA_WORDS; i++)
		view_write(&v, start + 8 * i,
			   smq_data_word(tag, writer, start + 8 * i));
	smq_leave(w);
	flush_to(w, board);
	return 0;
}

int smq_map_clear(struct smq_window *w)
{
	return fill(w, w ? w->board : 0, 0, SMQ_EMPTY_TAG, 63);
}

int smq_map_write(struct smq_window *w, unsigned board, uint64_t nonce)
{
	return fill(w, board, 1, tag_of(nonce), w ? w->board : 0);
}

struct tally {
	uint64_t ones, zeros, want_ones, want_zeros;
	uint64_t empties, moved;
	int64_t shift;
	bool same_shift;
};

static void tally_word(struct tally *t, uint64_t got, uint64_t want,
		       uint64_t off, uint32_t tag, unsigned writer)
{
	t->ones &= got;
	t->zeros &= ~got;
	t->want_ones &= want;
	t->want_zeros &= ~want;
	if (got == want)
		return;
	if (got == smq_data_word(SMQ_EMPTY_TAG, 63, off)) {
		t->empties++;
		return;
	}
	if ((uint32_t)(got >> 54) != tag || ((got >> 48) & 63) != writer)
		return;
	int64_t d = (int64_t)(got & OFFSET_MASK) - (int64_t)off;
	if (t->moved++ && d != t->shift)
		t->same_shift = false;
	t->shift = d;
}

/* Bits that every word read has set (or clear) while the words written
 * differ there, and that explain every wrong word: stuck. */
static bool stuck(const struct view *v, const struct tally *t, uint64_t start,
		  uint32_t tag, unsigned writer, struct smq_map_result *r)
{
	uint64_t s1 = t->ones & ~t->want_ones, s0 = t->zeros & ~t->want_zeros;

	if (!(s1 | s0))
		return false;
	for (uint64_t i = 0; i < DATA_WORDS; i++) {
		uint64_t off = start + 8 * i;
		uint64_t want = smq_data_word(tag, writer, off);
		if (view_read(v, off) != ((want | s1) & ~s0))
			return false;
	}
	r->stuck_ones = s1;
	r->stuck_zeros = s0;
	return true;
}

int smq_map_verify(struct smq_window *w, unsigned writer, uint64_t nonce,
		   struct smq_map_result *out, size_t size)
{
	struct smq_map_result r;
	struct tally t = { ~0ull, ~0ull, ~0ull, ~0ull, 0, 0, 0, true };
	struct view v;
	uint32_t tag = tag_of(nonce);
	int err;

	memset(&r, 0, sizeof(r));
	if (!out || size < SMQ_LEAST_MAP_RESULT)
		return -EINVAL;
	if ((err = scratch_ready(w, w ? w->board : 0)) ||
	    writer >= w->lay.boards)
		return err ? err : -EINVAL;
	r.board = w->board;
	r.words = DATA_WORDS;
	view_init(&v, w, w->board, 0);
	uint64_t start = data_start(&w->lay, w->board);
	for (uint64_t i = 0; i < DATA_WORDS; i++) {
		uint64_t off = start + 8 * i;
		uint64_t want = smq_data_word(tag, writer, off);
		uint64_t got = view_read(&v, off);
		tally_word(&t, got, want, off, tag, writer);
		if (got != want && !r.wrong++) {
			r.offset = off;
			r.found = got;
			r.expected = want;
		}
	}
	snprintf(r.what, sizeof(r.what), "board %u's words", writer);
	if (!r.wrong)
		r.kind = SMQ_MAP_OK;
	else if (t.empties == DATA_WORDS || (t.zeros == ~0ull && r.wrong ==
						 DATA_WORDS))
		r.kind = SMQ_MAP_NOTHING;  /* cleared, or never written */
	else if (stuck(&v, &t, start, tag, writer, &r))
		r.kind = SMQ_MAP_STUCK;
	else if (t.moved && t.same_shift && t.moved + t.empties == r.wrong) {
		r.kind = SMQ_MAP_SHIFTED;
		r.shift = t.shift;
	} else
		r.kind = SMQ_MAP_WRONG;
	smq_struct_out(out, size, &r, sizeof(r));
	return smq_stale(w);
}

/* ---- the raw link ---- */

static void *data_at(struct smq_window *w, unsigned board, size_t offset,
		     size_t len, int *err)
{
	*err = scratch_ready(w, board);
	if (*err)
		return NULL;
	if (offset > SMQ_SCRATCH_DATA_SIZE ||
	    len > SMQ_SCRATCH_DATA_SIZE - offset) {
		*err = -EINVAL;
		return NULL;
	}
	void *p = smq_map_at(&w->map, data_start(&w->lay, board) + offset,
			     len ? len : 1);
	if (!p)
		*err = -SMQ_ETOOSMALL;
	return p;
}

int smq_scratch_write(struct smq_window *w, unsigned board, size_t offset,
		      const void *buf, size_t len, unsigned times)
{
	int err;
	uint8_t *p = data_at(w, board, offset, len, &err);

	if (!p)
		return err;
	if (!buf && len)
		return -EINVAL;
	if ((err = smq_enter(w)))
		return err;
	/* unit after unit, as a DMA engine streams them: writing one place
	 * over and over, a write-combining buffer would merge the units */
	uint8_t *area = p - offset;
	size_t at = offset, end = len ? SMQ_SCRATCH_DATA_SIZE / len * len : 0;
	for (unsigned i = 0; i < times; i++) {
		if (at + len > end)
			at = 0;
		smq_far_copy((struct smq_far){ area }, at, buf, len);
		at += len;
	}
	smq_leave(w);
	flush_to(w, board);
	return 0;
}

int smq_scratch_read(struct smq_window *w, unsigned board, size_t offset,
		     void *buf, size_t len)
{
	int err;
	const uint8_t *p = data_at(w, board, offset, len, &err);

	if (!p)
		return err;
	if (!buf && len)
		return -EINVAL;
#ifdef SMQ_COUNT_FAR
	if (board != w->board)
		__atomic_fetch_add(&w->far_loads[SMQ_FAR_MAP], 1,
				   __ATOMIC_RELAXED);
#endif
	smq_consume(w->map.order);
	memcpy(buf, p, len);
	return smq_stale(w);
}
