/* libsmq internals: the protocol of a vfio broker (smq_broker_open(3),
 * smqctl broker) and its clients (the broker: transport).  Not installed.
 *
 * A UNIX socket of type SOCK_SEQPACKET: each message is one struct
 * broker_msg, some with one descriptor (SCM_RIGHTS).
 *  - HELLO, broker to client on connect, with the device's VFIO file: the
 *    device's address, the BAR that holds the window, and how many MSI-X
 *    vectors the broker routed;
 *  - TAKE, client to broker: a vector for one waiter; answered by VECTOR
 *    with the vector's eventfd, or with error -EBUSY (none free);
 *  - GIVE, client to broker: the vector is free again.
 * A client that closes gives back every vector it took.  The broker never
 * writes but to answer, so a client sees the broker end as the end of the
 * connection (POLLRDHUP). */
#ifndef SMQ_BROKER_PROTO_H
#define SMQ_BROKER_PROTO_H

#include <stdint.h>

#define BROKER_MAGIC 0x424d5153u   /* "SQMB" little-endian */
#define BROKER_VERSION 1
#define BROKER_MAX_VECTORS 64
#ifndef BROKER_TIMEOUT_MS           /* (a test sets its own) */
#define BROKER_TIMEOUT_MS 10000    /* a client waits this long for answers */
#endif

enum broker_type { BK_HELLO = 1, BK_TAKE = 2, BK_VECTOR = 3, BK_GIVE = 4 };

struct broker_msg {
	uint32_t magic;
	uint32_t type;          /* enum broker_type */
	uint32_t version;       /* HELLO */
	int32_t error;          /* VECTOR: 0 or a negative errno */
	uint32_t vector;        /* VECTOR, GIVE */
	uint32_t vectors;       /* HELLO: MSI-X vectors routed */
	int32_t bar;            /* HELLO: the BAR that holds the window */
	char bdf[16];           /* HELLO: dddd:bb:ss.f */
};

/* transport/broker.c: one message, with fd (-1: none).  0 or -errno. */
int broker_send(int sock, const struct broker_msg *m, int fd);
/* One message into *m and its descriptor into *fd (-1: none), without
 * waiting longer than timeout_ms (-1: no limit; 0: -EAGAIN if none):
 * its size, 0 at the end of the connection, or -errno (-EPROTO: a
 * message of another size; -EMFILE: the message, in *m, whose
 * descriptors were lost, as a receiver out of descriptors loses them). */
int broker_recv(int sock, struct broker_msg *m, int *fd, int timeout_ms);

#endif
