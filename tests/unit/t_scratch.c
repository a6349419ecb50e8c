/* Feature scratch (smq(7), Scratch areas) and the tests of the window's
 * map and of the raw link that smqctl check runs through it:
 *  - init with SMQ_SHAPE_SCRATCH writes each area's head and guard words
 *    where smq(7) puts them, a clear leaves them, and the layout grows by
 *    69632 bytes a board; a window with the bit and less body_extra is
 *    refused (body_extra, at least 69632);
 *  - without the feature the data calls say -ENOTSUP and a look still
 *    reads the superblock's magic and the notice;
 *  - a sound view: every look OK; clear, write, verify OK; raw writes and
 *    reads round trip, bounds checked, a monitor refused;
 *  - faults injected into the view (the test build's hook): a read view
 *    shifted by -4096 (SHIFTED, the neighbour's notice recognised), a
 *    body that wraps every 64 KiB (ALIASED 65536), writes shifted by 64
 *    (SHIFTED -64), a stuck bit (STUCK), writes that never arrive and an
 *    area never cleared (NOTHING), each naming the first wrong offset;
 *  - the map test costs the queues nothing: messages sent before it are
 *    received after it, whole, and the window validates. */
#include "testint.h"
#include "testlib.h"

/* the least count of checks a run makes (224 here) */
TEST_FLOOR(220);

#ifndef SMQ_COUNT_FAR
#error "t_scratch needs the test build's hooks (SMQ_COUNT_FAR)"
#endif

static struct smq_test_fault fault;
static unsigned fault_self, fault_board;
static int fault_write, fault_on;

static int view_hook(unsigned self, unsigned board, int write,
		     struct smq_test_fault *f)
{
	if (!fault_on || self != fault_self || board != fault_board ||
	    write != fault_write)
		return 0;
	*f = fault;
	return 1;
}

static void inject(unsigned self, unsigned board, int write,
		   struct smq_test_fault f)
{
	fault = f;
	fault_self = self;
	fault_board = board;
	fault_write = write;
	fault_on = 1;
}

static struct smq_window *format(const char *spec, unsigned boards,
				 uint32_t flags)
{
	struct smq_window *w;
	struct smq_shape sh = { { boards, boards, 16, 560, NULL }, NULL, flags,
				NULL, 0, 0, 0 };

	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE,
		    &w));
	OK(smq_init_shape(w, &sh, sizeof(sh)));
	return w;
}

static void layout_and_words(const char *spec)
{
	struct smq_window *w = format(spec, 3, SMQ_SHAPE_SCRATCH);
	struct smq_shape sh = { { 3, 3, 16, 560, NULL }, NULL, 0, NULL, 0,
				0, 0 };
	uint64_t without, with;

	OK(smq_shape_size(&sh, sizeof(sh), &without));
	sh.flags = SMQ_SHAPE_SCRATCH;
	OK(smq_shape_size(&sh, sizeof(sh), &with));
	CHECK(with == without + 3 * 69632ull);
	const struct smq_layout *l = &w->lay;
	CHECK(l->compat == SMQ_FEATURE_SCRATCH);
	for (unsigned b = 0; b < 3; b++) {
		const struct smq_scratch_head *h = at(w, lay_scratch_head(l, b));
		const uint64_t *g = at(w, lay_guard(l, b));
		CHECK(!memcmp(&h->magic, "SMQSCRCH", 8) && h->board == b &&
		      h->size == 69632 && h->offset == lay_scratch_head(l, b));
		CHECK(h->check == smq_scratch_word(h->offset + 24));
		CHECK(lay_guard(l, b) + 64 == l->body[b] + l->body_size[b]);
		for (unsigned i = 0; i < 8; i++)
			CHECK(g[i] == smq_scratch_word(lay_guard(l, b) + 8 * i));
	}
	/* smq(7)'s examples of scratch_word */
	CHECK(smq_scratch_word(0) == 0x15744463b943f3d3ull);
	CHECK(smq_scratch_word(4096) == 0xecf92677902791fdull);
	/* a clear leaves them */
	OK(smq_clear(w, -1));
	struct smq_map_result r;
	OK(smq_map_look(w, 2, &r, sizeof(r)));
	if (r.kind != SMQ_MAP_OK)
		fprintf(stderr, "kind %u at %#llx (%s): %#llx, want %#llx\n",
			r.kind, (unsigned long long)r.offset, r.what,
			(unsigned long long)r.found,
			(unsigned long long)r.expected);
	/* the notice, the journal head, the scratch head (4), the guard (8) */
	CHECK(r.kind == SMQ_MAP_OK && r.words == 14);
	/* the bit with too little body_extra: refused, named */
	struct smq_sb *sb = at(w, 0);
	sb->body_extra = 4096;
	struct smq_view v = smq_window_view(w);
	sb->checksum = smq_geometry_checksum(&v, l->queues);
	struct smq_fault f;
	EXPECT(smq_validate(w, &f, sizeof(f)), -SMQ_EGEOMETRY);
	/* the journal (256 entries: 20480 bytes) and the scratch area */
	CHECK(!strcmp(f.field, "body_extra") && f.value == 4096 &&
	      f.limit == 20480 + 69632 && f.kind == SMQ_FAULT_AT_LEAST);
	OK(smq_close(w));
}

static void without_feature(const char *spec)
{
	struct smq_window *w = format(spec, 2, 0);
	struct smq_map_result r;
	char buf[8];

	CHECK(w->lay.compat == 0);
	EXPECT(smq_map_clear(w), -ENOTSUP);
	EXPECT(smq_map_write(w, 1, 7), -ENOTSUP);
	EXPECT(smq_map_verify(w, 1, 7, &r, sizeof(r)), -ENOTSUP);
	EXPECT(smq_scratch_write(w, 1, 0, buf, 8, 1), -ENOTSUP);
	EXPECT(smq_scratch_read(w, 1, 0, buf, 8), -ENOTSUP);
	OK(smq_map_look(w, 0, &r, sizeof(r)));
	CHECK(r.kind == SMQ_MAP_OK && r.words == 3);
	OK(smq_map_look(w, 1, &r, sizeof(r)));
	CHECK(r.kind == SMQ_MAP_OK && r.words == 2);
	OK(smq_close(w));
}

/* Board `writer` writes board `owner`'s area, which verifies it. */
static void round_trip(struct smq_window **w, unsigned writer, unsigned owner,
		       uint64_t nonce, struct smq_map_result *r)
{
	OK(smq_map_clear(w[owner]));
	OK(smq_map_write(w[writer], owner, nonce));
	OK(smq_map_verify(w[owner], writer, nonce, r, sizeof(*r)));
}

static void sound_and_raw(const char *spec, struct smq_window **w)
{
	struct smq_map_result r;
	uint8_t out[4096], in[4096];

	for (unsigned a = 0; a < 3; a++)
		for (unsigned b = 0; b < 3; b++) {
			OK(smq_map_look(w[a], b, &r, sizeof(r)));
			CHECK(r.kind == SMQ_MAP_OK && !r.wrong);
			if (a == b)
				continue;
			round_trip(w, a, b, 0x100 * a + b, &r);
			CHECK(r.kind == SMQ_MAP_OK && !r.wrong &&
			      r.words == 8192 && r.board == b);
		}
	/* a test of another tag does not verify */
	OK(smq_map_clear(w[1]));
	OK(smq_map_write(w[0], 1, 5));
	OK(smq_map_verify(w[1], 0, 6, &r, sizeof(r)));
	CHECK(r.kind != SMQ_MAP_OK && r.wrong == 8192);
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 7 + 1);
	/* three units from 61440: the third wraps to the start */
	OK(smq_scratch_write(w[0], 2, 57344, out, sizeof(out), 3));
	OK(smq_scratch_read(w[1], 2, 61440, in, sizeof(in)));
	CHECK(!memcmp(in, out, sizeof(in)));
	OK(smq_scratch_read(w[1], 2, 0, in, sizeof(in)));
	CHECK(!memcmp(in, out, sizeof(in)));
	EXPECT(smq_scratch_write(w[0], 2, 61441, out, sizeof(out), 1), -EINVAL);
	EXPECT(smq_scratch_read(w[0], 3, 0, in, 8), -EINVAL);
	EXPECT(smq_scratch_read(w[0], 1, 0, NULL, 8), -EINVAL);
	struct smq_window *mon;
	OK(smq_open(spec, 0, SMQ_OPEN_READONLY, &mon));
	EXPECT(smq_scratch_write(mon, 1, 0, out, 8, 1), -EROFS);
	EXPECT(smq_map_clear(mon), -EROFS);
	OK(smq_map_look(mon, 2, &r, sizeof(r)));
	CHECK(r.kind == SMQ_MAP_OK);
	OK(smq_close(mon));
}

static void faults(struct smq_window **w)
{
	const struct smq_layout *l = &w[0]->lay;
	struct smq_map_result r;

	/* board 0 reads board 2's region a page low: it finds board 1's
	 * notice where board 2's should be */
	inject(0, 2, 0, (struct smq_test_fault){ .shift = -4096 });
	OK(smq_map_look(w[0], 2, &r, sizeof(r)));
	CHECK(r.kind == SMQ_MAP_SHIFTED && r.shift == -4096);
	CHECK(r.offset == lay_ctl(2) + 16 && !strcmp(r.what, "its notice's check"));
	OK(smq_map_look(w[1], 2, &r, sizeof(r)));   /* board 1's view is sound */
	CHECK(r.kind == SMQ_MAP_OK);
	/* board 0's view of board 2's body wraps every 64 KiB: the head, the
	 * end of the region, shows the start of the data area, which board 2
	 * cleared with words that say their offsets */
	CHECK(l->body_size[2] == 131072);
	OK(smq_map_clear(w[2]));
	inject(0, 2, 0, (struct smq_test_fault){ .wrap = 65536 });
	OK(smq_map_look(w[0], 2, &r, sizeof(r)));
	CHECK(r.kind == SMQ_MAP_ALIASED && r.wrap == 65536);
	CHECK(r.offset == lay_scratch_head(l, 2));
	/* board 0's writes land 64 bytes after where they are aimed */
	inject(0, 1, 1, (struct smq_test_fault){ .shift = 64 });
	round_trip(w, 0, 1, 9, &r);
	CHECK(r.kind == SMQ_MAP_SHIFTED && r.shift == -64);
	CHECK(r.offset == lay_scratch(l, 1) && r.wrong == 8192);
	/* ...arrive with bit 4 set */
	inject(0, 1, 1, (struct smq_test_fault){ .ones = 0x10 });
	round_trip(w, 0, 1, 9, &r);
	CHECK(r.kind == SMQ_MAP_STUCK && r.stuck_ones == 0x10 &&
	      !r.stuck_zeros);
	/* ...with bit 50 clear: the writer's board field */
	inject(0, 2, 1, (struct smq_test_fault){ .zeros = 1ull << 48 });
	round_trip(w, 1, 2, 3, &r);    /* board 1's are sound */
	CHECK(r.kind == SMQ_MAP_OK);
	inject(1, 2, 1, (struct smq_test_fault){ .zeros = 1ull << 48 });
	round_trip(w, 1, 2, 3, &r);
	CHECK(r.kind == SMQ_MAP_STUCK && r.stuck_zeros == 1ull << 48);
	/* ...never arrive */
	inject(0, 1, 1, (struct smq_test_fault){ .drop = 1 });
	round_trip(w, 0, 1, 9, &r);
	CHECK(r.kind == SMQ_MAP_NOTHING && r.offset == lay_scratch(l, 1));
	fault_on = 0;
	/* an area never cleared nor written: nothing arrived either */
	memset(at(w[0], lay_scratch(l, 2)), 0, 65536);
	OK(smq_map_verify(w[2], 0, 9, &r, sizeof(r)));
	CHECK(r.kind == SMQ_MAP_NOTHING);
}

/* Messages queued before the map test come out after it, whole. */
static void queues_untouched(struct smq_window **w)
{
	struct smq_queue *tx, *rx;
	struct smq_map_result r;
	char buf[560];
	size_t len;

	OK(smq_queue_open(w[0], 1, SMQ_SENDER, 0, &tx));
	for (int i = 0; i < 16; i++) {
		memset(buf, 'a' + i, sizeof(buf));
		OK(smq_send(tx, buf, sizeof(buf), 0));
	}
	for (unsigned a = 0; a < 3; a++)
		round_trip(w, a, (a + 1) % 3, 77, &r);
	OK(smq_scratch_write(w[2], 1, 0, buf, sizeof(buf), 100));
	OK(smq_validate(w[1], NULL, 0));
	OK(smq_queue_open(w[1], 1, SMQ_RECEIVER, 0, &rx));
	for (int i = 0; i < 16; i++) {
		OK(smq_receive(rx, buf, sizeof(buf), &len, NULL, 0));
		CHECK(len == sizeof(buf) && buf[0] == 'a' + i &&
		      buf[len - 1] == 'a' + i);
	}
	EXPECT(smq_receive(rx, buf, sizeof(buf), &len, NULL, 0), -EAGAIN);
	OK(smq_queue_close(rx));
	OK(smq_queue_close(tx));
}

int main(void)
{
	const char *spec = test_window();
	struct smq_window *w[3];

	smq_test_view = view_hook;
	layout_and_words(spec);
	without_feature(spec);
	/* no journal: board 2's body is then 128 KiB, the wrap below */
	w[0] = format(spec, 3, SMQ_SHAPE_SCRATCH | SMQ_SHAPE_NO_JOURNAL);
	for (unsigned b = 1; b < 3; b++)
		OK(smq_open(spec, b, 0, &w[b]));
	sound_and_raw(spec, w);
	faults(w);
	queues_untouched(w);
	for (unsigned b = 0; b < 3; b++)
		OK(smq_close(w[b]));
	printf("scratch: layout, words, looks, map tests and faults, raw link\n");
	return 0;
}
