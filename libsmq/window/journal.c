/* The journal (feature journal, smq(7) Journal): what each board's
 * processes did, written down in a ring in the board's own region (local
 * writes only), read by any board.
 *
 * A writer reserves a sequence with one atomic add on its board's head,
 * claims its slot with the sequence marked as being written (unless a
 * later entry already holds it), stores the entry, then the sequence
 * alone with release.  A reader copies an entry between two
 * loads of its sequence: the same both times, and the one it wants, means
 * a whole entry.  It never waits on a writer: an entry unfinished for
 * SMQ_JOURNAL_ABANDON_MS of the reader's clock is said abandoned, one
 * overwritten before it was read is counted lost.  Nothing on the message
 * path writes here: only what happens to a queue or a board, not to a
 * message. */
#include <string.h>
#include "window.h"
#include "journal.h"

static struct smq_journal_head *own_head(struct smq_window *w)
{
	if (w->readonly || !w->valid || !(w->lay.features & SMQ_FEATURE_JOURNAL))
		return NULL;
	return smq_near(w, lay_journal(&w->lay, w->board), SMQ_LINE);
}

/* The head as init made it: a write goes nowhere else. */
static bool head_sound(const struct smq_journal_head *h, unsigned board,
		       uint32_t slots)
{
	struct smq_journal_head c;
	char magic[8];
	const uint64_t *from = (const uint64_t *)h;
	uint64_t to[SMQ_LINE / 8];

	for (unsigned i = 0; i < SMQ_LINE / 8; i++)
		to[i] = LOAD(&from[i]);
	memcpy(&c, to, sizeof(c));
	memcpy(magic, SMQ_JOURNAL_MAGIC, 8);
	return !memcmp(&c.magic, magic, 8) && c.board == board &&
	       c.slots == slots && c.slots && c.incarnation &&
	       c.check == smq_journal_head_check(&c);
}

static void put(struct smq_window *w, struct smq_journal_head *h,
		const struct smq_jnote *n)
{
	uint64_t seq = __atomic_fetch_add(&h->head, 1, __ATOMIC_ACQ_REL);
	struct smq_journal_slot *slot = smq_near(w,
		lay_journal_slot(&w->lay, w->board, seq), SMQ_LINE);
	struct smq_journal_slot e = {
		.seq = seq,
		.time_ns = smq_realtime_ns(),
		.generation = w->generation,
		.epoch = n->epoch,
		.kind = n->kind,
		.role = n->role,
		.queue = n->queue,
		.pid = smq_tag_pid(w->tag),
		.a = n->a,
		.b = n->b,
	};

	e.check = smq_journal_slot_check(&e, seq);
	/* The slot says "being written" before any of its words change.  A
	 * writer held up since its reservation may find a later sequence
	 * there, the ring having come round (a reader counts ours lost):
	 * it leaves that one alone, where a plain store would have put an
	 * older sequence over a finished entry, which a reader waiting for
	 * the later one then took for abandoned. */
	TEST_HOOK(SMQ_HOOK_JOURNAL_RESERVED);
	uint64_t cur = LOAD(&slot->seq);
	do {
		if ((cur & ~SMQ_JOURNAL_WRITING) > seq)
			return;
	} while (!__atomic_compare_exchange_n(&slot->seq, &cur,
					      seq | SMQ_JOURNAL_WRITING, false,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	smq_publish(w->map.order);
	const uint64_t *from = (const uint64_t *)&e;
	uint64_t *to = (uint64_t *)slot;
	for (unsigned i = 1; i < SMQ_LINE / 8; i++)
		STORE(&to[i], from[i]);
	TEST_HOOK(SMQ_HOOK_JOURNAL_WRITING);
	smq_publish(w->map.order);
	/* ...and finishes it unless a later writer claimed it meanwhile
	 * (whose entry then fails its check: a reader says it broken) */
	uint64_t mine = seq | SMQ_JOURNAL_WRITING;
	__atomic_compare_exchange_n(&slot->seq, &mine, seq, false,
				    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

void smq_journal_write(struct smq_window *w, const struct smq_jnote *n)
{
	struct smq_journal_head *h = own_head(w);

	if (!h || smq_enter(w))
		return;
	/* a journal that failed validation is not written (dump says so) */
	if (head_sound(h, w->board, w->lay.journal)) {
		/* the first entry of a new boot of this host says so */
		uint64_t last = LOAD(&h->last_boot);
		if (last != w->boot &&
		    __atomic_compare_exchange_n(&h->last_boot, &last, w->boot,
						false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED) && last) {
			struct smq_jnote boot = { SMQ_JOURNAL_BOOT, 0,
						  SMQ_NO_QUEUE, 0, last,
						  w->boot };
			put(w, h, &boot);
		}
		put(w, h, n);
	}
	smq_leave(w);
}

/* ---- reading ---- */

static void entry_out(struct smq_journal_entry *e, unsigned board,
		      const struct smq_journal_slot *s, uint64_t seq,
		      uint64_t incarnation)
{
	memset(e, 0, sizeof(*e));
	e->board = board;
	e->kind = s->kind;
	e->seq = seq;
	e->time_ns = s->time_ns;
	e->generation = s->generation;
	e->epoch = s->epoch;
	e->queue = s->queue;
	e->role = s->role;
	e->pid = s->pid;
	e->a = s->a;
	e->b = s->b;
	e->incarnation = incarnation;
}

/* What the reader says of the ring (written by nobody) */
static int note(struct smq_journal_entry *e, const struct smq_journal_cursor *c,
		uint32_t kind, uint64_t seq, uint64_t a)
{
	memset(e, 0, sizeof(*e));
	e->board = c->board;
	e->kind = kind;
	e->seq = seq;
	e->queue = SMQ_NO_QUEUE;
	e->a = a;
	e->incarnation = c->incarnation;
	return 1;
}

/* One step of the cursor: 1 with e, 0 nothing now. */
static int read_one(struct smq_window *w, struct smq_journal_cursor *c,
		    struct smq_journal_entry *e)
{
	const struct smq_layout *l = &w->lay;
	const struct smq_journal_head *h =
		smq_snapshot_at(w, lay_journal(l, c->board), SMQ_LINE);

	if (!h || !head_sound(h, c->board, l->journal))
		return -SMQ_ECORRUPT;
	uint64_t inc = LOAD(&h->incarnation), was = c->incarnation;
	if (was && was != inc) {
		c->incarnation = inc;
		c->next = 0;
		c->pending_ns = 0;
		return note(e, c, SMQ_JOURNAL_RESTARTED, 0, was);
	}
	c->incarnation = inc;
	for (int tries = 0; tries < 4; tries++) {
		uint64_t head = LOAD_ACQ(&h->head);
		uint64_t oldest = head > l->journal ? head - l->journal : 1;
		uint64_t s = c->next;
		if (!s)
			s = c->next = oldest;
		if (s >= head)
			return 0;
		if (s < oldest) {
			c->next = oldest;
			c->pending_ns = 0;
			return note(e, c, SMQ_JOURNAL_LOST, s, oldest - s);
		}
		const struct smq_journal_slot *slot = smq_snapshot_at(w,
			lay_journal_slot(l, c->board, s), SMQ_LINE);
		uint64_t v = LOAD_ACQ(&slot->seq);
		if (v == s) {
			TEST_HOOK(SMQ_HOOK_JOURNAL_READ);
			struct smq_journal_slot copy;
			const uint64_t *from = (const uint64_t *)slot;
			uint64_t *to = (uint64_t *)&copy;
			for (unsigned i = 0; i < SMQ_LINE / 8; i++)
				to[i] = LOAD(&from[i]);
			smq_consume(w->map.order);
			if (LOAD(&slot->seq) != s)
				continue;  /* overwritten as we read: lost */
			c->next = s + 1;
			c->pending_ns = 0;
			/* kinds from SMQ_JOURNAL_LOST on are the reader's
			 * words, never a writer's */
			if (copy.check != smq_journal_slot_check(&copy, s) ||
			    copy.kind >= SMQ_JOURNAL_LOST)
				return note(e, c, SMQ_JOURNAL_BROKEN, s, 0);
			entry_out(e, c->board, &copy, s, inc);
			return 1;
		}
		if ((v & ~SMQ_JOURNAL_WRITING) > s) {
			/* a later entry there: lapped (the head says so next
			 * time round), or a sequence no writer reached or that
			 * is not this slot's (else waited on for ever) */
			if (LOAD_ACQ(&h->head) - 1 < (v & ~SMQ_JOURNAL_WRITING) ||
			    ((v - s) & (l->journal - 1))) {
				c->next = s + 1;
				return note(e, c, SMQ_JOURNAL_BROKEN, s, 0);
			}
			continue;
		}
		/* reserved, not finished: a writer at work, or one that died
		 * mid-entry; never waited for */
		uint64_t now = smq_now_ns();
		if (!c->pending_ns)
			c->pending_ns = now;
		if (now - c->pending_ns < SMQ_JOURNAL_ABANDON_MS * 1000000ull)
			return 0;
		c->next = s + 1;
		c->pending_ns = 0;
		return note(e, c, SMQ_JOURNAL_ABANDONED, s, 0);
	}
	return 0;
}

int smq_journal_next(struct smq_window *w, struct smq_journal_cursor *c,
		     struct smq_journal_entry *out, size_t size)
{
	struct smq_journal_entry e;

	if (!w || !c || !out || size < SMQ_LEAST_JOURNAL_ENTRY)
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	memset(&e, 0, sizeof(e));
	pthread_mutex_lock(&w->follow_lock);
	int err = smq_monitor_follow(w);
	if (!err || err == -ESTALE) {
		if (!w->valid)
			err = -SMQ_EUNFORMATTED;
		else if (!(w->lay.features & SMQ_FEATURE_JOURNAL))
			err = -ENOENT;
		else if (c->board >= w->lay.boards)
			err = -EINVAL;
		else
			err = read_one(w, c, &e);
	}
	pthread_mutex_unlock(&w->follow_lock);
	smq_struct_out(out, size, &e, sizeof(e));
	return err;
}
