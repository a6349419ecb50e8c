/* smqctl init --dry-run: where a shape's bytes go (smq_shape_parts()),
 * the diagnostic queues' share apart from the application queues', and
 * whether it fits the window as the window is.  Nothing is written. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "init.h"

void json_shape_keys(struct json *j, const struct shape_opts *s,
		     bool checksum, bool scratch)
{
	const struct smq_geometry *g = &s->g;

	json_u64(j, "boards", g->boards);
	json_u64(j, "queues", g->queues);
	json_u64(j, "entries", g->entries);
	json_u64(j, "entry_size", g->entry_size);
	json_bool(j, "checksum", checksum);
	json_bool(j, "scratch", scratch);
	json_begin(j, "receivers", '[');
	for (uint32_t q = 0; q < g->queues; q++)
		json_u64(j, NULL, s->receivers[q]);
	json_end(j, ']');
	json_begin(j, "senders", '[');
	for (uint32_t q = 0; q < g->queues; q++) {
		json_begin(j, NULL, '[');
		for (unsigned b = 0; b < g->boards; b++)
			if (!s->senders[q] || (s->senders[q] >> b & 1))
				json_u64(j, NULL, b);
		json_end(j, ']');
	}
	json_end(j, ']');
}

static void part(const char *name, uint64_t bytes)
{
	char size[32];

	printf("  %-32s %10s %12" PRIu64 " bytes\n", name,
	       human_bytes(bytes, size), bytes);
}

static void print_parts(const struct shape_opts *s,
			const struct smq_shape_parts *p, int verbose)
{
	char words[160], name[48];

	printf("layout of %s:\n", shape_words(s, words, sizeof(words)));
	part("superblock", p->superblock);
	part("control pages (one per board)", p->control);
	part("board and queue tables", p->tables);
	snprintf(name, sizeof(name), "application queues (%u)", s->g.queues);
	part(name, p->app_lanes + p->app_rings);
	part("  lanes (senders' lines)", p->app_lanes);
	part("  receive areas and rings", p->app_rings);
	snprintf(name, sizeof(name), "diagnostic queues (%u)", s->g.boards);
	part(name, p->diag_lanes + p->diag_rings);
	part("  lanes (senders' lines)", p->diag_lanes);
	part("  receive areas and rings", p->diag_rings);
	part("features", p->features);
	/* smq(7), feature scratch: 64 KiB of data and a page, a board */
	if (s->flags & SMQ_SHAPE_SCRATCH)
		part("  scratch areas (smqctl check)",
		     (uint64_t)s->g.boards * (SMQ_SCRATCH_DATA + 4096));
	part("padding (regions to pages)", p->padding);
	part("total", p->total);
	for (unsigned b = 0; verbose && b < s->g.boards; b++) {
		snprintf(name, sizeof(name), "region of board %u", b);
		part(name, p->region[b]);
	}
}

/* The window as it is, and whether the layout fits it. */
static bool print_window(struct ctx *ctx, const struct shape_opts *s,
			 const struct window_look *l, uint64_t total)
{
	char size[32], spare[32];

	if (!l->exists && l->open_err == -ENOENT) {
		printf("window %s does not exist yet: init creates it\n",
		       window_spec(ctx));
		return true;
	}
	if (!l->exists) {
		printf("window %s cannot be opened (%s): init would refuse it "
		       "too\n", window_spec(ctx), smq_strerror(l->open_err));
		return false;
	}
	if (l->not_window) {
		printf("window %s holds %s (%" PRIu64 " bytes) that is not an "
		       "smq window (it begins \"%s\"): init would refuse it; "
		       "--force formats it anyway\n", window_spec(ctx),
		       human_bytes(l->mapped_size, size), l->mapped_size,
		       l->begins);
		return false;
	}
	if (l->refuse_err) {
		printf("window %s holds an smq window this smqctl does not "
		       "read: init would refuse it; --force formats it anyway "
		       "(why, below)\n", window_spec(ctx));
		fflush(stdout);
		fault_error(ctx, l->refuse_err, &l->fault);
		return false;
	}
	if (!l->fixed_size) {
		printf("window %s holds %s (%" PRIu64 " bytes); init grows it "
		       "to the layout if it is smaller\n", window_spec(ctx),
		       human_bytes(l->mapped_size, size), l->mapped_size);
		return true;
	}
	bool fits = total <= l->fixed_size;
	printf("window %s holds %s (%" PRIu64 " bytes), which init cannot "
	       "grow: the layout %s", window_spec(ctx),
	       human_bytes(l->fixed_size, size), l->fixed_size,
	       fits ? "fits" : "does not fit");
	if (fits)
		printf(" (%s to spare)\n",
		       human_bytes(l->fixed_size - total, spare));
	else
		printf("\n");
	if (!fits) {
		struct shape_fit f;
		shape_fit(s, l->fixed_size, &f);
		print_fit(stdout, "  ", s, &f);
	}
	return fits;
}

static void print_json(struct ctx *ctx, const struct shape_opts *s,
		       const struct smq_shape_parts *p,
		       const struct window_look *l, const struct keep_look *k,
		       bool fits)
{
	struct json j;

	json_open(&j, stdout);
	json_begin(&j, NULL, '{');
	json_str(&j, "window", window_spec(ctx));
	json_bool(&j, "dry_run", true);
	json_shape_keys(&j, s, s->flags & SMQ_SHAPE_CHECKSUM,
			s->flags & SMQ_SHAPE_SCRATCH);
	json_u64(&j, "diag_queues", s->g.boards);
	json_begin(&j, "parts", '{');
	json_u64(&j, "superblock", p->superblock);
	json_u64(&j, "control", p->control);
	json_u64(&j, "tables", p->tables);
	json_u64(&j, "application", p->app_lanes + p->app_rings);
	json_u64(&j, "application_lanes", p->app_lanes);
	json_u64(&j, "application_rings", p->app_rings);
	json_u64(&j, "diagnostic", p->diag_lanes + p->diag_rings);
	json_u64(&j, "diagnostic_lanes", p->diag_lanes);
	json_u64(&j, "diagnostic_rings", p->diag_rings);
	json_u64(&j, "features", p->features);
	json_u64(&j, "padding", p->padding);
	json_end(&j, '}');
	json_u64(&j, "window_size", p->total);
	json_begin(&j, "regions", '[');
	for (unsigned b = 0; b < s->g.boards; b++)
		json_u64(&j, NULL, p->region[b]);
	json_end(&j, ']');
	json_bool(&j, "exists", l->exists);
	json_u64(&j, "mapped_size", l->mapped_size);
	json_u64(&j, "fixed_size", l->fixed_size);
	json_bool(&j, "not_window", l->not_window);
	json_bool(&j, "fits", fits);
	if (k->asked) {
		json_bool(&j, "keep", k->same);
		if (k->same)
			json_u64(&j, "generation", k->generation);
		else
			json_str(&j, "differs", k->why);
	}
	json_end(&j, '}');
	json_close(&j);
}

int print_layout(struct ctx *ctx, const struct shape_opts *s,
		 const struct window_look *l, const struct keep_look *k)
{
	struct smq_shape sh = shape_of(s);
	struct smq_shape_parts p;
	bool fits;

	if (smq_shape_parts(&sh, sizeof(sh), &p, sizeof(p)))
		return say_error("a window of %u boards, %u queues, %u entries "
				 "of %u bytes is too large", s->g.boards,
				 s->g.queues, s->g.entries, s->g.entry_size);
	fits = l->exists && !l->not_window && !l->refuse_err &&
	       (!l->fixed_size || p.total <= l->fixed_size);
	if (!l->exists && l->open_err == -ENOENT)
		fits = true;   /* init creates it */
	if (ctx->json) {
		print_json(ctx, s, &p, l, k, fits);
		return fits ? 0 : 1;
	}
	print_parts(s, &p, ctx->verbose);
	fits = print_window(ctx, s, l, p.total);
	if (k->asked && !fits)
		;   /* init would not get as far as keeping it */
	else if (k->asked && k->same)
		printf("--keep: the window holds this shape: init keeps "
		       "generation %" PRIu64 "\n", k->generation);
	else if (k->asked)
		printf("--keep: init formats the window: %s\n", k->why);
	printf("(a dry run: nothing was written)\n");
	return fits ? 0 : 1;
}
