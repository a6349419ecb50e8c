/* libsmq internals of the ivshmem client, shared by its two files: the
 * handle, and the server's messages and the peers they tell of
 * (client_msg.c), below what client.c offers. */
#ifndef SMQ_IVSHMEM_CLIENT_INT_H
#define SMQ_IVSHMEM_CLIENT_INT_H

#include <pthread.h>
#include <stdint.h>
#include "client.h"

#define IVC_OWED 16   /* rings owed at once; more are dropped (a nap wakes
			 their receivers) */

struct ivc_peer {
	unsigned id;
	unsigned n;
	int fd[IVSHMEM_MAX_VECTORS];   /* we write them: they ring the peer */
};

struct ivc {
	int sock;
	int id;
	int mem_fd;
	unsigned cap;              /* vectors kept per peer and for us */
	int own[IVSHMEM_MAX_VECTORS];  /* we read them: our vectors */
	unsigned nown;             /* atomic: ivc_wait() reads it unlocked */
	/* The peers: ivc_ring() reads them under the read lock (a descriptor
	 * is never closed under a ring), ivc_update() changes them under
	 * the write lock, which also guards the message being read. */
	pthread_rwlock_t lock;
	struct ivc_peer *peers;    /* sorted by ID */
	unsigned npeers, peers_cap;
	/* rings owed to vectors not known yet (ivc_ring_learn), under the
	 * write lock */
	struct { unsigned peer, vector; } owed[IVC_OWED];
	unsigned nowed;
	unsigned char buf[8];      /* a message read in part */
	unsigned got;
	int pending_fd;
	int gone;                  /* 0, or why the connection is closed:
				      -ENOTCONN the server closed it,
				      -EPROTO it broke the protocol,
				      -EMFILE/-ENFILE a descriptor lost */
};

/* client_msg.c: one message of the server, as far as it has come: 1 and
 * its value (and *fd, or -1), 0 for more to come, or a negative errno */
int ivc_read_msg(struct ivc *c, int64_t *value, int *fd);
/* ...waiting for a whole one until deadline (ms of smq_now_ms()) */
int ivc_read_msg_until(struct ivc *c, int64_t *value, int *fd,
		       int64_t deadline);
/* A message taken in: a peer's vector, our own, or a peer gone */
int ivc_take_msg(struct ivc *c, int64_t value, int fd);
/* The connection closed for why (the first reason stays) */
void ivc_hang_up(struct ivc *c, int why);
/* The peer of that ID, or NULL (under the lock) */
struct ivc_peer *ivc_find_peer(const struct ivc *c, unsigned id);
/* Its descriptors closed and its entry removed (under the write lock) */
void ivc_remove_peer(struct ivc *c, struct ivc_peer *p);

#endif
