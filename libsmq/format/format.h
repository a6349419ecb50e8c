/* libsmq internals: the window format, version 3, byte by byte (smq(7)).
 * Not installed.  Structures here are the layout of shared memory: plain
 * integers, read and written through the atomics below. */
#ifndef SMQ_FORMAT_H
#define SMQ_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "smq_tools.h"

struct smq_view;

#define SMQ_LINE 64
#define SMQ_PAGE 4096
#define SMQ_MAGIC "SMQWINDW"
#define SMQ_SB_SIZE SMQ_PAGE    /* the superblock's page */
#define SMQ_ENTRY_HEADER 16
#define SMQ_ALIGN(x, a) (((x) + (uint64_t)(a) - 1) & ~((uint64_t)(a) - 1))

/* The diagnostic queues are small, whatever the application queues are:
 * a measurement needs few entries, and must not double a window. */
#define SMQ_DIAG_ENTRIES 16
#define SMQ_DIAG_ENTRY_SIZE 65536
static inline uint32_t smq_diag_entries(uint32_t entries)
{ return entries < SMQ_DIAG_ENTRIES ? entries : SMQ_DIAG_ENTRIES; }
static inline uint32_t smq_diag_entry_size(uint32_t size)
{ return size < SMQ_DIAG_ENTRY_SIZE ? size : SMQ_DIAG_ENTRY_SIZE; }

/* The count build watches the cache lines each side of a queue touches
 * (lines.c); other builds compile this away. */
#ifdef SMQ_COUNT_FAR
extern __thread int smq_line_side;
void smq_line_touch(const volatile void *p, size_t n, int write);
#define SMQ_TOUCH(p, n, w) \
	(smq_line_side >= 0 ? smq_line_touch((p), (n), (w)) : (void)0)
struct smq_line_move {
	uintptr_t addr;         /* the line's address (a window offset) */
	int side;               /* the side it moved to */
	int write;              /* taken to be written */
};
#define SMQ_LINE_MOVES 65536
/* The moves since the last call (at most max), forgotten. */
size_t smq_line_moves(struct smq_line_move *out, size_t max);
/* Every line and mapping forgotten: the next touch of each line fetches
 * it from memory. */
void smq_line_forget(void);
/* [p, p + len) maps the window from offset off: its lines are named by
 * their offsets, whichever mapping touches them. */
void smq_line_mapping(const void *p, uint64_t len, uint64_t off);
#else
#define SMQ_TOUCH(p, n, w) ((void)0)
#endif

/* Atomics on shared memory. */
#define LOAD(p) (SMQ_TOUCH((p), sizeof(*(p)), 0), \
		 __atomic_load_n((p), __ATOMIC_RELAXED))
#define LOAD_ACQ(p) (SMQ_TOUCH((p), sizeof(*(p)), 0), \
		     __atomic_load_n((p), __ATOMIC_ACQUIRE))
#define STORE(p, v) (SMQ_TOUCH((p), sizeof(*(p)), 1), \
		     __atomic_store_n((p), (v), __ATOMIC_RELAXED))
#define STORE_REL(p, v) (SMQ_TOUCH((p), sizeof(*(p)), 1), \
			 __atomic_store_n((p), (v), __ATOMIC_RELEASE))

/* ---- fixed places: they never move, whatever the geometry ----
 * A call delayed for any time may still write where its handle thinks
 * its marks are, so those marks (the control blocks) sit where every
 * geometry keeps them. */
#define SMQ_CTL_OFF SMQ_PAGE                    /* control area */
#define SMQ_CTL_SIZE SMQ_PAGE                   /* one block per board */
#define SMQ_BOARD_TABLE (SMQ_CTL_OFF + SMQ_MAX_BOARDS * SMQ_CTL_SIZE)
#define SMQ_SLOT_SIZE (2 * SMQ_LINE)            /* a board table slot */
#define SMQ_QUEUE_TABLE (SMQ_BOARD_TABLE + SMQ_MAX_BOARDS * SMQ_SLOT_SIZE)

static inline uint64_t lay_ctl(unsigned b)
{ return SMQ_CTL_OFF + (uint64_t)b * SMQ_CTL_SIZE; }
static inline uint64_t lay_slot(unsigned b)
{ return SMQ_BOARD_TABLE + (uint64_t)b * SMQ_SLOT_SIZE; }

/* Superblock, offset 0, written only by board 0. */
struct smq_sb {
	/* line 0: geometry, written by init */
	union {
		char magic[8];  /* "SMQWINDW" */
		uint64_t magic_word; /* stored last by init (release) */
	};
	uint32_t version;       /* SMQ_FORMAT_VERSION */
	uint32_t sb_size;       /* SMQ_SB_SIZE */
	uint32_t features_incompat; /* SMQ_FEATURE_*: a reader that does not
				   know a bit set here refuses the window */
	uint32_t features_compat;   /* a reader ignores bits it does not know */
	uint32_t boards;
	uint32_t queues;        /* application queues and diagnostic ones */
	uint32_t entries, entry_size;
	uint64_t window_size;   /* bytes the layout occupies */
	uint32_t diag_queues;   /* the last ones; one received by each board */
	uint32_t diag_entries;  /* theirs: smq_diag_entries(entries) */
	uint32_t diag_entry_size; /* smq_diag_entry_size(entry_size) */
	uint32_t checksum;      /* CRC-32C of bytes 8..59, line 3 and the queue
				   table */
	/* line 1: run-time state */
	uint64_t generation;
	uint32_t system_state;  /* enum smq_system_state */
	uint32_t pad1;
	uint64_t format_time_ns; /* CLOCK_REALTIME, for people only */
	uint64_t epoch_last;    /* the last queue epoch handed out */
	uint64_t size_fixed;    /* bytes the window object held before smq
				   first formatted it (another program sized
				   it): init never grows it past them unless
				   asked by name; 0: smq made it */
	uint64_t emptied;       /* messages init and clear have emptied, in
				   all, since smq first formatted the window */
	uint8_t pad2[16];
	/* line 2: maintenance (init, clear) */
	uint64_t maint_owner;   /* tag of the board-0 process in init or clear */
	uint64_t maint_boot;    /* its host's boot hash */
	uint32_t maint_phase;   /* enum smq_maint_phase */
	uint32_t maint_queue;   /* 0: the whole window; q + 1: queue q alone */
	uint64_t maint_from;    /* the generation it is replacing */
	uint8_t pad4[32];
	/* line 3: the parts features add, for every reader's arithmetic */
	uint64_t tables_extra;  /* bytes after the queue table (board 0's
				   region), a multiple of SMQ_PAGE */
	uint64_t body_extra;    /* bytes at the end of every board's body, a
				   multiple of SMQ_PAGE */
	uint32_t journal_entries; /* feature journal: entries of each board's
				   journal; else 0 */
	uint8_t pad5[44];
	uint8_t pad6[SMQ_SB_SIZE - 4 * SMQ_LINE];
};
enum smq_maint_phase {
	SMQ_MAINT_NONE = 0,
	SMQ_MAINT_WAITING = 1,  /* notices invalidated; waiting for the boards
				   to leave their calls */
	SMQ_MAINT_WRITING = 2,  /* formatting or clearing */
};
/* Feature bits this library knows.  A compatible feature is one a board
 * that does not know it can ignore and still keep every promise of the
 * window; any other is incompatible. */
/* SMQ_FEATURE_CHECKSUM (smq.h): every entry's check is the CRC-32C of its
 * size, signature and payload (smq_entry_check) */
/* SMQ_FEATURE_JOURNAL (smq.h): each board's journal, the first
 * smq_journal_bytes() of body_extra (below) */
/* SMQ_FEATURE_MEMBARRIER (smq.h): lane_wake.rx_polls and
 * handle_slot.lock_waited have meanings, which a board that did not know
 * them would not keep (a receiver would sleep, a sender wait on a lane
 * lock, without their membarrier) */
#define SMQ_FEATURES_INCOMPAT_KNOWN (SMQ_FEATURE_CHECKSUM | \
				     SMQ_FEATURE_JOURNAL | SMQ_FEATURE_MEMBARRIER)
/* SMQ_FEATURE_GROUPS (smq.h): the group table, first in tables_extra;
 * SMQ_FEATURE_SCRATCH (smq.h): the last SMQ_SCRATCH_SIZE bytes of every
 * board's body are its scratch area (below) */
#define SMQ_FEATURES_COMPAT_KNOWN (SMQ_FEATURE_GROUPS | SMQ_FEATURE_SCRATCH)
#define SB_CHECKSUM_FROM offsetof(struct smq_sb, version)
#define SB_CHECKSUM_TO offsetof(struct smq_sb, checksum)
#define SB_EXTRA_LINE offsetof(struct smq_sb, tables_extra)
/* Epochs key a queue's signatures: init gives every queue generation
 * << SMQ_EPOCH_SHIFT, a clear of one queue epoch_last + 1. */
#define SMQ_EPOCH_SHIFT 32
#define SMQ_GENERATION_MAX 0xffffffffull  /* then 1 again */

/* ---- feature groups: the group table, at the start of tables_extra,
 * written by init only (tables_extra is: the checksum covers it) ---- */
struct smq_group_head {
	uint32_t groups;        /* descriptors that follow */
	uint32_t members;       /* queue indices after them */
	uint8_t pad[56];
};
struct smq_group_desc {
	char name[32];          /* 1 to 31 of A-Z a-z 0-9 . _ -, NUL-padded */
	uint32_t first;         /* its first member in the member array */
	uint32_t count;         /* members: 1 to SMQ_GROUP_MAX_MEMBERS */
	uint8_t pad[24];
};
/* then uint32_t member[members]: each group's application queues, group
 * after group, in the order of the descriptors */
static inline uint64_t smq_group_bytes(uint32_t groups, uint32_t members)
{
	return groups ? SMQ_ALIGN(sizeof(struct smq_group_head) +
				  (uint64_t)groups * sizeof(struct smq_group_desc) +
				  4ull * members, SMQ_PAGE)
		      : 0;
}

/* ---- a board's control block: lay_ctl(b), in board b's region ---- */

/* Line 0, written by board 0: the generation and system state pushed to
 * where board b reads them locally at every call. */
struct smq_notice {
	uint64_t generation;    /* 0 while board 0 re-formats */
	uint32_t system_state;
	uint32_t pad;
	uint64_t check;         /* smq_notice_check(generation, b) */
	uint8_t pad2[40];
};

/* Line 1, written by board b's processes. */
struct smq_ctl_local {
	uint64_t beats;         /* the board's heartbeat count */
	uint8_t pad[56];
};

/* One per open handle of the board (a window, or a queue): its in-flight
 * mark.  A call that writes sets busy, fences, and then checks the
 * notice; board 0 invalidates every notice and then waits for every busy
 * mark to drop before it writes a new layout. */
struct smq_handle_slot {
	uint64_t tag;           /* owner process (smq_tag()), 0: free */
	uint64_t boot;          /* the owner's host */
	uint32_t busy;          /* calls in flight (a window handle's threads
				   count up; a queue handle is 0 or 1) */
	uint32_t kind;          /* enum smq_slot_kind */
	uint64_t generation;    /* attached under */
	uint32_t flags;         /* SMQ_SLOT_LIGHT */
	uint32_t queue;         /* a queue handle's queue; SMQ_SLOT_NO_QUEUE */
	uint32_t role;          /* a queue handle's enum smq_role; 0 */
	uint32_t lock_waiters;  /* non-zero: a sender of the board sleeps on
				   a lane lock this handle may hold, and is
				   woken when the handle releases it */
	uint32_t lock_waited;   /* feature membarrier: 1 once a sender has
				   slept on a lock this handle may hold */
	uint8_t pad[12];
};
enum smq_slot_kind { SMQ_SLOT_FREE = 0, SMQ_SLOT_WINDOW = 1, SMQ_SLOT_QUEUE = 2 };
/* The mark is set without a barrier of its own: board 0 sends one to every
 * CPU of the owner's kernel (membarrier), or waits SMQ_SETTLE_MS. */
#define SMQ_SLOT_LIGHT 1u
#define SMQ_SLOT_NO_QUEUE 0xffffffffu
#define SMQ_SETTLE_MS 10
#define SMQ_SLOTS (SMQ_CTL_SIZE / SMQ_LINE - 2)

struct smq_ctl {
	struct smq_notice notice;
	struct smq_ctl_local local;
	struct smq_handle_slot slot[SMQ_SLOTS];
};
/* The one walk over a control block's handle slots: s (a pointer, const
 * or not) at each of c's in turn (base/far.h walks a far one). */
#define SMQ_EACH_SLOT(s, c) \
	for ((s) = (c)->slot; (s) < (c)->slot + SMQ_SLOTS; (s)++)

/* ---- doorbells ----
 * A waiter (a receiver about to sleep, a sender waiting for room) arms by
 * writing its doorbell address where the other side looks, together with
 * a word in its own region that the ringer changes.  The ringer stores a
 * new value in that word and then rings the address.  The doorbell itself
 * carries the wake: a ring that comes before the wait is not lost (a futex
 * word that changed, an eventfd that counts), and a woken waiter always
 * looks at its ring again, so a doorbell that overtakes the data costs a
 * look, not a message. */
/* enum smq_bell_kind (smq.h) names the kinds. */
#define SMQ_BELL_BIT(kind) (1u << (kind))

/* Stored in the window (16 bytes): how to ring one waiter. */
struct smq_bell_addr {
	uint16_t kind;          /* enum smq_bell_kind */
	uint16_t vector;        /* ivshmem: the waiter's interrupt vector */
	uint32_t peer;          /* ivshmem: the waiter's peer ID (0..65535) */
	uint64_t host;          /* futex: smq_boot_hash() of the waiter's host */
};

/* ---- board table: lay_slot(b), in board 0's region, written by b ---- */
struct smq_board_slot {
	uint32_t state;         /* enum smq_board_state */
	uint32_t announces;     /* times the board announced itself under
				   this generation */
	uint64_t generation;    /* joined under */
	uint64_t heartbeat;     /* the board's heartbeat count: it moves while
				   the board lives; never a time */
	uint64_t boot;          /* boot hash of the board's host */
	uint64_t tag;           /* the process that last announced or beat */
	struct smq_bell_addr bell; /* that process's doorbell, if any */
	uint64_t announcer;     /* the process announcing the board until it
				   sees the system ready or gives up; 0 */
	char host[64];          /* host name, NUL-padded */
};

/* Queue table entry, written at init. */
struct smq_qdesc {
	uint32_t index;
	uint16_t receiver;
	uint16_t flags;         /* SMQ_QUEUE_DIAGNOSTIC */
	uint64_t senders;       /* bit s: board s has a lane (sends) */
};

/* ---- a board's body: lane lines for every queue, rx areas ---- */

/* Sender side of a lane, in the sending board's region. */
struct smq_lane_out {           /* written by the sending board */
	uint64_t top;           /* committed: next sequence to write */
	uint64_t lock;          /* smq_tag() of the thread holding the lane */
	uint64_t messages, bytes, full_waits, doorbells;
	uint32_t ring_kinds;    /* what its last sender can ring */
	uint32_t full_refusals; /* sends that found the lane full and were
				   not to wait (a timeout of 0); wraps */
	uint64_t host;          /* that sender's host (futex reach) */
};
struct smq_lane_fc {            /* flowControl: the receiver writes its
				   bottom here at every message */
	uint64_t bottom;
	uint8_t pad[56];
};
struct smq_lane_wake {          /* flowControl written by the receiver only
				   when it sleeps, wakes or rings */
	uint64_t sleep_epoch;   /* odd while the receiver sleeps */
	struct smq_bell_addr bell; /* how to wake it, while odd */
	uint32_t space_bell;    /* the sender waits here for room */
	uint32_t rx_polls;      /* feature membarrier: 1 while the queue's
				   receiver busy-polls and never sleeps; 2
				   while another takes that back */
	uint64_t queue_epoch;   /* the queue's epoch (board 0, maintenance
				   only): the sender's notice of a clear */
	uint64_t sleeper;       /* the sleeping receiver's tag, while odd */
	uint64_t sleeper_boot;  /* its host */
	uint8_t pad2[8];
};

/* Receiver side of a queue, in the receiving board's region. */
struct smq_rx {                 /* written by the receiving board */
	uint32_t index;
	uint32_t cursor;        /* next lane to look at (rotating fairness) */
	uint64_t owner;         /* smq_tag() of the open receiver, 0: none */
	uint64_t messages, bytes, sleeps, wakeups;
	uint64_t epoch;         /* keys the queue's signatures; written only
				   while formatting */
	uint64_t sleep_epoch;   /* odd while the receiver sleeps */
};
struct smq_rx_info {            /* written by the receiving board */
	uint32_t ring_kinds;    /* what the receiver can ring */
	uint32_t waiting;       /* 1 while the receiver waits in a call */
	uint64_t host;          /* its host (futex reach) */
	uint64_t owner_boot;    /* the host of the open receiver */
	uint64_t opens;         /* receivers that opened the queue */
	uint64_t takeovers;     /* ...taking the claim of a dead one */
	uint64_t beats;         /* the receiver's heartbeat: it moves at least
				   once a sleep slice while it waits */
	uint64_t corrupt;       /* messages that failed their check (feature
				   checksum), taken off the ring */
	uint8_t pad2[8];
};
struct smq_bell {               /* the receiver's futex word; senders store */
	uint32_t doorbell;
	uint8_t pad[60];
};
struct smq_lane_in {            /* line s: sender s at every message */
	uint64_t top;           /* published: entries below it are complete */
	uint8_t pad[56];
};
struct smq_lane_ask {           /* line s: sender s when it waits for room */
	uint64_t space_wait;    /* space_bell + 1 while it waits */
	struct smq_bell_addr bell; /* how to wake it */
	uint8_t pad[40];
};
struct smq_entry {
	uint32_t size;
	uint32_t check;         /* feature checksum: CRC-32C of size,
				   signature and payload; else 0 */
	uint64_t signature;
	/* payload follows */
};

_Static_assert(sizeof(struct smq_sb) == SMQ_SB_SIZE, "superblock");
_Static_assert(offsetof(struct smq_sb, generation) == SMQ_LINE, "sb line 1");
_Static_assert(offsetof(struct smq_sb, maint_owner) == 2 * SMQ_LINE, "sb line 2");
_Static_assert(sizeof(struct smq_notice) == SMQ_LINE, "notice");
_Static_assert(sizeof(struct smq_ctl_local) == SMQ_LINE, "ctl local");
_Static_assert(sizeof(struct smq_handle_slot) == SMQ_LINE, "handle slot");
_Static_assert(sizeof(struct smq_ctl) == SMQ_CTL_SIZE, "control block");
_Static_assert(sizeof(struct smq_board_slot) == SMQ_SLOT_SIZE, "board slot");
_Static_assert(sizeof(struct smq_qdesc) == 16, "qdesc");
_Static_assert(offsetof(struct smq_sb, tables_extra) == 3 * SMQ_LINE, "sb line 3");
_Static_assert(sizeof(struct smq_lane_out) == SMQ_LINE, "lane_out");
_Static_assert(sizeof(struct smq_lane_fc) == SMQ_LINE, "lane_fc");
_Static_assert(sizeof(struct smq_lane_wake) == SMQ_LINE, "lane_wake");
_Static_assert(sizeof(struct smq_rx) == SMQ_LINE, "rx");
_Static_assert(sizeof(struct smq_rx_info) == SMQ_LINE, "rx_info");
_Static_assert(sizeof(struct smq_bell) == SMQ_LINE, "bell");
_Static_assert(sizeof(struct smq_lane_in) == SMQ_LINE, "lane_in");
_Static_assert(sizeof(struct smq_lane_ask) == SMQ_LINE, "lane_ask");
_Static_assert(sizeof(struct smq_entry) == SMQ_ENTRY_HEADER, "entry");
_Static_assert(sizeof(struct smq_bell_addr) == 16, "bell address");
_Static_assert(sizeof(struct smq_group_head) == SMQ_LINE, "group head");
_Static_assert(sizeof(struct smq_group_desc) == SMQ_LINE, "group desc");

/* ---- feature scratch: the end of every board's region ----
 * 64 KiB of data that tests of the window's map and of the raw link write
 * (scratch.c), then a page whose first line says whose area it is and
 * whose last line, the region's last, holds guard words: content that a
 * board reading another's region through its mapping knows in advance. */
#define SMQ_SCRATCH_DATA_SIZE SMQ_SCRATCH_DATA   /* smq.h: 64 KiB */
#define SMQ_SCRATCH_SIZE (SMQ_SCRATCH_DATA_SIZE + SMQ_PAGE)
#define SMQ_SCRATCH_MAGIC "SMQSCRCH"
struct smq_scratch_head {       /* written by init (board 0) */
	uint64_t magic;         /* "SMQSCRCH" */
	uint32_t board;         /* whose region */
	uint32_t size;          /* SMQ_SCRATCH_SIZE */
	uint64_t offset;        /* this line's own offset in the window */
	uint64_t check;         /* smq_scratch_word(offset + 24) */
	uint8_t pad[32];
};
_Static_assert(sizeof(struct smq_scratch_head) == SMQ_LINE, "scratch head");
#define SMQ_GUARD_WORDS (SMQ_LINE / 8)
/* The word a guard (or the head's check) at offset off holds: a function
 * of its place alone, so that a word read elsewhere says where it was
 * written. */
static inline uint64_t smq_scratch_word(uint64_t off)
{
	uint64_t z = off * 0x9e3779b97f4a7c15ull ^ 0x5343524154434821ull;
	z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
	return z ^ (z >> 29);
}
/* Words of the data area, a place each (scratch.c): the low 48 bits are
 * the word's offset, bits 48-53 the board that wrote it, bits 54-63 a tag:
 * SMQ_EMPTY_TAG for the words the area's own board cleared it with
 * (board 63), else the tag of one test. */
#define SMQ_WORD_OFFSET_BITS 48
#define SMQ_EMPTY_TAG 0x2a5u
static inline uint64_t smq_data_word(uint32_t tag, unsigned board,
				     uint64_t off)
{
	return (uint64_t)(tag & 0x3ff) << 54 | (uint64_t)(board & 63) << 48 |
	       (off & ((1ull << SMQ_WORD_OFFSET_BITS) - 1));
}

/* ---- feature journal: the start of every board's body_extra ----
 * A line of head, then a ring of one-line entries.  Only the board's own
 * processes write it, each entry reserved by an atomic add on head: the
 * entry's sequence is the value added from, its slot the sequence modulo
 * the entries.  The writer stores the sequence with SMQ_JOURNAL_WRITING
 * first, then the body, then the sequence alone, with release: a reader
 * that finds the sequence it wants before and after its copy has a whole
 * entry (smq(7), Journal). */
#define SMQ_JOURNAL_MAGIC "SMQJOURN"
#define SMQ_JOURNAL_WRITING (1ull << 63)
struct smq_journal_head {
	uint64_t magic;         /* "SMQJOURN" */
	uint32_t board;         /* whose journal */
	uint32_t slots;         /* its entries (journal_entries) */
	uint64_t incarnation;   /* a number chosen when it was made: another
				   one is another journal */
	uint64_t made_generation; /* the window's generation then */
	uint32_t check;         /* CRC-32C of bytes 0..31 */
	uint32_t pad;
	uint64_t head;          /* the next sequence to reserve, from 1 */
	uint64_t last_boot;     /* the boot hash of the board's host at the
				   last entry written: another boot writes a
				   new-boot entry first */
	uint8_t pad2[8];
};
struct smq_journal_slot {
	uint64_t seq;           /* 0: never written; s | WRITING: being
				   written; s: entry s */
	uint64_t time_ns;       /* the writer's CLOCK_REALTIME: for people */
	uint64_t generation;    /* the window's, as the writer attached */
	uint64_t epoch;         /* a queue's epoch, or a kind's own */
	uint16_t kind;          /* enum smq_journal_kind (smq.h) */
	uint16_t role;          /* a queue handle's enum smq_role, or 0 */
	uint32_t queue;         /* SMQ_NO_QUEUE: none */
	uint32_t pid;           /* the writer */
	uint32_t check;         /* CRC-32C of the entry, check 0, seq s */
	uint64_t a, b;          /* the kind's */
};
_Static_assert(sizeof(struct smq_journal_head) == SMQ_LINE, "journal head");
_Static_assert(sizeof(struct smq_journal_slot) == SMQ_LINE, "journal slot");
static inline uint64_t smq_journal_bytes(uint32_t slots)
{
	return slots ? SMQ_ALIGN(SMQ_LINE + (uint64_t)slots * SMQ_LINE,
				 SMQ_PAGE) : 0;
}
/* A shape's journal: its entries, 0 none */
static inline uint32_t smq_shape_journal(const struct smq_shape *sh)
{
	if (sh->flags & SMQ_SHAPE_NO_JOURNAL)
		return 0;
	return sh->journal ? sh->journal : SMQ_JOURNAL_DEFAULT;
}
static inline bool smq_journal_size_ok(uint32_t slots)
{
	return slots >= SMQ_JOURNAL_MIN && slots <= SMQ_JOURNAL_MAX &&
	       !(slots & (slots - 1));
}
/* The head's check */
uint32_t smq_journal_head_check(const struct smq_journal_head *h);
/* An entry's check: of a copy, its seq s (no WRITING bit) */
uint32_t smq_journal_slot_check(const struct smq_journal_slot *e,
				uint64_t s);

/* ---- the layout: offsets computed from the superblock alone ---- */
struct smq_layout {
	uint32_t boards, queues, diag_queues, entries, entry_size;
	uint64_t stride;        /* bytes per entry slot */
	uint32_t diag_entries, diag_entry_size;
	uint64_t diag_stride;   /* of the diagnostic queues */
	uint64_t queue_table;
	uint64_t tables_extra, body_extra; /* what features add */
	uint32_t journal;       /* feature journal: entries a board */
	uint32_t features;      /* features_incompat: SMQ_FEATURE_* */
	uint32_t compat;        /* features_compat: those this library knows */
	uint64_t tables_end;    /* page after the queue table and its extra */
	uint64_t size;          /* total bytes */
	uint64_t body[SMQ_MAX_BOARDS];      /* start of each board's body */
	uint64_t body_size[SMQ_MAX_BOARDS];
	uint16_t *receiver;     /* [queues] */
	uint16_t *qflags;       /* [queues] */
	uint64_t *senders;      /* [queues] bit s: board s has a lane */
	uint64_t *rx;           /* [queues] offset of struct smq_rx */
	uint32_t *lane0;        /* [queues + 1] queue q's lanes are lane0[q]
				   to lane0[q + 1] - 1 of out_slot */
	uint32_t *out_slot;     /* [lanes] the lane's lines in its sender's
				   body: the slot'th three lines */
};

/* A queue's lanes, one per sending board, in the order of the boards. */
static inline unsigned lay_lanes(const struct smq_layout *l, unsigned q)
{ return (unsigned)__builtin_popcountll(l->senders[q]); }
static inline bool lay_sends(const struct smq_layout *l, unsigned q,
			     unsigned s)
{ return s < SMQ_MAX_BOARDS && (l->senders[q] >> s & 1); }
/* The lane of sending board s (lay_sends) */
static inline unsigned lay_lane(const struct smq_layout *l, unsigned q,
				unsigned s)
{ return (unsigned)__builtin_popcountll(l->senders[q] & ((1ull << s) - 1)); }
/* The board of lane k */
static inline unsigned lay_lane_board(const struct smq_layout *l, unsigned q,
				      unsigned k)
{
	uint64_t m = l->senders[q];
	while (k--)
		m &= m - 1;
	return (unsigned)__builtin_ctzll(m);
}

/* Feature groups: the group table's offset (board 0's region), 0 none */
static inline uint64_t lay_groups(const struct smq_layout *l)
{
	return l->compat & SMQ_FEATURE_GROUPS
	       ? l->tables_end - l->tables_extra : 0;
}

/* The lane lines of board s for queue q, in s's body. */
#define SMQ_LANE_LINES 3
static inline uint64_t lay_lane_out(const struct smq_layout *l, unsigned s,
				    unsigned q)
{
	return l->body[s] + (uint64_t)l->out_slot[l->lane0[q] + lay_lane(l, q, s)] *
			    SMQ_LANE_LINES * SMQ_LINE;
}
static inline uint64_t lay_lane_fc(const struct smq_layout *l, unsigned s,
				   unsigned q)
{ return lay_lane_out(l, s, q) + SMQ_LINE; }
static inline uint64_t lay_lane_wake(const struct smq_layout *l, unsigned s,
				     unsigned q)
{ return lay_lane_out(l, s, q) + 2 * SMQ_LINE; }
/* A queue's rx area, in its receiver's body: rx, rx_info, bottoms, bell,
 * lane_in[lanes], lane_ask[lanes], rings[lanes]; lane k is the k'th
 * sending board's. */
static inline uint64_t lay_rx_info(const struct smq_layout *l, unsigned q)
{ return l->rx[q] + SMQ_LINE; }
static inline uint64_t lay_bottoms(const struct smq_layout *l, unsigned q)
{ return l->rx[q] + 2 * SMQ_LINE; }
static inline uint64_t lay_bottoms_size(const struct smq_layout *l, unsigned q)
{ return SMQ_ALIGN(8ull * lay_lanes(l, q), SMQ_LINE); }
static inline uint64_t lay_bell(const struct smq_layout *l, unsigned q)
{ return lay_bottoms(l, q) + lay_bottoms_size(l, q); }
/* ...of lane k */
static inline uint64_t lay_lane_in_k(const struct smq_layout *l, unsigned q,
				     unsigned k)
{ return lay_bell(l, q) + SMQ_LINE + (uint64_t)k * SMQ_LINE; }
static inline uint64_t lay_lane_ask_k(const struct smq_layout *l, unsigned q,
				      unsigned k)
{ return lay_lane_in_k(l, q, lay_lanes(l, q)) + (uint64_t)k * SMQ_LINE; }
/* ...of sending board s */
static inline uint64_t lay_lane_in(const struct smq_layout *l, unsigned q,
				   unsigned s)
{ return lay_lane_in_k(l, q, lay_lane(l, q, s)); }
static inline uint64_t lay_lane_ask(const struct smq_layout *l, unsigned q,
				    unsigned s)
{ return lay_lane_ask_k(l, q, lay_lane(l, q, s)); }
/* A queue's shape: the diagnostic queues have their own. */
static inline uint32_t lay_entries(const struct smq_layout *l, unsigned q)
{ return l->qflags[q] & SMQ_QUEUE_DIAGNOSTIC ? l->diag_entries : l->entries; }
static inline uint32_t lay_entry_size(const struct smq_layout *l, unsigned q)
{
	return l->qflags[q] & SMQ_QUEUE_DIAGNOSTIC ? l->diag_entry_size
						   : l->entry_size;
}
static inline uint64_t lay_stride(const struct smq_layout *l, unsigned q)
{ return l->qflags[q] & SMQ_QUEUE_DIAGNOSTIC ? l->diag_stride : l->stride; }
static inline uint64_t lay_ring_k(const struct smq_layout *l, unsigned q,
				  unsigned k)
{
	return lay_lane_ask_k(l, q, lay_lanes(l, q)) +
	       (uint64_t)k * lay_entries(l, q) * lay_stride(l, q);
}
static inline uint64_t lay_ring(const struct smq_layout *l, unsigned q,
				unsigned s)
{ return lay_ring_k(l, q, lay_lane(l, q, s)); }
static inline uint64_t lay_entry(const struct smq_layout *l, unsigned q,
				 unsigned s, uint64_t seq)
{
	return lay_ring(l, q, s) +
	       (seq & (lay_entries(l, q) - 1)) * lay_stride(l, q);
}

/* Board b's journal (feature journal): the start of its body_extra. */
static inline uint64_t lay_journal(const struct smq_layout *l, unsigned b)
{ return l->body[b] + l->body_size[b] - l->body_extra; }
static inline uint64_t lay_journal_slot(const struct smq_layout *l,
					unsigned b, uint64_t seq)
{
	return lay_journal(l, b) + SMQ_LINE +
	       (seq & (l->journal - 1)) * SMQ_LINE;
}

/* Board b's scratch area (feature scratch): the end of its body. */
static inline uint64_t lay_scratch(const struct smq_layout *l, unsigned b)
{ return l->body[b] + l->body_size[b] - SMQ_SCRATCH_SIZE; }
static inline uint64_t lay_scratch_head(const struct smq_layout *l, unsigned b)
{ return lay_scratch(l, b) + SMQ_SCRATCH_DATA_SIZE; }
static inline uint64_t lay_guard(const struct smq_layout *l, unsigned b)
{ return lay_scratch(l, b) + SMQ_SCRATCH_SIZE - SMQ_LINE; }

/* A canonical range a board's region holds. */
struct smq_range {
	uint64_t start, len;
};
#define SMQ_MAX_RANGES 4

/* format.c */
int smq_layout_compute(struct smq_layout *l, const struct smq_geometry *g);
int smq_layout_make(struct smq_layout *l, const struct smq_shape *sh,
		    uint64_t tables_extra, uint64_t body_extra);
/* The layout init gives a shape: what its features add, computed */
int smq_layout_of_shape(struct smq_layout *l, const struct smq_shape *sh);
void smq_layout_free(struct smq_layout *l);
/* What a shape's features add to every board's body (body_extra). */
static inline uint64_t smq_shape_body_extra(const struct smq_shape *sh)
{
	return (sh->flags & SMQ_SHAPE_SCRATCH ? SMQ_SCRATCH_SIZE : 0) +
	       smq_journal_bytes(smq_shape_journal(sh));
}
/* The canonical ranges of board b's region, in order; returns how many. */
int smq_layout_ranges(const struct smq_layout *l, unsigned b,
		      struct smq_range r[SMQ_MAX_RANGES]);
/* crc32c.c: CRC-32C, continued from crc (0 to begin) */
uint32_t smq_crc32c(uint32_t crc, const void *p, size_t n);
/* ...of src, copied to dst as it is read (src is read once) */
uint32_t smq_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t n);
uint32_t smq_crc32c_bitwise(uint32_t crc, const void *p, size_t n);
/* ...for the tests: folding on or off; whether this processor can fold */
bool smq_crc32c_folding(bool on);
uint32_t smq_crc32c_portable(uint32_t crc, void *dst, const void *src,
			     size_t n);  /* dst may be NULL */
/* An entry's check (feature checksum): of its size, signature and
 * payload; the payload copied to dst as it is read, unless dst is NULL */
uint32_t smq_entry_check(uint32_t size, uint64_t signature, void *dst,
			 const void *payload, size_t n);
/* The register reg (not inverted) carried through n zero bytes */
uint32_t smq_crc32c_zeros(uint32_t reg, uint64_t n);
/* An entry's check from its header and a payload of n bytes whose register
 * was summed from 0 (a loan's pieces, as they were written) */
uint32_t smq_entry_check_join(uint32_t size, uint64_t signature,
			      uint32_t payload_reg, uint64_t n);
/* A word a receiver can tell from any stale one: it changes with the
 * generation, the queue, the lane and the sequence (control words signed
 * with a changing bit pattern, as the SCI message-passing layer does).
 * Inline: the message path computes one per message on each side, from a
 * lane's key (its generation, queue and board), computed once a call. */
static inline uint64_t smq_signature_key(uint64_t gen, unsigned q, unsigned s)
{
	return gen * 0x9e3779b97f4a7c15ull +
	       (((uint64_t)q << 8 | s) * 0xd1b54a32d192ed03ull);
}
/* ...of sequence seq of the lane with that key */
static inline uint64_t smq_signature_at(uint64_t key, uint64_t seq)
{
	uint64_t z = seq + key;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
static inline uint64_t smq_signature(uint64_t gen, unsigned q, unsigned s,
				     uint64_t seq)
{
	return smq_signature_at(smq_signature_key(gen, q, s), seq);
}
static inline uint64_t smq_notice_check(uint64_t gen, unsigned board)
{
	return ~smq_signature(gen, 0xffff, board, 0x4e4f54494345ull);
}

/* validate.c: the superblock and queue table, and the layout they give */
int smq_check_layout(const struct smq_view *v, struct smq_layout *l,
		     struct smq_fault *f);
/* ...and everything mapped, every table and queue line in bounds */
int smq_check_static(const struct smq_view *v, struct smq_layout *l,
		     struct smq_fault *f);
/* lanes.c: every lane's words and entries */
int smq_check_dynamic(const struct smq_view *v, const struct smq_layout *l,
		      struct smq_fault *f);
uint32_t smq_geometry_checksum(const struct smq_view *v, uint32_t queues);
/* feature groups: the table in the view, each group checked */
int smq_check_groups(const struct smq_view *v, const struct smq_layout *l,
		     struct smq_fault *f);
/* One lane's words, for validation and for an open of its queue alike.
 * Each grows only, and every bound between two of them holds at every
 * instant of a lane in use; so each is loaded, in this order, before the
 * words it must not pass, and the lane never looks out of bounds while
 * its sender and receiver go on (lane_in.top twice: before lane_out.top,
 * which it must not pass, and after bottom[k], which must not pass it by
 * more than a ring).  The epochs first: they change only under
 * maintenance. */
struct smq_lane_words {
	uint64_t epoch;         /* rx.epoch */
	uint64_t epoch_last;    /* the superblock's */
	uint64_t queue_epoch;   /* lane_wake.queue_epoch, the sender's copy */
	uint64_t top;           /* lane_in.top */
	uint64_t sender_top;    /* lane_out.top */
	uint64_t flow_bottom;   /* lane_fc.bottom, the sender's copy */
	uint64_t bottom;        /* bottom[k], the receiver's */
	uint64_t top_after;     /* lane_in.top again */
};
/* Checks 21 to 24 of smq(7) on lane s of queue q, as validation names
 * their faults (SMQ_ECORRUPT) */
int smq_lane_fault(const struct smq_layout *l, unsigned q, unsigned s,
		   const struct smq_lane_words *w, struct smq_fault *f);
/* ...and check 19 on queue q's rx and rx_info lines */
int smq_rx_fault(const struct smq_layout *l, unsigned q, uint32_t index,
		 uint32_t cursor, uint32_t waiting, struct smq_fault *f);
/* format.c: a group's name is 1 to SMQ_GROUP_NAME_MAX of A-Z a-z 0-9 . _ - */
bool smq_group_name_ok(const char *name, size_t max);

#endif
