/* Random bit flips in a live window.  Two sending processes (boards 1 and 0)
 * stream messages that carry a sequence number, their length and a CRC,
 * while this process receives them and, between receives, flips bits of the
 * window: payloads and headers of entries in the rings, the lane lines of
 * both sides (tops, bottoms, flow control, wake and ask lines), the queue's
 * rx line and doorbell, the notices, the superblock and tables.
 *
 * Without the feature checksum a flipped payload bit is delivered: that
 * is counted, and allowed only for an entry whose payload or header was
 * flipped.  Then the same on windows formatted with checksums, for at
 * least 50,000 messages and 50 flips: not one damaged message may be
 * delivered; the receiver refuses each (-SMQ_EPAYLOAD, naming its
 * sender) and goes on with the next.  A flipped top or bottom can make a sender write over entries
 * not yet read, or the receiver take an entry again: allowed only in a lane
 * whose control fields were flipped.  Everything else is the receiver's to
 * report: every receive returns either a message of at most the caller's
 * capacity and the entry size that verifies, or an error (-SMQ_ESIGNATURE,
 * -SMQ_ECORRUPT, -ESTALE, -ETIMEDOUT...), never writes outside the message
 * in the caller's buffer (guard bytes on both sides), and a receiver never
 * reports corruption in a round without flips.  Senders return errors, never
 * crash, and return within their timeout.
 *
 * Rounds of about 2 x 1000 messages on a fresh window, 0 to 5 flips each
 * (the rounds without flips are controls: every message arrives, in order,
 * without an error).  Flips land in the boards' journals too (head and
 * entries), and every sixth round flips nothing else: it must go as a
 * control does, the journal being off the message path; after each round
 * both journals are read back, each answer an entry of a kind smq(7)
 * names.  For SMQ_BITFLIP_MS milliseconds (default 2500) and at
 * least 20,000 messages and 20 flips (with checksums 50,000 and 50), for
 * two minutes more at most: a busy machine takes longer.  Then a
 * directed check: a lane lock flipped from free to 1 (a live process) must
 * not make smq_send ignore its timeout (SMQ_BITFLIP_SKIP_LOCK=1 skips it). */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "testint.h"
#include "testlib.h"

#define ESIZE 256
#define ENTRIES 16
#define PER_ROUND 1000
#define GUARD 64
#define NSEND 2
#define MAX_FLIPS 5
#define SEND_TIMEOUT_MS 100      /* in rounds with flips */
#define CONTROL_TIMEOUT_MS 5000  /* in rounds without: nothing may fail */
#define RECV_TIMEOUT_MS 20

struct msg_head {
	uint64_t seq;
	uint32_t len;
	uint32_t crc; /* over the head (crc 0) and the payload */
};

static uint32_t msg_crc(const uint8_t *m, size_t len)
{
	struct msg_head h;

	memcpy(&h, m, sizeof(h));
	h.crc = 0;
	uint32_t c = smq_crc32c(0, &h, sizeof(h));
	return smq_crc32c(c, m + sizeof(h), len - sizeof(h));
}

/* What the senders tell the parent, in shared anonymous memory. */
struct sender_state {
	uint64_t sent;
	int32_t err;   /* the error that stopped it, 0 if none */
	int32_t done;
	int32_t opened;  /* its window and queue open: what it does next is
			    the message path */
};
static struct sender_state *shared;

struct sender_arg {
	const char *spec;
	unsigned index;  /* into shared */
	unsigned board;
	uint64_t seed;
	int timeout_ms;
};

static int sender(void *p)
{
	struct sender_arg *a = p;
	struct sender_state *st = &shared[a->index];
	struct smq_window *w;
	struct smq_queue *q = NULL;
	uint8_t buf[ESIZE];
	uint64_t rng = a->seed;
	int err = smq_open(a->spec, a->board, 0, &w);

	if (!err)
		err = smq_queue_open(w, 0, SMQ_SENDER, 0, &q);
	if (!err)
		__atomic_store_n(&st->opened, 1, __ATOMIC_RELEASE);
	for (uint64_t i = 0; !err && i < PER_ROUND; i++) {
		size_t len = sizeof(struct msg_head) +
			     test_rand(&rng) % (ESIZE - sizeof(struct msg_head) + 1);
		struct msg_head h = { i, (uint32_t)len, 0 };
		memcpy(buf, &h, sizeof(h));
		for (size_t k = sizeof(h); k < len; k++)
			buf[k] = (uint8_t)(i * 31 + k * 7 + a->board);
		h.crc = msg_crc(buf, len);
		memcpy(buf, &h, sizeof(h));
		err = smq_send(q, buf, len, a->timeout_ms);
		if (!err)
			__atomic_store_n(&st->sent, i + 1, __ATOMIC_RELAXED);
	}
	if (q)
		smq_queue_close(q);
	if (w)
		smq_close(w);
	__atomic_store_n(&st->err, err, __ATOMIC_RELAXED);
	__atomic_store_n(&st->done, 1, __ATOMIC_RELEASE);
	return 0;
}

/* Both senders have opened the window and their queue (or ended). */
static bool senders_open(void)
{
	for (unsigned i = 0; i < NSEND; i++)
		if (!__atomic_load_n(&shared[i].opened, __ATOMIC_ACQUIRE) &&
		    !__atomic_load_n(&shared[i].done, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/* ---- flips ---- */

enum kind { K_PAYLOAD, K_HEADER, K_CONTROL, K_OTHER, K_JOURNAL, K_KINDS };

struct round {
	int flips;
	bool dirty[SMQ_MAX_BOARDS][ENTRIES]; /* payload or header flipped since
						the last delivery from it */
	bool control[SMQ_MAX_BOARDS];        /* a top, bottom or lock of the
						lane was flipped */
	bool lock[SMQ_MAX_BOARDS];           /* its lane lock was flipped */
	uint32_t lock_value[SMQ_MAX_BOARDS];
};

static struct {
	uint64_t rounds, controls, flips, kinds[K_KINDS];
	uint64_t received, reported, corrupt, signature, stale, other_err;
	uint64_t refused;  /* -SMQ_EPAYLOAD: failed its check */
	uint64_t timeouts, msgsize, payload_delivered, torn_delivered;
	uint64_t sequence_disturbed, stuck_rounds, oob;
	uint64_t sender_errors, senders_killed;
	uint64_t journal_rounds, journal_read;
} fig;

static uint64_t rng = 0xb17f11b5;

static unsigned pick(unsigned n)
{
	return (unsigned)(test_rand(&rng) % n);
}

static void flip(struct smq_window *w, struct round *r, bool journal)
{
	const struct smq_layout *l = &w->lay;
	unsigned s = pick(2);             /* the lane: its sending board */
	unsigned c = pick(100);
	/* half the time an entry near the receiver's bottom: likely one that
	 * is queued and not yet read */
	const uint64_t *bottoms = at(w, lay_bottoms(l, 0));
	unsigned slot = pick(2) ? pick(ENTRIES)
				: (unsigned)(LOAD(&bottoms[s]) + pick(4)) % ENTRIES;
	uint64_t base, len;
	enum kind k;

	if (journal) {          /* a journal: its head, or its entries */
		base = lay_journal(l, s);
		len = SMQ_LINE * (1 + l->journal);
		k = K_JOURNAL;
	} else if (c < 35) {    /* payload (and the slot's padding) */
		base = lay_ring(l, 0, s) + slot * l->stride + SMQ_ENTRY_HEADER;
		len = l->stride - SMQ_ENTRY_HEADER;
		k = K_PAYLOAD;
	} else if (c < 50) {    /* size, sender, flags, signature */
		base = lay_ring(l, 0, s) + slot * l->stride;
		len = SMQ_ENTRY_HEADER;
		k = K_HEADER;
	} else if (c < 58) {
		base = lay_lane_in(l, 0, s), len = SMQ_LINE, k = K_CONTROL;
	} else if (c < 66) {
		base = lay_bottoms(l, 0) + 8 * s, len = 8, k = K_CONTROL;
	} else if (c < 74) {
		base = lay_lane_out(l, s, 0), len = SMQ_LINE, k = K_CONTROL;
	} else if (c < 80) {
		base = lay_lane_fc(l, s, 0), len = SMQ_LINE, k = K_CONTROL;
	} else if (c < 83) {
		base = lay_lane_wake(l, s, 0), len = SMQ_LINE, k = K_OTHER;
	} else if (c < 85) {
		base = lay_lane_ask(l, 0, s), len = SMQ_LINE, k = K_OTHER;
	} else if (c < 90) {
		base = l->rx[0], len = SMQ_LINE, k = K_OTHER;
	} else if (c < 92) {
		base = lay_bell(l, 0), len = SMQ_LINE, k = K_OTHER;
	} else if (c < 94) {
		base = lay_notice(l, s), len = SMQ_LINE, k = K_OTHER;
	} else if (c < 96) {
		base = lay_journal(l, s);
		len = SMQ_LINE * (1 + l->journal);
		k = K_JOURNAL;
	} else {                /* superblock, board table, queue table */
		base = 0, len = l->queue_table + 8, k = K_OTHER;
	}
	uint64_t off = base + pick((unsigned)len);
	uint8_t bit = (uint8_t)(1u << pick(8));
	CHECK(off < w->map.size);
	__atomic_fetch_xor((uint8_t *)at(w, off), bit, __ATOMIC_SEQ_CST);

	r->flips++;
	fig.flips++;
	fig.kinds[k]++;
	if (k == K_PAYLOAD || k == K_HEADER)
		r->dirty[s][slot] = true;
	if (k == K_CONTROL)
		r->control[s] = true;
	uint64_t lock = lay_lane_out(l, s, 0) + offsetof(struct smq_lane_out, lock);
	if (off >= lock && off < lock + 4) {
		r->lock[s] = true;
		r->lock_value[s] = LOAD((uint32_t *)at(w, lock));
	}
}

/* ---- one round ---- */

static bool untouched(const uint8_t *buf, size_t total, size_t from, size_t to)
{
	for (size_t i = 0; i < total; i++)
		if ((i < from || i >= to) && buf[i] != 0xcb)
			return false;
	return true;
}

/* Both journals read from their oldest entry to their head, as events
 * --since all reads them: whatever the flips did, every answer is an
 * entry of the board's, of a kind the page names, or nothing now. */
static void read_journals(struct smq_window *w)
{
	for (unsigned b = 0; b < 2; b++) {
		struct smq_journal_cursor c = { .board = b };
		struct smq_journal_entry e;
		int got = 0;
		for (unsigned i = 0; i < 4 * w->lay.journal + 8 &&
		     (got = smq_journal_next(w, &c, &e, sizeof(e))) == 1; i++) {
			CHECK(e.board == b);
			CHECK((e.kind >= SMQ_JOURNAL_FORMAT &&
			       e.kind <= SMQ_JOURNAL_UNANSWERED) ||
			      (e.kind >= SMQ_JOURNAL_LOST &&
			       e.kind <= SMQ_JOURNAL_RESTARTED));
			fig.journal_read++;
		}
		CHECK(got <= 1 && (got >= 0 || got == -SMQ_ECORRUPT ||
				   got == -ESTALE));
	}
}

/* A round of nflips flips; journal: every flip in a journal, and the
 * round must go as one without flips (the journal is never on the
 * message path). */
static void round_run(const char *spec, int nflips, bool journal)
{
	struct round r;
	struct smq_window *w;
	struct smq_queue *rx;
	struct sender_arg args[NSEND];
	pid_t pids[NSEND];
	int when[MAX_FLIPS];
	uint64_t expect[SMQ_MAX_BOARDS] = { 0 };
	size_t total = GUARD + ESIZE + GUARD;
	uint8_t *buf = malloc(total);
	const char *plain = journal ? "whose flips were all in journals"
				    : "without flips";

	CHECK(buf);
	memset(&r, 0, sizeof(r));
	unlink(test_path(spec));
	w = test_init(spec, 2, 1, ENTRIES, ESIZE);
	OK(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &rx));
	memset(shared, 0, NSEND * sizeof(*shared));
	for (unsigned i = 0; i < NSEND; i++) {
		args[i] = (struct sender_arg){ spec, i, i == 0 ? 1 : 0,
					       test_rand(&rng),
					       nflips && !journal
						       ? SEND_TIMEOUT_MS
						       : CONTROL_TIMEOUT_MS };
		pids[i] = test_fork(sender, &args[i]);
	}
	for (int i = 0; i < MAX_FLIPS; i++)
		when[i] = i < nflips ? (int)pick(PER_ROUND) : -1;
	/* a round of journal flips tests the message path: an open validates
	 * the journal's head (smq-format(7)), and a head flipped before a
	 * sender opened refuses it, as it must; so its flips wait for both
	 * senders to be open */
	if (journal)
		WAIT_UNTIL(senders_open(), 30, "both senders open");

	uint64_t start = smq_now_ns(), got = 0;
	int errors_in_row = 0, timeouts_in_row = 0;
	bool small = false;
	for (int it = 0;; it++) {
		for (int i = 0; i < MAX_FLIPS; i++)
			if (when[i] == it)
				flip(w, &r, journal);
		if (smq_now_ns() - start > (nflips && !journal ? 1500000000ull
							   : 20000000000ull))
			break;

		size_t cap = ESIZE, len = (size_t)-1;
		unsigned from = 0xdeadbeef;
		if (!small && pick(8) == 0)
			cap = pick(ESIZE + 1);
		small = false;
		const struct smq_entry *heads[NSEND];
		memcpy(heads, rx->heads, sizeof(heads));
		memset(buf, 0xcb, total);
		int err = smq_receive(rx, buf + GUARD, cap, &len, &from,
				      RECV_TIMEOUT_MS);
		if (err == 0) {
			if (len > cap || len > ESIZE || from >= NSEND ||
			    !untouched(buf, total, GUARD, GUARD + len)) {
				fig.oob++;
				FAIL("receive out of bounds: %zu bytes from lane "
				     "%u into a buffer of %zu (entry size %u), "
				     "guards %s", len, from, cap, ESIZE,
				     untouched(buf, total, GUARD, GUARD + len)
				     ? "intact" : "damaged");
			}
			fig.received++;
			got++;
			errors_in_row = timeouts_in_row = 0;
			uint64_t ring = lay_ring(&w->lay, 0, from);
			uint64_t at_off = (uint64_t)((const uint8_t *)heads[from] -
						     (const uint8_t *)w->map.base);
			CHECK(at_off >= ring && (at_off - ring) % w->lay.stride == 0);
			unsigned slot = (unsigned)((at_off - ring) / w->lay.stride);
			CHECK(slot < ENTRIES);
			const uint8_t *m = buf + GUARD;
			struct msg_head h = { 0, 0, 0 };
			if (len >= sizeof(h))
				memcpy(&h, m, sizeof(h));
			bool whole = len >= sizeof(h) && h.len == len &&
				     h.crc == msg_crc(m, len);
			if (!whole) {
				if (r.dirty[from][slot])
					fig.payload_delivered++;
				else if (r.control[from])
					fig.torn_delivered++;
				else
					FAIL("lane %u delivered a damaged message "
					     "(%zu bytes, seq %llu) from slot %u, "
					     "which no flip touched", from, len,
					     (unsigned long long)h.seq, slot);
				expect[from]++;
			} else {
				if (h.seq != expect[from]) {
					if (!r.control[from])
						FAIL("lane %u: seq %llu, expected "
						     "%llu, and no control field "
						     "of the lane was flipped",
						     from, (unsigned long long)h.seq,
						     (unsigned long long)expect[from]);
					fig.sequence_disturbed++;
				}
				expect[from] = h.seq + 1;
			}
			r.dirty[from][slot] = false;
			continue;
		}

		/* a message that failed its check may have been copied as
		 * far as its size, never further */
		size_t wrote = err == -SMQ_EPAYLOAD && len <= cap ? len : 0;
		if (!untouched(buf, total, GUARD, GUARD + wrote)) {
			fig.oob++;
			FAIL("receive failed (%s) but wrote into the buffer",
			     smq_strerror(err));
		}
		if (err == -SMQ_EPAYLOAD) {
			if (!r.flips || journal)
				FAIL("receiver refused a message in a round "
				     "%s", plain);
			CHECK(from < NSEND);
			fig.refused++;
			uint64_t ring = lay_ring(&w->lay, 0, from);
			uint64_t at_off = (uint64_t)((const uint8_t *)
				heads[from] - (const uint8_t *)w->map.base);
			unsigned slot = (unsigned)((at_off - ring) /
						   w->lay.stride);
			if (!r.dirty[from][slot] && !r.control[from])
				FAIL("lane %u: a message refused from slot %u, "
				     "which no flip touched", from, slot);
			r.dirty[from][slot] = false;
			expect[from]++;  /* lost, said so: the next comes */
			errors_in_row = timeouts_in_row = 0;
			continue;
		}
		bool senders_done = true;
		for (unsigned i = 0; i < NSEND; i++)
			if (!__atomic_load_n(&shared[i].done, __ATOMIC_ACQUIRE))
				senders_done = false;
		if (err == -EMSGSIZE) {
			CHECK(len > cap && len <= ESIZE);
			fig.msgsize++;
			small = true;  /* the next receive takes it whole */
			continue;
		}
		if (err == -ETIMEDOUT || err == -EAGAIN) {
			fig.timeouts++;
			if (senders_done || (nflips && !journal && ++timeouts_in_row >= 10))
				break;
			continue;
		}
		if (err == -SMQ_ECORRUPT || err == -SMQ_ESIGNATURE ||
		    err == -ESTALE) {
			if (!r.flips || journal)
				FAIL("receiver reported %s in a round %s",
				     smq_strerror(err), plain);
			fig.reported++;
			fig.corrupt += err == -SMQ_ECORRUPT;
			fig.signature += err == -SMQ_ESIGNATURE;
			fig.stale += err == -ESTALE;
			/* a stale handle stays stale; corruption that no
			 * sender repairs stays too */
			if (err == -ESTALE || ++errors_in_row >= 50) {
				fig.stuck_rounds++;
				break;
			}
			continue;
		}
		FAIL("receive returned %d (%s)", err, smq_strerror(err));
	}

	/* Senders stop at their first error, within their timeout.  One
	 * stuck on a flipped lane lock is killed at the round's bound (the
	 * directed check below covers it); any other is given 20 s more, a
	 * bound that only stops a hang: no busy machine decides it. */
	uint64_t until = smq_now_ns() + (nflips && !journal ? 1000000000ull
						: 2 * CONTROL_TIMEOUT_MS * 1000000ull);
	for (unsigned i = 0; i < NSEND; i++) {
		unsigned lane = args[i].board;
		uint64_t hang = 0;
		int status;
		pid_t p;
		while ((p = waitpid(pids[i], &status, WNOHANG)) == 0) {
			uint64_t now = smq_now_ns();
			if (now >= until && r.lock[lane])
				break;
			if (now >= until && !hang)
				hang = now + 20000000000ull;
			if (hang && now >= hang)
				break;
			/* its end or the lock in the window: no one event */
			struct timespec ts = { 0, 2000000 };
			nanosleep(&ts, NULL);
		}
		if (p == 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], &status, 0);
			fig.senders_killed++;
			if (!r.lock[lane])
				FAIL("sender of board %u did not return, its "
				     "lane lock not flipped (sent %llu)", lane,
				     (unsigned long long)shared[i].sent);
			/* a flipped lane lock that holds the id of a live
			 * thread: the directed check below covers it */
			continue;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			FAIL("sender of board %u died (status 0x%x)",
			     args[i].board, status);
		if (shared[i].err) {
			fig.sender_errors++;
			int e = shared[i].err;
			if (!r.flips || journal)
				FAIL("sender of board %u failed in a round "
				     "%s, %s: %s", args[i].board, plain,
				     shared[i].opened ? "sending" : "opening",
				     smq_strerror(e));
		}
	}
	if (!r.flips || journal) {
		if (journal)
			fig.journal_rounds++;
		else
			fig.controls++;
		if (got != (uint64_t)NSEND * PER_ROUND)
			FAIL("a round %s received %llu of %u messages", plain,
			     (unsigned long long)got, NSEND * PER_ROUND);
		for (unsigned s = 0; s < NSEND; s++)
			CHECK(expect[s] == PER_ROUND);
	}
	fig.rounds++;
	read_journals(w);
	OK(smq_queue_close(rx));
	OK(smq_close(w));
	free(buf);
}

/* ---- a flipped lane lock ---- */

struct lock_arg {
	const char *spec;
};

static int lock_child(void *p)
{
	struct lock_arg *a = p;
	struct smq_window *w;
	struct smq_queue *q;

	OK(smq_open(a->spec, 1, 0, &w));
	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &q));
	/* bit 32 of the free lock: now it names pid 1, init, which is alive,
	 * but not the process the rest of the tag says: a flipped lock is a
	 * holder that is gone, and is taken over */
	uint64_t *lock = &((struct smq_lane_out *)
			   at(w, lay_lane_out(&w->lay, 1, 0)))->lock;
	CHECK(LOAD(lock) == 0);
	__atomic_fetch_xor(lock, 1ull << 32, __ATOMIC_SEQ_CST);
	alarm(2);  /* any answer will do, as long as there is one */
	smq_send(q, "x", 1, 0);
	smq_send(q, "x", 1, 50);
	alarm(0);
	smq_queue_close(q);
	smq_close(w);
	return 0;
}

static void lock_check(const char *spec)
{
	struct lock_arg a = { spec };
	int status;

	unlink(test_path(spec));
	struct smq_window *w = test_init(spec, 2, 1, ENTRIES, ESIZE);
	pid_t pid = test_fork(lock_child, &a);
	CHECK(waitpid(pid, &status, 0) == pid);
	OK(smq_close(w));
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		FAIL("a lane lock flipped from 0 to 1 (the id of a live process) "
		     "makes smq_send spin past its timeout (0, then 50 ms): "
		     "lane_lock waits for a live holder without a deadline");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		FAIL("flipped lane lock: sender failed (status 0x%x)", status);
}

/* Rounds until ms have passed and at least min_msgs messages were
 * received and min_flips bits flipped. */
static void campaign(const char *spec, uint64_t ms, uint64_t min_msgs,
		     uint64_t min_flips)
{
	uint64_t end = smq_now_ns() + ms * 1000000ull;

	memset(&fig, 0, sizeof(fig));
	/* the first round is a control */
	for (int i = 0; i == 0 || smq_now_ns() < end || fig.received < min_msgs ||
			fig.flips < min_flips; i++) {
		/* every sixth round flips journals only */
		bool journal = i % 6 == 5;
		round_run(spec, i == 0 ? 0 : journal ? 1 + (int)pick(MAX_FLIPS)
						     : (int)pick(MAX_FLIPS + 1),
			  journal);
		if (smq_now_ns() > end + 120000000000ull)
			FAIL("after two minutes more, %llu messages and %llu "
			     "flips, short of %llu and %llu",
			     (unsigned long long)fig.received,
			     (unsigned long long)fig.flips,
			     (unsigned long long)min_msgs,
			     (unsigned long long)min_flips);
	}
	CHECK(fig.controls > 0 && fig.flips > 0 && fig.journal_rounds > 0);
}

static void report(const char *name)
{
	printf("%s: %llu rounds (%llu without flips), %llu flips "
	       "(payload %llu, entry header %llu, lane control %llu, "
	       "other %llu, journal %llu)\n", name, (unsigned long long)fig.rounds,
	       (unsigned long long)fig.controls, (unsigned long long)fig.flips,
	       (unsigned long long)fig.kinds[K_PAYLOAD],
	       (unsigned long long)fig.kinds[K_HEADER],
	       (unsigned long long)fig.kinds[K_CONTROL],
	       (unsigned long long)fig.kinds[K_OTHER],
	       (unsigned long long)fig.kinds[K_JOURNAL]);
	printf("%s: %llu rounds flipped journals only, each delivered whole; "
	       "%llu journal entries read back\n", name,
	       (unsigned long long)fig.journal_rounds,
	       (unsigned long long)fig.journal_read);
	printf("%s: %llu messages received; corruption reported %llu "
	       "times (ECORRUPT %llu, ESIGNATURE %llu, ESTALE %llu), %llu "
	       "rounds ended on it; %llu messages refused (EPAYLOAD); %llu "
	       "timeouts, %llu EMSGSIZE\n", name,
	       (unsigned long long)fig.received,
	       (unsigned long long)fig.reported,
	       (unsigned long long)fig.corrupt,
	       (unsigned long long)fig.signature,
	       (unsigned long long)fig.stale,
	       (unsigned long long)fig.stuck_rounds,
	       (unsigned long long)fig.refused,
	       (unsigned long long)fig.timeouts,
	       (unsigned long long)fig.msgsize);
	printf("%s: payload corrupted by the flip, delivered %llu; "
	       "torn after a flipped top or bottom %llu; sequence disturbed "
	       "by a flipped top or bottom %llu; sender errors %llu, senders "
	       "stuck on a flipped lane lock %llu; out-of-bounds %llu\n", name,
	       (unsigned long long)fig.payload_delivered,
	       (unsigned long long)fig.torn_delivered,
	       (unsigned long long)fig.sequence_disturbed,
	       (unsigned long long)fig.sender_errors,
	       (unsigned long long)fig.senders_killed,
	       (unsigned long long)fig.oob);
}

int main(void)
{
	const char *spec = test_window();
	const char *env = getenv("SMQ_BITFLIP_MS");
	uint64_t ms = env && atoi(env) > 0 ? (uint64_t)atoi(env) : 2500;

	shared = mmap(NULL, NSEND * sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(shared != MAP_FAILED);
	setenv("SMQ_TEST_CHECKSUM", "0", 1);
	campaign(spec, ms, 20000, 20);
	report("bitflip");
	test_work("messages received", fig.received, 20000);
	test_work("bits flipped", fig.flips, 20);
	test_work("rounds that flipped journals only", fig.journal_rounds, 3);
	CHECK(fig.refused == 0);

	setenv("SMQ_TEST_CHECKSUM", "1", 1);
	campaign(spec, ms, 50000, 50);
	report("bitflip with checksums");
	test_work("messages received with checksums", fig.received, 50000);
	test_work("bits flipped with checksums", fig.flips, 50);
	if (fig.payload_delivered || fig.torn_delivered)
		FAIL("with checksums, %llu messages damaged by a flip and %llu "
		     "torn were delivered as good",
		     (unsigned long long)fig.payload_delivered,
		     (unsigned long long)fig.torn_delivered);
	if (!fig.refused)
		FAIL("with checksums, no message was refused in %llu flips",
		     (unsigned long long)fig.flips);

	env = getenv("SMQ_BITFLIP_SKIP_LOCK");
	if (env && atoi(env)) {
		printf("bitflip: the flipped lane lock check skipped "
		       "(SMQ_BITFLIP_SKIP_LOCK)\n");
		return 0;
	}
	lock_check(spec);
	printf("bitflip: a flipped lane lock: smq_send returns within its "
	       "timeout\n");
	return 0;
}
