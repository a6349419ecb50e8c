/* The dax transport without a DAX device, and file: at an offset.
 *
 * dax: under a recorded sysfs (the way probes' tests stand a dump in for
 * config space) whose device is /dev/zero's numbers: a character device
 * that maps shared.  The device's alignment decides every mapping: one
 * page to open, the layout rounded up to whole pages, the device's size
 * the window's fixed size; the region's alignment where the device has
 * none of its own.  What the device would refuse (an offset that is not a
 * multiple of its alignment) is refused before any mmap, with words naming
 * both numbers; a device of another kind, a file, a missing node, each
 * with words of its own.  (A real device-DAX device, shared by two QEMU
 * guests: tests/qemu/t_qemu_cxl.sh.)
 *
 * file@OFFSET:PATH: init writes its window OFFSET bytes into the file and
 * nothing before; the window's name keeps the offset; it is never
 * removed; a malformed offset, or one given to a transport that takes
 * none, is refused with words. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "testlib.h"

TEST_FLOOR(90);
#include "format/format.h"
#include "transport/common.h"

#define MiB (1024ull * 1024)

static char sys[300], devdir[400];

static void put(const char *dir, const char *name, const char *text)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK((f = fopen(path, "w")) != NULL);
	fputs(text, f);
	CHECK(fclose(f) == 0);
}

/* sys/dev/char/MAJ:MIN -> sys/devices/region0/dax9.0, on the dax bus */
static void make_sysfs(void)
{
	char path[600], link[700];
	struct stat st;

	CHECK(stat("/dev/zero", &st) == 0 && S_ISCHR(st.st_mode));
	snprintf(sys, sizeof(sys), "%s/sys", test_dir());
	const char *dirs[] = { "", "/bus", "/bus/dax", "/dev", "/dev/char",
			       "/devices", "/devices/region0",
			       "/devices/region0/dax_region",
			       "/devices/region0/dax9.0" };
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", sys, dirs[i]);
		CHECK(mkdir(path, 0755) == 0);
	}
	snprintf(devdir, sizeof(devdir), "%s/devices/region0/dax9.0", sys);
	snprintf(path, sizeof(path), "%s/subsystem", devdir);
	CHECK(symlink("../../../bus/dax", path) == 0);
	snprintf(path, sizeof(path), "%s/dev/char/%u:%u", sys,
		 major(st.st_rdev), minor(st.st_rdev));
	snprintf(link, sizeof(link), "../../devices/region0/dax9.0");
	CHECK(symlink(link, path) == 0);
	put(devdir, "size", "8388608\n");            /* 8 MiB */
	put(devdir, "align", "2097152\n");           /* 2 MiB */
	snprintf(path, sizeof(path), "%s/devices/region0/dax_region", sys);
	put(path, "align", "4194304\n");             /* 4 MiB */
}

static int dax_open(struct smq_map *m, uint64_t offset, const char *path)
{
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->tp = &smq_transport_dax;
	m->order = &smq_order_c11;
	m->offset = offset;
	return smq_dax_open_under(m, path, sys);
}

static int layout_of(struct smq_map *m, uint64_t size, bool grow)
{
	struct smq_layout l;

	memset(&l, 0, sizeof(l));
	l.size = size;
	return m->tp->map_layout(m, &l, grow);
}

static void words_have(const char *path, uint64_t offset, int err,
		       const char *want)
{
	char buf[512];

	CHECK(smq_dax_explain_under(path, offset, err, buf, sizeof(buf), sys));
	if (!strstr(buf, want)) {
		printf("FAIL: explain of %s @%llu, %d: '%s' lacks '%s'\n", path,
		       (unsigned long long)offset, err, buf, want);
		exit(1);
	}
}

static void dax_alignment(void)
{
	struct smq_map m;

	/* one page of the device to begin with; its size is fixed */
	OK(dax_open(&m, 0, "/dev/zero"));
	CHECK(m.size == 2 * MiB && m.fixed_size == 8 * MiB);
	CHECK(!strcmp(m.name, "dax:/dev/zero") && m.nseg == 1);
	CHECK(m.user_data && m.order == &smq_order_c11);
	/* a layout within the page: the page; beyond it: whole pages */
	OK(layout_of(&m, 64 * 1024, false));
	CHECK(m.size == 2 * MiB);
	OK(layout_of(&m, 2 * MiB + 4096, true));
	CHECK(m.size == 4 * MiB && m.seg[0].len == 4 * MiB);
	OK(layout_of(&m, 8 * MiB, false));
	CHECK(m.size == 8 * MiB);
	/* past the device: refused, never grown */
	EXPECT(layout_of(&m, 8 * MiB + 4096, true), -ENOSPC);
	EXPECT(layout_of(&m, 8 * MiB + 4096, false), -SMQ_ETOOSMALL);
	CHECK(m.size == 8 * MiB);
	words_have("/dev/zero", 0, -ENOSPC, "the device holds 8 MiB");
	m.tp->close(&m);

	/* at an offset of whole pages: what lies past it */
	OK(dax_open(&m, 6 * MiB, "/dev/zero"));
	CHECK(m.size == 2 * MiB && m.fixed_size == 2 * MiB);
	EXPECT(layout_of(&m, 2 * MiB + 1, true), -ENOSPC);
	m.tp->close(&m);
	/* what the device would refuse is refused first, in words */
	EXPECT(dax_open(&m, 4096, "/dev/zero"), -EINVAL);
	CHECK(m.fd < 0 && !m.base);
	words_have("/dev/zero", 4096, -EINVAL, "the offset, 4 KiB, is not a "
		   "multiple of the device's alignment, 2 MiB");
	EXPECT(dax_open(&m, 8 * MiB, "/dev/zero"), -ENOSPC);
	words_have("/dev/zero", 8 * MiB, -ENOSPC,
		   "holds 8 MiB and the window begins at 8 MiB");

	/* no alignment of its own (before Linux 5.10): the region's */
	char path[600];
	snprintf(path, sizeof(path), "%s/align", devdir);
	CHECK(unlink(path) == 0);
	OK(dax_open(&m, 0, "/dev/zero"));
	CHECK(m.size == 4 * MiB);
	OK(layout_of(&m, 4 * MiB + 1, true));
	CHECK(m.size == 8 * MiB);
	m.tp->close(&m);
	EXPECT(dax_open(&m, 2 * MiB, "/dev/zero"), -EINVAL);
	words_have("/dev/zero", 2 * MiB, -EINVAL, "alignment, 4 MiB");
	put(devdir, "align", "2097152\n");
}

static void dax_refusals(void)
{
	struct smq_map m;
	char file[400], path[600];

	/* not a device of the dax bus */
	snprintf(path, sizeof(path), "%s/subsystem", devdir);
	CHECK(unlink(path) == 0 && symlink("../../../bus/mem", path) == 0);
	EXPECT(dax_open(&m, 0, "/dev/zero"), -ENODEV);
	words_have("/dev/zero", 0, -ENODEV, "not a device-DAX device (a "
		   "character device of another kind)");
	CHECK(unlink(path) == 0 && symlink("../../../bus/dax", path) == 0);
	/* a file is file:'s */
	snprintf(file, sizeof(file), "%s/plain", test_dir());
	put(test_dir(), "plain", "x");
	EXPECT(dax_open(&m, 0, file), -ENODEV);
	words_have(file, 0, -ENODEV, "not a character device; file: maps");
	EXPECT(dax_open(&m, 0, "/dev/dax-none"), -ENOENT);
	words_have("/dev/dax-none", 0, -ENOENT, "no such device");
	/* sysfs without the device's size */
	snprintf(path, sizeof(path), "%s/size", devdir);
	CHECK(unlink(path) == 0);
	EXPECT(dax_open(&m, 0, "/dev/zero"), -ENOTSUP);
	words_have("/dev/zero", 0, -ENOTSUP, "does not give the device's "
		   "size and alignment");
	put(devdir, "size", "8388608\n");
	/* and through the registry, on this host's own sysfs */
	char buf[512];
	smq_explain("dax:/dev/zero", -ENODEV, buf, sizeof(buf));
	CHECK(strstr(buf, "not a device-DAX device") != NULL);
}

/* The first 2 MiB of a file hold a guest's own bytes: init at @2M
 * leaves them, and its window begins 2 MiB in. */
static void file_offset(void)
{
	char path[400], spec[450], buf[512];
	struct smq_window *w;
	struct smq_window_info wi;
	struct smq_geometry g = { 2, 2, 8, 1024, NULL };
	static uint8_t head[2 * MiB];
	uint8_t back[8];

	snprintf(path, sizeof(path), "%s/guest-memory", test_dir());
	int fd = open(path, O_CREAT | O_RDWR, 0600);
	CHECK(fd >= 0);
	memset(head, 0xa5, sizeof(head));
	CHECK(pwrite(fd, head, sizeof(head), 0) == (ssize_t)sizeof(head));
	CHECK(ftruncate(fd, (off_t)(4 * MiB)) == 0);
	snprintf(spec, sizeof(spec), "file@2M:%s", path);
	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w));
	smq_window_info(w, &wi, sizeof(wi));
	/* sized by another program (QEMU): what lies past the offset */
	CHECK(wi.fixed_size == 2 * MiB && wi.mapped_size == 2 * MiB);
	OK(smq_init(w, &g, sizeof(g)));
	smq_window_info(w, &wi, sizeof(wi));
	CHECK(!strcmp(wi.name, spec));
	OK(smq_close(w));
	CHECK(pread(fd, head, sizeof(head), 0) == (ssize_t)sizeof(head));
	bool kept = true;
	for (size_t i = 0; i < sizeof(head); i++)
		kept &= head[i] == 0xa5;
	CHECK(kept);
	CHECK(pread(fd, back, 8, (off_t)(2 * MiB)) == 8);
	CHECK(!memcmp(back, SMQ_MAGIC, 8));
	close(fd);
	/* a second board finds it there, by the name it was given */
	OK(smq_open(spec, 1, 0, &w));
	OK(smq_close(w));
	snprintf(spec, sizeof(spec), "file@2048K:%s", path);
	OK(smq_open(spec, 1, SMQ_OPEN_READONLY, &w));
	smq_window_info(w, &wi, sizeof(wi));
	snprintf(buf, sizeof(buf), "file@2M:%s", path);
	CHECK(!strcmp(wi.name, buf));
	OK(smq_close(w));
	/* part of a larger object: never removed */
	EXPECT(smq_remove(spec), -EOPNOTSUPP);
	CHECK(access(path, F_OK) == 0);
	smq_explain(spec, -EOPNOTSUPP, buf, sizeof(buf));
	CHECK(strstr(buf, "smq does not remove it") != NULL);
	/* offsets refused, with words */
	const char *bad[] = { "file@:x", "file@3K:x", "file@2Q:x", "file@-1:x",
			      "file@99999999999999999999:x", "file@2MM:x" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT(smq_open(bad[i], 0, 0, &w), -EINVAL);
		smq_explain(bad[i], -EINVAL, buf, sizeof(buf));
		CHECK(strstr(buf, "the offset after '@' is a whole number of "
			      "pages") != NULL);
	}
	EXPECT(smq_open("shm@2M:x", 0, 0, &w), -EINVAL);
	smq_explain("shm@2M:x", -EINVAL, buf, sizeof(buf));
	CHECK(strstr(buf, "shm: takes no offset") != NULL);
}

int main(void)
{
	make_sysfs();
	dax_alignment();
	dax_refusals();
	file_offset();
	printf("dax: mapped in whole pages of the device's alignment (or its "
	       "region's), refusals in words; file@2M: begins 2 MiB in\n");
	return 0;
}
