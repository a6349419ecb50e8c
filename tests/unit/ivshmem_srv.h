/* A server in a child process, and client helpers, for the tests of the
 * ivshmem server and client (t_ivshmem, t_ivshmem_idle). */
#ifndef SMQ_TEST_IVSHMEM_SRV_H
#define SMQ_TEST_IVSHMEM_SRV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>
#include "smq.h"
#include "ivshmem/client.h"

struct record {
	int status;               /* open: its result; then 1 per event */
	struct smq_server_event ev;
	int npeers;
	unsigned ids[16];
};

struct srv {
	pid_t pid;
	int events;               /* read end: records */
	int stop;                 /* write end: a byte stops it */
	char path[108];
};

/* The test's directory (sockets, files: test_dir(), removed at exit);
 * SIGPIPE ignored. */
extern char srv_dir[64];
void srv_setup(void);

int count_fds(void);
void deadline_in(struct timespec *ts, int ms);
void sleep_ms(int ms);
/* When > 0, the next server started may open this many descriptors more
 * than it inherits (its limit of open files, soft and hard), and runs as
 * a user of its own, without capabilities: a user's server, whose
 * descriptors in flight to clients the kernel bounds by that limit. */
extern int srv_nofile;
/* Such a server's soft limit lowered to SRV_LOW_NOFILE (low), or given
 * back: a signal it takes even in a call (another user's process's
 * limits are not ours to set without CAP_SYS_RESOURCE). */
#define SRV_LOW_NOFILE 64
void srv_limit(struct srv *sv, bool low);
/* Starts a server on srv_dir/name; returns smq_server_open()'s result. */
int start_server(struct srv *sv, const char *name, const char *memory,
		 uint64_t size, unsigned vectors);
/* Stops it: it must close cleanly, with no descriptor leaked. */
void stop_server(struct srv *sv);
struct record next_event(struct srv *sv);
void expect_event(struct srv *sv, int type, unsigned peer, int err);
void no_event(struct srv *sv, int ms);
/* A client that must get want_id, and the server's report of it. */
struct ivc *join_at(int line, struct srv *sv, unsigned vectors, int want_id);
#define join(...) join_at(__LINE__, __VA_ARGS__)
/* Takes notifications until peer's presence is as wanted (10 s at most). */
void until_peer(struct ivc *c, unsigned peer, int connected);
void expect_quiet(struct ivc *c, unsigned vector);
/* from rings to's vector v: to wakes on v, and on no other vector */
void ring_ok(struct ivc *from, struct ivc *to, unsigned v);

#endif
