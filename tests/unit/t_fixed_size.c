/* Which windows init cannot grow (smq_window_info().fixed_size), on the
 * transports this host has: an object another program sized (bytes, its
 * first page all zero) is fixed at its size, for shm, file and split; a
 * layout larger than that is refused with -ENOSPC before a byte is
 * written; one that fits is formatted without growing the object, which
 * keeps its size over every later init (the superblock's size_fixed)
 * until SMQ_SHAPE_GROW grows it by name; an object init made grows.
 * (Devices: t_qemu.sh has a BAR.) */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "testlib.h"

/* the least count of checks a run makes (107 as root here; fewer
 * where a part needs root or a device) */
TEST_FLOOR(100);

#define MiB (1024u * 1024u)

static char split_name[200];

static uint64_t fixed_of(const char *spec, unsigned flags)
{
	struct smq_window *w;
	struct smq_window_info wi;

	OK(smq_open(spec, 0, flags | SMQ_OPEN_RAW, &w));
	smq_window_info(w, &wi, sizeof(wi));
	OK(smq_close(w));
	return wi.fixed_size;
}

static int init_flags(const char *spec, uint32_t boards, uint32_t entries,
		      unsigned open_flags, uint32_t shape_flags)
{
	struct smq_window *w;
	struct smq_shape sh = { { boards, boards, entries, 1024, NULL }, NULL,
				shape_flags, NULL, 0, 0, 0 };

	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | open_flags, &w));
	int err = smq_init_shape(w, &sh, sizeof(sh));
	OK(smq_close(w));
	return err;
}

static int init_with(const char *spec, uint32_t boards, uint32_t entries)
{
	return init_flags(spec, boards, entries, 0, 0);
}

static uint64_t need(uint32_t boards, uint32_t entries)
{
	struct smq_geometry g = { boards, boards, entries, 1024, NULL };
	uint64_t bytes;

	OK(smq_layout_size(&g, sizeof(g), &bytes));
	return bytes;
}

static bool all_zero(const char *path, uint64_t *size)
{
	size_t len;
	char spec[300];

	snprintf(spec, sizeof(spec), "file:%s", path);
	uint8_t *p = test_snapshot(spec, &len);
	bool zero = true;
	for (size_t i = 0; i < len; i++)
		zero &= !p[i];
	free(p);
	*size = len;
	return zero;
}

/* One object (shm or file) at path, reached as spec. */
static void single(const char *spec, const char *path)
{
	uint64_t size;

	/* made by init: it grows */
	OK(init_with(spec, 2, 8));
	CHECK(fixed_of(spec, 0) == 0);
	CHECK(fixed_of(spec, SMQ_OPEN_READONLY) == 0);
	OK(smq_remove(spec));

	/* sized by another program: fixed, and never grown */
	CHECK(truncate(path, 1 * MiB) == 0 || (errno == ENOENT &&
	      close(open(path, O_CREAT | O_WRONLY, 0600)) == 0 &&
	      truncate(path, 1 * MiB) == 0));
	CHECK(fixed_of(spec, 0) == 1 * MiB);
	CHECK(fixed_of(spec, SMQ_OPEN_READONLY) == 1 * MiB);
	CHECK(need(4, 1024) > 1 * MiB);
	EXPECT(init_with(spec, 4, 1024), -ENOSPC);
	CHECK(all_zero(path, &size));
	CHECK(size == 1 * MiB);
	/* what fits is formatted there, the object as it was sized */
	CHECK(need(2, 8) <= 1 * MiB);
	OK(init_with(spec, 2, 8));
	CHECK(!all_zero(path, &size) && size == 1 * MiB);
	/* a window now, in an object of fixed size: it keeps it, forced or
	 * not (a QEMU memory-backend file that grew breaks its guests) */
	CHECK(fixed_of(spec, 0) == 1 * MiB);
	CHECK(fixed_of(spec, SMQ_OPEN_READONLY) == 1 * MiB);
	EXPECT(init_with(spec, 4, 1024), -ENOSPC);
	EXPECT(init_flags(spec, 4, 1024, SMQ_OPEN_FORCE, 0), -ENOSPC);
	CHECK(!all_zero(path, &size) && size == 1 * MiB);
	/* ...until asked by name: then the size it grew to is kept */
	OK(init_flags(spec, 4, 1024, 0, SMQ_SHAPE_GROW));
	CHECK(!all_zero(path, &size) && size == need(4, 1024));
	CHECK(fixed_of(spec, 0) == need(4, 1024));
	EXPECT(init_with(spec, 4, 2048), -ENOSPC);
	CHECK(size == need(4, 1024));
	OK(smq_remove(spec));
	/* made by init, after a remove: it grows */
	OK(init_with(spec, 2, 8));
	CHECK(fixed_of(spec, 0) == 0);
	OK(init_with(spec, 4, 1024));
	OK(smq_remove(spec));
}

static void split(void)
{
	char path[256];
	struct smq_window *w;
	struct smq_window_info wi;

	snprintf(split_name, sizeof(split_name), "split:%s",
		 test_name("split"));
	const char *name = split_name + 6;
	/* every region's object sized by another program, 256 KiB each */
	for (int b = 0; b < 2; b++) {
		snprintf(path, sizeof(path), "/%s.%d", name, b);
		int fd = shm_open(path, O_CREAT | O_RDWR, 0600);
		CHECK(fd >= 0 && ftruncate(fd, 256 * 1024) == 0);
		close(fd);
	}
	CHECK(fixed_of(split_name, 0) == 512 * 1024);
	EXPECT(init_with(split_name, 2, 1024), -ENOSPC);
	for (int b = 0; b < 2; b++) {
		struct stat st;
		snprintf(path, sizeof(path), "/dev/shm/%s.%d", name, b);
		CHECK(stat(path, &st) == 0 && st.st_size == 256 * 1024);
	}
	/* a region larger than its object, the total smaller than all of
	 * them: refused too, before anything is written */
	snprintf(path, sizeof(path), "/%s.1", name);
	int fd = shm_open(path, O_RDWR, 0600);
	CHECK(fd >= 0 && ftruncate(fd, 4096) == 0);
	close(fd);
	snprintf(path, sizeof(path), "/%s.0", name);
	fd = shm_open(path, O_RDWR, 0600);
	CHECK(fd >= 0 && ftruncate(fd, 1 * MiB) == 0);
	close(fd);
	CHECK(need(2, 2) < 1 * MiB + 4096);
	EXPECT(init_with(split_name, 2, 2), -ENOSPC);
	for (int b = 0; b < 2; b++) {
		uint64_t size;
		snprintf(path, sizeof(path), "/dev/shm/%s.%d", name, b);
		CHECK(all_zero(path, &size));
		CHECK(size == (b ? 4096 : 1 * MiB));
	}
	snprintf(path, sizeof(path), "/%s.1", name);
	fd = shm_open(path, O_RDWR, 0600);
	CHECK(fd >= 0 && ftruncate(fd, 256 * 1024) == 0);
	close(fd);
	OK(init_with(split_name, 2, 2));
	OK(smq_open(split_name, 0, 0, &w));
	smq_window_info(w, &wi, sizeof(wi));
	/* it holds a window now, which keeps the size the objects had */
	CHECK(wi.fixed_size == 1 * MiB + 256 * 1024);
	OK(smq_close(w));
	OK(smq_remove(split_name));
}

int main(void)
{
	char path[200], spec[220];

	if (access("/dev/shm", W_OK) != 0) {
		printf("/dev/shm is not writable\n");
		return SKIP;
	}
	/* removed at exit, with every object named after it (testlib) */
	snprintf(path, sizeof(path), "/dev/shm/%s", test_name("single"));
	snprintf(spec, sizeof(spec), "shm:%s", test_name("single"));
	single(spec, path);
	snprintf(spec, sizeof(spec), "file:%s", path);
	single(spec, path);
	split();
	printf("fixed sizes: shm, file and split objects another program "
	       "sized are fixed and never grown; init's own grow\n");
	return 0;
}
