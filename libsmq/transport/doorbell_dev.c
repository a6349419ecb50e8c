/* The table of devices with doorbells: see doorbell_dev.h.
 *
 * Only devices we can run are in it: QEMU's ivshmem, with and without
 * interrupts.  What an NTB entry would need, for whoever has one to test
 * it on (its registers are in the public drivers: Linux's drivers/ntb/hw/
 * intel (ntb_hw_gen1.c, ntb_hw_gen3.c, ntb_hw_gen4.c), drivers/ntb/hw/mscc
 * (ntb_hw_switchtec.c), drivers/ntb/hw/idt (ntb_hw_idt.c), drivers/ntb/hw/amd;
 * DPDK's drivers/raw/ntb (ntb_hw_intel.c) for the same from user space):
 *
 *  - the doorbell: a register in a config BAR; writing bit N to the peer
 *    doorbell register raises bit N in the peer's doorbell status, which
 *    interrupts it through an MSI-X vector that the device maps from
 *    doorbell bits (several bits may share a vector).  The receiver must
 *    clear the bit in its own status register (write 1 to clear) and may
 *    mask bits; ivshmem has no status to clear.  So ring() writes a bit,
 *    and an entry needs an ack() besides, and vectors() is the number of
 *    usable doorbell bits, not of MSI-X vectors.
 *  - the own ID: NTBs have no server that numbers the boards.  Two sides
 *    of one NTB are "this" and "peer"; a switch partition (Switchtec) has a
 *    partition number, and IDT has port numbers.  setup() would read those
 *    from the device's registers, and ring(peer, ...) would pick the peer's
 *    doorbell register (Switchtec rings peers through a message or
 *    doorbell block per partition; IDT through its outbound doorbell
 *    register and a port mask).
 *  - scratchpads (or IDT's message registers): a few 32-bit registers the
 *    peer can read and write, used to tell the peer where the own window
 *    is before any shared memory is set up; an entry would export them to
 *    the handshake that exchanges the window's address and size.
 *  - the inbound window: unlike ivshmem's BAR2, which is simply memory,
 *    an NTB's memory BAR is translated into the peer's address space: the
 *    peer programs a translation register (its "xlat" base and limit) with
 *    the bus address of memory it allocated for DMA (through VFIO that is
 *    VFIO_IOMMU_MAP_DMA of its buffer at an IOVA it picks), and this side
 *    then reaches that memory through its BAR.  An entry would name the
 *    memory BARs, their translation registers and the alignment they
 *    demand, and setup() would fill them in.
 *
 * None of that is here: this tree ships no register code that cannot be
 * run on the machines it is tested on. */
#include <errno.h>
#include <stdlib.h>
#include "doorbell_dev.h"

#define PCI_VENDOR_ID 0x00
#define PCI_DEVICE_ID 0x02
#define PCI_CAP_ID_MSIX 0x11

struct smq_doorbell {
	const struct smq_doorbell_dev *type;
	struct smq_vfio *vfio;
	uint32_t id;
	int vectors;
};

/* ---- QEMU ivshmem (docs/specs/ivshmem-spec.txt in QEMU's sources) ----
 * BAR0: registers, 256 bytes: interrupt mask (+0) and status (+4), unused
 * with MSI-X; IVPosition (+8), the own ID; Doorbell (+12), written as
 * peer << 16 | vector.  BAR1: the MSI-X table.  BAR2: the memory, shared
 * with every peer of the server. */
#define IVSHMEM_BAR_REGS 0
#define IVSHMEM_BAR_MEM 2
#define IVSHMEM_IVPOSITION 8
#define IVSHMEM_DOORBELL 12

static int ivshmem_setup(struct smq_doorbell *db)
{
	int32_t pos;
	int err = smq_vfio_bar_read(db->vfio, IVSHMEM_BAR_REGS,
				    IVSHMEM_IVPOSITION, &pos, sizeof(pos));
	if (err)
		return err;
	/* Devices before QEMU 2.6 (revision 0) read -1 until the server has
	 * answered; ours are revision 1, which knows its ID from the start. */
	if (pos < 0 || pos > 0xffff)
		return -EAGAIN;
	db->id = (uint32_t)pos;
	return 0;
}

static int ivshmem_ring(struct smq_doorbell *db, uint32_t peer,
			uint32_t vector)
{
	if (peer > 0xffff || vector > 0xffff)
		return -ERANGE;
	uint32_t word = peer << 16 | vector;
	return smq_vfio_bar_write(db->vfio, IVSHMEM_BAR_REGS, IVSHMEM_DOORBELL,
				  &word, sizeof(word));
}

/* The vectors the device was started with (vectors=N on QEMU's command
 * line) are its MSI-X table size.  A peer started with fewer ignores a
 * ring on a vector it lacks: the device cannot tell us. */
static int ivshmem_vectors(struct smq_doorbell *db)
{
	return smq_vfio_msix_count(db->vfio);
}

static const struct smq_doorbell_dev doorbell_devs[] = {
	{
		.vendor = 0x1af4, .device = 0x1110,
		.name = "ivshmem-doorbell", .msix = true,
		.shm_bar = IVSHMEM_BAR_MEM,
		.setup = ivshmem_setup, .ring = ivshmem_ring,
		.vectors = ivshmem_vectors,
	},
	{
		/* Memory only: no server, no interrupts, IVPosition reads
		 * 0.  Found here so that a caller can say why it has no
		 * doorbell. */
		.vendor = 0x1af4, .device = 0x1110,
		.name = "ivshmem-plain", .msix = false,
		.shm_bar = IVSHMEM_BAR_MEM,
	},
};

#define NDEVS (sizeof(doorbell_devs) / sizeof(doorbell_devs[0]))

const struct smq_doorbell_dev *smq_doorbell_dev_find(uint16_t vendor,
						     uint16_t device,
						     bool has_msix)
{
	for (unsigned i = 0; i < NDEVS; i++) {
		const struct smq_doorbell_dev *d = &doorbell_devs[i];
		if (d->vendor == vendor && d->device == device &&
		    d->msix == has_msix)
			return d;
	}
	return NULL;
}

const struct smq_doorbell_dev *smq_doorbell_dev_entry(unsigned n)
{
	return n < NDEVS ? &doorbell_devs[n] : NULL;
}

int smq_doorbell_open(struct smq_doorbell **out, struct smq_vfio *v)
{
	uint16_t vendor, device;
	int err, cap;

	*out = NULL;
	if ((err = smq_vfio_config_read(v, PCI_VENDOR_ID, &vendor, 2)) ||
	    (err = smq_vfio_config_read(v, PCI_DEVICE_ID, &device, 2)))
		return err;
	cap = smq_vfio_find_cap(v, PCI_CAP_ID_MSIX);
	if (cap < 0 && cap != -ENOENT)
		return cap;
	const struct smq_doorbell_dev *type =
		smq_doorbell_dev_find(vendor, device, cap >= 0);
	if (!type)
		return -ENODEV;
	if (!type->ring)
		return -EOPNOTSUPP;

	struct smq_doorbell *db = calloc(1, sizeof(*db));
	if (!db)
		return -ENOMEM;
	db->type = type;
	db->vfio = v;
	if ((err = smq_vfio_enable(v, true)) ||
	    (type->setup && (err = type->setup(db)))) {
		free(db);
		return err;
	}
	db->vectors = type->vectors ? type->vectors(db) : 0;
	if (db->vectors < 0) {
		err = db->vectors;
		free(db);
		return err;
	}
	*out = db;
	return 0;
}

void smq_doorbell_close(struct smq_doorbell *db)
{
	free(db);
}

const struct smq_doorbell_dev *smq_doorbell_type(const struct smq_doorbell *db)
{
	return db->type;
}

struct smq_vfio *smq_doorbell_vfio(const struct smq_doorbell *db)
{
	return db->vfio;
}

uint32_t smq_doorbell_id(const struct smq_doorbell *db)
{
	return db->id;
}

int smq_doorbell_vectors(struct smq_doorbell *db)
{
	return db->vectors;
}

int smq_doorbell_ring(struct smq_doorbell *db, uint32_t peer,
		      uint32_t vector)
{
	/* The caller's stores to shared memory must reach the peer before
	 * the interrupt: a full fence orders them before the register write
	 * (and drains write-combining buffers on x86). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return db->type->ring(db, peer, vector);
}

int smq_doorbell_map_shm(struct smq_doorbell *db, void **addr,
			 uint64_t *size)
{
	return smq_vfio_map_bar(db->vfio, (unsigned)db->type->shm_bar, addr,
				size);
}
