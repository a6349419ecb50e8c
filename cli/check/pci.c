/* smqctl check: the PCI path under a window on a PCI device (pci:BDF/BAR,
 * or --device): every link on it against what both ends support, the AER
 * counts of each device on it (standing, and growing while check runs),
 * MPS and MRRS, the BAR against the window, and the IOMMU group and
 * driver.  What PCI is, the probes read (libpci, sysfs); this says what
 * it means for the window. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "model.h"
#include "probe.h"

struct pci_state {
	bool ok;                /* the device was found */
	char why[300];          /* else why not */
	struct probe_list list;
	int dev, bar;           /* index of the device; its BAR, -1 default */
	int path[PROBE_PATH_MAX], npath;
	char bdf[PROBE_PATH_MAX][16];
	struct probe_aer aer0[PROBE_PATH_MAX];
	uint64_t t0_ns;
};

static void bdf_of(const struct probe_dev *d, char out[16])
{
	snprintf(out, 16, "%04x:%02x:%02x.%x", d->domain & 0xffff,
		 d->bus & 0xff, d->dev & 0x1f, d->func & 7);
}

/* "BDF" or "BDF/BAR": the device part in dev, the BAR or -1. */
static bool split_device(const char *s, char *dev, size_t n, int *bar)
{
	const char *slash = strchr(s, '/');
	size_t len = slash ? (size_t)(slash - s) : strlen(s);
	char *end;

	*bar = -1;
	if (len >= n)
		return false;
	memcpy(dev, s, len);
	dev[len] = 0;
	if (!slash)
		return true;
	long b = strtol(slash + 1, &end, 10);
	if (*end || end == slash + 1 || b < 0 || b > 5)
		return false;
	*bar = (int)b;
	return true;
}

static bool find_device(struct check_run *cr, struct pci_state *ps)
{
	const char *spec = window_spec(cr->ctx), *name;
	char dev[64];

	if (cr->o->device)
		name = cr->o->device;
	else if (!strncmp(spec, "pci:", 4))
		name = spec + 4;
	else {
		snprintf(ps->why, sizeof(ps->why), "the window is not on a PCI "
			 "device (%.*s); --device names one", (int)strcspn(spec,
			 ":"), spec);
		return false;
	}
	if (!split_device(name, dev, sizeof(dev), &ps->bar)) {
		snprintf(ps->why, sizeof(ps->why), "'%s' is no PCI device "
			 "([DOMAIN:]BUS:SLOT.FUNC[/BAR])", name);
		return false;
	}
	int err = probe_scan(&ps->list, NULL, cr->o->dump);
	if (err) {
		snprintf(ps->why, sizeof(ps->why), "cannot read the PCI devices%s%s: "
			 "%s", cr->o->dump ? " of " : "", cr->o->dump
			 ? cr->o->dump : "", *probe_last_error()
			 ? probe_last_error() : strerror(-err));
		return false;
	}
	ps->dev = probe_find(&ps->list, dev);
	if (ps->dev < 0) {
		snprintf(ps->why, sizeof(ps->why), "no PCI device %s%s%s", dev,
			 cr->o->dump ? " in " : "", cr->o->dump ? cr->o->dump
			 : " on this machine");
		return false;
	}
	if (ps->bar < 0)
		ps->bar = ps->list.dev[ps->dev].use.bar;
	ps->npath = probe_path(&ps->list, ps->dev, ps->path);
	for (int i = 0; i < ps->npath; i++)
		bdf_of(&ps->list.dev[ps->path[i]], ps->bdf[i]);
	return true;
}

/* The link the raw figures are set beside: the device's, as it trained
 * (smqctl model). */
static void model_link(struct check_run *cr, const struct pci_state *ps)
{
	const struct probe_link *k = &ps->list.dev[ps->dev].link;
	struct pcie_link_params p = { k->sta_speed, k->sta_width, k->mps,
				      k->mrrs };

	if (!k->present || pcie_params_check(&p)) {
		snprintf(cr->model_note, sizeof(cr->model_note), "none: %s has "
			 "no PCIe link to model", ps->bdf[0]);
		return;
	}
	cr->model = true;
	cr->gen = p.gen;
	cr->width = p.width;
	cr->mps = p.mps;
	cr->mrrs = p.mrrs;
	snprintf(cr->model_note, sizeof(cr->model_note), "the PCIe model of "
		 "the pcie-bench study for %s: Gen%d x%d, MPS %d, MRRS %d "
		 "(smqctl model), beside the raw writes of board %u",
		 ps->bdf[0], p.gen, p.width, p.mps, p.mrrs, cr->ctx->board);
}

struct pci_state *check_pci_begin(struct check_run *cr)
{
	struct pci_state *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	/* the raw link's figures are set beside the device's link too */
	bool any = check_wanted(cr, CK_RAW);
	for (int i = CK_LINK; i <= CK_VFIO; i++)
		any |= check_wanted(cr, (enum check_id)i);
	if (!any)
		return ps;
	ps->ok = find_device(cr, ps);
	ps->t0_ns = now_ns();
	if (ps->ok)
		model_link(cr, ps);
	else
		snprintf(cr->model_note, sizeof(cr->model_note), "none: %.190s",
			 ps->why);
	for (int i = 0; ps->ok && i < ps->npath; i++)
		probe_sysfs_aer(cr->o->sysfs, ps->bdf[i], &ps->aer0[i]);
	return ps;
}

static const char *dev_name(const struct pci_state *ps, int index)
{
	for (int i = 0; i < ps->npath; i++)
		if (ps->path[i] == index)
			return ps->bdf[i];
	return "?";
}

static void check_links(struct check_run *cr, const struct pci_state *ps)
{
	struct probe_link_state ls[PROBE_PATH_MAX];
	const struct probe_dev *d = &ps->list.dev[ps->dev];
	int n = probe_path_links(&ps->list, ps->path, ps->npath, ls,
				 PROBE_PATH_MAX);

	if (d->config_limited) {
		check_set(cr, CK_LINK, CHECK_SKIP, "%s: only 64 bytes of its "
			  "config space are readable (%s): its link is unknown",
			  ps->bdf[0], cr->o->dump ? "the dump holds no more"
			  : "run as root");
		return;
	}
	if (!n) {
		check_set(cr, CK_LINK, CHECK_SKIP, "no PCI Express link on the path "
			  "of %s (%s): nothing to train", ps->bdf[0],
			  d->link.present ? "an integrated device"
			  : "a conventional PCI device, as QEMU's ivshmem is");
		return;
	}
	for (int i = 0; i < n; i++) {
		const struct probe_link_state *s = &ls[i];
		if (!s->down && !s->downgraded)
			continue;
		check_set(cr, CK_LINK, CHECK_FAIL, "%s: the link %s%s is %s: "
			  "trained %s x%d, %s support %s x%d",
			  dev_name(ps, s->dev), s->port >= 0 ? "up to " : "",
			  s->port >= 0 ? dev_name(ps, s->port) : "",
			  s->down ? "down" : "downgraded",
			  probe_speed_name(s->speed), s->width,
			  s->both_ends ? "both ends" : "the device can",
			  probe_speed_name(s->can_speed), s->can_width);
		check_next(cr, CK_LINK, "reseat or replace the cable or card of "
			   "%s; 'setpci' can retrain it (Link Control, Retrain "
			   "Link); a downgraded link bounds every figure below",
			   dev_name(ps, s->dev));
		return;
	}
	check_set(cr, CK_LINK, CHECK_PASS, "%d link%s on the path, each "
		  "trained to what both ends support (%s: %s x%d)", n,
		  n == 1 ? "" : "s", dev_name(ps, ls[0].dev),
		  probe_speed_name(ls[0].speed), ls[0].width);
}

static const char *const aer_words[PROBE_AER_KINDS] = {
	"correctable", "non-fatal", "fatal"
};

/* The first growth (uncorrectable first), else the first standing
 * count, over the path. */
static void check_aer(struct check_run *cr, const struct pci_state *ps)
{
	struct probe_aer now[PROBE_PATH_MAX];
	int present = 0;

	for (int i = 0; i < ps->npath; i++) {
		probe_sysfs_aer(cr->o->sysfs, ps->bdf[i], &now[i]);
		for (int k = 0; k < PROBE_AER_KINDS; k++)
			present += now[i].present[k];
	}
	if (!present) {
		check_set(cr, CK_AER, CHECK_SKIP, "no AER counts under %s for "
			  "the path of %s (no AER capability, or a kernel "
			  "without AER)", cr->o->sysfs ? cr->o->sysfs : "/sys",
			  ps->bdf[0]);
		return;
	}
	for (int k = PROBE_AER_KINDS - 1; k >= 0; k--)
		for (int i = 0; i < ps->npath; i++) {
			uint64_t a = ps->aer0[i].total[k], b = now[i].total[k];
			if (!now[i].present[k] || b <= a)
				continue;
			check_set(cr, CK_AER, k ? CHECK_FAIL : CHECK_WARN,
				  "%s: %s errors counting up while check ran: %"
				  PRIu64 " to %" PRIu64 " in %.1f s (%s)",
				  ps->bdf[i], aer_words[k], a, b,
				  (double)(now_ns() - ps->t0_ns) / 1e9,
				  now[i].named[k]);
			check_next(cr, CK_AER, "%s", k
				   ? "uncorrectable errors lose or corrupt TLPs: "
				     "stop the application on this window, then "
				     "reseat or replace the link's cable or card"
				   : "the link retries (replays) what arrives "
				     "damaged: check the cable, the connectors "
				     "and the slot; the queue stays correct");
			return;
		}
	for (int k = PROBE_AER_KINDS - 1; k >= 0; k--)
		for (int i = 0; i < ps->npath; i++) {
			if (!now[i].present[k] || !now[i].total[k])
				continue;
			check_set(cr, CK_AER, CHECK_WARN, "%s: %" PRIu64 " %s "
				  "error%s standing since the counters were "
				  "cleared (%s); none in %d ms of watching", ps->bdf[i],
				  now[i].total[k], aer_words[k],
				  now[i].total[k] == 1 ? "" : "s", now[i].named[k],
				  cr->o->watch_ms);
			check_next(cr, CK_AER, "run check again: a count that "
				   "grows is a link that fails now; the counts "
				   "clear at the next boot");
			return;
		}
	check_set(cr, CK_AER, CHECK_PASS, "no AER error on the %d device%s of "
		  "the path (up to %s), none in %d ms of watching", ps->npath,
		  ps->npath == 1 ? "" : "s", ps->bdf[ps->npath - 1],
		  cr->o->watch_ms);
}

static void check_payload(struct check_run *cr, const struct pci_state *ps)
{
	struct probe_payload p;

	probe_path_payload(&ps->list, ps->path, ps->npath, &p);
	if (!p.known || !p.mps) {
		check_set(cr, CK_PAYLOAD, CHECK_SKIP, "%s has no PCI Express "
			  "registers readable: no MPS or MRRS", ps->bdf[0]);
		return;
	}
	if (p.over >= 0) {
		const struct probe_link *a = &ps->list.dev[p.over].link;
		const struct probe_link *b = &ps->list.dev[p.receiver].link;
		check_set(cr, CK_PAYLOAD, CHECK_FAIL, "%s sends TLPs of up to %d "
			  "bytes (MPS), but %s above it takes at most %d: they "
			  "are malformed there", dev_name(ps, p.over), a->mps,
			  dev_name(ps, p.receiver), b->mps);
		check_next(cr, CK_PAYLOAD, "set MPS of %s to %d or less (boot "
			   "with pci=pcie_bus_safe, or setpci Device Control)",
			   dev_name(ps, p.over), b->mps);
		return;
	}
	check_set(cr, CK_PAYLOAD, CHECK_PASS, "MPS %d bytes, within what every "
		  "port above accepts (least on the path %d, least supported "
		  "%d); MRRS %d bytes", p.mps, p.least_mps, p.least_supported,
		  p.mrrs);
}

static void check_bar(struct check_run *cr, const struct pci_state *ps)
{
	const struct probe_dev *d = &ps->list.dev[ps->dev];
	const struct probe_bar *b = NULL;
	uint64_t addr = 0, size = 0;

	for (int i = 0; i < d->nbars; i++)
		if (d->bars[i].index == ps->bar)
			b = &d->bars[i];
	if (!b) {
		if (ps->bar < 0)
			check_set(cr, CK_BAR, CHECK_FAIL, "%s has no memory BAR "
				  "to carry the window", ps->bdf[0]);
		else
			check_set(cr, CK_BAR, CHECK_FAIL, "%s has no BAR%d",
				  ps->bdf[0], ps->bar);
		check_next(cr, CK_BAR, "smqctl probe -v shows its BARs");
		return;
	}
	/* where the kernel placed it, else what libpci sized */
	if (probe_sysfs_bar(cr->o->sysfs, ps->bdf[0], ps->bar, &addr, &size) &&
	    b->size_known) {
		addr = b->addr;
		size = b->size;
	}
	if (!size) {
		check_set(cr, CK_BAR, CHECK_SKIP, "the size of BAR%d of %s is not "
			  "known (a dump: --sysfs gives a recorded tree)",
			  ps->bar, ps->bdf[0]);
		return;
	}
	if (cr->window_size && size < cr->window_size) {
		check_set(cr, CK_BAR, CHECK_FAIL, "BAR%d of %s holds %" PRIu64
			  " bytes, the window's layout needs %" PRIu64, ps->bar,
			  ps->bdf[0], size, cr->window_size);
		check_next(cr, CK_BAR, "format a smaller window (smqctl init "
			   "--dry-run says what fits) or give the BAR more");
	} else if (size & (size - 1) || addr % size) {
		check_set(cr, CK_BAR, CHECK_FAIL, "BAR%d of %s at %#" PRIx64 ", %"
			  PRIu64 " bytes: not aligned to its size", ps->bar,
			  ps->bdf[0], addr, size);
		check_next(cr, CK_BAR, "a BAR is a power of two aligned to its "
			   "size: the firmware or a resize left it wrong; "
			   "reboot, or rescan the bus");
	} else if (!b->prefetch) {
		check_set(cr, CK_BAR, CHECK_WARN, "BAR%d of %s (%" PRIu64 " bytes, "
			  "the window %" PRIu64 ") is not prefetchable: no "
			  "write-combining, every store a TLP of its own",
			  ps->bar, ps->bdf[0], size, cr->window_size);
		check_next(cr, CK_BAR, "use a prefetchable BAR of the device "
			   "(smqctl probe says which)");
	} else {
		check_set(cr, CK_BAR, CHECK_PASS, "BAR%d of %s: %" PRIu64 " bytes "
			  "at %#" PRIx64 ", prefetchable, aligned; the window "
			  "needs %" PRIu64, ps->bar, ps->bdf[0], size, addr,
			  cr->window_size);
	}
}

/* VFIO takes a whole IOMMU group: every device in it bound to vfio-pci
 * or to no driver (bridges aside). */
static void check_vfio(struct check_run *cr, const struct pci_state *ps)
{
	char driver[64], group[32], other[64], devs[32][16];

	probe_sysfs_driver(cr->o->sysfs, ps->bdf[0], driver, sizeof(driver));
	if (!probe_sysfs_has(cr->o->sysfs, ps->bdf[0])) {
		check_set(cr, CK_VFIO, CHECK_SKIP, "%s is not under %s/bus/pci: "
			  "its driver and IOMMU group are unknown", ps->bdf[0],
			  cr->o->sysfs ? cr->o->sysfs : "/sys");
		return;
	}
	if (strcmp(driver, "vfio-pci")) {
		check_set(cr, CK_VFIO, CHECK_SKIP, "not a VFIO window: %s is "
			  "bound to %s", ps->bdf[0], driver[0] ? driver
			  : "no driver (mapped through sysfs)");
		return;
	}
	probe_sysfs_iommu_group(cr->o->sysfs, ps->bdf[0], group, sizeof(group));
	if (!group[0]) {
		check_set(cr, CK_VFIO, CHECK_FAIL, "%s is bound to vfio-pci but "
			  "has no IOMMU group", ps->bdf[0]);
		check_next(cr, CK_VFIO, "turn the IOMMU on (intel_iommu=on or "
			   "amd_iommu=on on the kernel's command line)");
		return;
	}
	int n = probe_sysfs_group_devices(cr->o->sysfs, group, devs, 32);
	for (int i = 0; i < n && i < 32; i++) {
		if (!strcmp(devs[i], ps->bdf[0]))
			continue;
		probe_sysfs_driver(cr->o->sysfs, devs[i], other, sizeof(other));
		if (!other[0] || !strcmp(other, "vfio-pci") ||
		    !strcmp(other, "pcieport"))
			continue;
		check_set(cr, CK_VFIO, CHECK_FAIL, "IOMMU group %s holds %s too, "
			  "bound to %s: VFIO takes a whole group", group,
			  devs[i], other);
		check_next(cr, CK_VFIO, "bind %s to vfio-pci as well, or unbind "
			   "it (echo %s > /sys/bus/pci/devices/%s/driver/unbind)",
			   devs[i], devs[i], devs[i]);
		return;
	}
	check_set(cr, CK_VFIO, CHECK_PASS, "%s bound to vfio-pci in IOMMU group "
		  "%s (%d device%s, none held by another driver)", ps->bdf[0],
		  group, n < 0 ? 1 : n, n == 1 ? "" : "s");
}

void check_pci_end(struct check_run *cr, struct pci_state *ps)
{
	if (!ps) {
		check_skip_group(cr, "pci", "out of memory");
		return;
	}
	if (!ps->ok) {
		check_skip_group(cr, "pci", "%s", ps->why);
		probe_free(&ps->list);
		free(ps);
		return;
	}
	uint64_t waited = (now_ns() - ps->t0_ns) / 1000000;
	/* AER is read twice at least --watch apart: a count that grows in
	 * between is counting now */
	if (check_wanted(cr, CK_AER) && waited < (uint64_t)cr->o->watch_ms)
		usleep((useconds_t)((uint64_t)cr->o->watch_ms - waited) * 1000);
	check_links(cr, ps);
	check_aer(cr, ps);
	check_payload(cr, ps);
	check_bar(cr, ps);
	check_vfio(cr, ps);
	probe_free(&ps->list);
	free(ps);
}
