/* The split transport: every board's region is a shared memory object of
 * its own, /dev/shm/NAME.B, holding the canonical ranges of that region
 * one after the other (smq_layout_ranges()).  It models boards whose
 * regions are their own memory: a read of another board's region here is
 * a real read of another object, and the test builds count every one.
 * Doorbells are futexes: all objects live on this host. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "format/format.h"
#include "shm_name.h"
#include "common.h"

struct split {
	char name[201];
	int fd[SMQ_MAX_BOARDS];
	uint8_t *base[SMQ_MAX_BOARDS];
	uint64_t size[SMQ_MAX_BOARDS];
	bool fixed;             /* sized by another program: never created
				   nor grown (smq_map_sized_elsewhere()) */
};

static void unmap_object(struct split *sp, unsigned b)
{
	if (sp->base[b])
		munmap(sp->base[b], sp->size[b]);
	sp->base[b] = NULL;
	if (sp->fd[b] >= 0)
		close(sp->fd[b]);
	sp->base[b] = NULL;
	sp->size[b] = 0;
	sp->fd[b] = -1;
}

/* Opens (creating with create) and maps object b whole. */
static int map_object(struct smq_map *m, unsigned b, bool create)
{
	struct split *sp = m->priv;
	char path[256];
	struct stat st;
	int err = 0;

	/* the old mapping stays until close: pointers into it stay valid */
	smq_map_retire(m, sp->base[b], sp->size[b]);
	sp->base[b] = NULL;
	if (sp->fd[b] >= 0)
		close(sp->fd[b]);
	sp->fd[b] = -1;
	snprintf(path, sizeof(path), "/%s.%u", sp->name, b);
	int fd = shm_open(path, (m->readonly ? O_RDONLY : O_RDWR) |
			  O_CLOEXEC | O_NOFOLLOW |
			  (create ? O_CREAT : 0), 0600);
	if (fd < 0)
		return -errno;
	if (create)
		err = smq_fd_claim(fd, m->force);
	if (!err && fstat(fd, &st) < 0)
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	sp->fd[b] = fd;
	sp->size[b] = (uint64_t)st.st_size;
	if (sp->size[b]) {
		void *p = mmap(NULL, sp->size[b], PROT_READ |
			       (m->readonly ? 0 : PROT_WRITE), MAP_SHARED,
			       fd, 0);
		if (p == MAP_FAILED) {
			err = -errno;
			unmap_object(sp, b);
			return err;
		}
		sp->base[b] = p;
	}
	return 0;
}

static void add_segment(struct smq_map *m, unsigned b, uint64_t start,
			uint64_t len, uint64_t at)
{
	struct split *sp = m->priv;

	if (m->nseg < SMQ_MAX_SEGMENTS && at < sp->size[b] &&
	    len <= sp->size[b] - at && len)
		m->seg[m->nseg++] = (struct smq_segment){ start, len,
							  sp->base[b] + at, b };
}

/* A split window whose first object another program sized holds what
 * its objects held at open: each is fixed at its size.  (Init maps the
 * whole layout of a window it finds unformatted before it writes: a
 * region larger than its object is refused there.) */
static uint64_t objects_size(const struct split *sp)
{
	uint64_t sum = 0;

	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++) {
		char path[256];
		struct stat st;
		snprintf(path, sizeof(path), "/dev/shm/%s.%u", sp->name, b);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	}
	return sum;
}

static int split_open(struct smq_map *m, const char *arg, unsigned flags)
{
	struct split *sp;
	int err;

	if (!smq_shm_name_ok(arg) || strlen(arg) > 190)
		return -EINVAL;
	if (!(sp = calloc(1, sizeof(*sp))))
		return -ENOMEM;
	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++)
		sp->fd[b] = -1;
	snprintf(sp->name, sizeof(sp->name), "%s", arg);
	snprintf(m->name, sizeof(m->name), "split:%s", arg);
	m->order = smq_order_of_kernel();
	m->priv = sp;
	m->user_data = true;
	if ((err = map_object(m, 0, flags & SMQ_OPEN_CREATE))) {
		free(sp);
		m->priv = NULL;
		return err;
	}
	if (smq_map_sized_elsewhere(sp->base[0], sp->size[0])) {
		sp->fixed = true;
		m->fixed_size = objects_size(sp);
	}
	/* Until the layout is known: the superblock, board 0's control block,
	 * and the tables, which follow them in object 0. */
	m->size = sp->size[0];
	/* (all of a smaller object: init judges what it holds) */
	add_segment(m, 0, 0, sp->size[0] < SMQ_SB_SIZE ? sp->size[0]
						       : SMQ_SB_SIZE, 0);
	add_segment(m, 0, lay_ctl(0), SMQ_CTL_SIZE, SMQ_SB_SIZE);
	if (sp->size[0] > SMQ_SB_SIZE + SMQ_CTL_SIZE)
		add_segment(m, 0, SMQ_BOARD_TABLE,
			    sp->size[0] - SMQ_SB_SIZE - SMQ_CTL_SIZE,
			    SMQ_SB_SIZE + SMQ_CTL_SIZE);
	return 0;
}

static int split_map_layout(struct smq_map *m, const struct smq_layout *l,
			    bool grow)
{
	struct split *sp = m->priv;
	unsigned n = 0;

	m->nseg = 0;
	m->size = 0;
	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++) {
		struct smq_range r[SMQ_MAX_RANGES];
		int nr = smq_layout_ranges(l, b, r);
		uint64_t need = 0;
		for (int i = 0; i < nr; i++)
			need += r[i].len;
		/* A board the layout does not have may still hold a stale
		 * handle's marks in its control block: map it if it exists. */
		int err = 0;
		if (!sp->base[b] || sp->size[b] < need)
			err = map_object(m, b, grow && !sp->fixed &&
					 b < l->boards);
		if (err == -ENOENT && b >= l->boards)
			continue;
		if (!err && sp->size[b] < need && b < l->boards) {
			if (!grow)
				err = -SMQ_ETOOSMALL;
			else if (sp->fixed)
				err = -ENOSPC;
			else if (!(err = smq_fd_grow(sp->fd[b], need)))
				err = map_object(m, b, false);
		}
		if (err == -ENOENT)
			err = grow && sp->fixed ? -ENOSPC : -SMQ_ETOOSMALL;
		if (err)
			return err;
		uint64_t at = 0;
		for (int i = 0; i < nr; i++) {
			add_segment(m, b, r[i].start, r[i].len, at);
			at += r[i].len;
		}
		m->size += sp->size[b];
		n++;
	}
	(void)n;
	return 0;
}

static void split_close(struct smq_map *m)
{
	struct split *sp = m->priv;

	if (sp) {
		for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++)
			unmap_object(sp, b);
		free(sp);
	}
	m->priv = NULL;
	m->base = NULL;
	m->fd = -1;
	smq_map_close(m);
}

static int split_chmod(struct smq_map *m, unsigned mode)
{
	struct split *sp = m->priv;

	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++)
		if (sp->fd[b] >= 0 && fchmod(sp->fd[b], (mode_t)(mode & 07777)))
			return -errno;
	return 0;
}

/* Object 0 holds the superblock: once it is unlinked the window is gone. */
static bool split_removed(struct smq_map *m)
{
	struct split *sp = m->priv;
	struct stat st;

	return sp && sp->fd[0] >= 0 && fstat(sp->fd[0], &st) == 0 &&
	       st.st_nlink == 0;
}

/* Every region's object, NAME.0 (the superblock's) last, so that a
 * remove cut short leaves a window that is still found and removed
 * again. */
static int split_remove(const char *name)
{
	char path[256];
	int err = 0;

	if (!smq_shm_name_ok(name) || strlen(name) > 190)
		return -EINVAL;
	snprintf(path, sizeof(path), "/%s.0", name);
	int fd = shm_open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
	if (fd < 0)
		return -errno;
	err = smq_fd_is_window(fd);
	close(fd);
	if (err)
		return err;
	for (unsigned b = SMQ_MAX_BOARDS; b-- > 0;) {
		snprintf(path, sizeof(path), "/%s.%u", name, b);
		if (shm_unlink(path) < 0 && errno != ENOENT && !err)
			err = -errno;
	}
	return err;
}

/* The region object an error of kind err is about: NAME.0 when it is
 * missing (the window is), else the first whose state explains err (a
 * symbolic link, another user's, one we may not open). */
static unsigned culprit(const char *name, int err)
{
	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++) {
		char path[256];
		struct stat st;
		snprintf(path, sizeof(path), "/dev/shm/%s.%u", name, b);
		if (lstat(path, &st) < 0)
			return 0;
		if ((err == -ELOOP && S_ISLNK(st.st_mode)) ||
		    ((err == -SMQ_EFOREIGN || err == -EPERM) &&
		     (st.st_uid != geteuid() || (st.st_mode & S_IWOTH))) ||
		    (err == -EACCES && access(path, R_OK | W_OK) < 0))
			return b;
	}
	return 0;
}

static bool split_explain(const char *name, int err, char *buf, size_t len)
{
	char who[512], path[256];

	if (!smq_shm_name_ok(name) || strlen(name) > 190) {
		snprintf(buf, len, "bad window spec 'split:%s': a split window's "
			 "name is 1 to 190 of A-Z a-z 0-9 . _ -, not starting "
			 "with '.', without '..'", name);
		return true;
	}
	unsigned b = culprit(name, err);
	snprintf(path, sizeof(path), "/dev/shm/%s.%u", name, b);
	if (b == 0)
		snprintf(who, sizeof(who), "window split:%s", name);
	else
		snprintf(who, sizeof(who), "window split:%s's region %s", name,
			 path);
	return smq_fd_explain(who, path, err, buf, len);
}

/* A split window is found by its first region, NAME.0, which holds the
 * superblock and so begins with the magic. */
struct list_call {
	int (*fn)(const char *spec, void *arg);
	void *arg;
};

static int split_list_one(const char *name, void *arg)
{
	const struct list_call *c = arg;
	size_t n = strlen(name);
	char spec[256];

	if (n < 3 || strcmp(name + n - 2, ".0"))
		return 0;
	snprintf(spec, sizeof(spec), "split:%.*s", (int)(n - 2), name);
	return c->fn(spec, c->arg);
}

static int split_list(int (*fn)(const char *spec, void *arg), void *arg)
{
	struct list_call c = { fn, arg };

	return smq_shm_scan(split_list_one, &c);
}

static void split_describe(struct smq_map *m, char *buf, size_t len)
{
	(void)m;
	snprintf(buf, len, "futex doorbell");
}

const struct smq_transport smq_transport_split = {
	.name = "split",
	.help = "split:NAME  one POSIX shared memory object per board region, "
		"/dev/shm/NAME.0, NAME.1...: boards whose regions are their "
		"own memory, on one host",
	.open = split_open,
	.map_layout = split_map_layout,
	.close = split_close,
	.chmod = split_chmod,
	.removed = split_removed,
	.remove = split_remove,
	.explain = split_explain,
	.list = split_list,
	.bell_open = smq_futex_bell_open,
	.ring_kinds = smq_futex_ring_kinds,
	.ring = smq_futex_ring,
	.wait = smq_futex_wait,
	.describe = split_describe,
};
