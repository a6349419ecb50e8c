/* What vfio.c (opening a device, its MSI-X vectors) and vfio_access.c
 * (its BARs and config space) share: the handle behind struct smq_vfio.
 * Never beyond libsmq/transport/. */
#ifndef SMQ_VFIO_INT_H
#define SMQ_VFIO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NBARS 6

struct vfio_bar_state {
	uint64_t size, offset;  /* offset: where the BAR is in the device file */
	uint32_t flags;
	bool sparse;            /* only parts may be mapped (an MSI-X table) */
	void *map;
	size_t map_len;
};

struct smq_vfio {
	int container, group, device;
	bool adopted;           /* another process opened it (smq_vfio_adopt) */
	char bdf[16];
	uint64_t config_offset;
	struct vfio_bar_state bar[NBARS];
	unsigned num_irqs;
	int *msix_fds;
	unsigned msix_n;
};

#endif
