/* A doorbell to a receiver that joined the ivshmem server while its
 * sender was not reading the server's messages.  A process that only
 * sends reads them only when it rings; peers that joined meanwhile fill
 * its socket, and the server holds back the rest, among them how to ring
 * the new receiver (here also stopped for 50 ms around the send).  The ring must still reach it: the sender reads the
 * server's messages until it learns the receiver's eventfd (or owes it
 * the ring until then).  Told by the test build's hooks: the receiver's
 * sleep ends rung (SMQ_HOOK_RUNG), not at the end of its slice
 * (SMQ_HOOK_SLEPT_OUT), which is what a lost doorbell leaves it. */
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include "testint.h"
#include "testlib.h"

/* the least count of checks a run makes (135 as root here; fewer
 * where a part needs root or a device) */
TEST_FLOOR(120);

#ifndef SMQ_COUNT_FAR
#error "t_ivshmem_late needs the test build's hooks (SMQ_COUNT_FAR)"
#endif

#define FILLERS 60  /* peers that join and stay, never reading */

static char path[256];
static int *joined;              /* atomic, shared with the server's
				    process: the peers it has taken in */
static int asleep;               /* atomic: the receiver went to sleep */
static int after_send;           /* atomic */
static int ended;                /* atomic: the first end of a sleep after
				    the send, a hook's number; 0 none */

static void on_hook(enum smq_hook where)
{
	if (where == SMQ_HOOK_SLEEP)
		__atomic_store_n(&asleep, 1, __ATOMIC_RELEASE);
	if ((where == SMQ_HOOK_RUNG || where == SMQ_HOOK_SLEPT_OUT) &&
	    __atomic_load_n(&after_send, __ATOMIC_ACQUIRE)) {
		int none = 0;
		__atomic_compare_exchange_n(&ended, &none, (int)where, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
	}
}

static int serve(void *arg)
{
	struct smq_server_config c = { path, NULL, 1 << 20, 8, 0 };
	struct smq_server *s;
	struct smq_server_event ev;

	(void)arg;
	OK(smq_server_open(&c, sizeof(c), &s));
	for (;;) {
		int err = smq_server_next(s, -1, &ev, sizeof(ev));
		if (err && err != -ETIMEDOUT && err != -EINTR)
			return 1;
		/* a join's event comes once its messages to every peer are
		 * sent or held back */
		if (!err && ev.type == SMQ_PEER_JOINED)
			__atomic_add_fetch(joined, 1, __ATOMIC_RELEASE);
	}
}

struct rx {
	struct smq_queue *q;
	int err;
};

/* The server stopped around the send: what it holds comes only later */
static pid_t srv;

static void *resume_server(void *arg)
{
	(void)arg;
	/* (not a stand-in for a state: the server is held on purpose while
	 * the send begins, so that what it holds comes only later) */
	usleep(50 * 1000);
	kill(srv, SIGCONT);
	return NULL;
}

static void *receive(void *arg)
{
	struct rx *r = arg;
	char buf[64];
	size_t n;

	r->err = smq_receive(r->q, buf, sizeof(buf), &n, NULL, 10000);
	return NULL;
}

int main(void)
{
	char spec[300];
	struct smq_window *w0, *w1;
	struct smq_queue *tx;
	struct rx r = { 0 };

	snprintf(path, sizeof(path), "%s/ivshmem.sock", test_dir());
	snprintf(spec, sizeof(spec), "ivshmem:%s", path);
	joined = mmap(NULL, sizeof(*joined), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(joined != MAP_FAILED);
	srv = test_fork(serve, NULL);
	WAIT_UNTIL(!access(path, F_OK), 20, "the server's socket %s", path);
	const struct smq_geometry g = { 2, 1, 4, 64, (const uint16_t[]){ 1 } };
	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w0));
	OK(smq_init(w0, &g, sizeof(g)));
	OK(smq_queue_open(w0, 0, SMQ_SENDER, 0, &tx));
	for (int i = 0; i < FILLERS; i++) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		CHECK(fd >= 0);
		strcpy(a.sun_path, path);
		CHECK(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	}
	/* the server has told the sender's socket all it holds: it took in
	 * the sender and every filler */
	WAIT_UNTIL(__atomic_load_n(joined, __ATOMIC_ACQUIRE) >= FILLERS + 1, 20,
		   "the server to take in the sender and %d fillers", FILLERS);
	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_queue_open(w1, 0, SMQ_RECEIVER, SMQ_SLEEP, &r.q));
	smq_test_hook = on_hook;
	pthread_t t;
	CHECK(pthread_create(&t, NULL, receive, &r) == 0);
	WAIT_UNTIL(__atomic_load_n(&asleep, __ATOMIC_ACQUIRE), 20,
		   "the receiver to sleep on its doorbell");
	__atomic_store_n(&after_send, 1, __ATOMIC_RELEASE);
	pthread_t resume;
	kill(srv, SIGSTOP);
	CHECK(pthread_create(&resume, NULL, resume_server, NULL) == 0);
	OK(smq_send(tx, "wake", 4, 1000));
	CHECK(pthread_join(resume, NULL) == 0);
	CHECK(pthread_join(t, NULL) == 0);
	OK(r.err);
	int how = __atomic_load_n(&ended, __ATOMIC_ACQUIRE);
	if (how != SMQ_HOOK_RUNG)
		FAIL("the receiver's sleep ended %s: the doorbell of a "
		     "receiver the sender had not heard of was lost",
		     how == SMQ_HOOK_SLEPT_OUT ? "at its slice" : "unseen");
	printf("ivshmem_late: a receiver that joined behind %d peers the "
	       "sender had not read of: rung\n", FILLERS);
	smq_test_hook = NULL;
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	OK(smq_queue_close(r.q));
	OK(smq_queue_close(tx));
	OK(smq_close(w1));
	OK(smq_close(w0));
	return 0;
}
