/* smqctl metrics --textfile: the exposition in a file of a directory that
 * node_exporter's textfile collector reads.  The file is replaced
 * atomically (a temporary file in the same directory, written, synced,
 * then renamed over it), so that the collector never reads half of it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "metrics.h"

/* The file's name: smq-SPEC.prom, the spec's characters that do not
 * belong in a file name made '_' (shm:smq gives smq-shm_smq.prom), so
 * that each window has a file of its own in a shared directory. */
static void file_name(const char *spec, char *buf, size_t n)
{
	size_t len = (size_t)snprintf(buf, n, "smq-");

	for (const char *s = spec; *s && len + 6 < n; s++) {
		char c = *s;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '-' || c == '_' ||
			  (c == '.' && s != spec);
		buf[len++] = ok ? c : '_';
	}
	snprintf(buf + len, n - len, ".prom");
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The temporary file starts with a dot and does not end in .prom: the
 * collector never reads it.  Readable by all, as a file node_exporter
 * (another user) reads must be. */
static int write_atomic(const char *dir, const char *name,
			const struct mbuf *b)
{
	char tmp[4096], path[4096];
	int err = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name) >=
	    sizeof(tmp))
		return -ENAMETOOLONG;
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0644) < 0 || fsync(fd) < 0)
		err = -errno;
	if (!err)
		err = write_all(fd, b->p, b->len);
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	/* the rename itself reaches the disk with the directory */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

/* Waits ms for SIGINT or SIGTERM (blocked): true if one came. */
static bool signalled_within(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	for (;;) {
		int sig = sigtimedwait(&set, NULL, &ts);
		if (sig > 0)
			return true;
		if (errno != EINTR)
			return false;  /* EAGAIN: the time is up */
	}
}

/* A directory that is missing or not one: said before the first write. */
static int check_dir(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		return say_error("cannot write metrics into %s: %s", dir,
				 strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return say_error("cannot write metrics into %s: not a "
				 "directory", dir);
	return 0;
}

/* A watcher that stops takes its file away: what it said last is no
 * longer watched, and a collector that kept showing it would show a
 * window as it was when the watcher stopped (smq_up 1 included).  A
 * watcher killed (SIGKILL) cannot: the file's age says so
 * (node_textfile_mtime_seconds, smqctl(1) METRICS). */
static int remove_file(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (unlink(path) < 0 && errno != ENOENT) {
		say_warning("cannot remove %s: %s", path, strerror(errno));
		return 1;
	}
	return 0;
}

int metrics_textfile(struct metrics_src *m, const struct textfile_opts *o)
{
	char name[300];
	bool repeat = o->interval_ms > 0;

	if (check_dir(o->dir))
		return 1;
	file_name(m->spec, name, sizeof(name));
	if (repeat)
		metrics_block_signals();
	for (unsigned n = 1;; n++) {
		struct mbuf b = { 0 };
		metrics_read(m);
		if (!repeat)
			metrics_settle(m);
		metrics_expose(m, &b);
		int err = b.failed ? -ENOMEM : write_atomic(o->dir, name, &b);
		mbuf_free(&b);
		/* a directory that cannot be written at the start is the
		 * user's to fix; later, a full disk may pass */
		if (err && n == 1)
			return say_error("cannot write %s/%s: %s", o->dir, name,
					 strerror(-err));
		if (err)
			say_warning("cannot write %s/%s: %s", o->dir, name,
				    strerror(-err));
		metrics_tell(m);
		if (!repeat)
			return 0;
		if ((o->count && n >= o->count) ||
		    signalled_within(o->interval_ms))
			return remove_file(o->dir, name);
	}
}
