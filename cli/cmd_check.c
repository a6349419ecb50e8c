/* smqctl check: every check of a window, its PCI path and its boards in
 * one run, each PASS, WARN, FAIL or SKIP with its evidence, then one line:
 * the counts and the first thing to fix.  It sends only on the diagnostic
 * queues and writes only the scratch areas (check/check.h). */
#include <stdlib.h>
#include <string.h>
#include "check/check.h"
#include "probe.h"

enum { OPT_ONLY = 0x100, OPT_SKIP, OPT_STRICT, OPT_PEER, OPT_DEVICE,
       OPT_SYSFS, OPT_WATCH };

static const struct argp_option options[] = {
	{ "only", OPT_ONLY, "NAMES", 0,
	  "Run only these checks (names, or groups: window, pci, cross), "
	  "separated by commas", 0 },
	{ "skip", OPT_SKIP, "NAMES", 0,
	  "Run every check but these (names or groups)", 0 },
	{ "strict", OPT_STRICT, NULL, 0,
	  "A warning fails too (exit 1)", 0 },
	{ "peer", OPT_PEER, NULL, 0,
	  "Only this board's part of the checks between boards, against "
	  "'smqctl --board N check --peer' on each other board", 0 },
	{ "timeout", 'T', "TIME", 0,
	  "Wait this long for the other boards (default 30s)", 0 },
	{ "device", OPT_DEVICE, "BDF[/BAR]", 0,
	  "The PCI device (and BAR) of the window, when its spec names none", 0 },
	{ "dump", 'F', "FILE", 0,
	  "Read the device's path from FILE, an 'lspci -x' style dump, not "
	  "from the bus", 0 },
	{ "sysfs", OPT_SYSFS, "DIR", 0,
	  "Read AER counts, drivers, IOMMU groups and BARs under DIR, not "
	  "/sys (a recorded tree)", 0 },
	STALL_OPTION("A queue that holds messages whose bottom does not move "
		     "for TIME is stalled, whatever its receiver's state "
		     "says (default 5s): queues that hold messages are "
		     "watched that long"),
	{ "watch", OPT_WATCH, "TIME", 0,
	  "Watch the AER counts at least this long: one that grows meanwhile "
	  "is counting now (default 1s)", 0 },
	{ 0 }
};

bool check_select(bool sel[CK_COUNT], const char *list, bool value,
		  const char **bad, size_t *badlen)
{
	const char *p = list;

	for (;;) {
		size_t len = strcspn(p, ",");
		bool found = false;
		for (int i = 0; len && i < CK_COUNT; i++) {
			const struct check_def *d = &check_defs[i];
			if ((strlen(d->name) == len && !strncmp(d->name, p, len)) ||
			    (strlen(d->group) == len && !strncmp(d->group, p, len))) {
				sel[i] = value;
				found = true;
			}
		}
		if (!found) {
			*bad = p;
			*badlen = len;
			return false;
		}
		if (!p[len])
			return true;
		p += len + 1;
	}
}

struct parse_state {
	struct check_opts *o;
	bool only_given;
};

static void select_arg(struct argp_state *st, struct check_opts *o,
		       const char *opt, const char *arg, bool only)
{
	const char *bad;
	size_t len;

	if (!check_select(o->selected, arg, only,
			  &bad, &len))
		argp_error(st, "%s: no check or group '%.*s' (checks: format, "
			   "generation, boards, receivers, full-queues, "
			   "diag-queues, link, aer, payload, bar, vfio, map, "
			   "doorbells, raw-link, queues; groups: window, pci, "
			   "cross)", opt, (int)len, bad);
}

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct parse_state *ps = st->input;
	struct check_opts *o = ps->o;

	switch (key) {
	case OPT_ONLY:
		if (!ps->only_given)
			memset(o->selected, 0, sizeof(o->selected));
		ps->only_given = true;
		select_arg(st, o, "--only", arg, true);
		break;
	case OPT_SKIP:
		select_arg(st, o, "--skip", arg, false);
		break;
	case OPT_STRICT:
		o->strict = true;
		break;
	case OPT_PEER:
		o->peer_mode = true;
		break;
	case 'T':
		o->timeout_ms = arg_duration(st, "--timeout", arg);
		if (o->timeout_ms <= 0)
			argp_error(st, "--timeout must be more than 0 and "
				   "finite");
		break;
	case OPT_DEVICE: {
		/* [[domain:]bus:]slot[.func][/BAR]: checked here, as probe's
		 * -s is, so that a typo is not a device absent */
		char dev[64], *end = NULL;
		const char *slash = strchr(arg, '/');
		size_t len = slash ? (size_t)(slash - arg) : strlen(arg);
		struct probe_filter f = { .slot = dev };
		long bar = 0;
		bool ok = len && len < sizeof(dev);
		if (ok) {
			memcpy(dev, arg, len);
			dev[len] = 0;
			ok = !probe_filter_check(&f);
		}
		if (ok && slash) {
			bar = strtol(slash + 1, &end, 10);
			ok = end != slash + 1 && !*end && bar >= 0 && bar <= 5;
		}
		if (!ok)
			argp_error(st, "--device '%s' is not a device: "
				   "[[domain:]bus:]slot[.func] in hex, then "
				   "/BAR (0 to 5) if wished", arg);
		o->device = arg;
		break;
	}
	case ARGP_KEY_END: {
		bool any = false;
		for (int i = 0; i < CK_COUNT; i++)
			any |= o->selected[i];
		if (!any)
			argp_error(st, "--only and --skip leave no check to run");
		return no_operands(key, arg, st);
	}
	case 'F':
		if (!*arg)
			argp_error(st, "--dump needs a file");
		o->dump = arg;
		break;
	case OPT_WATCH:
		o->watch_ms = arg_duration(st, "--watch", arg);
		if (o->watch_ms < 0)
			argp_error(st, "--watch must be finite");
		break;
	case OPT_STALL:
		o->stall_ms = arg_stall(st, arg);
		break;
	case OPT_SYSFS:
		if (!*arg)
			argp_error(st, "--sysfs needs a directory");
		o->sysfs = arg;
		break;
	default:
		return no_operands(key, arg, st);
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"Check the window, the PCI path under it and every board on it, and "
	"say in one line whether all is well and the first thing to fix.  "
	"Each check ends PASS, WARN, FAIL or SKIP (with the reason), with a "
	"line of evidence and, for a WARN or FAIL, what to do next.  The "
	"window: its format, generation, boards and their heartbeats, "
	"receivers, queues full behind a dead receiver, queues stalled "
	"(holding messages that nobody takes), diagnostic queues.  "
	"The PCI path (a window on a PCI device): links trained below what "
	"both ends support, AER errors standing or counting up, MPS and MRRS, "
	"the BAR against the window, IOMMU group and driver.  Between boards: "
	"the window map (patterns in the scratch areas, the known content of "
	"each region), doorbells, the raw link beside the PCIe model, and a "
	"short ping-pong and stream per pair.  It sends only on the "
	"diagnostic queues and writes only the scratch areas.  Exit 0 when "
	"nothing failed (--strict: nor warned), 1 when something did.",
	NULL, NULL, NULL
};

static int run(int argc, char **argv, struct ctx *ctx)
{
	static struct check_opts o;
	static struct check_run cr;
	struct parse_state ps = { &o, false };

	memset(&o, 0, sizeof(o));
	for (int i = 0; i < CK_COUNT; i++)
		o.selected[i] = true;
	o.timeout_ms = 30000;
	o.watch_ms = 1000;
	o.stall_ms = SMQ_STALL_DEFAULT_MS;
	parse_cmd(&argp, argc, argv, &ps, ctx);
	/* a board the window does not have is a bad option, not a check that
	 * fails: said before any agent attaches */
	struct smq_window *w;
	if (!smq_open(window_spec(ctx), 0, SMQ_OPEN_READONLY | SMQ_OPEN_RAW,
		      &w)) {
		int bad = check_board(ctx, w);
		smq_close(w);
		if (bad)
			return 1;
	}
	memset(&cr, 0, sizeof(cr));
	cr.ctx = ctx;
	cr.o = &o;
	measure_signals();
	struct pci_state *pci = check_pci_begin(&cr);
	int rc;
	if (o.peer_mode) {
		/* the coordinator's messages wait in our diagnostic queue
		 * until our part is done: the window is looked at after */
		rc = check_boards(&cr);
		check_window(&cr);
	} else {
		/* the window as it is, before the agents attach */
		check_window(&cr);
		rc = check_boards(&cr);
	}
	check_pci_end(&cr, pci);
	if (rc)
		return rc;
	return check_report(&cr);
}

const struct cmd cmd_check = { "check", run, &argp,
			       "check a window, its PCI path and every board" };
