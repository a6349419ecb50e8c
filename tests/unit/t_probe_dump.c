/* probes on recorded config space (tests/data/pci-dumps/, lspci -x/-xxx/-xxxx
 * format, built by hand for what this machine lacks): bridges with bus
 * numbers and windows, NTBs told apart by ID and class, 64-bit
 * prefetchable BARs, a downgraded link, MPS and MRRS, the -s and -d
 * filters, a 64-byte dump, a malformed one; and the window rules on BARs
 * of every kind.  Every decoded field is compared with what the bytes
 * say.  With the dump method libpci reads config space only: BAR sizes,
 * NUMA node and driver are unknown (size 0, "size unknown (dump)"). */
#include <limits.h>
#include <stdbool.h>
#include "testlib.h"
#include "probe.h"

/* the least count of checks a run makes (135 as root here; fewer
 * where a part needs root or a device) */
TEST_FLOOR(110);

#define EQ(got, want) do { long long g_ = (long long)(got), w_ = (long long)(want); \
		if (g_ != w_) FAIL("%s = %lld (%#llx), expected %lld (%#llx)", #got, \
				   g_, g_, w_, w_); } while (0)
#define EQS(got, want) do { const char *g_ = (got), *w_ = (want); \
		if (strcmp(g_, w_)) FAIL("%s = \"%s\", expected \"%s\"", #got, g_, w_); \
	} while (0)

static char dumps[PATH_MAX + 64];

/* tests/data/pci-dumps beside this source: from the repository root (make
 * check), or from the binary in B/tests/. */
static void find_dumps(void)
{
	char exe[PATH_MAX];
	const char *env = getenv("PCI_DUMPS");
	ssize_t n;

	if (env) {
		snprintf(dumps, sizeof(dumps), "%s", env);
		return;
	}
	snprintf(dumps, sizeof(dumps), "tests/data/pci-dumps");
	if (!access(dumps, R_OK))
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			if (snprintf(dumps, sizeof(dumps), "%s/../../tests/data/pci-dumps",
				     exe) < (int)sizeof(dumps) && !access(dumps, R_OK))
				return;
		}
	}
	printf("no tests/data/pci-dumps found (set PCI_DUMPS)\n");
	exit(SKIP);
}

static const char *dump(const char *name)
{
	static char path[PATH_MAX + 128];
	if (snprintf(path, sizeof(path), "%s/%s", dumps, name) >= (int)sizeof(path))
		FAIL("path too long: %s/%s", dumps, name);
	return path;
}

static struct probe_list scan(const char *file, const char *slot,
			      const char *id)
{
	struct probe_list l;
	struct probe_filter f = { slot, id };
	int err = probe_scan(&l, &f, dump(file));
	if (err)
		FAIL("probe_scan(%s, -s %s, -d %s) = %d (%s): %s", file,
		     slot ? slot : "-", id ? id : "-", err, strerror(-err),
		     probe_last_error());
	CHECK(l.from_dump);
	return l;
}

static const struct probe_dev *at(const struct probe_list *l, int i, int dom,
				  int bus, int dev, int fn)
{
	if (i >= l->n)
		FAIL("device %d of %d asked for", i, l->n);
	const struct probe_dev *d = &l->dev[i];
	if (d->domain != dom || d->bus != bus || d->dev != dev || d->func != fn)
		FAIL("device %d is %04x:%02x:%02x.%d, expected %04x:%02x:%02x.%d",
		     i, d->domain, d->bus, d->dev, d->func, dom, bus, dev, fn);
	/* nothing a dump cannot know is made up */
	EQ(d->numa_node, -1);
	EQS(d->driver, "");
	return d;
}

static void ids(const struct probe_dev *d, unsigned vendor, unsigned device,
		uint32_t class, unsigned rev, unsigned sv, unsigned sd,
		int header_type)
{
	EQ(d->vendor, vendor);
	EQ(d->device, device);
	EQ(d->class, class);
	EQ(d->revision, rev);
	EQ(d->subvendor, sv);
	EQ(d->subdevice, sd);
	EQ(d->header_type, header_type);
	/* names come from pci.ids (or hwdb); without them, from numbers */
	CHECK(d->vendor_name[0] && d->device_name[0] && d->class_name[0]);
}

static void kind(const struct probe_dev *d, enum probe_kind k, const char *ntb)
{
	EQS(probe_kind_name(d->kind), probe_kind_name(k));
	EQS(d->ntb_kind, ntb);
}

static void bridge(const struct probe_dev *d, int pri, int sec, int sub,
		   uint64_t mb, uint64_t ml, uint64_t pb, uint64_t pl, bool p64)
{
	EQ(d->primary, pri);
	EQ(d->secondary, sec);
	EQ(d->subordinate, sub);
	EQ(d->mem_base, mb);
	EQ(d->mem_limit, ml);
	EQ(d->pref_base, pb);
	EQ(d->pref_limit, pl);
	EQ(d->pref64, p64);
}

static bool closed(const struct probe_window *w)
{
	return w->limit < w->base;
}

/* A CardBus bridge's windows hold nothing unless it is one. */
static void no_cardbus(const struct probe_dev *d)
{
	for (int i = 0; i < 2; i++)
		CHECK(closed(&d->cb_mem[i]) && closed(&d->cb_io[i]));
}

static void not_bridge(const struct probe_dev *d)
{
	EQ(d->primary, -1);
	EQ(d->secondary, -1);
	EQ(d->subordinate, -1);
	CHECK(d->mem_limit < d->mem_base && d->pref_limit < d->pref_base);
	no_cardbus(d);
}

enum { MEM32, MEM64, IO };

/* A BAR as the dump gives it: no size, so never a window. */
static void bar(const struct probe_dev *d, int i, int index, int type,
		bool pref, bool disabled, uint64_t addr, const char *why)
{
	if (i >= d->nbars)
		FAIL("%02x:%02x.%d: BAR slot %d of %d asked for", d->bus, d->dev,
		     d->func, i, d->nbars);
	const struct probe_bar *b = &d->bars[i];
	EQ(b->index, index);
	EQ(b->addr, addr);
	EQ(b->io, type == IO);
	EQ(b->is64, type == MEM64);
	EQ(b->prefetch, pref);
	EQ(b->disabled, disabled);
	EQ(b->is_virtual, false);
	EQ(b->size, 0);
	EQ(b->size_known, false);
	EQ(b->window_ok, false);
	EQ(b->preferred, false);
	EQS(b->why, why);
}

static void link_of(const struct probe_dev *d, int port_type, bool has_link,
		    int cs, int cw, int ss, int sw, bool downgraded,
		    int mps_sup, int mps, int mrrs)
{
	const struct probe_link *k = &d->link;
	EQ(k->present, true);
	EQ(k->port_type, port_type);
	EQ(k->has_link, has_link);
	EQ(k->cap_speed, cs);
	EQ(k->cap_width, cw);
	EQ(k->sta_speed, ss);
	EQ(k->sta_width, sw);
	EQ(k->downgraded, downgraded);
	EQ(k->mps_supported, mps_sup);
	EQ(k->mps, mps);
	EQ(k->mrrs, mrrs);
}

static void no_link(const struct probe_dev *d)
{
	EQ(d->link.present, false);
	EQ(d->link.has_link, false);
	EQ(d->link.downgraded, false);
}

static void test_ntb_bridges(void)
{
	struct probe_list l = scan("ntb-bridges.txt", NULL, NULL);
	const struct probe_dev *d;
	const char *nosize = "size unknown (dump)";

	EQ(l.n, 7);
	EQ(l.scanned, 7);

	d = at(&l, 0, 0, 0x00, 0x00, 0);
	ids(d, 0x8086, 0x0e00, 0x060000, 4, 0, 0, 0);
	kind(d, PROBE_HOST_BRIDGE, "");
	EQ(d->nbars, 0);
	EQ(d->parent, -1);
	EQ(d->config_limited, false);
	no_link(d);
	not_bridge(d);
	/* the vendor is named (pci.ids) or numbered */
	CHECK(!strcmp(d->vendor_name, "Intel Corporation") ||
	      !strcmp(d->vendor_name, "8086"));

	/* a PCIe root port: windows behind it, 64-bit prefetchable; trained
	 * x8 of x16 is not "downgraded" on a port (as lspci) */
	d = at(&l, 1, 0, 0x00, 0x01, 0);
	ids(d, 0x8086, 0x0e02, 0x060400, 4, 0, 0, 1);
	kind(d, PROBE_PCI_BRIDGE, "");
	bridge(d, 0, 1, 1, 0xfe800000, 0xfe9fffff, 0x3800000000ull,
	       0x3807ffffffull, true);
	EQ(d->nbars, 0);
	EQ(d->parent, -1);
	link_of(d, 4, true, 3, 16, 3, 8, false, 256, 256, 128);

	/* decoding off: libpci leaves base_addr 0, the register says where */
	d = at(&l, 2, 0, 0x00, 0x02, 0);
	ids(d, 0x102b, 0x0522, 0x030000, 2, 0x103c, 0x3381, 0);
	kind(d, PROBE_DEVICE, "");
	EQ(d->nbars, 2);
	bar(d, 0, 0, MEM32, true, true, 0xfd000000,
	    "memory decoding off (command register)");
	bar(d, 1, 1, MEM32, false, true, 0xfe000000,
	    "memory decoding off (command register)");
	no_link(d);
	not_bridge(d);

	d = at(&l, 3, 0, 0x00, 0x1c, 0);
	ids(d, 0x8086, 0x8c10, 0x060400, 0xd5, 0, 0, 1);
	kind(d, PROBE_PCI_BRIDGE, "");
	bridge(d, 0, 2, 2, 0xfea00000, 0xfeafffff, 0x3900000000ull,
	       0x390fffffffull, true);
	link_of(d, 4, true, 2, 1, 2, 1, false, 128, 128, 128);

	/* a conventional PCI bridge with both windows closed */
	d = at(&l, 4, 0, 0x00, 0x1e, 0);
	ids(d, 0x8086, 0x244e, 0x060401, 0xd5, 0, 0, 1);
	kind(d, PROBE_PCI_BRIDGE, "");
	bridge(d, 0, 3, 3, 0xfff00000, 0xfffff, 0xfff00000, 0xfffff, true);
	CHECK(d->mem_limit < d->mem_base);
	no_link(d);

	/* PLX NT function: 64-bit prefetchable BARs, trained Gen1 x4 of
	 * Gen3 x8, MPS 256 of 512, MRRS 512 */
	d = at(&l, 5, 0, 0x01, 0x00, 0);
	ids(d, 0x10b5, 0x87b0, 0x068000, 0xca, 0x10b5, 0x87b0, 0);
	kind(d, PROBE_NTB, "PLX NT0 virtual interface");
	EQ(d->parent, 1);
	EQ(d->nbars, 3);
	bar(d, 0, 0, MEM32, false, false, 0xfe800000, nosize);
	bar(d, 1, 2, MEM64, true, false, 0x3800000000ull, nosize);
	bar(d, 2, 4, MEM64, true, false, 0x3804000000ull, nosize);
	link_of(d, 0, true, 3, 8, 1, 4, true, 512, 256, 512);
	not_bridge(d);

	/* Intel 21554/21555 (conventional PCI: no capabilities), I/O off */
	d = at(&l, 6, 0, 0x02, 0x00, 0);
	ids(d, 0x8086, 0xb555, 0x068000, 1, 0x8086, 0xb555, 0);
	kind(d, PROBE_NTB, "Intel 21554/21555");
	EQ(d->parent, 3);
	EQ(d->nbars, 4);
	bar(d, 0, 0, MEM32, false, false, 0xfea00000, nosize);
	bar(d, 1, 1, IO, false, true, 0xe000, "I/O space, not memory");
	bar(d, 2, 2, MEM64, true, false, 0x3900000000ull, nosize);
	bar(d, 3, 4, MEM32, false, false, 0xfea10000, nosize);
	no_link(d);
	probe_free(&l);
	EQ(l.n, 0);
	CHECK(l.dev == NULL);
}

static void window(const struct probe_window *w, uint64_t base,
		   uint64_t limit, bool prefetch, bool io32)
{
	EQ(w->base, base);
	EQ(w->limit, limit);
	EQ(w->prefetch, prefetch);
	EQ(w->io32, io32);
	EQ(w->disabled, false);
}

/* CardBus bridges (PCI1520, two sockets as two functions) behind a
 * subtractive PCI bridge, a card's NIC behind the first: the windows are
 * of the CardBus layout (memory in 4 KiB units, prefetchable by bridge
 * control; I/O of 32 or 16 bits), never read as a PCI bridge's. */
static void test_cardbus(void)
{
	struct probe_list l = scan("cardbus.txt", NULL, NULL);
	const struct probe_dev *d;
	const char *nosize = "size unknown (dump)";

	EQ(l.n, 5);
	d = at(&l, 1, 0, 0x00, 0x1e, 0);
	ids(d, 0x8086, 0x2448, 0x060401, 0xe3, 0, 0, 1);
	bridge(d, 0, 2, 0x0a, 0xe2000000, 0xe2ffffff, 0xe4000000, 0xe7ffffff,
	       false);
	no_cardbus(d);

	/* both memory windows open, the first prefetchable; an I/O window
	 * of 32 bits and one of 16 (the upper half of its registers, 0001,
	 * means nothing) */
	d = at(&l, 2, 0, 0x02, 0x06, 0);
	ids(d, 0x104c, 0xac55, 0x060700, 1, 0x1028, 0x0233, 2);
	kind(d, PROBE_PCI_BRIDGE, "");
	EQ(d->primary, 2);
	EQ(d->secondary, 3);
	EQ(d->subordinate, 6);
	EQ(d->parent, 1);
	window(&d->cb_mem[0], 0xe4000000, 0xe7ffffff, true, false);
	window(&d->cb_mem[1], 0xe2400000, 0xe27fffff, false, false);
	window(&d->cb_io[0], 0x4000, 0x40ff, false, true);
	window(&d->cb_io[1], 0x4800, 0x48ff, false, false);
	/* the PCI-to-PCI windows are not this layout's: they hold nothing */
	CHECK(d->mem_limit < d->mem_base && d->pref_limit < d->pref_base);
	EQ(d->nbars, 1);
	bar(d, 0, 0, MEM32, false, false, 0xe2001000, nosize);
	EQ(d->config_limited, false);
	EQ(d->use.candidate, false);
	EQS(d->use.what, "bridge");

	/* the second socket: every window closed, base above limit */
	d = at(&l, 3, 0, 0x02, 0x06, 1);
	EQ(d->secondary, 7);
	EQ(d->subordinate, 0x0a);
	EQ(d->parent, 1);
	for (int i = 0; i < 2; i++) {
		CHECK(closed(&d->cb_mem[i]) && closed(&d->cb_io[i]));
		EQ(d->cb_mem[i].prefetch, false);
	}

	/* the card: on the CardBus bridge's bus */
	d = at(&l, 4, 0, 0x03, 0x00, 0);
	ids(d, 0x10ec, 0x8139, 0x020000, 0x10, 0x10ec, 0x8139, 0);
	EQ(d->parent, 2);
	bar(d, 0, 0, IO, false, false, 0x4000, "I/O space, not memory");
	bar(d, 1, 1, MEM32, false, false, 0xe2400000, nosize);
	probe_free(&l);
}

static void test_domain_xxxx(void)
{
	struct probe_list l = scan("domain-xxxx.txt", NULL, NULL);
	const struct probe_dev *d;
	const char *nosize = "size unknown (dump)";

	EQ(l.n, 6);

	/* IDT switch port: same device ID as its NT function, class 0604 */
	d = at(&l, 0, 1, 0x00, 0x00, 0);
	ids(d, 0x111d, 0x808f, 0x060400, 0x0e, 0, 0, 1);
	kind(d, PROBE_PCI_BRIDGE, "");
	bridge(d, 0, 1, 1, 0xfff00000, 0xfffff, 0xd0000000, 0xd07fffff, false);
	link_of(d, 6, true, 2, 4, 1, 1, false, 256, 128, 512);

	d = at(&l, 1, 1, 0x00, 0x01, 0);
	ids(d, 0x111d, 0x808f, 0x068000, 0x0e, 0x111d, 0x808f, 0);
	kind(d, PROBE_NTB, "IDT 89HPES32NT8AG2 NT");
	EQ(d->nbars, 2);
	bar(d, 0, 0, MEM32, false, false, 0xfe000000, nosize);
	bar(d, 1, 2, MEM64, true, false, 0x4000000000ull, nosize);
	link_of(d, 0, true, 2, 4, 2, 4, false, 256, 128, 4096);

	/* an integrated endpoint has no link */
	d = at(&l, 2, 1, 0x00, 0x03, 0);
	ids(d, 0x1af4, 0x1110, 0x050000, 1, 0x1af4, 0x1100, 0);
	kind(d, PROBE_NTB, "QEMU ivshmem");
	EQ(d->nbars, 2);
	bar(d, 0, 0, MEM32, false, false, 0xfebf1000, nosize);
	bar(d, 1, 2, MEM64, true, false, 0x8000000000ull, nosize);
	link_of(d, 9, false, 0, 0, 0, 0, false, 128, 128, 512);

	/* Switchtec: class 0x068000 is the NT function, 0x058000 is not */
	d = at(&l, 3, 1, 0x00, 0x04, 0);
	ids(d, 0x11f8, 0x8536, 0x068000, 0, 0x11f8, 0x8536, 0);
	kind(d, PROBE_NTB, "Switchtec NT function");
	EQ(d->nbars, 2);
	bar(d, 0, 0, MEM64, false, false, 0x5000000000ull, nosize);
	bar(d, 1, 2, MEM64, true, false, 0x5100000000ull, nosize);
	no_link(d);

	d = at(&l, 4, 1, 0x00, 0x04, 1);
	ids(d, 0x11f8, 0x8536, 0x058000, 0, 0x11f8, 0x8536, 0);
	kind(d, PROBE_DEVICE, "");
	EQ(d->nbars, 1);
	bar(d, 0, 0, MEM64, false, false, 0x5200000000ull, nosize);

	/* PLX function of class 0680 not in the ID list: by class */
	d = at(&l, 5, 1, 0x01, 0x00, 0);
	ids(d, 0x10b5, 0x87a1, 0x068000, 0xca, 0x10b5, 0x87a1, 0);
	kind(d, PROBE_NTB, "PLX NT function");
	EQ(d->parent, 0);
	EQ(d->nbars, 1);
	bar(d, 0, 0, MEM32, true, false, 0xd0000000, nosize);
	for (int i = 0; i < 5; i++)
		EQ(l.dev[i].parent, -1);
	probe_free(&l);
}

static void use_of(const struct probe_dev *d, bool candidate, const char *what,
		   enum probe_access access, int bar, bool fits, bool doorbell)
{
	EQ(d->use.candidate, candidate);
	EQS(d->use.what, what);
	EQS(probe_access_name(d->use.access), probe_access_name(access));
	EQ(d->use.bar, bar);
	EQ(d->use.fits, fits);
	EQ(d->use.doorbell_capable, doorbell);
	if (candidate)
		EQS(d->use.why, "");
	else
		CHECK(d->use.why[0]);
}

/* The commands probe_advise gives, one string per command, "|" between. */
static void advice_is(const struct probe_dev *d, const char *spec,
		      bool usable, bool doorbells, const char *cmds)
{
	struct probe_advice a;
	char got[1024] = "";
	size_t len = 0;

	probe_advise(d, &a);
	EQS(a.spec, spec);
	EQ(a.usable, usable);
	EQ(a.doorbells, doorbells);
	for (int i = 0; i < a.ncmds; i++)
		len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s",
					i ? "|" : "", a.cmds[i]);
	EQS(got, cmds);
	EQ(a.to_vfio, strstr(cmds, "vfio-pci") != NULL);
}

#define SYS "/sys/bus/pci/devices/"
#define UNBIND(bdf) "echo " bdf " > " SYS bdf "/driver/unbind"
#define TO_VFIO(bdf, unbind) "modprobe vfio-pci|echo vfio-pci > " SYS bdf \
	"/driver_override|" unbind "echo " bdf " > /sys/bus/pci/drivers_probe"

/* QEMU's ivshmem, plain and doorbell, beside a disk and a NIC: the two
 * ivshmem are candidates (which BAR holds what, MSI-X or not), the disk
 * and the NIC are not, and get no command, whatever their BARs look like.
 * From a dump the driver is unknown: the commands may need the unbind. */
static void test_ivshmem(void)
{
	struct probe_list l = scan("ivshmem.txt", NULL, NULL);
	const struct probe_dev *d;
	const char *nosize = "size unknown (dump)";

	EQ(l.n, 5);
	d = at(&l, 1, 0, 0x00, 0x03, 0);
	ids(d, 0x1af4, 0x1110, 0x050000, 1, 0x1af4, 0x1100, 0);
	kind(d, PROBE_NTB, "QEMU ivshmem");
	EQ(d->msix, false);
	EQ(d->nbars, 2);
	bar(d, 0, 0, MEM32, false, false, 0xfebf1000, nosize);
	bar(d, 1, 2, MEM64, true, false, 0x800000000ull, nosize);
	EQS(d->bars[0].role, "registers (IVPosition at +8, Doorbell at +12)");
	EQS(d->bars[1].role, "shared memory");
	use_of(d, true, "ivshmem-plain", PROBE_ACCESS_UNKNOWN, 2, false, false);
	advice_is(d, "pci:0000:00:03.0/2", false, false, UNBIND("0000:00:03.0"));

	d = at(&l, 2, 0, 0x00, 0x04, 0);
	kind(d, PROBE_NTB, "QEMU ivshmem");
	EQ(d->msix, true);
	EQ(d->msix_table_bar, 1);
	EQ(d->msix_pba_bar, 1);
	EQ(d->nbars, 3);
	bar(d, 1, 1, MEM32, false, false, 0xfebf3000, nosize);
	bar(d, 2, 2, MEM64, true, false, 0x800100000ull, nosize);
	EQS(d->bars[0].role, "registers (IVPosition at +8, Doorbell at +12)");
	EQS(d->bars[1].role, "MSI-X table and PBA");
	EQS(d->bars[2].role, "shared memory");
	use_of(d, true, "ivshmem-doorbell", PROBE_ACCESS_UNKNOWN, 2, false, true);
	advice_is(d, "pci:0000:00:04.0/2", false, false,
		  TO_VFIO("0000:00:04.0", UNBIND("0000:00:04.0") "|"));

	d = at(&l, 3, 0, 0x00, 0x05, 0);
	ids(d, 0x144d, 0xa808, 0x010802, 0, 0x144d, 0xa801, 0);
	kind(d, PROBE_DEVICE, "");
	EQ(d->msix, true);
	EQ(d->msix_table_bar, 0);
	use_of(d, false, "storage controller", PROBE_ACCESS_NONE, -1, false, false);
	EQS(d->bars[0].role, "");
	advice_is(d, "", false, false, "");

	/* 64-bit prefetchable BARs, as an NTB's would be: still no candidate */
	d = at(&l, 4, 0, 0x00, 0x06, 0);
	ids(d, 0x8086, 0x1572, 0x020000, 2, 0x8086, 0, 0);
	EQ(d->nbars, 2);
	bar(d, 0, 0, MEM64, true, false, 0x3ffe000000ull, nosize);
	bar(d, 1, 3, MEM64, true, false, 0x3fff000000ull, nosize);
	use_of(d, false, "network controller", PROBE_ACCESS_NONE, -1, false,
	       false);
	CHECK(strstr(d->use.why, "network controller"));
	advice_is(d, "", false, false, "");

	d = at(&l, 0, 0, 0x00, 0x00, 0);
	use_of(d, false, "host bridge", PROBE_ACCESS_NONE, -1, false, false);
	advice_is(d, "", false, false, "");
	probe_free(&l);
}

/* A dump's device as the live bus gives it: BAR sizes (by index) known,
 * held by DRIVER or none, judged again. */
static struct probe_dev live(const struct probe_dev *d, const uint64_t size[6],
			     const char *driver)
{
	struct probe_dev x = *d;

	for (int i = 0; i < x.nbars; i++) {
		x.bars[i].size = size[x.bars[i].index];
		x.bars[i].size_known = true;
		probe_bar_judge(&x.bars[i], false);
	}
	snprintf(x.driver, sizeof(x.driver), "%s", driver);
	probe_judge_use(&x, false);
	return x;
}

/* What smq can do with a device as it stands on a live bus, and what it
 * tells to do: nothing for a device that is no candidate; for ivshmem-
 * doorbell vfio-pci (doorbells), for the others only freeing it of a
 * driver that holds it. */
static void test_use_live(void)
{
	struct probe_list l = scan("ivshmem.txt", NULL, NULL);
	const uint64_t ivshmem[6] = { 256, 4096, 1 << 20 };
	const uint64_t small[6] = { 256, 4096, 4096 };
	const uint64_t big[6] = { 16 << 20, 0, 0, 16 << 20 };
	struct probe_dev x;

	x = live(&l.dev[2], ivshmem, "");
	use_of(&x, true, "ivshmem-doorbell", PROBE_ACCESS_SYSFS, 2, true, true);
	EQ(x.bars[2].window_ok, true);
	advice_is(&x, "pci:0000:00:04.0/2", true, false, TO_VFIO("0000:00:04.0", ""));

	x = live(&l.dev[2], ivshmem, "vfio-pci");
	use_of(&x, true, "ivshmem-doorbell", PROBE_ACCESS_VFIO, 2, true, true);
	EQ(x.bars[2].window_ok, true);
	advice_is(&x, "pci:0000:00:04.0/2", true, true, "");

	x = live(&l.dev[2], ivshmem, "uio_ivshmem");
	use_of(&x, true, "ivshmem-doorbell", PROBE_ACCESS_HELD, 2, true, true);
	EQ(x.bars[2].window_ok, false);
	EQS(x.bars[2].why, "held by driver uio_ivshmem");
	advice_is(&x, "pci:0000:00:04.0/2", false, false,
		  TO_VFIO("0000:00:04.0", UNBIND("0000:00:04.0") "|"));

	x = live(&l.dev[1], ivshmem, "");
	use_of(&x, true, "ivshmem-plain", PROBE_ACCESS_SYSFS, 2, true, false);
	advice_is(&x, "pci:0000:00:03.0/2", true, false, "");
	x = live(&l.dev[1], ivshmem, "vfio-pci");
	advice_is(&x, "pci:0000:00:03.0/2", true, false, "");
	x = live(&l.dev[1], ivshmem, "uio_ivshmem");
	use_of(&x, true, "ivshmem-plain", PROBE_ACCESS_HELD, 2, true, false);
	advice_is(&x, "pci:0000:00:03.0/2", false, false, UNBIND("0000:00:03.0"));

	/* no driver change makes a 4 KiB BAR a window: no command */
	x = live(&l.dev[1], small, "uio_ivshmem");
	use_of(&x, true, "ivshmem-plain", PROBE_ACCESS_HELD, 2, false, false);
	EQS(x.bars[1].why, "too small: 4 KiB < 64 KiB");
	advice_is(&x, "pci:0000:00:03.0/2", false, false, "");

	/* a disk and a NIC, held, free or even on vfio-pci: no window, no
	 * command, and the BARs say why */
	static const char *const drivers[] = { "i40e", "", "vfio-pci" };
	for (int i = 0; i < 3; i++) {
		x = live(&l.dev[4], big, drivers[i]);
		use_of(&x, false, "network controller", PROBE_ACCESS_NONE, -1,
		       false, false);
		for (int b = 0; b < x.nbars; b++) {
			EQ(x.bars[b].window_ok, false);
			EQS(x.bars[b].why, "not a candidate: network controller");
		}
		advice_is(&x, "", false, false, "");
		x = live(&l.dev[3], big, i ? drivers[i] : "nvme");
		use_of(&x, false, "storage controller", PROBE_ACCESS_NONE, -1,
		       false, false);
		EQ(x.bars[0].window_ok, false);
		advice_is(&x, "", false, false, "");
	}
	probe_free(&l);

	/* an NTB that is no ivshmem: the largest prefetchable BAR; freed of
	 * its driver, never sent to vfio-pci (no doorbell smq knows) */
	l = scan("ntb-bridges.txt", "01:00.0", NULL);
	const uint64_t plx[6] = { 128 << 10, 0, 64 << 20, 0, 4096 };
	x = live(&l.dev[0], plx, "ntb_hw_plx");
	use_of(&x, true, "PLX NT0 virtual interface", PROBE_ACCESS_HELD, 2, true,
	       false);
	advice_is(&x, "pci:0000:01:00.0/2", false, false, UNBIND("0000:01:00.0"));
	x = live(&l.dev[0], plx, "");
	advice_is(&x, "pci:0000:01:00.0/2", true, false, "");
	probe_free(&l);
}

/* lspci -x: 64 bytes, so no capabilities; the BARs are all there */
static void test_x64(void)
{
	struct probe_list l = scan("x64-limited.txt", NULL, NULL);
	const struct probe_dev *d = at(&l, 0, 0, 0x01, 0x00, 0);
	const char *nosize = "size unknown (dump)";

	EQ(l.n, 1);
	EQ(d->config_limited, true);
	kind(d, PROBE_NTB, "PLX NT0 virtual interface");
	no_link(d);
	EQ(d->nbars, 3);
	bar(d, 0, 0, MEM32, false, false, 0xfe800000, nosize);
	bar(d, 1, 2, MEM64, true, false, 0x3800000000ull, nosize);
	bar(d, 2, 4, MEM64, true, false, 0x3804000000ull, nosize);
	probe_free(&l);
}

/* -s and -d pick devices as lspci's do; the match is an AND */
static void picks(const char *file, const char *slot, const char *id,
		  int scanned, const char *want)
{
	struct probe_list l = scan(file, slot, id);
	char got[512] = "";
	size_t len = 0;

	for (int i = 0; i < l.n; i++)
		len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%04x:%02x:%02x.%d",
					i ? " " : "", l.dev[i].domain, l.dev[i].bus,
					l.dev[i].dev, l.dev[i].func);
	if (strcmp(got, want))
		FAIL("%s -s %s -d %s picked \"%s\", expected \"%s\"", file,
		     slot ? slot : "-", id ? id : "-", got, want);
	EQ(l.scanned, scanned);
	probe_free(&l);
}

static void test_filters(void)
{
	const char *f = "ntb-bridges.txt", *g = "domain-xxxx.txt";

	picks(f, "01:00.0", NULL, 7, "0000:01:00.0");
	picks(f, "0000:01:00.0", NULL, 7, "0000:01:00.0");
	picks(f, "1c", NULL, 7, "0000:00:1c.0");
	picks(f, "00:", NULL, 7, "0000:00:00.0 0000:00:01.0 0000:00:02.0 "
	      "0000:00:1c.0 0000:00:1e.0");
	picks(f, "*:*.0", NULL, 7, "0000:00:00.0 0000:00:01.0 0000:00:02.0 "
	      "0000:00:1c.0 0000:00:1e.0 0000:01:00.0 0000:02:00.0");
	picks(f, NULL, "8086:b555", 7, "0000:02:00.0");
	picks(f, NULL, "8086:", 7, "0000:00:00.0 0000:00:01.0 0000:00:1c.0 "
	      "0000:00:1e.0 0000:02:00.0");
	picks(f, NULL, ":87b0", 7, "0000:01:00.0");
	picks(f, NULL, "::0680", 7, "0000:01:00.0 0000:02:00.0");
	picks(f, "", "", 7, "0000:00:00.0 0000:00:01.0 0000:00:02.0 "
	      "0000:00:1c.0 0000:00:1e.0 0000:01:00.0 0000:02:00.0");
	picks(f, "02:", "10b5:", 7, "");
	picks(f, "1:0.0", "10b5:87b0", 7, "0000:01:00.0");
	picks(g, "0001:00:04", NULL, 6, "0001:00:04.0 0001:00:04.1");
	picks(g, "0001:00:04.1", NULL, 6, "0001:00:04.1");
	picks(g, "0000:00:04", NULL, 6, "");
	picks(g, NULL, "11f8::0680", 6, "0001:00:04.0");
	picks(g, NULL, "111d:808f", 6, "0001:00:00.0 0001:00:01.0");

	/* a filtered device whose bridge is not listed has no parent */
	struct probe_list l = scan(f, "01:", NULL);
	EQ(l.n, 1);
	EQ(l.dev[0].parent, -1);
	probe_free(&l);

	static const struct { const char *slot, *id; } bad[] = {
		{ "zz", NULL }, { "1:2:3:4", NULL }, { "00:20.0", NULL },
		{ "00:1f.8", NULL }, { "100:00.0", NULL }, { "0:1.0.1", NULL },
		{ NULL, "8086" }, { NULL, "12345:" }, { NULL, "8086:g" },
		{ NULL, "1:2:3:4:5" }, { "01:00.0", "xyz:1" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct probe_filter pf = { bad[i].slot, bad[i].id };
		struct probe_list bl = { (struct probe_dev *)&bl, 99, 99, false };
		EXPECT(probe_filter_check(&pf), -EINVAL);
		CHECK(probe_last_error()[0]);
		EXPECT(probe_scan(&bl, &pf, dump(f)), -EINVAL);
		CHECK(probe_last_error()[0]);
		CHECK(bl.n == 0 && bl.dev == NULL);
	}
	struct probe_filter ok = { "0001:00:04.1", "11f8:8536" };
	OK(probe_filter_check(&ok));
	OK(probe_filter_check(NULL));
}

static void test_bad_dumps(void)
{
	struct probe_list l;

	EXPECT(probe_scan(&l, NULL, dump("malformed.txt")), -EINVAL);
	CHECK(strstr(probe_last_error(), "Malformed"));
	CHECK(l.n == 0 && l.dev == NULL);
	EXPECT(probe_scan(&l, NULL, dump("no-such-dump.txt")), -ENOENT);
	CHECK(l.n == 0 && l.dev == NULL);
	/* a file with no device in it: nothing, not an error */
	OK(probe_scan(&l, NULL, "/dev/null"));
	EQ(l.n, 0);
	EQ(l.scanned, 0);
	/* and the library is still usable after libpci failed */
	l = scan("x64-limited.txt", NULL, NULL);
	EQ(l.n, 1);
	probe_free(&l);
}

/* The window rules, on BARs such as the live bus gives (with sizes). */
static void judged(struct probe_bar b, bool dump_, bool ok, bool pref,
		   const char *why)
{
	probe_bar_judge(&b, dump_);
	EQ(b.window_ok, ok);
	EQ(b.preferred, pref);
	EQS(b.why, why);
}

static void test_rules(void)
{
	const struct probe_bar mem = { .index = 2, .addr = 0xf0000000,
				       .size = 1 << 20, .size_known = true };
	struct probe_bar b;
	const char *np = "not prefetchable: no write-combining; prefetchable "
			 "preferred";

	judged(mem, false, true, false, np);
	b = mem; b.prefetch = true; b.is64 = true;
	judged(b, false, true, true, "");
	b = mem; b.size = PROBE_WINDOW_MIN; b.prefetch = true;
	judged(b, false, true, true, "");
	b = mem; b.size = PROBE_WINDOW_MIN / 2;
	judged(b, false, false, false, "too small: 32 KiB < 64 KiB");
	b = mem; b.size = 4096; b.prefetch = true;
	judged(b, false, false, false, "too small: 4 KiB < 64 KiB");
	b = mem; b.size = 256;
	judged(b, false, false, false, "too small: 256 bytes < 64 KiB");
	b = mem; b.size = PROBE_WINDOW_MIN - 1;
	judged(b, false, false, false, "too small: 63 KiB < 64 KiB");
	b = mem; b.io = true; b.size = 256;
	judged(b, false, false, false, "I/O space, not memory");
	b = mem; b.disabled = true; b.prefetch = true;
	judged(b, false, false, false, "memory decoding off (command register)");
	b = mem; b.addr = 0;
	judged(b, false, false, false, "no address assigned");
	b = mem; b.addr = 0; b.is_virtual = true; b.prefetch = true;
	judged(b, false, false, false, "no address assigned");
	b = mem; b.is_virtual = true; b.prefetch = true;
	judged(b, false, true, true, "");
	b = mem; b.size = 0; b.size_known = false; b.prefetch = true;
	judged(b, true, false, false, "size unknown (dump)");
	judged(b, false, false, false, "size unknown");

	EQS(probe_speed_name(1), "2.5GT/s");
	EQS(probe_speed_name(3), "8GT/s");
	EQS(probe_speed_name(6), "64GT/s");
	EQS(probe_speed_name(0), "unknown");
	EQS(probe_port_type_name(0), "Endpoint");
	EQS(probe_port_type_name(4), "Root Port");
	EQS(probe_kind_name(PROBE_NTB), "NTB");
}

int main(void)
{
	find_dumps();
	test_ntb_bridges();
	test_domain_xxxx();
	test_x64();
	test_cardbus();
	test_ivshmem();
	test_use_live();
	test_filters();
	test_bad_dumps();
	test_rules();
	printf("ok\n");
	return 0;
}
