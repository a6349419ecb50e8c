/* A struct crosses the interface with its size, and an older, smaller one
 * is served as far as it goes; but never one smaller than the struct as it
 * was when the call came: no header ever had it, and an input cut short
 * would be taken for defaults the caller never chose (smq_init_shape() of
 * a 1.0 geometry formatted a window without the checksums it asked for).
 * Each call refuses a size under its least with -EINVAL, before it writes
 * to the window or the caller's struct, moves a cursor or takes an event;
 * at its least it works. */
#include <stddef.h>
#include <sys/stat.h>
#include "testlib.h"
TEST_FLOOR(62);

/* The size of type up to the end of member m */
#define END(type, m) (offsetof(type, m) + sizeof(((type *)0)->m))
#define QUEUES 3

static const char *spec;
static uint8_t junk[4096];

/* Calls fn on a buffer of 0xaa bytes with size least - 1 (refused, the
 * buffer untouched) and least (0 or the count wanted, nothing past least
 * written). */
#define OUT_LEAST(what, least, want, call) do { \
		size_t size_ = (least); \
		void *p_ = junk; \
		memset(junk, 0xaa, sizeof(junk)); \
		(void)p_; \
		{ size_t size = size_ - 1; EXPECT(call, -EINVAL); } \
		for (size_t i_ = 0; i_ < sizeof(junk); i_++) \
			if (junk[i_] != 0xaa) \
				FAIL("%s: a refused call wrote byte %zu", \
				     what, i_); \
		{ size_t size = size_; EXPECT(call, want); } \
		for (size_t i_ = size_; i_ < sizeof(junk); i_++) \
			if (junk[i_] != 0xaa) \
				FAIL("%s: wrote byte %zu, past %zu", what, \
				     i_, size_); \
	} while (0)

/* A group and scratch areas, for the calls that read them */
static void format(struct smq_window *w)
{
	static const uint32_t members[] = { 1, 2 };
	static const struct smq_group_def groups[] = { { "g", members, 2 } };
	struct smq_shape sh = { { 2, QUEUES, 8, 64, NULL }, NULL,
				SMQ_SHAPE_SCRATCH | SMQ_SHAPE_CHECKSUM, groups,
				1, 0, 0 };

	OK(smq_init_shape(w, &sh, sizeof(sh)));
}

/* Inputs: nothing formatted, nothing counted from a struct cut short. */
static void inputs(struct smq_window *w)
{
	struct smq_geometry g = { 2, QUEUES, 8, 64, NULL };
	struct smq_shape sh = { g, NULL, SMQ_SHAPE_CHECKSUM, NULL, 0, 0, 0 };
	struct smq_window_info wi;
	struct smq_shape_parts parts;
	uint64_t bytes = 7;
	size_t len;
	uint8_t *snap = test_snapshot(spec, &len);

	/* the new user's program: a 1.1 call given a 1.0 struct */
	EXPECT(smq_init_shape(w, &sh, sizeof(struct smq_geometry)), -EINVAL);
	EXPECT(smq_init_shape(w, &sh, END(struct smq_shape, ngroups) - 1),
	       -EINVAL);
	EXPECT(smq_init(w, &g, sizeof(g) - 1), -EINVAL);
	/* 1.2's dry run never took 1.1's shape */
	EXPECT(smq_init_dry_run(w, &sh, END(struct smq_shape, ngroups)),
	       -EINVAL);
	EXPECT(smq_init_dry_run(w, &sh, END(struct smq_shape, journal) - 1),
	       -EINVAL);
	test_same(snap, len, spec, "inits of structs cut short");
	free(snap);
	EXPECT(smq_layout_size(&g, sizeof(g) - 1, &bytes), -EINVAL);
	EXPECT(smq_shape_size(&sh, END(struct smq_shape, ngroups) - 1, &bytes),
	       -EINVAL);
	CHECK(bytes == 7);
	memset(&parts, 0xaa, sizeof(parts));
	EXPECT(smq_shape_parts(&sh, END(struct smq_shape, ngroups) - 1, &parts,
			       sizeof(parts)), -EINVAL);
	EXPECT(smq_shape_parts(&sh, sizeof(sh), &parts,
			       END(struct smq_shape_parts, region) - 1),
	       -EINVAL);
	CHECK(parts.total == 0xaaaaaaaaaaaaaaaaull);

	/* at their least they work: 1.1's shape, 1.2's for the dry run */
	OK(smq_shape_size(&sh, END(struct smq_shape, ngroups), &bytes));
	OK(smq_shape_parts(&sh, END(struct smq_shape, ngroups), &parts,
			   END(struct smq_shape_parts, region)));
	CHECK(parts.total == bytes);
	OK(smq_layout_size(&g, sizeof(g), &bytes));
	OK(smq_init_dry_run(w, &sh, END(struct smq_shape, journal)));
	OK(smq_init_shape(w, &sh, END(struct smq_shape, ngroups)));
	OK(smq_window_info(w, &wi, sizeof(wi)));
	CHECK(wi.features_incompat & SMQ_FEATURE_CHECKSUM);
	OK(smq_init(w, &g, sizeof(g)));
	format(w);
}

/* Outputs of a window: the 1.0 calls at 1.0's structs, the later ones at
 * theirs. */
static void outputs(struct smq_window *w)
{
	struct smq_journal_cursor c = { 0 };
	struct smq_queue *tx;

	OUT_LEAST("smq_window_info", END(struct smq_window_info, first_bytes),
		  0, smq_window_info(w, p_, size));
	OUT_LEAST("smq_board_info", END(struct smq_board_info, host), 0,
		  smq_board_info(w, 0, p_, size));
	OUT_LEAST("smq_queue_info", END(struct smq_queue_info, wakeups), 0,
		  smq_queue_info(w, 0, p_, size));
	OK(smq_queue_open(w, 1, SMQ_SENDER, 0, &tx));
	OUT_LEAST("smq_lane_info", END(struct smq_lane_info, sender_waiting),
		  0, smq_lane_info(w, 1, 0, p_, size));
	OUT_LEAST("smq_holdout", END(struct smq_holdout, host), 0,
		  smq_holdout(w, p_, size));
	OUT_LEAST("smq_validate", END(struct smq_fault, board), 0,
		  smq_validate(w, p_, size));
	OUT_LEAST("smq_group_info", END(struct smq_group_info, queues), 0,
		  smq_group_info(w, 0, p_, size));
	/* a size for each of max */
	struct smq_worker list[4];
	int workers = smq_workers(w, list, 4, sizeof(list[0]));
	CHECK(workers >= 2);
	OUT_LEAST("smq_workers", END(struct smq_worker, host), workers,
		  smq_workers(w, p_, 1, size));
	OUT_LEAST("smq_emptied", END(struct smq_emptied, most), 0,
		  smq_emptied(w, p_, size));
	OUT_LEAST("smq_map_look", END(struct smq_map_result, what), 0,
		  smq_map_look(w, 0, p_, size));
	OK(smq_map_write(w, 0, 5));
	OUT_LEAST("smq_map_verify", END(struct smq_map_result, what), 0,
		  smq_map_verify(w, 0, 5, p_, size));
	/* a refused read of the journal leaves the cursor where it was */
	OUT_LEAST("smq_journal_next", END(struct smq_journal_entry,
					  incarnation), 1,
		  smq_journal_next(w, &c, p_, size));
	CHECK(c.next == 2);
	OK(smq_queue_close(tx));
}

/* A server's: config in, events and info out; no event is taken by a
 * refused call. */
static void server(void)
{
	char path[256];
	struct smq_server_config conf = { path, NULL, 4096, 1, 0 };
	struct smq_server *s;
	struct stat st;

	snprintf(path, sizeof(path), "%s/ivshmem.sock", test_dir());
	EXPECT(smq_server_open(&conf, END(struct smq_server_config, mode) - 1,
			       &s), -EINVAL);
	CHECK(stat(path, &st) < 0 && errno == ENOENT);
	OK(smq_server_open(&conf, END(struct smq_server_config, mode), &s));
	OUT_LEAST("smq_server_info", END(struct smq_server_info, peers), 0,
		  smq_server_info(s, p_, size));
	OUT_LEAST("smq_server_next", END(struct smq_server_event, error),
		  -ETIMEDOUT, smq_server_next(s, 0, p_, size));
	OK(smq_server_close(s));

	struct smq_broker_config bc = { path, "pci:0000:00:00.0", 0 };
	struct smq_broker *b;
	EXPECT(smq_broker_open(&bc, END(struct smq_broker_config, mode) - 1,
			       &b), -EINVAL);
}

int main(void)
{
	spec = test_window();
	struct smq_window *w;
	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE,
		    &w));
	format(w);

	inputs(w);
	printf("inputs: a struct under the call's first one refused, the "
	       "window as it was; at its least, served\n");
	outputs(w);
	server();
	printf("outputs: under the least refused, nothing written; at the "
	       "least, filled that far\n");
	OK(smq_close(w));
	return 0;
}
