/* libsmq internals: transports.  A transport maps a window's regions and
 * supplies the window's memory ordering and doorbells.  Not installed.
 *
 * A window is a set of regions, one per board (smq(7)).  Every offset the
 * library computes is a canonical offset: the place a byte has when all
 * regions sit in one window.  A transport maps canonical ranges into
 * memory as segments: one segment for a single window (shm, file, a BAR),
 * one or more per board where each board's region is its own memory
 * (the split transport; an NTB whose peers' regions are reached through
 * BAR windows).
 *
 * Transports are picked by the prefix of a window spec ("shm:NAME"); each
 * is a table of operations, as pciutils' access methods are. */
#ifndef SMQ_TRANSPORT_H
#define SMQ_TRANSPORT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "../view.h"

struct smq_layout;
struct smq_bell_addr;

/* ---- memory ordering ----
 * publish(): stores before it reach the other boards before stores after
 *            it (x86 write-combining: sfence; arm64: dmb oshst);
 * consume(): loads before it complete before loads after it (x86 WC:
 *            lfence; arm64: dmb oshld);
 * full():    stores before it are visible before loads after it (x86:
 *            mfence; arm64: dmb osh);
 * mark():    a call's in-flight mark before its read of the notice: full(),
 *            or, where every process that maps the window runs under this
 *            kernel, a compiler barrier that board 0's maintenance pairs
 *            with a barrier on every CPU (smq_marks_settle);
 * light:     mark() is the compiler barrier.
 * A fence orders; it does not deliver: a posted write across PCIe still
 * arrives at no promised time. */
struct smq_order {
	const char *name;
	void (*publish)(void);
	void (*consume)(void);
	void (*full)(void);
	void (*mark)(void);
	bool light;
};
/* Plain C11 fences: memory that every board reaches coherently (a file,
 * which may also back a virtual machine's memory; an ivshmem peer). */
extern const struct smq_order smq_order_c11;
/* ...and marks set with a compiler barrier: memory only processes of this
 * kernel can map (shm:, split:), where membarrier(2) reaches them all. */
extern const struct smq_order smq_order_local;
/* Device memory: a BAR mapped uncached or write-combining. */
extern const struct smq_order smq_order_device;
/* The order for a transport of this kernel's memory: smq_order_local when
 * this kernel can send a barrier to every CPU, else smq_order_c11. */
const struct smq_order *smq_order_of_kernel(void);
/* Board 0, between invalidating the notices and reading the marks: the
 * system-wide barrier that light marks rely on.  0, or -errno when this
 * kernel cannot send it. */
int smq_marks_settle(void);

/* Doorbells: how a waiter arms and how a ringer wakes it is told beside
 * the doorbell address, which the window stores (format.h). */

/* A pointer into another board's region.  It can only be written through
 * (smq_far_store*, smq_far_copy): the message path never reads across
 * the bus.  A read is a named exception (see handle.h). */
struct smq_far {
	uint8_t *far_;
};
static inline struct smq_far smq_far_offset(struct smq_far p, uint64_t off)
{
	return (struct smq_far){ p.far_ + off };
}

/* A mapped window, as a transport hands it over. */
struct smq_map {
	const struct smq_transport *tp;
	char name[256];         /* the canonical spec, e.g. "shm:smq" */
	/* A single window (every transport but split): the whole mapping. */
	void *base;
	uint64_t size;
	int fd;
	/* What the library reads and writes through, filled by open and by
	 * map_layout: for a single window, one segment of the whole mapping
	 * (smq_map_single()). */
	struct smq_segment seg[SMQ_MAX_SEGMENTS];
	unsigned nseg;
	const struct smq_order *order;
	/* Mappings replaced when the window grew: kept until close, so that
	 * pointers into them (a stale handle's marks) stay valid. */
	struct { void *base; uint64_t size; } retired[SMQ_MAX_SEGMENTS / 2];
	unsigned nretired;
	bool user_data;         /* a file that may hold a user's own data:
				   init overwrites only a window (or with
				   SMQ_OPEN_FORCE) */
	bool create;            /* opened with SMQ_OPEN_CREATE */
	bool force;             /* opened with SMQ_OPEN_FORCE */
	void *priv;             /* the transport's own state */
};

struct smq_transport {
	const char *name;
	const char *help;       /* one line for "--window help" */
	/* Map the window named arg (after the "name:" prefix).  flags are
	 * smq_open()'s.  A single window sets base, size and one segment. */
	int (*open)(struct smq_map *m, const char *arg, unsigned flags);
	/* Map everything layout l uses.  With grow (init), make the window
	 * large enough first; without, a window smaller than l is -SMQ_ETOOSMALL.
	 * Single windows: smq_map_single_layout(). */
	int (*map_layout)(struct smq_map *m, const struct smq_layout *l,
			  bool grow);
	void (*close)(struct smq_map *m);
	/* Permission bits of the object; NULL where there are none. */
	int (*chmod)(struct smq_map *m, unsigned mode);

	/* Doorbells; all NULL: this transport has none, waiters nap.
	 * bell_open gives one waiter a doorbell address of its own (an
	 * ivshmem vector per waiter: an eventfd is read by one waiter only);
	 * bell_close returns it. */
	int (*bell_open)(struct smq_map *m, struct smq_bell_addr *a);
	void (*bell_close)(struct smq_map *m, const struct smq_bell_addr *a);
	/* The kinds this mapping can ring (SMQ_BELL_BIT()s); with
	 * SMQ_BELL_FUTEX, only waiters whose host is smq_boot_hash(). */
	uint32_t (*ring_kinds)(struct smq_map *m);
	/* Store value in word (in the waiter's region, reached through this
	 * mapping), then ring the waiter at a.  Called only for an address
	 * whose kind ring_kinds() includes. */
	void (*ring)(struct smq_map *m, const struct smq_bell_addr *a,
		     struct smq_far word, uint32_t value);
	/* Wait on our own doorbell a until it rings, word (in our own
	 * region) no longer holds seen, or deadline (CLOCK_MONOTONIC,
	 * absolute; NULL: none) passes.  Returns 0 (woken, or the word had
	 * changed: the caller looks again either way), -ETIMEDOUT, or another
	 * negative errno. */
	int (*wait)(struct smq_map *m, const struct smq_bell_addr *a,
		    const uint32_t *word, uint32_t seen,
		    const struct timespec *deadline);
	/* Words for "how a waiter is woken" in dump and pingpong, e.g.
	 * "futex doorbell", "ivshmem doorbell (MSI-X, peer 3)". */
	void (*describe)(struct smq_map *m, char *buf, size_t len);
};

extern const struct smq_transport smq_transport_shm;
extern const struct smq_transport smq_transport_file;
extern const struct smq_transport smq_transport_split;
extern const struct smq_transport smq_transport_pci;
extern const struct smq_transport smq_transport_ivshmem;

/* registry.c */
int smq_transport_open(struct smq_map *m, const char *spec, unsigned flags);
/* A single window: one segment over [0, size) at base. */
void smq_map_single(struct smq_map *m);
/* map_layout for a single window of fixed size (a BAR, an ivshmem
 * memory): -SMQ_ETOOSMALL if the layout does not fit. */
int smq_map_fixed_layout(struct smq_map *m, const struct smq_layout *l,
			 bool grow);
/* Unmaps base/size and closes fd: every single-window transport's close. */
void smq_map_close(struct smq_map *m);
/* A mapping that is replaced: unmapped at close (or now, if too many). */
void smq_map_retire(struct smq_map *m, void *base, uint64_t size);

/* shm.c: helpers for transports over files and shm objects (and
 * smq_shm_name_ok(), in shm_name.h) */
/* Formatting takes the object over: ours and not writable by others, or
 * -SMQ_EFOREIGN; with force, made ours and 0600. */
int smq_fd_claim(int fd, bool force);
int smq_fd_grow(int fd, uint64_t size);         /* never shrinks */

/* Interrupt vectors of a doorbell device, one per waiter (an eventfd is
 * read by one waiter only).  registry.c. */
struct smq_vector_pool {
	pthread_mutex_t lock;
	uint64_t used;          /* bit v: vector v is some waiter's */
	unsigned n;             /* vectors there are, at most 64 */
};
void smq_vectors_init(struct smq_vector_pool *p, unsigned n);
/* A free vector, or -EBUSY. */
int smq_vectors_take(struct smq_vector_pool *p);
void smq_vectors_give(struct smq_vector_pool *p, unsigned v);

/* identity.c: a 64-bit hash of this kernel's boot id (changes at every
 * boot; equal for every process of one host). */
uint64_t smq_boot_hash(void);

/* The futex doorbell, for transports whose memory one kernel maps. */
void smq_futex_ring(struct smq_map *m, const struct smq_bell_addr *a,
		    struct smq_far word, uint32_t value);
int smq_futex_wait(struct smq_map *m, const struct smq_bell_addr *a,
		   const uint32_t *word, uint32_t seen,
		   const struct timespec *deadline);
int smq_futex_bell_open(struct smq_map *m, struct smq_bell_addr *a);
uint32_t smq_futex_ring_kinds(struct smq_map *m);
/* Waits for a ring on an eventfd (a doorbell's interrupt): 0 or
 * -ETIMEDOUT; takes the rings. */
int smq_wait_eventfd(int fd, const struct timespec *deadline);

#endif
