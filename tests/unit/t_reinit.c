/* Re-init under load.  Boards 1 to 3 stream to queues that board 0
 * receives, and a receiver of board 0 drains them, each a process of its
 * own; meanwhile board 0 formats the window again: init with the same
 * geometry, init with another, clear of every queue, clear of one.  Then:
 *
 * - every sender and the receiver get -ESTALE, and no other error (each
 *   child's exit status says what it saw);
 * - right after the call returns the window is exactly what the call makes
 *   of it (a fresh format, or the cleared queues empty): no stale board
 *   wrote into the new layout while it was being made;
 * - from then on the window's bytes do not change at all (board 0's
 *   handshake with senders caught mid-copy is inside the call), but for
 *   the stale boards' own in-flight marks in their control blocks (set
 *   and taken down again by every refused call), checked after the
 *   boards were told and over 10 more calls of each stale board (counted,
 *   not timed) while they go on calling smq_send,
 *   smq_receive, smq_heartbeat, smq_announce and smq_queue_open, each
 *   returning -ESTALE;
 * - smq_validate passes and the new generation carries a message.
 *
 * The rounds run with the boards announced (as after a normal startup) and
 * with boards that only attached and opened their queues; with processes,
 * and with threads of one process, each with its own window handle (what
 * ThreadSanitizer can follow; it can not relate two handles' mappings of
 * the same memory).  Then many re-inits in a row, each checked the moment
 * it returns (a race one re-init rarely shows; as many as a few seconds
 * allow, up to a count, at least a floor), and boards asleep in a call
 * across a re-init: a sender waiting for room, a receiver waiting for a
 * message; the call must return -ESTALE (a sleep lasts at most 1 s; 20 s
 * only stops a hang) and write nothing on its way out.
 *
 * A clear of one queue is another kind of round: only the handles of that
 * queue get -ESTALE, the other queues' traffic goes on through it, the
 * generation and the board table stay, and from the moment the call
 * returns that queue's lines do not change while its stale handles go on
 * calling.
 *
 * Each part runs in a process of its own.  t_reinit [processes|threads|
 * asleep] [announced|unannounced] runs only those parts;
 * SMQ_REINIT_ROUNDS=N repeats them; SMQ_REINIT_ROW=N makes the re-inits in
 * a row a count, N / 3 announced and N not, instead of a time. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include "testint.h"
#include "testlib.h"

#define NB 4               /* boards: 0 receives, 1..3 send */
#define PAYLOAD 8192       /* largest message the children send */

#define AL(p) atomic_load_explicit((p), memory_order_acquire)
#define AS(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define AADD(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A nap between looks at what the children say in shared words (how
 * far each got, what its call returned): no event tells of a change. */
static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* What a child saw. */
enum { W_NONE, W_OPEN, W_ANNOUNCE, W_QOPEN, W_SEND, W_RECEIVE, W_STALE_SEND,
       W_STALE_RECEIVE, W_STALE_HEARTBEAT, W_STALE_ANNOUNCE, W_STALE_QOPEN };
static const char *const where_name[] = {
	"", "smq_open", "smq_announce", "smq_queue_open", "smq_send",
	"smq_receive", "smq_send once stale", "smq_receive once stale",
	"smq_heartbeat once stale", "smq_announce once stale",
	"smq_queue_open once stale"
};

struct child {
	_Atomic uint32_t ready;
	_Atomic uint64_t ok;          /* messages sent or received */
	_Atomic uint32_t stale;       /* got -ESTALE */
	_Atomic uint64_t stale_calls; /* calls since, every one -ESTALE */
	_Atomic int bad;              /* the first other result */
	_Atomic uint32_t bad_where;
};

struct ctl {
	const char *spec;
	unsigned queues;              /* of the geometry the children attach to */
	unsigned entry_size;
	bool announce;
	int only;                     /* the queue a clear of one empties, -1 */
	_Atomic uint32_t stop;
	struct child ch[NB];
};

struct arg {
	struct ctl *c;
	unsigned board;
};

static void saw(struct child *ch, int err, unsigned where)
{
	int none = 0;
	if (atomic_compare_exchange_strong(&ch->bad, &none, err))
		AS(&ch->bad_where, where);
}

/* Once stale: everything that writes must say -ESTALE, write nothing, and
 * keep saying it until the parent is done looking at the window. */
static void stale_loop(struct ctl *c, struct child *ch, struct smq_window *w,
		       struct smq_queue **qs, unsigned nq, enum smq_role role)
{
	uint8_t buf[256] = { 0 };
	unsigned i = 0;
	int err;

	AS(&ch->stale, 1);
	while (!AL(&c->stop)) {
		for (unsigned k = 0; k < nq; k++) {
			if (role == SMQ_SENDER) {
				err = smq_send(qs[k], buf, sizeof(buf), 100);
				if (err != -ESTALE)
					saw(ch, err, W_STALE_SEND);
			} else {
				size_t len;
				err = smq_receive(qs[k], buf, sizeof(buf), &len,
						  NULL, 1);
				if (err != -ESTALE)
					saw(ch, err, W_STALE_RECEIVE);
			}
		}
		if (++i % 16 == 0) {
			struct smq_queue *q;
			if ((err = smq_heartbeat(w)) != -ESTALE)
				saw(ch, err, W_STALE_HEARTBEAT);
			if ((err = smq_announce(w)) != -ESTALE)
				saw(ch, err, W_STALE_ANNOUNCE);
			err = smq_queue_open(w, 0, role, 0, &q);
			if (err != -ESTALE) {
				saw(ch, err, W_STALE_QOPEN);
				if (!err)
					smq_queue_close(q);
			}
			sched_yield();
		}
		AADD(&ch->stale_calls, 1);
	}
}

static int attach(struct ctl *c, struct child *ch, unsigned board,
		  struct smq_window **w)
{
	int err = smq_open(c->spec, board, 0, w);
	if (err) {
		saw(ch, err, W_OPEN);
		return 2;
	}
	if (c->announce && (err = smq_announce(*w))) {
		saw(ch, err, W_ANNOUNCE);
		return 2;
	}
	return 0;
}

/* Board b (1..3) sends on queue b - 1 and, when there are more queues,
 * b + 2 too; messages of random sizes up to PAYLOAD bytes. */
static int sender(void *p)
{
	struct arg *a = p;
	struct ctl *c = a->c;
	struct child *ch = &c->ch[a->board];
	struct smq_window *w;
	struct smq_queue *qs[2];
	unsigned nq = 0, qidx[2], told = 0;
	uint8_t *buf = calloc(1, PAYLOAD);
	uint64_t rng = a->board * 0x9e3779b9ull;
	int err;

	CHECK(buf);
	if (attach(c, ch, a->board, &w))
		return 2;
	for (unsigned q = a->board - 1; q < c->queues && nq < 2; q += 3) {
		if ((err = smq_queue_open(w, q, SMQ_SENDER, 0, &qs[nq]))) {
			saw(ch, err, W_QOPEN);
			return 2;
		}
		qidx[nq++] = q;
	}
	AS(&ch->ready, 1);
	for (uint64_t n = 0;; n++) {
		unsigned k = n % nq;
		size_t len = 1 + test_rand(&rng) % c->entry_size;
		memset(buf, (int)n, len);
		err = smq_send(qs[k], buf, len, told >> k & 1 ? 10
			       : c->only >= 0 ? 200 : 5000);
		if (c->only >= 0 && (int)qidx[k] == c->only) {
			/* its queue cleared: told, and told again */
			if (!err && !(told >> k & 1))
				AADD(&ch->ok, 1);
			else if (err == -ESTALE) {
				told |= 1u << k;
				AS(&ch->stale, 1);
				AADD(&ch->stale_calls, 1);
			} else
				saw(ch, err, told >> k & 1 ? W_STALE_SEND : W_SEND);
		} else if (err == -ESTALE && c->only < 0) {
			break;
		} else if (err == -ETIMEDOUT && c->only >= 0) {
			/* the receiver stops draining at the end: that the
			 * other queues carry on is counted by ok */
		} else if (err) {
			saw(ch, err, W_SEND);
			break;
		} else {
			AADD(&ch->ok, 1);
		}
		if (c->only >= 0 && AL(&c->stop))
			break;
	}
	if (c->only < 0)
		stale_loop(c, ch, w, qs, nq, SMQ_SENDER);
	for (unsigned k = 0; k < nq; k++)
		OK(smq_queue_close(qs[k]));
	OK(smq_close(w));
	free(buf);
	return AL(&ch->bad) ? 2 : 0;
}

/* Board 0 drains every queue, round robin. */
static int receiver(void *p)
{
	struct arg *a = p;
	struct ctl *c = a->c;
	struct child *ch = &c->ch[0];
	struct smq_window *w;
	struct smq_queue *qs[8];
	uint8_t *buf = malloc(PAYLOAD);
	unsigned nq = c->queues;
	int err;

	CHECK(buf && nq <= 8);
	if (attach(c, ch, 0, &w))
		return 2;
	for (unsigned q = 0; q < nq; q++)
		if ((err = smq_queue_open(w, q, SMQ_RECEIVER, SMQ_POLL, &qs[q]))) {
			saw(ch, err, W_QOPEN);
			return 2;
		}
	AS(&ch->ready, 1);
	bool told = false;
	for (bool stale = false; !stale && !(c->only >= 0 && AL(&c->stop));)
		for (unsigned q = 0; q < nq && !stale; q++) {
			size_t len;
			err = smq_receive(qs[q], buf, PAYLOAD, &len, NULL, 0);
			if ((int)q == c->only && (told || err == -ESTALE)) {
				/* its queue cleared: told, and told again */
				if (err != -ESTALE)
					saw(ch, err, W_STALE_RECEIVE);
				told = true;
				AS(&ch->stale, 1);
				AADD(&ch->stale_calls, 1);
			} else if (!err)
				AADD(&ch->ok, 1);
			else if (err == -ESTALE && c->only < 0)
				stale = true;
			else if (err != -EAGAIN) {
				saw(ch, err, W_RECEIVE);
				stale = true;
			}
		}
	if (c->only < 0)
		stale_loop(c, ch, w, qs, nq, SMQ_RECEIVER);
	for (unsigned q = 0; q < nq; q++)
		OK(smq_queue_close(qs[q]));
	OK(smq_close(w));
	free(buf);
	return AL(&ch->bad) ? 2 : 0;
}

/* ---- what the window must hold right after the call ---- */

struct range { uint64_t off, len; };

/* The in-flight marks and heartbeat counts of every control block: what
 * a stale board may still write (its marks, where no geometry moves
 * them), and what a format keeps. */
static unsigned mark_ranges(struct range *r)
{
	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++)
		r[b] = (struct range){ lay_ctl(b) + offsetof(struct smq_ctl, local),
				       SMQ_CTL_SIZE - SMQ_LINE };
	return SMQ_MAX_BOARDS;
}

/* Bytes a format writes that depend on the generation or the clock, or
 * that it keeps. */
static unsigned gen_ranges(const struct smq_layout *l, struct range *r)
{
	unsigned n = mark_ranges(r);
	r[n++] = (struct range){ offsetof(struct smq_sb, generation), 8 };
	r[n++] = (struct range){ offsetof(struct smq_sb, format_time_ns), 8 };
	r[n++] = (struct range){ offsetof(struct smq_sb, epoch_last), 8 };
	/* a count of all time, which an init keeps (a fresh format is 0) */
	r[n++] = (struct range){ offsetof(struct smq_sb, emptied), 8 };
	/* the journals, which an init of the same layout keeps, and a new
	 * one makes with a number of its own */
	for (unsigned b = 0; l->journal && b < l->boards; b++)
		r[n++] = (struct range){ lay_journal(l, b),
					 smq_journal_bytes(l->journal) };
	for (unsigned b = 0; b < l->boards; b++) {
		r[n++] = (struct range){ lay_notice(l, b) +
			offsetof(struct smq_notice, generation), 8 };
		r[n++] = (struct range){ lay_notice(l, b) +
			offsetof(struct smq_notice, check), 8 };
	}
	for (unsigned q = 0; q < l->queues; q++) {
		r[n++] = (struct range){ l->rx[q] + offsetof(struct smq_rx, epoch),
					 8 };
		for (unsigned s = 0; s < l->boards; s++)
			r[n++] = (struct range){ lay_lane_wake(l, s, q) +
				offsetof(struct smq_lane_wake, queue_epoch), 8 };
	}
	return n;
}

static bool in_ranges(uint64_t off, const struct range *r, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (off >= r[i].off && off < r[i].off + r[i].len)
			return true;
	return false;
}

/* Names the field of layout l at byte off, for the failure messages. */
static const char *field_at(const struct smq_layout *l, uint64_t off)
{
	static char buf[160];

	snprintf(buf, sizeof(buf), off >= l->size ? "past the layout"
		 : "padding");
	if (off >= l->queue_table &&
	    off < l->queue_table + (uint64_t)l->queues * sizeof(struct smq_qdesc))
		snprintf(buf, sizeof(buf), "queue_table[%llu] +%llu",
			 (unsigned long long)(off - l->queue_table) /
			 sizeof(struct smq_qdesc),
			 (unsigned long long)(off - l->queue_table) %
			 sizeof(struct smq_qdesc));
	if (off < SMQ_SB_SIZE)
		snprintf(buf, sizeof(buf), "superblock +%llu",
			 (unsigned long long)off);
	else if (off >= SMQ_BOARD_TABLE && off < SMQ_QUEUE_TABLE)
		snprintf(buf, sizeof(buf), "board slot %llu +%llu",
			 (unsigned long long)(off - SMQ_BOARD_TABLE) / SMQ_SLOT_SIZE,
			 (unsigned long long)(off - SMQ_BOARD_TABLE) % SMQ_SLOT_SIZE);
	else if (off >= SMQ_CTL_OFF && off < SMQ_BOARD_TABLE)
		snprintf(buf, sizeof(buf), "control block of board %llu +%llu",
			 (unsigned long long)(off - SMQ_CTL_OFF) / SMQ_CTL_SIZE,
			 (unsigned long long)(off - SMQ_CTL_OFF) % SMQ_CTL_SIZE);
	for (unsigned b = 0; b < l->boards; b++) {
		if (off == lay_notice(l, b) || (off > lay_notice(l, b) &&
						off < lay_notice(l, b) + SMQ_LINE))
			snprintf(buf, sizeof(buf), "notice of board %u +%llu", b,
				 (unsigned long long)(off - lay_notice(l, b)));
		for (unsigned q = 0; q < l->queues; q++) {
			uint64_t o = lay_lane_out(l, b, q);
			if (off >= o && off < o + SMQ_LANE_LINES * SMQ_LINE)
				snprintf(buf, sizeof(buf), "%s of board %u, queue "
					 "%u, +%llu", off < o + SMQ_LINE ? "lane_out"
					 : off < o + 2 * SMQ_LINE ? "lane_fc"
					 : "lane_wake", b, q,
					 (unsigned long long)(off - o) % SMQ_LINE);
		}
	}
	for (unsigned q = 0; q < l->queues; q++) {
		if (off >= l->rx[q] && off < lay_lane_in(l, q, 0))
			snprintf(buf, sizeof(buf), "rx, bottoms or bell of queue "
				 "%u, +%llu", q,
				 (unsigned long long)(off - l->rx[q]));
		for (unsigned s = 0; s < l->boards; s++) {
			if (off >= lay_lane_in(l, q, s) &&
			    off < lay_lane_in(l, q, s) + SMQ_LINE)
				snprintf(buf, sizeof(buf), "lane_in of queue %u, "
					 "board %u", q, s);
			if (off >= lay_lane_ask(l, q, s) &&
			    off < lay_lane_ask(l, q, s) + SMQ_LINE)
				snprintf(buf, sizeof(buf), "lane_ask of queue %u, "
					 "board %u", q, s);
			uint64_t r = lay_ring(l, q, s);
			if (off >= r && off < r + l->entries * l->stride)
				snprintf(buf, sizeof(buf), "ring of queue %u, "
					 "board %u: entry %llu +%llu", q, s,
					 (unsigned long long)((off - r) / l->stride),
					 (unsigned long long)((off - r) % l->stride));
		}
	}
	return buf;
}

/* Nothing has changed in the window since snapshot s0 (taken when the
 * re-init returned), but for in-flight marks: no stale board wrote into
 * it since. */
static void same_since(const uint8_t *s0, size_t n0, const char *spec,
		       const struct smq_layout *l, const char *what)
{
	struct range marks[SMQ_MAX_BOARDS];
	unsigned nm = mark_ranges(marks);
	size_t n;
	uint8_t *now = test_snapshot(spec, &n);

	if (n != n0)
		FAIL("%s: window size changed %zu -> %zu", what, n0, n);
	for (size_t i = 0; i < n; i++)
		if (now[i] != s0[i] && !in_ranges(i, marks, nm))
			FAIL("%s: byte %zu (%s) changed 0x%02x -> 0x%02x after "
			     "the call returned: a stale board wrote into the "
			     "window", what, i, field_at(l, i), s0[i], now[i]);
	free(now);
}

/* After smq_init: byte for byte a fresh format of geometry g, but for the
 * generation, the time and what derives from the generation (which must
 * be the window's). */
static void check_fresh(const uint8_t *snap, size_t len,
			const struct smq_geometry *g, const char *what)
{
	static const char *ref_spec;
	struct smq_window *ref;
	struct smq_layout l;
	size_t rlen;

	if (!ref_spec)
		ref_spec = test_window();
	unlink(test_path(ref_spec));
	OK(smq_open(ref_spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &ref));
	OK(smq_init(ref, g, sizeof(*g)));

	OK(smq_layout_compute(&l, g));
	struct range *r = calloc(SMQ_MAX_BOARDS + 5 + 3 * l.boards +
				 (l.boards + 1) * l.queues, sizeof(*r));
	unsigned nr = gen_ranges(&l, r);
	uint8_t *want = test_snapshot(ref_spec, &rlen);
	CHECK(rlen >= l.size && len >= l.size);
	for (uint64_t i = 0; i < l.size; i++)
		if (snap[i] != want[i] && !in_ranges(i, r, nr))
			FAIL("%s: byte %llu of the new layout (%s) is 0x%02x, a "
			     "fresh format has 0x%02x: a stale board wrote into it",
			     what, (unsigned long long)i, field_at(&l, i), snap[i],
			     want[i]);
	const struct smq_sb *sb = (const void *)snap;
	for (unsigned b = 0; b < l.boards; b++) {
		const struct smq_notice *nt = (const void *)(snap + lay_notice(&l, b));
		CHECK(nt->generation == sb->generation &&
		      nt->check == smq_notice_check(sb->generation, b));
	}
	for (unsigned q = 0; q < l.queues; q++)
		CHECK(((const struct smq_rx *)(snap + l.rx[q]))->epoch ==
		      sb->generation << SMQ_EPOCH_SHIFT);
	free(want);
	free(r);
	smq_layout_free(&l);
	OK(smq_close(ref));
}

static bool zero(const uint8_t *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Queue q as a clear makes it: its rx line holds its index and its new
 * epoch, every lane's lines are zero but for the epoch's copy in
 * lane_wake, the bottoms and the bell zero. */
static void check_queue_cleared(const uint8_t *snap, const struct smq_layout *l,
				unsigned q, uint64_t epoch, const char *what)
{
	const struct smq_rx *rx = (const void *)(snap + l->rx[q]);
	struct smq_rx want = { .index = q, .epoch = epoch };

	if (memcmp(rx, &want, sizeof(want)))
		FAIL("%s: queue %u: rx line not cleared", what, q);
	for (unsigned k = 0; k < lay_lanes(l, q); k++) {
		unsigned s = lay_lane_board(l, q, k);
		const struct smq_lane_wake *wk =
			(const void *)(snap + lay_lane_wake(l, s, q));
		struct smq_lane_wake wwant = { .queue_epoch = epoch };
		if (!zero(snap + lay_lane_out(l, s, q), 2 * SMQ_LINE) ||
		    memcmp(wk, &wwant, sizeof(wwant)) ||
		    !zero(snap + lay_lane_in_k(l, q, k), SMQ_LINE) ||
		    !zero(snap + lay_lane_ask_k(l, q, k), SMQ_LINE))
			FAIL("%s: queue %u: lane of board %u written into "
			     "after the clear", what, q, s);
	}
	if (!zero(snap + lay_bottoms(l, q), lay_bottoms_size(l, q)) ||
	    !zero(snap + lay_bell(l, q), SMQ_LINE))
		FAIL("%s: queue %u: bottoms or bell written into", what, q);
}

/* After smq_clear of every queue: the board table empty, every notice of
 * the new generation, every queue cleared under epoch generation << 32. */
static void check_cleared(const uint8_t *snap, const struct smq_layout *l,
			  const char *what)
{
	const struct smq_sb *sb = (const void *)snap;

	if (!zero(snap + SMQ_BOARD_TABLE, SMQ_MAX_BOARDS * SMQ_SLOT_SIZE))
		FAIL("%s: the board table is not empty", what);
	for (unsigned b = 0; b < l->boards; b++) {
		const struct smq_notice *nt = (const void *)(snap + lay_notice(l, b));
		CHECK(nt->generation == sb->generation &&
		      nt->check == smq_notice_check(sb->generation, b));
	}
	for (unsigned q = 0; q < l->queues; q++)
		check_queue_cleared(snap, l, q,
				    sb->generation << SMQ_EPOCH_SHIFT, what);
}

/* After smq_clear of queue q alone: q cleared under the superblock's last
 * epoch, past the generation's own; the generation as it was. */
static void check_cleared_one(const uint8_t *snap, const struct smq_layout *l,
			      unsigned q, uint64_t gen, const char *what)
{
	const struct smq_sb *sb = (const void *)snap;

	if (sb->generation != gen)
		FAIL("%s: the generation moved %llu -> %llu", what,
		     (unsigned long long)gen,
		     (unsigned long long)sb->generation);
	if (sb->epoch_last <= gen << SMQ_EPOCH_SHIFT)
		FAIL("%s: epoch_last %llu is not past the generation's", what,
		     (unsigned long long)sb->epoch_last);
	for (unsigned b = 0; b < l->boards; b++) {
		const struct smq_notice *nt = (const void *)(snap + lay_notice(l, b));
		CHECK(nt->generation == gen &&
		      nt->check == smq_notice_check(gen, b));
	}
	check_queue_cleared(snap, l, q, sb->epoch_last, what);
}

/* The bytes of queue q: its lanes' lines in the senders' bodies and its
 * whole rx area with the rings. */
static unsigned queue_ranges(const struct smq_layout *l, unsigned q,
			     struct range *r)
{
	unsigned n = 0, lanes = lay_lanes(l, q);

	for (unsigned k = 0; k < lanes; k++)
		r[n++] = (struct range){ lay_lane_out(l, lay_lane_board(l, q, k),
						      q), SMQ_LANE_LINES * SMQ_LINE };
	r[n++] = (struct range){ l->rx[q], lay_ring_k(l, q, lanes) - l->rx[q] };
	return n;
}

/* Queue q's bytes as they were in s0. */
static void queue_same_since(const uint8_t *s0, const char *spec,
			     const struct smq_layout *l, unsigned q,
			     const char *what)
{
	struct range r[SMQ_MAX_BOARDS + 1];
	unsigned n = queue_ranges(l, q, r);
	size_t len;
	uint8_t *now = test_snapshot(spec, &len);

	for (unsigned i = 0; i < n; i++)
		for (uint64_t off = r[i].off; off < r[i].off + r[i].len; off++)
			if (now[off] != s0[off])
				FAIL("%s: byte %llu (%s) changed 0x%02x -> 0x%02x "
				     "after the clear returned: a stale handle "
				     "wrote into queue %u", what,
				     (unsigned long long)off, field_at(l, off),
				     s0[off], now[off], q);
	free(now);
}

/* ---- one round ---- */

enum kind { SAME, OTHER, CLEAR_ALL, CLEAR_ONE };
static const char *const kind_name[] = {
	"init, same geometry", "init, another geometry", "clear, every queue",
	"clear, queue 1"
};

struct runner {
	bool threads;
	pid_t pid[NB];
	pthread_t th[NB];
	struct arg args[NB];
};

static void *thread_main(void *p)
{
	struct arg *a = p;
	return (void *)(intptr_t)(a->board ? sender(a) : receiver(a));
}

static void start(struct runner *rn, struct ctl *c)
{
	for (unsigned b = 0; b < NB; b++) {
		rn->args[b] = (struct arg){ c, b };
		if (rn->threads)
			CHECK(pthread_create(&rn->th[b], NULL, thread_main,
					     &rn->args[b]) == 0);
		else
			rn->pid[b] = test_fork(b ? sender : receiver, &rn->args[b]);
	}
}

/* Returns each child's result: 0 if all it saw was right. */
static void finish(struct runner *rn, int *rc)
{
	for (unsigned b = 0; b < NB; b++) {
		if (rn->threads) {
			void *r;
			CHECK(pthread_join(rn->th[b], &r) == 0);
			rc[b] = (int)(intptr_t)r;
		} else {
			int status;
			if (waitpid(rn->pid[b], &status, 0) != rn->pid[b])
				FAIL("waitpid");
			if (WIFSIGNALED(status))
				FAIL("board %u died of signal %d", b,
				     WTERMSIG(status));
			rc[b] = WEXITSTATUS(status);
		}
	}
}

/* The boards of a round started (processes or threads) on geometry g,
 * each streaming; only: the queue a clear of one queue empties, or -1. */
static struct ctl *begin_round(struct runner *rn, const char *spec,
			       const struct smq_geometry *g, bool announce,
			       int only, const char *what)
{
	struct ctl *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	CHECK(c != MAP_FAILED);
	c->spec = spec;
	c->only = only;
	c->queues = g->queues;
	c->entry_size = g->entry_size < PAYLOAD ? g->entry_size : PAYLOAD;
	c->announce = announce;
	start(rn, c);
	uint64_t until = now_ms() + 20000;
	for (unsigned b = 0; b < NB; b++)
		while ((!AL(&c->ch[b].ready) || AL(&c->ch[b].ok) < 20) &&
		       !AL(&c->ch[b].bad) && now_ms() < until)
			/* each board going: its words, no event */
			sleep_ms(1);
	for (unsigned b = 0; b < NB; b++)
		if (AL(&c->ch[b].bad) || AL(&c->ch[b].ok) < 20)
			FAIL("%s: board %u did not get going (%s: %s)", what, b,
			     where_name[AL(&c->ch[b].bad_where)],
			     smq_strerror(AL(&c->ch[b].bad)));
	return c;
}

static void round_(struct smq_window *w, const char *spec, enum kind kind,
		   const struct smq_geometry *now, const struct smq_geometry *next,
		   bool announce, bool threads)
{
	struct runner rn = { .threads = threads };
	char what[160];
	int rc[NB];

	snprintf(what, sizeof(what), "%s (%s, %s)", kind_name[kind],
		 threads ? "threads" : "processes",
		 announce ? "announced" : "not announced");
	/* (no sleep: begin_round saw every board carry 20 messages) */
	struct ctl *c = begin_round(&rn, spec, now, announce, -1, what);

	/* the re-init, under load */
	uint64_t before[NB];
	for (unsigned b = 0; b < NB; b++)
		before[b] = AL(&c->ch[b].ok);
	switch (kind) {
	case SAME:
	case OTHER:
		OK(smq_init(w, next, sizeof(*next)));
		break;
	case CLEAR_ALL:
		OK(smq_clear(w, -1));
		break;
	case CLEAR_ONE:
		OK(smq_clear(w, 1));
		break;
	}
	size_t len;
	uint8_t *s0 = test_snapshot(spec, &len);
	if (kind == SAME || kind == OTHER)
		check_fresh(s0, len, next, what);
	else
		check_cleared(s0, &w->lay, what);

	/* every board told (20 s only stops a hang; told is said, not
	 * judged) */
	uint64_t t0 = now_ms(), told = 0;
	uint64_t until = t0 + 20000;
	for (unsigned b = 0; b < NB; b++) {
		while (!AL(&c->ch[b].stale) && !AL(&c->ch[b].bad) &&
		       now_ms() < until)
			/* each board told: its word, no event */
			sleep_ms(1);
		if (now_ms() - t0 > told)
			told = now_ms() - t0;
	}
	for (unsigned b = 0; b < NB; b++) {
		if (AL(&c->ch[b].bad))
			FAIL("%s: board %u: %s returned %d (%s), not -ESTALE", what,
			     b, where_name[AL(&c->ch[b].bad_where)],
			     AL(&c->ch[b].bad), smq_strerror(AL(&c->ch[b].bad)));
		if (!AL(&c->ch[b].stale))
			FAIL("%s: board %u never got -ESTALE", what, b);
	}

	/* nothing has changed since the call returned, and nothing changes
	 * while they keep trying: 10 more calls of each board, counted */
	same_since(s0, len, spec, &w->lay, what);
	uint64_t calls[NB];
	for (unsigned b = 0; b < NB; b++)
		calls[b] = AL(&c->ch[b].stale_calls);
	for (unsigned b = 0; b < NB; b++) {
		WAIT_UNTIL(AL(&c->ch[b].stale_calls) >= calls[b] + 10 ||
			   AL(&c->ch[b].bad), 20,
			   "%s: board %u to call 10 times more (it stopped "
			   "calling?)", what, b);
		same_since(s0, len, spec, &w->lay, what);
	}
	uint64_t stale_calls = 0;
	for (unsigned b = 0; b < NB; b++)
		stale_calls += AL(&c->ch[b].stale_calls) - calls[b];
	free(s0);

	AS(&c->stop, 1);
	finish(&rn, rc);
	for (unsigned b = 0; b < NB; b++) {
		if (AL(&c->ch[b].bad))
			FAIL("%s: board %u: %s returned %d (%s), not -ESTALE", what,
			     b, where_name[AL(&c->ch[b].bad_where)],
			     AL(&c->ch[b].bad), smq_strerror(AL(&c->ch[b].bad)));
		if (rc[b])
			FAIL("%s: board %u failed (%d)", what, b, rc[b]);
	}

	/* the new generation is sound and works */
	struct smq_fault f;
	int err = smq_validate(w, &f, sizeof(f));
	if (err)
		FAIL("%s: smq_validate: %s at %s (offset %llu, value %llu)", what,
		     smq_strerror(err), f.field, (unsigned long long)f.offset,
		     (unsigned long long)f.value);
	struct smq_window *w1;
	struct smq_queue *tx, *rx;
	char msg[] = "after", got[16];
	size_t glen;
	unsigned from;
	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_queue_open(w, 1, SMQ_RECEIVER, 0, &rx));
	OK(smq_queue_open(w1, 1, SMQ_SENDER, 0, &tx));
	OK(smq_send(tx, msg, sizeof(msg), 1000));
	OK(smq_receive(rx, got, sizeof(got), &glen, &from, 1000));
	CHECK(glen == sizeof(msg) && from == 1 && !memcmp(got, msg, glen));
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_close(w1));

	uint64_t sent = 0;
	for (unsigned b = 1; b < NB; b++)
		sent += before[b];
	printf("%-24s %-10s %-14s: 3 senders and 1 receiver stale after %llu "
	       "messages sent; window unchanged over %llu stale calls; "
	       "told in %llu ms\n", kind_name[kind], threads ? "threads" : "processes",
	       announce ? "announced" : "not announced",
	       (unsigned long long)sent, (unsigned long long)stale_calls,
	       (unsigned long long)told);
	fflush(stdout);
	munmap(c, sizeof(*c));
}

/* A clear of queue 1 alone, under load: its handles (board 0's receiver
 * and board 2's sender) are told, the other boards and queues go on. */
static void round_one(struct smq_window *w, const char *spec,
		      const struct smq_geometry *g, bool announce, bool threads)
{
	struct runner rn = { .threads = threads };
	char what[160];
	int rc[NB];

	snprintf(what, sizeof(what), "%s (%s, %s)", kind_name[CLEAR_ONE],
		 threads ? "threads" : "processes",
		 announce ? "announced" : "not announced");
	struct ctl *c = begin_round(&rn, spec, g, announce, 1, what);
	uint32_t states[NB];
	for (unsigned b = 0; b < NB; b++)
		states[b] = ((const struct smq_board_slot *)at(w,
				lay_slot(b)))->state;
	uint64_t gen = ((const struct smq_sb *)at(w, 0))->generation;

	OK(smq_clear(w, 1));
	size_t len;
	uint8_t *s0 = test_snapshot(spec, &len);
	check_cleared_one(s0, &w->lay, 1, gen, what);
	for (unsigned b = 0; b < NB; b++)
		if (((const struct smq_board_slot *)(s0 + lay_slot(b)))->state !=
		    states[b])
			FAIL("%s: board %u's state changed", what, b);

	/* the handles of queue 1 told; the others not (20 s only stops a
	 * hang) */
	uint64_t t0 = now_ms(), ok[NB];
	uint64_t until = t0 + 20000;
	while ((!AL(&c->ch[0].stale) || !AL(&c->ch[2].stale)) &&
	       now_ms() < until)
		/* those of queue 1 told: words, no event */
		sleep_ms(1);
	uint64_t told = now_ms() - t0;
	for (unsigned b = 0; b < NB; b++) {
		if (AL(&c->ch[b].bad))
			FAIL("%s: board %u: %s returned %d (%s)", what, b,
			     where_name[AL(&c->ch[b].bad_where)],
			     AL(&c->ch[b].bad), smq_strerror(AL(&c->ch[b].bad)));
		if (!AL(&c->ch[b].stale) != (b == 1 || b == 3))
			FAIL("%s: board %u %s", what, b, b == 1 || b == 3
			     ? "was told although it has no handle of queue 1"
			     : "never got -ESTALE for queue 1");
		ok[b] = AL(&c->ch[b].ok);
	}
	/* queue 1 stays as the clear left it while its stale handles call;
	 * the other queues carry on */
	uint64_t calls = AL(&c->ch[0].stale_calls) + AL(&c->ch[2].stale_calls);
	/* counted, not timed: 20 more calls of the stale handles, and 10
	 * more messages of each board on the other queues */
	queue_same_since(s0, spec, &w->lay, 1, what);
	WAIT_UNTIL(AL(&c->ch[0].stale_calls) + AL(&c->ch[2].stale_calls) >=
		   calls + 20 || AL(&c->ch[0].bad) || AL(&c->ch[2].bad), 20,
		   "%s: the stale handles to call 20 times more (they "
		   "stopped calling?)", what);
	queue_same_since(s0, spec, &w->lay, 1, what);
	for (unsigned b = 0; b < NB; b++) {
		WAIT_UNTIL(AL(&c->ch[b].ok) >= ok[b] + 10 || AL(&c->ch[b].bad),
			   20, "%s: board %u to carry 10 more messages on the "
			   "other queues (it stopped?)", what, b);
		queue_same_since(s0, spec, &w->lay, 1, what);
	}
	uint64_t stale_calls = AL(&c->ch[0].stale_calls) +
			       AL(&c->ch[2].stale_calls) - calls;
	free(s0);
	AS(&c->stop, 1);
	finish(&rn, rc);
	for (unsigned b = 0; b < NB; b++)
		if (AL(&c->ch[b].bad) || rc[b])
			FAIL("%s: board %u failed (%d; %s)", what, b, rc[b],
			     smq_strerror(AL(&c->ch[b].bad)));
	OK(smq_validate(w, NULL, 0));
	printf("%-24s %-10s %-14s: 2 handles of queue 1 stale, told in %llu ms; "
	       "queue 1 unchanged over %llu stale calls; the other "
	       "queues went on\n", kind_name[CLEAR_ONE],
	       threads ? "threads" : "processes",
	       announce ? "announced" : "not announced",
	       (unsigned long long)told, (unsigned long long)stale_calls);
	fflush(stdout);
	munmap(c, sizeof(*c));
}

static void rounds(bool threads, bool announce)
{
	static const char *spec;
	static const uint16_t recv_a[3] = { 0, 0, 0 };
	static const uint16_t recv_b[6] = { 0, 0, 0, 0, 0, 0 };
	const struct smq_geometry a = { NB, 3, 16, PAYLOAD, recv_a };
	const struct smq_geometry b = { NB, 6, 8, PAYLOAD * 2, recv_b };
	struct smq_window *w;

	if (!spec)
		spec = test_window();
	unlink(test_path(spec));
	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE, &w));
	OK(smq_init(w, &a, sizeof(a)));
	round_(w, spec, SAME, &a, &a, announce, threads);
	round_(w, spec, OTHER, &a, &b, announce, threads);
	round_(w, spec, CLEAR_ALL, &b, &b, announce, threads);
	round_one(w, spec, &b, announce, threads);
	OK(smq_close(w));
}

/* ---- boards asleep in a call across a re-init ---- */

struct sleeper {
	const char *spec;
	enum smq_role role;
	_Atomic uint32_t asleep;
	_Atomic int result;
};

/* A sender whose ring is full (no receiver), or a receiver of an empty
 * queue: each sleeps in its call, which must end in -ESTALE. */
static int sleeper(void *p)
{
	struct sleeper *sl = p;
	struct smq_window *w;
	struct smq_queue *q;
	char buf[64] = { 0 };
	size_t len;
	int err;

	OK(smq_open(sl->spec, sl->role == SMQ_SENDER ? 1 : 0, 0, &w));
	OK(smq_queue_open(w, 0, sl->role, sl->role == SMQ_RECEIVER ? SMQ_SLEEP
				: 0, &q));
	if (sl->role == SMQ_SENDER) {
		for (int i = 0; i < 8; i++)
			OK(smq_send(q, buf, sizeof(buf), 0));
		AS(&sl->asleep, 1);
		err = smq_send(q, buf, sizeof(buf), SMQ_WAIT_FOREVER);
	} else {
		AS(&sl->asleep, 1);
		err = smq_receive(q, buf, sizeof(buf), &len, NULL,
				  SMQ_WAIT_FOREVER);
	}
	AS(&sl->result, err);
	return 0;
}

/* The geometry to re-init to for "another geometry": many queues, so the
 * queue table (which is never zero) lies where the sleeping sender's lane
 * lock used to be, on an index that is no process's pid (else the damage
 * the bug does is a hang rather than a write). */
static struct smq_geometry other_geometry(const struct smq_layout *old)
{
	uint64_t lock = lay_lane_out(old, 1, 0) + offsetof(struct smq_lane_out, lock);
	struct smq_geometry g = { 2, 1000, 8, 64, NULL };

	for (unsigned b = 2; b <= 16; b++) {
		uint64_t qt = SMQ_SB_SIZE + (uint64_t)b * SMQ_LINE;
		uint64_t i = (lock - qt) / 8;
		if (lock > qt && i < g.queues && kill((pid_t)i, 0) < 0 &&
		    errno == ESRCH) {
			g.boards = b;
			break;
		}
	}
	return g;
}

/* The sleeper of queue 0 shows in the window as armed to sleep: board 1
 * waiting for room in its lane, or board 0 asleep on its doorbell. */
static bool armed(struct smq_window *w, enum smq_role role)
{
	struct smq_queue_info qi;
	struct smq_lane_info li;

	if (role == SMQ_SENDER)
		return !smq_lane_info(w, 0, 1, &li, sizeof(li)) &&
		       li.sender_waiting;
	return !smq_queue_info(w, 0, &qi, sizeof(qi)) && qi.sleeping;
}

static void asleep_across(enum smq_role role, enum kind kind)
{
	static const char *spec;
	struct smq_geometry a = { 2, 1, 8, 64, NULL }, next = a;
	struct sleeper *sl = mmap(NULL, sizeof(*sl), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct smq_window *w;
	char what[160];

	CHECK(sl != MAP_FAILED);
	if (!spec)
		spec = test_window();
	unlink(test_path(spec));
	w = test_init(spec, a.boards, a.queues, a.entries, a.entry_size);
	if (kind == OTHER)
		next = other_geometry(&w->lay);
	snprintf(what, sizeof(what), "a %s asleep across %s",
		 role == SMQ_SENDER ? "sender waiting for room"
				    : "receiver waiting for a message",
		 kind == CLEAR_ONE ? "a clear of its queue" : kind_name[kind]);
	sl->spec = spec;
	sl->role = role;
	AS(&sl->result, 1);
	pid_t pid = test_fork(sleeper, sl);
	WAIT_UNTIL(AL(&sl->asleep), 20, "%s: the call to start", what);
	/* past its spinning: armed to sleep, as the window shows it */
	WAIT_UNTIL(armed(w, role), 20, "%s: the call to show %s", what,
		   role == SMQ_SENDER ? "its sender waiting for room"
				      : "its receiver asleep");

	uint64_t t0 = now_ms();
	if (kind == SAME || kind == OTHER)
		OK(smq_init(w, &next, sizeof(next)));
	else
		OK(smq_clear(w, kind == CLEAR_ONE ? 0 : -1));
	size_t len;
	uint8_t *s0 = test_snapshot(spec, &len);
	/* a sleep lasts at most a second (libsmq(3)); 20 s only stops a
	 * hang: told is said, not judged */
	while (AL(&sl->result) == 1 && now_ms() < t0 + 20000)
		/* its call's end: the sleeper's word, no event */
		sleep_ms(1);
	uint64_t told = now_ms() - t0;
	int result = AL(&sl->result);
	/* its way out ends with its process, which does nothing after the
	 * call: once it has ended, what it wrote is all it will write */
	if (result != 1) {
		test_wait_ok(pid, "the sleeper, its call returned");
	} else {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (result == 1)
		FAIL("%s: the call has not returned %llu ms after the re-init",
		     what, (unsigned long long)told);
	if (result != -ESTALE)
		FAIL("%s: returned %d (%s), not -ESTALE", what, result,
		     smq_strerror(result));
	same_since(s0, len, spec, &w->lay, what);
	struct smq_fault f;
	int err = smq_validate(w, &f, sizeof(f));
	if (err)
		FAIL("%s: smq_validate: %s at %s", what, smq_strerror(err),
		     f.field);
	printf("%-58s: -ESTALE after %llu ms, nothing written\n", what,
	       (unsigned long long)told);
	fflush(stdout);
	free(s0);
	OK(smq_close(w));
	munmap(sl, sizeof(*sl));
}

/* Many re-inits in a row, each while freshly started boards stream, each
 * checked the moment it returns; the boards are then killed (a stale board
 * that went on writing would show in the next check or in the rounds
 * above).  A race that one re-init rarely shows, many do: up to most of
 * them or for secs, whichever ends first, and at least floor (a busy
 * machine makes fewer, never none: testlib's test_going()). */
static void in_a_row(bool announce, int most, double secs, int floor)
{
	static const char *spec;
	static const uint16_t recv_a[3] = { 0, 0, 0 };
	const struct smq_geometry a = { NB, 3, 8, PAYLOAD, recv_a };
	struct smq_window *w;
	struct ctl *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct test_budget budget;
	char what[160];
	int count;

	CHECK(c != MAP_FAILED);
	if (!spec)
		spec = test_window();
	unlink(test_path(spec));
	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE, &w));
	OK(smq_init(w, &a, sizeof(a)));
	test_budget(&budget, secs, (uint64_t)floor, (uint64_t)most);
	for (count = 0; test_going(&budget, (uint64_t)count); count++) {
		int i = count;
		enum kind kind = i % 3 == 0 ? SAME : i % 3 == 1 ? CLEAR_ALL
								: CLEAR_ONE;
		struct runner rn = { .threads = false };
		memset(c, 0, sizeof(*c));
		c->spec = spec;
		c->queues = a.queues;
		c->entry_size = a.entry_size;
		c->announce = announce;
		c->only = kind == CLEAR_ONE ? 1 : -1;
		start(&rn, c);
		uint64_t until = now_ms() + 10000;
		for (unsigned b = 0; b < NB; b++)
			while ((!AL(&c->ch[b].ready) || AL(&c->ch[b].ok) < 2) &&
			       !AL(&c->ch[b].bad) && now_ms() < until)
				sched_yield();
		for (unsigned b = 0; b < NB; b++)
			if (AL(&c->ch[b].bad) || AL(&c->ch[b].ok) < 2)
				FAIL("in a row: board %u did not get going (%s: %s)",
				     b, where_name[AL(&c->ch[b].bad_where)],
				     smq_strerror(AL(&c->ch[b].bad)));
		snprintf(what, sizeof(what), "%s, %d in a row (%s)",
			 kind_name[kind], i + 1,
			 announce ? "announced" : "not announced");
		uint64_t gen = ((const struct smq_sb *)at(w, 0))->generation;
		if (kind == SAME)
			OK(smq_init(w, &a, sizeof(a)));
		else
			OK(smq_clear(w, kind == CLEAR_ONE ? 1 : -1));
		size_t len;
		uint8_t *snap = test_snapshot(spec, &len);
		if (kind == SAME)
			check_fresh(snap, len, &a, what);
		else if (kind == CLEAR_ALL)
			check_cleared(snap, &w->lay, what);
		else
			check_cleared_one(snap, &w->lay, 1, gen, what);
		free(snap);
		for (unsigned b = 0; b < NB; b++) {
			int status;
			kill(rn.pid[b], SIGKILL);
			CHECK(waitpid(rn.pid[b], &status, 0) == rn.pid[b]);
			if (AL(&c->ch[b].bad))
				FAIL("%s: board %u: %s returned %d (%s), not "
				     "-ESTALE", what, b,
				     where_name[AL(&c->ch[b].bad_where)],
				     AL(&c->ch[b].bad),
				     smq_strerror(AL(&c->ch[b].bad)));
		}
	}
	printf("%d re-inits in a row under load (%s): nothing written into the "
	       "new layouts\n", count, announce ? "announced" : "not announced");
	fflush(stdout);
	OK(smq_close(w));
	munmap(c, sizeof(*c));
	test_work(announce ? "re-inits in a row, announced"
			   : "re-inits in a row, not announced",
		  (uint64_t)count, (uint64_t)floor);
}

/* Each part in a process of its own, so that one failing part does not
 * hide the others. */
static int run_part(const char *name, void (*fn)(int), int arg)
{
	pid_t pid = test_fork_raw();
	if (pid == 0) {
		fn(arg);
		exit(0);
	}
	int status;
	test_waiting("the part \"%s\" (pid %d)", name, (int)pid);
	if (waitpid(pid, &status, 0) != pid)
		FAIL("waitpid");
	test_waiting(NULL);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	printf("FAILED: %s\n", name);
	fflush(stdout);
	return 1;
}

static void part_rounds(int x) { rounds(x & 1, x & 2); }
/* Up to 50 (announced) and 150 re-inits in a row: on two idle cores 30 a
 * second, beside two CPU hogs 14, under ThreadSanitizer 8; at least each
 * kind once and three times.  SMQ_REINIT_ROW=N: exactly N / 3 and N (make
 * reliability). */
static void part_row(int x)
{
	const char *env = getenv("SMQ_REINIT_ROW");
	int n = env ? atoi(env) : 0;

	if (env && n < 3)
		FAIL("SMQ_REINIT_ROW=%s: at least 3", env);
	if (x & 2)
		in_a_row(true, n ? n / 3 : 50, n ? 1e9 : 1.5, n ? n / 3 : 3);
	else
		in_a_row(false, n ? n : 150, n ? 1e9 : 4.0, n ? n : 9);
}
static void part_asleep(int x) { asleep_across(x & 4 ? SMQ_RECEIVER : SMQ_SENDER,
					       (enum kind)(x & 3)); }

int main(int argc, char **argv)
{
	const char *env = getenv("SMQ_REINIT_ROUNDS");
	int n = env ? atoi(env) : 1, failed = 0, parts = 0;
	/* t_reinit [processes|threads|asleep] [announced|unannounced]: only
	 * those parts */
	bool only_p = false, only_t = false, only_s = false;
	bool only_a = false, only_u = false;

	for (int i = 1; i < argc; i++) {
		only_p |= !strcmp(argv[i], "processes");
		only_t |= !strcmp(argv[i], "threads");
		only_s |= !strcmp(argv[i], "asleep");
		only_a |= !strcmp(argv[i], "announced");
		only_u |= !strcmp(argv[i], "unannounced");
	}
	bool all = !only_p && !only_t && !only_s;
	bool p = all || only_p, t = all || only_t, sl = all || only_s;
	bool a = only_a || !only_u, u = only_u || !only_a;
	for (int i = 0; i < n; i++) {
		struct { bool on; const char *name; void (*fn)(int); int arg; }
		part[] = {
		{ p && a, "rounds, processes, announced", part_rounds, 2 },
		{ p && u, "rounds, processes, not announced", part_rounds, 0 },
		{ t && a, "rounds, threads, announced", part_rounds, 3 },
		{ t && u, "rounds, threads, not announced", part_rounds, 1 },
		{ p && a, "re-inits in a row, announced", part_row, 2 },
		{ p && u, "re-inits in a row, not announced", part_row, 0 },
		{ sl, "a sender asleep across init", part_asleep, SAME },
		{ sl, "a sender asleep across init, another geometry",
		  part_asleep, OTHER },
		{ sl, "a sender asleep across clear", part_asleep, CLEAR_ALL },
		{ sl, "a receiver asleep across init", part_asleep, 4 | SAME },
		{ sl, "a receiver asleep across init, another geometry",
		  part_asleep, 4 | OTHER },
		{ sl, "a receiver asleep across clear", part_asleep,
		  4 | CLEAR_ALL },
		{ sl, "a sender asleep across a clear of its queue",
		  part_asleep, CLEAR_ONE },
		{ sl, "a receiver asleep across a clear of its queue",
		  part_asleep, 4 | CLEAR_ONE },
		};
		for (size_t k = 0; k < sizeof(part) / sizeof(part[0]); k++)
			if (part[k].on) {
				parts++;
				failed += run_part(part[k].name, part[k].fn,
						   part[k].arg);
			}
	}
	printf("%d of %d parts failed\n", failed, parts);
	test_work("parts passed", (uint64_t)(parts - failed), (uint64_t)parts);
	return 0;
}
