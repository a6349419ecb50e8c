/* The default transports: a POSIX shared memory object, or a plain file.
 * Both are a file descriptor mapped shared; doorbells are futexes. */
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "internal.h"

/* A shm name stays inside /dev/shm: no '/', no leading '.', no ".." at
 * all (harmless without a '/', but never worth the doubt). */
static bool shm_name_ok(const char *name)
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
	if (m->size == 0)
		return 0;
	void *p = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       m->fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	m->base = p;
	return 0;
}

static int fd_open(struct smq_map *m, int fd)
{
	int err;

	if (fd < 0)
		return -errno;
	m->fd = fd;
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

	if (!shm_name_ok(name))
		return -EINVAL;
	snprintf(m->name, sizeof(m->name), "shm:%s", name);
	snprintf(path, sizeof(path), "/%s", name);
	return fd_open(m, shm_open(path, O_RDWR | O_CLOEXEC |
				   (flags & SMQ_OPEN_CREATE ? O_CREAT : 0),
				   0600));
}

static int file_open_window(struct smq_map *m, const char *path,
			    unsigned flags)
{
	if (!*path)
		return -EINVAL;
	snprintf(m->name, sizeof(m->name), "file:%s", path);
	return fd_open(m, open(path, O_RDWR | O_CLOEXEC |
			       (flags & SMQ_OPEN_CREATE ? O_CREAT : 0), 0600));
}


static int fd_resize(struct smq_map *m, uint64_t size)
{
	if (size <= m->size)
		return 0;
	if (size > (uint64_t)LLONG_MAX)
		return -EFBIG;
	int err = posix_fallocate(m->fd, 0, (off_t)size);
	if (err == EOPNOTSUPP || err == EINVAL)
		err = ftruncate(m->fd, (off_t)size) < 0 ? errno : 0;
	if (err)
		return -err;
	if (m->base)
		munmap(m->base, m->size);
	return map_fd(m);
}

static int fd_chmod(struct smq_map *m, unsigned mode)
{
	return fchmod(m->fd, (mode_t)(mode & 07777)) < 0 ? -errno : 0;
}

static void futex_ring(struct smq_map *m, uint32_t *bell)
{
	(void)m;
	__atomic_fetch_add(bell, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, bell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static int futex_wait(struct smq_map *m, uint32_t *bell, uint32_t seen,
		      const struct timespec *deadline)
{
	(void)m;
	/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline. */
	if (syscall(SYS_futex, bell, FUTEX_WAIT_BITSET, seen, deadline, NULL,
		    FUTEX_BITSET_MATCH_ANY) < 0 && errno != EAGAIN &&
	    errno != EINTR)
		return -errno;
	return 0;
}

const struct smq_transport smq_transport_shm = {
	.name = "shm",
	.help = "shm:NAME    POSIX shared memory /dev/shm/NAME, one host "
		"(the default)",
	.open = shm_open_window,
	.resize = fd_resize,
	.close = smq_map_close,
	.chmod = fd_chmod,
	.ring = futex_ring,
	.wait = futex_wait,
};

const struct smq_transport smq_transport_file = {
	.name = "file",
	.help = "file:PATH   a plain file mapped shared (a path starting "
		"with / or . also works)",
	.open = file_open_window,
	.resize = fd_resize,
	.close = smq_map_close,
	.chmod = fd_chmod,
	.ring = futex_ring,
	.wait = futex_wait,
};
