/* probes: the PCI hierarchy read through libpci (pciutils): bridges and
 * non-transparent bridges, BARs and whether they could carry an smq window,
 * PCIe links and payload sizes.  Config space is decoded here from what
 * libpci reads, the same registers lspci decodes, so a recorded dump (the
 * dump access method, lspci -F) and the live bus go through one path.
 *
 * libpci reports a fatal error through pacc->error, which must not return
 * and by default prints and exits.  A library must do neither: our handler
 * records the message and longjmps back to the guard around every libpci
 * call, which turns it into a negative errno.  The handler takes no context
 * argument, so the jump target and the message are thread-local: the one
 * piece of state outside the caller's objects. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pci/pci.h>
#include "probe.h"

#define SYSFS_PCI "/sys/bus/pci"
#define SYSFS_DEVICES SYSFS_PCI "/devices"

static _Thread_local jmp_buf *fatal_jump;
static _Thread_local char last_error[256];

const char *probe_last_error(void)
{
	return last_error;
}

static void set_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void set_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

static void libpci_error(char *msg, ...)
	__attribute__((noreturn, format(printf, 1, 2)));
static void libpci_error(char *msg, ...)
{
	va_list ap;
	va_start(ap, msg);
	vsnprintf(last_error, sizeof(last_error), msg, ap);
	va_end(ap);
	if (fatal_jump)
		longjmp(*fatal_jump, 1);
	abort();  /* every libpci call runs under a guard: cannot happen */
}

/* Warnings ("Bus 02 seen twice") and debugging: libpci carries on; so do
 * we, silently. */
static void libpci_quiet(char *msg, ...) __attribute__((format(printf, 1, 2)));
static void libpci_quiet(char *msg, ...)
{
	(void)msg;
}

/* ---- names for the CLI ---- */

const char *probe_kind_name(enum probe_kind kind)
{
	switch (kind) {
	case PROBE_HOST_BRIDGE: return "host bridge";
	case PROBE_PCI_BRIDGE:  return "PCI bridge";
	case PROBE_NTB:         return "NTB";
	default:                return "device";
	}
}

const char *probe_speed_name(int gen)
{
	static const char *const speed[] = { "2.5GT/s", "5GT/s", "8GT/s",
					     "16GT/s", "32GT/s", "64GT/s" };
	return gen >= 1 && gen <= 6 ? speed[gen - 1] : "unknown";
}

const char *probe_port_type_name(int type)
{
	switch (type) {
	case PCI_EXP_TYPE_ENDPOINT:    return "Endpoint";
	case PCI_EXP_TYPE_LEG_END:     return "Legacy Endpoint";
	case PCI_EXP_TYPE_ROOT_PORT:   return "Root Port";
	case PCI_EXP_TYPE_UPSTREAM:    return "Upstream Port";
	case PCI_EXP_TYPE_DOWNSTREAM:  return "Downstream Port";
	case PCI_EXP_TYPE_PCI_BRIDGE:  return "PCIe to PCI/PCI-X Bridge";
	case PCI_EXP_TYPE_PCIE_BRIDGE: return "PCI/PCI-X to PCIe Bridge";
	case PCI_EXP_TYPE_ROOT_INT_EP: return "Root Complex Integrated Endpoint";
	case PCI_EXP_TYPE_ROOT_EC:     return "Root Complex Event Collector";
	default:                       return "unknown";
	}
}

/* ---- non-transparent bridges ----
 *
 * The one table of the NTBs smq knows.  Where a vendor gives its switch
 * ports and its NT function the same device ID, the class tells them
 * apart (class_mask != 0).  Sources:
 *  - Intel: Linux drivers/ntb/hw/intel/ntb_hw_intel.h (PCI_DEVICE_ID_INTEL_
 *    NTB_*: JSF, SNB, IVT, HSX, BDX, SKX, ICX, GNR) and the Atom S1200 ID of
 *    pci.ids; the 21554/21555 non-transparent PCI-to-PCI bridge, pci.ids
 *    8086:b555.  (8086:0e08 is a Xeon E5 v2 root port in pci.ids, not an
 *    NTB, and is not listed.)
 *  - AMD and Hygon: drivers/ntb/hw/amd/ntb_hw_amd.c (amd_ntb_pci_tbl).
 *  - IDT: drivers/ntb/hw/idt/ntb_hw_idt.h (89HPES*NT* IDs, matched with
 *    class 0x0680 as its IDT_PCI_DEVICE_IDS does), and the older PES*NT*
 *    "Internal/External NTB" functions of pci.ids.
 *  - PLX/Broadcom: pci.ids 10b5:87b0/87b1 "PEX PCI Express Switch NT0/NT1
 *    Port Virtual Interface"; any other PLX function of class 0x0680 is an
 *    NT function too.
 *  - Microsemi/Microchip Switchtec: drivers/ntb/hw/mscc/ntb_hw_switchtec.c
 *    binds the functions of vendor 11f8 with class 0x068000 ("Other
 *    bridge"), as drivers/pci/switch/switchtec.c lists them.
 *  - QEMU ivshmem: hw/misc/ivshmem.c, 1af4:1110 (shared memory in BAR2).
 */
#define ANY_DEVICE (-1)

static const struct ntb_id {
	uint16_t vendor;
	int device;                 /* or ANY_DEVICE */
	uint32_t class, class_mask; /* class_mask 0: any class */
	const char *kind;
} ntb_ids[] = {
	{ 0x8086, 0xb555, 0, 0, "Intel 21554/21555" },
	{ 0x8086, 0x3725, 0, 0, "Intel Xeon C5500 NTB B2B" },
	{ 0x8086, 0x3726, 0, 0, "Intel Xeon C5500 NTB PS" },
	{ 0x8086, 0x3727, 0, 0, "Intel Xeon C5500 NTB SS" },
	{ 0x8086, 0x3c0d, 0, 0, "Intel Xeon E5 NTB B2B" },
	{ 0x8086, 0x3c0e, 0, 0, "Intel Xeon E5 NTB PS" },
	{ 0x8086, 0x3c0f, 0, 0, "Intel Xeon E5 NTB SS" },
	{ 0x8086, 0x0e0d, 0, 0, "Intel Xeon E5 v2 NTB B2B" },
	{ 0x8086, 0x0e0e, 0, 0, "Intel Xeon E5 v2 NTB PS" },
	{ 0x8086, 0x0e0f, 0, 0, "Intel Xeon E5 v2 NTB SS" },
	{ 0x8086, 0x2f0d, 0, 0, "Intel Xeon E5 v3 NTB B2B" },
	{ 0x8086, 0x2f0e, 0, 0, "Intel Xeon E5 v3 NTB PS" },
	{ 0x8086, 0x2f0f, 0, 0, "Intel Xeon E5 v3 NTB SS" },
	{ 0x8086, 0x6f0d, 0, 0, "Intel Xeon E5 v4 NTB B2B" },
	{ 0x8086, 0x6f0e, 0, 0, "Intel Xeon E5 v4 NTB PS" },
	{ 0x8086, 0x6f0f, 0, 0, "Intel Xeon E5 v4 NTB SS" },
	{ 0x8086, 0x201c, 0, 0, "Intel Skylake-SP NTB" },
	{ 0x8086, 0x347e, 0, 0, "Intel Ice Lake/SPR NTB" },
	{ 0x8086, 0x0db4, 0, 0, "Intel Granite Rapids NTB" },
	{ 0x8086, 0x0c4e, 0, 0, "Intel Atom S1200 NTB" },
	{ 0x1022, 0x145b, 0, 0, "AMD Zeppelin NTB" },
	{ 0x1022, 0x148b, 0, 0, "AMD Starship/Matisse NTB" },
	{ 0x1022, 0x14c0, 0, 0, "AMD NTB" },
	{ 0x1022, 0x14c3, 0, 0, "AMD NTB" },
	{ 0x1022, 0x155a, 0, 0, "AMD NTB" },
	{ 0x1d94, 0x145b, 0, 0, "Hygon NTB" },
	{ 0x111d, 0x8091, 0x068000, 0xffff00, "IDT 89HPES24NT6AG2 NT" },
	{ 0x111d, 0x808f, 0x068000, 0xffff00, "IDT 89HPES32NT8AG2 NT" },
	{ 0x111d, 0x8088, 0x068000, 0xffff00, "IDT 89HPES32NT8BG2 NT" },
	{ 0x111d, 0x8092, 0x068000, 0xffff00, "IDT 89HPES12NT12G2 NT" },
	{ 0x111d, 0x8090, 0x068000, 0xffff00, "IDT 89HPES16NT16G2 NT" },
	{ 0x111d, 0x808e, 0x068000, 0xffff00, "IDT 89HPES24NT24G2 NT" },
	{ 0x111d, 0x808c, 0x068000, 0xffff00, "IDT 89HPES32NT24AG2 NT" },
	{ 0x111d, 0x808a, 0x068000, 0xffff00, "IDT 89HPES32NT24BG2 NT" },
	{ 0x111d, 0x804a, 0, 0, "IDT PES8NT2 internal NTB" },
	{ 0x111d, 0x804b, 0, 0, "IDT PES8NT2 external NTB" },
	{ 0x111d, 0x804e, 0, 0, "IDT PES16NT2 internal NTB" },
	{ 0x111d, 0x804f, 0, 0, "IDT PES16NT2 external NTB" },
	{ 0x111d, 0x805a, 0, 0, "IDT PES12NT3 internal NTB" },
	{ 0x111d, 0x805b, 0, 0, "IDT PES12NT3 external NTB" },
	{ 0x111d, 0x805e, 0, 0, "IDT PES24NT3 internal NTB" },
	{ 0x111d, 0x805f, 0, 0, "IDT PES24NT3 external NTB" },
	{ 0x10b5, 0x87b0, 0, 0, "PLX NT0 virtual interface" },
	{ 0x10b5, 0x87b1, 0, 0, "PLX NT1 virtual interface" },
	{ 0x10b5, ANY_DEVICE, 0x068000, 0xffff00, "PLX NT function" },
	{ 0x11f8, ANY_DEVICE, 0x068000, 0xffffff, "Switchtec NT function" },
	{ 0x1af4, 0x1110, 0, 0, "QEMU ivshmem" },
};

static const struct ntb_id *ntb_lookup(uint16_t vendor, uint16_t device,
				       uint32_t class)
{
	for (size_t i = 0; i < sizeof(ntb_ids) / sizeof(ntb_ids[0]); i++) {
		const struct ntb_id *t = &ntb_ids[i];
		if (t->vendor == vendor &&
		    (t->device == ANY_DEVICE || t->device == device) &&
		    ((class ^ t->class) & t->class_mask) == 0)
			return t;
	}
	return NULL;
}

/* ---- filters ---- */

struct filters {
	struct pci_filter slot, id;
	bool use_slot, use_id;
};

static int parse_filters(const struct probe_filter *pf, struct filters *f)
{
	char buf[256];
	char *err;

	/* pci_filter_init ignores its access argument (pciutils 3.3 on) */
	pci_filter_init(NULL, &f->slot);
	pci_filter_init(NULL, &f->id);
	f->use_slot = f->use_id = false;
	if (!pf)
		return 0;
	if (pf->slot && *pf->slot) {
		snprintf(buf, sizeof(buf), "%s", pf->slot);
		if ((err = pci_filter_parse_slot(&f->slot, buf))) {
			set_error("-s %s: %s", pf->slot, err);
			return -EINVAL;
		}
		f->use_slot = true;
	}
	if (pf->id && *pf->id) {
		snprintf(buf, sizeof(buf), "%s", pf->id);
		if ((err = pci_filter_parse_id(&f->id, buf))) {
			set_error("-d %s: %s", pf->id, err);
			return -EINVAL;
		}
		f->use_id = true;
	}
	return 0;
}

int probe_filter_check(const struct probe_filter *filter)
{
	struct filters f;
	last_error[0] = 0;
	return parse_filters(filter, &f);
}

/* ---- decoding one device ---- */

struct scan {
	struct pci_access *pacc;
	struct filters filt;
	bool dump;
	struct probe_dev *dev;  /* parent holds the filter's match until
				 * keep_matches() */
	int n, cap;
	int fail;       /* what a fatal libpci error means now */
	bool no_hwdb;   /* udev has no hwdb file */
};

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
	d->use.candidate = d->kind == PROBE_NTB;
	if (!d->use.candidate)
		judge_not_candidate(d);
	else if (d->vendor == 0x1af4 && d->device == 0x1110)
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

void probe_advise(const struct probe_dev *d, struct probe_advice *a)
{
	const struct probe_use *u = &d->use;
	const char *bdf = a->bdf;
	bool held = u->access == PROBE_ACCESS_HELD ||
		    u->access == PROBE_ACCESS_UNKNOWN;

	memset(a, 0, sizeof(*a));
	snprintf(a->bdf, sizeof(a->bdf), "%04x:%02x:%02x.%d", d->domain & 0xffff,
		 d->bus & 0xff, d->dev & 0x1f, d->func & 7);
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

static void read_bars(struct pci_dev *d, unsigned known, bool dump,
		      struct probe_dev *out)
{
	int cnt = out->header_type == PCI_HEADER_TYPE_NORMAL ? 6
		: out->header_type == PCI_HEADER_TYPE_BRIDGE ? 2
		: out->header_type == PCI_HEADER_TYPE_CARDBUS ? 1 : 0;
	uint16_t cmd = pci_read_word(d, PCI_COMMAND);

	out->nbars = 0;
	for (int i = 0; i < cnt; i++) {
		uint64_t pos = d->base_addr[i];
		uint64_t len = (known & PCI_FILL_SIZES) ? d->size[i] : 0;
		uint64_t ioflg = (known & PCI_FILL_IO_FLAGS) ? d->flags[i] : 0;
		uint32_t flg = pci_read_long(d, PCI_BASE_ADDRESS_0 + 4 * i);
		struct probe_bar *b = &out->bars[out->nbars];
		uint64_t hw;

		if (flg == 0xffffffff)
			flg = 0;
		if (!pos && !flg && !len)
			continue;
		memset(b, 0, sizeof(*b));
		b->index = i;
		/* Given by the OS but not in config space (an SR-IOV VF):
		 * the low bits of pos carry the BAR's type bits. */
		if (pos && !flg) {
			b->is_virtual = true;
			flg = (uint32_t)pos & PCI_ADDR_FLAG_MASK;
			if (ioflg & PCI_IORESOURCE_IO)
				flg |= PCI_BASE_ADDRESS_SPACE_IO;
		}
		b->io = flg & PCI_BASE_ADDRESS_SPACE_IO;
		if (b->io) {
			hw = flg & PCI_BASE_ADDRESS_IO_MASK;
			b->addr = pos & PCI_ADDR_IO_MASK;
		} else {
			hw = flg & PCI_BASE_ADDRESS_MEM_MASK;
			b->addr = pos & PCI_ADDR_MEM_MASK;
			b->prefetch = flg & PCI_BASE_ADDRESS_MEM_PREFETCH;
			if ((flg & PCI_BASE_ADDRESS_MEM_TYPE_MASK) ==
			    PCI_BASE_ADDRESS_MEM_TYPE_64 && i < cnt - 1) {
				b->is64 = true;
				i++;
				if (!b->is_virtual)
					hw |= (uint64_t)pci_read_long(d,
						PCI_BASE_ADDRESS_0 + 4 * i) << 32;
			}
		}
		/* libpci leaves base_addr 0 where decoding is off and it read
		 * config space itself (the dump): the register says where. */
		if (!b->addr && !b->is_virtual)
			b->addr = hw;
		b->size = len;
		b->size_known = (known & PCI_FILL_SIZES) && !dump;
		b->disabled = !b->is_virtual &&
			!(cmd & (b->io ? PCI_COMMAND_IO : PCI_COMMAND_MEMORY));
		probe_bar_judge(b, dump);
		out->nbars++;
	}
}

/* A CardBus bridge's windows (header type 2), as lspci decodes them: memory
 * in 4 KiB units, each window prefetchable as the bridge control says; I/O
 * in 4-byte units, 32 bits wide when the base says so, else 16. */
static void read_cardbus(struct pci_dev *d, struct probe_dev *out)
{
	uint16_t cmd = pci_read_word(d, PCI_COMMAND);
	uint16_t ctl = pci_read_word(d, PCI_CB_BRIDGE_CONTROL);

	for (int i = 0; i < 2; i++) {
		struct probe_window *m = &out->cb_mem[i], *io = &out->cb_io[i];
		uint32_t base = pci_read_long(d, PCI_CB_MEMORY_BASE_0 + 8 * i);
		uint32_t limit = pci_read_long(d, PCI_CB_MEMORY_LIMIT_0 + 8 * i);

		m->base = base & ~0xfffu;
		m->limit = (limit & ~0xfffu) | 0xfff;
		m->prefetch = ctl & (PCI_CB_BRIDGE_CTL_PREFETCH_MEM0 << i);
		m->disabled = !(cmd & PCI_COMMAND_MEMORY);

		base = pci_read_long(d, PCI_CB_IO_BASE_0 + 8 * i);
		limit = pci_read_long(d, PCI_CB_IO_LIMIT_0 + 8 * i);
		io->io32 = (base & PCI_IO_RANGE_TYPE_MASK) == PCI_IO_RANGE_TYPE_32;
		if (!io->io32) {
			base &= 0xffff;
			limit &= 0xffff;
		}
		io->base = base & PCI_CB_IO_RANGE_MASK;
		io->limit = (limit & PCI_CB_IO_RANGE_MASK) | 3;
		io->disabled = !(cmd & PCI_COMMAND_IO);
	}
}

static void read_bridge(struct pci_dev *d, struct probe_dev *out)
{
	/* the bus numbers sit at the same offsets in both layouts */
	out->primary = pci_read_byte(d, PCI_PRIMARY_BUS);
	out->secondary = pci_read_byte(d, PCI_SECONDARY_BUS);
	out->subordinate = pci_read_byte(d, PCI_SUBORDINATE_BUS);
	if (out->header_type == PCI_HEADER_TYPE_CARDBUS) {
		read_cardbus(d, out);
		return;
	}
	uint16_t mb = pci_read_word(d, PCI_MEMORY_BASE);
	uint16_t ml = pci_read_word(d, PCI_MEMORY_LIMIT);
	out->mem_base = (uint64_t)(mb & PCI_MEMORY_RANGE_MASK) << 16;
	out->mem_limit = ((uint64_t)(ml & PCI_MEMORY_RANGE_MASK) << 16) | 0xfffff;

	uint16_t pb = pci_read_word(d, PCI_PREF_MEMORY_BASE);
	uint16_t pl = pci_read_word(d, PCI_PREF_MEMORY_LIMIT);
	out->pref64 = (pb & PCI_PREF_RANGE_TYPE_MASK) == PCI_PREF_RANGE_TYPE_64;
	out->pref_base = (uint64_t)(pb & PCI_PREF_RANGE_MASK) << 16;
	out->pref_limit = ((uint64_t)(pl & PCI_PREF_RANGE_MASK) << 16) | 0xfffff;
	if (out->pref64) {
		out->pref_base |= (uint64_t)pci_read_long(d, PCI_PREF_BASE_UPPER32) << 32;
		out->pref_limit |= (uint64_t)pci_read_long(d, PCI_PREF_LIMIT_UPPER32) << 32;
	}
}

/* Where the MSI-X table and PBA are: a BAR that holds them is registers. */
static void read_msix(struct pci_dev *d, struct probe_dev *out)
{
	struct pci_cap *cap = pci_find_cap(d, PCI_CAP_ID_MSIX, PCI_CAP_NORMAL);
	if (!cap)
		return;
	out->msix = true;
	out->msix_table_bar = (int)(pci_read_long(d, (int)cap->addr +
				    PCI_MSIX_TABLE) & PCI_MSIX_BIR);
	out->msix_pba_bar = (int)(pci_read_long(d, (int)cap->addr +
				  PCI_MSIX_PBA) & PCI_MSIX_BIR);
}

static void read_express(struct pci_dev *d, struct probe_link *l)
{
	struct pci_cap *cap = pci_find_cap(d, PCI_CAP_ID_EXP, PCI_CAP_NORMAL);
	if (!cap)
		return;
	int where = (int)cap->addr;
	uint16_t flags = pci_read_word(d, where + PCI_EXP_FLAGS);
	uint32_t devcap = pci_read_long(d, where + PCI_EXP_DEVCAP);
	uint16_t devctl = pci_read_word(d, where + PCI_EXP_DEVCTL);

	l->present = true;
	l->port_type = (flags & PCI_EXP_FLAGS_TYPE) >> 4;
	l->mps_supported = 128 << (devcap & PCI_EXP_DEVCAP_PAYLOAD);
	l->mps = 128 << ((devctl & PCI_EXP_DEVCTL_PAYLOAD) >> 5);
	l->mrrs = 128 << ((devctl & PCI_EXP_DEVCTL_READRQ) >> 12);
	/* Integrated endpoints and event collectors have no link (lspci
	 * shows none for them either). */
	l->has_link = l->port_type != PCI_EXP_TYPE_ROOT_INT_EP &&
		      l->port_type != PCI_EXP_TYPE_ROOT_EC;
	if (!l->has_link)
		return;
	uint32_t lnkcap = pci_read_long(d, where + PCI_EXP_LNKCAP);
	uint16_t lnksta = pci_read_word(d, where + PCI_EXP_LNKSTA);
	l->cap_speed = lnkcap & PCI_EXP_LNKCAP_SPEED;
	l->cap_width = (lnkcap & PCI_EXP_LNKCAP_WIDTH) >> 4;
	l->sta_speed = lnksta & PCI_EXP_LNKSTA_SPEED;
	l->sta_width = (lnksta & PCI_EXP_LNKSTA_WIDTH) >> 4;
	/* As lspci: a port that can do more than what is attached to it is
	 * not downgraded; the device at the other end says so if it is. */
	bool port = l->port_type == PCI_EXP_TYPE_ROOT_PORT ||
		    l->port_type == PCI_EXP_TYPE_DOWNSTREAM ||
		    l->port_type == PCI_EXP_TYPE_PCIE_BRIDGE;
	l->downgraded = !port && (l->sta_speed < l->cap_speed ||
				  l->sta_width < l->cap_width);
}

/* A name from pci.ids (or udev's hwdb), or the number when unknown. */
static void lookup(const struct scan *s, char *dst, size_t size, int what,
		   int a, int b)
{
	char buf[1024];  /* libpci writes an error text into a short one */
	int flags = what | (s->no_hwdb ? PCI_LOOKUP_NO_HWDB : 0);
	const char *name = what == PCI_LOOKUP_DEVICE
		? pci_lookup_name(s->pacc, buf, sizeof(buf), flags, a, b)
		: pci_lookup_name(s->pacc, buf, sizeof(buf), flags, a);

	snprintf(dst, size, "%s", name ? name : "");
}

/* Nothing known yet: no bus numbers, every window closed, no MSI-X. */
static void clear_dev(struct probe_dev *out)
{
	memset(out, 0, sizeof(*out));
	out->primary = out->secondary = out->subordinate = -1;
	out->mem_base = out->pref_base = 1;
	for (int i = 0; i < 2; i++)
		out->cb_mem[i].base = out->cb_io[i].base = 1;
	out->msix_table_bar = out->msix_pba_bar = -1;
	out->parent = -1;
}

static void read_dev(struct scan *s, struct pci_dev *d, struct probe_dev *out)
{
	unsigned known = (unsigned)pci_fill_info(d, PCI_FILL_IDENT |
		PCI_FILL_CLASS | PCI_FILL_CLASS_EXT | PCI_FILL_SUBSYS |
		PCI_FILL_BASES | PCI_FILL_SIZES | PCI_FILL_IO_FLAGS |
		PCI_FILL_NUMA_NODE | PCI_FILL_DRIVER | PCI_FILL_IOMMU_GROUP);
	uint8_t rest[192];

	clear_dev(out);
	out->domain = d->domain;
	out->bus = d->bus;
	out->dev = d->dev;
	out->func = d->func;
	out->vendor = d->vendor_id;
	out->device = d->device_id;
	out->subvendor = d->subsys_vendor_id;
	out->subdevice = d->subsys_id;
	out->class = (uint32_t)d->device_class << 8 | d->prog_if;
	out->revision = d->rev_id;
	out->header_type = pci_read_byte(d, PCI_HEADER_TYPE) & 0x7f;
	out->numa_node = (known & PCI_FILL_NUMA_NODE) ? d->numa_node : -1;
	if (known & PCI_FILL_DRIVER) {
		const char *drv = pci_get_string_property(d, PCI_FILL_DRIVER);
		snprintf(out->driver, sizeof(out->driver), "%s", drv ? drv : "");
	}
	if (known & PCI_FILL_IOMMU_GROUP) {
		const char *g = pci_get_string_property(d, PCI_FILL_IOMMU_GROUP);
		snprintf(out->iommu_group, sizeof(out->iommu_group), "%s",
			 g ? g : "");
	}
	lookup(s, out->vendor_name, sizeof(out->vendor_name),
	       PCI_LOOKUP_VENDOR, out->vendor, 0);
	lookup(s, out->device_name, sizeof(out->device_name),
	       PCI_LOOKUP_DEVICE, out->vendor, out->device);
	lookup(s, out->class_name, sizeof(out->class_name),
	       PCI_LOOKUP_CLASS, (int)(out->class >> 8), 0);

	read_bars(d, known, s->dump, out);
	if (out->header_type == PCI_HEADER_TYPE_BRIDGE ||
	    out->header_type == PCI_HEADER_TYPE_CARDBUS)
		read_bridge(d, out);

	/* Beyond the first 64 bytes config space is root's only (sysfs), and
	 * an lspci -x dump holds just those: no capabilities then. */
	out->config_limited = !pci_read_block(d, 64, rest, sizeof(rest));
	if (!out->config_limited) {
		pci_fill_info(d, PCI_FILL_CAPS);
		read_express(d, &out->link);
		read_msix(d, out);
	}

	const struct ntb_id *ntb = ntb_lookup(out->vendor, out->device,
					      out->class);
	if (ntb) {
		out->kind = PROBE_NTB;
		snprintf(out->ntb_kind, sizeof(out->ntb_kind), "%s", ntb->kind);
	} else if (out->class >> 8 == PCI_CLASS_BRIDGE_HOST)
		out->kind = PROBE_HOST_BRIDGE;
	else if (out->header_type == PCI_HEADER_TYPE_BRIDGE ||
		 out->header_type == PCI_HEADER_TYPE_CARDBUS)
		out->kind = PROBE_PCI_BRIDGE;
	else
		out->kind = PROBE_DEVICE;
	probe_judge_use(out, s->dump);
}

static int by_address(const void *a, const void *b)
{
	const struct probe_dev *x = a, *y = b;
	if (x->domain != y->domain)
		return x->domain < y->domain ? -1 : 1;
	if (x->bus != y->bus)
		return x->bus < y->bus ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return (x->func > y->func) - (x->func < y->func);
}

/* All libpci work; runs under the guard of probe_scan. */
static int scan_bus(struct scan *s, const char *dump)
{
	s->pacc = pci_alloc();
	if (!s->pacc) {
		set_error("out of memory");
		return -ENOMEM;
	}
	s->pacc->error = libpci_error;
	s->pacc->warning = libpci_quiet;
	s->pacc->debug = libpci_quiet;
	/* Without a hwdb file libpci (3.9) opens a udev context for every ID
	 * pci.ids lacks and never frees it; the hwdb has nothing to add then. */
	s->no_hwdb = access("/etc/udev/hwdb.bin", R_OK) &&
		     access("/usr/lib/udev/hwdb.bin", R_OK) &&
		     access("/lib/udev/hwdb.bin", R_OK);
	if (dump) {
		s->pacc->method = PCI_ACCESS_DUMP;
		if (pci_set_param(s->pacc, (char *)"dump.name", (char *)dump)) {
			set_error("this libpci has no dump access method");
			return -ENOTSUP;
		}
	} else
		s->pacc->method = PCI_ACCESS_SYS_BUS_PCI;
	/* the dump method parses the file in pci_init: its errors are the
	 * file's ("dump: Malformed line") */
	s->fail = dump ? -EINVAL : -EIO;
	pci_init(s->pacc);
	s->fail = -EIO;
	pci_scan_bus(s->pacc);

	for (struct pci_dev *d = s->pacc->devices; d; d = d->next) {
		if (s->n == s->cap) {
			int cap = s->cap ? 2 * s->cap : 64;
			struct probe_dev *nd = realloc(s->dev, (size_t)cap * sizeof(*nd));
			if (!nd) {
				set_error("out of memory");
				return -ENOMEM;
			}
			s->dev = nd;
			s->cap = cap;
		}
		read_dev(s, d, &s->dev[s->n]);
		/* the match travels with the device through the sort */
		s->dev[s->n].parent =
			(!s->filt.use_slot || pci_filter_match(&s->filt.slot, d)) &&
			(!s->filt.use_id || pci_filter_match(&s->filt.id, d));
		s->n++;
	}
	return 0;
}

/* The bridge whose secondary bus a device sits on. */
static int find_parent(const struct probe_dev *dev, int n, int i)
{
	for (int j = 0; j < n; j++) {
		const struct probe_dev *b = &dev[j];
		if (j != i && (b->header_type == PCI_HEADER_TYPE_BRIDGE ||
			       b->header_type == PCI_HEADER_TYPE_CARDBUS) &&
		    b->domain == dev[i].domain && b->secondary == dev[i].bus &&
		    b->secondary > b->bus)
			return j;
	}
	return -1;
}

/* Sorts the devices as lspci does, finds each one's bridge among all of
 * them, and hands the matching ones to list with parents among those. */
static int keep_matches(struct scan *s, struct probe_list *list)
{
	int *newidx = malloc(((size_t)s->n + 1) * sizeof(*newidx));
	int *parent = malloc(((size_t)s->n + 1) * sizeof(*parent));
	int m = 0;

	if (!newidx || !parent) {
		free(newidx);
		free(parent);
		set_error("out of memory");
		return -ENOMEM;
	}
	if (s->n)
		qsort(s->dev, (size_t)s->n, sizeof(*s->dev), by_address);
	for (int i = 0; i < s->n; i++) {
		newidx[i] = s->dev[i].parent ? m++ : -1;  /* the match flag */
		parent[i] = find_parent(s->dev, s->n, i);
	}
	for (int i = 0, k = 0; i < s->n; i++) {
		if (newidx[i] < 0)
			continue;
		s->dev[k] = s->dev[i];
		s->dev[k].parent = parent[i] >= 0 ? newidx[parent[i]] : -1;
		k++;
	}
	free(newidx);
	free(parent);
	list->scanned = s->n;
	list->n = m;
	if (m) {
		list->dev = s->dev;
		s->dev = NULL;
	}
	return 0;
}

static void cleanup_pacc(struct pci_access *pacc)
{
	jmp_buf jb;
	jmp_buf *outer = fatal_jump;

	if (!setjmp(jb)) {
		fatal_jump = &jb;
		pci_cleanup(pacc);
	}
	fatal_jump = outer;
}

int probe_scan(struct probe_list *list, const struct probe_filter *filter,
	       const char *dump)
{
	struct scan *s;
	jmp_buf jb;
	jmp_buf *outer = fatal_jump;
	int err;

	memset(list, 0, sizeof(*list));
	list->from_dump = dump != NULL;
	last_error[0] = 0;
	s = calloc(1, sizeof(*s));
	if (!s) {
		set_error("out of memory");
		return -ENOMEM;
	}
	s->dump = dump != NULL;
	err = parse_filters(filter, &s->filt);
	if (err)
		goto out;
	if (dump) {
		/* say why the file cannot be read with errno, not libpci */
		FILE *f = fopen(dump, "r");
		if (!f) {
			err = -errno;
			set_error("%s", strerror(errno));
			goto out;
		}
		fclose(f);
	} else if (access(SYSFS_PCI, F_OK)) {
		set_error("%s is missing", SYSFS_PCI);
		err = -ENODEV;
		goto out;
	}

	if (setjmp(jb)) {
		err = s->fail;
		/* "dump: Malformed line": the caller names the file */
		if (dump && !strncmp(last_error, "dump: ", 6))
			memmove(last_error, last_error + 6,
				strlen(last_error + 6) + 1);
		goto out;
	}
	fatal_jump = &jb;
	err = scan_bus(s, dump);
out:
	fatal_jump = outer;
	if (s->pacc)
		cleanup_pacc(s->pacc);
	if (!err)
		err = keep_matches(s, list);
	if (err)
		list->n = list->scanned = 0;
	free(s->dev);
	free(s);
	return err;
}

void probe_free(struct probe_list *list)
{
	if (!list)
		return;
	free(list->dev);
	list->dev = NULL;
	list->n = 0;
}
