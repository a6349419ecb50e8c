/* libsmq internals: a client of an ivshmem server (QEMU's ivshmem
 * protocol, version 0), so that a host process is a peer of QEMU guests'
 * ivshmem-doorbell devices: it maps the server's memory and rings and is
 * rung through the peers' eventfds.  Not installed.
 *
 * Functions return 0 (or a count, or a descriptor) or a negative errno;
 * none prints.
 *
 * Threads: ivc_ring(), ivc_update() and the getters may be called from
 * any number of threads at once.  ivc_wait() on one vector is done by one
 * thread at a time: the eventfd of a vector is read by its waiter, and a
 * second waiter could sleep on a ring the first one took.  ivc_close()
 * only when no other call on the handle runs. */
#ifndef SMQ_IVSHMEM_CLIENT_H
#define SMQ_IVSHMEM_CLIENT_H

#include <stdint.h>
#include <time.h>
#include "protocol.h"

/* How long ivc_connect() waits for the server's first messages. */
#define IVC_SETUP_TIMEOUT_MS 10000
/* With no peer to learn the server's vector count from, the vectors are
 * complete when no other comes within this time (see ivc_connect()). */
#define IVC_SETTLE_MS 100

struct ivc;

/* Connects to the server's socket and reads the protocol version, this
 * client's ID, the memory's descriptor, the peers already there and this
 * client's own vectors.
 *
 * vectors is the number of interrupt vectors this client uses, as QEMU's
 * vectors=N (1 to IVSHMEM_MAX_VECTORS): extra descriptors from the server are
 * closed.  0 takes as many as the server gives.  The protocol does not
 * say how many that is: the count is that of a peer already connected,
 * else (the first client) what arrives until IVC_SETTLE_MS pass without
 * another; a vector that comes later still is added by ivc_update().
 *
 * -ENOENT, -ECONNREFUSED: no server on socket_path; -EPROTONOSUPPORT:
 * another protocol version (ivc_server_version() says which); -EPROTO: a
 * malformed message; -EMFILE, -ENFILE: this process is out of descriptors
 * (one the server sent was lost); -ECONNRESET: the server hung up before the memory
 * and our vectors came (it refused us: no free ID); -ETIMEDOUT: the
 * server said too little within IVC_SETUP_TIMEOUT_MS; -EINVAL, -ENAMETOOLONG:
 * a bad argument; -ENOMEM. */
int ivc_connect(struct ivc **c, const char *socket_path, unsigned vectors);

/* The protocol version the server at socket_path speaks (its first
 * message; ivc_connect() speaks version 0).  Connects and hangs up at
 * once: for words after -EPROTONOSUPPORT, not for a client. */
int ivc_server_version(const char *socket_path, int64_t *version);

int ivc_id(const struct ivc *c);
/* The shared memory (owned by the handle: dup it to keep it). */
int ivc_memory_fd(const struct ivc *c);
/* Own vectors connected, 0 .. IVSHMEM_MAX_VECTORS. */
unsigned ivc_vectors(const struct ivc *c);
/* poll() it for POLLIN: notifications wait for ivc_update(). */
int ivc_socket_fd(const struct ivc *c);
/* poll() it for POLLIN: vector is rung (then ivc_wait() takes the ring);
 * -ENXIO if the vector is not connected. */
int ivc_vector_fd(const struct ivc *c, unsigned vector);

/* Takes the notifications waiting on the socket (peers joining and
 * leaving) without blocking; returns how many.  -ENOTCONN: the server is
 * gone (its socket closed; the peers as last known stay usable, as QEMU's
 * spec allows); -EPROTO: it broke the protocol; -EMFILE, -ENFILE: a
 * descriptor it sent could not be received (out of descriptors).  After
 * any of these the connection is closed, and every later ivc_update() and
 * ivc_wait() returns the same. */
int ivc_update(struct ivc *c);
/* 0 while connected, else why not (ivc_update()'s errors). */
int ivc_gone(const struct ivc *c);

/* Rings vector of peer (this client's own ID rings itself).  -ENOENT: no
 * such peer as of the last ivc_update(); -ENXIO: the peer has no such
 * vector. */
int ivc_ring(struct ivc *c, unsigned peer, unsigned vector);
/* The same for a peer that may have joined since the last ivc_update():
 * its eventfd is learnt from the server's messages, read for up to
 * timeout_ms (a client that only rings reads them only here, and the
 * server may hold them back while our socket is full).  One still unknown
 * then is owed: rung as soon as an ivc_update() (or an ivc_wait(), which
 * takes the notifications) brings it, unless the peer leaves first.
 * 0 rung, 1 owed, or ivc_ring()'s other errors. */
int ivc_ring_learn(struct ivc *c, unsigned peer, unsigned vector,
		   int timeout_ms);

/* Waits until vector is rung, or deadline (CLOCK_MONOTONIC, absolute;
 * NULL: forever) passes: 0 rung, -ETIMEDOUT, -ENXIO (no such vector),
 * -EINTR (a signal handler ran).  A
 * ring that came before the call is not lost; the rings are taken, so
 * several rings before a wait make one wake-up.  The server's socket is
 * read in the same wait (as ivc_update()), so peers are tracked while
 * the client sleeps; if the connection is or becomes closed, the wait
 * ends with ivc_update()'s error (-ENOTCONN: the server is gone), since
 * peers that join from then on cannot ring this client. */
int ivc_wait(struct ivc *c, unsigned vector, const struct timespec *deadline);

/* 1 if peer is connected as of the last ivc_update() (or is this
 * client), else 0. */
int ivc_peer_connected(const struct ivc *c, unsigned peer);
/* The peers' IDs, lowest first (not this client's): returns how many
 * there are and stores up to max of them. */
int ivc_peers(const struct ivc *c, unsigned *ids, unsigned max);

void ivc_close(struct ivc *c);

#endif
