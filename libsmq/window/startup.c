/* Board startup (the SimpleMessageQueue paper's boardInitialized and
 * synchronize), heartbeats, and whether a board lives.
 *
 * A board lives while its heartbeat count moves.  How long it has not
 * moved is measured on the observer's own monotonic clock, as the time
 * since this process last saw it change: clocks of different hosts are
 * never compared. */
#include <stdlib.h>
#include <string.h>
#include "window.h"
#include "journal.h"

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

/* The process announcing a board may be waiting in sync: a live one is
 * not replaced.  It is a process of this board, so of this host, unless
 * the board rebooted since (then it is gone). */
static bool announcer_alive(struct smq_window *w, struct smq_far s,
			    uint64_t holder)
{
	return holder && holder != w->tag &&
	       FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot, boot) ==
		       w->boot &&
	       smq_tag_alive(holder);
}

/* An announcement of the board: its slot's edge counter (an observer that
 * looks seldom still sees that the board came, went and came again), and
 * the board's journal. */
static void count_announce(struct smq_window *w, struct smq_far s)
{
	uint32_t n = FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot,
			      announces) + 1;

	FAR_STORE(s, struct smq_board_slot, announces, n);
	smq_journal(w, SMQ_JOURNAL_ANNOUNCE, 0, SMQ_NO_QUEUE, 0, n, 0);
}

/* The paper's boardInitialized.  A sync (claim) also takes the role of
 * the board's announcer until it sees the system ready or gives up: a
 * second live one is refused.  A plain announce claims nothing. */
static int announce(struct smq_window *w, bool claim)
{
	struct smq_far s = slot_far(w, w->board);
	uint32_t state = FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot,
				  state);

	if (FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot, generation) ==
		    w->generation && state != SMQ_BOARD_ABSENT) {
		/* announced: once ready, a cheap no-op; before, one process
		 * announces, and a live one is not taken over */
		uint64_t holder = FAR_LOAD(w, SMQ_FAR_STARTUP, s,
					   struct smq_board_slot, announcer);
		if (state == SMQ_BOARD_INITIALIZED && claim) {
			if (announcer_alive(w, s, holder)) {
				memset(&w->holdout, 0, sizeof(w->holdout));
				w->holdout.board = w->board;
				w->holdout.pid = smq_tag_pid(holder);
				w->holdout.same_host = 1;
				w->holdout.queue = -1;
				memcpy(w->holdout.host, w->host,
				       sizeof(w->holdout.host) - 1);
				return -EBUSY;
			}
			/* a new process announcing in the place of one that
			 * is gone: an announcement too */
			if (holder && holder != w->tag)
				count_announce(w, s);
			FAR_STORE(s, struct smq_board_slot, announcer, w->tag);
		} else if (state == SMQ_BOARD_INITIALIZED && holder &&
			   holder != w->tag && !announcer_alive(w, s, holder)) {
			/* announced again, without the role, in the place of
			 * an announcer that is gone */
			count_announce(w, s);
			FAR_STORE(s, struct smq_board_slot, announcer, 0);
		}
		smq_beat(w);
		return 0;
	}
	FAR_STORE(s, struct smq_board_slot, generation, w->generation);
	FAR_STORE(s, struct smq_board_slot, announcer, claim ? w->tag : 0);
	count_announce(w, s);
	smq_beat(w);  /* host, boot and tag too */
	w->map.order->publish();
	FAR_STORE_REL(s, struct smq_board_slot, state, SMQ_BOARD_INITIALIZED);
	return 0;
}

int smq_announce(struct smq_window *w)
{
	int err = smq_enter(w);

	if (!err) {
		err = announce(w, false);
		smq_leave(w);
	}
	return err;
}

static int announce_claiming(struct smq_window *w)
{
	int err = smq_enter(w);

	if (!err) {
		err = announce(w, true);
		smq_leave(w);
	}
	return err;
}

/* An announced board's announcer (a sync of it, not yet ready) that died:
 * the board is not there, whatever process of it attaches since, until
 * one announces it again.  One of another host is judged by the board's
 * heartbeat instead.  A sync that saw the system ready stores the board
 * ready, then lets the role go, and its process may end at once: one gone
 * between our reads and our look at it finished, unless the board is
 * still announced by it. */
static bool announcer_died(struct smq_window *w, struct smq_far s)
{
	uint64_t holder = FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot,
				   announcer);

	if (!holder ||
	    FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot, state) !=
		    SMQ_BOARD_INITIALIZED ||
	    FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot, boot) !=
		    w->boot)
		return false;
	TEST_HOOK(SMQ_HOOK_ANNOUNCER);
	if (smq_tag_alive(holder))
		return false;
	w->map.order->consume();
	return FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot, state) ==
		       SMQ_BOARD_INITIALIZED &&
	       FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot,
			announcer) == holder;
}

/* Boards that have not announced themselves under this generation, or
 * whose processes died since (its announcer among them), or that this
 * handle cannot judge yet (another host, its heartbeat not seen long
 * enough). */
static uint64_t missing_boards(struct smq_window *w)
{
	uint64_t pending = 0;

	for (unsigned b = 0; b < w->lay.boards; b++) {
		struct smq_far s = slot_far(w, b);
		int activity;
		if (FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot,
			     state) == SMQ_BOARD_ABSENT || announcer_died(w, s) ||
		    FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot,
			     generation) != w->generation ||
		    (activity = smq_board_activity(w, b)) == SMQ_ACTIVITY_DEAD ||
		    activity == SMQ_ACTIVITY_UNKNOWN)
			pending |= 1ull << b;
	}
	return pending;
}

/* The superblock first: a board that sees its notice ready sees it too. */
static void declare_ready(struct smq_window *w)
{
	struct smq_sb *sb = smq_map_at(&w->map, 0, SMQ_SB_SIZE);

	/* once: a sync of a ready window is a cheap no-op, not an event */
	if (LOAD(&sb->system_state) != SMQ_SYS_READY)
		smq_journal(w, SMQ_JOURNAL_READY, 0, SMQ_NO_QUEUE, 0,
			    w->lay.boards, 0);
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
	struct smq_far s = slot_far(w, w->board);
	if (!*missing) {
		FAR_STORE_REL(s, struct smq_board_slot, state, SMQ_BOARD_READY);
		/* announcing is done: the role ends with it */
		if (FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot,
			     announcer) == w->tag)
			FAR_STORE(s, struct smq_board_slot, announcer, 0);
	} else {
		smq_beat(w);
	}
	smq_leave(w);
	return 0;
}

/* A sync that gave up takes its announcement back, so that board 0 does
 * not count a board nobody is starting (*took: it did).  If board 0
 * declared the system ready meanwhile (it counted us), the board is ready
 * after all: 1. */
static int withdraw(struct smq_window *w, bool *took)
{
	struct smq_far s = slot_far(w, w->board);
	int ready = 0;

	*took = false;
	if (smq_enter(w))
		return 0;
	if (FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot, announcer) ==
		    w->tag &&
	    FAR_LOAD(w, SMQ_FAR_STARTUP, s, struct smq_board_slot, state) ==
		    SMQ_BOARD_INITIALIZED) {
		FAR_STORE_REL(s, struct smq_board_slot, state, SMQ_BOARD_ABSENT);
		FAR_STORE(s, struct smq_board_slot, announcer, 0);
		*took = true;
		w->map.order->full();
		if (w->board != 0 && LOAD_ACQ(&w->ctl->notice.system_state) ==
				     SMQ_SYS_READY) {
			FAR_STORE_REL(s, struct smq_board_slot, state,
				      SMQ_BOARD_READY);
			ready = 1;
		}
	}
	smq_leave(w);
	return ready;
}

/* A pause between looks: poll_ms, but never past the deadline (NULL:
 * none), so that a timeout is kept to within a look.  -EINTR: a signal
 * handler ran, which ends the wait. */
static int nap(int poll_ms, const struct timespec *deadline)
{
	int left = deadline ? smq_ms_left(deadline) : poll_ms;
	return smq_sleep_ms(left < poll_ms ? (left > 0 ? left : 1) : poll_ms);
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
		int err = nap(poll_ms, timeout_ms >= 0 ? deadline : NULL);
		if (err)
			return err;
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
	if (!w || (flags & ~(unsigned)(SMQ_SYNC_NEW_GENERATION | SMQ_SYNC_STAY)))
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	if (w->readonly)
		return -EROFS;
	if (poll_ms <= 0)
		poll_ms = 10;
	/* a board of another host is judged by its heartbeat seen to move
	 * between two looks less than the heartbeat timeout apart */
	if (poll_ms > SMQ_HEARTBEAT_TIMEOUT_MS / 2)
		poll_ms = SMQ_HEARTBEAT_TIMEOUT_MS / 2;
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
	if ((err = announce_claiming(w)))
		return err;
	/* a signal ends the wait as its deadline would */
	int why = -ETIMEDOUT;
	for (;;) {
		if ((err = sync_step(w, &missing)))
			return err;
		if (!missing)
			return 0;
		if (timeout_ms >= 0 && smq_past(&deadline))
			break;
		if ((why = nap(poll_ms, timeout_ms >= 0 ? &deadline : NULL)))
			break;
		why = -ETIMEDOUT;
	}
	uint64_t left = w->board == 0 ? missing : missing_boards(w);
	if (!left)
		left = 1;  /* all announced: board 0 has not declared */
	if (pending)
		*pending = left;
	/* a slice that stays announced has not given up: its caller looks
	 * again (and says so, in the journal too, when it does give up) */
	if (flags & SMQ_SYNC_STAY)
		return why;
	bool took;
	if (withdraw(w, &took)) {
		if (pending)
			*pending = 0;
		return 0;
	}
	smq_journal(w, SMQ_JOURNAL_GAVE_UP, 0, SMQ_NO_QUEUE, 0, left, took);
	return why;
}
