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
 * is a table of operations, as pciutils' access methods are.  This header
 * is the table and the map it fills; the barriers are in order.h, what
 * transports share among themselves in common.h. */
#ifndef SMQ_TRANSPORT_H
#define SMQ_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "base/far.h"
#include "format/view.h"
#include "order.h"

struct smq_layout;
struct smq_bell_addr;

/* Doorbells: how a waiter arms and how a ringer wakes it is told beside
 * the doorbell address, which the window stores (format.h). */


/* A mapped window, as a transport hands it over. */
struct smq_map {
	const struct smq_transport *tp;
	char name[256];         /* the canonical spec, e.g. "shm:smq" */
	/* A single window (every transport but split): the whole mapping. */
	void *base;
	uint64_t size;
	/* Bytes the window holds that init cannot grow, set at open: a
	 * device's (a BAR, an ivshmem server's memory), or an object another
	 * program sized and no init ever wrote (smq_map_sized_elsewhere());
	 * 0: init grows the window to what its layout needs. */
	uint64_t fixed_size;
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
	bool readonly;          /* opened with SMQ_OPEN_READONLY: mapped
				   without write access where it can be */
	uint64_t offset;        /* where the window begins in the object
				   ("file@2M:PATH"): a whole number of
				   pages, 0 unless takes_offset */
	void *priv;             /* the transport's own state */
};

struct smq_transport {
	const char *name;
	const char *help;       /* one line for "--window help" */
	/* The window may begin inside the object: "name@OFFSET:ARG" sets
	 * the map's offset before open (registry.c). */
	bool takes_offset;
	/* Map the window named arg (after the "name:" prefix).  flags are
	 * smq_open()'s.  A single window sets base, size and one segment. */
	int (*open)(struct smq_map *m, const char *arg, unsigned flags);
	/* Map everything layout l uses.  With grow (init), make the window
	 * large enough first (a window of fixed_size smaller than l is
	 * -ENOSPC, never grown); without, a window smaller than l is
	 * -SMQ_ETOOSMALL.  Devices: smq_map_fixed_layout(). */
	int (*map_layout)(struct smq_map *m, const struct smq_layout *l,
			  bool grow);
	void (*close)(struct smq_map *m);
	/* Permission bits of the object; NULL where there are none. */
	int (*chmod)(struct smq_map *m, unsigned mode);
	/* Whether the object mapped was removed since (monitors notice);
	 * NULL: a device, never removed while mapped. */
	bool (*removed)(struct smq_map *m);
	/* Remove the window named arg (smq_remove()); NULL: -EOPNOTSUPP. */
	int (*remove)(const char *arg);
	/* Words for err as it came from this transport opening or using the
	 * window named arg, where the transport knows the cause better than
	 * smq_strerror(): written to buf, returning true; false leaves the
	 * words to smq_strerror().  NULL: none of its own. */
	bool (*explain)(const char *arg, int err, char *buf, size_t len);
	/* ...the same for a transport that takes an offset, which it is
	 * given (0: none); used instead of explain where set. */
	bool (*explain_at)(const char *arg, uint64_t offset, int err,
			   char *buf, size_t len);
	/* Call fn with the spec of every window of this transport that this
	 * host holds (smq_list_windows()); NULL: none can be listed. */
	int (*list)(int (*fn)(const char *spec, void *arg), void *arg);

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
extern const struct smq_transport smq_transport_broker;
extern const struct smq_transport smq_transport_dax;

/* registry.c */
int smq_transport_open(struct smq_map *m, const char *spec, unsigned flags);
/* The transport spec names (NULL: none) and its argument. */
const struct smq_transport *smq_transport_of(const char *spec,
					     const char **arg);
#endif
