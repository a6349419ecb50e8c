/* ivshmem clients that do not read, or sleep, against the server
 * (libsmq's smq_server_* in a child process, tests/unit/ivshmem_srv.c):
 *  - clients that do not read (an application between library calls)
 *    are never dropped and cost the server no descriptor per message:
 *    a peer that joins and leaves while a client's socket is full is
 *    never told to it; one that reads late gets a picture that is right;
 *  - several that do not read may hold more descriptors in flight than
 *    a user's server may have open (the kernel then refuses its sends):
 *    they are kept, and a newcomer waits for its setup;
 *  - a peer that leaves while such a client is partway through its
 *    vectors, with the server out of descriptors, drops no one;
 *  - a send refused for descriptors in flight to a client whose socket
 *    has room waits for the retry timer without spinning;
 *  - a client asleep in ivc_wait() reads the server's socket in the same
 *    wait: it tracks peers with no call of its own, and a server that
 *    stops ends the wait at once (-ENOTCONN);
 *  - the ivshmem transport rings a peer it learns of from what the
 *    server said before it closed. */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <endian.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "testint.h"
#include "testlib.h"
#include "ivshmem_srv.h"

/* the least count of checks a run makes (2169 here) */
TEST_FLOOR(2100);

/* A client asleep in ivc_wait() reads the server's socket in the same
 * wait: it tracks peers coming and going without a call of its own, and a
 * server that goes away ends the wait at once with -ENOTCONN (loudly:
 * peers that join from then on could not ring it). */
struct sleeper {
	struct ivc *c;
	unsigned vector;
	int err;
	struct timespec deadline;
	_Atomic pid_t tid;      /* the thread's, once it is about to wait */
};

static void *sleep_on(void *arg)
{
	struct sleeper *z = arg;

	z->tid = gettid();
	z->err = ivc_wait(z->c, z->vector, &z->deadline);
	return NULL;
}

/* Thread tid of this process sleeps in a poll (ivc_wait's, or a
 * connect's wait for its setup): a state, read in /proc */
static bool thread_polls(pid_t tid)
{
	char path[64], buf[256] = "";
	ssize_t n;

	if (!tid)
		return false;
	snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", (int)tid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return strstr(buf, "poll") != NULL;
}

static void sleepers(void)
{
	struct srv sv;
	struct sleeper z;
	pthread_t t;

	OK(start_server(&sv, "sleepers", NULL, 4096, 2));
	struct ivc *c0 = join(&sv, 2, 0);
	z = (struct sleeper){ c0, 1, 1, { 0, 0 }, 0 };
	deadline_in(&z.deadline, 20000);
	CHECK(pthread_create(&t, NULL, sleep_on, &z) == 0);
	/* peers come and go while c0 sleeps: it knows, with no call */
	struct ivc *c1 = join(&sv, 2, 1);
	WAIT_UNTIL(ivc_peer_connected(c0, 1), 10, "a client asleep to learn "
		   "of a peer that joined");
	struct ivc *c2 = join(&sv, 2, 2);
	ivc_close(c2);
	expect_event(&sv, SMQ_PEER_LEFT, 2, 0);
	WAIT_UNTIL(!ivc_peer_connected(c0, 2), 10, "a client asleep to learn "
		   "of a peer that left");
	CHECK(z.err == 1);   /* still asleep: the socket did not wake it */
	OK(ivc_ring(c1, 0, 1));
	CHECK(pthread_join(t, NULL) == 0);
	OK(z.err);

	/* the server stops while c0 sleeps: the wait ends, and says so */
	z.err = 1;
	z.tid = 0;
	deadline_in(&z.deadline, 20000);
	CHECK(pthread_create(&t, NULL, sleep_on, &z) == 0);
	WAIT_UNTIL(thread_polls(z.tid), 10, "the client asleep in ivc_wait()");
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
	/* 2 connected, each a socket and 2 eventfds; the churning one (a
	 * socket and 2 eventfds); and for each of the 2 that do not read,
	 * the 2 eventfds of a peer that left while it was partway through
	 * them, kept open until it has them all */
	if (most > base + 3 + 2 * 2)
		FAIL("the server held %d descriptors with %d of its own and "
		     "2 peers that do not read: it keeps one per message", most,
		     base);
	/* the late one reads now: no churning peer left in its picture */
	int taken = 0, r;
	for (int i = 0; i < 200 && (r = ivc_update(late)) >= 0; i++) {
		taken += r;
		if (!r && i > 20)
			break;
		/* quiet for 20 looks: that nothing more comes is no event */
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
	/* both leave; the server may see the two closes in one round, and
	 * says them in its own order */
	unsigned left = 0;
	for (int i = 0; i < 2; i++) {
		struct record ev = next_event(&sv);
		if (ev.ev.type != SMQ_PEER_LEFT || ev.ev.peer > 1 || ev.ev.error)
			FAIL("server event: type %d peer %u error %d, expected "
			     "peers 0 and 1 to leave", ev.ev.type, ev.ev.peer,
			     ev.ev.error);
		left |= 1u << ev.ev.peer;
	}
	CHECK(left == 3);
	stop_server(&sv);
}

/* A user's server (no capabilities) may have no more descriptors in
 * flight, sent and not yet received, than its limit of open files: past
 * it the kernel refuses a send with one (ETOOMANYREFS) until a client
 * reads or leaves.  Clients that do not read reach that together; they
 * are kept, and a newcomer waits for its setup instead of being dropped:
 * it gets it once those clients leave. */
#define INFLIGHT_V 8
struct joiner {
	const char *path;
	struct ivc *c;
	int err;
	_Atomic pid_t tid;
};

static void *join_late(void *arg)
{
	struct joiner *j = arg;

	j->tid = gettid();
	j->err = ivc_connect(&j->c, j->path, INFLIGHT_V);
	return NULL;
}

static void in_flight_limit(void)
{
	enum { STALLED = 4 };
	struct srv sv;
	int st[STALLED];
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	pthread_t t;

	/* 4 stalled clients of 8 vectors are sent 4 * (1 + 4 * 8) = 132
	 * descriptors; the server opens 5 of its own and 9 a client, 50 */
	srv_nofile = 60;
	OK(start_server(&sv, "inflight", NULL, 4096, INFLIGHT_V));
	srv_nofile = 0;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sv.path);
	for (int i = 0; i < STALLED; i++) {
		st[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		CHECK(st[i] >= 0);
		CHECK(connect(st[i], (struct sockaddr *)&a, sizeof(a)) == 0);
		expect_event(&sv, SMQ_PEER_JOINED, (unsigned)i, 0);
	}
	no_event(&sv, 300);   /* none dropped */
	struct joiner j = { sv.path, NULL, 1, 0 };
	CHECK(pthread_create(&t, NULL, join_late, &j) == 0);
	expect_event(&sv, SMQ_PEER_JOINED, STALLED, 0);
	/* asleep, waiting for its setup (not slept for: its state) */
	WAIT_UNTIL(thread_polls(j.tid), 10, "the late joiner to wait for its "
		   "setup");
	CHECK(j.err == 1);   /* still waiting for its setup */
	for (int i = 0; i < STALLED - 1; i++) {
		close(st[i]);
		expect_event(&sv, SMQ_PEER_LEFT, (unsigned)i, 0);
	}
	CHECK(pthread_join(t, NULL) == 0);
	OK(j.err);
	CHECK(ivc_id(j.c) == STALLED);
	until_peer(j.c, STALLED - 1, 1);
	for (unsigned i = 0; i < STALLED - 1; i++)
		until_peer(j.c, i, 0);
	no_event(&sv, 100);
	printf("%d clients that did not read past the server's limit of "
	       "descriptors in flight were kept; a newcomer got its setup "
	       "when 3 of them left\n", STALLED);
	close(st[STALLED - 1]);
	expect_event(&sv, SMQ_PEER_LEFT, STALLED - 1, 0);
	ivc_close(j.c);
	expect_event(&sv, SMQ_PEER_LEFT, STALLED, 0);
	stop_server(&sv);
}

/* The lowest descriptor number free in process pid. */
static int lowest_free_fd(pid_t pid)
{
	char path[64];
	struct dirent *e;
	static bool used[4096];

	memset(used, 0, sizeof(used));
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		FAIL("no %s", path);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) < 4096)
			used[atoi(e->d_name)] = true;
	closedir(d);
	int n = 0;
	while (n < 4096 && used[n])
		n++;
	return n;
}

/* One message a raw client reads: the value, and its descriptor or -1. */
static int64_t raw_msg(int sock, int *fd)
{
	int64_t v;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec io = { &v, sizeof(v) };
	struct msghdr mh = { .msg_iov = &io, .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof(v))
		FAIL("a raw client: short message");
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	*fd = -1;
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(c), sizeof(*fd));
	return (int64_t)le64toh((uint64_t)v);
}

/* A peer leaves while a client that does not read is in the middle of
 * being told of it (its socket filled partway through the peer's
 * vectors), and the server has no descriptor left to open: the client is
 * kept, and when it reads it gets the rest of the peer's vectors, then
 * the peer's removal. */
static bool departure_with(unsigned V);

static void departure_at_limit(void)
{
	/* where the socket fills is the kernel's: between two peers' vectors
	 * for one count of vectors, partway for the next */
	static const unsigned vs[] = { 8, 7, 5 };
	for (unsigned i = 0; i < sizeof(vs) / sizeof(vs[0]); i++)
		if (departure_with(vs[i]))
			return;
	FAIL("the client's socket filled between two peers' vectors with "
	     "8, 7 and 5 vectors");
}

/* false: the socket filled between two peers' vectors, try another V */
static bool departure_with(unsigned V)
{
	enum { MOST = 200 };
	struct srv sv;
	int sock[MOST], n = 0, x = -1;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int inq = 0;

	OK(start_server(&sv, "limit", NULL, 4096, V));
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sv.path);
	/* the client (ID 0), then peers until its socket is full partway
	 * through one's vectors: that one is x */
	for (; n < MOST && x < 0; n++) {
		sock[n] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		CHECK(sock[n] >= 0);
		CHECK(connect(sock[n], (struct sockaddr *)&a, sizeof(a)) == 0);
		expect_event(&sv, SMQ_PEER_JOINED, (unsigned)n, 0);
		CHECK(ioctl(sock[0], FIONREAD, &inq) == 0);
		int got = inq / 8, all = 3 + (int)V * (n + 1);
		if (got < all) {
			if ((got - 3) % (int)V == 0) {
				for (int i = 0; i <= n; i++) {
					close(sock[i]);
					expect_event(&sv, SMQ_PEER_LEFT,
						     (unsigned)i, 0);
				}
				stop_server(&sv);
				return false;
			}
			x = n;
		}
	}
	if (x < 0)
		FAIL("%d peers did not fill a client's socket", MOST);
	/* not one descriptor more for the server; then x leaves */
	struct rlimit keep, none;
	CHECK(prlimit(sv.pid, RLIMIT_NOFILE, NULL, &keep) == 0);
	none.rlim_cur = (rlim_t)lowest_free_fd(sv.pid);
	none.rlim_max = keep.rlim_max;
	CHECK(prlimit(sv.pid, RLIMIT_NOFILE, &none, NULL) == 0);
	close(sock[x]);
	expect_event(&sv, SMQ_PEER_LEFT, (unsigned)x, 0);
	no_event(&sv, 200);   /* the client was not dropped */
	CHECK(prlimit(sv.pid, RLIMIT_NOFILE, &keep, NULL) == 0);
	/* the client reads: all of x's vectors, each with its eventfd, then
	 * x's removal */
	int vec_x = 0, fd;
	bool removed = false;
	for (int i = 0; i < 100000 && !removed; i++) {
		int64_t v = raw_msg(sock[0], &fd);
		if (fd >= 0)
			close(fd);
		if (v == x && fd >= 0)
			vec_x++;
		else if (v == x)
			removed = true;
	}
	CHECK(removed);
	if (vec_x != (int)V)
		FAIL("the client got %d of the %d vectors of the peer that "
		     "left", vec_x, V);
	printf("a peer left while the server had no descriptor free and a "
	       "client was partway through its vectors: the client was "
	       "kept, and got all %d, then the removal\n", V);
	for (int i = 0; i < n; i++)
		if (i != x) {
			close(sock[i]);
			expect_event(&sv, SMQ_PEER_LEFT, (unsigned)i, 0);
		}
	stop_server(&sv);
	return true;
}

/* CPU time process pid has used, in ms. */
static double cpu_ms_of(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long ut, st;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		FAIL("no %s", path);
	fclose(f);
	/* after the name, which ends at the last ')': fields 3 on */
	char *p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%lu %lu", &ut, &st) != 2)
		FAIL("cannot read %s", path);
	return (double)(ut + st) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

/* All a raw client has been sent so far; how many. */
static int raw_drain(int sock)
{
	int n = 0, fd;
	struct pollfd pf = { sock, POLLIN, 0 };

	while (poll(&pf, 1, 0) == 1 && (pf.revents & POLLIN)) {
		raw_msg(sock, &fd);
		if (fd >= 0)
			close(fd);
		n++;
	}
	return n;
}

/* A client whose socket filled reads, and the kernel refuses the next
 * send for the descriptors in flight: the send waits for the retry
 * timer, not for the socket to have room, which it has; the server does
 * not spin meanwhile, and the client gets the rest once the descriptors
 * in flight are fewer. */
static void refused_with_room(void)
{
	enum { V = 64, MOST = 16 };
	struct srv sv;
	int b, peer[MOST], n = 0, inq = 0;
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	srv_nofile = 2000;
	OK(start_server(&sv, "room", NULL, 4096, V));
	srv_nofile = 0;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sv.path);
	b = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(b >= 0 && connect(b, (struct sockaddr *)&a, sizeof(a)) == 0);
	expect_event(&sv, SMQ_PEER_JOINED, 0, 0);
	/* peers that do not read join until b's socket is full */
	for (; n < MOST; n++) {
		peer[n] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		CHECK(peer[n] >= 0);
		CHECK(connect(peer[n], (struct sockaddr *)&a, sizeof(a)) == 0);
		expect_event(&sv, SMQ_PEER_JOINED, (unsigned)n + 1, 0);
		CHECK(ioctl(b, FIONREAD, &inq) == 0);
		if (inq / 8 < 3 + V * (n + 2)) {
			n++;
			break;
		}
	}
	int all = 3 + V * (n + 1);
	if (inq / 8 >= all)
		FAIL("%d peers did not fill a client's socket", n);
	/* the peers' unread descriptors in flight past the server's limit
	 * now; then b reads, and its socket has room */
	srv_limit(&sv, true);
	double cpu0 = cpu_ms_of(sv.pid);
	int got = raw_drain(b);
	/* a bound that load cannot break, not a speed: a server with
	 * nothing to do uses next to no CPU however busy the machine, and
	 * one that spins on its unwritable peer uses the whole second, or
	 * less only when others take the CPU from it */
	sleep_ms(1000);
	double spent = cpu_ms_of(sv.pid) - cpu0;
	if (spent > 300)
		FAIL("the server used %.0f ms of CPU in 1 s with nothing to do "
		     "but wait for its descriptors in flight to fall", spent);
	CHECK(got + raw_drain(b) < all);   /* the rest waits */
	/* the limit back: the rest comes, at the retry timer */
	srv_limit(&sv, false);
	for (int i = 0; i < 500 && got < all; i++) {
		got += raw_drain(b);
		/* asleep until the server sends more (at its retry timer) */
		struct pollfd pf = { b, POLLIN, 0 };
		poll(&pf, 1, 10);
	}
	if (got != all)
		FAIL("the client got %d of its %d messages", got, all);
	no_event(&sv, 100);
	printf("a send refused for descriptors in flight to a client whose "
	       "socket had room waited %.0f ms of CPU in 1 s, then went\n",
	       spent);
	close(b);
	expect_event(&sv, SMQ_PEER_LEFT, 0, 0);
	for (int i = 0; i < n; i++) {
		close(peer[i]);
		expect_event(&sv, SMQ_PEER_LEFT, (unsigned)i + 1, 0);
	}
	stop_server(&sv);
}

int main(void)
{
	int fds;

	srv_setup();
	fds = count_fds();
	slow_readers();
	in_flight_limit();
	departure_at_limit();
	refused_with_room();
	sleepers();
	ring_after_server_gone();
	if (count_fds() != fds)
		FAIL("descriptors: %d before, %d after", fds, count_fds());
	printf("clients that do not read, or sleep, keep their doorbells\n");
	return 0;
}
