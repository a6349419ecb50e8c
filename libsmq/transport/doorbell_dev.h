/* Doorbells of PCI devices opened through VFIO: a table with one entry per
 * kind of device that says where its shared memory is, how it learns its
 * own doorbell ID, and how it rings a peer.  The pci transport looks a
 * device up here; a new kind of device is one new entry.
 *
 * Self-contained: system headers, vfio.h and this header; no printing;
 * 0 or a negative errno. */
#ifndef SMQ_DOORBELL_DEV_H
#define SMQ_DOORBELL_DEV_H

#include <stdbool.h>
#include <stdint.h>
#include "vfio.h"

struct smq_doorbell;

struct smq_doorbell_dev {
	uint16_t vendor, device;
	const char *name;
	/* The variant this entry is for, when one ID covers several: true
	 * when the entry needs an MSI-X capability, false when it needs
	 * none (ivshmem-doorbell and ivshmem-plain share 1af4:1110). */
	bool msix;
	int shm_bar;            /* the BAR that is the shared memory */
	/* Reads what the device says of itself (the own doorbell ID) once the
	 * device is open; NULL: nothing to read. */
	int (*setup)(struct smq_doorbell *db);
	/* Interrupts PEER on VECTOR; NULL: the device has no doorbell. */
	int (*ring)(struct smq_doorbell *db, uint32_t peer, uint32_t vector);
	/* How many vectors a peer can be rung on. */
	int (*vectors)(struct smq_doorbell *db);
};

/* The entry for a device, telling variants apart by the MSI-X capability
 * (HAS_MSIX), or NULL. */
const struct smq_doorbell_dev *smq_doorbell_dev_find(uint16_t vendor,
						     uint16_t device,
						     bool has_msix);
/* The Nth entry of the table (for listing), or NULL past its end. */
const struct smq_doorbell_dev *smq_doorbell_dev_entry(unsigned n);

/* Binds an open device to its table entry and runs its setup.  Does not
 * take V: close the doorbell before V.
 *   -ENODEV      the device is in no entry of the table
 *   -EOPNOTSUPP  its entry has no doorbell (ivshmem-plain: use its memory,
 *                poll for news)
 * and what reading config space or BAR0 returns. */
int smq_doorbell_open(struct smq_doorbell **out, struct smq_vfio *v);
void smq_doorbell_close(struct smq_doorbell *db);

const struct smq_doorbell_dev *smq_doorbell_type(const struct smq_doorbell *db);
struct smq_vfio *smq_doorbell_vfio(const struct smq_doorbell *db);
/* The doorbell ID peers ring this device by (ivshmem: the ID the server
 * gave it). */
uint32_t smq_doorbell_id(const struct smq_doorbell *db);
/* How many vectors this device can be rung on. */
int smq_doorbell_vectors(struct smq_doorbell *db);
/* Interrupts PEER on VECTOR.  -ERANGE: a peer or vector the doorbell
 * register cannot name. */
int smq_doorbell_ring(struct smq_doorbell *db, uint32_t peer,
		      uint32_t vector);
/* Maps the shared-memory BAR (see smq_vfio_map_bar). */
int smq_doorbell_map_shm(struct smq_doorbell *db, void **addr,
			 uint64_t *size);

#endif
