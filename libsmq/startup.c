/* Board startup (the SimpleMessageQueue paper's boardInitialized and
 * synchronize), heartbeats, and whether a board lives.
 *
 * A board lives while its heartbeat count moves.  How long it has not
 * moved is measured on the observer's own monotonic clock, as the time
 * since this process last saw it change: clocks of different hosts are
 * never compared. */
#include <stdlib.h>
#include <string.h>
#include "handle.h"

static struct smq_far slot_far(struct smq_window *w, unsigned b)
{
	return smq_far(w, lay_slot(b));
}

/* Inside a call (entered): count a beat in our own memory and show it in
 * our slot of the board table, with who we are once per generation. */
void smq_beat(struct smq_window *w)
{
	struct smq_far s = slot_far(w, w->board);
	uint64_t n = __atomic_add_fetch(&w->ctl->local.beats, 1,
					__ATOMIC_RELAXED);

	/* once per generation; threads sharing the handle race for it */
	if (__atomic_exchange_n(&w->host_written, w->generation,
				__ATOMIC_ACQ_REL) != w->generation) {
		struct smq_bell_addr a = { 0 };
		const struct smq_transport *tp = w->map.tp;
		if (tp->bell_open && !tp->bell_open(&w->map, &a) &&
		    tp->bell_close)
			tp->bell_close(&w->map, &a);
		smq_far_copy(s, offsetof(struct smq_board_slot, host), w->host,
			     sizeof(w->host));
		smq_far_copy(s, offsetof(struct smq_board_slot, bell), &a,
			     sizeof(a));
		FAR_STORE(s, struct smq_board_slot, boot, w->boot);
	}
	FAR_STORE(s, struct smq_board_slot, tag, w->tag);
	FAR_STORE(s, struct smq_board_slot, heartbeat, n);
}

void smq_beat_outside(struct smq_window *w)
{
	if (!smq_enter(w)) {
		smq_beat(w);
		smq_leave(w);
	}
}

int smq_heartbeat(struct smq_window *w)
{
	int err = smq_enter(w);

	if (!err) {
		smq_beat(w);
		smq_leave(w);
	}
	return err;
}

static int announce(struct smq_window *w)
{
	struct smq_far s = slot_far(w, w->board);

	if (FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot, generation) ==
		    w->generation &&
	    FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot, state) !=
		    SMQ_BOARD_ABSENT) {
		smq_beat(w);
		return 0;
	}
	FAR_STORE(s, struct smq_board_slot, generation, w->generation);
	smq_beat(w);  /* host, boot and tag too */
	w->map.order->publish();
	FAR_STORE_REL(s, struct smq_board_slot, state, SMQ_BOARD_INITIALIZED);
	return 0;
}

int smq_announce(struct smq_window *w)
{
	int err = smq_enter(w);

	if (!err) {
		err = announce(w);
		smq_leave(w);
	}
	return err;
}

/* Boards that have not announced themselves under this generation. */
static uint64_t missing_boards(struct smq_window *w)
{
	uint64_t pending = 0;

	for (unsigned b = 0; b < w->lay.boards; b++) {
		struct smq_far s = slot_far(w, b);
		if (FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot,
			     state) == SMQ_BOARD_ABSENT ||
		    FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot,
			     generation) != w->generation)
			pending |= 1ull << b;
	}
	return pending;
}

/* The superblock first: a board that sees its notice ready sees it too. */
static void declare_ready(struct smq_window *w)
{
	struct smq_sb *sb = smq_map_at(&w->map, 0, SMQ_SB_SIZE);

	STORE_REL(&sb->system_state, SMQ_SYS_READY);
	for (unsigned b = 0; b < w->lay.boards; b++)
		FAR_STORE_REL(smq_far(w, lay_ctl(b)), struct smq_ctl,
			      notice.system_state, SMQ_SYS_READY);
}

/* One look: 0 when synchronised (and our state says ready), else the
 * boards still missing (bit 0 alone, on another board: board 0 has not
 * declared the system ready). */
static int sync_step(struct smq_window *w, uint64_t *missing)
{
	int err = smq_enter(w);

	if (err)
		return err;
	if (w->board == 0) {
		*missing = missing_boards(w);
		if (!*missing)
			declare_ready(w);
	} else {
		/* only our own notice is polled: a local read */
		*missing = LOAD_ACQ(&w->ctl->notice.system_state) ==
			   SMQ_SYS_READY ? 0 : 1;
	}
	if (!*missing)
		FAR_STORE_REL(slot_far(w, w->board), struct smq_board_slot,
			      state, SMQ_BOARD_READY);
	else
		smq_beat(w);
	smq_leave(w);
	return 0;
}

/* The handle attached under an earlier start's generation: wait until
 * board 0 formats the window anew, then attach to that.  The handle keeps
 * its in-flight mark's slot (in our control block, which no geometry
 * moves): board 0 waits for any busy mark, whatever generation it was
 * set under, so another thread's call on this handle stays covered. */
static int await_new_generation(struct smq_window *w, int timeout_ms,
				const struct timespec *deadline, int poll_ms)
{
	uint64_t old = w->generation;

	for (;;) {
		if (smq_stale(w)) {
			/* the snapshots of other threads read the layout that
			 * attaching replaces */
			pthread_mutex_lock(&w->follow_lock);
			int err = smq_attach(w);
			pthread_mutex_unlock(&w->follow_lock);
			/* an init that has told the boards but not yet written
			 * leaves the old layout to attach to: not yet */
			if (!err && w->generation != old && !smq_stale(w)) {
				w->host_written = 0;
				return 0;
			}
			if (err && err != -EBUSY && err != -ESTALE &&
			    err != -SMQ_EUNFORMATTED &&
			    err != -SMQ_EINCOMPLETE)
				return err;
		}
		if (timeout_ms >= 0 && smq_past(deadline))
			return -ETIMEDOUT;
		smq_sleep_ms(poll_ms);
	}
}

int smq_synchronize(struct smq_window *w, unsigned flags, int timeout_ms,
		    int poll_ms, uint64_t *pending)
{
	struct timespec deadline;
	uint64_t missing = 0;
	int err;

	if (pending)
		*pending = 0;
	if (!w || (flags & ~(unsigned)SMQ_SYNC_NEW_GENERATION))
		return -EINVAL;
	if (w->readonly)
		return -EROFS;
	if (poll_ms <= 0)
		poll_ms = 10;
	if (timeout_ms >= 0)
		smq_deadline(&deadline, timeout_ms);
	if (flags & SMQ_SYNC_NEW_GENERATION) {
		if (LOAD(&w->queues_open))
			return -EBUSY;
		err = await_new_generation(w, timeout_ms, &deadline, poll_ms);
		if (err == -ETIMEDOUT && pending)
			*pending = 1;  /* board 0 has not formatted anew */
		if (err)
			return err;
	}
	if ((err = smq_announce(w)))
		return err;
	for (;;) {
		if ((err = sync_step(w, &missing)))
			return err;
		if (!missing)
			return 0;
		if (timeout_ms >= 0 && smq_past(&deadline))
			break;
		smq_sleep_ms(poll_ms);
	}
	if (pending) {
		*pending = w->board == 0 ? missing : missing_boards(w);
		if (!*pending)
			*pending = 1;  /* all announced: board 0 has not declared */
	}
	return -ETIMEDOUT;
}

/* ---- is a board alive? ---- */

/* What this process has seen of board b's heartbeat: the age in ms (-1
 * unknown) and alive (1, 0, -1 unknown).  First seen at a count: unknown
 * until it moves (alive) or the timeout passes without a move (dead). */
static void observe(struct smq_window *w, unsigned b, uint64_t count,
		    int64_t *age_ms, int *alive)
{
	struct smq_observation *o = &w->obs[b];
	const uint64_t timeout = SMQ_HEARTBEAT_TIMEOUT_MS * 1000000ull;
	uint64_t now = smq_now_ns();

	if (!o->looked_ns || o->generation != w->generation) {
		*o = (struct smq_observation){ count, now, now, w->generation,
					       false };
		*age_ms = -1;
		*alive = -1;
		return;
	}
	if (o->count != count) {
		/* it moved since the last look: when, we know to within that */
		bool recent = now - o->looked_ns <= timeout;
		*age_ms = recent ? (int64_t)((now - o->looked_ns) / 1000000) : -1;
		*alive = recent ? 1 : -1;
		*o = (struct smq_observation){ count, now, now, w->generation,
					       recent };
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

static int board_info(struct smq_window *w, unsigned board,
		      struct smq_board_info *info)
{
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	if (board >= w->lay.boards)
		return -EINVAL;
	const struct smq_board_slot *s =
		smq_snapshot_at(w, lay_slot(board), sizeof(*s));
	memset(info, 0, sizeof(*info));
	info->state = LOAD(&s->state);
	uint64_t tag = LOAD(&s->tag);
	info->pid = smq_tag_pid(tag);
	info->generation = LOAD(&s->generation);
	info->heartbeat = LOAD(&s->heartbeat);
	info->same_host = LOAD(&s->boot) && LOAD(&s->boot) == w->boot;
	info->doorbell.kind = LOAD(&s->bell.kind);
	info->doorbell.peer = LOAD(&s->bell.peer);
	info->doorbell.vector = LOAD(&s->bell.vector);
	memcpy(info->host, s->host, sizeof(info->host));
	info->host[sizeof(info->host) - 1] = 0;
	/* The board table is emptied by every init and clear: whatever is in
	 * a slot is this generation's. */
	info->heartbeat_age_ms = -1;
	if (info->state == SMQ_BOARD_ABSENT && !tag) {
		info->alive = 0;
	} else {
		observe(w, board, info->heartbeat, &info->heartbeat_age_ms,
			&info->alive);
		/* on this host the process that last beat tells exactly: any
		 * process of the board that beats puts its own tag there */
		if (info->same_host)
			info->alive = smq_tag_alive(tag);
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
				 out, size);
}
