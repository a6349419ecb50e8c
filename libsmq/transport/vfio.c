/* A PCI device through VFIO (see vfio.h): opening it, closing it, the
 * words of its errors, and its MSI-X vectors; vfio_access.c reads and
 * writes its BARs and config space, which this file's calls use.
 *
 * The order of opening is the kernel's (Documentation/driver-api/vfio.rst):
 * the device's IOMMU group from sysfs, the container /dev/vfio/vfio, the
 * group /dev/vfio/N joined to the container, the type1 IOMMU set on the
 * container, then the device's own file from the group.  Each step that
 * can fail for a reason a user can fix gets its own errno.
 *
 * No DMA is mapped: the device reaches no memory of ours.  Its MSI-X
 * messages are not DMA through the IOMMU's page tables but go through its
 * interrupt remapping, which is why the type1 backend checks for that. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/vfio.h>
#include "base/clock.h"
#include "vfio.h"
#include "vfio_int.h"

#define SYSFS_PCI "/sys/bus/pci/devices"

/* "[dddd:]bb:ss.f" into "dddd:bb:ss.f". */
static int canonical_bdf(const char *s, char out[16])
{
	unsigned dom = 0, bus, slot, func;
	int n = 0;

	for (const char *p = s; *p; p++)
		if (!strchr("0123456789abcdefABCDEF:.", *p))
			return -EINVAL;
	if (sscanf(s, "%x:%x:%x.%x%n", &dom, &bus, &slot, &func, &n) == 4 &&
	    !s[n]) {
		/* with a domain */
	} else if (dom = 0, n = 0,
		   sscanf(s, "%x:%x.%x%n", &bus, &slot, &func, &n) == 3 &&
		   !s[n]) {
		/* without */
	} else {
		return -EINVAL;
	}
	if (dom > 0xffff || bus > 0xff || slot > 0x1f || func > 7)
		return -EINVAL;
	snprintf(out, 16, "%04x:%02x:%02x.%x", dom, bus, slot, func);
	return 0;
}

/* The last component of the link BDF/NAME, or -errno (-ENOENT: no link). */
static int link_name(const char *bdf, const char *name, char *out, size_t n)
{
	char path[128], target[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s/%s", SYSFS_PCI, bdf, name);
	ssize_t len = readlink(path, target, sizeof(target) - 1);
	if (len < 0)
		return -errno;
	target[len] = 0;
	const char *base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= n)
		return -ENAMETOOLONG;
	strcpy(out, base);
	return 0;
}

/* Region info, and whether it carries a sparse-mmap capability. */
static int region_info(struct smq_vfio *v, unsigned index,
		       struct vfio_region_info *info, bool *sparse)
{
	memset(info, 0, sizeof(*info));
	info->argsz = sizeof(*info);
	info->index = index;
	*sparse = false;
	if (ioctl(v->device, VFIO_DEVICE_GET_REGION_INFO, info) < 0)
		return -errno;
	if (!(info->flags & VFIO_REGION_INFO_FLAG_CAPS) ||
	    info->argsz <= sizeof(*info))
		return 0;
	/* Again with room for the capability chain. */
	uint32_t argsz = info->argsz;
	struct vfio_region_info *full = calloc(1, argsz);
	if (!full)
		return -ENOMEM;
	full->argsz = argsz;
	full->index = index;
	if (ioctl(v->device, VFIO_DEVICE_GET_REGION_INFO, full) < 0) {
		int err = -errno;
		free(full);
		return err;
	}
	uint32_t off = full->cap_offset, hops = 0;
	while (off >= sizeof(*full) &&
	       off + sizeof(struct vfio_info_cap_header) <= argsz &&
	       hops++ < 64) {
		struct vfio_info_cap_header *h =
			(struct vfio_info_cap_header *)((char *)full + off);
		if (h->id == VFIO_REGION_INFO_CAP_SPARSE_MMAP)
			*sparse = true;
		off = h->next;
	}
	free(full);
	return 0;
}

static int read_regions(struct smq_vfio *v);

static int open_device(struct smq_vfio *v)
{
	char group_name[32], driver[64], path[64];
	struct stat st;
	int err;

	snprintf(path, sizeof(path), "%s/%s", SYSFS_PCI, v->bdf);
	if (stat(path, &st) < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	err = link_name(v->bdf, "iommu_group", group_name, sizeof(group_name));
	if (err == -ENOENT)
		return -EOPNOTSUPP;
	if (err)
		return err;
	err = link_name(v->bdf, "driver", driver, sizeof(driver));
	if (err == -ENOENT || (!err && strcmp(driver, "vfio-pci") != 0))
		return -EUNATCH;
	if (err)
		return err;

	/* A missing container is the modules' fault, a missing group node
	 * /dev's: two errnos, so that each can be explained. */
	if ((v->container = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC)) < 0)
		return errno == ENOENT ? -ENOPKG : -errno;
	if (ioctl(v->container, VFIO_GET_API_VERSION) != VFIO_API_VERSION)
		return -EPROTO;
	int type = VFIO_TYPE1v2_IOMMU;
	if (ioctl(v->container, VFIO_CHECK_EXTENSION, type) <= 0) {
		type = VFIO_TYPE1_IOMMU;
		if (ioctl(v->container, VFIO_CHECK_EXTENSION, type) <= 0)
			return -EPROTONOSUPPORT;
	}

	snprintf(path, sizeof(path), "/dev/vfio/%s", group_name);
	/* EBUSY: another open holds the group; ENOENT: no node for it */
	if ((v->group = open(path, O_RDWR | O_CLOEXEC)) < 0)
		return -errno;
	struct vfio_group_status status = { .argsz = sizeof(status) };
	if (ioctl(v->group, VFIO_GROUP_GET_STATUS, &status) < 0)
		return -errno;
	if (!(status.flags & VFIO_GROUP_FLAGS_VIABLE))
		return -EXDEV;
	if (ioctl(v->group, VFIO_GROUP_SET_CONTAINER, &v->container) < 0)
		return -errno;
	/* EPERM here: no interrupt remapping, and the backend insists. */
	if (ioctl(v->container, VFIO_SET_IOMMU, type) < 0)
		return -errno;
	if ((v->device = ioctl(v->group, VFIO_GROUP_GET_DEVICE_FD, v->bdf)) < 0) {
		v->device = -1;
		return -errno;
	}
	fcntl(v->device, F_SETFD, FD_CLOEXEC);
	return read_regions(v);
}

/* What the device file says of the device: its BARs and config space. */
static int read_regions(struct smq_vfio *v)
{
	struct vfio_device_info dinfo = { .argsz = sizeof(dinfo) };
	int err;

	if (ioctl(v->device, VFIO_DEVICE_GET_INFO, &dinfo) < 0)
		return -errno;
	if (!(dinfo.flags & VFIO_DEVICE_FLAGS_PCI) ||
	    dinfo.num_regions <= VFIO_PCI_CONFIG_REGION_INDEX)
		return -ENODEV;
	v->num_irqs = dinfo.num_irqs;

	for (unsigned i = 0; i < NBARS; i++) {
		struct vfio_region_info info;
		struct vfio_bar_state *b = &v->bar[i];
		if ((err = region_info(v, VFIO_PCI_BAR0_REGION_INDEX + i, &info,
				       &b->sparse)))
			return err;
		b->size = info.size;
		b->offset = info.offset;
		b->flags = info.flags;
	}
	struct vfio_region_info cfg;
	bool sparse;
	if ((err = region_info(v, VFIO_PCI_CONFIG_REGION_INDEX, &cfg, &sparse)))
		return err;
	v->config_offset = cfg.offset;
	return 0;
}

int smq_vfio_open(struct smq_vfio **out, const char *bdf)
{
	struct smq_vfio *v;
	int err;

	*out = NULL;
	if (!(v = calloc(1, sizeof(*v))))
		return -ENOMEM;
	v->container = v->group = v->device = -1;
	if ((err = canonical_bdf(bdf, v->bdf)) || (err = open_device(v))) {
		smq_vfio_close(v);
		return err;
	}
	*out = v;
	return 0;
}

int smq_vfio_adopt(struct smq_vfio **out, int device_fd, const char *bdf)
{
	struct smq_vfio *v;
	int err;

	*out = NULL;
	if (!(v = calloc(1, sizeof(*v))))
		return -ENOMEM;
	v->container = v->group = -1;
	v->adopted = true;
	if ((v->device = fcntl(device_fd, F_DUPFD_CLOEXEC, 0)) < 0)
		err = -errno;
	else if (!(err = canonical_bdf(bdf, v->bdf)))
		err = read_regions(v);
	if (err) {
		smq_vfio_close(v);
		return err;
	}
	*out = v;
	return 0;
}

int smq_vfio_device_fd(const struct smq_vfio *v)
{
	return v->device;
}

void smq_vfio_close(struct smq_vfio *v)
{
	if (!v)
		return;
	smq_vfio_msix_disable(v);
	for (unsigned i = 0; i < NBARS; i++)
		if (v->bar[i].map)
			munmap(v->bar[i].map, v->bar[i].map_len);
	/* The device first: the group will not leave its container while a
	 * device file is open, and closing the group unsets the container. */
	if (v->device >= 0)
		close(v->device);
	if (v->group >= 0)
		close(v->group);
	if (v->container >= 0)
		close(v->container);
	free(v);
}

const char *smq_vfio_bdf(const struct smq_vfio *v)
{
	return v->bdf;
}

/* The words of the causes vfio.h lists; the pci transport's explain
 * (smq_explain()) says them with what it finds of the device and its
 * group around them. */
const char *smq_vfio_explain(int err)
{
	switch (err) {
	case -EINVAL:
		return "not a PCI address ([dddd:]bb:ss.f)";
	case -ENODEV:
		return "no such PCI device";
	case -EOPNOTSUPP:
		return "the device has no IOMMU group: boot with an IOMMU "
		       "(intel_iommu=on or amd_iommu=on; VFIO's no-IOMMU "
		       "mode is not supported)";
	case -EUNATCH:
		return "the device is not bound to vfio-pci (write vfio-pci to "
		       "its driver_override, unbind it, then write its address "
		       "to /sys/bus/pci/drivers_probe)";
	case -ENOPKG:
		return "/dev/vfio/vfio does not exist: the vfio modules are not "
		       "loaded (modprobe vfio-pci)";
	case -ENOENT:
		return "the device's VFIO group has no node in /dev/vfio (/dev "
		       "not populated for it)";
	case -EPROTO:
		return "the kernel speaks another VFIO API version";
	case -EPROTONOSUPPORT:
		return "no type1 IOMMU backend (load vfio_iommu_type1)";
	case -EBUSY:
		return "the device's VFIO group is held by another open "
		       "(one process at a time)";
	case -EXDEV:
		return "the device's IOMMU group is not viable: another device "
		       "in it is bound to a host driver";
	case -EPERM:
		return "the IOMMU cannot remap interrupts (vfio_iommu_type1 "
		       "allow_unsafe_interrupts=1 accepts that)";
	case -EACCES:
		return "no permission to open the device's /dev/vfio group";
	default:
		return strerror(err < 0 ? -err : err);
	}
}

int smq_vfio_msix_count(struct smq_vfio *v)
{
	if (v->num_irqs <= VFIO_PCI_MSIX_IRQ_INDEX)
		return 0;
	struct vfio_irq_info irq = { .argsz = sizeof(irq),
				     .index = VFIO_PCI_MSIX_IRQ_INDEX };
	if (ioctl(v->device, VFIO_DEVICE_GET_IRQ_INFO, &irq) < 0)
		return -errno;
	if (!(irq.flags & VFIO_IRQ_INFO_EVENTFD))
		return 0;
	return irq.count > INT_MAX ? INT_MAX : (int)irq.count;
}

/* VFIO_DEVICE_SET_IRQS for MSI-X with N eventfds (N = 0: off). */
static int set_msix(struct smq_vfio *v, const int *fds, unsigned n)
{
	size_t argsz = sizeof(struct vfio_irq_set) + n * sizeof(int32_t);
	struct vfio_irq_set *set = calloc(1, argsz);
	if (!set)
		return -ENOMEM;
	set->argsz = (uint32_t)argsz;
	set->flags = (n ? VFIO_IRQ_SET_DATA_EVENTFD : VFIO_IRQ_SET_DATA_NONE) |
		     VFIO_IRQ_SET_ACTION_TRIGGER;
	set->index = VFIO_PCI_MSIX_IRQ_INDEX;
	set->start = 0;
	set->count = n;
	for (unsigned i = 0; i < n; i++)
		((int32_t *)set->data)[i] = fds[i];
	int err = ioctl(v->device, VFIO_DEVICE_SET_IRQS, set) < 0 ? -errno : 0;
	free(set);
	return err;
}

int smq_vfio_msix_enable(struct smq_vfio *v, unsigned n)
{
	int avail = smq_vfio_msix_count(v), err;

	if (avail < 0)
		return avail;
	if (v->adopted)
		return -EPERM;   /* the routing is its owner's */
	if (v->msix_fds)
		return -EALREADY;
	if (n == 0 || n > (unsigned)avail)
		return -ERANGE;
	if ((err = smq_vfio_enable(v, true)))
		return err;
	int *fds = malloc(n * sizeof(*fds));
	if (!fds)
		return -ENOMEM;
	unsigned made = 0;
	for (; made < n; made++) {
		fds[made] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (fds[made] < 0) {
			err = -errno;
			break;
		}
	}
	if (!err)
		err = set_msix(v, fds, n);
	if (err) {
		while (made > 0)
			close(fds[--made]);
		free(fds);
		return err;
	}
	v->msix_fds = fds;
	v->msix_n = n;
	return 0;
}

int smq_vfio_msix_disable(struct smq_vfio *v)
{
	if (!v->msix_fds)
		return 0;
	int err = set_msix(v, NULL, 0);
	for (unsigned i = 0; i < v->msix_n; i++)
		close(v->msix_fds[i]);
	free(v->msix_fds);
	v->msix_fds = NULL;
	v->msix_n = 0;
	return err;
}

int smq_vfio_msix_fd(const struct smq_vfio *v, unsigned vector)
{
	return vector < v->msix_n ? v->msix_fds[vector] : -EINVAL;
}

int smq_vfio_msix_wait(struct smq_vfio *v, int timeout_ms, uint64_t *counts)
{
	unsigned n = v->msix_n;
	if (!n)
		return -EINVAL;
	struct pollfd *pfd = calloc(n, sizeof(*pfd));
	if (!pfd)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		pfd[i].fd = v->msix_fds[i];
		pfd[i].events = POLLIN;
		counts[i] = 0;
	}
	int64_t end = timeout_ms < 0 ? 0 : smq_now_ms() + timeout_ms;
	int ready, left = timeout_ms;
	while ((ready = poll(pfd, n, left)) < 0 && errno == EINTR)
		if (timeout_ms >= 0 && (left = (int)(end - smq_now_ms())) < 0)
			left = 0;
	int fired = 0;
	if (ready < 0) {
		fired = -errno;
	} else {
		/* Read every vector, not only those poll saw: one call
		 * clears all that are pending. */
		for (unsigned i = 0; i < n; i++) {
			uint64_t c;
			if (read(pfd[i].fd, &c, sizeof(c)) == (ssize_t)sizeof(c)) {
				counts[i] = c;
				fired++;
			}
		}
	}
	free(pfd);
	return fired;
}
