/* probes: what Linux's sysfs says of a PCI device beyond its config space:
 * its AER counters, the driver bound to it, its IOMMU group and the
 * devices in that group, its BARs as the kernel placed them.  Read under
 * a root directory: "/sys" on the live system, a recorded tree in tests
 * (the way a dump stands in for config space).  Plain files only: libpci
 * reads config space, and none of these are there. */
#include <errno.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "probe.h"

#define DEVICES "/bus/pci/devices"

static const char *root_of(const char *root)
{
	return root && *root ? root : "/sys";
}

static FILE *open_attr(const char *root, const char *bdf, const char *attr)
{
	char path[512];

	snprintf(path, sizeof(path), "%s" DEVICES "/%s/%s", root_of(root), bdf,
		 attr);
	return fopen(path, "re");
}

bool probe_sysfs_has(const char *root, const char *bdf)
{
	char path[512];

	snprintf(path, sizeof(path), "%s" DEVICES "/%s", root_of(root), bdf);
	return access(path, F_OK) == 0;
}

/* One aer_dev_* file: "NAME COUNT" lines, the total among them under
 * TOTAL_ERR_*; the counts that are not 0 named in words. */
static int read_aer_file(FILE *f, uint64_t *total, char *named, size_t n)
{
	char line[160], name[96];
	uint64_t v, sum = 0;
	bool have_total = false;
	size_t used = 0;

	named[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%95s %" SCNu64, name, &v) != 2)
			continue;
		if (!strncmp(name, "TOTAL_", 6)) {
			*total = v;
			have_total = true;
			continue;
		}
		sum += v;
		if (v && used < n)
			used += (size_t)snprintf(named + used, n - used,
						 "%s%s %" PRIu64, used ? ", " : "",
						 name, v);
	}
	if (!have_total)
		*total = sum;
	return 0;
}

int probe_sysfs_aer(const char *root, const char *bdf, struct probe_aer *out)
{
	static const char *const files[PROBE_AER_KINDS] = {
		"aer_dev_correctable", "aer_dev_nonfatal", "aer_dev_fatal",
	};

	memset(out, 0, sizeof(*out));
	if (!probe_sysfs_has(root, bdf))
		return -ENOENT;
	for (int k = 0; k < PROBE_AER_KINDS; k++) {
		FILE *f = open_attr(root, bdf, files[k]);
		if (!f)
			continue;
		out->present[k] = true;
		read_aer_file(f, &out->total[k], out->named[k],
			      sizeof(out->named[k]));
		fclose(f);
	}
	return 0;
}

/* The last part of a symbolic link's target ("vfio-pci" of
 * ../../../bus/pci/drivers/vfio-pci), or "" when there is none. */
static int link_name(const char *root, const char *bdf, const char *attr,
		     char *buf, size_t n)
{
	char path[512], target[512];
	ssize_t len;

	buf[0] = 0;
	if (!probe_sysfs_has(root, bdf))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s" DEVICES "/%s/%s", root_of(root), bdf,
		 attr);
	len = readlink(path, target, sizeof(target) - 1);
	if (len < 0)
		return errno == ENOENT ? 0 : -errno;
	target[len] = 0;
	const char *slash = strrchr(target, '/');
	snprintf(buf, n, "%s", slash ? slash + 1 : target);
	return 0;
}

int probe_sysfs_driver(const char *root, const char *bdf, char *buf, size_t n)
{
	return link_name(root, bdf, "driver", buf, n);
}

int probe_sysfs_iommu_group(const char *root, const char *bdf, char *buf,
			    size_t n)
{
	return link_name(root, bdf, "iommu_group", buf, n);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

int probe_sysfs_group_devices(const char *root, const char *group,
			      char (*bdfs)[16], int max)
{
	char path[512];
	struct dirent *e;
	int n = 0;

	snprintf(path, sizeof(path), "%s/kernel/iommu_groups/%s/devices",
		 root_of(root), group);
	DIR *d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n < max)
			snprintf(bdfs[n], sizeof(bdfs[0]), "%.15s", e->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(bdfs, (size_t)(n < max ? n : max), sizeof(bdfs[0]),
		      by_name);
	return n;
}

/* The resource file: a line per resource, "start end flags" in hex; the
 * first six are the BARs.  An unassigned one is all zeros. */
int probe_sysfs_bar(const char *root, const char *bdf, int bar,
		    uint64_t *start, uint64_t *size)
{
	char line[160];
	uint64_t s, e, fl;
	int i = 0, err = -ENOENT;

	*start = *size = 0;
	FILE *f = open_attr(root, bdf, "resource");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (i++ != bar)
			continue;
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %" SCNx64, &s, &e,
			   &fl) == 3 && e > s) {
			*start = s;
			*size = e - s + 1;
			err = 0;
		}
		break;
	}
	fclose(f);
	return err;
}

/* cxl_pci makes the memory device a child of the PCI device; a root
 * decoder (of the platform's CXL windows) has cap_pmem, the others not. */
void probe_sysfs_cxl(const char *root, const char *bdf, struct probe_cxl *x)
{
	char path[512];
	struct dirent *e;
	DIR *d;

	x->memdev[0] = x->decoder[0] = 0;
	x->decoders = 0;
	snprintf(path, sizeof(path), "%s" DEVICES "/%s", root_of(root), bdf);
	if ((d = opendir(path))) {
		while ((e = readdir(d)))
			if (!strncmp(e->d_name, "mem", 3) &&
			    e->d_name[3] >= '0' && e->d_name[3] <= '9') {
				snprintf(x->memdev, sizeof(x->memdev), "%.15s",
					 e->d_name);
				break;
			}
		closedir(d);
	}
	snprintf(path, sizeof(path), "%s/bus/cxl/devices", root_of(root));
	if (!(d = opendir(path)))
		return;
	while ((e = readdir(d))) {
		char attr[800], v[8] = "";
		if (strncmp(e->d_name, "decoder", 7))
			continue;
		snprintf(attr, sizeof(attr), "%s/%s/cap_pmem", path, e->d_name);
		FILE *f = fopen(attr, "re");
		if (!f)
			continue;  /* not a root decoder */
		bool pmem = fgets(v, sizeof(v), f) && v[0] == '1';
		fclose(f);
		if (!pmem)
			continue;
		if (!x->decoders++)
			snprintf(x->decoder, sizeof(x->decoder), "%.63s",
				 e->d_name);
	}
	closedir(d);
	if (x->decoders != 1)
		x->decoder[0] = 0;
}
