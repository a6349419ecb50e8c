/* libsmq internals: the ivshmem server's state, shared by its files
 * (server.c tells what the server is).  Not installed.  Like the
 * server, only the public headers (smq.h, smq_tools.h) and system
 * headers. */
#ifndef SMQ_IVSHMEM_SERVER_H
#define SMQ_IVSHMEM_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>
#include "smq_tools.h"
#include "protocol.h"

_Static_assert(SMQ_SERVER_MAX_VECTORS == IVSHMEM_MAX_VECTORS,
	       "the public bound on vectors is the protocol's");
_Static_assert(SMQ_SERVER_MAX_PEERS == IVSHMEM_MAX_PEER_ID + 1,
	       "the public bound on peers is the protocol's");

#define EPOLL_BATCH 8
/* How soon a send refused for our descriptors in flight (ETOOMANYREFS)
 * goes again: nothing says when a client has read them. */
#define RETRY_MS 20
#define MAX_SIZE (1ull << 46)

/* A peer's eventfds, one per vector, shared by the runs that tell the
 * others of it: they stay open after the peer left while a run begun
 * still has some of them to send. */
struct vecs {
	unsigned refs;        /* the peer's own, and one per run */
	int efd[SMQ_SERVER_MAX_VECTORS];
};

/* What a client is still to be told, in order: a message (with the
 * memory's descriptor, or none), or a run: a peer's ID once per vector
 * with that vector's eventfd.  So a client that does not read costs no
 * descriptor per message: a run not begun when its peer leaves is dropped
 * unsaid, and a run begun goes on with the peer's eventfds, which it
 * keeps open (see forget_peer): no descriptor is made for it. */
enum outkind { OUT_MSG, OUT_RUN };
struct outmsg {
	enum outkind kind;
	int64_t value;        /* the number sent; a run: the peer's ID */
	int fd;               /* MSG: borrowed, or -1 */
	struct vecs *of;      /* RUN: whose vectors (a reference) */
	unsigned next;        /* RUN: the first vector not yet sent */
};

struct peer {
	int sock;
	unsigned id;
	int pid;
	struct vecs *vecs;                /* its vectors: it reads, others ring */
	struct outmsg *q;                 /* a ring of what is unsent */
	unsigned qhead, qlen, qcap;
	bool want_out;                    /* EPOLLOUT armed */
	bool refs_wait;                   /* refused for our descriptors in
					     flight: the retry timer sends */
	bool dead;
	int dead_err;                     /* 0: it closed; else why dropped */
};

struct smq_server {
	int listen_fd;
	int epoll_fd;
	int mem_fd;
	int reserve_fd;        /* given up to accept (and refuse) a client
				  when we are out of file descriptors */
	int retry_fd;          /* a timerfd: sends the kernel refused for
				  our descriptors in flight go again */
	bool retry_armed;
	uint64_t size;
	unsigned vectors;
	char *socket_path;
	dev_t sock_dev;        /* the socket we made, to remove only it */
	ino_t sock_ino;
	struct peer **slot;    /* by ID; NULL: free */
	unsigned nslots, npeers;
	unsigned next_id;      /* where free_id() looks first */
	struct smq_server_event *ev;  /* a ring of events not yet taken */
	unsigned evhead, evlen, evcap;
	char created[256];     /* while opening: the memory we created, "shm"
				  or "file" prefixed, to remove on failure */
};

/* server_setup.c: the memory and the socket */
int smq_srv_open_memory(struct smq_server *s, const char *spec, uint64_t size);
int smq_srv_size_memory(struct smq_server *s);
int smq_srv_make_socket(struct smq_server *s, const struct sockaddr_un *a,
			unsigned mode);

/* server_peers.c: peers, their IDs and messages, and events */
void smq_srv_peer_flush(struct smq_server *s, struct peer *p);
void smq_srv_retry(struct smq_server *s);
void smq_srv_peer_free(struct peer *p);
int smq_srv_reserve_events(struct smq_server *s, unsigned n);
int smq_srv_accept_client(struct smq_server *s);
void smq_srv_client_input(struct peer *p, uint32_t events);
void smq_srv_reap(struct smq_server *s);

#endif
