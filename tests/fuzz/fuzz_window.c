/* libFuzzer target: the window validator, everything `smqctl dump` reads
 * of a window, and the message path, on windows in any state.
 *
 * Two kinds of input:
 *
 *  - Raw: the bytes are the window (a seed corpus of valid windows gets the
 *    fuzzer past the magic and the geometry checksum; the checksum does not
 *    cover the dynamic fields, so mutations of those stay "valid").
 *
 *  - Structure-aware, when the first byte is FLAG_STRUCT: a valid window of a
 *    geometry taken from the next bytes is formatted with smq_init, given
 *    some traffic (messages sent and received, boards announced and
 *    synchronised, a queue cleared), and then mutated by the records that
 *    make up the rest of the input: xor, set or add a 1, 2, 4 or 8 byte value
 *    at an offset relative to a structure of the layout (a queue's rx line,
 *    its bottoms, a lane's lines, an entry of a ring, a notice, a board slot)
 *    or anywhere.  The geometry checksum can be recomputed after the
 *    mutation, so corrupted geometries and queue tables get past it too.  The
 *    mutation happens either before anything is opened (a window left in a
 *    bad state) or after the handles are open (corruption of a live window).
 *
 * On both, every board's view is taken as smqctl dump takes it
 * (smq_window_info, smq_board_info, smq_queue_info, smq_lane_info,
 * smq_validate) and as smqctl check reads the others' regions
 * (smq_map_look); every queue is received from with timeout 0 into a buffer
 * with guard bytes, every board sends a small message with timeout 0, and
 * where the window has scratch areas (feature scratch) every board writes
 * its words into the next board's area, which reads them back.
 *
 * What must hold (a violation aborts, which libFuzzer reports as a crash):
 * no out-of-bounds access, leak or undefined behaviour (the sanitizers); a
 * received length never over the caller's capacity nor the entry size; the
 * caller's buffer untouched outside the message, and wholly on an error; a
 * message refused with -EMSGSIZE stays queued; errors are negative codes
 * smq_strerror knows; a fault names a field and an offset inside the
 * window; the info calls refuse out-of-range indexes; on a window that
 * passed validation and was not changed since it was opened, the board
 * states and system state are in range (dump indexes tables with them) and
 * no queue holds more than its capacity.
 *
 * And a window that passed smq_validate never makes a receiver or a sender
 * report corruption: the validator checks everything the message path
 * relies on; on it, the words written into a scratch area are read back as
 * written, and the map test says so (writing them costs no queue
 * anything).  FUZZ_STRICT=0 in the environment drops this one.
 *
 * Nothing hangs: a call with timeout 0 returns at once, whatever the window
 * holds (libFuzzer's -timeout reports one that does not).  A lane lock that
 * holds the id of a live thread (pid 1, say) is one way to make a sender
 * spin; FUZZ_SKIP_LIVE_LOCK=1 skips such lanes, to look for other bugs while
 * that one is open.
 *
 * FUZZ_SAVE=PATH writes the window a structure-aware input builds (after
 * its mutations) to PATH, for smqctl dump or a raw run. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "testint.h"

#define FLAG_STRUCT 0xA5
#define GUARD 64
#define MAXB 8          /* boards opened at once */
#define MAXQ 8          /* queues exercised per window */
#define MAX_FILE (1u << 20)

#define BUG(...) do { fprintf(stderr, "fuzz_window: %s:%d: ", __FILE__, \
			      __LINE__); fprintf(stderr, __VA_ARGS__); \
		      fputc('\n', stderr); abort(); } while (0)
#define REQUIRE(c) do { if (!(c)) BUG("violated: %s", #c); } while (0)

static int mfd = -1;
static char spec[64];
static char fallback[64];
static int strict, skip_live_lock;

static void cleanup(void)
{
	if (fallback[0])
		unlink(fallback);
}

static void setup(void)
{
	if (mfd >= 0)
		return;
	strict = !getenv("FUZZ_STRICT") || atoi(getenv("FUZZ_STRICT"));
	skip_live_lock = getenv("FUZZ_SKIP_LIVE_LOCK") &&
			 atoi(getenv("FUZZ_SKIP_LIVE_LOCK"));
	/* a file of its own: the file transport refuses symlinks, so the
	 * /proc/self/fd/N of a memfd will not do */
	snprintf(fallback, sizeof(fallback), "/dev/shm/smq-fuzz-%d",
		 (int)getpid());
	mfd = open(fallback, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (mfd < 0)
		BUG("cannot create a window file");
	atexit(cleanup);
	snprintf(spec, sizeof(spec), "file:%s", fallback);
}

/* FUZZ_SAVE: a copy of the window file as it is now. */
static void save(void)
{
	const char *path = getenv("FUZZ_SAVE");
	uint8_t buf[4096];
	ssize_t k;
	off_t off = 0;

	if (!path || !*path)
		return;
	FILE *f = fopen(path, "wb");
	if (!f)
		BUG("FUZZ_SAVE: cannot write %s", path);
	while ((k = pread(mfd, buf, sizeof(buf), off)) > 0) {
		fwrite(buf, 1, (size_t)k, f);
		off += k;
	}
	fclose(f);
}

static void load(const uint8_t *data, size_t n)
{
	if (ftruncate(mfd, 0) < 0 || ftruncate(mfd, (off_t)n) < 0)
		BUG("ftruncate: %s", strerror(errno));
	for (size_t done = 0; done < n;) {
		ssize_t k = pwrite(mfd, data + done, n - done, (off_t)done);
		if (k <= 0)
			BUG("pwrite: %s", strerror(errno));
		done += (size_t)k;
	}
}

/* ---- contracts ---- */

static void check_code(int err)
{
	REQUIRE(err <= 0);
	const char *s = smq_strerror(err);
	REQUIRE(s && *s);
}

static bool terminated(const char *s, size_t n)
{
	return memchr(s, 0, n) != NULL;
}

static bool corrupt(int err)
{
	return err == -SMQ_ECORRUPT || err == -SMQ_ESIGNATURE;
}

/* On a window that passed smq_validate (and was not changed by anyone but
 * the message path since), no part of the message path finds corruption. */
static void check_agrees(bool checked, int err, const char *what)
{
	if (strict && checked && corrupt(err))
		BUG("smq_validate passed, then %s returned %d (%s)", what, err,
		    smq_strerror(err));
}

static void check_fault(int err, const struct smq_fault *f, uint64_t mapped)
{
	check_code(err);
	REQUIRE(terminated(f->field, sizeof(f->field)));
	if (!err) {
		REQUIRE(!f->field[0] && !f->offset && !f->value && !f->limit);
		return;
	}
	if (err <= -SMQ_EUNFORMATTED && err > -SMQ_ERRNO_END) {
		REQUIRE(f->field[0]);
		REQUIRE(f->offset < (mapped > SMQ_SB_SIZE ? mapped : SMQ_SB_SIZE));
	}
}

/* ---- what dump reads ---- */

/* frozen: the window passed static validation when w was opened and has
 * not changed since; valid: it also passed smq_validate. */
/* What smqctl check reads of every board's region: the first wrong word
 * a look names lies in the window, and its kind is one of the page's. */
static void map_looks(struct smq_window *w, unsigned boards, uint64_t size)
{
	struct smq_map_result r;

	for (unsigned b = 0; b <= boards; b++) {
		memset(&r, 0x5a, sizeof(r));
		int err = smq_map_look(w, b, &r, sizeof(r));
		check_code(err);
		REQUIRE(terminated(r.what, sizeof(r.what)));
		if (b == boards) {
			REQUIRE(err == -EINVAL || err == -SMQ_EUNFORMATTED);
			continue;
		}
		REQUIRE(!err || err == -ESTALE || err == -SMQ_EUNFORMATTED);
		REQUIRE(r.kind <= SMQ_MAP_WRONG && r.wrong <= r.words);
		if (!err && r.kind != SMQ_MAP_OK)
			REQUIRE(r.wrong && r.offset < size);
	}
}

/* What events --since all reads: every board's journal, from its oldest
 * entry, as far as it goes (a few rounds of its slots at most: a reader
 * is never made to wait).  An entry is the board's, its kind one of the
 * page's and its sequence past the last one; a lost count never zero. */
static void journal_reads(struct smq_window *w, unsigned boards, bool has)
{
	struct smq_journal_entry e;
	struct smq_journal_cursor c;

	for (unsigned b = 0; b <= boards; b++) {
		memset(&c, 0, sizeof(c));
		c.board = b;
		uint64_t last = 0;
		for (unsigned i = 0; i < 4 * SMQ_JOURNAL_DEFAULT + 8; i++) {
			memset(&e, 0x5a, sizeof(e));
			int got = smq_journal_next(w, &c, &e, sizeof(e));
			if (got != 1)
				check_code(got);
			/* has: the superblock's word, as the handle read it
			 * (frozen: not changed since) */
			if (b == boards || !has)
				REQUIRE(got != 1);
			if (got != 1)
				break;
			REQUIRE(e.board == b);
			REQUIRE((e.kind >= SMQ_JOURNAL_FORMAT &&
				 e.kind <= SMQ_JOURNAL_UNANSWERED) ||
				(e.kind >= SMQ_JOURNAL_LOST &&
				 e.kind <= SMQ_JOURNAL_RESTARTED));
			if (e.kind == SMQ_JOURNAL_LOST)
				REQUIRE(e.a > 0);
			if (e.kind != SMQ_JOURNAL_RESTARTED)
				REQUIRE(e.seq > last || e.kind == SMQ_JOURNAL_LOST);
			last = e.seq;
			REQUIRE(c.next > 0);
		}
	}
}

static void dump_like(struct smq_window *w, bool frozen, bool valid)
{
	struct smq_window_info wi;
	int err;

	memset(&wi, 0x5a, sizeof(wi));
	err = smq_window_info(w, &wi, sizeof(wi));
	check_code(err);
	REQUIRE(terminated(wi.transport, sizeof(wi.transport)));
	REQUIRE(terminated(wi.name, sizeof(wi.name)));
	REQUIRE(terminated(wi.notify, sizeof(wi.notify)));
	REQUIRE(wi.geometry.receivers == NULL);
	if (err == -SMQ_EUNFORMATTED) {
		REQUIRE(!wi.geometry.boards && !wi.geometry.queues);
		return;
	}
	const struct smq_geometry *g = &wi.geometry;
	REQUIRE(g->boards >= 1 && g->boards <= SMQ_MAX_BOARDS);
	REQUIRE(g->queues >= 1 && g->queues <= SMQ_MAX_QUEUES);
	REQUIRE(wi.window_size <= wi.mapped_size);
	REQUIRE(!err || err == -ESTALE);
	if (frozen) {
		REQUIRE(wi.system_state <= SMQ_SYS_READY);
		REQUIRE(wi.version == SMQ_FORMAT_VERSION);
	}

	struct smq_board_info bi;
	for (unsigned b = 0; b < g->boards; b++) {
		memset(&bi, 0x5a, sizeof(bi));
		err = smq_board_info(w, b, &bi, sizeof(bi));
		check_code(err);
		REQUIRE(!err || err == -ESTALE);
		REQUIRE(terminated(bi.host, sizeof(bi.host)));
		REQUIRE(bi.alive >= -1 && bi.alive <= 1);
		REQUIRE(bi.heartbeat_age_ms >= -1);
		if (frozen)  /* dump prints board_states[bi.state] */
			REQUIRE(bi.state <= SMQ_BOARD_READY);
	}
	REQUIRE(smq_board_info(w, g->boards, &bi, sizeof(bi)) == -EINVAL);
	REQUIRE(smq_board_info(w, SMQ_MAX_BOARDS, &bi, sizeof(bi)) == -EINVAL);

	/* A layout that fits in 1 MiB has at most a few thousand lanes; the
	 * bound only keeps a slow input from stalling the campaign. */
	unsigned nq = g->queues + wi.diag_queues;
	REQUIRE(wi.diag_queues == g->boards);
	bool lanes = (uint64_t)nq * g->boards <= (1u << 16);
	for (unsigned q = 0; q < nq; q++) {
		struct smq_queue_info qi;
		memset(&qi, 0x5a, sizeof(qi));
		err = smq_queue_info(w, q, &qi, sizeof(qi));
		check_code(err);
		REQUIRE(!err || err == -ESTALE);
		REQUIRE(qi.index == q);
		REQUIRE(qi.receiver < g->boards);
		REQUIRE(qi.sleeping == 0 || qi.sleeping == 1);
		bool diag = q >= g->queues;
		REQUIRE(qi.flags == (diag ? SMQ_QUEUE_DIAGNOSTIC : 0u));
		REQUIRE(qi.capacity == (diag ? wi.diag_entries : g->entries));
		if (valid)
			REQUIRE(qi.fill <= qi.capacity &&
				qi.queued <= qi.capacity * g->boards);
		for (unsigned s = 0; lanes && s < g->boards; s++) {
			struct smq_lane_info li;
			memset(&li, 0x5a, sizeof(li));
			err = smq_lane_info(w, q, s, &li, sizeof(li));
			check_code(err);
			REQUIRE(!err || err == -ESTALE);
			REQUIRE(li.sender_waiting == 0 || li.sender_waiting == 1);
			/* a receiver takes a burst's entries by their
			 * signatures before their sender stores top: bottom
			 * may be past top, by at most a ring (smq(7)) */
			if (valid)
				REQUIRE(li.top >= li.bottom
					? li.top - li.bottom <= qi.capacity
					: li.bottom - li.top <= qi.capacity);
		}
	}
	map_looks(w, g->boards, wi.window_size);
	journal_reads(w, g->boards, !frozen ||
		      (wi.features_incompat & SMQ_FEATURE_JOURNAL));
	struct smq_queue_info qi;
	struct smq_lane_info li;
	REQUIRE(smq_queue_info(w, nq, &qi, sizeof(qi)) == -EINVAL);
	REQUIRE(smq_lane_info(w, nq, 0, &li, sizeof(li)) == -EINVAL);
	REQUIRE(smq_lane_info(w, 0, g->boards, &li, sizeof(li)) == -EINVAL);
}

/* Validate and dump as board `board` attached raw; returns whether the
 * window passed smq_validate. */
static bool raw_view(unsigned board)
{
	struct smq_window *w;
	struct smq_fault f;
	int err = smq_open(spec, board, SMQ_OPEN_RAW, &w);

	check_code(err);
	if (err)
		return false;
	memset(&f, 0x5a, sizeof(f));
	err = smq_validate(w, &f, sizeof(f));
	check_fault(err, &f, w->map.size);
	bool valid = !err && w->valid;
	/* smq_validate and the static check at open agree */
	if (!err && board == 0)
		REQUIRE(w->valid);
	dump_like(w, w->valid, valid);
	REQUIRE(smq_close(w) == 0);
	return !err;
}

/* ---- the message path ---- */

struct session {
	unsigned boards, queues;
	uint32_t entry_size;
	struct smq_window *w[MAXB];
	struct smq_queue *rx[MAXQ];
	struct smq_queue *tx[MAXB][MAXQ];
};

/* With FUZZ_SKIP_LIVE_LOCK: whether a sender of board b on queue q would
 * spin on the lane lock. */
static bool lock_held(struct smq_window *w, unsigned b, unsigned q)
{
	if (!skip_live_lock || !w->valid || q >= w->lay.queues || b >= w->lay.boards)
		return false;
	const struct smq_lane_out *o = at(w, lay_lane_out(&w->lay, b, q));
	uint64_t lock = LOAD(&o->lock);
	return lock && smq_tag_alive(lock);
}

static void session_open(struct session *s, unsigned rx_flags, bool checked)
{
	struct smq_window_info wi;

	memset(s, 0, sizeof(*s));
	for (unsigned b = 0; b < MAXB; b++) {
		int err = smq_open(spec, b, 0, &s->w[b]);
		check_code(err);
		if (err)
			continue;
		REQUIRE(s->w[b]->valid);
		if (!s->boards) {
			err = smq_window_info(s->w[b], &wi, sizeof(wi));
			REQUIRE(!err || err == -ESTALE);
			s->boards = wi.geometry.boards;
			s->queues = wi.geometry.queues;
			s->entry_size = wi.geometry.entry_size;
		}
	}
	for (unsigned q = 0; q < MAXQ && q < s->queues; q++) {
		struct smq_queue_info qi;
		struct smq_window *any = NULL;
		unsigned r;
		for (unsigned b = 0; b < MAXB && !any; b++)
			any = s->w[b];
		int e = any ? smq_queue_info(any, q, &qi, sizeof(qi)) : -EINVAL;
		if (e && e != -ESTALE)
			continue;
		r = qi.receiver;
		if (r < MAXB && s->w[r]) {
			int err = smq_queue_open(s->w[r], q, SMQ_RECEIVER,
						 rx_flags, &s->rx[q]);
			check_code(err);
			check_agrees(checked, err, "smq_queue_open(receiver)");
			/* receiving on another board's queue is refused */
			unsigned o = (r + 1) % s->boards;
			struct smq_queue *bad = NULL;
			if (o != r && o < MAXB && s->w[o]) {
				int e2 = smq_queue_open(s->w[o], q, SMQ_RECEIVER,
							0, &bad);
				REQUIRE(e2 == -EPERM || e2 == -ESTALE);
				REQUIRE(!bad);
			}
		}
		for (unsigned b = 0; b < MAXB && b < s->boards; b++) {
			if (!s->w[b] || lock_held(s->w[b], b, q))
				continue;
			int err = smq_queue_open(s->w[b], q, SMQ_SENDER, 0,
						 &s->tx[b][q]);
			check_code(err);
			check_agrees(checked, err, "smq_queue_open(sender)");
		}
	}
}

static void session_close(struct session *s)
{
	for (unsigned q = 0; q < MAXQ; q++) {
		if (s->rx[q])
			REQUIRE(smq_queue_close(s->rx[q]) == 0);
		for (unsigned b = 0; b < MAXB; b++)
			if (s->tx[b][q])
				REQUIRE(smq_queue_close(s->tx[b][q]) == 0);
	}
	for (unsigned b = 0; b < MAXB; b++)
		if (s->w[b])
			REQUIRE(smq_close(s->w[b]) == 0);
	memset(s, 0, sizeof(*s));
}

/* One receive into a buffer with guards: returns the error. */
static int receive_one(struct smq_queue *q, size_t cap, uint32_t entry_size,
		       unsigned boards, size_t *lenp)
{
	size_t total = GUARD + cap + GUARD;
	uint8_t *buf = malloc(total);
	size_t len = (size_t)-1;
	unsigned from = 0xdeadbeef;

	if (!buf)
		BUG("out of memory");
	memset(buf, 0xcb, total);
	int err = smq_receive(q, buf + GUARD, cap, &len, &from, 0);
	check_code(err);
	size_t touched = 0;
	if (!err) {
		REQUIRE(len <= cap);
		REQUIRE(len <= entry_size);
		REQUIRE(from < boards);
		touched = len;
	} else if (err == -EMSGSIZE) {
		REQUIRE(len > cap && len <= entry_size);
	}
	for (size_t i = 0; i < total; i++)
		if ((i < GUARD || i >= GUARD + touched) && buf[i] != 0xcb)
			BUG("receive wrote byte %zd of a %zu byte buffer "
			    "(err %d, len %zu)", (ssize_t)i - GUARD, cap, err,
			    len);
	free(buf);
	*lenp = len;
	return err;
}

/* Every board writes its words into the next board's scratch area,
 * which reads them back: on a window that passed validation, as written. */
static void map_writes(struct session *s, bool checked, uint32_t seed)
{
	for (unsigned b = 0; b < MAXB && b < s->boards; b++) {
		unsigned o = (b + 1) % s->boards;
		struct smq_map_result r;
		if (!s->w[b] || !s->w[o])
			continue;
		int err = smq_map_clear(s->w[o]);
		check_code(err);
		if (err == -ENOTSUP)
			return;
		REQUIRE(!err || err == -ESTALE);
		err = smq_map_write(s->w[b], o, seed + b);
		check_code(err);
		REQUIRE(!err || err == -ESTALE);
		memset(&r, 0x5a, sizeof(r));
		int verr = smq_map_verify(s->w[o], b, seed + b, &r, sizeof(r));
		check_code(verr);
		REQUIRE(r.kind <= SMQ_MAP_WRONG && r.wrong <= r.words);
		if (strict && checked && !err && !verr)
			REQUIRE(r.kind == SMQ_MAP_OK && !r.wrong);
	}
}

static void session_run(struct session *s, bool checked, uint32_t seed)
{
	map_writes(s, checked, seed);
	for (unsigned q = 0; q < MAXQ; q++) {
		if (!s->rx[q])
			continue;
		for (int k = 0; k < 4; k++) {
			size_t caps[4] = { s->entry_size, s->entry_size / 2, 0,
					   (seed >> (2 * k)) % (s->entry_size + 1) };
			size_t cap = caps[(seed + (unsigned)k + q) % 4], len;
			int err = receive_one(s->rx[q], cap, s->entry_size,
					      s->boards, &len);
			check_agrees(checked, err, "smq_receive");
			if (err == -EMSGSIZE) {
				/* it stays queued: whole, with a big buffer */
				size_t again;
				err = receive_one(s->rx[q], s->entry_size,
						  s->entry_size, s->boards,
						  &again);
				REQUIRE(!err && again == len);
			}
		}
	}
	for (unsigned b = 0; b < MAXB; b++)
		for (unsigned q = 0; q < MAXQ; q++) {
			struct smq_queue *tx = s->tx[b][q];
			uint8_t msg[8] = { 's', 'm', 'q', (uint8_t)b, (uint8_t)q };
			if (!tx || lock_held(s->w[b], b, q))
				continue;
			size_t n = s->entry_size < sizeof(msg) ? s->entry_size
							       : sizeof(msg);
			int err = smq_send(tx, msg, n, 0);
			check_code(err);
			check_agrees(checked, err, "smq_send");
			REQUIRE(smq_send(tx, msg, (size_t)s->entry_size + 1, 0) ==
				-EMSGSIZE);
		}
}

/* ---- raw input ---- */

static void run_raw(const uint8_t *data, size_t size)
{
	struct session s;

	load(data, size);
	bool valid = raw_view(0);
	raw_view(1);
	session_open(&s, (size & 1) ? SMQ_POLL : 0, valid);
	session_run(&s, valid, (uint32_t)size);
	if (s.w[0])
		dump_like(s.w[0], true, false);
	session_close(&s);
	raw_view(0);
}

/* ---- structure-aware input ---- */

struct reader {
	const uint8_t *p;
	size_t n;
};

static bool take(struct reader *r, void *out, size_t k)
{
	if (r->n < k)
		return false;
	memcpy(out, r->p, k);
	r->p += k;
	r->n -= k;
	return true;
}

static uint8_t take8(struct reader *r)
{
	uint8_t v = 0;
	take(r, &v, 1);
	return v;
}

enum {
	F_RECEIVERS = 0x01, /* explicit receivers follow */
	F_SYNC = 0x02,      /* announce and synchronise every board */
	F_LIVE = 0x04,      /* mutate after the handles are open */
	F_FIXSUM = 0x08,    /* recompute the geometry checksum afterwards */
	F_CLEAR = 0x10,     /* clear a queue after the traffic */
	F_TRUNC = 0x20,     /* truncate the file (not in live mode) */
	F_SLEEP = 0x40,     /* receivers opened with SMQ_SLEEP */
	F_SCRATCH = 0x80,   /* formatted with scratch areas */
};

/* Some traffic, as boards do it: messages sent on every lane, some of them
 * received, one left refused by a small buffer. */
static void traffic(unsigned nsend, unsigned nrecv,
		    unsigned flags)
{
	struct session s;
	uint8_t msg[512];

	session_open(&s, 0, false);
	for (unsigned i = 0; i < nsend && s.boards; i++) {
		unsigned b = i % s.boards, q = (i / s.boards) % s.queues;
		if (b >= MAXB || q >= MAXQ || !s.tx[b][q])
			continue;
		size_t n = (i * 7u) % (s.entry_size + 1);
		if (n > sizeof(msg))
			n = sizeof(msg);
		memset(msg, (int)i, n);
		check_code(smq_send(s.tx[b][q], msg, n, 0));
	}
	for (unsigned i = 0; i < nrecv; i++) {
		unsigned q = i % MAXQ;
		size_t len;
		if (s.rx[q])
			receive_one(s.rx[q], i % 5 ? s.entry_size : 0,
				    s.entry_size, s.boards, &len);
	}
	if (flags & F_SYNC) {
		for (unsigned b = 0; b < MAXB; b++)
			if (s.w[b])
				check_code(smq_announce(s.w[b]));
		for (unsigned b = 0; b < MAXB; b++)
			if (s.w[b])
				check_code(smq_synchronize(s.w[b], 0, 0, 1, NULL));
		if (s.w[0])
			check_code(smq_heartbeat(s.w[0]));
	}
	session_close(&s);
}

static void fix_checksum(uint8_t *base, uint64_t size)
{
	struct smq_sb *sb = (struct smq_sb *)base;
	uint64_t queues = sb->queues;
	struct smq_segment seg = { 0, size, base, SMQ_SEG_WINDOW };
	struct smq_view v = { &seg, 1 };

	if (size < SMQ_SB_SIZE || queues > SMQ_MAX_QUEUES ||
	    SMQ_QUEUE_TABLE + queues * sizeof(struct smq_qdesc) > size)
		return;
	sb->checksum = smq_geometry_checksum(&v, (uint32_t)queues);
}

/* Where a mutation record points: a structure of the layout, chosen by
 * anchor, with q, s and slot taken from sel. */
static uint64_t anchor_of(const struct smq_layout *l, uint8_t anchor,
			  uint8_t sel)
{
	unsigned q = sel % l->queues, s = (sel >> 4) % l->boards;
	unsigned slot = (sel >> 2) & (lay_entries(l, q) - 1);

	switch (anchor % 16) {
	case 1: return l->rx[q];
	case 2: return lay_bottoms(l, q);
	case 3: return lay_lane_in(l, q, s);
	case 4: return lay_lane_ask(l, q, s);
	case 5: return lay_lane_out(l, s, q);
	case 6: return lay_lane_fc(l, s, q);
	case 7: return lay_lane_wake(l, s, q);
	case 8: return lay_ring(l, q, s) + (uint64_t)slot * lay_stride(l, q);
	case 9: return lay_notice(l, s);
	case 10: return SMQ_BOARD_TABLE + (uint64_t)s * SMQ_SLOT_SIZE;
	case 11: return l->queue_table;
	case 12: return lay_ctl(s) + offsetof(struct smq_ctl, slot) +
			(uint64_t)(sel % SMQ_SLOTS) * SMQ_LINE;
	case 13: return 2 * SMQ_LINE;  /* the superblock's maintenance line */
	case 14: return l->journal ? lay_journal(l, s) : 0;  /* its head */
	case 15: return l->journal ? lay_journal_slot(l, s, sel) : 0;
	default: return 0;
	}
}

static void mutate(struct reader *r, uint8_t *base, uint64_t size,
		   const struct smq_layout *l)
{
	for (;;) {
		uint8_t op, anchor, sel;
		uint16_t rel;
		uint64_t v = 0;
		if (!take(r, &op, 1) || !take(r, &anchor, 1) ||
		    !take(r, &sel, 1) || !take(r, &rel, 2))
			return;
		unsigned width = 1u << (op & 3);
		if (!take(r, &v, width))
			return;
		uint64_t off = anchor_of(l, anchor, sel) + rel;
		if (anchor % 16 == 0)  /* anywhere: 24 bits of offset */
			off = ((uint64_t)sel << 16 | rel);
		if (size < width)
			return;
		off %= size - width + 1;
		uint64_t old = 0;
		memcpy(&old, base + off, width);
		switch ((op >> 2) & 3) {
		case 0: v ^= old; break;
		case 1: break;
		case 2: v += old; break;
		case 3: v = old ^ (1ull << (v % (8 * width))); break;
		}
		memcpy(base + off, &v, width);
	}
}

static void run_struct(const uint8_t *data, size_t size)
{
	struct reader r = { data + 1, size - 1 };
	uint16_t receivers[MAXQ];
	uint16_t esize = 0;
	struct smq_geometry g;

	g.boards = 1 + take8(&r) % 5;
	g.queues = 1 + take8(&r) % 6;
	g.entries = 1u << (take8(&r) % 5);
	take(&r, &esize, 2);
	g.entry_size = 1 + esize % 300;
	uint8_t flags = take8(&r);
	unsigned nsend = take8(&r), nrecv = take8(&r) % 32;
	g.receivers = NULL;
	if (flags & F_RECEIVERS) {
		for (unsigned q = 0; q < g.queues; q++)
			receivers[q] = take8(&r) % g.boards;
		g.receivers = receivers;
	}
	uint64_t bytes;
	struct smq_shape sh = { g, NULL, flags & F_SCRATCH ? SMQ_SHAPE_SCRATCH
								 : 0, NULL, 0, 0, 0 };
	if (smq_shape_size(&sh, sizeof(sh), &bytes) || bytes > MAX_FILE)
		return;

	struct smq_window *w0;
	load(NULL, 0);
	REQUIRE(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w0) == 0);
	REQUIRE(smq_init_shape(w0, &sh, sizeof(sh)) == 0);
	REQUIRE(smq_validate(w0, NULL, 0) == 0);
	if (flags & F_CLEAR)
		REQUIRE(smq_clear(w0, (int)(nrecv % (g.queues + 1)) - 1) == 0);
	traffic(nsend, nrecv, flags);
	/* whatever the traffic did, the window is valid */
	REQUIRE(smq_validate(w0, NULL, 0) == 0);

	struct session s;
	bool live = flags & F_LIVE;
	if (live)
		session_open(&s, flags & F_SLEEP ? SMQ_SLEEP : 0, false);
	uint8_t *base = w0->map.base;
	uint64_t mapped = w0->map.size;
	mutate(&r, base, mapped, &w0->lay);
	if (flags & F_FIXSUM)
		fix_checksum(base, mapped);
	REQUIRE(smq_close(w0) == 0);
	if (!live)
		save();
	if (live) {
		session_run(&s, false, nsend);
		if (s.w[0])
			dump_like(s.w[0], false, false);
		session_close(&s);
	} else {
		if ((flags & F_TRUNC) && mapped > 0 &&
		    ftruncate(mfd, (off_t)((uint64_t)nsend * 97 % mapped)) < 0)
			BUG("ftruncate: %s", strerror(errno));
		if (flags & F_TRUNC)
			save();
		bool valid = raw_view(0);
		raw_view(1);
		session_open(&s, flags & F_SLEEP ? SMQ_SLEEP : 0, valid);
		session_run(&s, valid, nsend);
		session_close(&s);
	}
	raw_view(0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
	if (size > MAX_FILE)
		return -1;
	if (size >= 1 && data[0] == FLAG_STRUCT)
		run_struct(data, size);
	else
		run_raw(data, size);
	return 0;
}
