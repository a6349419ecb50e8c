/* Points where a test build may hold a call. */
#ifndef SMQ_HOOK_H
#define SMQ_HOOK_H

/* Test builds (SMQ_COUNT_FAR) may hold a call at a named point, to run
 * maintenance against it deterministically; release builds have none. */
enum smq_hook {
	SMQ_HOOK_COMMIT = 1,            /* a take, its mark up */
	SMQ_HOOK_COMMIT_FAR,            /* a take between our bottom and the
					   sender's copy of it */
	SMQ_HOOK_MAINT_LOCKED,          /* init, clear: the lock taken */
	SMQ_HOOK_MAINT_TELLING,         /* its phase stored, no notice yet
					   invalidated */
	SMQ_HOOK_MAINT_TOLD,            /* the notices invalidated */
	SMQ_HOOK_MAINT_WRITING,         /* the handshake done */
	SMQ_HOOK_MAINT_FORMATTED,       /* the new layout written, not yet
					   published */
	SMQ_HOOK_MAINT_SETTLE,          /* the handshake waits for light marks
					   membarrier cannot reach */
	SMQ_HOOK_PEEK,                  /* a signature matched, the entry's
					   header not yet read; no mark */
	SMQ_HOOK_LANE_LOOK,             /* a waiting receiver checks a lane:
					   the signature at its bottom read,
					   not its top; no mark */
	SMQ_HOOK_OPEN_LOOK,             /* the same, opening a receiver */
	SMQ_HOOK_ATTACH_MAPPED,         /* an open: the window mapped as it
					   is, nothing read yet */
	SMQ_HOOK_ATTACH_LOOK,           /* an attach: the superblock read,
					   the tables not yet; no mark */
	SMQ_HOOK_GEOMETRY_READ,         /* a check of the layout: the
					   geometry read and summed, the
					   queue table's entries not yet */
	SMQ_HOOK_ARM,                   /* a receiver found every lane empty
					   and is about to arm its sleep;
					   mark up */
	SMQ_HOOK_ARMED,                 /* that receiver has armed it (it
					   shows as sleeping) and is about to
					   look at its lanes once more; mark
					   up */
	SMQ_HOOK_ARM_ROOM,              /* a sender found its lane full and
					   is about to arm its wait for room;
					   lock held, mark up */
	SMQ_HOOK_LOAN_SUBMIT,           /* a loan's submit: its header
					   written, its signature not yet;
					   lock held, mark up */
	SMQ_HOOK_SIGNED,                /* a send or burst: its entries
					   signed, top not yet stored; lock
					   held, mark up */
	SMQ_HOOK_SLEEP,                 /* a waiter that can be rung is about
					   to sleep on its doorbell; no mark */
	SMQ_HOOK_RUNG,                  /* that sleep ended rung (or its word
					   had changed already); no mark */
	SMQ_HOOK_SLEPT_OUT,             /* that sleep ended unrung, at its
					   slice or deadline; no mark */
	SMQ_HOOK_RING,                  /* a sender about to ring a sleeping
					   receiver's doorbell (TEST_SKIP:
					   the doorbell is never delivered) */
	SMQ_HOOK_JUDGE,                 /* a judgement of who is at work:
					   a handle's or a receiver's tag
					   read, its process not yet looked
					   up; no mark */
	SMQ_HOOK_MAINT_LOCKING,         /* an init of a window it cannot
					   trust: the lock word read, not
					   yet taken */
	SMQ_HOOK_TOP_STORED,            /* a send or burst: its top stored
					   in lane_out, not yet in lane_in;
					   lock held, mark up */
	SMQ_HOOK_COUNTED,               /* a send or burst: its signatures
					   and counts stored, its top not
					   yet; lock held, mark up */
	SMQ_HOOK_JOURNAL_WRITING,       /* a journal entry: its slot marked
					   as being written, the words
					   stored, its sequence not yet */
	SMQ_HOOK_JOURNAL_RESERVED,      /* a journal entry: its sequence
					   reserved, its slot not yet
					   claimed */
	SMQ_HOOK_JOURNAL_READ,          /* a journal read: the slot's
					   sequence found, its words not yet
					   copied */
	SMQ_HOOK_ANNOUNCER,             /* board 0's sync judging a board
					   announced and not ready: its
					   announcer's tag and the board's
					   state read, the process not yet
					   looked up; mark up */
	SMQ_HOOK_LOCK_SLEEP,            /* a sender that found its lane lock
					   held is about to sleep on it
					   (futex); mark up */
	SMQ_HOOK_LOCK_WOKEN,            /* that sleep ended woken (or the
					   lock had changed already) */
	SMQ_HOOK_LOCK_SLEPT_OUT,        /* that sleep ended at its nap or
					   the deadline, unwoken */
	SMQ_HOOK_LOCK_YIELD,            /* a sender whose lane lock cannot
					   be slept on (no futex on its
					   memory) yields the CPU */
	SMQ_HOOK_SOCKET_LOOKED,         /* a server's start found a socket
					   file at its path, and has not yet
					   tried to connect to it */
	SMQ_HOOK_POLLS_TAKING_BACK,     /* a receiver that may sleep has
					   stored 2 into lane_wake.rx_polls
					   and not yet run its membarrier;
					   mark up */
	SMQ_HOOK_NO_BARRIER,            /* a send or burst left out its full
					   barrier (feature membarrier): its
					   lock released, the receiver's
					   sleep word not yet read */
};
#include <stdint.h>
/* A fault of the view smqctl check tests (scratch.c): where the reads or
 * the writes of board self to board's region land, and what arrives. */
struct smq_test_fault {
	int64_t shift;          /* bytes added to the offset */
	uint64_t wrap;          /* the region's body wraps every wrap bytes */
	uint64_t ones, zeros;   /* bits a write sets, clears (stuck) */
	int drop;               /* writes never arrive */
};
#ifdef SMQ_COUNT_FAR
extern void (*smq_test_hook)(enum smq_hook where);
#define TEST_HOOK(where) do { if (smq_test_hook) smq_test_hook(where); } while (0)
/* Non-zero: skip what the point does (a doorbell not delivered). */
extern int (*smq_test_skip)(enum smq_hook where);
#define TEST_SKIP(where) (smq_test_skip && smq_test_skip(where))
/* Non-zero with *f filled: board self's reads (write 0) or writes of
 * board's scratch and known content go astray as *f says. */
extern int (*smq_test_view)(unsigned self, unsigned board, int write,
			    struct smq_test_fault *f);
#else
#define TEST_HOOK(where) ((void)0)
#define TEST_SKIP(where) 0
#endif

#endif
