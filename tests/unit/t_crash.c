/* The crash campaign.  A sending process killed with SIGKILL at random
 * points while it streams, and a new one that carries on on the same queue;
 * then the same with the receiving process killed and restarted.  Every
 * message whose send returned success must arrive exactly once, in order,
 * never torn; a restarted receiver resumes after the last message it fully
 * took.
 *
 *   t_crash            the short form (make check): 20 kills of each side,
 *                      or fewer if 2 s end a campaign first (a busy
 *                      machine), but every kill mode aimed at once
 *                      (testlib's test_going())
 *   t_crash --full [N] make reliability: N kills of each (default 200)
 *
 * SMQ_CRASH_SEED=S repeats a run's random choices (the seed is printed).
 *
 * Accounting.  Sender campaign: incarnation k of the sender (board 1) opens
 * the window and streams logical messages n = acked, acked + 1, ...; after
 * each smq_send() that returns 0 it stores acked = n + 1 in a shared page.
 * The parent kills it and starts k + 1, which continues at acked: the one
 * message k may have published without seeing its send return is sent again
 * under the new incarnation.  The receiver (board 0, another process)
 * checks that in arrival order n never goes back, never skips, and repeats
 * only that one message: a repeat of n is legitimate when it comes from a
 * later incarnation and n was not acknowledged when that incarnation
 * started; any other repeat is "doubled".  At the end every acknowledged n
 * has arrived.
 *
 * Receiver campaign: the receiver receives straight into log[count] of a
 * shared log and then increments count, so a kill between the two leaves
 * the message in the log but not counted.  A restarted receiver counts it
 * when the library took it: when the lane's bottom (where the library
 * resumes) is one past the last counted message.  The content alone can
 * not tell: smq_receive copies the payload before it moves the bottom, so a
 * receiver killed between the two leaves a whole copy of a message that is
 * still queued and will be received again.
 *
 * Loan campaigns: the sender campaign again, each message sent by a loan
 * (smq_loan, the payload written in two pieces, smq_loan_submit): on a
 * window without checksums through the loan's pointer, on one with them
 * by smq_loan_write, which sums as it copies.  It is also killed holding
 * a loan, half its payload written, and anywhere between its reserve and
 * its submit: nothing is lost, and nothing is published half written (the
 * receiver checks each message whole; with checksums smq itself refuses a
 * torn entry, which would be a receive error).
 *
 * At-least-once campaign: the receiver peeks (smq_peek), records the
 * message in the log and counts it, and only then commits (smq_commit); it
 * is also killed between the peek and the commit, and between counting and
 * committing.  No arithmetic on the lane is needed to lose nothing: a
 * restarted receiver is given again the message whose commit did not
 * happen, and drops it by its sequence number if it counted it already
 * ("delivered again").  Nothing may be lost, torn or out of order.
 */
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include "testint.h"
#include "testlib.h"

#define ENTRIES 8          /* a small ring: the sender often finds it full */
#define ESIZE 1024
#define MAGIC 0x534d5143u  /* "SMQC" */
#define MAXK 8192          /* sender incarnations */
#define LOGN 1024          /* receiver log slots (a ring: see above) */
#define FINAL_MESSAGES 2000
/* The short form's time for a campaign: 20 kills take 0.4 s on two idle
 * cores, 0.6 s beside two CPU hogs */
#define CAMPAIGN_SECS 2.0

/* A campaign's budget: up to kills, for CAMPAIGN_SECS and at least
 * floor (testlib's test_going()); the full form, exactly kills. */
static struct test_budget campaign_budget(unsigned kills, unsigned floor,
					  bool full)
{
	struct test_budget b;

	if (full)
		test_budget_count(&b, kills);
	else
		test_budget(&b, CAMPAIGN_SECS, floor, kills);
	return b;
}

/* Every message: this header, then a payload of random bytes and size.
 * crc covers everything after itself. */
struct msg {
	uint32_t magic;
	uint32_t crc;
	uint32_t k;        /* incarnation of the sender */
	uint32_t len;      /* the whole message, header included */
	uint64_t n;        /* logical sequence */
};

static uint32_t msg_crc(const uint8_t *m, size_t len)
{
	return smq_crc32c(0, m + 8, len - 8);
}

static size_t make_msg(uint8_t *buf, uint32_t k, uint64_t n, uint64_t *rng)
{
	struct msg *h = (void *)buf;
	size_t len = sizeof(*h) + test_rand(rng) % (ESIZE - sizeof(*h) + 1);
	uint64_t r = test_rand(rng);

	for (size_t i = sizeof(*h); i < len; i++) {
		buf[i] = (uint8_t)r;
		r = r >> 8 | r << 56;
		if ((i & 7) == 7)
			r += 0x9e3779b97f4a7c15ull;
	}
	h->magic = MAGIC;
	h->k = k;
	h->len = (uint32_t)len;
	h->n = n;
	h->crc = msg_crc(buf, len);
	return len;
}

/* Whole and not torn: the size the queue gave matches the header's. */
static bool msg_ok(const uint8_t *buf, size_t len)
{
	const struct msg *h = (const void *)buf;

	return len >= sizeof(*h) && len <= ESIZE && h->magic == MAGIC &&
	       h->len == len && h->crc == msg_crc(buf, len);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A nap: a kill aimed at a random moment (on purpose), or between
 * looks at a word a child sets in shared memory, which no event
 * announces (WAIT_FOR, the pauses).  Each use says which. */
static void nap_us(unsigned us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };
	nanosleep(&ts, NULL);
}

static void spin_us(unsigned us)
{
	uint64_t until = now_ns() + us * 1000ull;
	while (now_ns() < until)
		;
}

#define AL(p) atomic_load_explicit((p), memory_order_acquire)
#define AS(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define AADD(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)

/* The kill modes in blocks, each block every mode once in random order:
 * every kill point is aimed at, however few the kills. */
static unsigned next_mode(unsigned i, unsigned modes, unsigned *order,
			  uint64_t *rng)
{
	if (i % modes == 0) {
		for (unsigned m = 0; m < modes; m++)
			order[m] = m;
		for (unsigned m = modes - 1; m > 0; m--) {
			unsigned j = (unsigned)(test_rand(rng) % (m + 1)), t = order[m];
			order[m] = order[j];
			order[j] = t;
		}
	}
	return order[i % modes];
}

/* A long stretch of streaming between two kills. */
#define LONG_US(rng) (20000 + (unsigned)(test_rand(rng) % 280000))

static void *shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		FAIL("mmap %zu", size);
	return p;
}

/* Kills and reaps; returns the exit status if the child had ended by
 * itself first (only on an error), else 0. */
static int kill_wait(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	if (waitpid(pid, &status, 0) != pid)
		FAIL("waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 0;
}

/* Wait for cond, at most ms; the kill goes ahead either way (a mode whose
 * condition never came about is seen in the post-mortem figures); cond
 * is a word of the children's or a state of the window, which no event
 * announces. */
#define WAIT_FOR(cond, ms) do { uint64_t u_ = now_ns() + (ms) * 1000000ull; \
		while (!(cond) && now_ns() < u_) nap_us(20); } while (0)

static struct smq_lane_out *lane_out(struct smq_window *w, unsigned s)
{
	return at(w, lay_lane_out(&w->lay, s, 0));
}

static bool sender_waiting(struct smq_window *w)
{
	struct smq_lane_info li;
	return smq_lane_info(w, 0, 1, &li, sizeof(li)) == 0 && li.sender_waiting;
}

/* Whether lane s of queue 0 has an entry signed at its top: a sender died
 * between its signature and its top. */
static bool half_published(struct smq_window *w, unsigned s)
{
	const struct smq_layout *l = &w->lay;
	uint64_t top = LOAD(&lane_out(w, s)->top);
	const struct smq_entry *e = at(w, lay_ring(l, 0, s) +
				       (top & (l->entries - 1)) * l->stride);
	uint64_t epoch = LOAD(&((struct smq_rx *)at(w, l->rx[0]))->epoch);
	return LOAD(&e->signature) == smq_signature(epoch, 0, s, top);
}

/* ======================= the sender campaign ======================= */

enum { S_START, S_OPEN, S_SEND, S_BETWEEN, S_LOANED, S_PHASES };
/* SM_IN_LOAN, last, only in the loan campaigns */
enum { SM_IMMEDIATE, SM_AFTER_OPEN, SM_DELAY, SM_FULL, SM_IN_SEND,
       SM_BETWEEN, SM_SHORT, SM_LONG, SM_IN_LOAN, SM_MODES };
/* How the sender sends: smq_send, or a loan written through its pointer,
 * or a loan written by smq_loan_write (a window with checksums) */
enum { BY_SEND, BY_LOAN_POINTER, BY_LOAN_WRITE };

struct scamp {
	const char *spec;
	uint64_t seed;
	int by;                     /* BY_* */
	/* written by the sender incarnation */
	_Atomic uint64_t acked;     /* logical n below this: send returned 0 */
	_Atomic uint32_t phase;
	_Atomic uint32_t holding;
	_Atomic int sender_err;
	/* written by the parent */
	_Atomic uint32_t k;         /* incarnation being started */
	_Atomic uint32_t mode;
	_Atomic uint64_t hold_after; /* SM_BETWEEN: hold after this many sends */
	_Atomic uint32_t final;     /* this incarnation is not killed */
	_Atomic uint32_t pause;     /* the receiver holds off */
	_Atomic uint32_t stop;      /* the last incarnation has ended */
	_Atomic uint64_t total;     /* acknowledged in all, once stopped */
	_Atomic uint64_t acked_at_death[MAXK];
	/* the receiver's figures */
	_Atomic uint32_t rx_ready, rx_paused;
	_Atomic uint64_t checked, lost, doubled, torn, order, resent, errors;
	_Atomic int rx_err;
};

/* One message by a loan: reserved, its payload written in two pieces,
 * submitted; with hold, the sender stops for good after the first piece.
 * Now and then it works a little between the pieces, so that a kill lands
 * between the reserve and the submit. */
static int loan_send(struct scamp *c, struct smq_queue *q, const uint8_t *buf,
		     size_t len, bool hold, uint64_t *rng)
{
	size_t half = len / 2;
	void *p;
	int err;

	AS(&c->phase, S_SEND);
	if ((err = smq_loan(q, len, &p, 30000)))
		return err;
	AS(&c->phase, S_LOANED);
	for (int piece = 0; piece < 2; piece++) {
		size_t off = piece ? half : 0, n = piece ? len - half : half;
		if (c->by == BY_LOAN_WRITE)
			err = smq_loan_write(q, off, buf + off, n);
		else
			memcpy((uint8_t *)p + off, buf + off, n);
		if (err)
			return err;
		if (piece)
			break;
		if (hold) {
			AS(&c->holding, 1);
			for (;;)
				pause();        /* until the test kills it */
		}
		if (test_rand(rng) % 16 == 0)
			spin_us(1 + (unsigned)(test_rand(rng) % 20));
	}
	AS(&c->phase, S_SEND);
	return smq_loan_submit(q, len);
}

static int sender_life(void *arg)
{
	struct scamp *c = arg;
	uint32_t k = AL(&c->k);
	uint64_t rng = c->seed ^ (0x1000193ull * (k + 1));
	struct smq_window *w;
	struct smq_queue *q;
	uint8_t buf[ESIZE];
	int err;

	if ((err = smq_open(c->spec, 1, 0, &w)) ||
	    (err = smq_queue_open(w, 0, SMQ_SENDER, 0, &q))) {
		AS(&c->sender_err, err);
		return 2;
	}
	AS(&c->phase, S_OPEN);
	if (AL(&c->mode) == SM_AFTER_OPEN) {
		AS(&c->holding, 1);
		for (;;)
			pause();        /* until the test kills it */
	}
	uint64_t n = AL(&c->acked), sent = 0;
	uint64_t end = AL(&c->final) ? n + FINAL_MESSAGES : UINT64_MAX;
	bool hold = AL(&c->mode) == SM_BETWEEN;
	bool hold_loan = AL(&c->mode) == SM_IN_LOAN;
	uint64_t hold_after = AL(&c->hold_after);
	for (; n < end; n++) {
		size_t len = make_msg(buf, k, n, &rng);
		if (c->by == BY_SEND) {
			AS(&c->phase, S_SEND);
			err = smq_send(q, buf, len, 30000);
		} else {
			err = loan_send(c, q, buf, len,
					hold_loan && sent + 1 == hold_after, &rng);
		}
		if (err) {
			AS(&c->sender_err, err);
			return 3;
		}
		AS(&c->acked, n + 1);
		AS(&c->phase, S_BETWEEN);
		sent++;
		if (hold && sent == hold_after) {
			AS(&c->holding, 1);
			for (;;)
				pause();        /* until the test kills it */
		}
		/* now and then some work between two messages */
		if (test_rand(&rng) % 64 == 0)
			spin_us(2 + (unsigned)(test_rand(&rng) % 20));
	}
	smq_queue_close(q);
	smq_close(w);
	return 0;
}

/* Board 0: receives and checks until the parent says stop and every
 * acknowledged message has come. */
static int sender_campaign_rx(void *arg)
{
	struct scamp *c = arg;
	struct smq_window *w;
	struct smq_queue *q;
	uint8_t buf[ESIZE];
	uint64_t rng = c->seed ^ 0xabcdef;
	uint64_t last_n = UINT64_MAX; /* nothing yet */
	uint32_t last_k = 0;
	int idle = 0;

	OK(smq_open(c->spec, 0, 0, &w));
	OK(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &q));
	AS(&c->rx_ready, 1);
	for (;;) {
		if (AL(&c->pause)) {
			AS(&c->rx_paused, 1);
			/* until the test lets it go: a word, no event */
			nap_us(50);
			continue;
		}
		AS(&c->rx_paused, 0);
		size_t len;
		unsigned from;
		int err = smq_receive(q, buf, sizeof(buf), &len, &from, 50);
		if (err == -ETIMEDOUT) {
			if (AL(&c->stop)) {
				uint64_t total = AL(&c->total);
				uint64_t have = last_n == UINT64_MAX ? 0 : last_n + 1;
				if (have >= total)
					break;
				if (++idle == 100) { /* 5 s without a message */
					AADD(&c->lost, total - have);
					break;
				}
			}
			continue;
		}
		idle = 0;
		if (err) {
			AS(&c->rx_err, err);
			AADD(&c->errors, 1);
			if (AL(&c->errors) > 100)
				break;
			continue;
		}
		AADD(&c->checked, 1);
		const struct msg *h = (const void *)buf;
		if (from != 1 || !msg_ok(buf, len)) {
			AADD(&c->torn, 1);
			continue;
		}
		uint64_t n = h->n;
		if (last_n == UINT64_MAX) {
			if (n != 0)
				AADD(&c->lost, n);
		} else if (n == last_n) {
			/* a repeat: legitimate only from a later incarnation,
			 * of a message not acknowledged by the one before */
			if (h->k > last_k && n >= AL(&c->acked_at_death[last_k]))
				AADD(&c->resent, 1);
			else
				AADD(&c->doubled, 1);
		} else if (n < last_n) {
			AADD(&c->order, 1);
		} else if (n > last_n + 1) {
			AADD(&c->lost, n - last_n - 1);
		}
		if (last_n != UINT64_MAX && h->k < last_k)
			AADD(&c->order, 1);
		if (last_n == UINT64_MAX || n >= last_n) {
			last_n = n;
			last_k = h->k;
		}
		/* now and then a pause: the ring fills, the sender waits */
		uint64_t r = test_rand(&rng);
		if (r % 512 == 0)
			/* (a pace, on purpose, not a state) */
			nap_us(200 + (unsigned)(r >> 32) % 1500);
	}
	size_t len;
	EXPECT(smq_receive(q, buf, sizeof(buf), &len, NULL, 0), -EAGAIN);
	OK(smq_queue_close(q));
	OK(smq_close(w));
	return 0;
}

static const char *const s_phase_name[] = {
	"opening", "right after open", "inside send", "between sends",
	"holding a loan"
};
static const char *const by_name[] = {
	"sender", "loan sender (through the pointer)",
	"loan sender (smq_loan_write, checksums)"
};

/* A window of 2 boards and one queue, with checksums or not. */
static struct smq_window *crash_window(const char *spec, bool checksum)
{
	struct smq_shape sh = { { 2, 1, ENTRIES, ESIZE, NULL }, NULL,
				checksum ? SMQ_SHAPE_CHECKSUM : 0, NULL, 0,
				0, 0 };
	struct smq_window *w;

	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE,
		    &w));
	OK(smq_init_shape(w, &sh, sizeof(sh)));
	return w;
}

static int sender_campaign(unsigned kills, uint64_t seed, int by, bool full,
			   unsigned *done)
{
	unsigned modes = by == BY_SEND ? SM_MODES - 1 : SM_MODES;
	const char *spec = test_window();
	struct smq_window *w = by == BY_SEND
			       ? test_init(spec, 2, 1, ENTRIES, ESIZE)
			       : crash_window(spec, by == BY_LOAN_WRITE);
	struct scamp *c = shared(sizeof(*c));
	uint64_t rng = seed;
	unsigned died[S_PHASES] = { 0 }, blocked = 0, lock_held = 0, half = 0;
	unsigned order[SM_MODES], loaned = 0;
	uint64_t t0 = now_ns();

	if (kills + 1 > MAXK)
		FAIL("at most %d kills", MAXK - 1);
	c->spec = spec;
	c->seed = seed;
	c->by = by;
	pid_t rx = test_fork(sender_campaign_rx, c);
	WAIT_UNTIL(AL(&c->rx_ready), 30, "the receiver (pid %d) to open its "
		   "queue", (int)rx);

	struct test_budget b = campaign_budget(kills, modes, full);
	for (unsigned k = 0; k <= kills; k++) {
		bool final = !test_going(&b, k);
		*done = k;
		unsigned mode = next_mode(k, modes, order, &rng);
		AS(&c->k, k);
		AS(&c->mode, final ? SM_LONG : mode);
		AS(&c->final, final);
		AS(&c->phase, S_START);
		AS(&c->holding, 0);
		AS(&c->hold_after, 1 + test_rand(&rng) % 40);
		pid_t pid = test_fork(sender_life, c);
		if (final) {
			test_wait_ok(pid, "the last sender");
			AS(&c->acked_at_death[k], AL(&c->acked));
			break;
		}
		switch (mode) {
		case SM_IMMEDIATE:
			break;
		case SM_AFTER_OPEN:
		case SM_BETWEEN:
		case SM_IN_LOAN:
			WAIT_FOR(AL(&c->holding), 10000);
			break;
		case SM_DELAY:
			/* a kill at a random moment, on purpose */
			nap_us((unsigned)(test_rand(&rng) % 3000));
			break;
		case SM_FULL:
			/* the receiver holds off: the ring fills and the
			 * sender waits for room inside smq_send */
			AS(&c->pause, 1);
			WAIT_FOR(AL(&c->rx_paused), 1000);
			WAIT_FOR(sender_waiting(w), 2000);
			/* a kill at a random moment of that, on purpose */
			nap_us((unsigned)(test_rand(&rng) % 500));
			break;
		case SM_IN_SEND:
			WAIT_FOR(AL(&c->phase) == S_SEND, 2000);
			spin_us((unsigned)(test_rand(&rng) % 50));
			break;
		case SM_SHORT:
			spin_us((unsigned)(test_rand(&rng) % 300));
			break;
		case SM_LONG:
			/* a kill at a random moment, on purpose */
			nap_us(LONG_US(&rng));
			break;
		}
		int ended = kill_wait(pid);
		if (AL(&c->sender_err))
			FAIL("sender %u: %s", k, smq_strerror(AL(&c->sender_err)));
		if (ended)
			FAIL("sender %u exited %d before it was killed", k, ended);
		/* post mortem: where it died, exactly (it is dead) */
		uint32_t ph = AL(&c->phase);
		died[ph]++;
		loaned += mode == SM_IN_LOAN && ph == S_LOANED;
		if (ph == S_SEND) {
			struct smq_lane_info li;
			OK(smq_lane_info(w, 0, 1, &li, sizeof(li)));
			blocked += li.sender_waiting;
		}
		lock_held += LOAD(&lane_out(w, 1)->lock) != 0;
		half += half_published(w, 1);
		AS(&c->acked_at_death[k], AL(&c->acked));
		AS(&c->pause, 0);
	}
	AS(&c->total, AL(&c->acked));
	AS(&c->stop, 1);
	test_wait_ok(rx, "the receiver");
	if (AL(&c->sender_err))
		FAIL("last sender: %s", smq_strerror(AL(&c->sender_err)));

	struct smq_queue_info qi;
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	CHECK(qi.fill == 0);
	OK(smq_validate(w, NULL, 0));
	OK(smq_close(w));

	double secs = (double)(now_ns() - t0) / 1e9;
	printf("%s kills %u, messages checked %llu, lost %llu, doubled %llu, "
	       "torn %llu, out of order %llu (%.1f s)\n", by_name[by], *done,
	       (unsigned long long)AL(&c->checked),
	       (unsigned long long)AL(&c->lost),
	       (unsigned long long)AL(&c->doubled),
	       (unsigned long long)AL(&c->torn),
	       (unsigned long long)AL(&c->order), secs);
	printf("  acknowledged %llu; re-sent unacknowledged %llu; receive errors "
	       "%llu\n", (unsigned long long)AL(&c->total),
	       (unsigned long long)AL(&c->resent),
	       (unsigned long long)AL(&c->errors));
	printf("  died %s %u, %s %u, %s %u (%u waiting for room), %s %u",
	       s_phase_name[0], died[0], s_phase_name[1], died[1],
	       s_phase_name[2], died[2], blocked, s_phase_name[3], died[3]);
	if (by != BY_SEND)
		printf(", %s %u (%u held half written)", s_phase_name[4],
		       died[4], loaned);
	printf("; holding the lane lock %u, between signature and top %u\n",
	       lock_held, half);

	int bad = 0;
	if (AL(&c->errors)) {
		fprintf(stderr, "receive failed: %s\n", smq_strerror(AL(&c->rx_err)));
		bad = 1;
	}
	if (AL(&c->lost) || AL(&c->doubled) || AL(&c->torn) || AL(&c->order))
		bad = 1;
	/* the campaign itself: every kill point reached */
	if (!died[S_START] || !died[S_OPEN] || !died[S_SEND] || !blocked ||
	    !died[S_BETWEEN] || (by != BY_SEND && !loaned)) {
		fprintf(stderr, "sender campaign: a kill point was never reached\n");
		bad = 1;
	}
	munmap(c, sizeof(*c));
	return bad;
}

/* ====================== the receiver campaign ====================== */

enum { R_START, R_OPEN, R_RECEIVE, R_GOT, R_BETWEEN };
enum { RM_IMMEDIATE, RM_DELAY, RM_SLEEPING, RM_POLLING, RM_AFTER_RECEIVE,
       RM_SHORT, RM_LONG, RM_MODES };

struct slot {
	size_t len;
	uint8_t data[ESIZE];
};

struct rcamp {
	const char *spec;
	uint64_t seed;
	/* the receiver's state: the log */
	_Atomic uint64_t count;
	struct slot log[LOGN];
	_Atomic uint32_t phase;
	_Atomic uint32_t holding;
	/* written by the parent */
	_Atomic uint32_t r;          /* receiver incarnation */
	_Atomic uint32_t mode;
	_Atomic uint32_t flags;      /* its smq_queue_open flags */
	_Atomic uint32_t hold;       /* hold right after the next receive */
	_Atomic uint32_t final;
	_Atomic uint32_t sender_pause, stop;
	/* the sender */
	_Atomic uint64_t sent;
	_Atomic uint32_t sender_done, sender_paused;
	_Atomic int sender_err;
	/* figures */
	_Atomic uint64_t lost, doubled, torn, order, errors;
	_Atomic uint64_t taken_in_flight, copied_not_taken;
	_Atomic uint64_t again;      /* at least once: given again after a kill */
	_Atomic int rx_err;
	bool peek;                   /* the at-least-once campaign */
};

/* Board 1 sends 0, 1, 2, ... until told to stop; every send returns 0. */
static int rc_sender(void *arg)
{
	struct rcamp *c = arg;
	struct smq_window *w;
	struct smq_queue *q;
	uint8_t buf[ESIZE];
	uint64_t rng = c->seed ^ 0x5e4d;
	int err;

	OK(smq_open(c->spec, 1, 0, &w));
	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &q));
	for (uint64_t n = 0; !AL(&c->stop); n++) {
		while (AL(&c->sender_pause) && !AL(&c->stop)) {
			AS(&c->sender_paused, 1);
			/* until the test lets it go: a word, no event */
			nap_us(50);
		}
		AS(&c->sender_paused, 0);
		size_t len = make_msg(buf, 0, n, &rng);
		if ((err = smq_send(q, buf, len, 30000))) {
			AS(&c->sender_err, err);
			return 2;
		}
		AS(&c->sent, n + 1);
		/* bursts: the receiver finds the ring empty and sleeps */
		uint64_t r = test_rand(&rng);
		if (r % 256 == 0)
			/* (a pace, on purpose, not a state) */
			nap_us((unsigned)(r >> 32) % 1000);
	}
	AS(&c->sender_done, 1);
	OK(smq_queue_close(q));
	OK(smq_close(w));
	return 0;
}

/* The next message due after the log's last one. */
static uint64_t rc_expected(struct rcamp *c, uint64_t count)
{
	if (count == 0)
		return 0;
	const struct slot *s = &c->log[(count - 1) % LOGN];
	return ((const struct msg *)s->data)->n + 1;
}

/* Append check of log[count]: whole, and the one due. */
static void rc_check(struct rcamp *c, uint64_t count)
{
	const struct slot *s = &c->log[count % LOGN];
	uint64_t want = rc_expected(c, count);

	if (!msg_ok(s->data, s->len)) {
		AADD(&c->torn, 1);
		return;
	}
	uint64_t n = ((const struct msg *)s->data)->n;
	if (n > want)
		AADD(&c->lost, n - want);
	else if (n + 1 == want)
		AADD(&c->doubled, 1);
	else if (n < want)
		AADD(&c->order, 1);
}

/* At least once: peek, record, count, commit; a message given again
 * after a kill is known by its sequence number and dropped. */
static int rc_peek_receiver(struct rcamp *c, struct smq_window *w,
			    struct smq_queue *q)
{
	bool final = AL(&c->final);
	int err, idle = 0;

	for (;;) {
		uint64_t count = AL(&c->count);
		if (final && AL(&c->sender_done) && count >= AL(&c->sent))
			break;
		const void *data;
		size_t len;
		unsigned from;
		AS(&c->phase, R_RECEIVE);
		err = smq_peek(q, &data, &len, &from, 50);
		if (err == -ETIMEDOUT) {
			if (final && ++idle == 100) {
				uint64_t sent = AL(&c->sent), got = rc_expected(c, count);
				if (sent > got)
					AADD(&c->lost, sent - got);
				break;
			}
			continue;
		}
		idle = 0;
		if (err) {
			AS(&c->rx_err, err);
			if (AADD(&c->errors, 1) > 100)
				break;
			continue;
		}
		AS(&c->phase, R_GOT);
		if (AL(&c->hold)) {   /* killed between the peek and the commit */
			AS(&c->holding, 1);
			for (;;)
				pause();        /* until the test kills it */
		}
		if (len >= sizeof(struct msg) &&
		    ((const struct msg *)data)->n + 1 == rc_expected(c, count) &&
		    count) {
			/* counted before a kill, not committed: given again */
			AADD(&c->again, 1);
		} else {
			struct slot *sl = &c->log[count % LOGN];
			memcpy(sl->data, data, len < ESIZE ? len : ESIZE);
			sl->len = len;
			if (from != 1)
				AADD(&c->torn, 1);
			rc_check(c, count);
			AS(&c->count, count + 1);
		}
		AS(&c->phase, R_BETWEEN);
		if (test_rand(&(uint64_t){ count ^ c->seed }) % 16 == 0)
			spin_us(20);  /* a kill lands between count and commit */
		if ((err = smq_commit(q))) {
			AS(&c->rx_err, err);
			AADD(&c->errors, 1);
		}
	}
	OK(smq_queue_close(q));
	OK(smq_close(w));
	return 0;
}

static int rc_receiver(void *arg)
{
	struct rcamp *c = arg;
	struct smq_window *w;
	struct smq_queue *q;
	uint64_t rng = c->seed ^ (0x77ull * (AL(&c->r) + 1));
	int err, idle = 0;

	if ((err = smq_open(c->spec, 0, 0, &w)) ||
	    (err = smq_queue_open(w, 0, SMQ_RECEIVER, AL(&c->flags), &q))) {
		AS(&c->rx_err, err);
		return 2;
	}
	AS(&c->phase, R_OPEN);
	if (c->peek)
		return rc_peek_receiver(c, w, q);
	/* Resume.  The one before us is dead: the lane's bottom says how many
	 * messages the library has handed out, which is where we resume. */
	struct smq_lane_info li;
	OK(smq_lane_info(w, 0, 1, &li, sizeof(li)));
	uint64_t count = AL(&c->count), want = rc_expected(c, count);
	const struct slot *s = &c->log[count % LOGN];
	bool whole = msg_ok(s->data, s->len) &&
		     ((const struct msg *)s->data)->n == want;
	if (li.bottom == want + 1) {
		/* taken, not yet counted */
		rc_check(c, count);
		AS(&c->count, count + 1);
		AADD(&c->taken_in_flight, 1);
	} else if (li.bottom == want) {
		if (whole)   /* copied but still queued: comes again */
			AADD(&c->copied_not_taken, 1);
	} else if (li.bottom > want) {
		AADD(&c->lost, li.bottom - want - 1);
	} else {
		AADD(&c->doubled, want - li.bottom);
	}

	bool final = AL(&c->final);
	for (;;) {
		count = AL(&c->count);
		if (final && AL(&c->sender_done) && count >= AL(&c->sent))
			break;
		struct slot *sl = &c->log[count % LOGN];
		unsigned from;
		AS(&c->phase, R_RECEIVE);
		err = smq_receive(q, sl->data, ESIZE, &sl->len, &from, 50);
		if (err == -ETIMEDOUT) {
			if (final && ++idle == 100) { /* 5 s without a message */
				uint64_t sent = AL(&c->sent);
				uint64_t got = rc_expected(c, count);
				if (sent > got)
					AADD(&c->lost, sent - got);
				break;
			}
			continue;
		}
		idle = 0;
		if (err) {
			AS(&c->rx_err, err);
			AADD(&c->errors, 1);
			if (AL(&c->errors) > 100)
				break;
			continue;
		}
		AS(&c->phase, R_GOT);
		if (AL(&c->hold)) {
			AS(&c->holding, 1);
			for (;;)
				pause();        /* until the test kills it */
		}
		/* now and then some work before the message is recorded */
		if (test_rand(&rng) % 32 == 0)
			spin_us(1 + (unsigned)(test_rand(&rng) % 10));
		if (from != 1)
			AADD(&c->torn, 1);
		rc_check(c, count);
		AS(&c->count, count + 1);
		AS(&c->phase, R_BETWEEN);
	}
	if (final) {
		size_t len;
		EXPECT(smq_receive(q, c->log[0].data, ESIZE, &len, NULL, 0),
		       -EAGAIN);
	}
	OK(smq_queue_close(q));
	OK(smq_close(w));
	return 0;
}

static const char *const r_phase_name[] = {
	"opening", "right after open", "inside receive", "right after a receive",
	"between receives"
};

static int receiver_campaign(unsigned kills, uint64_t seed, bool peek,
			     bool full, unsigned *done)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, 2, 1, ENTRIES, ESIZE);
	struct rcamp *c = shared(sizeof(*c));

	c->peek = peek;
	uint64_t rng = seed ^ 0xfeed;
	unsigned died[5] = { 0 }, asleep = 0, polling = 0;
	unsigned order[RM_MODES];
	uint64_t t0 = now_ns();

	c->spec = spec;
	c->seed = seed;
	pid_t tx = test_fork(rc_sender, c);

	struct test_budget b = campaign_budget(kills, RM_MODES, full);
	for (unsigned r = 0; r <= kills; r++) {
		bool final = !test_going(&b, r);
		*done = r;
		unsigned mode = next_mode(r, RM_MODES, order, &rng);
		static const unsigned fl[] = { 0, SMQ_POLL, SMQ_SLEEP };
		unsigned flags = fl[test_rand(&rng) % 3];
		if (mode == RM_SLEEPING && flags == SMQ_POLL)
			flags = 0;
		if (mode == RM_POLLING)
			flags = SMQ_POLL;
		AS(&c->r, r);
		AS(&c->mode, mode);
		AS(&c->flags, flags);
		AS(&c->final, final);
		AS(&c->hold, 0);
		AS(&c->holding, 0);
		AS(&c->phase, R_START);
		pid_t pid = test_fork(rc_receiver, c);
		if (final) {
			/* it drains what the sender sends until told to stop (a
			 * pace, not a state: any amount of traffic will do) */
			nap_us(20000);
			AS(&c->stop, 1);
			test_wait_ok(tx, "the sender");
			test_wait_ok(pid, "the last receiver");
			break;
		}
		struct smq_queue_info qi;
		switch (mode) {
		case RM_IMMEDIATE:
			break;
		case RM_DELAY:
			/* a kill at a random moment, on purpose */
			nap_us((unsigned)(test_rand(&rng) % 3000));
			break;
		case RM_SLEEPING:
			/* the sender pauses: the receiver goes to sleep */
			AS(&c->sender_pause, 1);
			WAIT_FOR(AL(&c->phase) >= R_RECEIVE &&
				 smq_queue_info(w, 0, &qi, sizeof(qi)) == 0 && qi.sleeping,
				 2000);
			/* a kill at a random moment of that, on purpose */
			nap_us((unsigned)(test_rand(&rng) % 300));
			break;
		case RM_POLLING:
			AS(&c->sender_pause, 1);
			WAIT_FOR(AL(&c->sender_paused) &&
				 AL(&c->phase) >= R_RECEIVE, 2000);
			/* a kill at a random moment of its polling */
			nap_us(100 + (unsigned)(test_rand(&rng) % 300));
			break;
		case RM_AFTER_RECEIVE:
			WAIT_FOR(AL(&c->phase) >= R_OPEN, 2000);
			AS(&c->hold, 1);
			WAIT_FOR(AL(&c->holding), 2000);
			break;
		case RM_SHORT:
			spin_us((unsigned)(test_rand(&rng) % 300));
			break;
		case RM_LONG:
			/* a kill at a random moment, on purpose */
			nap_us(LONG_US(&rng));
			break;
		}
		int ended = kill_wait(pid);
		if (AL(&c->rx_err) && !AL(&c->errors))
			FAIL("receiver %u: %s", r, smq_strerror(AL(&c->rx_err)));
		if (ended)
			FAIL("receiver %u exited %d before it was killed", r, ended);
		uint32_t ph = AL(&c->phase);
		died[ph]++;
		if (ph == R_RECEIVE) {
			/* died asleep: its sleep epoch left odd (the snapshot
			 * says a dead receiver does not sleep) */
			const struct smq_rx *rx0 = at(w, w->lay.rx[0]);
			OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
			if (LOAD(&rx0->sleep_epoch) & 1)
				asleep++;
			else if (flags == SMQ_POLL)
				polling++;
		}
		AS(&c->sender_pause, 0);
		if (AL(&c->sender_err))
			FAIL("sender: %s", smq_strerror(AL(&c->sender_err)));
	}
	if (AL(&c->sender_err))
		FAIL("sender: %s", smq_strerror(AL(&c->sender_err)));

	struct smq_queue_info qi;
	OK(smq_queue_info(w, 0, &qi, sizeof(qi)));
	CHECK(qi.fill == 0);
	OK(smq_validate(w, NULL, 0));
	OK(smq_close(w));

	uint64_t count = AL(&c->count), sent = AL(&c->sent);
	if (count != sent && !AL(&c->lost) && !AL(&c->doubled)) {
		if (count < sent)
			AADD(&c->lost, sent - count);
		else
			AADD(&c->doubled, count - sent);
	}
	double secs = (double)(now_ns() - t0) / 1e9;
	printf("%s kills %u, messages checked %llu, lost %llu, doubled %llu, "
	       "torn %llu, out of order %llu (%.1f s)\n", peek
	       ? "at-least-once receiver (peek, record, commit)" : "receiver",
	       *done,
	       (unsigned long long)count, (unsigned long long)AL(&c->lost),
	       (unsigned long long)AL(&c->doubled),
	       (unsigned long long)AL(&c->torn),
	       (unsigned long long)AL(&c->order), secs);
	if (peek)
		printf("  sent %llu; given again after a kill between record and "
		       "commit %llu; receive errors %llu\n",
		       (unsigned long long)sent, (unsigned long long)AL(&c->again),
		       (unsigned long long)AL(&c->errors));
	else
		printf("  sent %llu; taken but not counted at the kill %llu, "
		       "copied but not taken %llu; receive errors %llu\n",
		       (unsigned long long)sent,
		       (unsigned long long)AL(&c->taken_in_flight),
		       (unsigned long long)AL(&c->copied_not_taken),
		       (unsigned long long)AL(&c->errors));
	printf("  died %s %u, %s %u, %s %u (asleep %u, polling %u), %s %u, %s %u\n",
	       r_phase_name[0], died[0], r_phase_name[1], died[1],
	       r_phase_name[2], died[2], asleep, polling, r_phase_name[3],
	       died[3], r_phase_name[4], died[4]);

	int bad = 0;
	if (AL(&c->errors)) {
		fprintf(stderr, "receive failed: %s\n", smq_strerror(AL(&c->rx_err)));
		bad = 1;
	}
	if (AL(&c->lost) || AL(&c->doubled) || AL(&c->torn) || AL(&c->order))
		bad = 1;
	if (!died[R_RECEIVE] || !asleep || !polling || !died[R_GOT]) {
		fprintf(stderr, "receiver campaign: a kill point was never reached\n");
		bad = 1;
	}
	munmap(c, sizeof(*c));
	return bad;
}

int main(int argc, char **argv)
{
	unsigned kills = 20;
	const char *env = getenv("SMQ_CRASH_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0)
			    : (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
	bool full = argc > 1 && !strcmp(argv[1], "--full");

	if (argc > 1 && !full) {
		fprintf(stderr, "usage: %s [--full [KILLS]]\n", argv[0]);
		return 2;
	}
	if (full)
		kills = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 200;
	if (kills < 1 || kills >= MAXK) {
		fprintf(stderr, "%s: kills from 1 to %d\n", argv[0], MAXK - 1);
		return 2;
	}
	printf("crash campaign: %s, %u kills of each side, seed %llu\n",
	       full ? "full" : "short", kills, (unsigned long long)seed);
	fflush(stdout);
	uint64_t t0 = now_ns();
	/* the floor: every kill mode aimed at once (the full form: all) */
	unsigned done;
	int bad = sender_campaign(kills, seed, BY_SEND, full, &done);
	test_work("kills of a sender", done, full ? kills : SM_MODES - 1);
	bad |= sender_campaign(kills, seed, BY_LOAN_POINTER, full, &done);
	test_work("kills of a loan sender", done, full ? kills : SM_MODES);
	bad |= sender_campaign(kills, seed, BY_LOAN_WRITE, full, &done);
	test_work("kills of a loan sender with checksums", done,
		  full ? kills : SM_MODES);
	bad |= receiver_campaign(kills, seed, false, full, &done);
	test_work("kills of a receiver", done, full ? kills : RM_MODES);
	bad |= receiver_campaign(kills, seed, true, full, &done);
	test_work("kills of an at-least-once receiver", done,
		  full ? kills : RM_MODES);
	printf("%s in %.1f s\n", bad ? "FAILED" : "passed",
	       (double)(now_ns() - t0) / 1e9);
	return bad;
}
