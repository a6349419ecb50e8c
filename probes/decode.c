/* probes: one device's config space decoded from what libpci reads, the
 * same registers lspci decodes (BARs, bridge and CardBus windows, MSI-X,
 * the PCI Express capability and link), the names it is shown with, and
 * whether it is a non-transparent bridge smq knows. */
#include <stdio.h>
#include <string.h>
#include <pci/pci.h>
#include "probe_int.h"

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

/* ---- decoding one device ---- */

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

/* The CXL DVSECs: the offsets are from the capability's start (CXL 2.0
 * 8.1.3, 8.1.8), as pciutils' header.h names them. */
static void read_cxl(struct pci_dev *d, struct probe_cxl *x)
{
	for (struct pci_cap *c = d->first_cap; c; c = c->next) {
		if (c->type != PCI_CAP_EXTENDED || c->id != PCI_EXT_CAP_ID_DVSEC)
			continue;
		int at = (int)c->addr;
		if (pci_read_word(d, at + PCI_DVSEC_HEADER1) !=
		    PCI_DVSEC_VENDOR_ID_CXL)
			continue;
		x->present = true;
		uint16_t id = pci_read_word(d, at + PCI_DVSEC_HEADER2);
		/* both DVSECs keep their capability at 0x0a, control at
		 * 0x0c and status at 0x0e */
		uint16_t cap = pci_read_word(d, at + PCI_CXL_DEV_CAP);
		uint16_t ctl = pci_read_word(d, at + PCI_CXL_DEV_CTRL);
		uint16_t sta = pci_read_word(d, at + PCI_CXL_FB_PORT_STATUS);
		switch (id) {
		case 0:         /* PCIe DVSEC for CXL devices */
			x->device = true;
			x->cap_cache = cap & PCI_CXL_DEV_CAP_CACHE;
			x->cap_io = cap & PCI_CXL_DEV_CAP_IO;
			x->cap_mem = cap & PCI_CXL_DEV_CAP_MEM;
			x->mem_hwinit = cap & PCI_CXL_DEV_CAP_MEM_HWINIT;
			x->hdm_count = PCI_CXL_DEV_CAP_HDM_CNT(cap);
			x->ctl_cache = ctl & PCI_CXL_DEV_CTRL_CACHE;
			x->ctl_io = ctl & PCI_CXL_DEV_CTRL_IO;
			x->ctl_mem = ctl & PCI_CXL_DEV_CTRL_MEM;
			break;
		case 3:         /* CXL extensions DVSEC for ports */
			x->port = true;
			break;
		case 7:         /* Flex Bus port: the link's protocols */
			x->flexbus = true;
			x->fb_cap_cache = cap & PCI_CXL_FB_CAP_CACHE;
			x->fb_cap_io = cap & PCI_CXL_FB_CAP_IO;
			x->fb_cap_mem = cap & PCI_CXL_FB_CAP_MEM;
			x->fb_cap_68b = cap & PCI_CXL_FB_CAP_68B_FLIT;
			x->fb_cap_mld = cap & PCI_CXL_FB_CAP_MULT_LOG_DEV;
			x->fb_sta_cache = sta & PCI_CXL_FB_STAT_CACHE;
			x->fb_sta_io = sta & PCI_CXL_FB_STAT_IO;
			x->fb_sta_mem = sta & PCI_CXL_FB_STAT_MEM;
			x->fb_sta_68b = sta & PCI_CXL_FB_STAT_68B_FLIT;
			x->fb_sta_mld = sta & PCI_CXL_FB_STAT_MULT_LOG_DEV;
			break;
		}
	}
	/* class 0502: CXL memory; what smq can make a window of */
	x->memory = x->device && x->cap_mem;
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

void probe_read_dev(struct scan *s, struct pci_dev *d, struct probe_dev *out)
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
		pci_fill_info(d, PCI_FILL_CAPS | PCI_FILL_EXT_CAPS);
		read_express(d, &out->link);
		read_msix(d, out);
		read_cxl(d, &out->cxl);
		out->cxl.memory &= out->class >> 8 == 0x0502;
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
