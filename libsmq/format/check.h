/* libsmq internals of validation, shared by its two halves only: the
 * window's layout and tables (validate.c) and its lanes (lanes.c). */
#ifndef SMQ_CHECK_H
#define SMQ_CHECK_H

#include <stdio.h>
#include "format.h"
#include "view.h"

/* A fault named in f (if any): the field, where, what it held and the
 * bound it broke; returns -err. */
static inline int fault(struct smq_fault *f, int err, const char *field,
			uint64_t offset, uint64_t value, uint64_t limit,
			int kind)
{
	if (f) {
		snprintf(f->field, sizeof(f->field), "%s", field);
		f->offset = offset;
		f->value = value;
		f->limit = limit;
		f->kind = kind;
	}
	return -err;
}
#define EXPECTED SMQ_FAULT_EXPECTED
#define AT_MOST SMQ_FAULT_AT_MOST

static inline const struct smq_sb *sb_view(const struct smq_view *v)
{
	return smq_view_at(v, 0, sizeof(struct smq_sb));
}

#endif
