/* probes: what the PCI/PCIe hierarchy holds, read through libpci (never by
 * parsing sysfs by hand): bridges and non-transparent bridges, BARs, PCIe
 * links and payload sizes.  Knows nothing of queues.  Functions return 0 or
 * a negative errno and never print. */
#ifndef SMQ_PROBE_H
#define SMQ_PROBE_H

#include <stdbool.h>
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
};

struct probe_link {
	bool present;           /* the device has a PCI Express capability */
	int port_type;          /* PCI_EXP_TYPE_* */
	int cap_speed, cap_width;   /* link capability: GT/s generation 1..6, lanes */
	int sta_speed, sta_width;   /* link status */
	bool downgraded;        /* trained below its capability */
	int mps_supported;      /* bytes */
	int mps, mrrs;          /* in use, bytes */
};

enum probe_kind { PROBE_DEVICE, PROBE_HOST_BRIDGE, PROBE_PCI_BRIDGE,
		  PROBE_NTB };

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
	struct probe_bar bars[PROBE_MAX_BARS];
	int nbars;              /* BARs that exist (size > 0) */
	struct probe_link link;
	int numa_node;          /* -1 if unknown */
	char driver[64];        /* "" if none or unknown */
	int parent;             /* index in the list of the bridge above, or -1 */
};

struct probe_list {
	struct probe_dev *dev;
	int n;
};

/* Filters as lspci -s and -d take them; NULL or "" matches everything. */
struct probe_filter {
	const char *slot;       /* [[domain:]bus:]slot[.func], parts may be * */
	const char *id;         /* [vendor]:[device] in hex */
};

/* Scans the live bus (dump == NULL) or an lspci -x style dump file. */
int probe_scan(struct probe_list *list, const struct probe_filter *filter,
	       const char *dump);
void probe_free(struct probe_list *list);
/* Checks a filter's syntax; returns 0 or -EINVAL. */
int probe_filter_check(const struct probe_filter *filter);

#endif
