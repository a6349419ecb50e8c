/* smqctl probe: the devices as text, like lspci. */
#include <string.h>
#include "report.h"

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

static char pm(bool b)
{
	return b ? '+' : '-';
}

/* The CXL DVSECs, in lspci -vv's words */
static void print_cxl(const struct probe_cxl *x)
{
	if (x->device)
		printf("\tCXL device: CXLCap: Cache%c IO%c Mem%c Mem HW Init%c "
		       "HDMCount %d; CXLCtl: Cache%c IO%c Mem%c\n",
		       pm(x->cap_cache), pm(x->cap_io), pm(x->cap_mem),
		       pm(x->mem_hwinit), x->hdm_count, pm(x->ctl_cache),
		       pm(x->ctl_io), pm(x->ctl_mem));
	if (x->flexbus)
		printf("\tCXL %slink (Flex Bus): FBCap: Cache%c IO%c Mem%c "
		       "68BFlit%c MltLogDev%c; FBSta: Cache%c IO%c Mem%c "
		       "68BFlit%c MltLogDev%c\n", x->port ? "port, " : "",
		       pm(x->fb_cap_cache), pm(x->fb_cap_io), pm(x->fb_cap_mem),
		       pm(x->fb_cap_68b), pm(x->fb_cap_mld), pm(x->fb_sta_cache),
		       pm(x->fb_sta_io), pm(x->fb_sta_mem), pm(x->fb_sta_68b),
		       pm(x->fb_sta_mld));
	else if (x->port)
		printf("\tCXL port\n");
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
	if (d->cxl.present)
		print_cxl(&d->cxl);
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
		print_use(d, o);
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
			printf("Not candidates (smq uses non-transparent bridges, "
			       "ivshmem and CXL memory):\n");
		first = false;
		slot_str(d, domains, slot);
		printf("\t%s ", slot);
		print_title(d);
		if (d->driver[0])
			printf(", driver %s", d->driver);
		printf("\n\t\t%s\n", d->use.why);
	}
}

void print_list(const struct probe_list *l, const struct probe_opts *o,
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
