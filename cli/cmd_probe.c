/* smqctl probe: the PCI hierarchy as libpci reads it (probes/): devices
 * like lspci, their BARs and whether one could carry an smq window, the
 * PCIe link and payload sizes, bridges and their windows; as a list, a
 * tree or JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "smqctl.h"
#include "probe.h"

enum { OPT_NTB = 0x100 };

struct probe_opts {
	struct probe_filter filter;
	const char *dump;
	bool tree, ntb;
};

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
	  "Only non-transparent bridges and the BARs that could carry a "
	  "window", 0 },
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
	case ARGP_KEY_ARG:
		argp_error(st, "unexpected argument '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"List the PCI devices as libpci reads them, like lspci: each device's "
	"BARs (address, size, 32/64-bit, prefetchable, I/O, disabled) and "
	"whether one could carry an smq window and why not, its PCI Express "
	"link (capability and status: speed, width, downgraded) and MaxPayload "
	"and MaxReadReq sizes, NUMA node and driver; bridges with their bus "
	"numbers and memory windows; non-transparent bridges by their IDs.  "
	"Exit 1 when no device matches or there is no PCI access.",
	NULL, NULL, NULL
};

/* ---- words ---- */

static const char *kind_key(enum probe_kind k)
{
	switch (k) {
	case PROBE_HOST_BRIDGE: return "host_bridge";
	case PROBE_PCI_BRIDGE:  return "pci_bridge";
	case PROBE_NTB:         return "ntb";
	default:                return "device";
	}
}

static bool is_bridge(const struct probe_dev *d)
{
	return d->header_type == 1 || d->header_type == 2;
}

/* Sizes as lspci writes them: 512K, 16M, 2G, 4096 is 4K, 1536 stays. */
static const char *size_str(uint64_t x, char buf[32])
{
	static const char *const suffix[] = { "", "K", "M", "G", "T" };
	unsigned i = 0;

	while (i < 4 && x && !(x % 1024)) {
		x /= 1024;
		i++;
	}
	snprintf(buf, 32, "%" PRIu64 "%s", x, suffix[i]);
	return buf;
}

/* "0000:00:01.0", or "00:01.0" when every device is in domain 0 (lspci). */
static void slot_str(const struct probe_dev *d, bool domains, char buf[32])
{
	if (domains)
		snprintf(buf, 32, "%04x:%02x:%02x.%d", d->domain, d->bus, d->dev,
			 d->func);
	else
		snprintf(buf, 32, "%02x:%02x.%d", d->bus, d->dev, d->func);
}

static bool window_open(uint64_t base, uint64_t limit)
{
	return base <= limit;
}

static bool shown_bar(const struct probe_bar *b, bool ntb_only)
{
	return !ntb_only || b->window_ok;
}

static bool shown_dev(const struct probe_dev *d, bool ntb_only)
{
	return !ntb_only || d->kind == PROBE_NTB;
}

static bool is_cardbus(const struct probe_dev *d)
{
	return d->header_type == 2;
}

/* ---- JSON ---- */

static void json_hex(struct json *j, const char *key, unsigned v, int digits)
{
	char buf[16];
	snprintf(buf, sizeof(buf), "%0*x", digits, v);
	json_str(j, key, buf);
}

static void json_window(struct json *j, const char *key, uint64_t base,
			uint64_t limit)
{
	json_begin(j, key, '{');
	json_u64(j, "base", base);
	json_u64(j, "limit", limit);
	json_bool(j, "open", window_open(base, limit));
	json_end(j, '}');
}

/* A CardBus bridge's two memory or two I/O windows. */
static void json_cardbus(struct json *j, const char *key,
			 const struct probe_window *w, bool io)
{
	json_begin(j, key, '[');
	for (int i = 0; i < 2; i++) {
		json_begin(j, NULL, '{');
		json_u64(j, "base", w[i].base);
		json_u64(j, "limit", w[i].limit);
		json_bool(j, "open", window_open(w[i].base, w[i].limit));
		if (io)
			json_bool(j, "io32", w[i].io32);
		else
			json_bool(j, "prefetchable", w[i].prefetch);
		json_bool(j, "disabled", w[i].disabled);
		json_end(j, '}');
	}
	json_end(j, ']');
}

static void json_bridge(struct json *j, const struct probe_dev *d)
{
	json_begin(j, "bridge", '{');
	json_u64(j, "primary", (uint64_t)d->primary);
	json_u64(j, "secondary", (uint64_t)d->secondary);
	json_u64(j, "subordinate", (uint64_t)d->subordinate);
	if (is_cardbus(d)) {
		json_cardbus(j, "cardbus_memory", d->cb_mem, false);
		json_cardbus(j, "cardbus_io", d->cb_io, true);
	} else {
		json_window(j, "memory", d->mem_base, d->mem_limit);
		json_window(j, "prefetchable", d->pref_base, d->pref_limit);
		json_bool(j, "prefetchable_64bit", d->pref64);
	}
	json_end(j, '}');
}

static void json_bars(struct json *j, const struct probe_dev *d,
		      bool ntb_only)
{
	json_begin(j, "bars", '[');
	for (int i = 0; i < d->nbars; i++) {
		const struct probe_bar *b = &d->bars[i];
		if (!shown_bar(b, ntb_only))
			continue;
		json_begin(j, NULL, '{');
		json_u64(j, "index", (uint64_t)b->index);
		json_u64(j, "address", b->addr);
		json_u64(j, "size", b->size);
		json_bool(j, "size_known", b->size_known);
		json_bool(j, "io", b->io);
		json_bool(j, "is64", b->is64);
		json_bool(j, "prefetchable", b->prefetch);
		json_bool(j, "disabled", b->disabled);
		json_bool(j, "virtual", b->is_virtual);
		json_bool(j, "window_ok", b->window_ok);
		json_bool(j, "preferred", b->preferred);
		json_str(j, "why", b->why);
		json_str(j, "role", b->role);
		json_end(j, '}');
	}
	json_end(j, ']');
}

static void json_pcie(struct json *j, const struct probe_link *k)
{
	json_begin(j, "pcie", '{');
	json_u64(j, "port_type", (uint64_t)k->port_type);
	json_str(j, "port_type_name", probe_port_type_name(k->port_type));
	json_bool(j, "has_link", k->has_link);
	if (k->has_link) {
		json_u64(j, "cap_speed", (uint64_t)k->cap_speed);
		json_str(j, "cap_speed_name", probe_speed_name(k->cap_speed));
		json_u64(j, "cap_width", (uint64_t)k->cap_width);
		json_u64(j, "sta_speed", (uint64_t)k->sta_speed);
		json_str(j, "sta_speed_name", probe_speed_name(k->sta_speed));
		json_u64(j, "sta_width", (uint64_t)k->sta_width);
		json_bool(j, "downgraded", k->downgraded);
	}
	json_u64(j, "mps_supported", (uint64_t)k->mps_supported);
	json_u64(j, "mps", (uint64_t)k->mps);
	json_u64(j, "mrrs", (uint64_t)k->mrrs);
	json_end(j, '}');
}

/* What smq can make of the device, and the commands that would make it
 * usable (none for a device that is no candidate). */
static void json_use(struct json *j, const struct probe_dev *d)
{
	const struct probe_use *u = &d->use;
	struct probe_advice a;

	probe_advise(d, &a);
	json_begin(j, "smq", '{');
	json_bool(j, "candidate", u->candidate);
	json_str(j, "what", u->what);
	json_str(j, "why", u->why);
	if (u->candidate) {
		json_str(j, "access", probe_access_name(u->access));
		json_i64(j, "bar", u->bar);
		json_str(j, "spec", a.spec);
		json_bool(j, "fits", u->fits);
		json_bool(j, "usable", a.usable);
		json_bool(j, "doorbells", a.doorbells);
		json_bool(j, "doorbell_capable", u->doorbell_capable);
	}
	json_begin(j, "commands", '[');
	for (int i = 0; i < a.ncmds; i++)
		json_str(j, NULL, a.cmds[i]);
	json_end(j, ']');
	json_end(j, '}');
}

static void json_dev(struct json *j, const struct probe_list *l,
		     const struct probe_dev *d, bool ntb_only)
{
	char slot[32];

	json_begin(j, NULL, '{');
	slot_str(d, true, slot);
	json_str(j, "slot", slot);
	json_u64(j, "domain", (uint64_t)d->domain);
	json_u64(j, "bus", (uint64_t)d->bus);
	json_u64(j, "dev", (uint64_t)d->dev);
	json_u64(j, "func", (uint64_t)d->func);
	json_hex(j, "vendor", d->vendor, 4);
	json_hex(j, "device", d->device, 4);
	json_hex(j, "subvendor", d->subvendor, 4);
	json_hex(j, "subdevice", d->subdevice, 4);
	json_hex(j, "class", d->class, 6);
	json_u64(j, "revision", d->revision);
	json_str(j, "vendor_name", d->vendor_name);
	json_str(j, "device_name", d->device_name);
	json_str(j, "class_name", d->class_name);
	json_u64(j, "header_type", (uint64_t)d->header_type);
	json_str(j, "kind", kind_key(d->kind));
	if (d->kind == PROBE_NTB)
		json_str(j, "ntb_kind", d->ntb_kind);
	if (d->parent >= 0) {
		slot_str(&l->dev[d->parent], true, slot);
		json_str(j, "parent", slot);
	}
	json_i64(j, "numa_node", d->numa_node);
	json_str(j, "driver", d->driver);
	json_str(j, "iommu_group", d->iommu_group);
	json_bool(j, "config_limited", d->config_limited);
	json_bool(j, "msix", d->msix);
	if (is_bridge(d))
		json_bridge(j, d);
	json_bars(j, d, ntb_only);
	if (d->link.present)
		json_pcie(j, &d->link);
	json_use(j, d);
	json_end(j, '}');
}

/* --ntb: the devices left out, each with what it is and why. */
static void json_not_candidates(struct json *j, const struct probe_list *l)
{
	char slot[32];

	json_begin(j, "not_candidates", '[');
	for (int i = 0; i < l->n; i++) {
		const struct probe_dev *d = &l->dev[i];
		if (d->use.candidate)
			continue;
		json_begin(j, NULL, '{');
		slot_str(d, true, slot);
		json_str(j, "slot", slot);
		json_hex(j, "class", d->class, 6);
		json_str(j, "class_name", d->class_name);
		json_str(j, "driver", d->driver);
		json_str(j, "what", d->use.what);
		json_str(j, "why", d->use.why);
		json_end(j, '}');
	}
	json_end(j, ']');
}

static void json_list(const struct probe_list *l, const struct probe_opts *o)
{
	struct json j;

	json_open(&j, stdout);
	json_begin(&j, NULL, '{');
	json_str(&j, "source", o->dump ? "dump" : "live");
	if (o->dump)
		json_str(&j, "dump", o->dump);
	json_u64(&j, "scanned", (uint64_t)l->scanned);
	json_begin(&j, "devices", '[');
	for (int i = 0; i < l->n; i++)
		if (shown_dev(&l->dev[i], o->ntb))
			json_dev(&j, l, &l->dev[i], o->ntb);
	json_end(&j, ']');
	if (o->ntb)
		json_not_candidates(&j, l);
	json_end(&j, '}');
	json_close(&j);
}

/* ---- text ---- */

/* "Ethernet controller [0200]: Red Hat, Inc. Virtio 1.0 network device
 * [1af4:1041] (rev 01)", as lspci -nn. */
static void print_title(const struct probe_dev *d)
{
	/* libpci names an unknown class with its number already */
	if (strchr(d->class_name, '['))
		printf("%s: ", d->class_name);
	else
		printf("%s [%04x]: ", d->class_name, d->class >> 8);
	printf("%s %s [%04x:%04x]", d->vendor_name, d->device_name, d->vendor,
	       d->device);
	if (d->revision)
		printf(" (rev %02x)", d->revision);
}

static void print_window(const char *what, uint64_t base, uint64_t limit,
			 bool pref64)
{
	char sz[32];
	printf("\t%s behind bridge: ", what);
	if (!window_open(base, limit)) {
		printf("[closed]\n");
		return;
	}
	if (limit >> 32 || base >> 32 || pref64)
		printf("%016" PRIx64 "-%016" PRIx64, base, limit);
	else
		printf("%08" PRIx64 "-%08" PRIx64, base, limit);
	printf(" [size=%s]%s\n", size_str(limit - base + 1, sz),
	       pref64 ? " [64-bit]" : "");
}

/* A CardBus bridge's windows, in lspci's words: "Memory window 0". */
static void print_cardbus(const struct probe_window *w, bool io)
{
	char sz[32];

	for (int i = 0; i < 2; i++) {
		printf("\t%s window %d: ", io ? "I/O" : "Memory", i);
		if (!window_open(w[i].base, w[i].limit)) {
			printf("[closed]\n");
			continue;
		}
		printf("%08" PRIx64 "-%08" PRIx64 " [size=%s]%s%s%s\n",
		       w[i].base, w[i].limit,
		       size_str(w[i].limit - w[i].base + 1, sz),
		       io && w[i].io32 ? " [32-bit]" : "",
		       w[i].disabled ? " [disabled]" : "",
		       !io && w[i].prefetch ? " (prefetchable)" : "");
	}
}

static void print_bridge(const struct probe_dev *d)
{
	printf("\tBus: primary=%02x, secondary=%02x, subordinate=%02x\n",
	       d->primary, d->secondary, d->subordinate);
	if (is_cardbus(d)) {
		print_cardbus(d->cb_mem, false);
		print_cardbus(d->cb_io, true);
		return;
	}
	print_window("Memory", d->mem_base, d->mem_limit, false);
	print_window("Prefetchable memory", d->pref_base, d->pref_limit,
		     d->pref64);
}

static void print_bar(const struct probe_bar *b, bool verbose)
{
	char sz[32];

	printf("\tRegion %d: ", b->index);
	if (b->io)
		printf("I/O ports at %" PRIx64, b->addr);
	else
		printf("Memory at %" PRIx64 " (%s, %sprefetchable)", b->addr,
		       b->is64 ? "64-bit" : "32-bit", b->prefetch ? "" : "non-");
	if (b->is_virtual)
		printf(" [virtual]");
	else if (b->disabled)
		printf(" [disabled]");
	if (b->size_known && b->size)
		printf(" [size=%s]", size_str(b->size, sz));
	else
		printf(" [size=?]");
	if (b->window_ok)
		printf(b->preferred ? "  window: yes" : "  window: usable");
	else
		printf("  window: no");
	if (b->why[0] && (verbose || !b->window_ok || !b->preferred))
		printf(", %s", b->why);
	putchar('\n');
}

static void print_link(const struct probe_link *k)
{
	printf("\tPCIe %s:", probe_port_type_name(k->port_type));
	if (k->has_link) {
		printf(" LnkCap %s x%d, LnkSta %s x%d%s;",
		       probe_speed_name(k->cap_speed), k->cap_width,
		       probe_speed_name(k->sta_speed), k->sta_width,
		       k->downgraded ? " (downgraded)" : "");
	}
	printf(" MaxPayload %d bytes (supported %d), MaxReadReq %d bytes\n",
	       k->mps, k->mps_supported, k->mrrs);
}

/* "smq: ivshmem-doorbell: BAR0 registers (...), BAR2 shared memory" */
static void print_roles(const struct probe_dev *d)
{
	const char *sep = ": ";
	bool ivshmem = !strncmp(d->use.what, "ivshmem", 7), roles = false;

	for (int i = 0; i < d->nbars; i++)
		roles |= d->bars[i].role[0] != 0;
	if (!roles && !ivshmem)
		return;  /* "Non-transparent bridge:" has said what it is */
	printf("\tsmq: %s", d->use.what);
	for (int i = 0; i < d->nbars; i++)
		if (d->bars[i].role[0]) {
			printf("%sBAR%d %s", sep, d->bars[i].index,
			       d->bars[i].role);
			sep = ", ";
		}
	if (d->use.doorbell_capable)
		printf("; MSI-X: doorbells through vfio-pci");
	else if (ivshmem)
		printf("; no MSI-X: no doorbell, receivers poll");
	putchar('\n');
}

static void print_commands(const struct probe_dev *d, const struct probe_advice *a)
{
	if (!a->ncmds)
		return;
	if (a->to_vfio && d->use.access == PROBE_ACCESS_SYSFS)
		printf("\tsmq: for doorbells, bind it to vfio-pci");
	else if (a->to_vfio)
		printf("\tsmq: to use it with doorbells, bind it to vfio-pci");
	else
		printf("\tsmq: to map it through sysfs, unbind its driver");
	if (d->use.access == PROBE_ACCESS_UNKNOWN && a->to_vfio)
		printf(" (on the machine the dump is from; skip the unbind if "
		       "no driver holds it)");
	else if (d->use.access == PROBE_ACCESS_UNKNOWN)
		printf(" (on the machine the dump is from, if a driver holds "
		       "it)");
	printf(":\n");
	for (int i = 0; i < a->ncmds; i++)
		printf("\t\t%s\n", a->cmds[i]);
	if (!a->to_vfio)
		return;
	printf("\tsmq: vfio-pci needs the device in an IOMMU group "
	       "(/sys/bus/pci/devices/%s/iommu_group)", a->bdf);
	if (d->iommu_group[0])
		printf(": it is in group %s\n", d->iommu_group);
	else if (d->use.access == PROBE_ACCESS_UNKNOWN)
		printf("\n");
	else
		printf(": it is in none; turn the IOMMU on (intel_iommu=on or "
		       "amd_iommu=on on the kernel's command line)\n");
}

/* Whether smq can use a candidate as it stands, and how it could. */
static void print_use(const struct probe_dev *d)
{
	const struct probe_use *u = &d->use;
	const struct probe_bar *b = NULL;
	struct probe_advice a;

	probe_advise(d, &a);
	print_roles(d);
	for (int i = 0; i < d->nbars; i++)
		if (d->bars[i].index == u->bar)
			b = &d->bars[i];
	if (!b)
		printf("\tsmq: no memory BAR to map\n");
	else if (u->access == PROBE_ACCESS_UNKNOWN)
		printf("\tsmq: driver unknown (from a dump); smq would map %s "
		       "when no driver holds it (receivers poll)%s\n", a.spec,
		       a.to_vfio ? ", or with doorbells once it is bound to "
		       "vfio-pci" : "");
	else if (!u->fits)
		printf("\tsmq: %s cannot carry a window: %s\n", a.spec, b->why);
	else if (a.usable)
		printf("\tsmq: usable as it is: %s, %s; %s\n", a.spec,
		       u->access == PROBE_ACCESS_VFIO ? "through VFIO (vfio-pci)"
		       : "mapped through sysfs (no driver)", a.doorbells
		       ? "with doorbells (MSI-X)" : "receivers poll");
	else
		printf("\tsmq: not usable as it is: driver %s holds it\n",
		       d->driver);
	print_commands(d, &a);
}

static void print_dev(const struct probe_list *l, const struct probe_dev *d,
		      bool domains, const struct probe_opts *o, int verbose)
{
	char slot[32];

	slot_str(d, domains, slot);
	printf("%s ", slot);
	print_title(d);
	putchar('\n');
	if (d->kind == PROBE_NTB)
		printf("\tNon-transparent bridge: %s\n", d->ntb_kind);
	if (verbose) {
		printf("\tKind: %s, header type %d, class %06x",
		       probe_kind_name(d->kind), d->header_type, d->class);
		if (d->subvendor || d->subdevice)
			printf(", subsystem [%04x:%04x]", d->subvendor,
			       d->subdevice);
		if (d->parent >= 0) {
			slot_str(&l->dev[d->parent], domains, slot);
			printf(", behind %s", slot);
		}
		putchar('\n');
	}
	if (is_bridge(d))
		print_bridge(d);
	for (int i = 0; i < d->nbars; i++)
		if (shown_bar(&d->bars[i], o->ntb))
			print_bar(&d->bars[i], verbose);
	if (d->link.present)
		print_link(&d->link);
	else if (d->config_limited && o->dump)
		printf("\tCapabilities: not in the dump (64 bytes: lspci -x; "
		       "-xxx has them)\n");
	else if (d->config_limited)
		printf("\tCapabilities: <access denied> (config space beyond "
		       "64 bytes: root only)\n");
	else if (verbose)
		printf("\tNo PCI Express capability\n");
	if (d->numa_node >= 0)
		printf("\tNUMA node: %d\n", d->numa_node);
	if (d->driver[0])
		printf("\tKernel driver in use: %s\n", d->driver);
	else if (verbose && !o->dump)
		printf("\tKernel driver in use: none\n");
	if (d->use.candidate)
		print_use(d);
	else if (verbose)
		printf("\tsmq: not a candidate: %s%s%s%s\n", d->use.why,
		       d->driver[0] ? " (in use by driver " : "", d->driver,
		       d->driver[0] ? ")" : "");
}

/* --ntb: the devices left out, one line each: what it is and why. */
static void print_not_candidates(const struct probe_list *l, bool domains)
{
	char slot[32];
	bool first = true;

	for (int i = 0; i < l->n; i++) {
		const struct probe_dev *d = &l->dev[i];
		if (d->use.candidate)
			continue;
		if (first)
			printf("Not candidates (smq uses non-transparent bridges "
			       "and ivshmem):\n");
		first = false;
		slot_str(d, domains, slot);
		printf("\t%s ", slot);
		print_title(d);
		if (d->driver[0])
			printf(", driver %s", d->driver);
		printf("\n\t\t%s\n", d->use.why);
	}
}

static void print_list(const struct probe_list *l, const struct probe_opts *o,
		       int verbose)
{
	bool domains = false;

	for (int i = 0; i < l->n; i++)
		domains |= l->dev[i].domain != 0;
	for (int i = 0, shown = 0; i < l->n; i++) {
		if (!shown_dev(&l->dev[i], o->ntb))
			continue;
		if (shown++ && verbose)
			putchar('\n');
		print_dev(l, &l->dev[i], domains, o, verbose);
	}
	if (o->ntb)
		print_not_candidates(l, domains);
	if (o->dump)
		printf("(from the dump %s: BAR sizes, NUMA nodes and drivers are "
		       "not in a dump)\n", o->dump);
}

/* ---- tree ---- */

/* What a tree line says after the name: a bridge's buses and windows, a
 * device's memory BARs, marked where a window fits. */
static void tree_info(const struct probe_dev *d, bool ntb_only)
{
	char a[32], b[32];

	if (d->kind == PROBE_NTB)
		printf("  {NTB: %s}", d->ntb_kind);
	else if (d->kind == PROBE_HOST_BRIDGE)
		printf("  {host bridge}");
	if (is_bridge(d))
		printf("  [bus %02x-%02x]", d->secondary, d->subordinate);
	for (int i = 0; is_cardbus(d) && i < 2; i++) {
		const struct probe_window *w = &d->cb_mem[i];
		if (window_open(w->base, w->limit))
			printf(" mem%d %" PRIx64 "-%" PRIx64 " (%s%s)", i, w->base,
			       w->limit, size_str(w->limit - w->base + 1, a),
			       w->prefetch ? ", pref" : "");
	}
	if (is_bridge(d) && !is_cardbus(d)) {
		if (window_open(d->mem_base, d->mem_limit))
			printf(" mem %" PRIx64 "-%" PRIx64 " (%s)", d->mem_base,
			       d->mem_limit, size_str(d->mem_limit - d->mem_base + 1, a));
		if (window_open(d->pref_base, d->pref_limit))
			printf(" pref %" PRIx64 "-%" PRIx64 " (%s%s)", d->pref_base,
			       d->pref_limit,
			       size_str(d->pref_limit - d->pref_base + 1, b),
			       d->pref64 ? ", 64-bit" : "");
	}
	for (int i = 0; i < d->nbars; i++) {
		const struct probe_bar *bar = &d->bars[i];
		if (bar->io || !shown_bar(bar, ntb_only))
			continue;
		printf("  BAR%d %s%s%s%s", bar->index,
		       bar->size_known && bar->size ? size_str(bar->size, a) : "?",
		       bar->is64 ? " 64-bit" : "", bar->prefetch ? " pref" : "",
		       bar->window_ok ? " [window]" : "");
	}
	if (d->link.present && d->link.has_link)
		printf("  %s x%d%s", probe_speed_name(d->link.sta_speed),
		       d->link.sta_width, d->link.downgraded ? " (downgraded)" : "");
}

static void tree_node(const struct probe_list *l, int idx, const char *prefix,
		      bool last, const struct probe_opts *o)
{
	const struct probe_dev *d = &l->dev[idx];
	char child_prefix[256];
	int kids = 0, seen = 0;

	printf("%s%s%02x.%d  %s %s", prefix, last ? "\\-" : "+-", d->dev,
	       d->func, d->vendor_name, d->device_name);
	tree_info(d, o->ntb);
	putchar('\n');
	for (int i = 0; i < l->n; i++)
		kids += l->dev[i].parent == idx;
	if (!kids)
		return;
	snprintf(child_prefix, sizeof(child_prefix), "%s%s", prefix,
		 last ? "    " : "|   ");
	printf("%s\\-[%04x:%02x]\n", child_prefix, d->domain, d->secondary);
	snprintf(child_prefix, sizeof(child_prefix), "%s%s      ", prefix,
		 last ? "    " : "|   ");
	for (int i = 0; i < l->n; i++)
		if (l->dev[i].parent == idx)
			tree_node(l, i, child_prefix, ++seen == kids, o);
}

static void print_tree(const struct probe_list *l, const struct probe_opts *o)
{
	/* roots: the devices no listed bridge is above, by their bus */
	for (int i = 0; i < l->n; i++) {
		const struct probe_dev *d = &l->dev[i];
		if (d->parent >= 0)
			continue;
		bool first = true;
		for (int k = 0; k < i; k++)
			if (l->dev[k].parent < 0 && l->dev[k].domain == d->domain &&
			    l->dev[k].bus == d->bus)
				first = false;
		if (!first)
			continue;
		int n = 0, seen = 0;
		const struct probe_dev *host = NULL;
		for (int k = i; k < l->n; k++) {
			const struct probe_dev *e = &l->dev[k];
			if (e->parent < 0 && e->domain == d->domain &&
			    e->bus == d->bus) {
				n++;
				if (e->kind == PROBE_HOST_BRIDGE && !host)
					host = e;
			}
		}
		printf("[%04x:%02x]", d->domain, d->bus);
		if (host)
			printf(" below host bridge %02x.%d %s %s", host->dev,
			       host->func, host->vendor_name, host->device_name);
		putchar('\n');
		for (int k = i; k < l->n; k++) {
			const struct probe_dev *e = &l->dev[k];
			if (e->parent < 0 && e->domain == d->domain &&
			    e->bus == d->bus)
				tree_node(l, k, " ", ++seen == n, o);
		}
	}
}

/* --ntb keeps only the NTBs: the tree needs the bridges above them too,
 * so the list it draws marks the rest as context. */
static struct probe_list ntb_tree_list(const struct probe_list *l)
{
	struct probe_list t = *l;
	bool *keep = calloc((size_t)l->n + 1, sizeof(*keep));
	int *idx = malloc(((size_t)l->n + 1) * sizeof(*idx));

	t.dev = malloc(((size_t)l->n + 1) * sizeof(*t.dev));
	t.n = 0;
	if (!keep || !idx || !t.dev) {
		free(keep);
		free(idx);
		free(t.dev);
		t.dev = NULL;
		return t;
	}
	for (int i = 0; i < l->n; i++)
		if (l->dev[i].kind == PROBE_NTB)
			for (int p = i; p >= 0 && !keep[p]; p = l->dev[p].parent)
				keep[p] = true;
	for (int i = 0; i < l->n; i++) {
		idx[i] = keep[i] ? t.n : -1;
		if (keep[i]) {
			t.dev[t.n] = l->dev[i];
			t.dev[t.n].parent = l->dev[i].parent >= 0
				? idx[l->dev[i].parent] : -1;
			t.n++;
		}
	}
	free(keep);
	free(idx);
	return t;
}

/* ---- the command ---- */

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
	struct probe_opts o = { { NULL, NULL }, NULL, false, false };
	struct probe_list l;
	char words[512];
	int err;

	parse_cmd(&argp, argc, argv, &o, ctx);
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
