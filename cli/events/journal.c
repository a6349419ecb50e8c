/* Events: what the boards' journals say (feature journal), each board
 * read on from its cursor (--since, --cursor), merged by generation and
 * board; watch.c compares the looks between them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "events.h"

bool ev_watch_since(struct ev_watch *ew, const char *since)
{
	char *end;

	if (!strcmp(since, "all")) {
		ew->since = EV_SINCE_ALL;
		return true;
	}
	if (!strncmp(since, "gen:", 4)) {
		ew->since = EV_SINCE_GEN;
		ew->since_gen = strtoull(since + 4, &end, 10);
		return since[4] >= '0' && since[4] <= '9' && !*end;
	}
	ew->since = EV_SINCE_SEQ;
	for (const char *p = since;;) {
		unsigned long b = strtoul(p, &end, 10);
		if (end == p || *end != ':' || b >= SMQ_MAX_BOARDS)
			return false;
		p = end + 1;
		uint64_t seq = strtoull(p, &end, 10);
		if (end == p || !seq || (*end && *end != ','))
			return false;
		ew->since_seq[b] = seq;
		if (!*end)
			return true;
		p = end + 1;
	}
}

/* --cursor FILE: "board B incarnation I next N" lines */
static void cursor_load(struct ev_watch *ew)
{
	FILE *f = ew->cursor_file ? fopen(ew->cursor_file, "r") : NULL;
	unsigned b;
	unsigned long long inc, next;

	if (!f)
		return;
	while (fscanf(f, " board %u incarnation %llu next %llu", &b, &inc,
		      &next) == 3)
		if (b < SMQ_MAX_BOARDS && inc && next) {
			ew->jc[b].incarnation = inc;
			ew->jc[b].next = next;
		}
	fclose(f);
}

int ev_watch_cursor_save(const struct ev_watch *ew)
{
	char tmp[4096];

	if (!ew->cursor_file || !ew->cursors_set)
		return 0;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", ew->cursor_file) >=
	    sizeof(tmp))
		return -ENAMETOOLONG;
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -errno;
	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++)
		if (ew->jc[b].incarnation && ew->jc[b].next)
			fprintf(f, "board %u incarnation %llu next %llu\n", b,
				(unsigned long long)ew->jc[b].incarnation,
				(unsigned long long)ew->jc[b].next);
	if (fflush(f) || ferror(f) || fsync(fileno(f))) {
		int err = -errno;
		fclose(f);
		unlink(tmp);
		return err ? err : -EIO;
	}
	fclose(f);
	return rename(tmp, ew->cursor_file) ? -errno : 0;
}

/* Where each board's journal is read from (--since), set at the first
 * look that finds journals; a cursor file overrides it for the boards it
 * names. */
static void set_cursors(struct ev_watch *ew, const struct ev_look *c)
{
	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++) {
		struct smq_journal_cursor *jc = &ew->jc[b];
		memset(jc, 0, sizeof(*jc));
		jc->board = b;
		if (b >= c->nboards)
			continue;
		uint64_t head = c->boards[b].journal_head;
		bool from_now = ew->since == EV_SINCE_NOW ||
				(ew->since == EV_SINCE_SEQ && !ew->since_seq[b]);
		if (from_now || ew->since == EV_SINCE_SEQ) {
			jc->next = from_now ? head : ew->since_seq[b];
			jc->incarnation = c->boards[b].journal_incarnation;
		}
	}
	cursor_load(ew);
	ew->cursors_set = true;
}

/* The board a queue's event is about: its receiving board */
static int queue_board(const struct ev_look *c, uint32_t q)
{
	return q < c->nqueues ? (int)c->queues[q].receiver : -1;
}

static const enum ev_type kind_type[] = {
	[SMQ_JOURNAL_FORMAT] = EV_GENERATION,
	[SMQ_JOURNAL_CLEAR] = EV_GENERATION,
	[SMQ_JOURNAL_CLEAR_QUEUE] = EV_QUEUE_CLEARED,
	[SMQ_JOURNAL_EMPTIED] = EV_QUEUE_EMPTIED,
	[SMQ_JOURNAL_ANNOUNCE] = EV_BOARD_ANNOUNCED,
	[SMQ_JOURNAL_READY] = EV_SYSTEM_READY,
	[SMQ_JOURNAL_GAVE_UP] = EV_SYNC_GAVE_UP,
	[SMQ_JOURNAL_BOOT] = EV_BOARD_REBOOTED,
	[SMQ_JOURNAL_OPEN] = EV_RECEIVER_ATTACHED,
	[SMQ_JOURNAL_CLOSE] = EV_RECEIVER_GONE,
	[SMQ_JOURNAL_TAKEOVER] = EV_TAKEOVER,
	[SMQ_JOURNAL_FULL] = EV_QUEUE_FULL,
	[SMQ_JOURNAL_ROOM] = EV_QUEUE_DRAINED,
	[SMQ_JOURNAL_DAMAGED] = EV_MESSAGES_CORRUPT,
	[SMQ_JOURNAL_UNANSWERED] = EV_DOORBELL_UNANSWERED,
};

/* An entry of a journal, or what its reader says of the ring, as an
 * event; false for a kind this smqctl does not know (a newer writer). */
static bool journal_event(const struct smq_journal_entry *je,
			  const struct ev_look *c, uint64_t now,
			  struct event *e)
{
	memset(e, 0, sizeof(*e));
	e->journal = true;
	e->jboard = je->board;
	e->jkind = je->kind;
	e->seq = je->seq;
	e->generation = je->generation;
	e->a = je->a;
	e->b = je->b;
	e->role = je->role;
	e->queue = je->queue == SMQ_NO_QUEUE ? -1 : (int)je->queue;
	e->board = e->queue >= 0 ? queue_board(c, je->queue) : (int)je->board;
	e->pid = je->pid;
	e->count = 1;
	e->time_ns = je->time_ns;
	switch (je->kind) {
	case SMQ_JOURNAL_LOST:
	case SMQ_JOURNAL_ABANDONED:
	case SMQ_JOURNAL_BROKEN:
	case SMQ_JOURNAL_RESTARTED:
		e->type = je->kind == SMQ_JOURNAL_LOST ? EV_JOURNAL_LOST
			  : je->kind == SMQ_JOURNAL_ABANDONED
			  ? EV_JOURNAL_ABANDONED
			  : je->kind == SMQ_JOURNAL_BROKEN ? EV_JOURNAL_DAMAGED
			  : EV_JOURNAL_RESTARTED;
		e->board = (int)je->board;
		e->count = je->kind == SMQ_JOURNAL_LOST ? je->a : 1;
		e->time_ns = now;  /* the reader's say, not the writer's */
		return true;
	default:
		/* EV_GENERATION is 0: the kinds are named by their range */
		if (je->kind < SMQ_JOURNAL_FORMAT ||
		    je->kind > SMQ_JOURNAL_UNANSWERED)
			return false;
	}
	e->type = kind_type[je->kind];
	if (je->kind == SMQ_JOURNAL_OPEN && je->role == SMQ_SENDER)
		e->type = EV_SENDER_ATTACHED;
	if (je->kind == SMQ_JOURNAL_CLOSE && je->role == SMQ_SENDER)
		e->type = EV_SENDER_GONE;
	if (je->kind == SMQ_JOURNAL_FORMAT || je->kind == SMQ_JOURNAL_CLEAR) {
		e->from = je->epoch;
		e->to = je->generation;
		e->board = -1;
	} else if (je->kind == SMQ_JOURNAL_CLEAR_QUEUE) {
		e->from = je->b;
		e->to = je->epoch;
	} else if (je->kind == SMQ_JOURNAL_TAKEOVER) {
		e->old_pid = (uint32_t)je->a;
	} else if (je->kind == SMQ_JOURNAL_READY) {
		e->board = -1;
	} else if (je->kind == SMQ_JOURNAL_BOOT) {
		e->from = je->a;
		e->to = je->b;
	} else if (je->kind == SMQ_JOURNAL_FULL) {
		e->from = e->to = je->a;  /* a lane holds its ring */
	} else if (je->kind == SMQ_JOURNAL_UNANSWERED) {
		e->from = je->a;
	}
	return true;
}

#define JOURNAL_STEP 512   /* entries a board, a step: the rest next */

/* Every board's new journal entries, merged: by generation, then board
 * (clocks of different boards are never compared), each board's in its
 * own order. */
int ev_journal_events(struct ev_watch *ew, struct emit *em,
		      const struct ev_look *c)
{
	unsigned nb = c->nboards;

	ew->has_journal = c->wi.features_incompat & SMQ_FEATURE_JOURNAL;
	em->journaled = ew->has_journal;
	if (!ew->has_journal || !nb)
		return 0;
	if (!ew->w && smq_open(ew->spec, 0, SMQ_OPEN_READONLY, &ew->w)) {
		ew->w = NULL;
		return 0;
	}
	if (!ew->cursors_set)
		set_cursors(ew, c);
	struct smq_journal_entry *all = calloc((size_t)nb * JOURNAL_STEP,
					       sizeof(*all));
	unsigned n[SMQ_MAX_BOARDS] = { 0 }, at[SMQ_MAX_BOARDS] = { 0 };
	if (!all)
		return -ENOMEM;
	for (unsigned b = 0; b < nb; b++) {
		while (n[b] < JOURNAL_STEP &&
		       smq_journal_next(ew->w, &ew->jc[b],
					&all[b * JOURNAL_STEP + n[b]],
					sizeof(*all)) == 1)
			n[b]++;
		ew->cursor_moved |= n[b] != 0;
	}
	for (;;) {
		int pick = -1;
		for (unsigned b = 0; b < nb; b++) {
			if (at[b] == n[b])
				continue;
			const struct smq_journal_entry *x =
				&all[b * JOURNAL_STEP + at[b]];
			if (pick < 0 || x->generation <
			    all[pick * JOURNAL_STEP + at[pick]].generation)
				pick = (int)b;
		}
		if (pick < 0)
			break;
		const struct smq_journal_entry *je =
			&all[pick * JOURNAL_STEP + at[pick]++];
		struct event e;
		bool note = je->kind >= SMQ_JOURNAL_LOST;
		if (ew->since == EV_SINCE_GEN && !note &&
		    je->generation < ew->since_gen)
			continue;
		if (journal_event(je, c, em->now, &e))
			ev_emit(em, e);
	}
	free(all);
	return 0;
}

/* The events from the last look to the one just taken into ew->cur. */
