/* probes: what the PCI/PCIe hierarchy holds, read through libpci (never by
 * parsing sysfs by hand): bridges and non-transparent bridges, BARs, PCIe
 * links and payload sizes.  Knows nothing of queues.  Functions return 0 or
 * a negative errno and never print. */
#ifndef SMQ_PROBE_H
#define SMQ_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROBE_MAX_BARS 6

struct probe_bar {
	int index;              /* 0..5 */
	uint64_t addr, size;    /* bus address and size in bytes; 0 if unset */
	bool io;                /* an I/O BAR (not memory) */
	bool is64;              /* 64-bit memory BAR (uses two slots) */
	bool prefetch;          /* prefetchable memory */
	bool disabled;          /* memory/I/O decoding off in the command reg */
	bool window_ok;         /* could carry an smq window */
	char why[96];           /* why it could not, or "" */
	/* added: */
	bool preferred;         /* window_ok and prefetchable: the kind to use;
				 * a usable BAR that is not says why in why[] */
	bool size_known;        /* false from a dump: sizes need sysfs */
	bool is_virtual;        /* given by the OS, not in config space (VF) */
	char role[64];          /* what the BAR holds where known ("shared
				 * memory", "MSI-X table"), or "" */
};

/* A window of a CardBus bridge (header type 2), as its registers say. */
struct probe_window {
	uint64_t base, limit;   /* limit < base: closed */
	bool prefetch;          /* a memory window marked prefetchable */
	bool io32;              /* an I/O window decoding 32 bits, not 16 */
	bool disabled;          /* the bridge's memory (I/O) decoding is off */
};

struct probe_link {
	bool present;           /* the device has a PCI Express capability */
	int port_type;          /* PCI_EXP_TYPE_* */
	int cap_speed, cap_width;   /* link capability: GT/s generation 1..6, lanes */
	int sta_speed, sta_width;   /* link status */
	bool downgraded;        /* trained below its capability */
	int mps_supported;      /* bytes */
	int mps, mrrs;          /* in use, bytes */
	/* added: */
	bool has_link;          /* link registers exist (not a root-complex
				 * integrated endpoint or event collector) */
};

enum probe_kind { PROBE_DEVICE, PROBE_HOST_BRIDGE, PROBE_PCI_BRIDGE,
		  PROBE_NTB };

/* How smq could reach a candidate's memory as the device stands. */
enum probe_access {
	PROBE_ACCESS_NONE,      /* not a candidate */
	PROBE_ACCESS_SYSFS,     /* no driver: its BAR maps through sysfs,
				 * receivers poll */
	PROBE_ACCESS_VFIO,      /* bound to vfio-pci: mapped through VFIO */
	PROBE_ACCESS_HELD,      /* another driver holds it */
	PROBE_ACCESS_UNKNOWN,   /* read from a dump: the driver is unknown */
};

/* What smq can make of a device: only non-transparent bridges and ivshmem
 * (memory shared with another host) are candidates; any other device's
 * BARs are its own registers, and the system may be using it. */
struct probe_use {
	bool candidate;
	char what[64];          /* "ivshmem-doorbell", "ivshmem-plain", the
				 * NTB's kind; else "storage controller" */
	char why[128];          /* a non-candidate: why not, a sentence
				 * that names what it is */
	enum probe_access access;
	int bar;                /* the BAR smq would map, or -1 */
	bool fits;              /* that BAR passes the window rules of its
				 * own (probe_bar_judge), whoever holds it */
	bool doorbell_capable;  /* has doorbells smq takes through vfio-pci
				 * (ivshmem-doorbell: MSI-X) */
};

/* CXL, from its Designated Vendor-Specific capabilities (vendor 0x1e98)
 * in extended config space, as lspci -vv decodes them: a device's
 * (DVSEC 0, CXLCap and CXLCtl) and a port's link (DVSEC 7, Flex Bus:
 * FBCap what it can, FBSta what the link trained to). */
struct probe_cxl {
	bool present;           /* any CXL DVSEC */
	bool device;            /* DVSEC 0: a CXL device */
	bool cap_cache, cap_io, cap_mem;        /* CXLCap */
	bool mem_hwinit;        /* CXLCap Mem HW Init */
	int hdm_count;          /* CXLCap HDMCount: HDM ranges */
	bool ctl_cache, ctl_io, ctl_mem;        /* CXLCtl: enabled */
	bool port;              /* DVSEC 3: a port's extensions */
	bool flexbus;           /* DVSEC 7: a Flex Bus port */
	bool fb_cap_cache, fb_cap_io, fb_cap_mem, fb_cap_68b, fb_cap_mld;
	bool fb_sta_cache, fb_sta_io, fb_sta_mem, fb_sta_68b, fb_sta_mld;
	bool memory;            /* a CXL memory device (class 0x0502) that
				 * can carry memory: a window's candidate */
	/* what Linux's CXL bus calls it (probe_sysfs_cxl()); "" when not
	 * read (a dump) or not known */
	char memdev[16];        /* "mem0": the memory device cxl_pci made */
	char decoder[64];       /* "decoder0.0": the root decoder of
				 * persistent memory, when exactly one;
				 * else "" */
	int decoders;           /* root decoders of persistent memory */
};

struct probe_dev {
	int domain, bus, dev, func;
	uint16_t vendor, device, subvendor, subdevice;
	uint32_t class;         /* base << 16 | sub << 8 | prog_if */
	uint8_t revision;
	char vendor_name[64], device_name[128];
	enum probe_kind kind;
	char ntb_kind[48];      /* "Intel 21554", "QEMU ivshmem", ... or "" */
	/* a bridge (header type 1): bus numbers and windows behind it */
	int primary, secondary, subordinate;
	uint64_t mem_base, mem_limit;   /* limit < base: window closed */
	uint64_t pref_base, pref_limit;
	bool pref64;
	/* a CardBus bridge (header type 2) has windows of another layout in
	 * place of the two above (which then hold nothing): two memory
	 * windows, each prefetchable or not, and two I/O windows */
	struct probe_window cb_mem[2], cb_io[2];
	struct probe_bar bars[PROBE_MAX_BARS];
	int nbars;              /* BARs in bars[]: those with an address,
				 * type bits or a size (lspci's rule) */
	struct probe_link link;
	int numa_node;          /* -1 if unknown */
	char driver[64];        /* "" if none or unknown */
	int parent;             /* index in the list of the bridge above, or -1 */
	/* added: */
	char class_name[64];    /* "Ethernet controller", ... */
	int header_type;        /* 0 device, 1 PCI-to-PCI bridge, 2 CardBus */
	bool config_limited;    /* only 64 bytes of config space readable (not
				 * root): no capabilities, link unknown */
	bool msix;              /* an MSI-X capability (false if unknown) */
	int msix_table_bar, msix_pba_bar;   /* where its table and PBA are,
					     * or -1 */
	char iommu_group[16];   /* "" if none or unknown (a dump) */
	struct probe_cxl cxl;
	struct probe_use use;
};

struct probe_list {
	struct probe_dev *dev;
	int n;
	/* added: */
	int scanned;            /* devices seen before the filter */
	bool from_dump;         /* read from a dump file, not the live bus */
};

/* Filters as lspci -s and -d take them; NULL or "" matches everything. */
struct probe_filter {
	const char *slot;       /* [[domain:]bus:]slot[.func], parts may be * */
	const char *id;         /* [vendor]:[device] in hex */
};

/* Scans the live bus (dump == NULL) or an lspci -x style dump file.
 * Returns 0 with the devices sorted by domain, bus, slot and function
 * (list->n may be 0: nothing matched), or -EINVAL (a bad filter, a
 * malformed dump), -ENODEV (no PCI access: no /sys/bus/pci), -errno of
 * opening the dump, -ENOMEM, or -EIO (libpci failed otherwise); see
 * probe_last_error().  A dump holds config space only: BAR sizes, NUMA
 * node, driver and IOMMU group are unknown there. */
int probe_scan(struct probe_list *list, const struct probe_filter *filter,
	       const char *dump);
void probe_free(struct probe_list *list);
/* Checks a filter's syntax; returns 0 or -EINVAL. */
int probe_filter_check(const struct probe_filter *filter);

/* added: */
/* What the last failing probe call of this thread met, in libpci's or the
 * filter parser's words ("Invalid slot number"), or "". */
const char *probe_last_error(void);
/* "device", "host bridge", "PCI bridge", "NTB" */
const char *probe_kind_name(enum probe_kind kind);
/* Link speed generation 1..6 as "2.5GT/s" ... "64GT/s"; "unknown" else. */
const char *probe_speed_name(int gen);
/* PCI_EXP_TYPE_* as "Endpoint", "Root Port", ... */
const char *probe_port_type_name(int type);
/* Sets bar->window_ok, preferred and why from its other fields, by the
 * rules: memory, not I/O; an address; decoding on; size known and at least
 * PROBE_WINDOW_MIN; prefetchable preferred (says why when not). */
void probe_bar_judge(struct probe_bar *bar, bool from_dump);
/* Fills dev->use and the BARs' roles from the rest of dev (probe_scan
 * does this); a non-candidate's BARs and those a driver other than
 * vfio-pci holds are then no window, and say why. */
void probe_judge_use(struct probe_dev *dev, bool from_dump);
/* "none", "sysfs", "vfio", "held", "unknown" */
const char *probe_access_name(enum probe_access access);

/* How to make a candidate usable: the shell commands that give it to
 * vfio-pci where that brings doorbells, else free it of the driver that
 * holds it (or may hold it: a dump does not say).  A device that is no
 * candidate, or whose BAR no driver change makes fit, gets none. */
#define PROBE_MAX_COMMANDS 4
struct probe_advice {
	char bdf[16];           /* "0000:00:04.0" */
	char spec[40];          /* "pci:0000:00:04.0/2", or "" (no BAR) */
	bool usable;            /* smq can map it as it stands */
	bool doorbells;         /* ... and ring doorbells */
	bool to_vfio;           /* the commands bind it to vfio-pci */
	bool cxl;               /* CXL memory: the commands make a
				 * device-DAX device of it (spec dax:) */
	int ncmds;
	char cmds[PROBE_MAX_COMMANDS][128];
};
void probe_advise(const struct probe_dev *dev, struct probe_advice *advice);
/* Smallest BAR that may carry an smq window. */
#define PROBE_WINDOW_MIN (64u * 1024)

/* health.c, for smqctl check: the health of a device's path to its root.
 * The index in list of the device named "[DOMAIN:]BUS:DEV.FN" (hex), or
 * -1. */
int probe_find(const struct probe_list *list, const char *bdf);
/* The device and each bridge above it (their indexes in list), the
 * device first; returns how many. */
#define PROBE_PATH_MAX 16
int probe_path(const struct probe_list *list, int dev,
	       int path[PROBE_PATH_MAX]);
/* A PCI Express link on the path: the device at its lower end (an
 * endpoint or a switch's upstream port) and the port above it, trained
 * against what both ends can do. */
struct probe_link_state {
	int dev, port;          /* indexes in the list; port -1: unknown */
	int speed, width;       /* trained (link status) */
	int can_speed, can_width; /* the lower of both ends' capabilities;
				 * the device's own when the port is unknown */
	bool both_ends;         /* the port's capability is known */
	bool down;              /* status speed or width 0 */
	bool downgraded;        /* trained below can_speed or can_width */
};
/* Fills out (at most max) with the links of path; returns how many. */
int probe_path_links(const struct probe_list *list, const int *path, int n,
		     struct probe_link_state *out, int max);
/* Payload sizes along the path.  A device's TLPs carry up to its MPS,
 * and every port above it must accept that much (its own MPS): Linux's
 * pcie_bus_perf sets different sizes on purpose, never one larger below
 * than above. */
struct probe_payload {
	int known;              /* devices on the path with PCIe registers */
	int mps, mrrs;          /* the device's (path[0]) */
	int least_mps;          /* the smallest MPS set on the path */
	int least_supported;    /* the smallest MPS supported on the path */
	int over, receiver;     /* a device whose MPS is larger than that of
				 * a port above it, and that port; -1 none */
};
void probe_path_payload(const struct probe_list *list, const int *path,
			int n, struct probe_payload *out);

/* sysfs.c: what Linux's sysfs says beyond config space, read under root
 * ("/sys" when NULL; a recorded tree in tests).  bdf is
 * "DOMAIN:BUS:DEV.FN".  -ENOENT: no such device there. */
bool probe_sysfs_has(const char *root, const char *bdf);
enum { PROBE_AER_CORRECTABLE, PROBE_AER_NONFATAL, PROBE_AER_FATAL,
       PROBE_AER_KINDS };
struct probe_aer {
	bool present[PROBE_AER_KINDS];  /* aer_dev_correctable, _nonfatal,
					 * _fatal exist */
	uint64_t total[PROBE_AER_KINDS]; /* TOTAL_ERR_* */
	char named[PROBE_AER_KINDS][160]; /* the counts not 0: "BadTLP 3" */
};
int probe_sysfs_aer(const char *root, const char *bdf, struct probe_aer *out);
/* The driver bound, the IOMMU group: "" when none. */
int probe_sysfs_driver(const char *root, const char *bdf, char *buf,
		       size_t n);
int probe_sysfs_iommu_group(const char *root, const char *bdf, char *buf,
			    size_t n);
/* The devices of an IOMMU group, sorted: stores up to max, returns how
 * many there are, or -errno. */
int probe_sysfs_group_devices(const char *root, const char *group,
			      char (*bdfs)[16], int max);
/* BAR bar as the kernel placed it (the resource file): -ENOENT when it
 * is not assigned. */
int probe_sysfs_bar(const char *root, const char *bdf, int bar,
		    uint64_t *start, uint64_t *size);
/* The CXL bus's names for a CXL memory device: the memory device under
 * its PCI device (memN) and the root decoders that can map persistent
 * memory (bus/cxl/devices/decoderX.Y with cap_pmem 1), into x->memdev,
 * x->decoder (when there is exactly one) and x->decoders. */
void probe_sysfs_cxl(const char *root, const char *bdf, struct probe_cxl *x);

#endif
