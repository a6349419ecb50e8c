/* A strict client of QEMU's ivshmem protocol (version 0), for tests: it
 * holds a server to every rule QEMU's own client and device hold it to,
 * and to the ones they only take for granted.
 *  - setup: the version (0, no descriptor), the client's ID (0 to 65535,
 *    no descriptor), the memory (-1 with one descriptor: a regular file,
 *    not empty, its size a power of two), then the peers already there,
 *    lowest ID first (smq_server_open(3) promises it; QEMU's server
 *    orders them as they came), each a whole run of N vectors, then the
 *    client's own N vectors;
 *  - after: a new peer is a whole run of N vectors, never interleaved with
 *    another's, under an ID not known, higher than any given before (QEMU's
 *    device cannot take an ID back at once); a removal (no descriptor)
 *    names a peer the client was told of, whole, and never itself; no
 *    second memory; every vector descriptor is an eventfd.
 * QEMU's client drops the connection on a removal of a peer it does not
 * know ("receive delete for invalid peer"); here every breach is named in
 * why. */
#ifndef SMQ_TEST_IVSHMEM_STRICT_H
#define SMQ_TEST_IVSHMEM_STRICT_H

#include <stdbool.h>
#include <stdint.h>

#define STRICT_MAX_ID 65535
#define STRICT_MAX_VECTORS 64

struct strict_peer {
	unsigned n;                    /* vectors received */
	int fd[STRICT_MAX_VECTORS];
};

struct strict {
	int sock;
	unsigned vectors;              /* N: what the server was started with */
	int id;                        /* ours, -1 before it came */
	int mem_fd;
	uint64_t mem_size;
	int phase;                     /* enum in ivshmem_strict.c */
	int run;                       /* the peer whose vectors come, or -1 */
	unsigned own;                  /* our vectors received */
	int own_fd[STRICT_MAX_VECTORS];
	int last_new;                  /* highest ID announced after setup */
	int last_old;                  /* the last peer of the setup's picture */
	struct strict_peer *peer[STRICT_MAX_ID + 1];
	unsigned npeers;
	unsigned long messages, joins, removals;
	char why[256];                 /* the first breach, or "" */
};

/* Connects to path: 0, or -errno (nothing read yet). */
int strict_connect(struct strict *s, const char *path, unsigned vectors);
/* Reads and checks one message, waiting up to timeout_ms (-1: for ever):
 * 1 one taken, 0 none within the time, -ECONNRESET the server closed,
 * -EPROTO a breach (named in s->why), another -errno. */
int strict_step(struct strict *s, int timeout_ms);
/* Whether the setup is complete (our own N vectors came). */
bool strict_ready(const struct strict *s);
/* Reads until the setup is complete: 0, or strict_step()'s error
 * (-ETIMEDOUT if it took longer than timeout_ms). */
int strict_setup(struct strict *s, int timeout_ms);
/* The IDs of the peers known, lowest first: how many (up to max stored). */
unsigned strict_peers(const struct strict *s, unsigned *ids, unsigned max);
void strict_close(struct strict *s);

#endif
