/* smqctl check: one verdict on a window, its PCI path and every board.
 * The checks are a table; each one ends PASS, WARN, FAIL or SKIP with a
 * line of evidence and, for a WARN or FAIL, what to do next.  The window
 * checks read the window as a monitor (window.c); the PCI checks read the
 * device's path through the probes (pci.c); the cross-board checks run
 * between this board and the others over the diagnostic queues and the
 * scratch areas (cross.c and its parts). */
#ifndef SMQCTL_CHECK_H
#define SMQCTL_CHECK_H

#include <stdarg.h>
#include "smq_tools.h"  /* the map and the raw link */
#include "../smqctl.h"
#include "../measure/measure.h"

enum check_status { CHECK_PASS, CHECK_WARN, CHECK_FAIL, CHECK_SKIP };

/* In the order they run and print. */
enum check_id {
	CK_FORMAT, CK_GENERATION, CK_BOARDS, CK_RECEIVERS, CK_FULL, CK_STALLED,
	CK_DIAG,
	CK_LINK, CK_AER, CK_PAYLOAD, CK_BAR, CK_VFIO,
	CK_MAP, CK_DOORBELLS, CK_RAW, CK_QUEUES,
	CK_COUNT
};

struct check_def {
	const char *name;       /* for --only and --skip */
	const char *group;      /* "window", "pci" or "cross" */
};
extern const struct check_def check_defs[CK_COUNT];

struct check_result {
	bool done;
	enum check_status status;
	char evidence[600];
	char next[400];         /* WARN, FAIL: what to do next */
};

/* A measurement between two boards, for the table after the checks and
 * for --json (NAN: not measured). */
#define CHECK_RAW_SIZES 6
struct pair_figures {
	unsigned from, to;
	/* doorbells: round trips with the peer asleep, and polling */
	bool bell_measured, bell_delivered;
	char bell_why[160];     /* not measured or not delivered: why */
	double wake_median_ns, wake_p99_ns, wake_max_ns, polled_median_ns;
	/* raw link */
	bool raw_measured;
	double write_mb_per_s[CHECK_RAW_SIZES];
	double model_mb_per_s[CHECK_RAW_SIZES];
	double read_median_ns, read_p99_ns;
	/* the queue */
	bool queue_measured;
	double half_rtt_ns, pingpong_msgs_per_s;
	uint64_t stream_size;
	double stream_mb_per_s, stream_fraction, rtt_over_read;
};
extern const size_t check_raw_sizes[CHECK_RAW_SIZES];

#define CHECK_MAX_PAIRS 64

struct check_opts {
	bool selected[CK_COUNT];
	bool strict, peer_mode;
	int timeout_ms;         /* waiting for other boards */
	int watch_ms;           /* AER counts read at least this far apart */
	int stall_ms;           /* --stall */
	const char *device;     /* --device BDF[/BAR] */
	const char *dump;       /* --dump FILE */
	const char *sysfs;      /* --sysfs DIR */
};

struct check_run {
	struct ctx *ctx;
	struct check_opts *o;
	struct check_result r[CK_COUNT];
	char window_name[256];
	unsigned boards;        /* of the window; 0 when it did not open */
	uint64_t window_size;
	uint32_t features_compat;
	struct pair_figures pairs[CHECK_MAX_PAIRS];
	int npairs;
	char model_note[200];   /* which link the raw figures are set beside */
	bool model;             /* the window's device has a link to model */
	int gen, width, mps, mrrs; /* ...which trained so */
};

static inline bool check_wanted(const struct check_run *cr, enum check_id id)
{
	return cr->o->selected[id];
}
/* Sets a check's verdict and evidence (printf), once: the first verdict
 * stays.  check_next() adds what to do next. */
void check_set(struct check_run *cr, enum check_id id,
	       enum check_status status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void check_next(struct check_run *cr, enum check_id id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Every check of a group not yet done: SKIP with why. */
void check_skip_group(struct check_run *cr, const char *group,
		      const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* "name,name,...": every name a check or a group; false with the bad one
 * in *bad. */
bool check_select(bool sel[CK_COUNT], const char *list, bool value,
		  const char **bad, size_t *badlen);

/* The parts, each filling its checks. */
void check_window(struct check_run *cr);
/* The PCI path: begin reads the AER counts, end reads them again and
 * judges every PCI check. */
struct pci_state;
struct pci_state *check_pci_begin(struct check_run *cr);
void check_pci_end(struct check_run *cr, struct pci_state *ps);
/* The cross-board checks; returns an exit status other than 0 only for a
 * failure to run at all (a usage error: 2). */
int check_boards(struct check_run *cr);

/* report.c: the checks as text or JSON, and the exit status. */
int check_report(struct check_run *cr);

#endif
