/* probes: what smq can make of a decoded device: whether a BAR could carry
 * a window, whether the device is a candidate and how smq would reach it,
 * and the commands that make it usable.  No libpci calls: it judges what
 * decode.c read. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "probe_int.h"

/* Why a BAR could not carry an smq window (rules of probe.h). */
void probe_bar_judge(struct probe_bar *b, bool dump)
{
	b->window_ok = b->preferred = false;
	if (b->io)
		snprintf(b->why, sizeof(b->why), "I/O space, not memory");
	else if (!b->addr)
		snprintf(b->why, sizeof(b->why), "no address assigned");
	else if (b->disabled)
		snprintf(b->why, sizeof(b->why),
			 "memory decoding off (command register)");
	else if (!b->size_known || !b->size)
		snprintf(b->why, sizeof(b->why), dump ? "size unknown (dump)"
			 : "size unknown");
	else if (b->size < PROBE_WINDOW_MIN)
		snprintf(b->why, sizeof(b->why), "too small: %llu %s < %u KiB",
			 (unsigned long long)(b->size < 1024 ? b->size
					      : b->size / 1024),
			 b->size < 1024 ? "bytes" : "KiB",
			 PROBE_WINDOW_MIN / 1024);
	else {
		b->window_ok = true;
		b->preferred = b->prefetch;
		if (b->prefetch)
			b->why[0] = 0;
		else
			snprintf(b->why, sizeof(b->why), "not prefetchable: no "
				 "write-combining; prefetchable preferred");
	}
}

/* ---- what smq can make of a device ---- */

const char *probe_access_name(enum probe_access access)
{
	switch (access) {
	case PROBE_ACCESS_SYSFS:   return "sysfs";
	case PROBE_ACCESS_VFIO:    return "vfio";
	case PROBE_ACCESS_HELD:    return "held";
	case PROBE_ACCESS_UNKNOWN: return "unknown";
	default:                   return "none";
	}
}

/* What a device that is no candidate is, and why smq leaves it alone, by
 * its class (base << 8 | sub) under a mask; the first match wins. */
static const struct not_candidate {
	uint16_t class, mask;
	const char *what, *why;
} not_candidates[] = {
	{ 0x0600, 0xffff, "host bridge", "a host bridge joins the processors "
	  "to the bus and holds no shared memory" },
	{ 0x0600, 0xff00, "bridge", "a bridge forwards the bus to the devices "
	  "behind it and holds no shared memory" },
	{ 0x0100, 0xff00, "storage controller", "a storage controller's BARs "
	  "are its registers, and the system's disks may hang on it" },
	{ 0x0200, 0xff00, "network controller", "a network controller's BARs "
	  "are its registers, and the system may be using it" },
	{ 0x0300, 0xff00, "display controller", "a display controller's BARs "
	  "are graphics registers and video memory" },
	{ 0x0c00, 0xff00, "serial bus controller", "a serial bus controller's "
	  "BARs (USB, SMBus, ...) are its registers" },
	{ 0x0000, 0x0000, "other device", "neither a non-transparent bridge "
	  "nor ivshmem: its BARs are its own registers" },
};

static void judge_not_candidate(struct probe_dev *d)
{
	const struct not_candidate *t = not_candidates;
	uint16_t class = (uint16_t)(d->class >> 8);

	while ((class & t->mask) != t->class)
		t++;  /* the last entry matches every class */
	snprintf(d->use.what, sizeof(d->use.what), "%s", t->what);
	snprintf(d->use.why, sizeof(d->use.why), "%s", t->why);
}

static struct probe_bar *bar_at(struct probe_dev *d, int index)
{
	for (int i = 0; i < d->nbars; i++)
		if (d->bars[i].index == index)
			return &d->bars[i];
	return NULL;
}

static void set_role(struct probe_dev *d, int index, const char *role)
{
	struct probe_bar *b = bar_at(d, index);
	if (b && !b->role[0])
		snprintf(b->role, sizeof(b->role), "%s", role);
}

/* QEMU's ivshmem (its ivshmem spec): BAR0 registers, BAR1 the MSI-X table
 * and PBA of ivshmem-doorbell, BAR2 the shared memory.  Without readable
 * capabilities, BAR1 tells the doorbell kind from the plain one. */
static void judge_ivshmem(struct probe_dev *d)
{
	bool doorbell = d->config_limited ? bar_at(d, 1) != NULL : d->msix;

	snprintf(d->use.what, sizeof(d->use.what), "%s",
		 doorbell ? "ivshmem-doorbell" : "ivshmem-plain");
	d->use.doorbell_capable = doorbell;
	d->use.bar = bar_at(d, 2) ? 2 : -1;
	set_role(d, 0, "registers (IVPosition at +8, Doorbell at +12)");
	set_role(d, 2, "shared memory");
	if (doorbell && d->config_limited)
		set_role(d, 1, "MSI-X table and PBA");
}

/* The BAR the pci transport takes when none is named: the largest
 * prefetchable memory BAR, else the largest; not one of MSI-X. */
static int default_bar(const struct probe_dev *d)
{
	const struct probe_bar *best = NULL;

	for (int i = 0; i < d->nbars; i++) {
		const struct probe_bar *b = &d->bars[i];
		if (b->io || !b->addr || b->index == d->msix_table_bar ||
		    b->index == d->msix_pba_bar)
			continue;
		if (!best || (b->prefetch && !best->prefetch) ||
		    (b->prefetch == best->prefetch && b->size > best->size))
			best = b;
	}
	return best ? best->index : -1;
}

static void msix_roles(struct probe_dev *d)
{
	if (!d->msix)
		return;
	if (d->msix_table_bar == d->msix_pba_bar)
		set_role(d, d->msix_table_bar, "MSI-X table and PBA");
	set_role(d, d->msix_table_bar, "MSI-X table");
	set_role(d, d->msix_pba_bar, "MSI-X PBA");
}

static enum probe_access access_of(const struct probe_dev *d, bool dump)
{
	if (dump)
		return PROBE_ACCESS_UNKNOWN;
	if (!d->driver[0])
		return PROBE_ACCESS_SYSFS;
	return strcmp(d->driver, "vfio-pci") ? PROBE_ACCESS_HELD
					     : PROBE_ACCESS_VFIO;
}

void probe_judge_use(struct probe_dev *d, bool dump)
{
	memset(&d->use, 0, sizeof(d->use));
	d->use.bar = -1;
	for (int i = 0; i < d->nbars; i++)
		d->bars[i].role[0] = 0;
	d->use.candidate = d->kind == PROBE_NTB || d->cxl.memory;
	if (!d->use.candidate)
		judge_not_candidate(d);
	else if (d->cxl.memory) {
		/* its memory is reached as a device-DAX device that cxl and
		 * ndctl make of it, not through a BAR (those are registers) */
		snprintf(d->use.what, sizeof(d->use.what),
			 "CXL memory device");
		d->use.bar = -1;
		d->use.access = access_of(d, dump);
		for (int i = 0; i < d->nbars; i++) {
			struct probe_bar *b = &d->bars[i];
			if (b->window_ok)
				snprintf(b->why, sizeof(b->why), "the device's "
					 "registers: its memory is reached "
					 "through dax:");
			b->window_ok = b->preferred = false;
		}
		return;
	} else if (d->vendor == 0x1af4 && d->device == 0x1110)
		judge_ivshmem(d);
	else {
		snprintf(d->use.what, sizeof(d->use.what), "%s", d->ntb_kind);
		d->use.bar = default_bar(d);
	}
	if (d->use.candidate) {
		const struct probe_bar *b = bar_at(d, d->use.bar);
		d->use.access = access_of(d, dump);
		d->use.fits = b && b->window_ok;
		msix_roles(d);
	}

	/* A BAR fit for a window by its own rules is still none when the
	 * device is no candidate, or a driver (vfio-pci aside) holds it. */
	for (int i = 0; i < d->nbars; i++) {
		struct probe_bar *b = &d->bars[i];
		if (!b->window_ok)
			continue;
		if (!d->use.candidate)
			snprintf(b->why, sizeof(b->why), "not a candidate: %.70s",
				 d->use.what);
		else if (d->use.access == PROBE_ACCESS_HELD)
			snprintf(b->why, sizeof(b->why), "held by driver %.48s",
				 d->driver);
		else
			continue;
		b->window_ok = b->preferred = false;
	}
}

static void add_cmd(struct probe_advice *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void add_cmd(struct probe_advice *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->cmds[a->ncmds++], sizeof(a->cmds[0]), fmt, ap);
	va_end(ap);
}

/* CXL memory: a region of it made on every host that shares it, the
 * same way (one device, no interleave; --map=mem: --map=dev would put
 * each host's page structures into the memory they share; one
 * alignment everywhere), and a device-DAX namespace of the region. */
static void advise_cxl(const struct probe_cxl *x, struct probe_advice *a)
{
	snprintf(a->spec, sizeof(a->spec), "dax:/dev/daxN.0");
	a->cxl = true;
	add_cmd(a, "cxl list -M -D -u");
	add_cmd(a, "cxl create-region -m -t pmem -d %s -w 1 -g 256 %s",
		x->decoder[0] ? x->decoder : "DECODER",
		x->memdev[0] ? x->memdev : "MEMDEV");
	add_cmd(a, "ndctl create-namespace -m devdax --map=mem -a 2M");
	add_cmd(a, "ndctl list -X");
}

void probe_advise(const struct probe_dev *d, struct probe_advice *a)
{
	const struct probe_use *u = &d->use;
	const char *bdf = a->bdf;
	bool held = u->access == PROBE_ACCESS_HELD ||
		    u->access == PROBE_ACCESS_UNKNOWN;

	memset(a, 0, sizeof(*a));
	snprintf(a->bdf, sizeof(a->bdf), "%04x:%02x:%02x.%d", d->domain & 0xffff,
		 d->bus & 0xff, d->dev & 0x1f, d->func & 7);
	if (u->candidate && d->cxl.memory) {
		advise_cxl(&d->cxl, a);
		return;
	}
	if (!u->candidate || u->bar < 0)
		return;
	snprintf(a->spec, sizeof(a->spec), "pci:%s/%d", bdf, u->bar);
	a->usable = u->fits && (u->access == PROBE_ACCESS_SYSFS ||
				u->access == PROBE_ACCESS_VFIO);
	a->doorbells = a->usable && u->access == PROBE_ACCESS_VFIO &&
		       u->doorbell_capable;
	if (!u->fits && u->access != PROBE_ACCESS_UNKNOWN)
		return;  /* no driver change makes the BAR fit */
	if (u->doorbell_capable && u->access != PROBE_ACCESS_VFIO) {
		a->to_vfio = true;
		add_cmd(a, "modprobe vfio-pci");
		add_cmd(a, "echo vfio-pci > %s/%s/driver_override",
			SYSFS_DEVICES, bdf);
		if (held)
			add_cmd(a, "echo %s > %s/%s/driver/unbind", bdf,
				SYSFS_DEVICES, bdf);
		add_cmd(a, "echo %s > %s/drivers_probe", bdf, SYSFS_PCI);
	} else if (held)
		add_cmd(a, "echo %s > %s/%s/driver/unbind", bdf, SYSFS_DEVICES,
			bdf);
}
