/* Who is at work: one judgement of boards, their handles and receivers,
 * by liveness and never by a state word (smq(7), IDENTITY AND LIVENESS).
 * Every snapshot, init, clear and sync asks here.
 *
 * A process of this host is judged by its tag (its pid and start time).
 * One of another host cannot be: what moves is judged instead, a
 * heartbeat count, on this process's own monotonic clock (clocks of
 * different hosts are never compared).  A count first seen is unknown
 * until it moves (alive) or stays still for SMQ_HEARTBEAT_TIMEOUT_MS
 * (dead): a handle needs two looks that far apart to judge another host. */
#include <stdlib.h>
#include <string.h>
#include "window.h"

/* What this handle has seen of a count: the age in ms (-1 unknown) and
 * alive (1, 0, -1 unknown).  key is what the count belongs to (the
 * generation, a queue's epoch): a new key starts afresh. */
void smq_observe(struct smq_observation *o, uint64_t count, uint64_t key,
		 int64_t *age_ms, int *alive)
{
	const uint64_t timeout = SMQ_HEARTBEAT_TIMEOUT_MS * 1000000ull;
	uint64_t now = smq_now_ns();

	if (!o->looked_ns || o->generation != key) {
		*o = (struct smq_observation){ count, now, now, key, false,
					       count };
		*age_ms = -1;
		*alive = -1;
		return;
	}
	if (o->count != count) {
		/* it moved since the last look: when, we know to within that */
		bool recent = now - o->looked_ns <= timeout;
		*age_ms = recent ? (int64_t)((now - o->looked_ns) / 1000000) : -1;
		*alive = recent ? 1 : -1;
		*o = (struct smq_observation){ count, now, now, key, recent,
					       count > o->most ? count : o->most };
		return;
	}
	o->looked_ns = now;
	uint64_t still = now - o->since_ns;
	if (still >= timeout) {
		*alive = 0;
		*age_ms = (int64_t)(still / 1000000);
	} else {
		*alive = o->moving ? 1 : -1;
		*age_ms = o->moving ? (int64_t)(still / 1000000) : -1;
	}
}

static const struct smq_board_slot *board_slot(struct smq_window *w,
					       unsigned b)
{
	return smq_snapshot_at(w, lay_slot(b), sizeof(struct smq_board_slot));
}

/* The board's heartbeat, as this handle has seen it move (the board
 * table is this generation's: every init and clear empties it). */
static int heartbeat_alive(struct smq_window *w, unsigned b, int64_t *age_ms)
{
	const struct smq_sb *sb = smq_snapshot_at(w, 0, SMQ_SB_SIZE);
	int alive;

	smq_observe(&w->obs[b], LOAD(&board_slot(w, b)->heartbeat),
		    LOAD(&sb->generation), age_ms, &alive);
	return alive;
}

/* A process of board b named by tag, with its host's boot: 1, 0, or -1
 * (another host: the board's heartbeat, hb, tells for all of them). */
static int process_alive(struct smq_window *w, uint64_t tag, uint64_t boot,
			 int hb)
{
	if (!tag)
		return 0;
	if (boot == w->boot)
		return smq_tag_alive(tag);
	return hb;
}

struct board_work {
	int alive, activity;
	int64_t age_ms;
	uint32_t handles, queue_handles, dead_handles;
};

/* Board b's handles, counted by whether their processes live. */
static void judge_board(struct smq_window *w, unsigned b, struct board_work *bw)
{
	const struct smq_ctl *c = smq_snapshot_at(w, lay_ctl(b), SMQ_CTL_SIZE);
	const struct smq_handle_slot *h;
	bool here = false;

	memset(bw, 0, sizeof(*bw));
	int hb = heartbeat_alive(w, b, &bw->age_ms);
	if (c) {
		SMQ_EACH_SLOT(h, c) {
			uint64_t tag = LOAD(&h->tag);
			if (!tag)
				continue;
			TEST_HOOK(SMQ_HOOK_JUDGE);
			int a = process_alive(w, tag, LOAD(&h->boot), hb);
			/* a process that closed and exited since we read its
			 * tag looks dead too; its close cleared the tag before
			 * it exited, so it died holding the slot only if the
			 * tag is still there */
			if (a == 0) {
				if (LOAD_ACQ(&h->tag) == tag)
					bw->dead_handles++;
				continue;
			}
			here |= a > 0 && LOAD(&h->boot) == w->boot;
			bw->handles++;
			bw->queue_handles += LOAD(&h->kind) == SMQ_SLOT_QUEUE;
		}
	}
	/* a live process of this host says for the board; else its
	 * heartbeat, if anyone is attached at all */
	bw->alive = here ? 1 : bw->handles ? hb : 0;
	if (bw->handles && bw->alive)
		bw->activity = bw->alive < 0 ? SMQ_ACTIVITY_UNKNOWN
			       : bw->queue_handles ? SMQ_ACTIVITY_WORKING
			       : SMQ_ACTIVITY_ATTACHED;
	else
		bw->activity = bw->dead_handles ? SMQ_ACTIVITY_DEAD
			       : SMQ_ACTIVITY_NONE;
}

int smq_board_activity(struct smq_window *w, unsigned b)
{
	struct board_work bw;

	pthread_mutex_lock(&w->follow_lock);
	judge_board(w, b, &bw);
	pthread_mutex_unlock(&w->follow_lock);
	return bw.activity;
}

static int board_info(struct smq_window *w, unsigned board,
		      struct smq_board_info *info)
{
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	if (board >= w->lay.boards)
		return -EINVAL;
	const struct smq_board_slot *s = board_slot(w, board);
	struct board_work bw;
	memset(info, 0, sizeof(*info));
	info->state = LOAD(&s->state);
	info->pid = smq_tag_pid(LOAD(&s->tag));
	info->generation = LOAD(&s->generation);
	info->heartbeat = LOAD(&s->heartbeat);
	info->boot = LOAD(&s->boot);
	info->same_host = info->boot && info->boot == w->boot;
	info->doorbell.kind = LOAD(&s->bell.kind);
	info->doorbell.peer = LOAD(&s->bell.peer);
	info->doorbell.vector = LOAD(&s->bell.vector);
	memcpy(info->host, s->host, sizeof(info->host));
	info->host[sizeof(info->host) - 1] = 0;
	info->announces = LOAD(&s->announces);
	judge_board(w, board, &bw);
	/* The count, as the board's processes store it, can step back: two
	 * of them each count a beat in the board's memory, then store it in
	 * this slot, and the first may store last.  What this handle shows
	 * never goes back within a generation (a counter to Prometheus). */
	if (w->obs[board].most > info->heartbeat)
		info->heartbeat = w->obs[board].most;
	info->alive = bw.alive;
	info->heartbeat_age_ms = bw.age_ms;
	info->activity = bw.activity;
	info->handles = bw.handles;
	info->queue_handles = bw.queue_handles;
	info->dead_handles = bw.dead_handles;
	uint64_t ann = LOAD(&s->announcer);
	if (process_alive(w, ann, info->boot, bw.alive) != 0)
		info->announcer_pid = smq_tag_pid(ann);
	if (w->lay.journal) {
		const struct smq_journal_head *h = smq_snapshot_at(w,
			lay_journal(&w->lay, board), SMQ_LINE);
		info->journal_slots = w->lay.journal;
		info->journal_head = h ? LOAD(&h->head) : 0;
		info->journal_incarnation = h ? LOAD(&h->incarnation) : 0;
	}
	return smq_stale(w);
}

static int board_fill(struct smq_window *w, unsigned board, unsigned unused,
		      void *info)
{
	(void)unused;
	return board_info(w, board, info);
}

int smq_board_info(struct smq_window *w, unsigned board,
		   struct smq_board_info *out, size_t size)
{
	struct smq_board_info info;

	return smq_snapshot_call(w, board_fill, board, 0, &info, sizeof(info),
				 out, size, SMQ_LEAST_BOARD_INFO);
}

/* ---- receivers ---- */

static struct smq_queue_obs *queue_observation(struct smq_window *w,
					       const struct smq_layout *l,
					       unsigned q)
{
	if (w->qobs_n != l->queues) {
		free(w->qobs);
		w->qobs = calloc(l->queues, sizeof(*w->qobs));
		w->qobs_n = w->qobs ? l->queues : 0;
	}
	return w->qobs ? &w->qobs[q] : NULL;
}

void smq_judge_receiver(struct smq_window *w, const struct smq_layout *l,
			unsigned q, struct smq_queue_info *info)
{
	const struct smq_rx *rx = smq_snapshot_at(w, l->rx[q], SMQ_LINE);
	const struct smq_rx_info *ri =
		smq_snapshot_at(w, lay_rx_info(l, q), SMQ_LINE);
	uint64_t owner;
	bool waiting = LOAD(&ri->waiting), again = false;
	struct smq_queue_obs *qo = queue_observation(w, l, q);
	struct smq_observation *o = qo ? &qo->beats : NULL;
	int alive = -1, beating = -1;

	info->receiver_beats = LOAD(&ri->beats);
	info->receiver_opens = LOAD(&ri->opens);
	info->receiver_takeovers = LOAD(&ri->takeovers);
	info->epoch = LOAD(&rx->epoch);
	info->receiver_age_ms = -1;
	if (o)
		smq_observe(o, info->receiver_beats, info->epoch,
			    &info->receiver_age_ms, &beating);
look:
	owner = LOAD(&rx->owner);
	alive = beating;
	if (!owner) {
		info->receiver_state = SMQ_RECEIVER_NONE;
	} else if (LOAD(&ri->owner_boot) == w->boot) {
		TEST_HOOK(SMQ_HOOK_JUDGE);
		alive = smq_tag_alive(owner);
		/* closed since we read it (see judge_board) */
		if (!alive && !again && LOAD_ACQ(&rx->owner) != owner) {
			again = true;  /* it closed: the word says what now */
			goto look;
		}
	} else if (alive == 0 && !waiting) {
		/* still, but not inside a call, where it would beat: its
		 * board's heartbeat says whether its processes live */
		struct board_work bw;
		judge_board(w, l->receiver[q], &bw);
		alive = bw.alive;
	} else if (alive < 0) {
		struct board_work bw;
		judge_board(w, l->receiver[q], &bw);
		alive = bw.activity == SMQ_ACTIVITY_DEAD ? 0 : -1;
	}
	if (owner)
		info->receiver_state = alive == 0 ? SMQ_RECEIVER_DEAD
				       : alive < 0 ? SMQ_RECEIVER_UNKNOWN
				       : waiting ? SMQ_RECEIVER_WAITING
				       : SMQ_RECEIVER_AWAY;
	info->receiver_pid = smq_tag_pid(owner);
	info->receiver_alive = !owner ? 0 : alive;
	info->receiver_stopped = owner && alive > 0 &&
				 LOAD(&ri->owner_boot) == w->boot
				 ? smq_tag_stopped(owner) : -1;
}

/* A queue is stalled when this handle has seen it hold messages with its
 * bottom unmoved for the stall time, on its own clock: whatever the
 * receiver's state word says (a receiver stopped in its wait still says
 * it waits), and whoever wrote that word (another host's clock is never
 * read).  A queue first seen holding messages has been seen so for 0 ms. */
void smq_judge_stall(struct smq_window *w, const struct smq_layout *l,
		     unsigned q, struct smq_queue_info *info)
{
	struct smq_queue_obs *o = queue_observation(w, l, q);
	uint64_t now = smq_now_ns();

	info->stalled_ms = 0;
	info->stalled = 0;
	if (!o)
		return;
	if (!info->queued) {
		o->held_since_ns = 0;
	} else if (!o->held_since_ns || o->bottom != info->bottom ||
		   o->epoch != info->epoch) {
		o->held_since_ns = now;
	} else {
		info->stalled_ms = (int64_t)((now - o->held_since_ns) / 1000000);
		info->stalled = info->stalled_ms >= w->stall_ms;
	}
	o->bottom = info->bottom;
	o->epoch = info->epoch;
}

/* ---- workers ---- */

/* Calls fn for each handle of a process other than except that is not
 * known dead; stops at fn's first non-zero return. */
static int each_worker(struct smq_window *w, const struct smq_layout *l,
		       uint64_t except,
		       int (*fn)(const struct smq_worker *, void *), void *arg)
{
	for (unsigned b = 0; b < l->boards; b++) {
		const struct smq_ctl *c =
			smq_snapshot_at(w, lay_ctl(b), SMQ_CTL_SIZE);
		const struct smq_board_slot *s = board_slot(w, b);
		int64_t age;
		int hb = heartbeat_alive(w, b, &age);
		const struct smq_handle_slot *h;
		if (!c)
			continue;
		SMQ_EACH_SLOT(h, c) {
			uint64_t tag = LOAD(&h->tag), boot = LOAD(&h->boot);
			int a = process_alive(w, tag, boot, hb);
			if (!tag || tag == except || a == 0)
				continue;
			struct smq_worker wk = {
				.board = b, .pid = smq_tag_pid(tag),
				.queue = SMQ_NO_QUEUE, .alive = a,
				.in_call = LOAD(&h->busy) != 0,
				.same_host = boot == w->boot,
			};
			if (LOAD(&h->kind) == SMQ_SLOT_QUEUE) {
				wk.queue = LOAD(&h->queue);
				wk.role = LOAD(&h->role);
			}
			memcpy(wk.host, s->host, sizeof(wk.host) - 1);
			int r = fn(&wk, arg);
			if (r)
				return r;
		}
	}
	return 0;
}

struct worker_list {
	uint8_t *list;
	unsigned max, n;
	size_t size;
};

static int add_worker(const struct smq_worker *wk, void *arg)
{
	struct worker_list *wl = arg;

	if (wl->n < wl->max)
		smq_struct_out(wl->list + wl->n * wl->size, wl->size, wk,
			       sizeof(*wk));
	wl->n++;
	return 0;
}

static int workers_fill(struct smq_window *w, unsigned unused1,
			unsigned unused2, void *arg)
{
	(void)unused1;
	(void)unused2;
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	each_worker(w, &w->lay, 0, add_worker, arg);
	return smq_stale(w);
}

int smq_workers(struct smq_window *w, struct smq_worker *list, unsigned max,
		size_t size)
{
	struct worker_list wl = { (uint8_t *)list, max, 0, size };
	int unused;

	if (!w || (max && (!list || size < SMQ_LEAST_WORKER)))
		return -EINVAL;
	int err = smq_snapshot_call(w, workers_fill, 0, 0, &wl, 0, &unused,
				    sizeof(unused), sizeof(unused));
	return err && err != -ESTALE ? err : (int)wl.n;
}

/* ---- maintenance: is anyone at work on what it would empty? ---- */

struct at_work {
	struct smq_window *w;
	int only;
};

static int found_worker(const struct smq_worker *wk, void *arg)
{
	struct at_work *aw = arg;
	struct smq_holdout *h = &aw->w->holdout;

	if (!wk->role || (aw->only >= 0 && wk->queue != (uint32_t)aw->only))
		return 0;
	memset(h, 0, sizeof(*h));
	h->board = wk->board;
	h->pid = wk->pid;
	h->same_host = wk->same_host;
	memcpy(h->host, wk->host, sizeof(h->host));
	h->queue = wk->queue == SMQ_NO_QUEUE ? -1 : (int)wk->queue;
	return -SMQ_EATWORK;
}

static int known_worker(const struct smq_worker *wk, void *arg)
{
	int only = *(const int *)arg;

	if (!wk->role || (only >= 0 && wk->queue != (uint32_t)only))
		return 0;
	return wk->alive > 0;
}

bool smq_at_work_known(struct smq_window *w, const struct smq_layout *l,
		       int only)
{
	pthread_mutex_lock(&w->follow_lock);
	bool known = each_worker(w, l, w->tag, known_worker, &only) != 0;
	for (unsigned q = 0; !known && q < l->queues; q++) {
		struct smq_queue_info qi;
		if (only >= 0 && q != (unsigned)only)
			continue;
		const struct smq_rx *rx = smq_snapshot_at(w, l->rx[q], SMQ_LINE);
		if (LOAD(&rx->owner) == w->tag)
			continue;
		memset(&qi, 0, sizeof(qi));
		smq_judge_receiver(w, l, q, &qi);
		known = qi.receiver_alive > 0 &&
			qi.receiver_state != SMQ_RECEIVER_NONE;
	}
	pthread_mutex_unlock(&w->follow_lock);
	return known;
}

/* -SMQ_EATWORK (the holdout names the first) if a process other than
 * ours has a queue handle open, of queue only if only >= 0, or a claim as
 * a receiver, and is not known to be dead; l is the window's layout as
 * it is now, mapped. */
int smq_check_at_work(struct smq_window *w, const struct smq_layout *l,
		      int only)
{
	struct at_work aw = { w, only };

	pthread_mutex_lock(&w->follow_lock);
	int err = each_worker(w, l, w->tag, found_worker, &aw);
	for (unsigned q = 0; !err && q < l->queues; q++) {
		struct smq_queue_info qi;
		if (only >= 0 && q != (unsigned)only)
			continue;
		memset(&qi, 0, sizeof(qi));
		smq_judge_receiver(w, l, q, &qi);
		const struct smq_rx *rx = smq_snapshot_at(w, l->rx[q], SMQ_LINE);
		const struct smq_rx_info *ri =
			smq_snapshot_at(w, lay_rx_info(l, q), SMQ_LINE);
		if (qi.receiver_state == SMQ_RECEIVER_NONE ||
		    qi.receiver_state == SMQ_RECEIVER_DEAD ||
		    LOAD(&rx->owner) == w->tag)
			continue;
		unsigned b = l->receiver[q];
		memset(&w->holdout, 0, sizeof(w->holdout));
		w->holdout.board = b;
		w->holdout.queue = (int)q;
		w->holdout.pid = qi.receiver_pid;
		w->holdout.same_host = LOAD(&ri->owner_boot) == w->boot;
		memcpy(w->holdout.host, board_slot(w, b)->host,
		       sizeof(w->holdout.host) - 1);
		err = -SMQ_EATWORK;
	}
	pthread_mutex_unlock(&w->follow_lock);
	return err;
}
