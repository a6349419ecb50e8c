/* What fits a window of fixed size (a BAR, an object another program
 * sized) when a shape does not: fewer entries, smaller entries, fewer
 * senders a queue.  The library's smq_shape_size() says every size; this
 * only searches. */
#include <inttypes.h>
#include <string.h>
#include "shape.h"

void window_look(struct ctx *ctx, struct window_look *l, bool judge)
{
	struct smq_window *w;
	struct smq_window_info wi;

	memset(l, 0, sizeof(*l));
	/* a monitor: it creates, claims and writes nothing */
	l->open_err = smq_open(window_spec(ctx), 0,
			       SMQ_OPEN_READONLY | SMQ_OPEN_RAW, &w);
	if (l->open_err)
		return;
	l->exists = true;
	smq_window_info(w, &wi, sizeof(wi));
	l->mapped_size = wi.mapped_size;
	l->fixed_size = wi.fixed_size;
	l->not_window = wi.not_window;
	first_bytes_text(&wi, l->begins, sizeof(l->begins));
	if (judge && !l->not_window) {
		int err = smq_validate(w, &l->fault, sizeof(l->fault));
		if (err == -SMQ_EVERSION || err == -SMQ_EFEATURE)
			l->refuse_err = err;
	}
	smq_close(w);
}

/* k boards from the receiver on: a set for a queue that has none */
static uint64_t some_senders(const struct shape_opts *s, unsigned q,
			     unsigned k)
{
	uint64_t m = 0;

	for (unsigned i = 0; i < k; i++)
		m |= 1ull << ((s->receivers[q] + i) % s->g.boards);
	return m;
}

bool shape_bytes(const struct shape_opts *s, uint32_t entries,
		 uint32_t entry_size, unsigned k, uint64_t *bytes)
{
	static uint64_t sets[SMQ_MAX_QUEUES];
	struct smq_shape sh = shape_of(s);

	if (entries)
		sh.geometry.entries = entries;
	if (entry_size)
		sh.geometry.entry_size = entry_size;
	if (k) {
		for (unsigned q = 0; q < s->g.queues; q++)
			sets[q] = s->senders[q] ? s->senders[q]
						: some_senders(s, q, k);
		sh.senders = sets;
	}
	return smq_shape_size(&sh, sizeof(sh), bytes) == 0;
}

uint32_t shape_most_entries(const struct shape_opts *s, uint64_t have,
			    uint32_t upto, uint64_t *bytes)
{
	uint32_t e = 1;

	while (e <= upto / 2)
		e *= 2;
	for (; e >= 1; e /= 2)
		if (shape_bytes(s, e, 0, 0, bytes) && *bytes <= have)
			return e;
	if (!shape_bytes(s, 1, 0, 0, bytes))
		*bytes = 0;
	return 0;
}

/* The largest entry size that fits: sizes grow with it, so halve the
 * range until it is one. */
static uint32_t largest_entry_size(const struct shape_opts *s, uint64_t have,
				   uint64_t *bytes)
{
	uint32_t lo = 1, hi = s->g.entry_size;
	uint64_t b;

	if (!shape_bytes(s, 0, 1, 0, bytes) || *bytes > have)
		return 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		if (shape_bytes(s, 0, mid, 0, &b) && b <= have)
			lo = mid;
		else
			hi = mid - 1;
	}
	shape_bytes(s, 0, lo, 0, bytes);
	return lo;
}

/* The most senders a queue, for the queues without a set, that fit. */
static unsigned most_senders(const struct shape_opts *s, uint64_t have,
			     uint64_t *bytes)
{
	bool unset = false;

	*bytes = 0;
	for (unsigned q = 0; q < s->g.queues; q++)
		unset |= !s->senders[q];
	if (!unset || s->g.boards < 2)
		return 0;
	for (unsigned k = s->g.boards - 1; k >= 1; k--)
		if (shape_bytes(s, 0, 0, k, bytes) && *bytes <= have)
			return k;
	if (!shape_bytes(s, 0, 0, 1, bytes))
		*bytes = 0;
	return 0;
}

void shape_fit(const struct shape_opts *s, uint64_t have,
	       struct shape_fit *f)
{
	memset(f, 0, sizeof(*f));
	f->have = have;
	if (!shape_bytes(s, 0, 0, 0, &f->need))
		f->need = 0;
	f->entries = shape_most_entries(s, have, s->g.entries,
					&f->entries_bytes);
	f->entry_size = largest_entry_size(s, have, &f->entry_size_bytes);
	f->senders = most_senders(s, have, &f->senders_bytes);
	struct smq_shape sh = shape_of(s);
	sh.flags &= ~SMQ_SHAPE_SCRATCH;
	if (!(s->flags & SMQ_SHAPE_SCRATCH) ||
	    smq_shape_size(&sh, sizeof(sh), &f->no_scratch_bytes))
		f->no_scratch_bytes = 0;
}

static void line(FILE *f, const char *indent, const char *what,
		 uint64_t bytes, bool fits)
{
	char size[32];

	fprintf(f, "%s%s%s %s (%" PRIu64 " bytes)\n", indent, what,
		fits ? ":" : " does not fit either:", human_bytes(bytes, size),
		bytes);
}

void print_fit(FILE *f, const char *indent, const struct shape_opts *s,
	       const struct shape_fit *fit)
{
	char what[96], size[32];
	bool unset = false;

	for (unsigned q = 0; q < s->g.queues; q++)
		unset |= !s->senders[q];
	fprintf(f, "%swhat fits in %s:\n", indent, human_bytes(fit->have,
							       size));
	char deeper[32];
	snprintf(deeper, sizeof(deeper), "%s  ", indent);
	snprintf(what, sizeof(what), "--entries %" PRIu32,
		 fit->entries ? fit->entries : 1);
	if (fit->entries_bytes)
		line(f, deeper, what, fit->entries_bytes, fit->entries);
	snprintf(what, sizeof(what), "--entry-size %" PRIu32,
		 fit->entry_size ? fit->entry_size : 1);
	if (fit->entry_size_bytes)
		line(f, deeper, what, fit->entry_size_bytes, fit->entry_size);
	if (unset && s->g.boards > 1 && fit->senders_bytes) {
		unsigned k = fit->senders ? fit->senders : 1;
		snprintf(what, sizeof(what), "%u sender%s a queue (--senders "
			 "Q:B%s for each queue without a set)", k,
			 k == 1 ? "" : "s", k == 1 ? "" : k == 2 ? ",B" : ",B...");
		line(f, deeper, what, fit->senders_bytes, fit->senders);
	}
	if (fit->no_scratch_bytes)
		line(f, deeper, "--no-scratch (smqctl check skips its map and "
		     "raw link tests)", fit->no_scratch_bytes,
		     fit->no_scratch_bytes <= fit->have);
}
