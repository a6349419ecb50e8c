/* QEMU's ivshmem-doorbell protocol, version 0 (QEMU's
 * docs/specs/ivshmem-spec.txt), as both of its ends here speak it: the
 * server (server.c) and the client a host process uses (client.c).
 *
 * The connection is one-way, server to client, over a UNIX stream
 * socket; each message is an 8-byte little-endian signed number with at
 * most one file descriptor beside it (SCM_RIGHTS).  A client that
 * connects is told, in order: the protocol version (no descriptor); its
 * own ID (no descriptor); -1 with the shared memory's descriptor; then,
 * for every peer already there, that peer's ID once per vector, each
 * with the eventfd that rings it; then its own ID once per vector with
 * the eventfds it reads.  Later, a newcomer's ID once per vector with its
 * eventfds, and a departed peer's ID with no descriptor.  A client never
 * hears of the removal of a peer it was not told of. */
#ifndef SMQ_IVSHMEM_PROTOCOL_H
#define SMQ_IVSHMEM_PROTOCOL_H

#define IVSHMEM_PROTOCOL_VERSION 0
/* Peer IDs are 16 bits in QEMU's device */
#define IVSHMEM_MAX_PEER_ID 65535
/* interrupt vectors of one peer: a QEMU device's vectors=N at most */
#define IVSHMEM_MAX_VECTORS 64

#endif
