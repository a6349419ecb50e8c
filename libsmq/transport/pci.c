/* The pci transport: a memory BAR of a PCI device (an NTB's window, QEMU's
 * ivshmem) mapped through sysfs.  pci:[domain:]bus:slot.func[/BAR]; without
 * /BAR, the largest prefetchable memory BAR, else the largest one.
 * A prefetchable BAR is mapped write-combining (resourceN_wc); either way
 * the window is device memory and takes the device fences (order.c).
 * Mapped through sysfs, there is no doorbell we can ring: a waiter naps
 * and looks again. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../format.h"

#define SYSFS_PCI "/sys/bus/pci/devices"

/* "[dddd:]bb:ss.f" into a canonical "dddd:bb:ss.f"; -EINVAL if malformed. */
static int parse_bdf(const char *s, char out[16])
{
	unsigned dom = 0, bus, slot, func;
	int n = 0;

	if (sscanf(s, "%x:%x:%x.%x%n", &dom, &bus, &slot, &func, &n) == 4 &&
	    !s[n]) {
		/* domain given */
	} else if (dom = 0, n = 0,
		   sscanf(s, "%x:%x.%x%n", &bus, &slot, &func, &n) == 3 && !s[n]) {
		/* no domain */
	} else {
		return -EINVAL;
	}
	for (const char *p = s; *p; p++)  /* hex digits and separators only */
		if (!strchr("0123456789abcdefABCDEF:.", *p))
			return -EINVAL;
	if (dom > 0xffff || bus > 0xff || slot > 0x1f || func > 7)
		return -EINVAL;
	snprintf(out, 16, "%04x:%02x:%02x.%x", dom, bus, slot, func);
	return 0;
}

static uint64_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size
							  : 0;
}

/* The BAR to use when none is named. */
static int default_bar(const char *dev)
{
	char path[128];
	int best = -1, best_wc = -1;
	uint64_t size = 0, size_wc = 0;

	for (int bar = 0; bar < 6; bar++) {
		snprintf(path, sizeof(path), "%s/%s/resource%d_wc", SYSFS_PCI,
			 dev, bar);
		uint64_t wc = file_size(path);
		snprintf(path, sizeof(path), "%s/%s/resource%d", SYSFS_PCI, dev,
			 bar);
		uint64_t plain = file_size(path);
		if (wc > size_wc) {
			size_wc = wc;
			best_wc = bar;
		}
		if (plain > size) {
			size = plain;
			best = bar;
		}
	}
	return best_wc >= 0 ? best_wc : best;
}

/* Turns decoding on when the device is off; needs root. */
static int enable_device(const char *dev)
{
	char path[128], c = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s/enable", SYSFS_PCI, dev);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;  /* nothing to say: try the mapping */
	ssize_t got = read(fd, &c, 1);
	close(fd);
	if (got == 1 && c != '0')
		return 0;
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	int err = write(fd, "1", 1) == 1 ? 0 : -errno;
	close(fd);
	return err;
}

static int pci_open_window(struct smq_map *m, const char *arg, unsigned flags)
{
	char spec[64], dev[16], path[160];
	const char *slash = strchr(arg, '/');
	int bar = -1, err;

	(void)flags;  /* a BAR exists or it does not: nothing to create */
	if (strlen(arg) >= sizeof(spec))
		return -EINVAL;
	snprintf(spec, sizeof(spec), "%.*s",
		 (int)(slash ? (size_t)(slash - arg) : strlen(arg)), arg);
	if (parse_bdf(spec, dev))
		return -EINVAL;
	if (slash) {
		char *end;
		long v = strtol(slash + 1, &end, 10);
		if (end == slash + 1 || *end || v < 0 || v > 5)
			return -EINVAL;
		bar = (int)v;
	}
	snprintf(path, sizeof(path), "%s/%s", SYSFS_PCI, dev);
	if (access(path, F_OK))
		return -ENODEV;
	/* Mapping a BAR is root's (the device's config file is root's to
	 * write): say so before anything else. */
	snprintf(path, sizeof(path), "%s/%s/config", SYSFS_PCI, dev);
	if (access(path, W_OK))
		return errno == ENOENT ? -ENODEV : -EACCES;
	/* A device a kernel driver owns is not ours to map: its BARs are
	 * registers, and reading them can have effects. */
	snprintf(path, sizeof(path), "%s/%s/driver", SYSFS_PCI, dev);
	if (access(path, F_OK) == 0)
		return -EBUSY;
	if (bar < 0 && (bar = default_bar(dev)) < 0)
		return -ENXIO;  /* a device without a memory BAR */
	snprintf(m->name, sizeof(m->name), "pci:%s/%d", dev, bar);
	if ((err = enable_device(dev)))
		return err;

	snprintf(path, sizeof(path), "%s/%s/resource%d_wc", SYSFS_PCI, dev, bar);
	bool wc = file_size(path) > 0;
	if (!wc)
		snprintf(path, sizeof(path), "%s/%s/resource%d", SYSFS_PCI, dev,
			 bar);
	if ((m->fd = open(path, O_RDWR | O_CLOEXEC | O_SYNC)) < 0)
		return errno == ENOENT ? -ENXIO : -errno;
	m->size = file_size(path);
	if (m->size == 0) {
		close(m->fd);
		m->fd = -1;
		return -ENXIO;  /* an unset BAR, or an I/O BAR */
	}
	void *p = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       m->fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		close(m->fd);
		m->fd = -1;
		return err;
	}
	m->base = p;
	m->order = &smq_order_device;
	smq_map_single(m);
	return 0;
}

static void pci_describe(struct smq_map *m, char *buf, size_t len)
{
	(void)m;
	snprintf(buf, len, "polling: no doorbell (a BAR through sysfs)");
}

const struct smq_transport smq_transport_pci = {
	.name = "pci",
	.help = "pci:[DOMAIN:]BUS:SLOT.FUNC[/BAR]  a PCI memory BAR through "
		"sysfs (an NTB window, QEMU's ivshmem BAR2; needs root); no "
		"doorbell: waiters poll",
	.open = pci_open_window,
	.map_layout = smq_map_fixed_layout,
	.close = smq_map_close,
	.describe = pci_describe,
};
