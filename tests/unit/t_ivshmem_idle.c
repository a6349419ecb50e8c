/* ivshmem clients that do not read, or sleep, against the server
 * (libsmq's smq_server_* in a child process, tests/unit/ivshmem_srv.c):
 *  - clients that do not read (an application between library calls)
 *    are never dropped and cost the server no descriptor per message:
 *    a peer that joins and leaves while a client's socket is full is
 *    never told to it; one that reads late gets a picture that is right;
 *  - a client asleep in ivc_wait() reads the server's socket in the same
 *    wait: it tracks peers with no call of its own, and a server that
 *    stops ends the wait at once (-ENOTCONN);
 *  - the ivshmem transport rings a peer it learns of from what the
 *    server said before it closed. */
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include "testint.h"
#include "testlib.h"
#include "ivshmem_srv.h"

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

int main(void)
{
	int fds;

	srv_setup();
	fds = count_fds();
	slow_readers();
	sleepers();
	ring_after_server_gone();
	if (count_fds() != fds)
		FAIL("descriptors: %d before, %d after", fds, count_fds());
	printf("clients that do not read, or sleep, keep their doorbells\n");
	return 0;
}
