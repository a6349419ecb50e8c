/* smqctl init --dry-run: where a shape's bytes go (smq_shape_parts()),
 * the diagnostic queues' share apart from the application queues', and
 * whether it fits the window as the window is.  Nothing is written. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "smq_tools.h"  /* SMQ_SCRATCH_DATA */
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

/* The window as it is, and what init would do with it. */
static void print_window(struct ctx *ctx, const struct init_verdict *v,
			 const struct keep_look *k, uint64_t total)
{
	const struct smq_window_info *wi = &v->wi;
	char size[32], spare[32], shown[80], gone[400];

	if (!v->exists) {
		printf("window %s does not exist yet: init creates it\n",
		       window_spec(ctx));
		return;
	}
	if (wi->not_window)
		printf("window %s holds %s (%" PRIu64 " bytes) that is not an "
		       "smq window (it begins \"%s\")\n", window_spec(ctx),
		       human_bytes(wi->mapped_size, size), wi->mapped_size,
		       first_bytes_text(wi, shown, sizeof(shown)));
	else if (wi->fixed_size)
		printf("window %s holds %s (%" PRIu64 " bytes), which init does "
		       "not grow: the layout %s%s%s\n", window_spec(ctx),
		       human_bytes(wi->fixed_size, size), wi->fixed_size,
		       total <= wi->fixed_size ? "fits (" : "does not fit",
		       total <= wi->fixed_size
		       ? human_bytes(wi->fixed_size - total, spare) : "",
		       total <= wi->fixed_size ? " to spare)" : "");
	else
		printf("window %s holds %s (%" PRIu64 " bytes); init grows it "
		       "to the layout if it is smaller\n", window_spec(ctx),
		       human_bytes(wi->mapped_size, size), wi->mapped_size);
	if (v->refused)
		printf("init would refuse it (why: below)\n");
	else if (k->asked && k->same)
		printf("--keep: the window holds this shape: init keeps "
		       "generation %" PRIu64 "\n", k->generation);
	else
		printf("init formats it%s%s%s and empties %s\n",
		       k->asked ? " (--keep: " : "", k->asked ? k->why : "",
		       k->asked ? ")" : "",
		       emptied_text(&v->emptied, gone, sizeof(gone)));
}

static void print_json(struct ctx *ctx, const struct shape_opts *s,
		       const struct smq_shape_parts *p,
		       const struct init_verdict *v, const struct keep_look *k)
{
	const struct smq_window_info *wi = &v->wi;
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
	json_bool(&j, "exists", v->exists);
	json_u64(&j, "mapped_size", wi->mapped_size);
	json_u64(&j, "fixed_size", wi->fixed_size);
	json_bool(&j, "not_window", wi->not_window);
	json_bool(&j, "fits", !wi->fixed_size || p->total <= wi->fixed_size);
	json_bool(&j, "refused", v->refused);
	if (v->refused || (k->asked && k->same))
		json_null(&j, "emptied");
	else
		json_emptied(&j, &v->emptied);
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

void print_layout(struct ctx *ctx, const struct shape_opts *s,
		  const struct init_verdict *v, const struct keep_look *k)
{
	struct smq_shape sh = shape_of(s);
	struct smq_shape_parts p;

	/* init_open() said it when the shape is too large */
	if (smq_shape_parts(&sh, sizeof(sh), &p, sizeof(p)))
		return;
	if (ctx->json) {
		print_json(ctx, s, &p, v, k);
		return;
	}
	print_parts(s, &p, ctx->verbose);
	print_window(ctx, v, k, p.total);
	printf("(a dry run: nothing was written)\n");
}
