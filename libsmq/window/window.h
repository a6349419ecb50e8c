/* libsmq internals: window and queue handles, and how they reach memory.
 * Not installed.
 *
 * Near memory is this board's own region: read and written through plain
 * pointers.  Far memory is another board's region: written through
 * struct smq_far only (base/far.h).  A far read is a named exception,
 * counted in test builds (SMQ_COUNT_FAR), never on the message path. */
#ifndef SMQ_WINDOW_H
#define SMQ_WINDOW_H

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include "base/clock.h"
#include "base/far.h"
#include "base/identity.h"
#include "format/abi.h"
#include "format/format.h"
#include "format/hook.h"
#include "format/view.h"
#include "transport/transport.h"

/* What this process last saw of a board's heartbeat, on this host's own
 * monotonic clock (never another host's). */
struct smq_observation {
	uint64_t count;         /* heartbeat count last seen */
	uint64_t since_ns;      /* when it was first seen at that count */
	uint64_t looked_ns;     /* when we last looked */
	uint64_t generation;    /* of the window, when seen */
	bool moving;            /* since_ns is when it moved, not a first look */
	uint64_t most;          /* the greatest count seen under generation */
};

/* What this process saw of a queue: its receiver's heartbeat, and since
 * when it has held messages with its bottom unmoved (0: it did not). */
struct smq_queue_obs {
	struct smq_observation beats;
	uint64_t bottom, epoch;
	uint64_t held_since_ns;
};

struct smq_window {
	struct smq_map map;
	unsigned board;         /* a monitor's is 0: it reads as board 0 */
	bool valid;             /* attached to a validated layout */
	bool readonly;          /* a monitor (SMQ_OPEN_READONLY): no board,
				   no slot, no control block, never writes */
	uint64_t generation;    /* the generation we attached under */
	uint64_t check;         /* smq_notice_check(generation, board) */
	struct smq_layout lay;
	struct smq_ctl *ctl;    /* our control block (near) */
	struct smq_handle_slot *slot; /* our in-flight mark, or NULL */
	uint64_t tag, boot;     /* this process */
	uint64_t host_written;  /* generation whose board slot has our name */
	int handshake_ms;
	unsigned long forks;    /* smq_forks when opened (smq_inherited()) */
	unsigned queues_open;   /* queue handles on this window handle */
	pthread_mutex_t follow_lock; /* attaching again (a monitor following
				   the window, sync's new generation) against
				   the snapshots of other threads */
	struct smq_holdout holdout;
	struct smq_emptied emptied; /* of the last init or clear, or dry run */
	struct smq_observation obs[SMQ_MAX_BOARDS];
	struct smq_queue_obs *qobs; /* [qobs_n]: what we saw of each queue */
	unsigned qobs_n;
	int stall_ms;           /* SMQ_TIMEOUT_STALL */
	char host[64];
#ifdef SMQ_COUNT_FAR
	uint64_t far_loads[SMQ_FAR_WHYS];
	uint64_t near_misses;   /* near pointers asked for far memory */
#endif
};

struct smq_queue {
	struct smq_window *w;
	uint64_t generation;    /* the window's generation at open */
	uint64_t check;
	unsigned index;
	enum smq_role role;
	unsigned flags;
	unsigned spin_ns;
	uint32_t entries, entry_size;   /* this queue's shape */
	uint64_t stride;
	bool checksum;          /* entries carry a CRC-32C (feature) */
	struct smq_handle_slot *slot;   /* in-flight mark */
	bool slot_shared;       /* the window's: count, do not set */
	const uint64_t *epoch_word; /* the queue's notice of a clear, near:
				   the receiver's rx epoch, a sender's copy */
	struct smq_bell_addr bell;      /* our doorbell when we wait */
	bool has_bell;
	bool bell_lent;         /* a group's doorbell: the group closes it */
	/* sender: */
	struct smq_lane_out *out;       /* near */
	struct smq_lane_fc *fc;         /* near */
	struct smq_lane_wake *wake;     /* near */
	struct smq_far in, ask, ring, rbell;
	unsigned lane;          /* our lane of the queue */
	uint64_t bottom_seen;   /* the receiver's bottom as last read: the
				   ring is re-read only when this says full */
	uint32_t ahead;         /* how many entries on a send asks for the
				   lines of (smq_far_ahead(); 0: none) */
	bool may_skip;          /* feature membarrier, in a light order: a
				   send may leave out its barrier (send.c) */
	uint64_t epoch;         /* the queue's signature key */
	uint64_t rung_epoch;    /* last receiver sleep we rang for */
	uint64_t sleeper_alive; /* the last sleeper of our host found alive:
				   rung without looking again */
	uint64_t lock_tag;      /* this thread, for the lane lock */
	uint32_t ring_kinds;    /* what we can ring */
	/* a loan (smq_loan) is a call in flight: from the loan to its submit
	 * or abort the handle holds its mark and the lane lock */
	bool loaned;
	uint64_t loan_seq;      /* the entry lent */
	size_t loan_cap;        /* bytes lent */
	size_t loan_summed;     /* feature checksum: payload bytes summed by
				   smq_loan_write, in order from 0 */
	uint32_t loan_reg;      /* their CRC-32C register, begun at 0 */
	/* a full episode (the journal's FULL, then ROOM): open since a send
	 * met the lane full, until a look at the clock finds a second passed
	 * since the last look that found a send had met it full (send.c) */
	bool full_open;
	bool full_seen;         /* a send met the lane full since the last
				   look */
	uint32_t full_look;     /* sends until the next look */
	uint64_t full_last_ns;  /* the last look that found full_seen */
	uint64_t full_waits0;   /* the lane's counts when it began */
	uint32_t full_refusals0;
	/* receiver: */
	struct smq_rx *rx;              /* near */
	struct smq_rx_info *rx_info;    /* near */
	uint64_t *bottoms;              /* near */
	struct smq_bell *bell_word;     /* near */
	struct smq_lane_in *lanes;      /* near, [nlanes] */
	struct smq_lane_ask *asks;      /* near, [boards] */
	uint8_t *rings;                 /* near */
	unsigned nlanes;                /* one per sending board */
	uint8_t *lane_board;            /* [lanes] the board of each */
	struct smq_far *fcs;            /* [lanes] in the senders' regions */
	struct smq_far *wakes;          /* [lanes] */
	struct smq_far *outs;           /* [lanes], read only to arm */
	uint32_t *space_rung;           /* [lanes] last space_bell stored */
	const struct smq_entry **heads; /* [lanes] entry at each bottom */
	uint64_t *expect;               /* [lanes] its signature */
	uint64_t *keys;                 /* [lanes] the lane's signature key
					   (smq_signature_key) */
	uint64_t look_all_at;           /* when a wait next reads every
					   lane's top (a slice apart) */
	uint32_t cursor;                /* a lane */
	int peeked;             /* lane of the message smq_peek() holds, or -1 */
	uint64_t sleep_epoch;
	uint64_t owner_tag;
	bool polls;             /* told our senders we never sleep
				   (lane_wake.rx_polls; feature membarrier) */
	bool nap;               /* could not take that back: we nap, never
				   sleep on a bell */
};

/* ---- reaching memory ---- */

/* The segment that holds canonical [off, off + len), or NULL. */
static inline void *smq_map_at(const struct smq_map *m, uint64_t off,
			       uint64_t len)
{
	return smq_segments_at(m->seg, m->nseg, off, len);
}

/* A pointer into our own region.  In test builds, asking for another
 * board's memory here is counted (the split transport's test checks 0). */
void *smq_near(struct smq_window *w, uint64_t off, uint64_t len);
/* A write-only pointer into the region of board `board`; near memory is
 * wrapped the same way when a path writes both. */
static inline struct smq_far smq_far(struct smq_window *w, uint64_t off)
{
	return (struct smq_far){ (uint8_t *)smq_map_at(&w->map, off, 1) };
}

/* Diagnostics read anything: a const pointer, counted once. */
const void *smq_snapshot_at(struct smq_window *w, uint64_t off, uint64_t len);

/* A view of everything the window maps (validation, snapshots). */
static inline struct smq_view smq_window_view(const struct smq_window *w)
{
	return (struct smq_view){ w->map.seg, w->map.nseg };
}

/* ---- whose the handle is ---- */

/* The forks this process has been the child of (window.c counts them in
 * the child, pthread_atfork()): one count for the process, which is why
 * the library keeps it outside every handle. */
extern unsigned long smq_forks;
/* A handle serves the process that opened it.  A child of fork() has a
 * copy of the handle that names the parent's claims, marks, loans and lane
 * lock as its own: every call on it is refused (-EBADF) before it reads
 * or writes anything of the window, so that nothing the child does takes
 * them from the parent.  One load of a word of this process, no system
 * call (getpid() is one). */
static inline bool smq_inherited(const struct smq_window *w)
{
	return __atomic_load_n(&smq_forks, __ATOMIC_RELAXED) != w->forks;
}

/* ---- staleness and the in-flight mark ---- */

static inline int smq_stale_gen(const struct smq_window *w, uint64_t gen,
				uint64_t check)
{
	const struct smq_notice *n = &w->ctl->notice;
	return LOAD_ACQ(&n->generation) != gen || LOAD(&n->check) != check
	       ? -ESTALE : 0;
}

/* A monitor has no notice of its own: it reads the superblock's. */
int smq_monitor_stale(const struct smq_window *w);

static inline int smq_stale(const struct smq_window *w)
{
	if (w->readonly)
		return smq_monitor_stale(w);
	return smq_stale_gen(w, w->generation, w->check);
}

/* Every call that writes to the window is bracketed by enter and leave.
 * enter sets the handle's in-flight mark (in our control block, a place
 * no geometry moves), orders it before what follows (order->mark: a full
 * barrier, or on memory of one kernel a compiler barrier that board 0
 * completes with membarrier), and only then reads the notice: board 0
 * invalidates the notice first and reads the marks after, so either it
 * sees our mark and waits, or we see the stale notice and write nothing.
 * A shared mark (a window handle's, used by several threads) counts. */
static inline int smq_enter_mark(struct smq_window *w,
				 struct smq_handle_slot *slot, bool shared,
				 uint64_t gen, uint64_t check)
{
	if (shared)
		__atomic_fetch_add(&slot->busy, 1, __ATOMIC_SEQ_CST);
	else
		STORE(&slot->busy, 1);
	smq_mark(w->map.order);
	if (smq_stale_gen(w, gen, check)) {
		if (shared)
			__atomic_fetch_sub(&slot->busy, 1, __ATOMIC_RELEASE);
		else
			STORE_REL(&slot->busy, 0);
		return -ESTALE;
	}
	return 0;
}

static inline void smq_leave_mark(struct smq_window *w,
				  struct smq_handle_slot *slot, bool shared)
{
	smq_publish(w->map.order);
	if (shared)
		__atomic_fetch_sub(&slot->busy, 1, __ATOMIC_RELEASE);
	else
		STORE_REL(&slot->busy, 0);
}

/* The window handle's own mark. */
int smq_enter(struct smq_window *w);
void smq_leave(struct smq_window *w);

static inline void smq_queue_leave(struct smq_queue *q)
{
	smq_leave_mark(q->w, q->slot, q->slot_shared);
}
/* A queue handle's mark also reads the queue's own notice, its epoch,
 * which a clear of that queue alone changes: after the board's notice,
 * so after the barrier of the mark. */
static inline int smq_queue_enter(struct smq_queue *q)
{
	int err = smq_enter_mark(q->w, q->slot, q->slot_shared, q->generation,
				 q->check);
	if (!err && LOAD_ACQ(q->epoch_word) != q->epoch) {
		smq_queue_leave(q);
		err = -ESTALE;
	}
	return err;
}
/* A queue handle is stale after any init or clear of the window, even one
 * made through its own window handle, and after a clear of its queue: its
 * pointers and signature key are outdated. */
static inline int smq_queue_stale(const struct smq_queue *q)
{
	int err = smq_stale_gen(q->w, q->generation, q->check);
	return err ? err : LOAD_ACQ(q->epoch_word) != q->epoch ? -ESTALE : 0;
}

/* window.c: claim and release an in-flight mark in our control block */
struct smq_handle_slot *smq_slot_claim(struct smq_window *w,
				       enum smq_slot_kind kind, uint32_t queue,
				       uint32_t role);
void smq_slot_release(struct smq_window *w, struct smq_handle_slot *s);
/* Attach to the layout the window holds now (fills lay, ctl, generation). */
int smq_attach(struct smq_window *w);
/* The board whose region holds canonical offset off, -1 none (l: NULL
 * when no layout is known). */
int smq_owner_of(const struct smq_layout *l, uint64_t off);
/* A monitor's snapshots first follow the window (window.c): -EIDRM once
 * it was removed; attached again after an init or clear; 0 for others. */
int smq_monitor_follow(struct smq_window *w);
/* A snapshot call (window.c): fill(w, a, b, info) into our struct of have
 * bytes, handed out to the caller's of size bytes, at least least (the
 * call's, abi.h). */
typedef int smq_snapshot_fill(struct smq_window *w, unsigned a, unsigned b,
			      void *info);
int smq_snapshot_call(struct smq_window *w, smq_snapshot_fill *fill,
		      unsigned a, unsigned b, void *info, size_t have,
		      void *out, size_t size, size_t least);
/* Whether the process holding the maintenance lock runs: 1 yes, 0 no, -1
 * unknown (another boot: another host, or before a reboot). */
int smq_maint_alive(const struct smq_window *w, const struct smq_sb *sb);
/* What a maintenance under way or left unfinished is to a board: -EBUSY
 * while its process runs on this host, else -SMQ_EINCOMPLETE (it died, or
 * runs where we cannot look). */
int smq_maint_error(const struct smq_window *w, const struct smq_sb *sb);
/* object.c: the object holds data that is not a window, which init
 * refuses (-SMQ_ENOTWINDOW) unless forced */
bool smq_foreign_data(struct smq_window *w);
/* ...a superblock of ours, whose control area may hold live marks */
bool smq_window_ours(struct smq_window *w);
/* err, a fault found with no mark up, if it is the window's; else -ESTALE
 * (a maintenance finished since gen was read), -EBUSY (one runs) or
 * -SMQ_EINCOMPLETE (one whose process died or is elsewhere). */
int smq_confirm_fault(struct smq_window *w, const struct smq_sb *sb,
		      uint64_t gen, int err);

/* info.c: the groups the window names (feature groups) */
unsigned smq_group_count(struct smq_window *w);
/* Group index of the window: -ENOENT past the last. */
int smq_group_get(struct smq_window *w, unsigned index,
		  struct smq_group_info *info);

/* work.c: the one judgement of who is at work */
void smq_observe(struct smq_observation *o, uint64_t count, uint64_t key,
		 int64_t *age_ms, int *alive);
/* queue q's receiver: its state, pid, alive, heartbeat, counters */
int smq_board_activity(struct smq_window *w, unsigned b);
void smq_judge_receiver(struct smq_window *w, const struct smq_layout *l,
			unsigned q, struct smq_queue_info *info);
/* ...and whether the queue is stalled (info's bottom, queued and epoch
 * filled) */
void smq_judge_stall(struct smq_window *w, const struct smq_layout *l,
		     unsigned q, struct smq_queue_info *info);
/* init, clear: -SMQ_EATWORK if another process works on what they would
 * empty (queue only; all: -1), named in the holdout; l as the window is */
int smq_check_at_work(struct smq_window *w, const struct smq_layout *l,
		      int only);
/* ...and whether one of them is known to live (not only processes of
 * another host seen once) */
bool smq_at_work_known(struct smq_window *w, const struct smq_layout *l,
		       int only);
/* object.c: the size init may not exceed: the transport's (a device's,
 * an object another program sized), or what the superblock recorded when
 * smq first formatted such an object; 0: none. */
uint64_t smq_fixed_size(struct smq_window *w);

/* startup.c: write this board's heartbeat (inside a call: entered) */
void smq_beat(struct smq_window *w);
/* smq_beat from a path that has not entered (waits) */
void smq_beat_outside(struct smq_window *w);

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

#endif
