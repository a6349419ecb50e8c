/* The pci transport: a memory BAR of a PCI device (an NTB's window, QEMU's
 * ivshmem).  pci:[domain:]bus:slot.func[/BAR].
 *
 * A device bound to vfio-pci is opened through VFIO: its BARs mapped
 * through the device file, and, for a device the doorbell table knows
 * (doorbell_dev.c: ivshmem-doorbell), its doorbell rung through its
 * registers and its MSI-X interrupts taken as eventfds, one vector per
 * waiter.  A device with no driver is mapped through sysfs (resourceN, or
 * resourceN_wc for a prefetchable BAR): there is no doorbell we can ring
 * then, and a waiter naps and looks again.  Without /BAR: the doorbell
 * device's memory BAR, else the largest prefetchable memory BAR, else the
 * largest.  Either way the window is device memory and takes the device
 * fences (order.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "format/format.h"
#include "common.h"
#include "doorbell_dev.h"
#include "pci.h"
#include "vfio.h"


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

/* ---- through VFIO ---- */

struct pci_vfio {
	struct smq_vfio *v;
	struct smq_doorbell *db;        /* NULL: the device has none */
	struct smq_vector_pool vectors;
};

static bool bound_to_vfio(const char *dev)
{
	char driver[64];

	smq_pci_link_base(dev, "driver", driver, sizeof(driver));
	return !strcmp(driver, "vfio-pci");
}

/* The largest memory BAR VFIO offers. */
static int largest_vfio_bar(struct smq_vfio *v)
{
	uint64_t best_size = 0;
	int best = -ENXIO;

	for (unsigned bar = 0; bar < 6; bar++) {
		struct smq_vfio_bar info;
		if (!smq_vfio_bar_info(v, bar, &info) && info.size > best_size) {
			best_size = info.size;
			best = (int)bar;
		}
	}
	return best;
}

static void vfio_release(struct pci_vfio *pv)
{
	if (pv->db)
		smq_doorbell_close(pv->db);
	smq_vfio_close(pv->v);
	pthread_mutex_destroy(&pv->vectors.lock);
	free(pv);
}

static int open_vfio(struct smq_map *m, const char *dev, int bar)
{
	struct pci_vfio *pv = calloc(1, sizeof(*pv));
	void *base;
	int err;

	if (!pv)
		return -ENOMEM;
	smq_vectors_init(&pv->vectors, 0);
	if ((err = smq_vfio_open(&pv->v, dev)))
		goto fail;
	if ((err = smq_vfio_enable(pv->v, true)))
		goto fail;
	err = smq_doorbell_open(&pv->db, pv->v);
	if (err == -ENODEV || err == -EOPNOTSUPP)
		pv->db = NULL;  /* memory only: waiters poll */
	else if (err)
		goto fail;
	if (bar < 0)
		bar = pv->db ? smq_doorbell_type(pv->db)->shm_bar
			     : largest_vfio_bar(pv->v);
	if (bar < 0) {
		err = bar;
		goto fail;
	}
	/* No such BAR, or one VFIO will not map: not a memory BAR we can
	 * use, as through sysfs (vfio.h's ENOENT and EOPNOTSUPP are other
	 * causes). */
	err = smq_vfio_map_bar(pv->v, (unsigned)bar, &base, &m->size);
	if (err == -ENOENT || err == -EOPNOTSUPP)
		err = -ENXIO;
	if (err)
		goto fail;
	m->fixed_size = m->size;  /* a BAR: what the device decodes */
	/* Interrupts before anyone may ring: a ring to a vector not yet
	 * routed is dropped by the device. */
	if (pv->db) {
		int n = smq_doorbell_vectors(pv->db);
		if (n > 0 && (err = smq_vfio_msix_enable(pv->v, (unsigned)n)))
			goto fail;
		pv->vectors.n = n > 0 ? (unsigned)(n < 64 ? n : 64) : 0;
	}
	snprintf(m->name, sizeof(m->name), "pci:%s/%d", dev, bar);
	m->base = base;
	m->priv = pv;
	m->order = &smq_order_device;
	smq_map_single(m);
	return 0;
fail:
	vfio_release(pv);
	return err;
}

static int pci_open_window(struct smq_map *m, const char *arg, unsigned flags)
{
	char dev[16], path[160];
	int bar, err;

	(void)flags;  /* a BAR exists or it does not: nothing to create */
	if (smq_pci_parse_spec(arg, dev, &bar))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%s", SYSFS_PCI, dev);
	if (access(path, F_OK))
		return -ENODEV;
	/* Mapping a BAR is root's (the device's config file is root's to
	 * write): say so before anything else. */
	snprintf(path, sizeof(path), "%s/%s/config", SYSFS_PCI, dev);
	if (access(path, W_OK))
		return errno == ENOENT ? -ENODEV : -EACCES;
	if (bound_to_vfio(dev))
		return open_vfio(m, dev, bar);
	/* A device another kernel driver owns is not ours to map: its BARs
	 * are registers, and reading them can have effects. */
	snprintf(path, sizeof(path), "%s/%s/driver", SYSFS_PCI, dev);
	if (access(path, F_OK) == 0)
		return -EBUSY;
	if (bar < 0 && (bar = default_bar(dev)) < 0)
		return -ENXIO;  /* a device without a memory BAR */
	snprintf(m->name, sizeof(m->name), "pci:%s/%d", dev, bar);
	/* a monitor writes nothing, not even the device's enable: the
	 * boards turn decoding on */
	if (!m->readonly && (err = enable_device(dev)))
		return err;

	snprintf(path, sizeof(path), "%s/%s/resource%d_wc", SYSFS_PCI, dev, bar);
	bool wc = file_size(path) > 0;
	if (!wc)
		snprintf(path, sizeof(path), "%s/%s/resource%d", SYSFS_PCI, dev,
			 bar);
	if ((m->fd = open(path, (m->readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC |
			  O_SYNC)) < 0)
		return errno == ENOENT ? -ENXIO : -errno;
	m->size = file_size(path);
	if (m->size == 0) {
		close(m->fd);
		m->fd = -1;
		return -ENXIO;  /* an unset BAR, or an I/O BAR */
	}
	void *p = mmap(NULL, m->size,
		       PROT_READ | (m->readonly ? 0 : PROT_WRITE), MAP_SHARED,
		       m->fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		close(m->fd);
		m->fd = -1;
		return err;
	}
	m->base = p;
	m->fixed_size = m->size;  /* a BAR: what the device decodes */
	m->order = &smq_order_device;
	smq_map_single(m);
	return 0;
}

static void pci_close(struct smq_map *m)
{
	struct pci_vfio *pv = m->priv;

	if (!pv) {
		smq_map_close(m);
		return;
	}
	/* VFIO unmaps its BARs itself */
	m->base = NULL;
	m->nseg = 0;
	vfio_release(pv);
	m->priv = NULL;
	smq_map_close(m);
}

static int pci_bell_open(struct smq_map *m, struct smq_bell_addr *a)
{
	struct pci_vfio *pv = m->priv;

	if (!pv || !pv->db)
		return -EOPNOTSUPP;
	int v = smq_vectors_take(&pv->vectors);
	if (v < 0)
		return v;
	*a = (struct smq_bell_addr){ SMQ_BELL_IVSHMEM, (uint16_t)v,
				     smq_doorbell_id(pv->db), 0 };
	return 0;
}

static void pci_bell_close(struct smq_map *m, const struct smq_bell_addr *a)
{
	struct pci_vfio *pv = m->priv;
	if (pv && pv->db)
		smq_vectors_give(&pv->vectors, a->vector);
}

static uint32_t pci_ring_kinds(struct smq_map *m)
{
	struct pci_vfio *pv = m->priv;
	return pv && pv->db ? SMQ_BELL_BIT(SMQ_BELL_IVSHMEM) : 0;
}

/* The word first (a store to the BAR), then the doorbell register; the
 * receiver looks at its ring again when the interrupt comes, so even a
 * doorbell that overtakes the data costs a look, not a message. */
static void pci_ring(struct smq_map *m, const struct smq_bell_addr *a,
		     struct smq_far word, uint32_t value)
{
	struct pci_vfio *pv = m->priv;

	__atomic_store_n((uint32_t *)word.far_, value, __ATOMIC_RELAXED);
	m->order->publish();
	smq_doorbell_ring(pv->db, a->peer, a->vector);
}

static int pci_wait(struct smq_map *m, const struct smq_bell_addr *a,
		    const uint32_t *word, uint32_t seen,
		    const struct timespec *deadline)
{
	struct pci_vfio *pv = m->priv;
	int fd = smq_vfio_msix_fd(pv->v, a->vector);

	if (fd < 0)
		return fd;
	if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != seen)
		return 0;
	return smq_wait_eventfd(fd, deadline);
}

static void pci_describe(struct smq_map *m, char *buf, size_t len)
{
	struct pci_vfio *pv = m->priv;

	if (pv && pv->db)
		snprintf(buf, len, "%s doorbell (MSI-X, peer %u)",
			 smq_doorbell_type(pv->db)->name,
			 smq_doorbell_id(pv->db));
	else if (pv)
		snprintf(buf, len, "polling: no doorbell this device rings");
	else
		snprintf(buf, len, "polling: no doorbell (a BAR through sysfs)");
}

const struct smq_transport smq_transport_pci = {
	.name = "pci",
	.help = "pci:[DOMAIN:]BUS:SLOT.FUNC[/BAR]  a PCI memory BAR (an NTB "
		"window, QEMU's ivshmem BAR2; needs root): through VFIO with "
		"doorbells when the device is bound to vfio-pci, else through "
		"sysfs, and waiters poll",
	.open = pci_open_window,
	.map_layout = smq_map_fixed_layout,
	.close = pci_close,
	.explain = smq_pci_explain,
	.bell_open = pci_bell_open,
	.bell_close = pci_bell_close,
	.ring_kinds = pci_ring_kinds,
	.ring = pci_ring,
	.wait = pci_wait,
	.describe = pci_describe,
};
