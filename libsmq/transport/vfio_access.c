/* A PCI device's BARs and config space through VFIO (see vfio.h), once
 * vfio.c has opened it: a BAR mapped, or read and written one access at
 * a time through the device file where VFIO will not map it; config
 * space as vfio-pci presents it, its capabilities and its command
 * register. */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/vfio.h>
#include "vfio.h"
#include "vfio_int.h"

#define PCI_COMMAND 0x04
#define PCI_COMMAND_MEMORY 0x2
#define PCI_COMMAND_MASTER 0x4
#define PCI_STATUS 0x06
#define PCI_STATUS_CAP_LIST 0x10
#define PCI_CAPABILITY_LIST 0x34

int smq_vfio_bar_info(struct smq_vfio *v, unsigned bar,
		      struct smq_vfio_bar *info)
{
	if (bar >= NBARS)
		return -EINVAL;
	const struct vfio_bar_state *b = &v->bar[bar];
	info->size = b->size;
	info->mappable = b->size && (b->flags & VFIO_REGION_INFO_FLAG_MMAP) &&
			 !b->sparse;
	info->readable = b->flags & VFIO_REGION_INFO_FLAG_READ;
	info->writable = b->flags & VFIO_REGION_INFO_FLAG_WRITE;
	return 0;
}

int smq_vfio_map_bar(struct smq_vfio *v, unsigned bar, void **addr,
		     uint64_t *size)
{
	struct smq_vfio_bar info;
	int err = smq_vfio_bar_info(v, bar, &info);

	if (err)
		return err;
	if (!info.size)
		return -ENOENT;
	struct vfio_bar_state *b = &v->bar[bar];
	if (!b->map) {
		if (!info.mappable)
			return -EOPNOTSUPP;
		/* A BAR smaller than a page is mapped as its whole page:
		 * vfio-pci allows that only when the page holds nothing
		 * else. */
		long page = sysconf(_SC_PAGESIZE);
		uint64_t len = (b->size + page - 1) & ~(uint64_t)(page - 1);
		if (len > SIZE_MAX)
			return -EFBIG;
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			       v->device, (off_t)b->offset);
		if (p == MAP_FAILED)
			return errno == EINVAL ? -EOPNOTSUPP : -errno;
		b->map = p;
		b->map_len = len;
	}
	*addr = b->map;
	if (size)
		*size = b->size;
	return 0;
}

static int bar_check(struct smq_vfio *v, unsigned bar, uint64_t off,
		     size_t len)
{
	if (bar >= NBARS || (len != 1 && len != 2 && len != 4 && len != 8) ||
	    off % len)
		return -EINVAL;
	if (!v->bar[bar].size)
		return -ENOENT;
	if (off > v->bar[bar].size || len > v->bar[bar].size - off)
		return -ERANGE;
	return 0;
}

int smq_vfio_bar_read(struct smq_vfio *v, unsigned bar, uint64_t off,
		      void *val, size_t len)
{
	int err = bar_check(v, bar, off, len);
	if (err)
		return err;
	const struct vfio_bar_state *b = &v->bar[bar];
	if (b->map) {
		const volatile char *p = (const volatile char *)b->map + off;
		switch (len) {
		case 1: *(uint8_t *)val = *(const volatile uint8_t *)p; break;
		case 2: *(uint16_t *)val = *(const volatile uint16_t *)p; break;
		case 4: *(uint32_t *)val = *(const volatile uint32_t *)p; break;
		default: *(uint64_t *)val = *(const volatile uint64_t *)p; break;
		}
		return 0;
	}
	/* vfio-pci turns an aligned pread of 1, 2, 4 or 8 bytes into one
	 * access of that width. */
	ssize_t got = pread(v->device, val, len, (off_t)(b->offset + off));
	return got == (ssize_t)len ? 0 : got < 0 ? -errno : -EIO;
}

int smq_vfio_bar_write(struct smq_vfio *v, unsigned bar, uint64_t off,
		       const void *val, size_t len)
{
	int err = bar_check(v, bar, off, len);
	if (err)
		return err;
	const struct vfio_bar_state *b = &v->bar[bar];
	if (b->map) {
		volatile char *p = (volatile char *)b->map + off;
		switch (len) {
		case 1: *(volatile uint8_t *)p = *(const uint8_t *)val; break;
		case 2: *(volatile uint16_t *)p = *(const uint16_t *)val; break;
		case 4: *(volatile uint32_t *)p = *(const uint32_t *)val; break;
		default: *(volatile uint64_t *)p = *(const uint64_t *)val; break;
		}
		return 0;
	}
	ssize_t put = pwrite(v->device, val, len, (off_t)(b->offset + off));
	return put == (ssize_t)len ? 0 : put < 0 ? -errno : -EIO;
}

int smq_vfio_config_read(struct smq_vfio *v, unsigned off, void *buf,
			 size_t len)
{
	ssize_t got = pread(v->device, buf, len, (off_t)(v->config_offset + off));
	return got == (ssize_t)len ? 0 : got < 0 ? -errno : -EIO;
}

int smq_vfio_config_write(struct smq_vfio *v, unsigned off, const void *buf,
			  size_t len)
{
	ssize_t put = pwrite(v->device, buf, len,
			     (off_t)(v->config_offset + off));
	return put == (ssize_t)len ? 0 : put < 0 ? -errno : -EIO;
}

int smq_vfio_find_cap(struct smq_vfio *v, uint8_t cap)
{
	uint16_t status;
	uint8_t pos;
	int err;

	if ((err = smq_vfio_config_read(v, PCI_STATUS, &status, 2)))
		return err;
	if (!(status & PCI_STATUS_CAP_LIST))
		return -ENOENT;
	if ((err = smq_vfio_config_read(v, PCI_CAPABILITY_LIST, &pos, 1)))
		return err;
	/* 48 capabilities fit in the 192 bytes after the header: a longer
	 * walk is a loop. */
	for (int hops = 0; pos >= 0x40 && hops < 48; hops++) {
		uint8_t hdr[2];
		pos &= ~3u;
		if ((err = smq_vfio_config_read(v, pos, hdr, 2)))
			return err;
		if (hdr[0] == cap)
			return pos;
		pos = hdr[1];
	}
	return -ENOENT;
}

int smq_vfio_enable(struct smq_vfio *v, bool bus_master)
{
	uint16_t cmd, want;
	int err;

	if ((err = smq_vfio_config_read(v, PCI_COMMAND, &cmd, 2)))
		return err;
	want = cmd | PCI_COMMAND_MEMORY | (bus_master ? PCI_COMMAND_MASTER : 0);
	if (want == cmd)
		return 0;
	return smq_vfio_config_write(v, PCI_COMMAND, &want, 2);
}
