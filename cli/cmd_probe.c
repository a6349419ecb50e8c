/* smqctl probe: the PCI hierarchy as libpci reads it (probes/): devices
 * like lspci, their BARs and whether one could carry an smq window, the
 * PCIe link and payload sizes, bridges and their windows; as a list, a
 * tree or JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "probe/report.h"

enum { OPT_NTB = 0x100, OPT_SYSFS };

static const struct argp_option options[] = {
	{ "slot", 's', "[[DOMAIN:]BUS:]SLOT[.FUNC]", 0,
	  "Only devices in this slot, as lspci -s (hex; a part may be *)", 0 },
	{ "id", 'd', "[VENDOR]:[DEVICE][:CLASS]", 0,
	  "Only devices with these IDs, as lspci -d (hex)", 0 },
	{ "tree", 't', NULL, 0,
	  "Show the hierarchy as a tree: root buses, bridges, devices below "
	  "them", 0 },
	{ "dump", 'F', "FILE", 0,
	  "Read FILE, an 'lspci -x' (-xxx, -xxxx) dump, not the bus", 0 },
	{ "ntb", OPT_NTB, NULL, 0,
	  "Only the candidates (non-transparent bridges, ivshmem, CXL "
	  "memory) and the BARs that could carry a window", 0 },
	{ "sysfs", OPT_SYSFS, "DIR", 0,
	  "Read what Linux's CXL bus calls a CXL memory device (its memory "
	  "device and root decoder) under DIR, not /sys (a recorded tree; "
	  "with --dump, only then)", 0 },
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct probe_opts *o = st->input;
	struct probe_filter f = { NULL, NULL };

	switch (key) {
	case 's':
	case 'd':
		if (key == 's')
			f.slot = arg;
		else
			f.id = arg;
		if (!*arg)
			argp_error(st, "-%c needs a value", key);
		if (probe_filter_check(&f))
			argp_error(st, "bad filter %s (want %s)",
				   probe_last_error(), key == 's'
				   ? "[[domain:]bus:]slot[.func] in hex"
				   : "[vendor]:[device][:class] in hex");
		if (key == 's')
			o->filter.slot = arg;
		else
			o->filter.id = arg;
		break;
	case 't':
		o->tree = true;
		break;
	case 'F':
		if (!*arg)
			argp_error(st, "--dump needs a file");
		o->dump = arg;
		break;
	case OPT_NTB:
		o->ntb = true;
		break;
	case OPT_SYSFS:
		if (!*arg)
			argp_error(st, "--sysfs needs a directory");
		o->sysfs = arg;
		break;
	case ARGP_KEY_INIT:
		st->child_inputs[0] = o->shape;
		break;
	default:
		return no_operands(key, arg, st);
	}
	return 0;
}

/* The shape of init: a candidate's BAR is said to hold its window or
 * not, as lspci users size a BAR against what they configure. */
static const struct argp_child children[] = {
	{ &shape_argp, 0, "A window's shape, to size against each BAR (or "
	  "--from FILE):", 1 },
	{ 0 }
};

static const struct argp argp = {
	options, parse, NULL,
	"List the PCI devices as libpci reads them, like lspci: each device's "
	"BARs (address, size, 32/64-bit, prefetchable, I/O, disabled) and "
	"whether one could carry an smq window and why not, its PCI Express "
	"link (capability and status: speed, width, downgraded) and MaxPayload "
	"and MaxReadReq sizes, NUMA node and driver; bridges with their bus "
	"numbers and memory windows; non-transparent bridges by their IDs.  "
	"With a window's shape (--boards, --queues, ..., or --from FILE, as "
	"for init), each candidate says whether the BAR it would map holds "
	"that window.  Exit 1 when no device matches or there is no PCI "
	"access.",
	children, NULL, NULL
};

static const char *filter_words(const struct probe_opts *o, char *buf,
				size_t n)
{
	int len = 0;
	buf[0] = 0;
	if (o->filter.slot)
		len += snprintf(buf + len, n - (size_t)len, " -s %s",
				o->filter.slot);
	if (o->filter.id && (size_t)len < n)
		len += snprintf(buf + len, n - (size_t)len, " -d %s",
				o->filter.id);
	if (o->ntb && (size_t)len < n)
		snprintf(buf + len, n - (size_t)len, " --ntb");
	return buf[0] ? buf + 1 : buf;
}

static int no_match(const struct probe_opts *o, const char *filter,
		    int scanned)
{
	if (o->ntb)
		return say_error("no PCI device matches %s: no non-transparent "
			     "bridge among the %d device%s scanned", filter,
			     scanned, scanned == 1 ? "" : "s");
	return say_error("no PCI device matches %s (%d device%s scanned)", filter,
		     scanned, scanned == 1 ? "" : "s");
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	static struct shape_opts shape;
	struct probe_opts o = { { NULL, NULL }, NULL, NULL, false, false,
				&shape, 0 };
	struct probe_list l;
	char words[512];
	int err;

	shape_defaults(&shape);
	parse_cmd(&argp, argc, argv, &o, ctx);
	if (shape_given(&shape) && (err = shape_window(&shape, &o.need)))
		return err;
	err = probe_scan(&l, &o.filter, o.dump);
	if (err == -ENODEV)
		return say_error("no PCI access on this machine: %s (read a dump "
			     "with --dump FILE)", probe_last_error());
	if (err && o.dump)
		return say_error("cannot read the dump %s: %s", o.dump,
			     probe_last_error());
	if (err)
		return say_error("cannot scan the PCI bus: %s (%s)",
			     probe_last_error(), strerror(-err));

	/* the names the CXL commands need, from this machine's sysfs (a
	 * dump is of another machine: only with --sysfs) */
	for (int i = 0; i < l.n && (!o.dump || o.sysfs); i++) {
		struct probe_dev *d = &l.dev[i];
		char bdf[16];
		if (!d->cxl.memory)
			continue;
		snprintf(bdf, sizeof(bdf), "%04x:%02x:%02x.%d",
			 d->domain & 0xffff, d->bus & 0xff, d->dev & 0x1f,
			 d->func & 7);
		probe_sysfs_cxl(o.sysfs, bdf, &d->cxl);
	}
	int shown = 0;
	for (int i = 0; i < l.n; i++)
		shown += shown_dev(&l.dev[i], o.ntb);
	/* --ntb with none: still say what the others are and why not */
	if (!shown && !(o.ntb && l.n && !o.tree)) {
		const char *w = filter_words(&o, words, sizeof(words));
		probe_free(&l);
		if (!l.scanned)
			return say_error("no PCI device %s%s", o.dump ? "in the dump "
				     : "found on this machine", o.dump ? o.dump
				     : "");
		return no_match(&o, w, l.scanned);
	}

	if (ctx->json)
		json_list(&l, &o);
	else if (o.tree) {
		if (o.ntb) {
			struct probe_list t = ntb_tree_list(&l);
			if (!t.dev) {
				probe_free(&l);
				return say_error("out of memory");
			}
			print_tree(&t, &o);
			free(t.dev);
		} else
			print_tree(&l, &o);
	} else
		print_list(&l, &o, ctx->verbose);
	probe_free(&l);
	if (!shown)
		return no_match(&o, filter_words(&o, words, sizeof(words)),
				l.scanned);
	return 0;
}

const struct cmd cmd_probe = { "probe", run, &argp,
			       "list PCI bridges, NTBs, BARs and PCIe links" };
