/* probes internals: what the files of probes/ share.  Not for cli/, which
 * uses probe.h and model.h only. */
#ifndef SMQ_PROBE_INT_H
#define SMQ_PROBE_INT_H

#include <stdbool.h>
#include <pci/pci.h>
#include "probe.h"

#define SYSFS_PCI "/sys/bus/pci"
#define SYSFS_DEVICES SYSFS_PCI "/devices"

/* probe.c: lspci's -s and -d filters, parsed */
struct filters {
	struct pci_filter slot, id;
	bool use_slot, use_id;
};

/* probe.c: one scan of the bus or a dump */
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

/* decode.c: one device's config space, as lspci decodes it; runs under
 * the guard of probe_scan (probe.c) */
void probe_read_dev(struct scan *s, struct pci_dev *d, struct probe_dev *out);

#endif
