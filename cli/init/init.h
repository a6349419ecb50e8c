/* smqctl init, in parts: what the window is now (look.c), the layout of
 * --dry-run (layout.c), the comparison of --keep (keep.c).  cmd_init.c
 * holds the options and the command. */
#ifndef SMQCTL_INIT_H
#define SMQCTL_INIT_H

#include "../shape/shape.h"

/* init --keep: whether the window already holds exactly the shape s and
 * is sound, looked at as a monitor (nothing is written). */
struct keep_look {
	bool asked;             /* --keep */
	bool same;              /* it does: init keeps it */
	uint64_t generation;    /* the window's, when same */
	char why[256];          /* what differs, when not */
};
void keep_look(struct ctx *ctx, const struct shape_opts *s,
	       struct keep_look *k);

/* init --dry-run: what init would find and do (it decides as init does,
 * saying a refusal in init's words). */
struct init_verdict {
	bool exists;            /* the window object exists */
	struct smq_window_info wi;
	bool refused;           /* init would refuse (said on stderr) */
	struct smq_emptied emptied; /* ...else what it would empty */
};
/* The layout of s, part by part, the window, and the verdict. */
void print_layout(struct ctx *ctx, const struct shape_opts *s,
		  const struct init_verdict *v, const struct keep_look *k);
/* The keys init's JSON and --dry-run's share: the geometry, "checksum",
 * "receivers" and "senders". */
void json_shape_keys(struct json *j, const struct shape_opts *s,
		     bool checksum, bool scratch);

#endif
