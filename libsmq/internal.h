/* libsmq internals: the window format v1 and the transport table.
 * Not installed.  The format is documented byte by byte in smq(7). */
#ifndef SMQ_INTERNAL_H
#define SMQ_INTERNAL_H

#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "smq.h"

#define SMQ_LINE 64
#define SMQ_PAGE 4096
#define SMQ_MAGIC "SMQWINDW"
#define SMQ_SB_SIZE 256
#define SMQ_ENTRY_HEADER 16
#define SMQ_GRACE_MS 20 /* how long a re-init waits for senders mid-copy */

#define SMQ_ALIGN(x, a) (((x) + (uint64_t)(a) - 1) & ~((uint64_t)(a) - 1))

/* Atomics on shared memory.  Plain integer fields in the format structs,
 * accessed through these, so the structs stay a byte-exact layout. */
#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define FENCE() __atomic_thread_fence(__ATOMIC_SEQ_CST)

/* Superblock, offset 0, written only by board 0. */
struct smq_sb {
	union {
		char magic[8];  /* "SMQWINDW" */
		uint64_t magic_word; /* stored last by init (release) */
	};
	uint32_t version;       /* SMQ_FORMAT_VERSION */
	uint32_t sb_size;       /* SMQ_SB_SIZE */
	uint32_t boards, queues, entries, entry_size;
	uint64_t window_size;   /* bytes the layout occupies */
	uint32_t line_size;     /* SMQ_LINE */
	uint32_t checksum;      /* CRC-32C of bytes 8..43 and the queue table */
	uint8_t pad0[16];
	/* line 1: run-time state */
	uint64_t generation;
	uint32_t system_state;  /* enum smq_system_state */
	uint32_t pad1;
	uint64_t format_time_ns;
	uint8_t pad2[SMQ_SB_SIZE - 88];
};

/* Board table slot, one line each, written by the board it describes. */
struct smq_board_slot {
	uint32_t state;         /* enum smq_board_state */
	uint32_t pid;
	uint64_t generation;
	uint64_t heartbeat_ns;
	uint64_t heartbeat_count;
	char host[32];
};

/* Queue table entry, written at init. */
struct smq_qdesc {
	uint32_t index;
	uint32_t receiver;
};

/* Each board region starts with a notice line written by board 0: the
 * generation and system state pushed to where the board reads locally. */
struct smq_notice {
	uint64_t generation;
	uint32_t system_state;
	uint32_t pad;
	uint64_t check;         /* smq_notice_check(generation, board): after a
				   re-init with another geometry, whatever now
				   lies where a stale board looks can not pass
				   for its notice */
	uint8_t pad2[40];
};

/* Sender side of a lane, in the sending board's region. */
struct smq_lane_out {           /* written by the sending board */
	uint64_t top;           /* committed: next sequence to write */
	uint32_t lock;          /* tid of the sender holding the lane */
	uint32_t pad;
	uint64_t messages, bytes, full_waits, doorbells;
	uint8_t pad2[16];
};
struct smq_lane_fc {            /* flowControl, written by the receiver at
				   every message; the sender reads it only
				   when its cached copy says the ring is full */
	uint64_t bottom;        /* next sequence the receiver will read */
	uint8_t pad[56];
};
struct smq_lane_wake {          /* flowControl, written by the receiver only
				   when it sleeps, wakes, or rings: the
				   sender's read at every send stays local */
	uint64_t sleep_epoch;   /* odd while the receiver sleeps */
	uint32_t space_bell;    /* the sender waits here for room */
	uint32_t pad;
	uint8_t pad2[48];
};

/* Receiver side of a queue, in the receiving board's region. */
struct smq_rx {                 /* written by the receiving board */
	uint32_t index;
	uint32_t owner;         /* pid of the open receiver, 0 if none */
	uint32_t cursor;        /* next lane to look at (rotating fairness) */
	uint32_t pad;
	uint64_t messages, bytes, sleeps, wakeups;
	uint64_t epoch;         /* generation of the last init or clear of this
				   queue: keys its signatures; written only
				   while formatting */
	uint64_t sleep_epoch;   /* odd while the receiver sleeps */
	/* followed by one line of uint64_t bottom[boards] rounded up */
};
struct smq_bell {               /* written by senders */
	uint32_t doorbell;
	uint8_t pad[60];
};
struct smq_lane_in {            /* line s written by sending board s at
				   every message */
	uint64_t top;           /* published: entries below it are complete */
	uint8_t pad[56];
};
struct smq_lane_ask {           /* line s written by sending board s only
				   when it waits for room */
	uint64_t space_wait;    /* space_bell + 1 while a sender waits */
	uint8_t pad[56];
};
struct smq_entry {
	uint32_t size;
	uint16_t sender;
	uint16_t flags;
	uint64_t signature;
	/* payload follows */
};

_Static_assert(sizeof(struct smq_sb) == SMQ_SB_SIZE, "superblock size");
_Static_assert(sizeof(struct smq_board_slot) == SMQ_LINE, "board slot");
_Static_assert(sizeof(struct smq_notice) == SMQ_LINE, "notice");
_Static_assert(sizeof(struct smq_lane_out) == SMQ_LINE, "lane_out");
_Static_assert(sizeof(struct smq_lane_fc) == SMQ_LINE, "lane_fc");
_Static_assert(sizeof(struct smq_rx) == SMQ_LINE, "rx");
_Static_assert(sizeof(struct smq_bell) == SMQ_LINE, "bell");
_Static_assert(sizeof(struct smq_lane_in) == SMQ_LINE, "lane_in");
_Static_assert(sizeof(struct smq_lane_ask) == SMQ_LINE, "lane_ask");
_Static_assert(sizeof(struct smq_lane_wake) == SMQ_LINE, "lane_wake");
_Static_assert(sizeof(struct smq_entry) == SMQ_ENTRY_HEADER, "entry");

/* Offsets of everything, computed from the geometry alone. */
struct smq_layout {
	uint32_t boards, queues, entries, entry_size;
	uint64_t stride;        /* bytes per entry slot */
	uint64_t board_table, queue_table;
	uint64_t size;          /* total bytes */
	uint64_t region[SMQ_MAX_BOARDS];      /* start of each board's region */
	uint64_t region_size[SMQ_MAX_BOARDS];
	uint16_t *receiver;     /* [queues] */
	uint64_t *rx;           /* [queues] offset of struct smq_rx */
	uint64_t bottoms_size;  /* bytes of the bottom[] array, whole lines */
};

/* rx area of a queue: rx line, bottoms, bell, lane_in[boards],
 * lane_ask[boards], rings */
static inline uint64_t lay_bottoms(const struct smq_layout *l, unsigned q)
{ return l->rx[q] + SMQ_LINE; }
static inline uint64_t lay_bell(const struct smq_layout *l, unsigned q)
{ return lay_bottoms(l, q) + l->bottoms_size; }
static inline uint64_t lay_lane_in(const struct smq_layout *l, unsigned q,
				   unsigned s)
{ return lay_bell(l, q) + SMQ_LINE + (uint64_t)s * SMQ_LINE; }
static inline uint64_t lay_lane_ask(const struct smq_layout *l, unsigned q,
				    unsigned s)
{ return lay_lane_in(l, q, l->boards) + (uint64_t)s * SMQ_LINE; }
static inline uint64_t lay_ring(const struct smq_layout *l, unsigned q,
				unsigned s)
{
	return lay_lane_ask(l, q, l->boards) +
	       (uint64_t)s * l->entries * l->stride;
}
static inline uint64_t lay_notice(const struct smq_layout *l, unsigned b)
{ return l->region[b]; }
/* in the sending board's region: lane_out, lane_fc and lane_wake for
 * every queue */
#define SMQ_LANE_LINES 3
static inline uint64_t lay_lane_out(const struct smq_layout *l, unsigned s,
				    unsigned q)
{ return l->region[s] + SMQ_LINE + (uint64_t)q * SMQ_LANE_LINES * SMQ_LINE; }
static inline uint64_t lay_lane_fc(const struct smq_layout *l, unsigned s,
				   unsigned q)
{ return lay_lane_out(l, s, q) + SMQ_LINE; }
static inline uint64_t lay_lane_wake(const struct smq_layout *l, unsigned s,
				     unsigned q)
{ return lay_lane_out(l, s, q) + 2 * SMQ_LINE; }

/* A mapped window, as a transport hands it over. */
struct smq_map {
	const struct smq_transport *tp;
	void *base;
	uint64_t size;
	int fd;
	bool wc;                /* write-combining: fence before publishing */
	char name[256];
};

/* A transport: a small table of operations, picked by the spec's prefix. */
struct smq_transport {
	const char *name;
	const char *help;
	/* map the window named arg; create it if flags has SMQ_OPEN_CREATE */
	int (*open)(struct smq_map *m, const char *arg, unsigned flags);
	/* make the window at least size bytes and map all of it */
	int (*resize)(struct smq_map *m, uint64_t size);
	void (*close)(struct smq_map *m);
	/* permission bits of the object; NULL where there are none */
	int (*chmod)(struct smq_map *m, unsigned mode);
	/* a doorbell is a 32-bit word in the window: wake whoever waits on it;
	 * wait while it still reads seen, until deadline (NULL: forever).
	 * NULL for both: no doorbell, receivers and senders poll. */
	void (*ring)(struct smq_map *m, uint32_t *bell);
	int (*wait)(struct smq_map *m, uint32_t *bell, uint32_t seen,
		    const struct timespec *deadline);
};

extern const struct smq_transport smq_transport_shm;
extern const struct smq_transport smq_transport_file;
extern const struct smq_transport smq_transport_pci;
int smq_transport_open(struct smq_map *m, const char *spec, unsigned flags);
void smq_map_close(struct smq_map *m);

struct smq_window {
	struct smq_map map;
	unsigned board;
	bool valid;             /* attached to a validated layout */
	uint64_t generation;    /* the generation we attached under */
	uint64_t check;         /* smq_notice_check(generation, board) */
	struct smq_layout lay;
	uint64_t beats;         /* heartbeats written by this handle */
	uint64_t host_written;  /* generation whose slot has our host name */
	uint32_t pid;
	char host[32];
};

struct smq_queue {
	struct smq_window *w;
	uint64_t generation;    /* the window's generation at open */
	uint64_t check;         /* its notice check */
	unsigned index;
	enum smq_role role;
	unsigned flags;
	unsigned spin_ns;
	/* sender: */
	struct smq_lane_out *out;
	struct smq_lane_fc *fc;
	struct smq_lane_wake *wake;
	struct smq_lane_in *in;
	struct smq_lane_ask *ask;
	uint8_t *ring;
	uint64_t bottom_seen;   /* the receiver's bottom as last read: the
				   ring is re-read only when this says full */
	uint64_t epoch;         /* the queue's signature key */
	uint64_t rung_epoch;    /* last receiver sleep we rang for */
	uint32_t tid;
	/* receiver: */
	struct smq_rx *rx;
	uint64_t *bottoms;
	struct smq_bell *bell;
	struct smq_lane_in *lanes;      /* [boards] */
	struct smq_lane_ask *asks;      /* [boards] */
	struct smq_lane_fc **fcs;       /* [boards], in the senders' regions */
	struct smq_lane_wake **wakes;   /* [boards], in the senders' regions */
	uint32_t *space_rung;           /* [boards] last space_bell rung */
	const struct smq_entry **heads; /* [boards] entry at each bottom */
	uint64_t *expect;               /* [boards] its signature when written */
	uint32_t cursor;
	uint8_t *rings;
	uint64_t sleep_epoch;
	uint32_t pid;
};

static inline void *at(const struct smq_window *w, uint64_t off)
{ return (uint8_t *)w->map.base + off; }

/* format.c */

int smq_layout_compute(struct smq_layout *l, const struct smq_geometry *g);
void smq_layout_free(struct smq_layout *l);
uint32_t smq_crc32c(uint32_t crc, const void *p, size_t n);
uint32_t smq_geometry_checksum(const void *base, const struct smq_layout *l);
/* Validate the static part (superblock, tables); fills l on success. */
int smq_check_static(const void *base, uint64_t size, struct smq_layout *l,
		     struct smq_fault *f);
int smq_check_dynamic(const void *base, const struct smq_layout *l,
		      struct smq_fault *f);

/* window.c: write this board's heartbeat (its slot in the board table) */
void smq_beat(struct smq_window *w);
/* Whether waiting must poll: the transport has no doorbell, or a board
 * announced from another host (a futex wakes only its own kernel). */
bool smq_must_poll(struct smq_window *w);
#define SMQ_POLL_NAP_NS 50000

/* time.c */
uint64_t smq_now_ns(void);
uint64_t smq_realtime_ns(void);
void smq_deadline(struct timespec *ts, int timeout_ms);
bool smq_past(const struct timespec *deadline);
bool smq_pid_alive(uint32_t id);

uint64_t smq_signature(uint64_t gen, unsigned q, unsigned s, uint64_t seq);

static inline uint64_t smq_notice_check(uint64_t gen, unsigned board)
{
	return ~smq_signature(gen, 0xffff, board, 0x4e4f54494345ull);
}

static inline int smq_stale_gen(const struct smq_window *w, uint64_t gen,
				uint64_t check)
{
	const struct smq_notice *n = at(w, lay_notice(&w->lay, w->board));
	return LOAD_ACQ(&n->generation) != gen || LOAD(&n->check) != check
	       ? -ESTALE : 0;
}

static inline int smq_stale(const struct smq_window *w)
{
	return smq_stale_gen(w, w->generation, w->check);
}

/* A queue handle is stale after any init or clear, even one made through
 * its own window handle: its pointers and signature key are outdated. */
static inline int smq_queue_stale(const struct smq_queue *q)
{
	return smq_stale_gen(q->w, q->generation, q->check);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

#endif
