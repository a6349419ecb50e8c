/* A PCI device in user space through VFIO (Linux's vfio-pci): its BARs
 * mapped or read and written through the device file, its config space,
 * and its MSI-X vectors delivered as eventfds.
 *
 * Self-contained: system headers and this header only, no printing, every
 * function returns 0 (or a count) or a negative errno.  One process holds
 * a VFIO group at a time: a second open of the same device, from this
 * process or another, fails with -EBUSY until the first is closed.
 *
 * What smq_vfio_open() returns when it cannot open the device, one errno
 * per cause so that a caller can explain it (smq_vfio_explain() says it in
 * words):
 *   -EINVAL           the address is not [dddd:]bb:ss.f
 *   -ENODEV           no PCI device at that address
 *   -EOPNOTSUPP       the device has no IOMMU group: the kernel runs without
 *                     an IOMMU (intel_iommu=on, amd_iommu=on).  VFIO's
 *                     no-IOMMU mode (/dev/vfio/noiommu-N) is not used:
 *                     Debian's kernels lack it, so it could not be tested
 *   -EUNATCH          the device is not bound to vfio-pci (another driver,
 *                     or none)
 *   -ENOPKG           /dev/vfio/vfio is missing: the vfio modules are not
 *                     loaded
 *   -ENOENT           /dev/vfio/N, the device's group node, is missing
 *                     (/dev not populated for it)
 *   -EPROTO           the kernel speaks another VFIO API version
 *   -EPROTONOSUPPORT  no type1 IOMMU backend (vfio_iommu_type1 not loaded)
 *   -EBUSY            the device's group is held by another open
 *   -EXDEV            the group is not viable: another device in it is
 *                     bound to a host driver
 *   -EPERM            the IOMMU cannot remap interrupts and vfio_iommu_type1
 *                     refuses it (its allow_unsafe_interrupts parameter)
 *   -EACCES           no permission on /dev/vfio/N
 */
#ifndef SMQ_VFIO_H
#define SMQ_VFIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct smq_vfio;

/* A BAR as VFIO describes it. */
struct smq_vfio_bar {
	uint64_t size;          /* 0: the BAR does not exist */
	bool mappable;          /* VFIO lets it be mmapped */
	bool readable, writable;
};

/* Opens the device at BDF ("0000:00:03.0" or "00:03.0"). */
int smq_vfio_open(struct smq_vfio **out, const char *bdf);
/* A handle on a device another process opened (smq_vfio_open) and passed
 * on: its device file, smq_vfio_device_fd(), received over a UNIX socket
 * (SCM_RIGHTS).  VFIO lets one process hold the group; any process that
 * has the device file maps the BARs, reads config space and rings.  The
 * handle takes a duplicate of DEVICE_FD.  Its MSI-X routing stays the
 * owner's (smq_vfio_msix_enable() is -EPERM): the owner hands out the
 * vectors' eventfds too.  BDF names the device, as the owner's did. */
int smq_vfio_adopt(struct smq_vfio **out, int device_fd, const char *bdf);
/* The device file, to pass to another process. */
int smq_vfio_device_fd(const struct smq_vfio *v);
/* Turns MSI-X off (an owner's), unmaps the BARs, closes every
 * descriptor.  NULL is a no-op. */
void smq_vfio_close(struct smq_vfio *v);
/* The canonical address ("dddd:bb:ss.f"). */
const char *smq_vfio_bdf(const struct smq_vfio *v);
/* A sentence for an error smq_vfio_open() or another call returned,
 * knowing nothing of the system: the pci transport's explain (through
 * smq_explain()) says which device, which group and who holds it. */
const char *smq_vfio_explain(int err);

/* BARs 0 to 5.  -EINVAL for another index. */
int smq_vfio_bar_info(struct smq_vfio *v, unsigned bar,
		      struct smq_vfio_bar *info);
/* Maps the whole BAR (shared, read and write); *addr stays valid until
 * smq_vfio_close().  Mapping it twice returns the same address.
 * -ENOENT: no such BAR; -EOPNOTSUPP: VFIO will not map it (then use
 * smq_vfio_bar_read/write). */
int smq_vfio_map_bar(struct smq_vfio *v, unsigned bar, void **addr,
		     uint64_t *size);
/* 1, 2, 4 or 8 bytes at OFF within the BAR, as one access: through the
 * mapping when there is one, else through the device file.  -ERANGE when
 * OFF + LEN is outside the BAR, -EINVAL for another width or an unaligned
 * offset. */
int smq_vfio_bar_read(struct smq_vfio *v, unsigned bar, uint64_t off,
		      void *val, size_t len);
int smq_vfio_bar_write(struct smq_vfio *v, unsigned bar, uint64_t off,
		       const void *val, size_t len);

/* Config space as vfio-pci presents it (partly virtualized). */
int smq_vfio_config_read(struct smq_vfio *v, unsigned off, void *buf,
			 size_t len);
int smq_vfio_config_write(struct smq_vfio *v, unsigned off, const void *buf,
			  size_t len);
/* The offset of the first standard capability with ID CAP (0x11 is
 * MSI-X), or -ENOENT. */
int smq_vfio_find_cap(struct smq_vfio *v, uint8_t cap);
/* Sets memory decoding and, if BUS_MASTER, bus mastering in the command
 * register (a device signals MSI-X by writing memory, so a device that
 * interrupts needs both). */
int smq_vfio_enable(struct smq_vfio *v, bool bus_master);

/* How many MSI-X vectors the device offers (0 without MSI-X). */
int smq_vfio_msix_count(struct smq_vfio *v);
/* Routes vectors 0..N-1 each to a new eventfd (and enables bus
 * mastering).  -ERANGE when N exceeds smq_vfio_msix_count(), -EALREADY
 * when already enabled. */
int smq_vfio_msix_enable(struct smq_vfio *v, unsigned n);
/* Stops the routing and closes the eventfds; 0 when it was off. */
int smq_vfio_msix_disable(struct smq_vfio *v);
/* The eventfd of VECTOR (for a caller's own poll), or -EINVAL. */
int smq_vfio_msix_fd(const struct smq_vfio *v, unsigned vector);
/* Waits up to TIMEOUT_MS (-1: no limit) for any enabled vector; then reads
 * and clears every vector that fired.  counts[i] (N entries, as enabled)
 * is how many interrupts vector i took since the last read.  Returns how
 * many vectors fired, 0 on timeout. */
int smq_vfio_msix_wait(struct smq_vfio *v, int timeout_ms, uint64_t *counts);

#endif
