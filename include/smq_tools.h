/*
 * libsmq's calls for its tools, not for applications: the window's map and
 * the raw link that smqctl check tests, the ivshmem server of smqctl
 * server and the vfio broker of smqctl broker.  smqctl and the tests link
 * them from the private archive libsmq-tools.a; this header is never
 * installed, and neither libsmq.so nor the installed libsmq.a exports
 * them (2.0 took them off the library's face: each public call is a
 * promise kept for every later version, and these serve smqctl alone).
 * They follow the conventions of smq.h's calls.
 */
#ifndef SMQ_TOOLS_H
#define SMQ_TOOLS_H

#include "smq.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The window's map and the raw link, through the scratch areas
 * of a window formatted with SMQ_SHAPE_SCRATCH (smq(7), feature
 * "scratch"), for smqctl check.  smq_map_look() reads what this board
 * knows board's region holds through its own mapping; smq_map_clear()
 * fills this board's scratch data with words that say their own offsets;
 * smq_map_write() writes words that say who wrote them and where into
 * board's scratch data, and smq_map_verify() reads this board's own back,
 * as written by writer.  The result names the first wrong word and what
 * the view looks like. */
enum smq_map_kind {
	SMQ_MAP_OK = 0,
	SMQ_MAP_SHIFTED = 1,     /* the word found belongs at offset + shift:
				    a translation offset */
	SMQ_MAP_ALIASED = 2,     /* what lies wrap bytes lower shows here,
				    while lower words read right: a view
				    that wraps */
	SMQ_MAP_STUCK = 3,       /* bits stuck_ones set (stuck_zeros clear)
				    in every word, whatever was written */
	SMQ_MAP_NOTHING = 4,     /* nothing arrived (the words cleared stay),
				    or a read found all ones (nobody answers
				    there) */
	SMQ_MAP_WRONG = 5        /* something else */
};
struct smq_map_result {
	uint32_t board;          /* whose region (verify: this board) */
	uint32_t kind;           /* enum smq_map_kind */
	uint64_t offset;         /* the first wrong word, in the window */
	uint64_t found, expected; /* what it holds, and should */
	int64_t shift;           /* SMQ_MAP_SHIFTED */
	uint64_t wrap;           /* SMQ_MAP_ALIASED */
	uint64_t stuck_ones, stuck_zeros; /* SMQ_MAP_STUCK */
	uint64_t wrong, words;   /* words wrong, of the words looked at */
	char what[48];           /* what the first wrong word is ("its guard
				    words", "board 1's words") */
};
int smq_map_look(struct smq_window *w, unsigned board,
		 struct smq_map_result *r, size_t size);
int smq_map_clear(struct smq_window *w);
int smq_map_write(struct smq_window *w, unsigned board, uint64_t nonce);
int smq_map_verify(struct smq_window *w, unsigned writer, uint64_t nonce,
		   struct smq_map_result *r, size_t size);
/* The raw link: the len bytes of buf written times, unit after
 * unit from offset of board's scratch data (SMQ_SCRATCH_DATA bytes; back
 * to its start where the next would not fit), returning once they
 * landed; and len bytes read from offset. */
#define SMQ_SCRATCH_DATA 65536
int smq_scratch_write(struct smq_window *w, unsigned board, size_t offset,
		      const void *buf, size_t len, unsigned times);
int smq_scratch_read(struct smq_window *w, unsigned board, size_t offset,
		     void *buf, size_t len);

/* An ivshmem server, for QEMU's ivshmem-doorbell device and host peers
 * (QEMU's ivshmem protocol, version 0): it owns the shared memory, gives
 * each client of its UNIX socket an ID (0 to 65535, in turn) and
 * one eventfd per interrupt vector, and tells every client when others
 * come and go.  One thread at a time uses a server handle. */
struct smq_server;
#define SMQ_SERVER_MAX_VECTORS 64
#define SMQ_SERVER_MAX_PEERS 65536

struct smq_server_config {
	const char *socket_path;
	const char *memory;  /* "shm:NAME", "file:PATH", or NULL: anonymous */
	uint64_t size;       /* bytes, rounded up to a power of two (a PCI
				BAR's size); an existing object is never
				shrunk */
	unsigned vectors;    /* 1 to SMQ_SERVER_MAX_VECTORS, for every client */
	unsigned mode;       /* the socket's permission bits; 0: 0600 */
};

enum smq_server_event_type {
	SMQ_PEER_JOINED = 1,
	SMQ_PEER_LEFT = 2,
	SMQ_PEER_REFUSED = 3    /* a client that got no ID */
};

struct smq_server_event {
	int type;            /* enum smq_server_event_type */
	unsigned peer;       /* its ID (0 when refused) */
	int pid;             /* the client's process (SO_PEERCRED), -1 unknown */
	int error;           /* LEFT: 0 if it closed its connection, else why
				the server dropped it; REFUSED: why (negative
				errno values) */
};

struct smq_server_info {
	uint64_t memory_size;
	unsigned vectors;
	unsigned peers;      /* connected now */
};

int smq_server_open(const struct smq_server_config *c, size_t size,
		    struct smq_server **s);
/* poll() it for POLLIN: smq_server_next() has something to do. */
int smq_server_fd(struct smq_server *s);
/* Serves the socket up to timeout_ms (SMQ_WAIT_FOREVER, 0: only what is
 * ready) and returns 0 with the next event, or -ETIMEDOUT. */
int smq_server_next(struct smq_server *s, int timeout_ms,
		    struct smq_server_event *ev, size_t size);
/* The IDs connected now, lowest first: returns how many there are and
 * stores up to max of them. */
int smq_server_peers(struct smq_server *s, unsigned *ids, unsigned max);
int smq_server_info(struct smq_server *s, struct smq_server_info *info,
		    size_t size);
/* Closes every connection and removes the socket; the memory stays. */
int smq_server_close(struct smq_server *s);

/* A vfio broker: VFIO lets one process hold a PCI device, so one
 * process of a board holds it and hands its device file and its MSI-X
 * vectors' eventfds to the board's other processes over a UNIX socket;
 * they name it with the window spec "broker:SOCKET".  One thread at a time
 * uses a broker handle. */
struct smq_broker;

struct smq_broker_config {
	const char *socket_path;
	const char *window;  /* "pci:BDF" or "pci:BDF/BAR", bound to vfio-pci */
	unsigned mode;       /* the socket's permission bits; 0: 0600 */
};

enum smq_broker_event_type {
	SMQ_CLIENT_ATTACHED = 1,
	SMQ_CLIENT_DETACHED = 2
};

struct smq_broker_event {
	int type;            /* enum smq_broker_event_type */
	int pid;             /* the client's process (SO_PEERCRED), -1 unknown */
	unsigned vectors;    /* DETACHED: the vectors it held, given back */
	int error;           /* DETACHED: 0 if it closed, else why dropped */
};

struct smq_broker_info {
	char device[16];     /* dddd:bb:ss.f */
	int bar;             /* the BAR that holds the window */
	uint64_t memory_size;
	unsigned vectors;    /* MSI-X vectors routed (0: no doorbell) */
	unsigned clients;    /* connected now */
};

int smq_broker_open(const struct smq_broker_config *c, size_t size,
		    struct smq_broker **b);
/* poll() it for POLLIN: smq_broker_next() has something to do. */
int smq_broker_fd(struct smq_broker *b);
/* Serves the socket up to timeout_ms (SMQ_WAIT_FOREVER, 0: only what is
 * ready) and returns 0 with the next event, or -ETIMEDOUT. */
int smq_broker_next(struct smq_broker *b, int timeout_ms,
		    struct smq_broker_event *ev, size_t size);
int smq_broker_info(struct smq_broker *b, struct smq_broker_info *info,
		    size_t size);
/* Closes every connection, removes the socket, lets the device go. */
int smq_broker_close(struct smq_broker *b);

#ifdef __cplusplus
}
#endif
#endif
