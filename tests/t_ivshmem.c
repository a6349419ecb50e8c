/* The ivshmem server (libsmq's smq_server_*) and client (the internal
 * ivc_*), against each other: IDs, the shared memory, rings on the right
 * vector and peer in both directions, a ring before the wait, peers
 * leaving and their IDs not given again at once, a client that breaks the
 * protocol or does not read, the socket's rules, the memory's rules, and
 * no descriptor leaked on either side.
 *
 * The server runs in a child process and reports every event, with the
 * IDs connected after it, through a pipe. */
#include <fcntl.h>
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include "testint.h"
#include "testlib.h"
#include "transport/ivshmem_client.h"

static char dir[64];

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		FAIL("no /proc/self/fd");
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void deadline_in(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_nsec -= 1000000000L;
		ts->tv_sec++;
	}
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- a server in a child process ---- */

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

static void write_record(int fd, const struct record *r)
{
	if (write(fd, r, sizeof(*r)) != (ssize_t)sizeof(*r))
		_exit(3);
}

/* The child: serves until told to stop; exits 0 if it closed cleanly,
 * with the descriptors it had before opening, and the socket gone. */
static void serve(struct smq_server_config c, int events, int stop)
{
	struct record r = { 0 };
	struct smq_server *s;
	int before = count_fds();

	r.status = smq_server_open(&c, sizeof(c), &s);
	write_record(events, &r);
	if (r.status)
		_exit(0);
	struct pollfd pf[2] = { { smq_server_fd(s), POLLIN, 0 },
				{ stop, POLLIN, 0 } };
	for (;;) {
		int err;
		while ((err = smq_server_next(s, 0, &r.ev, sizeof(r.ev))) == 0) {
			r.status = 1;
			r.npeers = smq_server_peers(s, r.ids, 16);
			write_record(events, &r);
		}
		if (err != -ETIMEDOUT) {
			fprintf(stderr, "server: %s\n", smq_strerror(err));
			_exit(4);
		}
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			_exit(5);
		if (pf[1].revents)
			break;
	}
	if (smq_server_close(s))
		_exit(6);
	if (access(c.socket_path, F_OK) == 0) {
		fprintf(stderr, "server: the socket is still there\n");
		_exit(7);
	}
	if (count_fds() != before) {
		fprintf(stderr, "server: %d descriptors before, %d after\n",
			before, count_fds());
		_exit(8);
	}
	_exit(0);
}

/* Starts a server; returns smq_server_open()'s result. */
static int start_server(struct srv *sv, const char *name, const char *memory,
			uint64_t size, unsigned vectors)
{
	int ev[2], st[2];
	struct record r;

	snprintf(sv->path, sizeof(sv->path), "%s/%s", dir, name);
	struct smq_server_config c = { sv->path, memory, size, vectors, 0 };
	if (pipe2(ev, O_CLOEXEC) || pipe2(st, O_CLOEXEC))
		FAIL("pipe");
	fflush(NULL);
	sv->pid = fork();
	if (sv->pid < 0)
		FAIL("fork");
	if (sv->pid == 0) {
		close(ev[0]);
		close(st[1]);
		serve(c, ev[1], st[0]);
	}
	close(ev[1]);
	close(st[0]);
	sv->events = ev[0];
	sv->stop = st[1];
	if (read(sv->events, &r, sizeof(r)) != (ssize_t)sizeof(r))
		FAIL("the server child said nothing");
	if (r.status) {
		test_wait_ok(sv->pid, "the server child");
		close(sv->events);
		close(sv->stop);
	}
	return r.status;
}

static void stop_server(struct srv *sv)
{
	if (write(sv->stop, "x", 1) != 1)
		FAIL("stop");
	test_wait_ok(sv->pid, "the server (clean close, no leak)");
	close(sv->events);
	close(sv->stop);
}

static struct record next_event(struct srv *sv)
{
	struct pollfd pf = { sv->events, POLLIN, 0 };
	struct record r;

	if (poll(&pf, 1, 10000) != 1)
		FAIL("no server event within 10 s");
	if (read(sv->events, &r, sizeof(r)) != (ssize_t)sizeof(r))
		FAIL("short event record");
	return r;
}

static void expect_event(struct srv *sv, int type, unsigned peer, int err)
{
	struct record r = next_event(sv);

	if (r.ev.type != type || (type != SMQ_PEER_REFUSED && r.ev.peer != peer) ||
	    r.ev.error != err)
		FAIL("server event: type %d peer %u error %d, expected type %d "
		     "peer %u error %d", r.ev.type, r.ev.peer, r.ev.error, type,
		     peer, err);
	if (r.ev.pid != getpid() && type == SMQ_PEER_JOINED)
		FAIL("peer %u joined with pid %d, expected %d", peer, r.ev.pid,
		     (int)getpid());
}

static void no_event(struct srv *sv, int ms)
{
	struct pollfd pf = { sv->events, POLLIN, 0 };

	if (poll(&pf, 1, ms) != 0) {
		struct record r = next_event(sv);
		FAIL("unexpected server event: type %d peer %u error %d",
		     r.ev.type, r.ev.peer, r.ev.error);
	}
}

/* ---- client helpers ---- */

static struct ivc *join_at(int line, struct srv *sv, unsigned vectors, int want_id)
{
	struct ivc *c;

	OK(ivc_connect(&c, sv->path, vectors));
	if (ivc_id(c) != want_id)
		FAIL("line %d: got ID %d, expected %d", line, ivc_id(c), want_id);
	expect_event(sv, SMQ_PEER_JOINED, (unsigned)want_id, 0);
	return c;
}
#define join(...) join_at(__LINE__, __VA_ARGS__)

/* Takes notifications until peer's presence is as wanted (10 s at most). */
static void until_peer(struct ivc *c, unsigned peer, int connected)
{
	for (int i = 0; i < 2000; i++) {
		int r = ivc_update(c);
		if (r < 0)
			FAIL("ivc_update: %s", smq_strerror(r));
		if (ivc_peer_connected(c, peer) == connected)
			return;
		sleep_ms(5);
	}
	FAIL("client %d: peer %u still %s", ivc_id(c), peer,
	     connected ? "missing" : "there");
}

static void expect_quiet(struct ivc *c, unsigned vector)
{
	struct pollfd pf = { ivc_vector_fd(c, vector), POLLIN, 0 };

	if (pf.fd < 0 || poll(&pf, 1, 0) != 0)
		FAIL("client %d: vector %u is rung (or missing)", ivc_id(c),
		     vector);
}

/* from rings to's vector v: to wakes on v, and on no other vector */
static void ring_ok(struct ivc *from, struct ivc *to, unsigned v)
{
	struct timespec dl;

	OK(ivc_ring(from, (unsigned)ivc_id(to), v));
	deadline_in(&dl, 5000);
	OK(ivc_wait(to, v, &dl));
	for (unsigned o = 0; o < ivc_vectors(to); o++)
		expect_quiet(to, o);
}

static void *map_memory(struct ivc *c, size_t *len)
{
	struct stat st;

	if (fstat(ivc_memory_fd(c), &st) < 0)
		FAIL("fstat memory");
	*len = (size_t)st.st_size;
	void *p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ivc_memory_fd(c), 0);
	if (p == MAP_FAILED)
		FAIL("mmap memory");
	return p;
}

/* ---- the parts ---- */

static void peers_and_rings(void)
{
	struct srv sv;
	struct timespec dl;
	unsigned ids[8];

	OK(start_server(&sv, "main", NULL, 40000, 4));
	/* the first client: no peer to learn the count from, it settles */
	struct ivc *c0;
	OK(ivc_connect(&c0, sv.path, 0));
	CHECK(ivc_id(c0) == 0);
	expect_event(&sv, SMQ_PEER_JOINED, 0, 0);
	for (int i = 0; i < 1000 && ivc_vectors(c0) < 4; i++) {
		CHECK(ivc_update(c0) >= 0);
		sleep_ms(5);
	}
	CHECK(ivc_vectors(c0) == 4);
	/* the second learns it from the first, at once */
	struct ivc *c1 = join(&sv, 0, 1);
	CHECK(ivc_vectors(c1) == 4);
	CHECK(ivc_peer_connected(c1, 0) == 1);
	until_peer(c0, 1, 1);

	/* one memory, a power of two of at least 40000 bytes */
	size_t len0, len1;
	unsigned char *m0 = map_memory(c0, &len0), *m1 = map_memory(c1, &len1);
	CHECK(len0 == 65536 && len1 == 65536);
	memcpy(m0 + 1000, "ivshmem", 8);
	m1[60000] = 0x5a;
	CHECK(!memcmp(m1 + 1000, "ivshmem", 8));
	CHECK(m0[60000] == 0x5a);
	munmap(m0, len0);
	munmap(m1, len1);

	/* rings both ways, each on its vector only */
	for (unsigned v = 0; v < 4; v++) {
		ring_ok(c0, c1, v);
		ring_ok(c1, c0, v);
	}
	/* a ring before the wait is not lost; two make one wake-up */
	OK(ivc_ring(c0, 1, 2));
	OK(ivc_ring(c0, 1, 2));
	deadline_in(&dl, 0);
	OK(ivc_wait(c1, 2, &dl));
	deadline_in(&dl, 50);
	EXPECT(ivc_wait(c1, 2, &dl), -ETIMEDOUT);
	/* a client rings itself through its own ID */
	ring_ok(c0, c0, 3);
	/* what does not exist */
	EXPECT(ivc_ring(c0, 7, 0), -ENOENT);
	EXPECT(ivc_ring(c0, 1, 4), -ENXIO);
	EXPECT(ivc_wait(c0, 4, NULL), -ENXIO);

	/* a third client: everyone sees everyone */
	struct ivc *c2 = join(&sv, 4, 2);
	CHECK(ivc_peers(c2, ids, 8) == 2 && ids[0] == 0 && ids[1] == 1);
	until_peer(c0, 2, 1);
	until_peer(c1, 2, 1);
	ring_ok(c2, c0, 1);
	ring_ok(c0, c2, 2);
	ring_ok(c1, c2, 3);
	ring_ok(c2, c1, 0);

	/* client 1 leaves: the server says so, and so do the others */
	ivc_close(c1);
	expect_event(&sv, SMQ_PEER_LEFT, 1, 0);
	until_peer(c0, 1, 0);
	until_peer(c2, 1, 0);
	EXPECT(ivc_ring(c0, 1, 0), -ENOENT);
	CHECK(ivc_peers(c0, ids, 8) == 1 && ids[0] == 2);
	ring_ok(c2, c0, 0);

	/* a fourth takes the next ID, 3, not the freed 1: QEMU's device
	 * cannot take an ID back at once */
	struct ivc *c3 = join(&sv, 4, 3);
	CHECK(ivc_peers(c3, ids, 8) == 2 && ids[0] == 0 && ids[1] == 2);
	until_peer(c0, 3, 1);
	until_peer(c2, 3, 1);
	CHECK(ivc_peer_connected(c0, 1) == 0);
	ring_ok(c0, c3, 1);
	ring_ok(c3, c2, 3);

	/* a client that asks for fewer vectors keeps those */
	struct ivc *c4 = join(&sv, 2, 4);
	CHECK(ivc_vectors(c4) == 2);
	EXPECT(ivc_ring(c4, 0, 2), -ENXIO);
	ring_ok(c4, c0, 1);
	until_peer(c0, 4, 1);
	ring_ok(c0, c4, 1);
	ivc_close(c4);
	expect_event(&sv, SMQ_PEER_LEFT, 4, 0);

	/* a client that speaks is dropped; the others are told */
	int raw = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	strcpy(a.sun_path, sv.path);
	CHECK(raw >= 0 && connect(raw, (struct sockaddr *)&a, sizeof(a)) == 0);
	expect_event(&sv, SMQ_PEER_JOINED, 5, 0);
	until_peer(c0, 5, 1);
	CHECK(write(raw, "hello", 5) == 5);
	expect_event(&sv, SMQ_PEER_LEFT, 5, -EPROTO);
	until_peer(c0, 5, 0);
	until_peer(c2, 5, 0);
	close(raw);

	/* the server stops: the socket goes, the clients are told, and
	 * the peers they know still ring */
	stop_server(&sv);
	CHECK(access(sv.path, F_OK) < 0 && errno == ENOENT);
	for (int i = 0; i < 1000; i++) {
		int r = ivc_update(c0);
		if (r == -ENOTCONN)
			break;
		CHECK(r >= 0);
		sleep_ms(5);
	}
	EXPECT(ivc_update(c0), -ENOTCONN);
	ring_ok(c0, c2, 0);
	ring_ok(c2, c3, 2);
	ivc_close(c0);
	ivc_close(c2);
	ivc_close(c3);
	EXPECT(ivc_connect(&c0, sv.path, 0), -ENOENT);
	CHECK(c0 == NULL);
}

/* Threads ring one peer at once while notifications are taken. */
struct ringer {
	struct ivc *c;
	unsigned peer;
	int err;
};

static void *ring_many(void *arg)
{
	struct ringer *r = arg;

	for (int i = 0; i < 2000 && !r->err; i++)
		r->err = ivc_ring(r->c, r->peer, (unsigned)i % 2);
	return NULL;
}

static void threads(void)
{
	struct srv sv;
	struct ringer r[4];
	pthread_t t[4];

	OK(start_server(&sv, "threads", NULL, 4096, 2));
	struct ivc *c0 = join(&sv, 2, 0), *c1 = join(&sv, 2, 1);
	until_peer(c0, 1, 1);
	for (int i = 0; i < 4; i++) {
		r[i] = (struct ringer){ c0, 1, 0 };
		CHECK(pthread_create(&t[i], NULL, ring_many, &r[i]) == 0);
	}
	/* peers come and go under the ringers */
	for (unsigned i = 0; i < 5; i++) {
		struct ivc *x = join(&sv, 2, (int)(2 + i));
		until_peer(c0, 2 + i, 1);
		ivc_close(x);
		expect_event(&sv, SMQ_PEER_LEFT, 2 + i, 0);
		until_peer(c0, 2 + i, 0);
	}
	for (int i = 0; i < 4; i++) {
		CHECK(pthread_join(t[i], NULL) == 0);
		OK(r[i].err);
	}
	struct timespec dl;
	deadline_in(&dl, 5000);
	OK(ivc_wait(c1, 0, &dl));
	deadline_in(&dl, 5000);
	OK(ivc_wait(c1, 1, &dl));
	ivc_close(c0);
	ivc_close(c1);
	expect_event(&sv, SMQ_PEER_LEFT, 0, 0);
	expect_event(&sv, SMQ_PEER_LEFT, 1, 0);
	stop_server(&sv);
}

/* A client asleep in ivc_wait() reads the server's socket in the same
 * wait: it tracks peers coming and going without a call of its own, and a
 * server that goes away ends the wait at once with -ENOTCONN (loudly:
 * peers that join from then on could not ring it). */
struct sleeper {
	struct ivc *c;
	unsigned vector;
	int err;
	struct timespec deadline;
};

static void *sleep_on(void *arg)
{
	struct sleeper *z = arg;

	z->err = ivc_wait(z->c, z->vector, &z->deadline);
	return NULL;
}

static void sleepers(void)
{
	struct srv sv;
	struct sleeper z;
	pthread_t t;

	OK(start_server(&sv, "sleepers", NULL, 4096, 2));
	struct ivc *c0 = join(&sv, 2, 0);
	z = (struct sleeper){ c0, 1, 1, { 0, 0 } };
	deadline_in(&z.deadline, 20000);
	CHECK(pthread_create(&t, NULL, sleep_on, &z) == 0);
	/* peers come and go while c0 sleeps: it knows, with no call */
	struct ivc *c1 = join(&sv, 2, 1);
	for (int i = 0; i < 2000 && !ivc_peer_connected(c0, 1); i++)
		sleep_ms(5);
	if (!ivc_peer_connected(c0, 1))
		FAIL("a client asleep did not learn of a peer that joined");
	struct ivc *c2 = join(&sv, 2, 2);
	ivc_close(c2);
	expect_event(&sv, SMQ_PEER_LEFT, 2, 0);
	for (int i = 0; i < 2000 && ivc_peer_connected(c0, 2); i++)
		sleep_ms(5);
	if (ivc_peer_connected(c0, 2))
		FAIL("a client asleep did not learn of a peer that left");
	CHECK(z.err == 1);   /* still asleep: the socket did not wake it */
	OK(ivc_ring(c1, 0, 1));
	CHECK(pthread_join(t, NULL) == 0);
	OK(z.err);

	/* the server stops while c0 sleeps: the wait ends, and says so */
	z.err = 1;
	deadline_in(&z.deadline, 20000);
	CHECK(pthread_create(&t, NULL, sleep_on, &z) == 0);
	sleep_ms(50);
	stop_server(&sv);
	CHECK(pthread_join(t, NULL) == 0);
	EXPECT(z.err, -ENOTCONN);
	EXPECT(ivc_wait(c0, 0, &z.deadline), -ENOTCONN);
	/* the peers it knows still ring it, and it them */
	ring_ok(c1, c1, 0);
	OK(ivc_ring(c0, 1, 1));
	ivc_close(c1);
	ivc_close(c0);
}

/* The ivshmem transport rings a peer it has not heard of yet by reading
 * the server's socket first: what the server said before it closed still
 * counts, a peer among it is rung all the same. */
static void ring_after_server_gone(void)
{
	struct srv sv;
	struct smq_window *w;
	char spec[128];
	uint32_t word = 0;

	OK(start_server(&sv, "gone", NULL, 65536, 2));
	snprintf(spec, sizeof(spec), "ivshmem:%s", sv.path);
	OK(smq_open(spec, 0, SMQ_OPEN_RAW, &w));
	expect_event(&sv, SMQ_PEER_JOINED, 0, 0);
	struct ivc *later = join(&sv, 2, 1);   /* the window's map: unread */
	stop_server(&sv);
	struct smq_bell_addr a = { SMQ_BELL_IVSHMEM, 1, 1, 0 };
	w->map.tp->ring(&w->map, &a, (struct smq_far){ (uint8_t *)&word }, 7);
	struct pollfd pf = { ivc_vector_fd(later, 1), POLLIN, 0 };
	if (poll(&pf, 1, 0) != 1)
		FAIL("a peer that joined before the server closed was not rung");
	CHECK(word == 7);
	expect_quiet(later, 0);
	smq_close(w);
	ivc_close(later);
}

static int fds_of(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		FAIL("no %s", path);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Clients that do not read (an application between library calls) are
 * never dropped, and cost the server no descriptor per message they have
 * not read: a peer that joins and leaves while a client's socket is full
 * is never told to that client at all.  One that reads late gets a
 * picture that is right: the peers still there, and no other. */
static void slow_readers(void)
{
	struct srv sv;
	int churns = 2000, most = 0;
	unsigned next = 2;   /* the churning clients' IDs, each new */

	OK(start_server(&sv, "slow", NULL, 4096, 2));
	struct ivc *late = join(&sv, 2, 0);
	struct ivc *never = join(&sv, 2, 1);
	int base = fds_of(sv.pid);
	for (int i = 0; i < churns; i++, next++) {
		struct ivc *x = join(&sv, 2, (int)next);
		ivc_close(x);
		expect_event(&sv, SMQ_PEER_LEFT, next, 0);
		int n = fds_of(sv.pid);
		most = n > most ? n : most;
	}
	/* 2 connected, each a socket and 2 eventfds, and 1 duplicate each
	 * for an announcement begun; the churning one came and went */
	if (most > base + 3 + 2)
		FAIL("the server held %d descriptors with %d of its own and "
		     "2 peers that do not read: it keeps one per message", most,
		     base);
	/* the late one reads now: no churning peer left in its picture */
	int taken = 0, r;
	for (int i = 0; i < 200 && (r = ivc_update(late)) >= 0; i++) {
		taken += r;
		if (!r && i > 20)
			break;
		sleep_ms(5);
	}
	CHECK(taken > 0 && taken < churns * 3);
	unsigned ids[4];
	CHECK(ivc_peers(late, ids, 4) == 1 && ids[0] == 1);
	ring_ok(late, never, 1);
	ring_ok(never, late, 0);
	no_event(&sv, 100);   /* neither was dropped */
	printf("2 clients that did not read through %d joins and departures: "
	       "the server's descriptors %d at most (%d with them idle); "
	       "the late reader took %d messages\n", churns, most, base,
	       taken);
	ivc_close(never);
	ivc_close(late);
	expect_event(&sv, SMQ_PEER_LEFT, 1, 0);
	expect_event(&sv, SMQ_PEER_LEFT, 0, 0);
	stop_server(&sv);
}

/* A server that speaks another version, or garbage. */
static void fake_server(const char *path, int64_t first, int64_t second)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), fd;

	strcpy(a.sun_path, path);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
		FAIL("fake server");
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int64_t m[2] = { first, second };   /* little-endian here */
		fd = accept(l, NULL, NULL);
		if (fd < 0 || write(fd, m, sizeof(m)) != sizeof(m))
			_exit(1);
		char c;
		(void)!read(fd, &c, 1);   /* until the client hangs up */
		_exit(0);
	}
	close(l);
	struct ivc *c;
	EXPECT(ivc_connect(&c, path, 0), first == 0 ? -EPROTO : -EPROTONOSUPPORT);
	CHECK(c == NULL);
	test_wait_ok(pid, "the fake server");
	unlink(path);
}

static void socket_rules(void)
{
	struct srv sv, other;
	char path[108];
	struct stat st;

	OK(start_server(&sv, "rules", NULL, 4096, 1));
	CHECK(stat(sv.path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	      (st.st_mode & 07777) == 0600);
	/* a live server's socket is refused, and left alone; the live one
	 * saw a client come and go */
	EXPECT(start_server(&other, "rules", NULL, 4096, 1), -EADDRINUSE);
	struct record r = next_event(&sv);
	CHECK(r.ev.type == SMQ_PEER_JOINED && r.ev.peer == 0);
	r = next_event(&sv);
	CHECK(r.ev.type == SMQ_PEER_LEFT && r.ev.peer == 0 && r.ev.error == 0);
	struct ivc *c = join(&sv, 1, 1);
	ivc_close(c);
	expect_event(&sv, SMQ_PEER_LEFT, 1, 0);
	stop_server(&sv);

	/* a stale socket (its server died) is replaced */
	snprintf(path, sizeof(path), "%s/stale", dir);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	strcpy(a.sun_path, path);
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(l >= 0 && bind(l, (struct sockaddr *)&a, sizeof(a)) == 0);
	close(l);
	OK(start_server(&sv, "stale", NULL, 4096, 1));
	c = join(&sv, 1, 0);
	ivc_close(c);
	expect_event(&sv, SMQ_PEER_LEFT, 0, 0);
	stop_server(&sv);

	/* anything else at the path stays, and is refused */
	snprintf(path, sizeof(path), "%s/file", dir);
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	CHECK(fd >= 0 && write(fd, "keep", 4) == 4);
	close(fd);
	EXPECT(start_server(&sv, "file", NULL, 4096, 1), -EEXIST);
	CHECK(stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 4);
	unlink(path);

	/* bad configurations */
	struct smq_server *s;
	struct smq_server_config cfg = { path, NULL, 4096, 1, 0 };
	cfg.vectors = 0;
	EXPECT(smq_server_open(&cfg, sizeof(cfg), &s), -EINVAL);
	cfg.vectors = SMQ_SERVER_MAX_VECTORS + 1;
	EXPECT(smq_server_open(&cfg, sizeof(cfg), &s), -EINVAL);
	cfg.vectors = 1;
	cfg.size = 0;
	EXPECT(smq_server_open(&cfg, sizeof(cfg), &s), -EINVAL);
	cfg.size = 4096;
	cfg.memory = "pci:00:01.0";
	EXPECT(smq_server_open(&cfg, sizeof(cfg), &s), -EPROTONOSUPPORT);
	cfg.memory = "shm:../escape";
	EXPECT(smq_server_open(&cfg, sizeof(cfg), &s), -EINVAL);
	cfg.memory = NULL;
	char longpath[200];
	memset(longpath, 'x', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = 0;
	cfg.socket_path = longpath;
	EXPECT(smq_server_open(&cfg, sizeof(cfg), &s), -ENAMETOOLONG);
	CHECK(s == NULL);
	CHECK(access(path, F_OK) < 0);

	/* clients of servers that do not speak version 0 */
	snprintf(path, sizeof(path), "%s/fake", dir);
	fake_server(path, 1, 0);
	fake_server(path, 0, 70000);
}

static void memory_rules(void)
{
	struct srv sv;
	char file[128], spec[140], link[128];
	struct stat st;

	/* a file is created 0600, at a power of two */
	snprintf(file, sizeof(file), "%s/mem", dir);
	snprintf(spec, sizeof(spec), "file:%s", file);
	OK(start_server(&sv, "m1", spec, 5000, 1));
	CHECK(stat(file, &st) == 0 && (st.st_mode & 07777) == 0600 &&
	      st.st_size == 8192);
	/* clients map that very file */
	struct ivc *c = join(&sv, 1, 0);
	struct stat cst;
	CHECK(fstat(ivc_memory_fd(c), &cst) == 0 && cst.st_ino == st.st_ino);
	ivc_close(c);
	expect_event(&sv, SMQ_PEER_LEFT, 0, 0);
	stop_server(&sv);
	CHECK(stat(file, &st) == 0);   /* the memory stays */

	/* an existing one keeps its bytes, is never shrunk, and grows to a
	 * power of two */
	int fd = open(file, O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0 && ftruncate(fd, 20000) == 0 &&
	      pwrite(fd, "kept", 4, 100) == 4);
	close(fd);
	OK(start_server(&sv, "m2", spec, 4096, 1));
	CHECK(stat(file, &st) == 0 && st.st_size == 32768);
	char buf[4];
	fd = open(file, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && pread(fd, buf, 4, 100) == 4 && !memcmp(buf, "kept", 4));
	close(fd);
	stop_server(&sv);

	/* a symbolic link is refused, its target untouched */
	snprintf(link, sizeof(link), "%s/link", dir);
	CHECK(symlink(file, link) == 0);
	snprintf(spec, sizeof(spec), "file:%s", link);
	EXPECT(start_server(&sv, "m3", spec, 65536, 1), -ELOOP);
	CHECK(stat(file, &st) == 0 && st.st_size == 32768);
	CHECK(access(sv.path, F_OK) < 0);

	/* not a regular file */
	snprintf(spec, sizeof(spec), "file:%s", dir);
	EXPECT(start_server(&sv, "m4", spec, 4096, 1), -EISDIR);

	/* another user's: refused (making one needs root) */
	if (geteuid() == 0) {
		CHECK(chown(file, 65534, 65534) == 0);
		snprintf(spec, sizeof(spec), "file:%s", file);
		EXPECT(start_server(&sv, "m5", spec, 65536, 1), -EPERM);
		CHECK(stat(file, &st) == 0 && st.st_size == 32768);
		CHECK(access(sv.path, F_OK) < 0);
	} else {
		printf("note: not root: the row of another user's memory is "
		       "skipped\n");
	}

	/* a shm object, created and left in place; a failed start removes
	 * the one it made */
	char name[64];
	snprintf(name, sizeof(name), "smq-t-ivshmem-%d", (int)getpid());
	snprintf(spec, sizeof(spec), "shm:%s", name);
	snprintf(file, sizeof(file), "/dev/shm/%s", name);
	OK(start_server(&sv, "m6", spec, 4096, 1));
	CHECK(stat(file, &st) == 0 && st.st_size == 4096 &&
	      (st.st_mode & 07777) == 0600);
	stop_server(&sv);
	CHECK(unlink(file) == 0);
	snprintf(link, sizeof(link), "%s/no/such/dir", dir);
	struct smq_server *s;
	struct smq_server_config cfg = { link, spec, 4096, 1, 0 };
	EXPECT(smq_server_open(&cfg, sizeof(cfg), &s), -ENOENT);
	CHECK(access(file, F_OK) < 0);
}

static pid_t main_pid;

/* The directory and the shm object go however the test ends (a FAIL
 * exits), but only by the hand of the process that made them. */
static void remove_dir(void)
{
	char cmd[128];

	if (getpid() != main_pid)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	snprintf(cmd, sizeof(cmd), "/dev/shm/smq-t-ivshmem-%d", (int)main_pid);
	unlink(cmd);
}

int main(void)
{
	int fds;

	snprintf(dir, sizeof(dir), "/tmp/smq-t-ivshmem-XXXXXX");
	if (!mkdtemp(dir))
		FAIL("mkdtemp");
	main_pid = getpid();
	atexit(remove_dir);
	signal(SIGPIPE, SIG_IGN);
	fds = count_fds();
	peers_and_rings();
	threads();
	slow_readers();
	sleepers();
	ring_after_server_gone();
	socket_rules();
	memory_rules();
	if (count_fds() != fds)
		FAIL("descriptors: %d before, %d after", fds, count_fds());
	printf("ivshmem server and client agree\n");
	return 0;
}
