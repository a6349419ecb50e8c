/* The VFIO and doorbell modules without a device bound to vfio-pci (the
 * rest runs in QEMU guests: t_qemu_vfio.sh): malformed and absent
 * addresses, the error a real device of this host gets (no IOMMU group, or
 * not bound to vfio-pci), one explanation per cause, and the table of
 * doorbell devices. */
#include <dirent.h>
#include <limits.h>
#include "testlib.h"
#include "transport/doorbell_dev.h"
#include "transport/vfio.h"

/* the least count of checks a run makes (50 as root here; fewer
 * where a part needs root or a device) */
TEST_FLOOR(40);

static int open_err(const char *bdf)
{
	struct smq_vfio *v = (struct smq_vfio *)1;
	int err = smq_vfio_open(&v, bdf);
	if (err)
		CHECK(v == NULL);
	else
		smq_vfio_close(v);
	return err;
}

static void addresses(void)
{
	const char *bad[] = { "", "x", "00:03", "00:03.0/2", "0000:00:03.8",
			      "00:20.0", "1:2:3:4.5", "10000:00:00.0",
			      "00:100.0", "-1:00.0", " 00:03.0", "00:03.0 " };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (open_err(bad[i]) != -EINVAL)
			FAIL("\"%s\" was taken for a PCI address", bad[i]);
	/* A well-formed address with nothing there. */
	if (access("/sys/bus/pci/devices/0000:ff:1f.7", F_OK) == 0)
		printf("0000:ff:1f.7 exists here: absent-device case skipped\n");
	else
		EXPECT(open_err("ff:1f.7"), -ENODEV);
}

/* Each PCI device of this host gets the error its sysfs entry predicts:
 * no iommu_group link, EOPNOTSUPP; a group but another driver or none,
 * EUNATCH.  A device bound to vfio-pci is left alone. */
static int host_devices(void)
{
	DIR *d = opendir("/sys/bus/pci/devices");
	struct dirent *e;
	int seen = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[PATH_MAX], drv[PATH_MAX] = "";
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver",
			 e->d_name);
		ssize_t n = readlink(path, drv, sizeof(drv) - 1);
		drv[n > 0 ? n : 0] = 0;
		if (strstr(drv, "/vfio-pci"))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/bus/pci/devices/%s/iommu_group", e->d_name);
		int want = access(path, F_OK) == 0 ? -EUNATCH : -EOPNOTSUPP;
		int err = open_err(e->d_name);
		if (err != want)
			FAIL("%s (driver %s): %d (%s), expected %d", e->d_name,
			     *drv ? drv : "none", err, smq_vfio_explain(err),
			     want);
		seen++;
	}
	closedir(d);
	return seen;
}

static void explanations(void)
{
	const int errs[] = { -EINVAL, -ENODEV, -EOPNOTSUPP, -EUNATCH, -ENOENT,
			     -EPROTO, -EPROTONOSUPPORT, -EBUSY, -EXDEV, -EPERM,
			     -EACCES };
	const size_t n = sizeof(errs) / sizeof(errs[0]);
	for (size_t i = 0; i < n; i++) {
		const char *s = smq_vfio_explain(errs[i]);
		CHECK(s && *s);
		for (size_t j = 0; j < i; j++)
			if (strcmp(s, smq_vfio_explain(errs[j])) == 0)
				FAIL("errors %d and %d read the same: %s",
				     errs[i], errs[j], s);
	}
	CHECK(strstr(smq_vfio_explain(-EUNATCH), "vfio-pci"));
	CHECK(strstr(smq_vfio_explain(-EBUSY), "one process"));
	/* others fall back on strerror */
	CHECK(strcmp(smq_vfio_explain(-ENOMEM), strerror(ENOMEM)) == 0);
}

static void table(void)
{
	const struct smq_doorbell_dev *db = smq_doorbell_dev_find(0x1af4, 0x1110,
								  true);
	const struct smq_doorbell_dev *plain = smq_doorbell_dev_find(0x1af4,
								     0x1110,
								     false);
	CHECK(db && strcmp(db->name, "ivshmem-doorbell") == 0);
	CHECK(db->shm_bar == 2 && db->ring && db->setup && db->vectors);
	CHECK(plain && strcmp(plain->name, "ivshmem-plain") == 0);
	CHECK(plain->shm_bar == 2 && !plain->ring);
	CHECK(smq_doorbell_dev_find(0x8086, 0x1234, true) == NULL);
	CHECK(smq_doorbell_dev_find(0x1af4, 0x1000, false) == NULL);

	unsigned n = 0;
	const struct smq_doorbell_dev *e;
	while ((e = smq_doorbell_dev_entry(n))) {
		CHECK(e->name && *e->name);
		CHECK(e->shm_bar >= 0 && e->shm_bar < 6);
		/* a device that rings knows how many vectors it has */
		CHECK(!e->ring || e->vectors);
		/* no two entries for the same device and variant */
		CHECK(smq_doorbell_dev_find(e->vendor, e->device, e->msix) == e);
		n++;
	}
	CHECK(n == 2);
	CHECK(smq_doorbell_dev_entry(n) == NULL);
}

int main(void)
{
	addresses();
	int seen = host_devices();
	explanations();
	table();
	printf("vfio: addresses, %d host devices, explanations, doorbell "
	       "table ok\n", seen);
	return 0;
}
