/* The ivshmem server's memory and its listening socket. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "server.h"
#include "transport/common.h"
#include "transport/shm_name.h"

/* ---- the memory ---- */

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static int grow(int fd, uint64_t size)
{
	int err = posix_fallocate(fd, 0, (off_t)size);

	if (err == EOPNOTSUPP || err == EINVAL)
		err = ftruncate(fd, (off_t)size) < 0 ? errno : 0;
	return -err;
}

/* Opens or creates (O_EXCL first, so that we know which) a shm object or
 * a file, never through a symbolic link. */
static int open_named(const char *path, bool shm, bool *created)
{
	for (int tries = 0; tries < 8; tries++) {
		int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC;
		int fd = shm ? shm_open(path, flags | O_CREAT | O_EXCL, 0600)
			     : open(path, flags | O_CREAT | O_EXCL, 0600);
		if (fd >= 0) {
			*created = true;
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
		fd = shm ? shm_open(path, flags, 0) : open(path, flags);
		if (fd >= 0) {
			*created = false;
			return fd;
		}
		if (errno != ENOENT)   /* ENOENT: removed meanwhile, again */
			return -errno;
	}
	return -EAGAIN;
}

/* No spec: memory of our own, sealed at its size. */
static int open_anonymous(struct smq_server *s, uint64_t want)
{
	int fd, err;

	fd = memfd_create("smq-ivshmem", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	err = grow(fd, want);
	/* Nobody may resize it under the peers' mappings. */
	if (!err && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
			  F_SEAL_SEAL) < 0)
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	s->mem_fd = fd;
	s->size = want;
	return 0;
}

/* Where a spec points: "shm:NAME" or a bare name is a shm object, and
 * "file:PATH" or a path starting with '/' or '.' is a file. */
static int spec_path(const char *spec, char *path, size_t size, bool *shm)
{
	if (!strncmp(spec, "shm:", 4) || (!strchr(spec, ':') &&
					  spec[0] != '/' && spec[0] != '.')) {
		const char *name = strncmp(spec, "shm:", 4) ? spec : spec + 4;
		if (!smq_shm_name_ok(name))
			return -EINVAL;
		snprintf(path, size, "/%s", name);
		*shm = true;
	} else if (!strncmp(spec, "file:", 5) || spec[0] == '/' ||
		   spec[0] == '.') {
		const char *p = strncmp(spec, "file:", 5) ? spec : spec + 5;
		if (!*p)
			return -EINVAL;
		if (strlen(p) >= size)
			return -ENAMETOOLONG;
		strcpy(path, p);
		*shm = false;
	} else {
		return -EPROTONOSUPPORT;
	}
	return 0;
}

/* The memory, sized to a power of two: QEMU maps it as a PCI BAR, and a
 * BAR's size is a power of two. */
int smq_srv_open_memory(struct smq_server *s, const char *spec, uint64_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t want = pow2_at_least(size > (uint64_t)page ? size :
				      (uint64_t)page);
	char path[256];
	bool shm, created = false;
	struct stat st;
	int fd, err;

	if (!spec)
		return open_anonymous(s, want);
	err = spec_path(spec, path, sizeof(path), &shm);
	if (err)
		return err;

	fd = open_named(path, shm, &created);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	/* Never another user's object: its owner could resize or reuse it
	 * under the peers. */
	err = !S_ISREG(st.st_mode) ? -EINVAL : st.st_uid != geteuid() ? -EPERM : 0;
	if (err)
		goto fail;
	if ((uint64_t)st.st_size > want)   /* never shrunk */
		want = pow2_at_least((uint64_t)st.st_size);
	if (want > MAX_SIZE) {
		err = -EFBIG;
		goto fail;
	}
	/* grown by smq_srv_size_memory(), once the socket is ours */
	s->mem_fd = fd;
	s->size = want;
	if (created)
		snprintf(s->created, sizeof(s->created), "%s:%s",
			 shm ? "shm" : "file", path);
	return 0;
fail:
	close(fd);
	if (created && shm)
		shm_unlink(path);
	else if (created)
		unlink(path);
	return err;
}

int smq_srv_size_memory(struct smq_server *s)
{
	struct stat st;

	if (fstat(s->mem_fd, &st) < 0)
		return -errno;
	return (uint64_t)st.st_size < s->size ? grow(s->mem_fd, s->size) : 0;
}

/* ---- the socket ---- */

int smq_srv_make_socket(struct smq_server *s, const struct sockaddr_un *a,
			unsigned mode)
{
	struct stat st;
	int fd = smq_unix_listen(a, SOCK_STREAM, mode, 64, &st);

	if (fd < 0)
		return fd;
	s->listen_fd = fd;
	s->sock_dev = st.st_dev;
	s->sock_ino = st.st_ino;
	return 0;
}
