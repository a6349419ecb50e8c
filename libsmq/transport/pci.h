/* libsmq internals of the pci transport, shared by its files: the
 * window's opening, mapping and doorbells (pci.c), the words for why an
 * open failed (pci_explain.c), and below both a device's address and
 * links (pci_spec.c). */
#ifndef SMQ_PCI_H
#define SMQ_PCI_H

#include <stdbool.h>
#include <stddef.h>

#define SYSFS_PCI "/sys/bus/pci/devices"

/* pci_spec.c: "BDF[/BAR]": the canonical address, and the BAR (-1:
 * none named) */
int smq_pci_parse_spec(const char *arg, char dev[16], int *bar);
/* The last component of the device's link NAME ("driver",
 * "iommu_group") into out; "" when there is none. */
void smq_pci_link_base(const char *dev, const char *name, char *out,
		       size_t n);
/* pci_explain.c: the transport's explain operation (transport.h) */
bool smq_pci_explain(const char *arg, int err, char *buf, size_t len);

#endif
