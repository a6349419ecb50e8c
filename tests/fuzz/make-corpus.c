/* Seed corpus for fuzz_window: valid windows of several geometries, empty,
 * with messages queued on several lanes, partly received, with boards
 * announced and synchronised, cleared, with a receiver's claim left by a
 * process that is gone; then a few damaged on purpose (a file longer or
 * shorter than its layout); and structure-aware inputs (see fuzz_window.c).
 * Usage: make-corpus DIR */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "smq.h"

#define FLAG_STRUCT 0xA5

static const char *dir;
static int nseeds;

#define DIE(...) do { fprintf(stderr, "make-corpus: " __VA_ARGS__); \
		      fputc('\n', stderr); exit(1); } while (0)
#define OK(call) do { int e_ = (call); if (e_) DIE("%s: %s", #call, \
						  smq_strerror(e_)); } while (0)

struct seed {
	const char *name;
	struct smq_geometry g;
	unsigned sends;     /* messages sent round-robin over lanes and queues */
	unsigned receives;  /* then received, round-robin over queues */
	int sync;           /* announce and synchronise every board */
	int clear;          /* clear queue clear-1 (0: none, -1 all) before */
	int orphan;         /* a receiver's claim left by a dead process */
	long resize;        /* change the file's size by this much */
	int groups;         /* with groups (feature groups) */
	int scratch;        /* formatted with scratch areas */
};

static void path_of(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", dir, name);
}

static int orphan_claim(const char *spec, unsigned board, unsigned queue)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		DIE("fork");
	if (pid == 0) {
		struct smq_window *w;
		struct smq_queue *q;
		if (smq_open(spec, board, 0, &w) ||
		    smq_queue_open(w, queue, SMQ_RECEIVER, 0, &q))
			_exit(1);
		_exit(0);  /* the claim stays: the process is gone */
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void make_window(const struct seed *sd)
{
	char path[512], spec[600];
	struct smq_window *w[SMQ_MAX_BOARDS] = { 0 };
	const struct smq_geometry *g = &sd->g;
	uint8_t msg[4096];

	path_of(path, sizeof(path), sd->name);
	unlink(path);
	snprintf(spec, sizeof(spec), "file:%s", path);
	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w[0]));
	static const uint32_t all[] = { 0, 1, 2, 3 }, two[] = { 3, 1 };
	const struct smq_group_def defs[] = { { "all", all, 4 },
					      { "two", two, 2 } };
	struct smq_shape sh = { *g, NULL, sd->scratch ? SMQ_SHAPE_SCRATCH : 0,
				sd->groups ? defs : NULL, sd->groups ? 2 : 0,
				0, 0 };
	OK(smq_init_shape(w[0], &sh, sizeof(sh)));
	if (sd->clear)
		OK(smq_clear(w[0], sd->clear < 0 ? -1 : sd->clear - 1));
	for (unsigned b = 1; b < g->boards; b++)
		OK(smq_open(spec, b, 0, &w[b]));

	struct smq_queue *tx[SMQ_MAX_BOARDS][8] = { { 0 } };
	struct smq_queue *rx[8] = { 0 };
	unsigned nq = g->queues < 8 ? g->queues : 8;
	for (unsigned i = 0; i < sd->sends; i++) {
		unsigned b = i % g->boards, q = (i / g->boards) % nq;
		if (!tx[b][q])
			OK(smq_queue_open(w[b], q, SMQ_SENDER, 0, &tx[b][q]));
		size_t n = (i * 37u + 5) % (g->entry_size + 1);
		if (n > sizeof(msg))
			n = sizeof(msg);
		for (size_t k = 0; k < n; k++)
			msg[k] = (uint8_t)(i + k);
		int err = smq_send(tx[b][q], msg, n, 0);
		if (err && err != -EAGAIN)
			DIE("send: %s", smq_strerror(err));
	}
	for (unsigned i = 0; i < sd->receives; i++) {
		unsigned q = i % nq;
		unsigned r = g->receivers ? g->receivers[q] : q % g->boards;
		size_t len;
		if (!rx[q])
			OK(smq_queue_open(w[r], q, SMQ_RECEIVER, 0, &rx[q]));
		int err = smq_receive(rx[q], msg, sizeof(msg), &len, NULL, 0);
		if (err && err != -EAGAIN)
			DIE("receive: %s", smq_strerror(err));
	}
	if (sd->sync) {
		for (unsigned b = 0; b < g->boards; b++)
			OK(smq_announce(w[b]));
		for (unsigned b = 0; b < g->boards; b++)
			OK(smq_synchronize(w[b], 0, 1000, 1, NULL));
	}
	for (unsigned q = 0; q < 8; q++) {
		if (rx[q])
			OK(smq_queue_close(rx[q]));
		for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++)
			if (tx[b][q])
				OK(smq_queue_close(tx[b][q]));
	}
	for (unsigned b = 0; b < g->boards; b++)
		OK(smq_close(w[b]));
	if (sd->orphan && orphan_claim(spec, g->receivers ? g->receivers[0] : 0,
				       0))
		DIE("orphan claim");
	if (sd->resize) {
		struct stat st;
		if (stat(path, &st) < 0 ||
		    truncate(path, st.st_size + sd->resize) < 0)
			DIE("resize %s", path);
	}
	nseeds++;
}

/* Structure-aware seed: header then mutation records. */
static void make_struct(const char *name, const uint8_t *b, size_t n)
{
	char path[512];

	path_of(path, sizeof(path), name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(b, 1, n, f) != n || fclose(f))
		DIE("write %s", path);
	nseeds++;
}

int main(int argc, char **argv)
{
	static const uint16_t rcv3[] = { 2, 0, 1 };
	static const uint16_t rcv4[] = { 1, 1, 3, 0 };

	if (argc != 2)
		DIE("usage: make-corpus DIR");
	dir = argv[1];
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		DIE("mkdir %s", dir);

	const struct seed seeds[] = {
		{ .name = "w-min", .g = { 1, 1, 1, 1, NULL } },
		{ .name = "w-1x1-msgs", .g = { 1, 1, 4, 32, NULL },
		  .sends = 3, .receives = 1 },
		{ .name = "w-2x2", .g = { 2, 2, 4, 64, NULL } },
		{ .name = "w-2x2-full", .g = { 2, 2, 4, 64, NULL },
		  .sends = 32, .sync = 1 },
		{ .name = "w-2x2-half", .g = { 2, 2, 8, 64, NULL },
		  .sends = 20, .receives = 7, .sync = 1 },
		{ .name = "w-2x3-rcv", .g = { 3, 3, 8, 100, rcv3 },
		  .sends = 30, .receives = 10, .sync = 1 },
		{ .name = "w-4x4", .g = { 4, 4, 16, 256, rcv4 },
		  .sends = 80, .receives = 33, .sync = 1 },
		{ .name = "w-2x1-wrapped", .g = { 2, 1, 4, 48, NULL },
		  .sends = 8, .receives = 8 },
		{ .name = "w-2x2-cleared", .g = { 2, 2, 4, 64, NULL },
		  .sends = 12, .receives = 3, .sync = 1, .clear = 1 },
		{ .name = "w-2x2-clearall", .g = { 2, 2, 4, 64, NULL },
		  .sends = 12, .receives = 3, .clear = -1 },
		{ .name = "w-2x2-orphan", .g = { 2, 2, 4, 64, NULL },
		  .sends = 6, .receives = 2, .sync = 1, .orphan = 1 },
		{ .name = "w-1x1-big", .g = { 1, 1, 2, 4000, NULL }, .sends = 2 },
		{ .name = "w-3x5-empty", .g = { 3, 5, 2, 16, NULL }, .sync = 1 },
		{ .name = "w-4x4-groups", .g = { 4, 4, 4, 64, rcv4 },
		  .sends = 20, .receives = 5, .sync = 1, .groups = 1 },
		{ .name = "w-3x3-scratch", .g = { 3, 3, 4, 64, NULL },
		  .sends = 9, .receives = 2, .sync = 1, .scratch = 1 },
		{ .name = "w-2x2-long", .g = { 2, 2, 4, 64, NULL },
		  .sends = 5, .receives = 1, .resize = 4096 },
		{ .name = "w-2x2-short", .g = { 2, 2, 4, 64, NULL },
		  .sends = 5, .receives = 1, .resize = -100 },
	};
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		make_window(&seeds[i]);

	/* boards-1, queues-1, log2 entries, entry_size (le16), flags, sends,
	 * receives, [receivers], then records: op, anchor, sel, rel (le16),
	 * value (1 << (op & 3) bytes). */
	const uint8_t s1[] = { FLAG_STRUCT, 1, 1, 2, 64, 0, 0x00, 10, 3 };
	const uint8_t s2[] = { FLAG_STRUCT, 1, 0, 2, 32, 0, 0x04, 6, 1,
			       /* flip a payload bit of lane 1's first entry */
			       0x0c, 8, 0x10, 20, 0, 3 };
	const uint8_t s3[] = { FLAG_STRUCT, 2, 1, 3, 40, 0, 0x02, 20, 5,
			       /* set lane 0's top of queue 0 past full */
			       0x07, 3, 0x00, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0 };
	const uint8_t s4[] = { FLAG_STRUCT, 1, 1, 1, 16, 0, 0x0b, 4, 0,
			       2, 2, 0, 1, 0,
			       /* the receiver table, checksum recomputed */
			       0x04, 11, 0, 4, 0, 1 };
	const uint8_t s5[] = { FLAG_STRUCT, 0, 0, 2, 8, 0, 0x20, 3, 1 };
	const uint8_t s6[] = { FLAG_STRUCT, 3, 2, 4, 0x00, 1, 0x44, 60, 12,
			       /* entry size of a queued entry, live */
			       0x06, 8, 0x00, 0, 0, 0xff, 0xff, 0, 0,
			       /* a bottom moved back */
			       0x0b, 2, 0x00, 0, 0, 0xff, 0xff, 0xff, 0xff,
			       0xff, 0xff, 0xff, 0xff };
	/* Windows that pass smq_validate, then make the message path report
	 * corruption: the validator must see what the receiver and the sender
	 * see.  (1) A lane empty by its top whose next entry is signed, with a
	 * size over entry_size: the receiver takes it by its signature. */
	const uint8_t g1[] = { FLAG_STRUCT, 0, 0, 0, 8, 0, 0x00, 1, 0,
			       0x07, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			       0x07, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			       0x06, 8, 0, 0, 0, 9, 0, 0, 0 };
	/* (2) lane_fc.bottom 5 behind bottom (a live receiver's claim keeps
	 * it from being repaired at open): the sender finds top - bottom over
	 * entries. */
	const uint8_t g2[] = { FLAG_STRUCT, 0, 0, 0, 8, 0, 0x00, 0, 0,
			       0x07, 2, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0,
			       0x07, 3, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0,
			       0x07, 5, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0,
			       0x07, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			       0x06, 1, 0, 4, 0, 1, 0, 0, 0 };
	/* (3) a full lane whose lane_out.top is top + 1: no sender can have
	 * left it so. */
	const uint8_t g3[] = { FLAG_STRUCT, 0, 0, 0, 8, 0, 0x00, 1, 0,
			       0x07, 5, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0 };
	/* (4) Not a validator matter: a lane lock holding 1, the id of a live
	 * process (init), and a sender that must still return. */
	const uint8_t g4[] = { FLAG_STRUCT, 0, 0, 0, 8, 0, 0x00, 0, 0,
			       0x06, 5, 0, 8, 0, 1, 0, 0, 0 };
	make_struct("s-gap-signed-at-top", g1, sizeof(g1));
	make_struct("s-lock-live", g4, sizeof(g4));
	make_struct("s-gap-flow-bottom", g2, sizeof(g2));
	make_struct("s-gap-sender-top", g3, sizeof(g3));
	make_struct("s-plain", s1, sizeof(s1));
	make_struct("s-payload-live", s2, sizeof(s2));
	make_struct("s-top", s3, sizeof(s3));
	make_struct("s-receivers", s4, sizeof(s4));
	make_struct("s-trunc", s5, sizeof(s5));
	make_struct("s-live", s6, sizeof(s6));
	/* feature scratch: formatted with scratch areas, written by the map
	 * test before and after a mutation of the first data area's word */
	const uint8_t c1[] = { FLAG_STRUCT, 2, 1, 2, 64, 0, 0x82, 10, 3 };
	const uint8_t c2[] = { FLAG_STRUCT, 1, 1, 2, 32, 0, 0x84 | 0x80, 6, 1,
			       0x07, 0, 0x00, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8 };
	make_struct("s-scratch", c1, sizeof(c1));
	make_struct("s-scratch-live", c2, sizeof(c2));
	printf("%d seeds in %s\n", nseeds, dir);
	return 0;
}
