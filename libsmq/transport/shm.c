/* The default transports: a POSIX shared memory object, or a plain file.
 * Both are one window, a file descriptor mapped shared; doorbells are
 * futexes, which reach the processes of this host. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../format.h"
#include "../shm_name.h"
#include "common.h"

/* A shm name stays inside /dev/shm: no '/', no leading '.', no ".." at
 * all (harmless without a '/', but never worth the doubt). */
bool smq_shm_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 200 || name[0] == '.' || strstr(name, ".."))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-' ||
		      c == '.'))
			return false;
	}
	return true;
}

static int map_fd(struct smq_map *m)
{
	struct stat st;

	if (fstat(m->fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	m->size = (uint64_t)st.st_size;
	m->base = NULL;
	if (m->size) {
		void *p = mmap(NULL, m->size, PROT_READ | PROT_WRITE,
			       MAP_SHARED, m->fd, 0);
		if (p == MAP_FAILED)
			return -errno;
		m->base = p;
	}
	smq_map_single(m);
	return 0;
}

/* Whoever formats a window takes it over: it must be ours and not
 * writable by others, or a user who made it in advance keeps a hand in
 * it.  With force, it is made ours and 0600. */
int smq_fd_claim(int fd, bool force)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_uid == geteuid() && !(st.st_mode & S_IWOTH))
		return 0;
	if (!force)
		return -SMQ_EFOREIGN;
	if ((st.st_uid != geteuid() || st.st_gid != getegid()) &&
	    fchown(fd, geteuid(), getegid()) < 0)
		return -errno;
	return fchmod(fd, 0600) < 0 ? -errno : 0;
}

/* fd is an open window object (or -1 with errno set). */
static int fd_open(struct smq_map *m, int fd, unsigned flags)
{
	int err;

	if (fd < 0)
		return errno == ELOOP ? -ELOOP : -errno;
	m->fd = fd;
	m->user_data = true;
	err = flags & SMQ_OPEN_CREATE ? smq_fd_claim(fd, flags & SMQ_OPEN_FORCE)
				      : 0;
	if (!err)
		err = map_fd(m);
	if (err) {
		close(fd);
		m->fd = -1;
	}
	return err;
}

static int shm_open_window(struct smq_map *m, const char *name, unsigned flags)
{
	char path[256];

	if (!smq_shm_name_ok(name))
		return -EINVAL;
	snprintf(m->name, sizeof(m->name), "shm:%s", name);
	m->order = smq_order_of_kernel();
	snprintf(path, sizeof(path), "/%s", name);
	/* glibc's shm_open adds O_NOFOLLOW: a symlink in /dev/shm is refused */
	return fd_open(m, shm_open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW |
				   (flags & SMQ_OPEN_CREATE ? O_CREAT : 0),
				   0600), flags);
}

static int file_open_window(struct smq_map *m, const char *path,
			    unsigned flags)
{
	if (!*path)
		return -EINVAL;
	snprintf(m->name, sizeof(m->name), "file:%s", path);
	/* a symlink is refused: init through one would format its target */
	return fd_open(m, open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW |
			       (flags & SMQ_OPEN_CREATE ? O_CREAT : 0), 0600),
		       flags);
}

/* Grows the object (never shrinks: a board may still map the old end). */
int smq_fd_grow(int fd, uint64_t size)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (size <= (uint64_t)st.st_size)
		return 0;
	if (size > (uint64_t)LLONG_MAX)
		return -EFBIG;
	int err = posix_fallocate(fd, 0, (off_t)size);
	if (err == EOPNOTSUPP || err == EINVAL)
		err = ftruncate(fd, (off_t)size) < 0 ? errno : 0;
	return -err;
}

/* The object may have grown since we mapped it (board 0 formatted it for
 * a larger geometry): what it holds now is mapped, not only what it held
 * at open. */
static int fd_map_layout(struct smq_map *m, const struct smq_layout *l,
			 bool grow)
{
	if (l->size > m->size) {
		int err = grow ? smq_fd_grow(m->fd, l->size) : 0;
		struct stat st;
		if (!err && fstat(m->fd, &st) < 0)
			err = -errno;
		if (err)
			return err;
		if ((uint64_t)st.st_size < l->size)
			return -SMQ_ETOOSMALL;
		smq_map_retire(m, m->base, m->size);
		m->base = NULL;
		if ((err = map_fd(m)))
			return err;
	}
	smq_map_single(m);
	return 0;
}

static int fd_chmod(struct smq_map *m, unsigned mode)
{
	return fchmod(m->fd, (mode_t)(mode & 07777)) < 0 ? -errno : 0;
}

static void futex_describe(struct smq_map *m, char *buf, size_t len)
{
	(void)m;
	snprintf(buf, len, "futex doorbell");
}

const struct smq_transport smq_transport_shm = {
	.name = "shm",
	.help = "shm:NAME    POSIX shared memory /dev/shm/NAME, one host "
		"(the default)",
	.open = shm_open_window,
	.map_layout = fd_map_layout,
	.close = smq_map_close,
	.chmod = fd_chmod,
	.bell_open = smq_futex_bell_open,
	.ring_kinds = smq_futex_ring_kinds,
	.ring = smq_futex_ring,
	.wait = smq_futex_wait,
	.describe = futex_describe,
};

const struct smq_transport smq_transport_file = {
	.name = "file",
	.help = "file:PATH   a plain file mapped shared (a path starting "
		"with / or . also works)",
	.open = file_open_window,
	.map_layout = fd_map_layout,
	.close = smq_map_close,
	.chmod = fd_chmod,
	.bell_open = smq_futex_bell_open,
	.ring_kinds = smq_futex_ring_kinds,
	.ring = smq_futex_ring,
	.wait = smq_futex_wait,
	.describe = futex_describe,
};
