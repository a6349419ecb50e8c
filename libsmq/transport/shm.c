/* The default transports: a POSIX shared memory object, or a plain file.
 * Both are one window, a file descriptor mapped shared; doorbells are
 * futexes, which reach the processes of this host. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "format/format.h"
#include "shm_name.h"
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
	if (S_ISDIR(st.st_mode))  /* opened read-only, a directory opens */
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	/* a window at an offset (file@OFFSET:) holds what lies past it */
	m->size = (uint64_t)st.st_size > m->offset
		  ? (uint64_t)st.st_size - m->offset : 0;
	m->base = NULL;
	if (m->size) {
		void *p = mmap(NULL, m->size, PROT_READ |
			       (m->readonly ? 0 : PROT_WRITE), MAP_SHARED,
			       m->fd, (off_t)m->offset);
		if (p == MAP_FAILED)
			return -errno;
		m->base = p;
	}
	smq_map_single(m);
	return 0;
}

bool smq_map_sized_elsewhere(const void *base, uint64_t size)
{
	const uint8_t *p = base;
	uint64_t n = size < SMQ_PAGE ? size : SMQ_PAGE;

	if (!p || !size)
		return false;
	for (uint64_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
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
	/* Only root takes another user's object: that is EACCES, not the
	 * EPERM the library returns for board rules. */
	if ((st.st_uid != geteuid() || st.st_gid != getegid()) &&
	    fchown(fd, geteuid(), getegid()) < 0)
		return errno == EPERM ? -EACCES : -errno;
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
	} else if (smq_map_sized_elsewhere(m->base, m->size)) {
		m->fixed_size = m->size;
	}
	return err;
}

static int fd_access(const struct smq_map *m)
{
	return m->readonly ? O_RDONLY : O_RDWR;
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
	return fd_open(m, shm_open(path, fd_access(m) | O_CLOEXEC | O_NOFOLLOW |
				   (flags & SMQ_OPEN_CREATE ? O_CREAT : 0),
				   0600), flags);
}

static bool parent_exists(const char *path)
{
	char copy[PATH_MAX];
	struct stat st;

	snprintf(copy, sizeof(copy), "%s", path);
	return stat(dirname(copy), &st) == 0 && S_ISDIR(st.st_mode);
}

static int file_open_window(struct smq_map *m, const char *path,
			    unsigned flags)
{
	if (!*path)
		return -EINVAL;
	snprintf(m->name, sizeof(m->name), "file:%s", path);
	/* a symlink is refused: init through one would format its target */
	int fd = open(path, fd_access(m) | O_CLOEXEC | O_NOFOLLOW |
		      (flags & SMQ_OPEN_CREATE ? O_CREAT : 0), 0600);
	/* a window board 0 has yet to create is worth waiting for; one in a
	 * directory that does not exist is not (smq_transient()) */
	if (fd < 0 && errno == ENOENT && !parent_exists(path))
		return -ENOTDIR;
	return fd_open(m, fd, flags);
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
	if (grow && m->fixed_size && l->size > m->fixed_size)
		return -ENOSPC;
	if (l->size > m->size) {
		int err = grow ? smq_fd_grow(m->fd, m->offset + l->size) : 0;
		struct stat st;
		if (!err && fstat(m->fd, &st) < 0)
			err = -errno;
		if (err)
			return err;
		if ((uint64_t)st.st_size < m->offset + l->size)
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

/* Unlinked since we opened it (smq_remove(), rm): no board will find it. */
static bool fd_removed(struct smq_map *m)
{
	struct stat st;

	return fstat(m->fd, &st) == 0 && st.st_nlink == 0;
}

/* An object smq_remove() may delete: empty, all zero at its start (an
 * init that never wrote), or beginning with the magic. */
int smq_fd_is_window(int fd)
{
	unsigned char head[sizeof(SMQ_MAGIC) - 1];
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -SMQ_ENOTWINDOW;
	if (st.st_size == 0)
		return 0;
	ssize_t n = pread(fd, head, sizeof(head), 0);
	if (n < 0)
		return -errno;
	if ((size_t)n == sizeof(head) && !memcmp(head, SMQ_MAGIC, sizeof(head)))
		return 0;
	for (ssize_t i = 0; i < n; i++)
		if (head[i])
			return -SMQ_ENOTWINDOW;
	return 0;
}

/* Removes path (by rm, unlink or shm_unlink) if fd, opened on it, is a
 * window; closes fd. */
static int remove_window(int fd, const char *path, int (*rm)(const char *))
{
	int err = fd < 0 ? (errno == ELOOP ? -ELOOP : -errno)
			 : smq_fd_is_window(fd);

	if (fd >= 0)
		close(fd);
	if (!err && rm(path) < 0)
		err = -errno;
	return err;
}

static int shm_remove(const char *name)
{
	char path[256];

	if (!smq_shm_name_ok(name))
		return -EINVAL;
	snprintf(path, sizeof(path), "/%s", name);
	return remove_window(shm_open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW,
				      0), path, shm_unlink);
}

static int file_remove(const char *path)
{
	if (!*path)
		return -EINVAL;
	return remove_window(open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW),
			     path, unlink);
}

/* ---- words for errors (explain) ---- */

#define SHM_NAME_RULE "a shm name is 1 to 200 of A-Z a-z 0-9 . _ -, not " \
	"starting with '.', without '..'"

/* Why the object at path (named who: "window shm:x") is not ours to
 * format: another user's, or writable by others.  false: it is ours. */
static bool foreign_words(const char *who, const struct stat *st, char *buf,
			  size_t len)
{
	if (st->st_uid != geteuid()) {
		struct passwd *pw = getpwuid(st->st_uid);
		snprintf(buf, len, "%s belongs to %s (uid %u), not to us: "
			 "formatting it would leave that user a hand in it",
			 who, pw ? pw->pw_name : "another user",
			 (unsigned)st->st_uid);
		return true;
	}
	if (!(st->st_mode & S_IWOTH))
		return false;
	snprintf(buf, len, "%s: others may write it (mode %04o): formatting "
		 "it would leave them a hand in it", who,
		 (unsigned)(st->st_mode & 07777));
	return true;
}

/* Where path would be created: a directory that does not exist is named
 * as such, not taken for a window board 0 has yet to create. */
static bool missing_words(const char *who, const char *path, char *buf,
			  size_t len)
{
	char copy[PATH_MAX];
	struct stat st;

	snprintf(copy, sizeof(copy), "%s", path);
	const char *dir = dirname(copy);
	int err = stat(dir, &st) < 0 ? errno : 0;
	if (err == ENOENT || err == ENOTDIR)
		snprintf(buf, len, "%s: directory %s does not exist", who, dir);
	else if (!err && !S_ISDIR(st.st_mode))
		snprintf(buf, len, "%s: %s is not a directory", who, dir);
	else
		snprintf(buf, len, "%s does not exist yet: board 0 creates it "
			 "when it formats the window", who);
	return true;
}

static bool denied_words(const char *who, const char *path, char *buf,
			 size_t len)
{
	char copy[PATH_MAX];
	struct stat st;

	if (lstat(path, &st) < 0) {
		snprintf(copy, sizeof(copy), "%s", path);
		snprintf(buf, len, errno == ENOENT
			 ? "%s: permission denied: we may not create it in "
			   "directory %s"
			 : "%s: permission denied: a directory on the way to "
			   "%s is closed to us", who, dirname(copy));
		return true;
	}
	struct passwd *pw = getpwuid(st.st_uid);
	if (st.st_uid == geteuid())
		snprintf(buf, len, "%s: permission denied: it is ours, but its "
			 "mode %04o does not let us open it", who,
			 (unsigned)(st.st_mode & 07777));
	else
		snprintf(buf, len, "%s: permission denied: it belongs to another "
			 "user, %s (uid %u), mode %04o", who,
			 pw ? pw->pw_name : "unnamed", (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777));
	return true;
}

static const char *kind_words(mode_t mode)
{
	return S_ISDIR(mode) ? "it is a directory"
	       : S_ISCHR(mode) || S_ISBLK(mode) ? "it is a device"
	       : S_ISSOCK(mode) ? "it is a socket"
	       : S_ISFIFO(mode) ? "it is a pipe" : "of a kind we do not map";
}

/* Words for err of the object at path, as opening, creating or taking it
 * over returns it; who names the window ("window shm:x"). */
bool smq_fd_explain(const char *who, const char *path, int err, char *buf,
		    size_t len)
{
	struct stat st;

	switch (-err) {
	case ENOENT:
	case ENOTDIR:  /* file_open_window: the directory is missing */
		return missing_words(who, path, buf, len);
	case EACCES:
		return denied_words(who, path, buf, len);
	case SMQ_EFOREIGN:
		return lstat(path, &st) == 0 && foreign_words(who, &st, buf, len);
	case ELOOP:
		if (lstat(path, &st) < 0 || !S_ISLNK(st.st_mode))
			return false;
		snprintf(buf, len, "%s is a symbolic link: name the window "
			 "itself (through a link, init could format another "
			 "file)", who);
		return true;
	case EINVAL:    /* (EISDIR says it well enough) */
		if (lstat(path, &st) < 0 || S_ISREG(st.st_mode))
			return false;
		snprintf(buf, len, "%s is not a regular file (%s)", who,
			 kind_words(st.st_mode));
		return true;
	default:
		return false;
	}
}

static bool shm_explain(const char *name, int err, char *buf, size_t len)
{
	char who[256], path[256];

	if (!smq_shm_name_ok(name)) {
		snprintf(buf, len, "bad window spec 'shm:%s': " SHM_NAME_RULE,
			 name);
		return true;
	}
	snprintf(who, sizeof(who), "window shm:%s", name);
	snprintf(path, sizeof(path), "/dev/shm/%s", name);
	if (err == -ENOENT && access("/dev/shm", F_OK) < 0) {
		snprintf(buf, len, "%s: this host has no /dev/shm (POSIX shared "
			 "memory is not mounted)", who);
		return true;
	}
	return smq_fd_explain(who, path, err, buf, len);
}

static bool file_explain(const char *path, int err, char *buf, size_t len)
{
	char who[PATH_MAX + 16];

	if (!*path) {
		snprintf(buf, len, "bad window spec 'file:': it names no file");
		return true;
	}
	snprintf(who, sizeof(who), "window file:%s", path);
	return smq_fd_explain(who, path, err, buf, len);
}

/* Calls fn with the name of every object in /dev/shm that begins with the
 * magic of smq(7); a non-zero return of fn ends the walk. */
int smq_shm_scan(int (*fn)(const char *name, void *arg), void *arg)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	int r = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!r && (e = readdir(d))) {
		char head[sizeof(SMQ_MAGIC) - 1];
		struct stat st;
		if (!smq_shm_name_ok(e->d_name))
			continue;
		int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW |
				O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		bool smq = !fstat(fd, &st) && S_ISREG(st.st_mode) &&
			   pread(fd, head, sizeof(head), 0) ==
			   (ssize_t)sizeof(head) &&
			   !memcmp(head, SMQ_MAGIC, sizeof(head));
		close(fd);
		if (smq)
			r = fn(e->d_name, arg);
	}
	closedir(d);
	return r;
}

struct list_call {
	int (*fn)(const char *spec, void *arg);
	void *arg;
};

static int shm_list_one(const char *name, void *arg)
{
	const struct list_call *c = arg;
	char spec[256];

	snprintf(spec, sizeof(spec), "shm:%s", name);
	return c->fn(spec, c->arg);
}

static int shm_list(int (*fn)(const char *spec, void *arg), void *arg)
{
	struct list_call c = { fn, arg };

	return smq_shm_scan(shm_list_one, &c);
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
	.removed = fd_removed,
	.remove = shm_remove,
	.explain = shm_explain,
	.list = shm_list,
	.bell_open = smq_futex_bell_open,
	.ring_kinds = smq_futex_ring_kinds,
	.ring = smq_futex_ring,
	.wait = smq_futex_wait,
	.describe = futex_describe,
};

const struct smq_transport smq_transport_file = {
	.name = "file",
	.help = "file:PATH   a plain file mapped shared (a path starting "
		"with / or . also works); file@OFFSET:PATH, the window begins "
		"OFFSET bytes into it (K, M, G: a QEMU guest's memory file)",
	.takes_offset = true,
	.open = file_open_window,
	.map_layout = fd_map_layout,
	.close = smq_map_close,
	.chmod = fd_chmod,
	.removed = fd_removed,
	.remove = file_remove,
	.explain = file_explain,
	.bell_open = smq_futex_bell_open,
	.ring_kinds = smq_futex_ring_kinds,
	.ring = smq_futex_ring,
	.wait = smq_futex_wait,
	.describe = futex_describe,
};
