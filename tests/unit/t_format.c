/* The window format: round trips, a rejection for every corrupted field
 * (and no write while rejecting), a window left unusable by an init or
 * clear that did not finish, layout sizes, init and open errors. */
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include "testlib.h"
#include "testint.h"

/* the least count of checks a run makes (20225 as root here; fewer
 * where a part needs root or a device) */
TEST_FLOOR(20000);

#define SB(f) ((uint64_t)offsetof(struct smq_sb, f))

/* ---- helpers ---- */

static void pwrite_at(const char *spec, uint64_t off, const void *p, size_t n)
{
	int fd = open(test_path(spec), O_WRONLY);

	if (fd < 0 || pwrite(fd, p, n, (off_t)off) != (ssize_t)n)
		FAIL("pwrite %s at %llu", spec, (unsigned long long)off);
	close(fd);
}

static void put(const char *spec, uint64_t off, unsigned width, uint64_t v)
{
	uint8_t b1 = (uint8_t)v;
	uint16_t b2 = (uint16_t)v;
	uint32_t b4 = (uint32_t)v;

	switch (width) {
	case 1: pwrite_at(spec, off, &b1, 1); break;
	case 2: pwrite_at(spec, off, &b2, 2); break;
	case 4: pwrite_at(spec, off, &b4, 4); break;
	case 8: pwrite_at(spec, off, &v, 8); break;
	default: FAIL("bad width %u", width);
	}
}

static uint64_t get(const char *spec, uint64_t off, unsigned width)
{
	size_t len;
	uint8_t *b = test_snapshot(spec, &len);
	uint64_t v = 0;

	CHECK(off + width <= len);
	memcpy(&v, b + off, width); /* little endian */
	free(b);
	return v;
}

static void truncate_to(const char *spec, uint64_t size)
{
	if (truncate(test_path(spec), (off_t)size) < 0)
		FAIL("truncate %s", spec);
}


/* A freshly formatted window (a new file: generation 1). */
static void format(const char *spec, const struct smq_geometry *g)
{
	struct smq_window *w;
	struct smq_window_info wi;

	unlink(test_path(spec));
	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w));
	OK(smq_init(w, g, sizeof(*g)));
	OK(smq_window_info(w, &wi, sizeof(wi)));
	CHECK(wi.generation == 1);
	OK(smq_close(w));
}

/* Rewrite the geometry checksum so that only the intended field is off. */
static void fix_checksum(const char *spec, const struct smq_layout *l)
{
	size_t len;
	uint8_t *b = test_snapshot(spec, &len);
	struct smq_segment seg = { 0, len, b, SMQ_SEG_WINDOW };
	struct smq_view v = { &seg, 1 };
	uint32_t sum = smq_geometry_checksum(&v, l->queues);

	free(b);
	put(spec, SB(checksum), 4, sum);
}

/* The same, except for n bytes at off (which may change). */
static void same_except(uint8_t *snap, size_t len, const char *spec,
			const char *what, uint64_t off, size_t n)
{
	size_t now_len;
	uint8_t *now = test_snapshot(spec, &now_len);

	CHECK(now_len == len && off + n <= len);
	memcpy(snap + off, now + off, n);
	free(now);
	test_same(snap, len, spec, what);
}

static uint64_t layout_size(const struct smq_geometry *g)
{
	uint64_t n = 0;

	OK(smq_layout_size(g, sizeof(*g), &n));
	return n;
}

/* ---- a. round trips ---- */

static void round_trip(const char *spec, const struct smq_geometry *g)
{
	struct smq_window *w;
	struct smq_window_info wi;
	uint64_t size = layout_size(g);

	format(spec, g);
	for (unsigned b = 0; b < g->boards; b++) {
		w = NULL;
		OK(smq_open(spec, b, 0, &w));
		CHECK(w != NULL);
		memset(&wi, 0xff, sizeof(wi));
		OK(smq_window_info(w, &wi, sizeof(wi)));
		CHECK(!strncmp(wi.transport, spec, strlen(wi.transport)) &&
		      spec[strlen(wi.transport)] == ':');
		CHECK(!strcmp(wi.name, spec));
		CHECK(wi.board == b);
		CHECK(wi.version == SMQ_FORMAT_VERSION && wi.version == 3);
		CHECK(wi.diag_queues == g->boards);
		CHECK(wi.geometry.boards == g->boards);
		CHECK(wi.geometry.queues == g->queues);
		CHECK(wi.geometry.entries == g->entries);
		CHECK(wi.geometry.entry_size == g->entry_size);
		CHECK(wi.geometry.receivers == NULL);
		CHECK(wi.window_size == size);
		CHECK(wi.mapped_size >= size);
		CHECK(wi.generation == 1);
		CHECK(wi.system_state == SMQ_SYS_FORMATTED);
		CHECK(wi.format_time_ns != 0);
		OK(smq_validate(w, NULL, 0));
		/* the application queues, then one diagnostic queue for
		 * each board */
		for (unsigned q = 0; q < g->queues + g->boards; q++) {
			struct smq_queue_info qi;
			bool diag = q >= g->queues;
			unsigned r = diag ? q - g->queues
				   : g->receivers ? g->receivers[q]
				   : q % g->boards;
			OK(smq_queue_info(w, q, &qi, sizeof(qi)));
			CHECK(qi.index == q && qi.receiver == r);
			CHECK(qi.flags == (diag ? SMQ_QUEUE_DIAGNOSTIC : 0u));
			CHECK(qi.receiver_pid == 0 && qi.fill == 0);
			CHECK(qi.queued == 0);
			/* diagnostic queues: at most 16 entries of 64 KiB */
			CHECK(qi.capacity == (diag && g->entries > 16 ? 16
					      : g->entries));
			CHECK(qi.entry_size == (diag && g->entry_size > 65536
						? 65536 : g->entry_size));
			CHECK(qi.sent == 0 && qi.received == 0);
		}
		for (unsigned o = 0; o < g->boards; o++) {
			struct smq_board_info bi;
			OK(smq_board_info(w, o, &bi, sizeof(bi)));
			CHECK(bi.state == SMQ_BOARD_ABSENT && bi.generation == 0);
		}
		EXPECT(smq_board_info(w, g->boards, &(struct smq_board_info){0},
				      sizeof(struct smq_board_info)),
		       -EINVAL);
		EXPECT(smq_queue_info(w, g->queues + g->boards,
				      &(struct smq_queue_info){0},
				      sizeof(struct smq_queue_info)), -EINVAL);
		OK(smq_close(w));
	}

	/* Re-init bumps the generation by exactly one each time. */
	OK(smq_open(spec, 0, 0, &w));
	for (uint64_t gen = 2; gen <= 4; gen++) {
		OK(smq_init(w, g, sizeof(*g)));
		OK(smq_window_info(w, &wi, sizeof(wi)));
		CHECK(wi.generation == gen);
		CHECK(wi.system_state == SMQ_SYS_FORMATTED);
		OK(smq_validate(w, NULL, 0));
	}
	OK(smq_close(w));
	OK(smq_open(spec, g->boards - 1, 0, &w));
	OK(smq_window_info(w, &wi, sizeof(wi)));
	CHECK(wi.generation == 4 && wi.window_size == size);
	OK(smq_close(w));
}

static void test_round_trips(const char *spec)
{
	static const uint16_t recv6[6] = { 3, 3, 0, 1, 3, 2 };
	static const uint16_t recv2[2] = { 2, 2 }; /* boards 0, 1 receive none */
	const struct smq_geometry gs[] = {
		{ 1, 1, 1, 1, NULL },
		{ 2, 2, 64, 1024, NULL },
		{ 8, 16, 8, 100, NULL },
		{ 4, 6, 4, 200, recv6 },
		{ 3, 2, 2, 1, recv2 },
	};
	for (size_t i = 0; i < sizeof(gs) / sizeof(gs[0]); i++)
		round_trip(spec, &gs[i]);

	/* Sizes worked out by hand from smq(7): with a journal of 256
	 * entries a board (the default), 20480 bytes each. */
	CHECK(layout_size(&gs[0]) == 282624 + 20480);
	CHECK(layout_size(&gs[1]) == 630784 + 2 * 20480);

	/* A re-init with another geometry continues the generation. */
	struct smq_window *w;
	struct smq_window_info wi;
	format(spec, &gs[1]);
	OK(smq_open(spec, 0, 0, &w));
	OK(smq_init(w, &gs[2], sizeof(gs[2])));
	OK(smq_close(w));
	OK(smq_open(spec, 7, 0, &w));
	OK(smq_window_info(w, &wi, sizeof(wi)));
	CHECK(wi.generation == 2 && wi.geometry.boards == 8 &&
	      wi.geometry.queues == 16 && wi.geometry.entries == 8 &&
	      wi.geometry.entry_size == 100 &&
	      wi.window_size == layout_size(&gs[2]));
	OK(smq_validate(w, NULL, 0));
	OK(smq_close(w));
}

/* ---- b. a rejection for every corrupted field ---- */

static const struct smq_geometry G2 = { 2, 2, 64, 1024, NULL };
static struct smq_layout L; /* of G2 */

enum how { WRITE, WRITE_FIXSUM, TRUNCATE, ZERO };

struct corruption {
	const char *what;
	enum how how;
	uint64_t off;      /* WRITE: where; TRUNCATE: new size; ZERO: bytes */
	unsigned width;
	uint64_t value;
	int err;           /* expected, negated */
	const char *field;
	uint64_t foff;     /* expected fault offset */
	int check_value;   /* fault.value must be fvalue */
	uint64_t fvalue;
};

static void try_corruption(const char *spec, const struct corruption *c)
{
	struct smq_window *w = (void *)1;
	struct smq_queue *q = (void *)1;
	struct smq_fault f;
	struct smq_window_info wi;
	uint64_t pending = 7;
	size_t len;
	uint8_t *snap;

	format(spec, &G2);
	switch (c->how) {
	case WRITE:
	case WRITE_FIXSUM:
		/* it must be a change */
		CHECK(get(spec, c->off, c->width) != c->value);
		put(spec, c->off, c->width, c->value);
		if (c->how == WRITE_FIXSUM)
			fix_checksum(spec, &L);
		break;
	case TRUNCATE:
		truncate_to(spec, c->off);
		break;
	case ZERO: {
		uint8_t *z = calloc(1, c->off);
		CHECK(z);
		pwrite_at(spec, 0, z, c->off);
		free(z);
		break;
	}
	}
	snap = test_snapshot(spec, &len);

	/* Rejected, with the specific code, as every board. */
	for (unsigned b = 0; b < G2.boards; b++) {
		w = (void *)1;
		if (smq_open(spec, b, 0, &w) != c->err)
			FAIL("%s: smq_open as board %u: expected %d (%s)",
			     c->what, b, c->err, smq_strerror(c->err));
		CHECK(w == NULL);
	}
	test_same(snap, len, spec, c->what);

	/* Attached raw, validation names the field. */
	OK(smq_open(spec, 0, SMQ_OPEN_RAW, &w));
	CHECK(w != NULL);
	memset(&f, 0, sizeof(f));
	int r = smq_validate(w, &f, sizeof(f));
	if (r != c->err)
		FAIL("%s: smq_validate returned %d (%s), expected %d (%s)",
		     c->what, r, smq_strerror(r), c->err, smq_strerror(c->err));
	if (strcmp(f.field, c->field))
		FAIL("%s: fault field \"%s\", expected \"%s\"", c->what, f.field,
		     c->field);
	if (f.offset != c->foff)
		FAIL("%s: fault offset %llu, expected %llu", c->what,
		     (unsigned long long)f.offset, (unsigned long long)c->foff);
	if (c->check_value && f.value != c->fvalue)
		FAIL("%s: fault value %llu, expected %llu", c->what,
		     (unsigned long long)f.value, (unsigned long long)c->fvalue);
	EXPECT(smq_validate(w, NULL, 0), c->err);

	/* A raw handle writes nothing. */
	EXPECT(smq_announce(w), -SMQ_EUNFORMATTED);
	EXPECT(smq_heartbeat(w), -SMQ_EUNFORMATTED);
	EXPECT(smq_synchronize(w, 0, 0, 1, &pending), -SMQ_EUNFORMATTED);
	CHECK(pending == 0);
	EXPECT(smq_queue_open(w, 0, SMQ_SENDER, 0, &q), -SMQ_EUNFORMATTED);
	CHECK(q == NULL);
	q = (void *)1;
	EXPECT(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &q), -SMQ_EUNFORMATTED);
	CHECK(q == NULL);
	/* clear reads the window as it is, and says what is wrong */
	EXPECT(smq_clear(w, -1), c->err);
	EXPECT(smq_clear(w, 0), c->err);
	EXPECT(smq_window_info(w, &wi, sizeof(wi)), -SMQ_EUNFORMATTED);
	EXPECT(smq_board_info(w, 0, &(struct smq_board_info){0},
				      sizeof(struct smq_board_info)),
	       -SMQ_EUNFORMATTED);
	OK(smq_close(w));
	test_same(snap, len, spec, c->what);
	free(snap);

	/* And a re-init from a raw handle repairs it; a window of another
	 * version or an unknown feature only when forced (who is at work
	 * there cannot be told, nor what a newer smq keeps in it). */
	OK(smq_open(spec, 0, SMQ_OPEN_RAW, &w));
	if (c->err == -SMQ_EVERSION || c->err == -SMQ_EFEATURE) {
		snap = test_snapshot(spec, &len);
		EXPECT(smq_init(w, &G2, sizeof(G2)), c->err);
		test_same(snap, len, spec, "init of a window it cannot read");
		free(snap);
		OK(smq_close(w));
		OK(smq_open(spec, 0, SMQ_OPEN_RAW | SMQ_OPEN_CREATE |
				     SMQ_OPEN_FORCE, &w));
	}
	OK(smq_init(w, &G2, sizeof(G2)));
	OK(smq_validate(w, NULL, 0));
	OK(smq_close(w));
	OK(smq_open(spec, 1, 0, &w));
	OK(smq_validate(w, NULL, 0));
	OK(smq_close(w));
}

static void test_corruptions(const char *spec)
{
	const uint64_t gen = 1; /* of a fresh window */
	const uint64_t bt = SMQ_BOARD_TABLE, qt = L.queue_table;
	const uint64_t size = L.size, c1 = lay_ctl(1), c0 = lay_ctl(0);
	const uint64_t kind0 = c1 + offsetof(struct smq_ctl, slot[0].kind);
	uint64_t magic_v; /* the magic as corrupted, read as a number */
	memcpy(&magic_v, "XMQWINDW", 8);

	const struct corruption cs[] = {
		{ "all-zero superblock", ZERO, SMQ_SB_SIZE, 0, 0,
		  -SMQ_EUNFORMATTED, "magic", 0, 1, 0 },
		{ "all-zero window", ZERO, size, 0, 0,
		  -SMQ_EUNFORMATTED, "magic", 0, 1, 0 },
		{ "magic", WRITE, 0, 1, 'X', -SMQ_EMAGIC, "magic", 0, 1,
		  magic_v },
		{ "version 4", WRITE, SB(version), 4, 4, -SMQ_EVERSION,
		  "version", SB(version), 1, 4 },
		{ "version 2", WRITE, SB(version), 4, 2, -SMQ_EVERSION,
		  "version", SB(version), 1, 2 },
		{ "version 1", WRITE, SB(version), 4, 1, -SMQ_EVERSION,
		  "version", SB(version), 1, 1 },
		{ "version 0", WRITE, SB(version), 4, 0, -SMQ_EVERSION,
		  "version", SB(version), 1, 0 },
		{ "sb_size", WRITE, SB(sb_size), 4, 128, -SMQ_ECORRUPT,
		  "sb_size", SB(sb_size), 1, 128 },
		/* an incompatible feature this library does not know: the
		 * lowest such bit is named, checksum or not */
		{ "features_incompat bit 3", WRITE, SB(features_incompat), 4,
		  14, -SMQ_EFEATURE, "features_incompat", SB(features_incompat),
		  1, 8 },
		{ "features_incompat bits 0, 1 and 3", WRITE,
		  SB(features_incompat), 4, 11, -SMQ_EFEATURE,
		  "features_incompat", SB(features_incompat), 1, 8 },
		{ "features_incompat bits 4 and 9", WRITE_FIXSUM,
		  SB(features_incompat), 4, 0x210, -SMQ_EFEATURE,
		  "features_incompat", SB(features_incompat), 1, 0x10 },
		{ "features_compat (checksummed)", WRITE, SB(features_compat), 4,
		  0x8, -SMQ_ECHECKSUM, "checksum", SB(checksum), 0, 0 },
		{ "tables_extra not whole pages", WRITE_FIXSUM, SB(tables_extra),
		  8, 100, -SMQ_EGEOMETRY, "tables_extra", SB(tables_extra), 1,
		  100 },
		{ "body_extra not whole pages", WRITE_FIXSUM, SB(body_extra), 8,
		  4097, -SMQ_EGEOMETRY, "body_extra", SB(body_extra), 1, 4097 },
		{ "tables_extra (checksummed)", WRITE, SB(tables_extra), 8, 4096,
		  -SMQ_ECHECKSUM, "checksum", SB(checksum), 0, 0 },
		{ "boards 0", WRITE, SB(boards), 4, 0, -SMQ_EGEOMETRY,
		  "boards", SB(boards), 1, 0 },
		{ "boards 65", WRITE, SB(boards), 4, 65, -SMQ_EGEOMETRY,
		  "boards", SB(boards), 1, 65 },
		/* one diagnostic queue for each board, no more, no fewer */
		{ "boards 1", WRITE, SB(boards), 4, 1, -SMQ_EGEOMETRY,
		  "diag_queues", SB(diag_queues), 1, 2 },
		{ "diag_queues 3", WRITE, SB(diag_queues), 4, 3, -SMQ_EGEOMETRY,
		  "diag_queues", SB(diag_queues), 1, 3 },
		{ "diag_entries 64", WRITE_FIXSUM, SB(diag_entries), 4, 64,
		  -SMQ_EGEOMETRY, "diag_entries", SB(diag_entries), 1, 64 },
		{ "diag_entry_size 1000", WRITE_FIXSUM, SB(diag_entry_size), 4, 1000,
		  -SMQ_EGEOMETRY, "diag_entry_size", SB(diag_entry_size), 1,
		  1000 },
		{ "queues 0", WRITE, SB(queues), 4, 0, -SMQ_EGEOMETRY,
		  "queues", SB(queues), 1, 0 },
		{ "queues 2 (only diagnostic)", WRITE, SB(queues), 4, 2,
		  -SMQ_EGEOMETRY, "queues", SB(queues), 1, 2 },
		{ "queues 65536", WRITE, SB(queues), 4, 65536, -SMQ_EGEOMETRY,
		  "queues", SB(queues), 1, 65536 },
		{ "entries 0", WRITE, SB(entries), 4, 0, -SMQ_EGEOMETRY,
		  "entries", SB(entries), 1, 0 },
		{ "entries 3", WRITE, SB(entries), 4, 3, -SMQ_EGEOMETRY,
		  "entries", SB(entries), 1, 3 },
		{ "entries 2^21", WRITE, SB(entries), 4, 1u << 21,
		  -SMQ_EGEOMETRY, "entries", SB(entries), 1, 1u << 21 },
		{ "entry_size 16 MiB + 1", WRITE, SB(entry_size), 4,
		  (16u << 20) + 1, -SMQ_EGEOMETRY, "entry_size",
		  SB(entry_size), 1, (16u << 20) + 1 },
		/* in range: only the checksum can tell */
		{ "entry_size 1000", WRITE, SB(entry_size), 4, 1000,
		  -SMQ_ECHECKSUM, "checksum", SB(checksum), 0, 0 },
		{ "entry_size 16 MiB", WRITE, SB(entry_size), 4, 16u << 20,
		  -SMQ_ECHECKSUM, "checksum", SB(checksum), 0, 0 },
		{ "queues 3", WRITE, SB(queues), 4, 3, -SMQ_ECHECKSUM,
		  "checksum", SB(checksum), 0, 0 },
		{ "entries 32", WRITE, SB(entries), 4, 32, -SMQ_ECHECKSUM,
		  "checksum", SB(checksum), 0, 0 },
		{ "window_size (checksummed)", WRITE, SB(window_size), 8, 4096,
		  -SMQ_ECHECKSUM, "checksum", SB(checksum), 0, 0 },
		{ "queue table receiver", WRITE, qt + 16 + 4, 2, 0,
		  -SMQ_ECHECKSUM, "checksum", SB(checksum), 0, 0 },
		{ "queue table index (checksummed)", WRITE, qt + 16, 4, 0,
		  -SMQ_ECHECKSUM, "checksum", SB(checksum), 0, 0 },
		{ "queue table flags (checksummed)", WRITE, qt + 6, 2, 1,
		  -SMQ_ECHECKSUM, "checksum", SB(checksum), 0, 0 },
		{ "checksum", WRITE, SB(checksum), 4,
		  0 /* replaced below */, -SMQ_ECHECKSUM, "checksum",
		  SB(checksum), 0, 0 },
		/* with a matching checksum: the field itself is checked */
		{ "window_size", WRITE_FIXSUM, SB(window_size), 8, 4096,
		  -SMQ_ECORRUPT, "window_size", SB(window_size), 1, 4096 },
		{ "window_size + 4096", WRITE_FIXSUM, SB(window_size), 8,
		  size + 4096, -SMQ_ECORRUPT, "window_size", SB(window_size),
		  1, size + 4096 },
		{ "queue_table.index", WRITE_FIXSUM, qt + 16, 4, 0,
		  -SMQ_ECORRUPT, "queue_table.index", qt + 16, 1, 0 },
		{ "queue_table.receiver", WRITE_FIXSUM, qt + 16 + 4, 2, 2,
		  -SMQ_ECORRUPT, "queue_table.receiver", qt + 16 + 4, 1, 2 },
		{ "queue table senders (checksummed)", WRITE, qt + 8, 8, 1,
		  -SMQ_ECHECKSUM, "checksum", SB(checksum), 0, 0 },
		{ "queue_table.senders none", WRITE_FIXSUM, qt + 8, 8, 0,
		  -SMQ_ECORRUPT, "queue_table.senders", qt + 8, 1, 0 },
		{ "queue_table.senders board 2 of 2", WRITE_FIXSUM, qt + 16 + 8,
		  8, 5, -SMQ_ECORRUPT, "queue_table.senders", qt + 16 + 8, 1,
		  5 },
		{ "queue_table.senders of a diagnostic queue", WRITE_FIXSUM,
		  qt + 2 * 16 + 8, 8, 1, -SMQ_ECORRUPT, "queue_table.senders",
		  qt + 2 * 16 + 8, 1, 1 },
		{ "queue_table.flags", WRITE_FIXSUM, qt + 6, 2, 1,
		  -SMQ_ECORRUPT, "queue_table.flags", qt + 6, 1, 1 },
		{ "queue_table.flags of a diagnostic queue", WRITE_FIXSUM,
		  qt + 2 * 16 + 6, 2, 0, -SMQ_ECORRUPT, "queue_table.flags",
		  qt + 2 * 16 + 6, 1, 0 },
		{ "diagnostic queue of another board", WRITE_FIXSUM,
		  qt + 2 * 16 + 4, 2, 1, -SMQ_ECORRUPT, "queue_table.receiver",
		  qt + 2 * 16 + 4, 1, 1 },
		/* truncated files */
		{ "truncated by a page", TRUNCATE, size - 4096, 0, 0,
		  -SMQ_ETOOSMALL, "window_size", SB(window_size), 1,
		  size - 4096 },
		{ "truncated to 1 byte less", TRUNCATE, size - 1, 0, 0,
		  -SMQ_ETOOSMALL, "window_size", SB(window_size), 1, size - 1 },
		{ "truncated into the queue table", TRUNCATE, qt + 12, 0, 0,
		  -SMQ_ETOOSMALL, "window_size", SB(window_size), 1, qt + 12 },
		{ "truncated into the superblock", TRUNCATE, 100, 0, 0,
		  -SMQ_ETOOSMALL, "window_size", SB(window_size), 1, 100 },
		/* run-time state (not checksummed) */
		{ "generation 0", WRITE, SB(generation), 8, 0, -SMQ_ECORRUPT,
		  "generation", SB(generation), 1, 0 },
		{ "generation 2^32", WRITE, SB(generation), 8, 1ull << 32,
		  -SMQ_ECORRUPT, "generation", SB(generation), 1, 1ull << 32 },
		{ "maint_queue past the queues", WRITE, SB(maint_queue), 4, 5,
		  -SMQ_ECORRUPT, "maint_queue", SB(maint_queue), 1, 5 },
		{ "system_state 7", WRITE, SB(system_state), 4, 7,
		  -SMQ_ECORRUPT, "system_state", SB(system_state), 1, 7 },
		{ "maint_phase 7", WRITE, SB(maint_phase), 4, 7,
		  -SMQ_ECORRUPT, "maint_phase", SB(maint_phase), 1, 7 },
		{ "board 1 state 9", WRITE, bt + SMQ_SLOT_SIZE, 4, 9,
		  -SMQ_ECORRUPT, "board.state", bt + SMQ_SLOT_SIZE, 1, 9 },
		{ "board 0 state 3", WRITE, bt, 4, 3, -SMQ_ECORRUPT,
		  "board.state", bt, 1, 3 },
		{ "board 1 generation", WRITE, bt + SMQ_SLOT_SIZE + 8, 8,
		  gen + 1, -SMQ_ECORRUPT, "board.generation",
		  bt + SMQ_SLOT_SIZE + 8, 1, gen + 1 },
		{ "board 1 doorbell kind", WRITE, bt + SMQ_SLOT_SIZE + 40, 2, 7,
		  -SMQ_ECORRUPT, "board.doorbell", bt + SMQ_SLOT_SIZE + 40, 1, 7 },
		{ "notice 1 generation", WRITE, c1, 8, gen + 1,
		  -SMQ_ECORRUPT, "notice.generation", c1, 1, gen + 1 },
		{ "notice 1 check", WRITE,
		  c1 + offsetof(struct smq_notice, check), 1, 0x5a,
		  -SMQ_ECORRUPT, "notice.check",
		  c1 + offsetof(struct smq_notice, check), 0, 0 },
		{ "notice 1 system_state 9", WRITE, c1 + 8, 4, 9,
		  -SMQ_ECORRUPT, "notice.system_state", c1 + 8, 1, 9 },
		{ "notice 0 system_state 3", WRITE, c0 + 8, 4, 3,
		  -SMQ_ECORRUPT, "notice.system_state", c0 + 8, 1, 3 },
		{ "handle slot kind 9", WRITE, kind0, 4, 9, -SMQ_ECORRUPT,
		  "handle.kind", kind0, 1, 9 },
		{ "handle slot role 3", WRITE,
		  c1 + offsetof(struct smq_ctl, slot[0].role), 4, 3,
		  -SMQ_ECORRUPT, "handle.role",
		  c1 + offsetof(struct smq_ctl, slot[0].role), 1, 3 },
		{ "rx index", WRITE, L.rx[1], 4, 7, -SMQ_ECORRUPT,
		  "queue.index", L.rx[1], 1, 7 },
		{ "rx cursor", WRITE, L.rx[0] + 4, 4, 2, -SMQ_ECORRUPT,
		  "queue.cursor", L.rx[0] + 4, 1, 2 },
	};

	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		struct corruption c = cs[i];
		if (!strcmp(c.what, "checksum")) {
			format(spec, &G2);
			c.value = get(spec, SB(checksum), 4) ^ 0x100;
		}
		try_corruption(spec, &c);
	}

	/* A new, empty file: unformatted, and nothing is written to it. */
	struct smq_window *w;
	struct smq_fault f;
	struct stat st;
	unlink(test_path(spec));
	EXPECT(smq_open(spec, 0, SMQ_OPEN_CREATE, &w), -SMQ_EUNFORMATTED);
	CHECK(w == NULL);
	OK(smq_open(spec, 0, SMQ_OPEN_RAW, &w));
	EXPECT(smq_validate(w, &f, sizeof(f)), -SMQ_EUNFORMATTED);
	CHECK(!strcmp(f.field, "magic") && f.offset == 0);
	EXPECT(smq_announce(w), -SMQ_EUNFORMATTED);
	EXPECT(smq_clear(w, -1), -SMQ_EUNFORMATTED);
	OK(smq_close(w));
	CHECK(stat(test_path(spec), &st) == 0 && st.st_size == 0);
}

/* Dynamic fields: lanes and entries of queued messages. */
static void test_dynamic(const char *spec)
{
	struct smq_window *w0, *w1;
	struct smq_queue *tx, *rx;
	struct smq_fault f;
	struct smq_queue_info qi;
	struct smq_lane_info li;
	size_t len, n;
	unsigned from;
	uint8_t *snap;
	char buf[2048];

	/* lane.top past bottom + entries */
	format(spec, &G2);
	put(spec, lay_lane_in(&L, 0, 1), 8, 65);
	OK(smq_open(spec, 0, 0, &w0));
	snap = test_snapshot(spec, &len);
	EXPECT(smq_validate(w0, &f, sizeof(f)), -SMQ_ECORRUPT);
	CHECK(!strcmp(f.field, "lane.top"));
	CHECK(f.offset == lay_lane_in(&L, 0, 1) && f.value == 65 && f.limit == 64 &&
	      f.kind == SMQ_FAULT_AT_MOST);
	rx = (void *)1;
	EXPECT(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &rx), -SMQ_ECORRUPT);
	CHECK(rx == NULL);
	test_same(snap, len, spec, "lane.top");
	free(snap);
	OK(smq_close(w0));

	/* lane.flow_bottom: the sender's copy of bottom ahead of the receiver's */
	format(spec, &G2);
	put(spec, lay_lane_fc(&L, 1, 0), 8, 5);
	OK(smq_open(spec, 0, 0, &w0));
	EXPECT(smq_validate(w0, &f, sizeof(f)), -SMQ_ECORRUPT);
	CHECK(!strcmp(f.field, "lane.flow_bottom"));
	CHECK(f.offset == lay_lane_fc(&L, 1, 0) && f.value == 5);
	OK(smq_close(w0));

	/* a queue's epoch: 0 outside a clear of it, past epoch_last, a
	 * sender's copy not the receiver's; a queue handle's queue that does
	 * not exist */
	format(spec, &G2);
	put(spec, L.rx[1] + offsetof(struct smq_rx, epoch), 8, 0);
	OK(smq_open(spec, 0, 0, &w0));
	EXPECT(smq_validate(w0, &f, sizeof(f)), -SMQ_ECORRUPT);
	CHECK(!strcmp(f.field, "queue.epoch") && f.value == 0);
	OK(smq_close(w0));
	format(spec, &G2);
	put(spec, L.rx[1] + offsetof(struct smq_rx, epoch), 8,
	    (2ull << SMQ_EPOCH_SHIFT));
	OK(smq_open(spec, 0, 0, &w0));
	EXPECT(smq_validate(w0, &f, sizeof(f)), -SMQ_ECORRUPT);
	CHECK(!strcmp(f.field, "queue.epoch") &&
	      f.limit == (1ull << SMQ_EPOCH_SHIFT) && f.kind == SMQ_FAULT_AT_MOST);
	OK(smq_close(w0));
	format(spec, &G2);
	put(spec, lay_lane_wake(&L, 1, 0) +
	    offsetof(struct smq_lane_wake, queue_epoch), 8, 7);
	OK(smq_open(spec, 0, 0, &w0));
	EXPECT(smq_validate(w0, &f, sizeof(f)), -SMQ_ECORRUPT);
	CHECK(!strcmp(f.field, "lane.queue_epoch") && f.value == 7 &&
	      f.limit == (1ull << SMQ_EPOCH_SHIFT));
	/* a sender whose copy of the epoch is wrong would sign what the
	 * receiver never takes: refused at open */
	OK(smq_open(spec, 1, 0, &w1));
	EXPECT(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx), -SMQ_ECORRUPT);
	OK(smq_close(w1));
	OK(smq_close(w0));
	/* lane.rx_polls (feature membarrier): 0, 1 or 2 */
	format(spec, &G2);
	put(spec, lay_lane_wake(&L, 1, 0) +
	    offsetof(struct smq_lane_wake, rx_polls), 4, 2);
	OK(smq_open(spec, 0, 0, &w0));
	OK(smq_validate(w0, &f, sizeof(f)));
	OK(smq_close(w0));
	put(spec, lay_lane_wake(&L, 1, 0) +
	    offsetof(struct smq_lane_wake, rx_polls), 4, 3);
	OK(smq_open(spec, 0, 0, &w0));
	EXPECT(smq_validate(w0, &f, sizeof(f)), -SMQ_ECORRUPT);
	CHECK(!strcmp(f.field, "lane.rx_polls") && f.value == 3 &&
	      f.limit == 2 && f.kind == SMQ_FAULT_AT_MOST);
	OK(smq_close(w0));

	/* lane.sender_top: the sender's top a ring and one ahead of the
	 * published one (a burst's is at most a ring ahead) */
	format(spec, &G2);
	uint64_t ahead = lay_entries(&L, 1) + 1;
	put(spec, lay_lane_out(&L, 1, 1), 8, ahead);
	OK(smq_open(spec, 0, 0, &w0));
	EXPECT(smq_validate(w0, &f, sizeof(f)), -SMQ_ECORRUPT);
	CHECK(!strcmp(f.field, "lane.sender_top"));
	CHECK(f.offset == lay_lane_out(&L, 1, 1) && f.value == ahead &&
	      f.kind == SMQ_FAULT_AT_MOST && f.limit == ahead - 1);
	OK(smq_close(w0));

	/* A flipped signature in a queued message: refused, not skipped. */
	format(spec, &G2);
	OK(smq_open(spec, 0, 0, &w0));
	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	OK(smq_send(tx, "m0", 2, 0));
	OK(smq_send(tx, "m1", 2, 0));
	OK(smq_send(tx, "m2", 2, 0));
	OK(smq_validate(w0, NULL, 0));
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &rx));
	OK(smq_receive(rx, buf, sizeof(buf), &n, &from, 0));
	CHECK(n == 2 && !memcmp(buf, "m0", 2) && from == 1);
	uint64_t e1 = lay_ring(&L, 0, 1) + 1 * L.stride;
	uint64_t sig = get(spec, e1 + 8, 8);
	CHECK(sig == smq_signature(1ull << SMQ_EPOCH_SHIFT, 0, 1, 1));
	put(spec, e1 + 8, 8, sig ^ (1ull << 17));
	snap = test_snapshot(spec, &len);
	EXPECT(smq_validate(w0, &f, sizeof(f)), -SMQ_ESIGNATURE);
	CHECK(!strcmp(f.field, "entry.signature"));
	CHECK(f.offset == e1 + 8 && f.value == (sig ^ (1ull << 17)) &&
	      f.limit == sig && f.kind == SMQ_FAULT_EXPECTED);
	for (int i = 0; i < 3; i++) {
		memset(buf, 0xa5, sizeof(buf));
		n = 12345;
		from = 99;
		EXPECT(smq_receive(rx, buf, sizeof(buf), &n, &from, 0),
		       -SMQ_ESIGNATURE);
		CHECK(n == 12345 && from == 99);
		for (size_t k = 0; k < sizeof(buf); k++)
			CHECK((uint8_t)buf[k] == 0xa5);
	}
	OK(smq_queue_info(w0, 0, &qi, sizeof(qi)));
	CHECK(qi.fill == 2 && qi.queued == 2 && qi.received == 1 &&
	      qi.sent == 3);
	OK(smq_lane_info(w0, 0, 1, &li, sizeof(li)));
	CHECK(li.bottom == 1 && li.top == 3);
	/* the receiver's rotating cursor may pass the turn on */
	same_except(snap, len, spec, "receive of a bad signature",
		    L.rx[0] + offsetof(struct smq_rx, cursor), 4);
	free(snap);
	/* put it back: the message is still there, in order */
	put(spec, e1 + 8, 8, sig);
	OK(smq_validate(w0, NULL, 0));
	OK(smq_receive(rx, buf, sizeof(buf), &n, &from, 0));
	CHECK(n == 2 && !memcmp(buf, "m1", 2) && from == 1);
	OK(smq_receive(rx, buf, sizeof(buf), &n, &from, 0));
	CHECK(n == 2 && !memcmp(buf, "m2", 2) && from == 1);
	EXPECT(smq_receive(rx, buf, sizeof(buf), &n, &from, 0), -EAGAIN);

	/* An entry size past entry_size: refused, nothing copied. */
	const size_t cap = 100;
	OK(smq_send(tx, "abc", 3, 0));
	uint64_t e3 = lay_ring(&L, 0, 1) + 3 * L.stride;
	CHECK(get(spec, e3, 4) == 3);
	const uint32_t sizes[] = { 1025, 4096, 0xffffffffu };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		put(spec, e3, 4, sizes[i]);
		snap = test_snapshot(spec, &len);
		EXPECT(smq_validate(w0, &f, sizeof(f)), -SMQ_ECORRUPT);
		CHECK(!strcmp(f.field, "entry.size"));
		CHECK(f.offset == e3 && f.value == sizes[i] && f.limit == 1024 &&
		      f.kind == SMQ_FAULT_AT_MOST);
		memset(buf, 0xa5, sizeof(buf));
		n = 12345;
		EXPECT(smq_receive(rx, buf, cap, &n, &from, 0), -SMQ_ECORRUPT);
		EXPECT(smq_receive(rx, buf, sizeof(buf), &n, &from, 0),
		       -SMQ_ECORRUPT);
		CHECK(n == 12345);
		for (size_t k = 0; k < sizeof(buf); k++)
			CHECK((uint8_t)buf[k] == 0xa5);
		same_except(snap, len, spec, "receive of a bad size",
			    L.rx[0] + offsetof(struct smq_rx, cursor), 4);
		free(snap);
	}
	/* within entry_size but over cap: -EMSGSIZE, stays queued */
	put(spec, e3, 4, 200);
	OK(smq_validate(w0, NULL, 0));
	memset(buf, 0xa5, sizeof(buf));
	EXPECT(smq_receive(rx, buf, cap, &n, &from, 0), -EMSGSIZE);
	CHECK(n == 200);
	for (size_t k = 0; k < sizeof(buf); k++)
		CHECK((uint8_t)buf[k] == 0xa5);
	/* a check word in the entry where the window has no payload check */
	put(spec, e3, 4, 3);
	put(spec, e3 + 4, 4, 0x1234);
	EXPECT(smq_validate(w0, &f, sizeof(f)), -SMQ_ECORRUPT);
	CHECK(!strcmp(f.field, "entry.check") && f.offset == e3 + 4 &&
	      f.value == 0x1234 && f.limit == 0);
	EXPECT(smq_receive(rx, buf, sizeof(buf), &n, &from, 0), -SMQ_ECORRUPT);
	put(spec, e3 + 4, 4, 0);
	OK(smq_receive(rx, buf, sizeof(buf), &n, &from, 0));
	CHECK(n == 3 && !memcmp(buf, "abc", 3) && from == 1);
	OK(smq_queue_info(w0, 0, &qi, sizeof(qi)));
	CHECK(qi.fill == 0 && qi.received == 4 && qi.sent == 4);
	OK(smq_validate(w0, NULL, 0));

	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_close(w1));
	OK(smq_close(w0));
}

/* ---- b2. a window an init or clear left unfinished ----
 * The static checks pass, but smq_validate says it is unfinished, and the
 * next clear finishes it.  A board opening it now is refused as
 * validation says it when the fault is the phase (a maintenance killed
 * before it told the notices leaves them all valid), and by its notice
 * otherwise; a board at work since before goes on while its notice holds
 * the generation. */
static void unusable(const char *spec, const char *what, uint64_t off,
		     unsigned width, uint64_t value, int err, const char *field,
		     uint64_t fvalue)
{
	struct smq_window *w, *w0, *w1;
	struct smq_queue *tx, *rx;
	struct smq_fault f;
	struct smq_window_info wi;
	char buf[8];
	size_t n;
	bool phase = !strcmp(field, "maint_phase");
	bool told = !strcmp(field, "notice.generation");

	format(spec, &G2);
	OK(smq_open(spec, 0, 0, &w0));
	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &rx));
	put(spec, off, width, value);
	if (phase) {
		EXPECT(smq_open(spec, 1, 0, &w), err);
		EXPECT(smq_open(spec, 0, 0, &w), err);
	} else {
		OK(smq_open(spec, 1, 0, &w));
		EXPECT(smq_announce(w), told ? -ESTALE : 0);
		OK(smq_close(w));
	}
	EXPECT(smq_send(tx, "on", 2, 0), told ? -ESTALE : 0);
	if (!told) {
		OK(smq_receive(rx, buf, sizeof(buf), &n, NULL, 1000));
		CHECK(n == 2 && !memcmp(buf, "on", 2));
	}
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_close(w1));
	OK(smq_close(w0));
	OK(smq_open(spec, 1, SMQ_OPEN_RAW, &w));
	EXPECT(smq_validate(w, &f, sizeof(f)), err);
	if (strcmp(f.field, field) || f.offset != off || f.value != fvalue)
		FAIL("%s: fault %s at %llu holds %llu", what, f.field,
		     (unsigned long long)f.offset, (unsigned long long)f.value);
	OK(smq_close(w));
	OK(smq_open(spec, 0, SMQ_OPEN_RAW, &w));
	OK(smq_clear(w, -1));
	OK(smq_validate(w, NULL, 0));
	OK(smq_window_info(w, &wi, sizeof(wi)));
	CHECK(wi.generation >= 2 && wi.maint_phase == 0);
	OK(smq_close(w));
	OK(smq_open(spec, 1, 0, &w));
	OK(smq_close(w));
	printf("%s: refused as unfinished; the next clear finishes it\n", what);
}

static void test_unusable(const char *spec)
{
	/* an init or clear killed while it waited or wrote: its lock is of a
	 * process that is gone */
	unusable(spec, "killed while waiting", SB(maint_phase), 4, 1,
		 -SMQ_EINCOMPLETE, "maint_phase", 1);
	unusable(spec, "killed while writing", SB(maint_phase), 4, 2,
		 -SMQ_EINCOMPLETE, "maint_phase", 2);
	/* the notices told, the superblock not yet (or the other way) */
	unusable(spec, "a notice behind the superblock", lay_ctl(1), 8, 0,
		 -SMQ_EINCOMPLETE, "notice.generation", 0);
	unusable(spec, "the superblock formatting", SB(system_state), 4,
		 SMQ_SYS_FORMATTING, -SMQ_EINCOMPLETE, "system_state",
		 SMQ_SYS_FORMATTING);
	/* an init or clear under way: busy, not broken */
	struct smq_window *w;
	struct smq_fault f;
	format(spec, &G2);
	put(spec, SB(maint_phase), 4, 2);
	put(spec, SB(maint_owner), 8, smq_tag_self());
	put(spec, SB(maint_boot), 8, smq_boot_hash());
	EXPECT(smq_open(spec, 1, 0, &w), -EBUSY);
	OK(smq_open(spec, 0, SMQ_OPEN_RAW, &w));
	EXPECT(smq_validate(w, &f, sizeof(f)), -EBUSY);
	CHECK(!strcmp(f.field, "maint_phase"));
	EXPECT(smq_clear(w, -1), -EALREADY);
	OK(smq_close(w));
}

/* ---- c. layout sizes ---- */

static void test_layout_size(void)
{
	static const uint16_t bad_recv[2] = { 0, 2 };
	const struct smq_geometry bad[] = {
		{ 0, 1, 1, 0, NULL }, { 65, 1, 1, 0, NULL },
		{ 1, 0, 1, 0, NULL }, { 1, 65536, 1, 0, NULL },
		{ 1, 1, 0, 0, NULL }, { 1, 1, 3, 0, NULL },
		{ 1, 1, 1u << 21, 0, NULL }, { 1, 1, 1u << 31, 0, NULL },
		{ 1, 1, 1, (16u << 20) + 1, NULL },
		{ 1, 1, 1, 0xffffffffu, NULL },
		{ 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, NULL },
	};
	uint64_t n;

	/* A bad geometry given by the caller is -EINVAL, as for smq_init. */
	int bad_code = smq_layout_size(&bad[0], sizeof(bad[0]), &n);
	CHECK(bad_code == -EINVAL);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = 0x5555;
		EXPECT(smq_layout_size(&bad[i], sizeof(bad[i]), &n), bad_code);
		CHECK(n == 0x5555);
	}
	struct smq_geometry g = { 2, 2, 1, 0, bad_recv };
	n = 0x5555;
	EXPECT(smq_layout_size(&g, sizeof(g), &n), -EINVAL);
	CHECK(n == 0x5555);

	/* Monotone in every dimension (page rounding may make steps equal). */
	uint64_t prev = 0, first = 0;
	for (uint32_t b = 1; b <= SMQ_MAX_BOARDS; b++) {
		g = (struct smq_geometry){ b, 4, 8, 64, NULL };
		n = layout_size(&g);
		CHECK(n >= prev && n % SMQ_PAGE == 0);
		if (!first)
			first = n;
		prev = n;
	}
	CHECK(prev > first);
	prev = 0;
	first = 0;
	/* with one diagnostic queue for each board, at most 65535 in all */
	for (uint32_t q = 1; q <= SMQ_MAX_QUEUES - 2; q = q < 64 ? q + 1 : q * 2 + 1) {
		g = (struct smq_geometry){ 2, q, 8, 64, NULL };
		n = layout_size(&g);
		CHECK(n >= prev && n % SMQ_PAGE == 0);
		if (!first)
			first = n;
		prev = n;
	}
	g = (struct smq_geometry){ 2, SMQ_MAX_QUEUES - 2, 8, 64, NULL };
	CHECK(layout_size(&g) >= prev && prev > first);
	g = (struct smq_geometry){ 2, SMQ_MAX_QUEUES - 1, 8, 64, NULL };
	EXPECT(smq_layout_size(&g, sizeof(g), &n), -EINVAL);
	prev = 0;
	first = 0;
	for (uint32_t e = 1; e <= SMQ_MAX_ENTRIES; e *= 2) {
		g = (struct smq_geometry){ 1, 1, e, 0, NULL };
		n = layout_size(&g);
		CHECK(n >= prev);
		if (!first)
			first = n;
		prev = n;
	}
	CHECK(prev > first && prev >= (uint64_t)SMQ_MAX_ENTRIES * SMQ_LINE);
	prev = 0;
	first = 0;
	for (uint32_t s = 0; s <= SMQ_MAX_ENTRY_SIZE; s = s ? s * 2 : 1) {
		for (uint32_t d = 0; d < 3; d++) {
			uint32_t sz = s + d > SMQ_MAX_ENTRY_SIZE ? s : s + d;
			g = (struct smq_geometry){ 2, 2, 4, sz, NULL };
			n = layout_size(&g);
			CHECK(n >= prev);
			CHECK(n >= 2ull * 2 * 4 * (SMQ_ENTRY_HEADER + sz));
			if (!first)
				first = n;
			prev = n;
		}
	}
	CHECK(prev > first);

	/* The largest windows: fine up to 64 TiB, an error past it. */
	g = (struct smq_geometry){ 3, 1, SMQ_MAX_ENTRIES, SMQ_MAX_ENTRY_SIZE, NULL };
	n = layout_size(&g);
	CHECK(n > 3ull * SMQ_MAX_ENTRIES * SMQ_MAX_ENTRY_SIZE &&
	      n <= (1ull << 46));
	const struct smq_geometry huge[] = {
		{ 4, 1, SMQ_MAX_ENTRIES, SMQ_MAX_ENTRY_SIZE, NULL },
		{ 2, 2, SMQ_MAX_ENTRIES, SMQ_MAX_ENTRY_SIZE, NULL },
		{ 64, 64, SMQ_MAX_ENTRIES, SMQ_MAX_ENTRY_SIZE, NULL },
		{ 64, SMQ_MAX_QUEUES, SMQ_MAX_ENTRIES, SMQ_MAX_ENTRY_SIZE, NULL },
		{ 64, SMQ_MAX_QUEUES, SMQ_MAX_ENTRIES, 1024, NULL },
	};
	for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		n = 0x5555;
		int r = smq_layout_size(&huge[i], sizeof(huge[i]), &n);
		if (r >= 0 || n != 0x5555)
			FAIL("huge geometry %zu: returned %d, size %llu", i, r,
			     (unsigned long long)n);
		EXPECT(r, bad_code);
	}
	/* the biggest one that is not huge in any single dimension */
	g = (struct smq_geometry){ 64, SMQ_MAX_QUEUES - 64, 1, 0, NULL };
	n = layout_size(&g);
	CHECK(n > 64ull * (SMQ_MAX_QUEUES - 64) * 2 * SMQ_LINE);
}

/* ---- d. smq_init errors ---- */

static void test_init_errors(const char *spec)
{
	static const uint16_t bad_recv[2] = { 1, 2 };
	const struct smq_geometry bad[] = {
		{ 0, 2, 64, 1024, NULL }, { 65, 2, 64, 1024, NULL },
		{ 2, 0, 64, 1024, NULL }, { 2, 65536, 64, 1024, NULL },
		{ 2, 2, 0, 1024, NULL }, { 2, 2, 3, 1024, NULL },
		{ 2, 2, 1u << 21, 1024, NULL },
		{ 2, 2, 64, (16u << 20) + 1, NULL },
		{ 2, 2, 64, 0, NULL },  /* queues only empty messages fit */
		{ 2, 2, 64, 1024, bad_recv },
		{ 4, 1, SMQ_MAX_ENTRIES, SMQ_MAX_ENTRY_SIZE, NULL },
	};
	struct smq_window *w, *w1;
	struct smq_window_info wi;
	size_t len;
	uint8_t *snap;

	format(spec, &G2);
	snap = test_snapshot(spec, &len);
	OK(smq_open(spec, 0, 0, &w));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT(smq_init(w, &bad[i], sizeof(bad[i])), -EINVAL);
		test_same(snap, len, spec, "smq_init of a bad geometry");
	}
	EXPECT(smq_init(w, NULL, 0), -EINVAL);
	EXPECT(smq_init(NULL, &G2, sizeof(G2)), -EINVAL);
	test_same(snap, len, spec, "smq_init(NULL)");
	/* the handle is still attached and current */
	OK(smq_validate(w, NULL, 0));
	OK(smq_window_info(w, &wi, sizeof(wi)));
	CHECK(wi.generation == 1);

	/* Only the system board formats. */
	OK(smq_open(spec, 1, 0, &w1));
	EXPECT(smq_init(w1, &G2, sizeof(G2)), -EPERM);
	EXPECT(smq_init(w1, &bad[0], sizeof(bad[0])), -EPERM);
	test_same(snap, len, spec, "smq_init from board 1");
	OK(smq_close(w1));
	OK(smq_open(spec, 1, SMQ_OPEN_RAW, &w1));
	EXPECT(smq_init(w1, &G2, sizeof(G2)), -EPERM);
	OK(smq_close(w1));
	test_same(snap, len, spec, "smq_init from raw board 1");
	free(snap);
	OK(smq_close(w));

	/* Not on a new, empty file either. */
	struct stat st;
	unlink(test_path(spec));
	OK(smq_open(spec, 1, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w1));
	EXPECT(smq_init(w1, &G2, sizeof(G2)), -EPERM);
	OK(smq_close(w1));
	OK(smq_open(spec, 0, SMQ_OPEN_RAW, &w));
	EXPECT(smq_init(w, &bad[3], sizeof(bad[3])), -EINVAL);
	OK(smq_close(w));
	CHECK(stat(test_path(spec), &st) == 0 && st.st_size == 0);
}

/* ---- e. open errors ---- */

static void test_open_errors(const char *spec)
{
	struct smq_window *w;
	char missing[160];

	w = (void *)1;
	EXPECT(smq_open("nosuch:x", 0, SMQ_OPEN_CREATE, &w), -EPROTONOSUPPORT);
	CHECK(w == NULL);
	EXPECT(smq_open("nosuch:x", 0, SMQ_OPEN_RAW, &w), -EPROTONOSUPPORT);
	EXPECT(smq_open("shm:../etc", 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w),
	       -EINVAL);
	EXPECT(smq_open("shm:a/b", 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w),
	       -EINVAL);
	EXPECT(smq_open("shm:", 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w), -EINVAL);
	EXPECT(smq_open("shm:.hidden", 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w),
	       -EINVAL);
	EXPECT(smq_open("file:", 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w), -EINVAL);
	CHECK(w == NULL);
	CHECK(access("/dev/shm/a", F_OK) != 0 || errno == ENOENT);

	snprintf(missing, sizeof(missing), "file:/dev/shm/%s",
		 test_name("missing"));
	unlink(test_path(missing));
	w = (void *)1;
	EXPECT(smq_open(missing, 0, 0, &w), -ENOENT);
	CHECK(w == NULL);
	EXPECT(smq_open(missing, 0, SMQ_OPEN_RAW, &w), -ENOENT);
	CHECK(access(test_path(missing), F_OK) != 0);
	snprintf(missing, sizeof(missing), "shm:%s", test_name("missing"));
	EXPECT(smq_open(missing, 0, SMQ_OPEN_RAW, &w), -ENOENT);

	format(spec, &G2);
	w = (void *)1;
	EXPECT(smq_open(spec, SMQ_MAX_BOARDS, 0, &w), -EINVAL);
	CHECK(w == NULL);
	EXPECT(smq_open(spec, SMQ_MAX_BOARDS, SMQ_OPEN_RAW, &w), -EINVAL);
	EXPECT(smq_open(spec, 1000, 0, &w), -EINVAL);
	EXPECT(smq_open(spec, 2, 0, &w), -EINVAL);
	EXPECT(smq_open(spec, 63, 0, &w), -EINVAL);
	CHECK(w == NULL);
	OK(smq_open(spec, 1, 0, &w));
	OK(smq_close(w));
}

int main(void)
{
	const char *spec = test_window();

	OK(smq_layout_compute(&L, &G2));
	CHECK(L.size == 630784 + 2 * 20480);
	test_round_trips(spec);
	test_corruptions(spec);
	test_dynamic(spec);
	test_unusable(spec);
	test_layout_size();
	test_init_errors(spec);
	test_open_errors(spec);
	smq_layout_free(&L);
	return 0;
}
