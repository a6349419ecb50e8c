/* libsmq internals: what transports share -- single-window maps, files
 * and shm objects, vector pools, the futex doorbell -- beside the
 * operations table of transport.h, which is what the rest of the library
 * sees of a transport. */
#ifndef SMQ_TRANSPORT_COMMON_H
#define SMQ_TRANSPORT_COMMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "transport.h"

/* A single window: one segment over [0, size) at base. */
void smq_map_single(struct smq_map *m);
/* map_layout for a single window of fixed size (a BAR, an ivshmem
 * memory): -SMQ_ETOOSMALL if the layout does not fit. */
int smq_map_fixed_layout(struct smq_map *m, const struct smq_layout *l,
			 bool grow);
/* Unmaps base/size and closes fd: every single-window transport's close. */
void smq_map_close(struct smq_map *m);
/* A mapping that is replaced: unmapped at close (or now, if too many). */
void smq_map_retire(struct smq_map *m, void *base, uint64_t size);

/* shm.c: helpers for transports over files and shm objects (and
 * smq_shm_name_ok(), in shm_name.h) */
/* Formatting takes the object over: ours and not writable by others, or
 * -SMQ_EFOREIGN; with force, made ours and 0600. */
int smq_fd_claim(int fd, bool force);
int smq_fd_grow(int fd, uint64_t size);         /* never shrinks */
/* Whether an object of size bytes, mapped at base, was sized by
 * another program (QEMU's memory backend, truncate -s): it has bytes and
 * its first page is all zero, so no init ever wrote it.  Such an object is
 * fixed at its size: a guest or a device already maps that much. */
bool smq_map_sized_elsewhere(const void *base, uint64_t size);
/* 0 if smq_remove() may delete the object at fd (empty, zero at its
 * start, or an smq window), else -SMQ_ENOTWINDOW or -errno. */
int smq_fd_is_window(int fd);
/* Words for err as it came from opening the object at path (named who,
 * "window shm:x"): a missing directory, another user's object, a link;
 * false: none better than smq_strerror()'s. */
bool smq_fd_explain(const char *who, const char *path, int err, char *buf,
		    size_t len);
/* fn(name) for every object of /dev/shm that begins with the magic. */
int smq_shm_scan(int (*fn)(const char *name, void *arg), void *arg);

/* dax.c: the dax transport's open and explain with sysfs under root
 * ("/sys"; a recorded tree in tests). */
int smq_dax_open_under(struct smq_map *m, const char *path, const char *root);
bool smq_dax_explain_under(const char *path, uint64_t offset, int err,
			   char *buf, size_t len, const char *root);

/* Interrupt vectors of a doorbell device, one per waiter (an eventfd is
 * read by one waiter only).  registry.c. */
struct smq_vector_pool {
	pthread_mutex_t lock;
	uint64_t used;          /* bit v: vector v is some waiter's */
	unsigned n;             /* vectors there are, at most 64 */
};
void smq_vectors_init(struct smq_vector_pool *p, unsigned n);
/* A free vector, or -EBUSY. */
int smq_vectors_take(struct smq_vector_pool *p);
void smq_vectors_give(struct smq_vector_pool *p, unsigned v);

/* unix_socket.c: path as an address (-EINVAL empty, -ENAMETOOLONG) */
struct sockaddr_un;
struct stat;
int smq_unix_address(const char *path, struct sockaddr_un *a);
/* What is at a's path: 0, nothing or a socket nobody of kind type
 * answers on (*stale: remove it first); -EADDRINUSE, a server answers;
 * -EEXIST, something that is not a socket. */
int smq_unix_probe(const struct sockaddr_un *a, int type, bool *stale);
/* A socket of kind type listening at a, its file of mode (*st: what it
 * is, to know it again at close): its descriptor, or a negative errno
 * with nothing left at the path. */
int smq_unix_listen(const struct sockaddr_un *a, int type, unsigned mode,
		    int backlog, struct stat *st);
/* unix_socket.c: len bytes of buf and, if fd >= 0, the descriptor fd, on a
 * UNIX socket (never SIGPIPE): 0 when all went, else -errno or -EIO. */
int smq_send_fd(int sock, const void *buf, size_t len, int fd, int flags);

/* The futex doorbell, for transports whose memory one kernel maps. */
void smq_futex_ring(struct smq_map *m, const struct smq_bell_addr *a,
		    struct smq_far word, uint32_t value);
int smq_futex_wait(struct smq_map *m, const struct smq_bell_addr *a,
		   const uint32_t *word, uint32_t seen,
		   const struct timespec *deadline);
/* Wakes every waiter on word (shared memory of this kernel). */
void smq_futex_wake(const uint32_t *word);
/* ...on n words at once: 0 when one of them changed or was woken */
int smq_futex_wait_many(const uint32_t *const *words, const uint32_t *seen,
			unsigned n, const struct timespec *deadline);
int smq_futex_bell_open(struct smq_map *m, struct smq_bell_addr *a);
uint32_t smq_futex_ring_kinds(struct smq_map *m);
/* Waits for a ring on an eventfd (a doorbell's interrupt): 0 or
 * -ETIMEDOUT; takes the rings. */
int smq_wait_eventfd(int fd, const struct timespec *deadline);

#endif
