/* The dax transport: a device-DAX character device (/dev/daxX.Y), the
 * memory Linux makes of CXL memory or persistent memory, which several
 * hosts may map at once (a multi-headed CXL memory device, a pool behind a
 * CXL switch).  dax:PATH, or dax@OFFSET:PATH for a window that begins
 * OFFSET bytes into the device.
 *
 * Not a file: the device maps only whole pages of its alignment (2 MiB or
 * 1 GiB, in sysfs), at offsets and lengths that are multiples of it, and
 * refuses any other mmap(2) with EINVAL.  So the window is mapped a prefix
 * at a time, rounded up to the alignment: one page to read the superblock,
 * then as many as the layout needs; a window smaller than the device uses
 * the device's first bytes (past OFFSET), and the rest is left alone.
 *
 * The memory is taken as coherent between the hosts that map it (CXL
 * memory with hardware coherence, QEMU's shared memory between guests):
 * the barriers are C11 fences.  Hosts that share it without hardware
 * coherence would need cache write-backs and drops in publish and consume;
 * this transport does not do them.  There is no doorbell one host can ring
 * for another here: waiters poll. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "format/format.h"
#include "common.h"

/* What sysfs says of the device at path. */
struct dax_dev {
	char dir[PATH_MAX];     /* its sysfs directory */
	uint64_t size, align;   /* 0: not said */
	bool chr, dax;          /* a character device; of the dax bus */
	bool exists;
};

/* The number in file dir/name, 0 if there is none. */
static uint64_t read_u64(const char *dir, const char *name)
{
	char path[PATH_MAX + 32], buf[32];
	unsigned long long v = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	if (sscanf(buf, "%llu", &v) != 1)
		return 0;
	return v;
}

/* The device at path as sysfs (under root, "/sys") shows it: found by its
 * numbers (/sys/dev/char/MAJ:MIN), which a renamed node or a link in /dev
 * keeps.  The alignment is the device's own (Linux 5.10 on) or else its
 * region's. */
static int dax_look(const char *root, const char *path, struct dax_dev *d)
{
	char link[PATH_MAX + 48], target[PATH_MAX];
	struct stat st;

	memset(d, 0, sizeof(*d));
	if (stat(path, &st) < 0)
		return -errno;
	d->exists = true;
	if (!S_ISCHR(st.st_mode))
		return -ENODEV;
	d->chr = true;
	snprintf(d->dir, sizeof(d->dir), "%s/dev/char/%u:%u", root,
		 major(st.st_rdev), minor(st.st_rdev));
	snprintf(link, sizeof(link), "%s/subsystem", d->dir);
	ssize_t n = readlink(link, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = 0;
	const char *sub = strrchr(target, '/');
	d->dax = n > 0 && !strcmp(sub ? sub + 1 : target, "dax");
	if (!d->dax)
		return -ENODEV;
	d->size = read_u64(d->dir, "size");
	d->align = read_u64(d->dir, "align");
	if (!d->align)
		d->align = read_u64(d->dir, "../dax_region/align");
	/* a power of two, a whole number of pages: else we cannot map by it */
	if (!d->size || !d->align || d->align & (d->align - 1) ||
	    d->align % (uint64_t)sysconf(_SC_PAGESIZE))
		return -ENOTSUP;
	return 0;
}

static uint64_t round_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) / align * align;
}

/* Maps len bytes of the window (a multiple of the alignment), replacing
 * the mapping there was. */
static int dax_map(struct smq_map *m, uint64_t len)
{
	void *p = mmap(NULL, len, PROT_READ | (m->readonly ? 0 : PROT_WRITE),
		       MAP_SHARED, m->fd, (off_t)m->offset);

	if (p == MAP_FAILED)
		return -errno;
	smq_map_retire(m, m->base, m->size);
	m->base = p;
	m->size = len;
	smq_map_single(m);
	return 0;
}

/* The transport's own state: the page size it maps by. */
struct dax_priv {
	uint64_t align;
};

int smq_dax_open_under(struct smq_map *m, const char *path, const char *root)
{
	struct dax_priv *dp;
	struct dax_dev d;
	int err;

	if (!*path)
		return -EINVAL;
	snprintf(m->name, sizeof(m->name), "dax:%s", path);
	if ((err = dax_look(root, path, &d)))
		return err;
	/* the device maps from multiples of its alignment only: refused
	 * here, with the reason (explain), not by mmap's bare EINVAL */
	if (m->offset % d.align)
		return -EINVAL;
	if (m->offset >= d.size)
		return -ENOSPC;
	if (!(dp = malloc(sizeof(*dp))))
		return -ENOMEM;
	dp->align = d.align;
	m->fd = open(path, (m->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (m->fd < 0) {
		free(dp);
		return -errno;
	}
	m->priv = dp;
	m->fixed_size = d.size - m->offset;
	m->order = &smq_order_c11;
	/* a device may hold someone's data: init overwrites only a window */
	m->user_data = true;
	/* one page first: enough for the superblock of any window */
	if ((err = dax_map(m, d.align))) {
		close(m->fd);
		m->fd = -1;
		free(dp);
		m->priv = NULL;
	}
	return err;
}

static int dax_open(struct smq_map *m, const char *path, unsigned flags)
{
	(void)flags;  /* a device exists or it does not: nothing to create */
	return smq_dax_open_under(m, path, "/sys");
}

/* The layout's bytes, rounded up to whole pages of the device. */
static int dax_map_layout(struct smq_map *m, const struct smq_layout *l,
			  bool grow)
{
	const struct dax_priv *dp = m->priv;

	if (l->size > m->fixed_size)
		return grow ? -ENOSPC : -SMQ_ETOOSMALL;
	uint64_t len = round_up(l->size, dp->align);
	if (len > m->size) {
		int err = dax_map(m, len);
		if (err)
			return err;
	}
	smq_map_single(m);
	return 0;
}

static void dax_close(struct smq_map *m)
{
	free(m->priv);
	m->priv = NULL;
	smq_map_close(m);
}

/* ---- words for errors (explain) ---- */

static void size_words(uint64_t v, char *buf, size_t len)
{
	static const char *const unit[] = { "bytes", "KiB", "MiB", "GiB",
					    "TiB" };
	unsigned u = 0;

	while (u < 4 && v && !(v & 1023)) {
		v >>= 10;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 " %s", v, unit[u]);
}

bool smq_dax_explain_under(const char *path, uint64_t offset, int err,
			   char *buf, size_t len, const char *root)
{
	struct dax_dev d;
	char a[32], b[32];
	int look = dax_look(root, path, &d);

	if (!*path) {
		snprintf(buf, len, "bad window spec 'dax:': it names no device "
			 "(dax:/dev/daxX.Y)");
		return true;
	}
	if (look == -ENOENT) {
		snprintf(buf, len, "window dax:%s: no such device (device-DAX "
			 "devices are /dev/daxX.Y, made with ndctl or daxctl)",
			 path);
		return true;
	}
	if (look == -ENODEV) {
		snprintf(buf, len, "window dax:%s: not a device-DAX device (%s)",
			 path, d.chr ? "a character device of another kind"
			 : "not a character device; file: maps files");
		return true;
	}
	if (look == -ENOTSUP) {
		snprintf(buf, len, "window dax:%s: sysfs (%s) does not give "
			 "the device's size and alignment", path, d.dir);
		return true;
	}
	if (look)
		return false;
	size_words(d.align, a, sizeof(a));
	size_words(offset, b, sizeof(b));
	switch (-err) {
	case EINVAL:
		if (!(offset % d.align))
			return false;
		snprintf(buf, len, "window dax:%s: the offset, %s, is not a "
			 "multiple of the device's alignment, %s: the device "
			 "maps whole pages of %s only", path, b, a, a);
		return true;
	case ENOSPC:
	case SMQ_ETOOSMALL:
		size_words(d.size, a, sizeof(a));
		snprintf(buf, len, "window dax:%s: the device holds %s%s%s, "
			 "less than the window's layout", path, a,
			 offset ? " and the window begins at " : "",
			 offset ? b : "");
		return true;
	case EACCES:
		snprintf(buf, len, "window dax:%s: permission denied: the "
			 "device node is root's unless its mode says otherwise",
			 path);
		return true;
	default:
		return false;
	}
}

static void dax_describe(struct smq_map *m, char *buf, size_t len)
{
	(void)m;
	snprintf(buf, len, "polling: no doorbell (device-DAX memory)");
}

static bool dax_explain(const char *path, uint64_t offset, int err, char *buf,
			size_t len)
{
	return smq_dax_explain_under(path, offset, err, buf, len, "/sys");
}

const struct smq_transport smq_transport_dax = {
	.name = "dax",
	.help = "dax:PATH    a device-DAX device (/dev/daxX.Y: CXL or persistent "
		"memory) that hosts share coherently, mapped in pages of its "
		"alignment; dax@OFFSET:PATH begins OFFSET into it (a multiple "
		"of the alignment); waiters poll",
	.takes_offset = true,
	.open = dax_open,
	.map_layout = dax_map_layout,
	.close = dax_close,
	.explain_at = dax_explain,
	.describe = dax_describe,
};
