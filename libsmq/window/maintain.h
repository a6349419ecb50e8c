/* libsmq internals: what init (init.c) and clear (clear.c) share: the
 * maintenance lock, the handshake with every board, the generation and
 * epochs they hand out, and what they empty (maintain.c).  Not installed. */
#ifndef SMQ_MAINTAIN_H
#define SMQ_MAINTAIN_H

#include "journal.h"
#include "window.h"

struct smq_sb *smq_maint_sb(struct smq_window *w);
/* Board b's control block, reached across the bus */
struct smq_far smq_maint_ctl(struct smq_window *w, unsigned b);
bool smq_maint_ctl_mapped(struct smq_window *w, unsigned b);
/* The holdout names board's process tag (queue: of the call that held
 * on, -1 none) */
void smq_maint_holdout(struct smq_window *w, unsigned board, uint64_t tag,
		       bool same_host, int queue);
/* One board-0 process at a time: 0, or -EALREADY (the holdout names the
 * holder).  trusted: the superblock is ours, a dead holder is taken over. */
int smq_maint_lock(struct smq_window *w, bool trusted);
void smq_maint_unlock(struct smq_window *w);
/* A dry run's look at the lock: -EALREADY if a live process holds it. */
int smq_maint_lock_taken(struct smq_window *w);
/* Wakes every waiter of the old layout (of queue only, if only >= 0). */
void smq_maint_wake_all(struct smq_window *w, const struct smq_layout *old,
			int only);
/* Waits for every mark (of a call on queue only) to come down:
 * -SMQ_EHELD past the handshake timeout. */
int smq_maint_handshake(struct smq_window *w, int only);
/* Notices invalidated, the handshake, every sleeper woken; on failure the
 * window is as it was. */
int smq_maint_quiesce(struct smq_window *w, const struct smq_layout *old,
		      uint64_t from);
uint64_t smq_maint_next_generation(struct smq_window *w);
void smq_maint_zero(struct smq_window *w, uint64_t off, uint64_t len);
/* A generation published: board table emptied, notices told, the
 * superblock last. */
void smq_maint_publish(struct smq_window *w, uint64_t gen);
void smq_maint_set_epoch(struct smq_window *w, const struct smq_layout *l,
			 unsigned q, uint64_t epoch);
/* The window's layout as it is now, mapped, validated: 0, -EBUSY (an init
 * of another process runs), or the fault. */
int smq_maint_reread(struct smq_window *w, struct smq_layout *l);
/* What is waiting in the queues of l (queue only, if only >= 0), added
 * to e (zeroed by the caller). */
uint64_t smq_maint_count(struct smq_window *w, const struct smq_layout *l,
			 int only, struct smq_emptied *e);
/* A format or clear of every queue (kind) into board 0's journal, from
 * generation from, and the queues that held most of what it emptied */
void smq_maint_journal(struct smq_window *w, uint16_t kind, uint64_t from,
		       const struct smq_emptied *e);
/* What was emptied: the handle's report, the superblock's count. */
void smq_maint_emptied(struct smq_window *w, const struct smq_emptied *e);
/* -SMQ_EATWORK (the holdout names one) if another process works on what
 * it would empty, after a second look at processes of another host. */
int smq_maint_at_work(struct smq_window *w, const struct smq_layout *l,
		      int only);

#endif
