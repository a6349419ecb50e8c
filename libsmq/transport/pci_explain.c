/* The pci transport's words for errors (its explain operation).
 *
 * An errno says little alone: EBUSY is a kernel driver's device through
 * sysfs but a held VFIO group through VFIO, EACCES a user who is not root
 * or a /dev/vfio node closed to root.  So explain looks at the device as
 * it is now: whether it exists, its driver (which tells the path open
 * took), its IOMMU group and who holds the group's node. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pci.h"
#include "vfio.h"

struct pci_state {
	const char *arg;        /* as the spec gave it */
	char dev[16];           /* canonical address */
	int bar;                /* -1: none named */
	bool exists;
	char driver[64];        /* "": none */
	char group[32];         /* "": no IOMMU group */
};

/* Whether fd directory dir (/proc/PID/fd) holds node open (exact), or a
 * file whose path has node in it. */
static bool holds(const char *dir, const char *node, bool exact)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		char path[320], target[256];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = 0;
		found = n > 0 && (exact ? !strcmp(target, node)
					: strstr(target, node) != NULL);
	}
	closedir(d);
	return found;
}

/* Who holds the group's node open: a pid (its name in comm), 0 nobody we
 * can see, -1 this process. */
static long group_holder(const char *group, char *comm, size_t n)
{
	char node[64], dir[64];
	DIR *proc;
	struct dirent *e;
	long pid = 0;

	snprintf(node, sizeof(node), "/dev/vfio/%s", group);
	if (holds("/proc/self/fd", node, true))
		return -1;
	if (!(proc = opendir("/proc")))
		return 0;
	while (!pid && (e = readdir(proc))) {
		char *end;
		long p = strtol(e->d_name, &end, 10);
		if (*end || p <= 0 || p == (long)getpid())
			continue;
		snprintf(dir, sizeof(dir), "/proc/%ld/fd", p);
		if (holds(dir, node, true))
			pid = p;
	}
	closedir(proc);
	if (pid > 0) {
		snprintf(dir, sizeof(dir), "/proc/%ld/comm", pid);
		int fd = open(dir, O_RDONLY | O_CLOEXEC);
		ssize_t got = fd >= 0 ? read(fd, comm, n - 1) : -1;
		comm[got > 0 ? got - (comm[got - 1] == '\n') : 0] = 0;
		if (fd >= 0)
			close(fd);
	}
	return pid;
}

/* This process has the device open (its VFIO group, or a BAR through
 * sysfs): then an error is not one of opening it, but of the window. */
static bool we_hold(const struct pci_state *d)
{
	char node[64];

	if (*d->group) {
		snprintf(node, sizeof(node), "/dev/vfio/%s", d->group);
		if (holds("/proc/self/fd", node, true))
			return true;
	}
	snprintf(node, sizeof(node), "/%s/resource", d->dev);
	return holds("/proc/self/fd", node, false);
}

/* A cause of vfio.h, with the device, its group and who holds it. */
static bool vfio_words(const struct pci_state *d, int err, char *buf,
		       size_t len)
{
	char comm[32] = "", group[96] = "", who[96] = "";

	if (*d->group)
		snprintf(group, sizeof(group), " (VFIO group %s, /dev/vfio/%s)",
			 d->group, d->group);
	if (err == -EBUSY && *d->group) {
		long pid = group_holder(d->group, comm, sizeof(comm));
		if (pid < 0)
			return false;  /* ours: the busy is the window's */
		if (pid > 0)
			snprintf(who, sizeof(who), "; process %ld (%s) holds it",
				 pid, comm);
	}
	if (err == -EUNATCH && d->exists)
		snprintf(who, sizeof(who), "; its driver is %s",
			 *d->driver ? d->driver : "none");
	snprintf(buf, len, "window pci:%s: VFIO cannot open %s%s: %s%s", d->arg,
		 d->dev, group, smq_vfio_explain(err), who);
	return true;
}

/* EPERM through sysfs: root was refused the BAR by the kernel itself. */
static bool sysfs_eperm_words(const struct pci_state *d, char *buf,
			      size_t len)
{
	char mode[128] = "";
	int fd = open("/sys/kernel/security/lockdown", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, mode, sizeof(mode) - 1) : -1;

	if (fd >= 0)
		close(fd);
	mode[n > 0 ? n : 0] = 0;
	bool locked = n > 0 && !strstr(mode, "[none]");
	snprintf(buf, len, "window pci:%s: the kernel refused to map a BAR of "
		 "%s%s", d->arg, d->dev, locked ? " (kernel lockdown is on: it "
		 "forbids mapping PCI BARs from user space)" : "");
	return true;
}

static bool device_words(const struct pci_state *d, int err, char *buf,
			 size_t len)
{
	bool vfio = !strcmp(d->driver, "vfio-pci");

	switch (-err) {
	case ENODEV:
		if (d->exists && vfio)
			return vfio_words(d, err, buf, len);
		snprintf(buf, len, "window pci:%s: no PCI device at %s", d->arg,
			 d->dev);
		return true;
	case ENXIO:
		if (d->bar < 0)
			snprintf(buf, len, "window pci:%s: %s has no memory BAR",
				 d->arg, d->dev);
		else
			snprintf(buf, len, "window pci:%s: BAR %d of %s is not a "
				 "memory BAR that can be mapped (unset, an I/O "
				 "BAR, or one VFIO keeps for the MSI-X table)",
				 d->arg, d->bar, d->dev);
		return true;
	case ENOSPC:
		snprintf(buf, len, "window pci:%s: the BAR is smaller than the "
			 "window's layout", d->arg);
		return true;
	case EBUSY:
		if (!*d->driver || vfio)
			return vfio_words(d, err, buf, len);
		snprintf(buf, len, "window pci:%s: %s is bound to a kernel "
			 "driver, %s, whose device it is: unbind it to map its "
			 "BAR through sysfs, or bind it to vfio-pci for "
			 "doorbells", d->arg, d->dev, d->driver);
		return true;
	default:
		return false;
	}
}

/* Opening went through sysfs when the device exists and is not
 * vfio-pci's; else the errors of vfio.h are VFIO's. */
bool smq_pci_explain(const char *arg, int err, char *buf, size_t len)
{
	struct pci_state d = { .arg = arg };
	char path[160];

	if (smq_pci_parse_spec(arg, d.dev, &d.bar)) {
		snprintf(buf, len, "bad window spec 'pci:%s': pci:[DOMAIN:]BUS:"
			 "SLOT.FUNC[/BAR] in hex, BAR 0 to 5", arg);
		return true;
	}
	snprintf(path, sizeof(path), "%s/%s", SYSFS_PCI, d.dev);
	d.exists = access(path, F_OK) == 0;
	smq_pci_link_base(d.dev, "driver", d.driver, sizeof(d.driver));
	smq_pci_link_base(d.dev, "iommu_group", d.group, sizeof(d.group));
	bool sysfs = d.exists && strcmp(d.driver, "vfio-pci");

	if (d.exists && err != -ENOSPC && we_hold(&d))
		return false;
	if (device_words(&d, err, buf, len))
		return true;
	switch (-err) {
	case EACCES:
		snprintf(path, sizeof(path), "%s/%s/config", SYSFS_PCI, d.dev);
		if (d.exists && access(path, W_OK) < 0 && errno == EACCES) {
			snprintf(buf, len, "window pci:%s: permission denied: "
				 "mapping a PCI BAR needs root", arg);
			return true;
		}
		return vfio_words(&d, err, buf, len);
	case EPERM:
		return sysfs ? sysfs_eperm_words(&d, buf, len)
			     : vfio_words(&d, err, buf, len);
	case EOPNOTSUPP:  /* VFIO's when the device has no IOMMU group */
		if (d.exists && *d.group)
			return false;
		return vfio_words(&d, err, buf, len);
	case EUNATCH:
		return vfio_words(&d, err, buf, len);
	case ENOPKG: case ENOENT: case EPROTO:
	case EPROTONOSUPPORT: case EXDEV:
		return !sysfs && vfio_words(&d, err, buf, len);
	default:
		return false;
	}
}
