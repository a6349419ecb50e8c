/* The ivshmem transport: a host process as a peer of QEMU guests'
 * ivshmem-doorbell devices.  ivshmem:SOCKET connects to the ivshmem server
 * (smqctl server), maps the memory it hands out, and rings and is rung
 * through the eventfds of the peers' interrupt vectors: a guest sees the
 * ring as an MSI-X interrupt, and its ring reaches us as an eventfd.  Host
 * processes of the same memory are reached by futex as well. */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "format/format.h"
#include "common.h"
#include "ivshmem/client.h"

/* How long a ring waits for the server to say how to reach a peer that
 * joined since we last read its messages (the sender holds its lane) */
#define LEARN_MS 100

struct ivshmem {
	struct ivc *c;
	struct smq_vector_pool vectors;
};

static int ivshmem_open(struct smq_map *m, const char *arg, unsigned flags)
{
	struct ivshmem *iv;
	struct stat st;
	int err;

	(void)flags;  /* the server owns the memory: nothing to create */
	if (!*arg || strlen(arg) >= sizeof(m->name) - 9)
		return -EINVAL;
	if (!(iv = calloc(1, sizeof(*iv))))
		return -ENOMEM;
	snprintf(m->name, sizeof(m->name), "ivshmem:%s", arg);
	if ((err = ivc_connect(&iv->c, arg, 0)))
		goto fail;
	int fd = ivc_memory_fd(iv->c);
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	/* what the server handed out as its memory, before mmap() blames
	 * the spec (EINVAL) for it */
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		err = !S_ISREG(st.st_mode) ? -ENODEV : -ENODATA;
		goto fail;
	}
	m->size = (uint64_t)st.st_size;
	m->fixed_size = m->size;  /* the server sized it (--shm-size) */
	void *p = mmap(NULL, m->size, PROT_READ | (m->readonly ? 0 : PROT_WRITE),
		       MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	m->base = p;
	smq_vectors_init(&iv->vectors, ivc_vectors(iv->c));
	m->priv = iv;
	smq_map_single(m);
	return 0;
fail:
	if (iv->c)
		ivc_close(iv->c);
	free(iv);
	return err;
}

static void ivshmem_close(struct smq_map *m)
{
	struct ivshmem *iv = m->priv;

	if (m->base)
		munmap(m->base, m->size);
	m->base = NULL;
	m->nseg = 0;
	if (iv) {
		ivc_close(iv->c);
		pthread_mutex_destroy(&iv->vectors.lock);
		free(iv);
	}
	m->priv = NULL;
}

static int ivshmem_bell_open(struct smq_map *m, struct smq_bell_addr *a)
{
	struct ivshmem *iv = m->priv;
	int v = smq_vectors_take(&iv->vectors);

	if (v < 0)
		return v;
	*a = (struct smq_bell_addr){ SMQ_BELL_IVSHMEM, (uint16_t)v,
				     (uint32_t)ivc_id(iv->c), 0 };
	return 0;
}

static void ivshmem_bell_close(struct smq_map *m, const struct smq_bell_addr *a)
{
	struct ivshmem *iv = m->priv;
	smq_vectors_give(&iv->vectors, a->vector);
}

/* The memory is host memory, so host processes reach each other's futexes
 * too. */
static uint32_t ivshmem_ring_kinds(struct smq_map *m)
{
	(void)m;
	return SMQ_BELL_BIT(SMQ_BELL_IVSHMEM) | SMQ_BELL_BIT(SMQ_BELL_FUTEX);
}

static void ivshmem_ring(struct smq_map *m, const struct smq_bell_addr *a,
			 struct smq_far word, uint32_t value)
{
	struct ivshmem *iv = m->priv;

	if (a->kind == SMQ_BELL_FUTEX) {
		smq_futex_ring(m, a, word, value);
		return;
	}
	__atomic_store_n((uint32_t *)word.far_, value, __ATOMIC_SEQ_CST);
	/* a peer that joined since we last looked: its eventfds learnt from
	 * the server (even one that then closed: what came before stays
	 * good), waited for a while, else the ring owed until they come */
	ivc_ring_learn(iv->c, a->peer, a->vector, LEARN_MS);
}

static int ivshmem_wait(struct smq_map *m, const struct smq_bell_addr *a,
			const uint32_t *word, uint32_t seen,
			const struct timespec *deadline)
{
	struct ivshmem *iv = m->priv;

	if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != seen)
		return 0;
	return ivc_wait(iv->c, a->vector, deadline);
}

static void ivshmem_describe(struct smq_map *m, char *buf, size_t len)
{
	struct ivshmem *iv = m->priv;
	snprintf(buf, len, "ivshmem doorbell (eventfd, peer %d)", ivc_id(iv->c));
}

/* ---- words for errors (explain) ---- */

/* No server at path: nothing there, a directory missing, or not a
 * socket. */
static bool no_server_words(const char *path, char *buf, size_t len)
{
	char copy[PATH_MAX];
	struct stat st;

	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		snprintf(buf, len, "window ivshmem:%s: %s is not a socket: no "
			 "ivshmem server listens there", path, path);
		return true;
	}
	if (lstat(path, &st) == 0) {
		snprintf(buf, len, "window ivshmem:%s: no ivshmem server listens "
			 "on %s (the socket of one that ended?)", path, path);
		return true;
	}
	snprintf(copy, sizeof(copy), "%s", path);
	const char *dir = dirname(copy);
	if (stat(dir, &st) < 0)
		snprintf(buf, len, "window ivshmem:%s: directory %s does not "
			 "exist", path, dir);
	else
		snprintf(buf, len, "window ivshmem:%s: no ivshmem server: the "
			 "socket %s does not exist", path, path);
	return true;
}

static bool version_words(const char *path, char *buf, size_t len)
{
	int64_t v;

	if (ivc_server_version(path, &v) == 0 && v != IVSHMEM_PROTOCOL_VERSION)
		snprintf(buf, len, "window ivshmem:%s: the server speaks version "
			 "%" PRId64 " of the ivshmem protocol, this library "
			 "version %d", path, v, IVSHMEM_PROTOCOL_VERSION);
	else
		snprintf(buf, len, "window ivshmem:%s: the server speaks another "
			 "version of the ivshmem protocol than %d, this "
			 "library's (it did not answer again to say which)", path,
			 IVSHMEM_PROTOCOL_VERSION);
	return true;
}

/* Out of descriptors: this process's limit, not the server, is why. */
static bool fd_words(const char *path, int err, char *buf, size_t len)
{
	struct rlimit rl;

	if (err == -ENFILE)
		snprintf(buf, len, "window ivshmem:%s: the system is out of "
			 "file descriptors (its limit is fs.file-max): the "
			 "descriptors the ivshmem server sends could not be "
			 "received", path);
	else if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		snprintf(buf, len, "window ivshmem:%s: this process is out of "
			 "file descriptors (its limit, RLIMIT_NOFILE or ulimit "
			 "-n, is %llu open files): the descriptors the ivshmem "
			 "server sends could not be received", path,
			 (unsigned long long)rl.rlim_cur);
	else
		snprintf(buf, len, "window ivshmem:%s: this process is out of "
			 "file descriptors (RLIMIT_NOFILE): the descriptors the "
			 "ivshmem server sends could not be received", path);
	return true;
}

static bool ivshmem_explain(const char *path, int err, char *buf, size_t len)
{
	if (!*path) {
		snprintf(buf, len, "bad window spec 'ivshmem:': it names no "
			 "socket");
		return true;
	}
	switch (-err) {
	case ENOENT:
	case ECONNREFUSED:
	case ENOTSOCK:
		return no_server_words(path, buf, len);
	case ENAMETOOLONG:
		snprintf(buf, len, "window ivshmem:%s: the socket's path is longer "
			 "than a UNIX socket address holds (107 bytes)", path);
		return true;
	case EINVAL:
		if (strlen(path) < sizeof(((struct smq_map *)0)->name) - 9)
			return false;
		snprintf(buf, len, "window ivshmem:%.64s...: the spec is too "
			 "long", path);
		return true;
	case EACCES:
		snprintf(buf, len, "window ivshmem:%s: permission denied on the "
			 "server's socket (or a directory on its path)", path);
		return true;
	case EPROTONOSUPPORT:
		return version_words(path, buf, len);
	case EPROTO:
		snprintf(buf, len, "window ivshmem:%s: the server broke the "
			 "ivshmem protocol (a malformed message)", path);
		return true;
	case ECONNRESET:
		snprintf(buf, len, "window ivshmem:%s: the server hung up before "
			 "it handed out its memory: it refused this client (no "
			 "free peer ID, or it ran out of file descriptors)", path);
		return true;
	case ENOTCONN:
		snprintf(buf, len, "window ivshmem:%s: the ivshmem server closed "
			 "the connection (it stopped, or dropped this process): "
			 "peers that join from now on cannot ring this process; "
			 "open the window again once a server runs", path);
		return true;
	case EMFILE:
	case ENFILE:
		return fd_words(path, err, buf, len);
	case ENODEV:
		snprintf(buf, len, "window ivshmem:%s: the memory the server "
			 "handed out is not a regular file (a pipe, a socket or a "
			 "device cannot be mapped as a window): is it an ivshmem "
			 "server?", path);
		return true;
	case ENODATA:
		snprintf(buf, len, "window ivshmem:%s: the memory the server "
			 "handed out has 0 bytes", path);
		return true;
	default:
		return false;
	}
}

const struct smq_transport smq_transport_ivshmem = {
	.name = "ivshmem",
	.help = "ivshmem:SOCKET  the memory of an ivshmem server (smqctl "
		"server): a host process as a peer of QEMU guests, with "
		"doorbells",
	.open = ivshmem_open,
	.map_layout = smq_map_fixed_layout,
	.close = ivshmem_close,
	.explain = ivshmem_explain,
	.bell_open = ivshmem_bell_open,
	.bell_close = ivshmem_bell_close,
	.ring_kinds = ivshmem_ring_kinds,
	.ring = ivshmem_ring,
	.wait = ivshmem_wait,
	.describe = ivshmem_describe,
};
