/* smqctl: a window's shape -- geometry, receivers, sender sets, features
 * -- as init, probe and model take it: from options (a child parser,
 * options.c) or from a description file (--from, description.c), both
 * through one setter (shape.c), and what of it fits a window of fixed
 * size (a BAR, an object another program sized; fit.c). */
#ifndef SMQCTL_SHAPE_H
#define SMQCTL_SHAPE_H

#include "../smqctl.h"

/* What a shape is made of: the options, and the keys of a description
 * file, which are their long names. */
enum shape_key {
	SHAPE_BOARDS, SHAPE_QUEUES, SHAPE_ENTRIES, SHAPE_ENTRY_SIZE,
	SHAPE_RECEIVER, SHAPE_SENDERS, SHAPE_CHECKSUM, SHAPE_GROUP,
	SHAPE_SCRATCH, SHAPE_JOURNAL,
	SHAPE_NKEYS
};
extern const char *const shape_key_names[SHAPE_NKEYS];

struct shape_opts {
	struct smq_geometry g;  /* g.receivers: receivers, once ready */
	uint32_t flags;         /* SMQ_SHAPE_* */
	uint32_t journal;       /* entries of each board's journal; 0: the
				   default (none: SMQ_SHAPE_NO_JOURNAL) */
	unsigned given;         /* 1 << enum shape_key for each key given, on
				   the command line or in the file */
	const char *from;       /* --from FILE; NULL: the options */
	bool any_sets;          /* some queue has a sender set */
	uint32_t key_at[SHAPE_NKEYS];  /* where each key was given */
	uint16_t receivers[SMQ_MAX_QUEUES];
	uint64_t senders[SMQ_MAX_QUEUES];  /* 0: every board */
	/* where queue q's receiver, and its senders, were given */
	uint32_t receiver_at[SMQ_MAX_QUEUES], senders_at[SMQ_MAX_QUEUES];
	/* groups, in the order given; the defs point into the arrays */
	uint32_t ngroups;
	struct smq_group_def groups[SMQ_MAX_GROUPS];
	char group_name[SMQ_MAX_GROUPS][SMQ_GROUP_NAME_MAX + 1];
	uint32_t group_queues[SMQ_MAX_GROUPS][SMQ_GROUP_MAX_MEMBERS];
	uint32_t group_at[SMQ_MAX_GROUPS];
};
/* Where a key was given: a line of the description file (1 on), this on
 * the command line, 0 nowhere. */
#define SHAPE_AT_OPTION UINT32_MAX

/* The child parser: its input is a struct shape_opts (the command passes
 * it on ARGP_KEY_INIT), set to shape_defaults() first.  --from beside the
 * other options is a usage error. */
extern const struct argp shape_argp;
void shape_defaults(struct shape_opts *s);
/* After parsing: reads the file of --from (words on stderr, 1, when it is
 * bad), fills in the defaults (queues, receivers); 0 when ready. */
int shape_ready(struct shape_opts *s);
/* Whether the command line gave a shape (probe and model show the window
 * it needs only then). */
bool shape_given(const struct shape_opts *s);
/* shape_ready(), then the bytes of the window s needs; 0, or 1 with words
 * on stderr. */
int shape_window(struct shape_opts *s, uint64_t *bytes);

/* shape.c: sets key to value (NULL: none), as the option --NAME or the
 * file's line NAME does; shown is what the words call it ("--boards" or
 * "boards"), at is where it was given.  In a file a key is given once (a
 * queue's receiver, its senders once each).  false: why says what is
 * wrong. */
bool shape_set(struct shape_opts *s, enum shape_key key, const char *value,
	       const char *shown, uint32_t at, char *why, size_t n);
/* Checks what only the whole shape tells: every queue and board a
 * receiver or a sender set names exists (dashes: "--" for the options'
 * words, "" for the file's).  false: why, and *at where it was given. */
bool shape_check(const struct shape_opts *s, const char *dashes, char *why,
		 size_t n, uint32_t *at);
/* description.c: reads s->from into s; words on stderr naming FILE:LINE,
 * and 1, when a line is bad. */
int shape_read_file(struct shape_opts *s);

/* shape.c: the library's struct, pointing into s. */
struct smq_shape shape_of(const struct shape_opts *s);
/* smq_shape_size() of s with entries and entry size replaced (0: s's),
 * or of s with k senders a queue for the queues without a set (k 0:
 * their sets as they are).  false: no such window (too large). */
bool shape_bytes(const struct shape_opts *s, uint32_t entries,
		 uint32_t entry_size, unsigned k, uint64_t *bytes);
/* "4 boards x 8 queues x 64 entries x 1 KiB", and what else it has. */
const char *shape_words(const struct shape_opts *s, char *buf, size_t n);

/* fit.c: what the window named by --window is, looked at as a monitor
 * (nothing is created or written): whether it exists, and the bytes it
 * holds that init cannot grow. */
struct window_look {
	bool exists;
	int open_err;           /* smq_open()'s, when it does not exist or
				   cannot be read */
	uint64_t mapped_size;
	uint64_t fixed_size;    /* 0: init grows it */
	bool not_window;        /* it holds other data: init refuses it */
	char begins[80];        /* ...and its first bytes, printable */
	int refuse_err;         /* a window of another format version or
				   with a feature unknown here, which init
				   refuses: -SMQ_EVERSION, -SMQ_EFEATURE */
	struct smq_fault fault; /* ...where */
};
/* judge: also whether init would refuse what it holds (refuse_err),
 * which reads the whole window */
void window_look(struct ctx *ctx, struct window_look *l, bool judge);

/* What fits in have bytes when s does not. */
struct shape_fit {
	uint64_t need, have;
	uint32_t entries;       /* the most entries (a power of two, fewer
				   than s's) that fit; 0: not even 1 */
	uint64_t entries_bytes; /* ...and the window then, or with 1 entry */
	uint32_t entry_size;    /* the largest entry size that fits; 0: not
				   even 1 byte */
	uint64_t entry_size_bytes;
	unsigned senders;       /* the most senders a queue (for the queues
				   without a set) that fit; 0: not even 1,
				   or every queue has a set already */
	uint64_t senders_bytes;
	uint64_t no_scratch_bytes; /* the window without scratch areas; 0:
				   it has none */
};
void shape_fit(const struct shape_opts *s, uint64_t have,
	       struct shape_fit *f);
/* The most entries, a power of two at most upto, whose window fits in
 * have bytes (its size in *bytes); 0: not even 1. */
uint32_t shape_most_entries(const struct shape_opts *s, uint64_t have,
			    uint32_t upto, uint64_t *bytes);
/* The lines that say what would fit, each begun with indent. */
void print_fit(FILE *f, const char *indent, const struct shape_opts *s,
	       const struct shape_fit *fit);

#endif
