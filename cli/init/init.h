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

/* init --dry-run: the layout of s, part by part, and whether it fits the
 * window as it is; 0, or 1 when it does not fit (init would refuse). */
int print_layout(struct ctx *ctx, const struct shape_opts *s,
		 const struct window_look *l, const struct keep_look *k);
/* The keys init's JSON and --dry-run's share: the geometry, "checksum",
 * "receivers" and "senders". */
void json_shape_keys(struct json *j, const struct shape_opts *s,
		     bool checksum, bool scratch);

#endif
