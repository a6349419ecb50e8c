/* smqctl model: the PCIe cost model of the pcie-bench study for a link,
 * probed or given: bytes on the link for writes and reads of each size, the write
 * bandwidth left, and the most messages/s a writes-only smq queue can move. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "smqctl.h"
#include "shape/shape.h"
#include "model.h"
#include "probe.h"

enum { OPT_DUMP = 'F', OPT_SIZE = 'z', OPT_GEN = 0x100, OPT_WIDTH, OPT_MPS,
       OPT_MRRS };

/* The pcie-bench study's example: PCIe 3.0 x8, MPS 256, MRRS 512. */
static const struct pcie_link_params example_link = { 3, 8, 256, 512 };

struct model_opts {
	const char *slot, *dump;
	struct pcie_link_params p;
	bool gen_set, width_set, mps_set, mrrs_set;
	size_t sizes[MAX_SIZES];
	int nsizes;
	struct shape_opts *shape;  /* a window's shape, to size */
	uint64_t need;             /* ...the bytes it needs; 0: none given */
};

static const struct argp_option options[] = {
	{ "slot", 's', "[[DOMAIN:]BUS:]SLOT[.FUNC]", 0,
	  "Model the link of this PCI Express device as it trained (status "
	  "speed and width) with its MPS and MRRS", 0 },
	{ "dump", OPT_DUMP, "FILE", 0,
	  "With -s: read the device from FILE, an 'lspci -x' style dump, not "
	  "from the bus", 0 },
	{ "gen", OPT_GEN, "G", 0,
	  "PCIe generation 1 to 6 (2.5, 5, 8, 16, 32, 64 GT/s a lane)", 0 },
	{ "width", OPT_WIDTH, "N", 0, "Lanes: 1, 2, 4, 8, 16 or 32", 0 },
	{ "mps", OPT_MPS, "BYTES", 0,
	  "Maximum payload size: a power of two from 128 to 4096 (4K)", 0 },
	{ "mrrs", OPT_MRRS, "BYTES", 0,
	  "Maximum read request size: a power of two from 128 to 4096 (4K)",
	  0 },
	{ "size", OPT_SIZE, "LIST", 0,
	  "Message sizes, e.g. 64,4K,1M (default 0,64,256,1000,4096,65536)", 0 },
	{ 0 }
};

/* One link parameter from the command line (0 gen, 1 width, 2 mps, 3
 * mrrs), checked by the model itself so that the message names the option. */
static void link_arg(struct argp_state *st, const char *opt, const char *arg,
		     int which, int *field)
{
	struct pcie_link_params t = example_link;
	int v = which < 2 ? (int)arg_u32(st, opt, arg, 0, 1u << 20)
			  : (int)arg_size(st, opt, arg, 0, 1u << 20);
	int *f[4] = { &t.gen, &t.width, &t.mps, &t.mrrs };
	const char *why;

	*f[which] = v;
	if ((why = pcie_params_why(&t, NULL)))
		argp_error(st, "%s %s: %s", opt, arg, why);
	*field = v;
}

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct model_opts *o = st->input;

	switch (key) {
	case 's': {
		struct probe_filter f = { .slot = arg };
		if (!*arg || probe_filter_check(&f))
			argp_error(st, "-s '%s' is not a device: "
				   "[[domain:]bus:]slot[.func] in hex", arg);
		o->slot = arg;
		break;
	}
	case OPT_DUMP:
		if (!*arg)
			argp_error(st, "--dump needs a file");
		o->dump = arg;
		break;
	case OPT_GEN:
		link_arg(st, "--gen", arg, 0, &o->p.gen);
		o->gen_set = true;
		break;
	case OPT_WIDTH:
		link_arg(st, "--width", arg, 1, &o->p.width);
		o->width_set = true;
		break;
	case OPT_MPS:
		link_arg(st, "--mps", arg, 2, &o->p.mps);
		o->mps_set = true;
		break;
	case OPT_MRRS:
		link_arg(st, "--mrrs", arg, 3, &o->p.mrrs);
		o->mrrs_set = true;
		break;
	case OPT_SIZE:
		o->nsizes = arg_sizes(st, "--size", arg, o->sizes, MAX_SIZES);
		break;
	case ARGP_KEY_INIT:
		st->child_inputs[0] = o->shape;
		break;
	case ARGP_KEY_END:
		if (o->dump && !o->slot)
			argp_error(st, "--dump needs -s: which device of the dump");
		break;
	default:
		return no_operands(key, arg, st);
	}
	return 0;
}

static const struct argp_child children[] = {
	{ &shape_argp, 0, "A window's shape, to size against the device's BAR "
	  "or the window (or --from FILE):", 1 },
	{ 0 }
};

static const struct argp argp = {
	options, parse, NULL,
	"Predict from the PCIe cost model of the pcie-bench study (\"Understanding "
	"PCIe performance for end host networking\", SIGCOMM 2018) what a link "
	"can move: for each message size, the bytes on the link for a write "
	"and for a read (requests up, completions down), the write efficiency "
	"and bandwidth, and the most messages per second a writes-only smq "
	"queue can send one way.  The link is that of a device (-s, read "
	"through libpci), or given with --gen, --width, --mps and --mrrs "
	"(which also override what -s reads); without either, PCIe Gen3 x8, "
	"MPS 256, MRRS 512, the study's example.  With --window, sizes above "
	"the window's entry size are marked.  With a window's shape (as for "
	"init), the window it needs, and whether the BAR of -s or the window "
	"holds it.",
	children, NULL, NULL
};

/* ---- the link ---- */

struct link_src {
	char device[32];        /* "0000:01:00.0" or "" */
	int bar;                /* the BAR smq would map, -1: none */
	uint64_t bar_size;      /* 0: not known (a dump) */
	char name[200];         /* vendor and device names or "" */
	char note[200];         /* where the parameters come from */
	bool downgraded;
	int cap_gen, cap_width;
};

/* Fills o->p's unset fields from the device named by -s. */
/* The parameters of a link probed: what the options did not give, and
 * whether the model takes them. */
static int take_link(struct model_opts *o, struct link_src *src,
		     const struct probe_link *l)
{
	if (!o->gen_set)
		o->p.gen = l->sta_speed;
	if (!o->width_set)
		o->p.width = l->sta_width;
	if (!o->mps_set)
		o->p.mps = l->mps;
	if (!o->mrrs_set)
		o->p.mrrs = l->mrrs;
	src->downgraded = l->downgraded;
	src->cap_gen = l->cap_speed;
	src->cap_width = l->cap_width;

	const char *field, *why = pcie_params_why(&o->p, &field);
	if (why) {
		int v = !strcmp(field, "gen") ? o->p.gen
			: !strcmp(field, "width") ? o->p.width
			: !strcmp(field, "mps") ? o->p.mps : o->p.mrrs;
		return say_error("%s reports %s %d, which the model does not take "
			     "(%s); give --%s", src->device, field, v, why,
			     field);
	}
	return 0;
}

static int probed_link(struct model_opts *o, struct link_src *src)
{
	struct probe_filter f = { .slot = o->slot };
	struct probe_list list;
	memset(&list, 0, sizeof(list));
	int err = probe_scan(&list, &f, o->dump);

	if (err) {
		const char *why = probe_last_error();
		return say_error("cannot read the PCI devices%s%s: %s", o->dump
			     ? " of " : "", o->dump ? o->dump : "",
			     why && *why ? why : strerror(-err));
	}
	/* The first PCI Express device that matches, else the first one. */
	const struct probe_dev *d = NULL;
	int pcie = 0;
	for (int i = 0; i < list.n; i++) {
		const struct probe_dev *e = &list.dev[i];
		if (!d || (e->link.present && !d->link.present))
			d = e;
		pcie += e->link.present;
	}
	int rc = 0;
	if (!d)
		rc = say_error("no PCI device matches -s %s%s%s", o->slot,
			   o->dump ? " in " : "", o->dump ? o->dump : "");
	else if (pcie > 1)
		rc = say_error("-s %s matches %d PCI Express devices: name one, "
			   "e.g. -s %04x:%02x:%02x.%x", o->slot, pcie,
			   d->domain, d->bus, d->dev, d->func);
	if (rc) {
		probe_free(&list);
		return rc;
	}
	snprintf(src->device, sizeof(src->device), "%04x:%02x:%02x.%x",
		 d->domain, d->bus, d->dev, d->func);
	snprintf(src->name, sizeof(src->name), "%s%s%s", d->vendor_name,
		 *d->vendor_name && *d->device_name ? " " : "", d->device_name);
	const struct probe_link l = d->link;
	bool limited = d->config_limited;
	src->bar = d->use.candidate ? d->use.bar : -1;
	for (int i = 0; i < d->nbars; i++)
		if (d->bars[i].index == src->bar && d->bars[i].size_known)
			src->bar_size = d->bars[i].size;
	probe_free(&list);
	if (limited && o->dump)
		return say_error("%s: %s holds only 64 bytes of its config space "
			     "(lspci -x; -xxx writes all): its link is unknown",
			     src->device, o->dump);
	if (limited)
		return say_error("%s: only 64 bytes of its config space are "
			     "readable (run as root): its link is unknown",
			     src->device);
	if (!l.present)
		return say_error("%s has no PCI Express capability: no link to "
			     "model (give --gen, --width, --mps and --mrrs "
			     "without -s)", src->device);
	if (!l.has_link && (!o->gen_set || !o->width_set))
		return say_error("%s has no link registers (a root-complex "
			     "integrated device): give --gen and --width",
			     src->device);
	if (l.has_link && (l.sta_speed == 0 || l.sta_width == 0) &&
	    (!o->gen_set || !o->width_set))
		return say_error("%s: the link is down (status speed %d, width "
			     "%d); give --gen and --width", src->device,
			     l.sta_speed, l.sta_width);
	return take_link(o, src, &l);
}

/* Which options were given, for the note: "--gen, --mps" */
static void given(const struct model_opts *o, char *buf, size_t n)
{
	const char *names[4] = { "--gen", "--width", "--mps", "--mrrs" };
	bool set[4] = { o->gen_set, o->width_set, o->mps_set, o->mrrs_set };
	size_t len = 0;

	buf[0] = 0;
	for (int i = 0; i < 4; i++)
		if (set[i] && len < n)
			len += (size_t)snprintf(buf + len, n - len, "%s%s",
						len ? ", " : "", names[i]);
}

static int link_params(struct model_opts *o, struct link_src *src)
{
	char opts[64];
	bool any = o->gen_set || o->width_set || o->mps_set || o->mrrs_set;

	given(o, opts, sizeof(opts));
	if (o->slot) {
		int rc = probed_link(o, src);
		if (rc)
			return rc;
		snprintf(src->note, sizeof(src->note), "the link of %s as "
			 "trained%s%s%s", src->device, any ? ", with " : "",
			 any ? opts : "", any ? " from the command line" : "");
		return 0;
	}
	if (!o->gen_set)
		o->p.gen = example_link.gen;
	if (!o->width_set)
		o->p.width = example_link.width;
	if (!o->mps_set)
		o->p.mps = example_link.mps;
	if (!o->mrrs_set)
		o->p.mrrs = example_link.mrrs;
	if (!any)
		snprintf(src->note, sizeof(src->note), "the default, the "
			 "pcie-bench study's example: no -s, --gen, --width, "
			 "--mps or --mrrs given");
	else if (o->gen_set && o->width_set && o->mps_set && o->mrrs_set)
		snprintf(src->note, sizeof(src->note), "from the command line");
	else
		snprintf(src->note, sizeof(src->note), "%s from the command "
			 "line, the rest from the pcie-bench study's example "
			 "(Gen3 x8, MPS 256, MRRS 512)", opts);
	return 0;
}

/* ---- the table ---- */

struct row {
	uint64_t size, wr, rd_req, rd_cpl, q_bytes;
	double eff, wr_bw, q_msgs;
	bool fits;
};

static void compute(const struct pcie_link_params *p, uint64_t size,
		    uint32_t entry_size, struct row *r)
{
	r->size = size;
	r->wr = pcie_write_bytes(p, size);
	r->rd_req = pcie_read_request_bytes(p, size);
	r->rd_cpl = pcie_read_completion_bytes(p, size);
	r->eff = r->wr ? (double)size / (double)r->wr : NAN;
	r->wr_bw = pcie_write_bandwidth(p, size);
	r->fits = size <= entry_size;
	r->q_bytes = pcie_queue_msg_bytes(p, size);
	r->q_msgs = pcie_queue_msgs_per_s(p, size);
}

/* ---- the window a shape needs, and where it would go ---- */

struct room {
	char where[300];        /* "window shm:x", "BAR2 of 0000:01:00.0"; ""
				   none */
	uint64_t size;          /* what it holds; 0: not known, or grows */
	bool grows;             /* a window init grows to its layout */
};

/* The window named, else the BAR of -s that smq would map. */
static void find_room(struct ctx *ctx, const struct link_src *src,
		      struct room *r)
{
	memset(r, 0, sizeof(*r));
	if (ctx->window) {
		struct window_look l;
		window_look(ctx, &l, false);
		snprintf(r->where, sizeof(r->where), "window %s",
			 window_spec(ctx));
		r->size = l.fixed_size;
		r->grows = l.exists && !l.fixed_size;
	} else if (src->bar >= 0) {
		snprintf(r->where, sizeof(r->where), "BAR%d of %s", src->bar,
			 src->device);
		r->size = src->bar_size;
	}
}

static void print_need(const struct model_opts *o, const struct room *r)
{
	char words[160], size[32], has[32];

	printf("window for %s: %s (%" PRIu64 " bytes)",
	       shape_words(o->shape, words, sizeof(words)),
	       human_bytes(o->need, size), o->need);
	if (r->grows)
		printf("; %s grows to it\n", r->where);
	else if (r->where[0] && !r->size)
		printf("; %s: its size is not known\n", r->where);
	else if (r->where[0])
		printf("; %s holds %s: %s\n", r->where,
		       human_bytes(r->size, has),
		       o->need <= r->size ? "fits" : "does not fit");
	else
		printf("\n");
	if (r->size && o->need > r->size) {
		struct shape_fit f;
		shape_fit(o->shape, r->size, &f);
		print_fit(stdout, "  ", o->shape, &f);
	}
}

static void json_need(struct json *j, const struct model_opts *o,
		      const struct room *r)
{
	char words[160];

	json_str(j, "shape", shape_words(o->shape, words, sizeof(words)));
	json_u64(j, "shape_size", o->need);
	json_str(j, "room", r->where);
	json_u64(j, "room_size", r->size);
	if (r->grows || r->size)
		json_bool(j, "shape_fits", r->grows || o->need <= r->size);
	else
		json_null(j, "shape_fits");
}

static const char *source_name(const struct model_opts *o)
{
	if (o->slot)
		return "device";
	if (o->gen_set || o->width_set || o->mps_set || o->mrrs_set)
		return "command line";
	return "default";
}

static void print_json(const struct model_opts *o, const struct link_src *src,
		       const struct row *rows, const char *window,
		       uint32_t entry_size, const struct room *room)
{
	const struct pcie_link_params *p = &o->p;
	struct json j;

	json_open(&j, stdout);
	json_begin(&j, NULL, '{');
	json_str(&j, "source", source_name(o));
	json_str(&j, "note", src->note);
	if (*src->device) {
		json_str(&j, "device", src->device);
		json_str(&j, "name", src->name);
		json_u64(&j, "cap_gen", (uint64_t)src->cap_gen);
		json_u64(&j, "cap_width", (uint64_t)src->cap_width);
		json_bool(&j, "downgraded", src->downgraded);
	}
	json_u64(&j, "gen", (uint64_t)p->gen);
	json_u64(&j, "width", (uint64_t)p->width);
	json_u64(&j, "mps", (uint64_t)p->mps);
	json_u64(&j, "mrrs", (uint64_t)p->mrrs);
	json_double(&j, "gt_per_s", pcie_gen_gts(p->gen), 1);
	json_str(&j, "encoding", pcie_gen_encoding(p->gen));
	json_double(&j, "phy_gbps", pcie_phy_bps(p) / 1e9, 9);
	json_double(&j, "dll_efficiency", PCIE_DLL_EFFICIENCY, 9);
	json_double(&j, "data_gbps", pcie_data_bps(p) / 1e9, 9);
	json_u64(&j, "queue_header", PCIE_QUEUE_HEADER);
	json_u64(&j, "queue_line", PCIE_QUEUE_LINE);
	if (window) {
		json_str(&j, "window", window);
		json_u64(&j, "entry_size", entry_size);
	}
	if (o->need)
		json_need(&j, o, room);
	json_begin(&j, "sizes", '[');
	for (int i = 0; i < o->nsizes; i++) {
		const struct row *r = &rows[i];
		json_begin(&j, NULL, '{');
		json_u64(&j, "size", r->size);
		json_u64(&j, "write_bytes", r->wr);
		json_u64(&j, "read_request_bytes", r->rd_req);
		json_u64(&j, "read_completion_bytes", r->rd_cpl);
		json_u64(&j, "read_bytes", r->rd_req + r->rd_cpl);
		json_double(&j, "write_efficiency", r->eff, 6);
		json_double(&j, "write_mb_per_s", r->wr_bw / 1e6, 6);
		json_double(&j, "write_gbps", r->wr_bw * 8 / 1e9, 9);
		if (window)
			json_bool(&j, "fits", r->fits);
		json_u64(&j, "queue_bytes", r->q_bytes);
		json_double(&j, "queue_msgs_per_s", r->fits ? r->q_msgs : NAN, 3);
		json_double(&j, "queue_mb_per_s", r->fits ?
			    r->q_msgs * (double)r->size / 1e6 : NAN, 6);
		json_end(&j, '}');
	}
	json_end(&j, ']');
	json_end(&j, '}');
	json_close(&j);
}

static void print_text(const struct model_opts *o, const struct link_src *src,
		       const struct row *rows, const char *window,
		       uint32_t entry_size, const struct room *room)
{
	const struct pcie_link_params *p = &o->p;
	bool toobig = false;

	printf("link: PCIe Gen%d x%d (%g GT/s a lane, %s), MPS %d bytes, "
	       "MRRS %d bytes\n  %s\n", p->gen, p->width,
	       pcie_gen_gts(p->gen), pcie_gen_encoding(p->gen), p->mps,
	       p->mrrs, src->note);
	if (*src->name)
		printf("  %s\n", src->name);
	if (src->downgraded)
		printf("  trained below its capability, Gen%d x%d\n",
		       src->cap_gen, src->cap_width);
	printf("each way of the full-duplex link: %.2f Gb/s physical, %.2f "
	       "Gb/s of data\n  (after the data-link overhead: x 57.88/62.96, "
	       "pcie-bench)\n", pcie_phy_bps(p) / 1e9, pcie_data_bps(p) / 1e9);
	printf("a queue message: its entry (16-byte header + SIZE, in whole "
	       "64-byte lines)\n  and the 64-byte lane_in line, each a posted "
	       "write\n");
	if (window)
		printf("window %s: entries of up to %" PRIu32 " bytes\n",
		       window, entry_size);
	if (o->need)
		print_need(o, room);
	printf("\n%8s  %8s  %8s  %9s  %6s  %10s  %10s  %8s  %12s  %10s\n",
	       "SIZE", "WRITE-B", "READ-UP", "READ-DOWN", "EFFIC",
	       "WRITE-MB/S", "WRITE-GB/S", "QUEUE-B", "QUEUE-MSGS/S",
	       "QUEUE-MB/S");
	for (int i = 0; i < o->nsizes; i++) {
		const struct row *r = &rows[i];
		char eff[16] = "-", msgs[24] = "-", mb[24] = "-";
		if (r->wr)
			snprintf(eff, sizeof(eff), "%.1f%%", 100 * r->eff);
		if (r->fits) {
			snprintf(msgs, sizeof(msgs), "%.0f", r->q_msgs);
			snprintf(mb, sizeof(mb), "%.1f",
				 r->q_msgs * (double)r->size / 1e6);
		} else {
			toobig = true;
		}
		printf("%8" PRIu64 "  %8" PRIu64 "  %8" PRIu64 "  %9" PRIu64
		       "  %6s  %10.1f  %10.2f  %8" PRIu64 "  %12s  %10s\n",
		       r->size, r->wr, r->rd_req, r->rd_cpl, eff, r->wr_bw / 1e6,
		       r->wr_bw * 8 / 1e9, r->q_bytes, msgs, mb);
	}
	printf("\nWRITE-B: bytes on the link for a write of SIZE; READ-UP and "
	       "READ-DOWN: for a read,\nthe requests and the completions.  "
	       "MB are 10^6 bytes, of payload.\n");
	if (toobig)
		printf("QUEUE-*: '-' where SIZE is larger than the entries of "
		       "the window.\n");
	printf("A ping-pong round trip is two such messages, one each way on "
	       "the full-duplex link:\nat most QUEUE-MSGS/S round trips a "
	       "second, by bandwidth alone (latency bounds it first).\n");
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	static struct shape_opts shape;
	struct model_opts o;
	struct link_src src;
	struct room room;
	static const size_t defaults[] = { 0, 64, 256, 1000, 4096, 65536 };
	uint32_t entry_size = UINT32_MAX;
	const char *window = NULL;

	memset(&o, 0, sizeof(o));
	memset(&src, 0, sizeof(src));
	memset(&room, 0, sizeof(room));
	src.bar = -1;
	shape_defaults(&shape);
	o.shape = &shape;
	parse_cmd(&argp, argc, argv, &o, ctx);
	if (!o.nsizes) {
		o.nsizes = (int)(sizeof(defaults) / sizeof(defaults[0]));
		memcpy(o.sizes, defaults, sizeof(defaults));
	}
	int rc = link_params(&o, &src);
	if (rc)
		return rc;
	if (shape_given(&shape)) {
		/* the shape's entries; a window named is only where it goes */
		if ((rc = shape_window(&shape, &o.need)))
			return rc;
		entry_size = shape.g.entry_size;
		find_room(ctx, &src, &room);
	} else if (ctx->window) {
		/* Only a window named on the command line: the model needs
		 * none. */
		struct smq_window *w;
		struct smq_window_info wi;
		if (open_window(ctx, 0, &w))
			return 1;
		smq_window_info(w, &wi, sizeof(wi));
		entry_size = wi.geometry.entry_size;
		smq_close(w);
		window = window_spec(ctx);
	}

	struct row rows[MAX_SIZES];
	for (int i = 0; i < o.nsizes; i++)
		compute(&o.p, o.sizes[i], entry_size, &rows[i]);
	if (ctx->json)
		print_json(&o, &src, rows, window, entry_size, &room);
	else
		print_text(&o, &src, rows, window, entry_size, &room);
	return 0;
}

const struct cmd cmd_model = { "model", run, &argp,
			       "predict what a PCIe link and a queue can move" };
