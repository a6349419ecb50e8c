/* The broker transport's request for a vector (BK_TAKE) answered after
 * the client gave up waiting: the late answer must not be taken for the
 * answer to the next request, which would hand the caller another
 * caller's vector and leave every answer after it one behind.  The
 * client owes itself the late answer: the next request takes it first
 * and gives its vector back (BK_GIVE), then asks.  The broker here is
 * the test, at the other end of a socket pair; the transport is
 * included whole, around a doorbell that only answers its ID.  An answer
 * whose descriptor the client, out of them, could not receive (late or
 * not) gives its vector back too. */
#define BROKER_TIMEOUT_MS 300
#include "transport/broker.c"
#include <sys/eventfd.h>
#include <sys/resource.h>
#include "testlib.h"

/* the least count of checks a run makes (59 here) */
TEST_FLOOR(59);

/* The broker's side: the next message the client sent. */
static struct broker_msg client_said(int sock)
{
	struct broker_msg m;
	int fd;

	if (broker_recv(sock, &m, &fd, 2000) != (int)sizeof(m))
		FAIL("the client sent nothing");
	CHECK(fd < 0 && m.magic == BROKER_MAGIC);
	return m;
}

static void answer(int sock, unsigned vector)
{
	struct broker_msg r = { BROKER_MAGIC, BK_VECTOR, BROKER_VERSION, 0,
				vector, 0, 0, "" };
	int efd = eventfd(0, EFD_CLOEXEC);

	CHECK(efd >= 0);
	OK(broker_send(sock, &r, efd));
	close(efd);
}

/* The broker's side: the client gave vector v back. */
static void gave_back(int sock, unsigned v)
{
	struct broker_msg g = client_said(sock);

	CHECK(g.type == BK_GIVE && g.vector == v);
}

/* A request answered in turn with vector v, then the vector given back. */
static void take_in_turn(struct smq_map *m, int sock, unsigned v)
{
	struct smq_bell_addr a;

	answer(sock, v);
	OK(broker_bell_open(m, &a));
	CHECK(a.vector == v);
	CHECK(client_said(sock).type == BK_TAKE);
	broker_bell_close(m, &a);
	gave_back(sock, v);
}

/* The lowest descriptor number free here: a soft limit of open files
 * at it leaves none to receive. */
static int lowest_free_fd(void)
{
	int fd = dup(0);

	CHECK(fd >= 0);
	close(fd);
	return fd;
}

int main(void)
{
	static uint64_t fake_doorbell[16];  /* its ID, 0, is all that is read */
	struct broker bk = { .sock = -1 };
	struct smq_map m = { .priv = &bk };
	struct smq_bell_addr a;
	int sv[2];

	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	bk.sock = sv[0];
	bk.db = (struct smq_doorbell *)fake_doorbell;
	for (unsigned v = 0; v < BROKER_MAX_VECTORS; v++)
		bk.vec_fd[v] = -1;
	pthread_mutex_init(&bk.lock, NULL);

	/* no answer in time */
	EXPECT(broker_bell_open(&m, &a), -ETIMEDOUT);
	CHECK(client_said(sv[1]).type == BK_TAKE);
	/* the answer comes late (vector 3); the next request's answer is
	 * vector 5, sent before the request arrives, as a busy broker's
	 * answers can be read together */
	answer(sv[1], 3);
	answer(sv[1], 5);
	OK(broker_bell_open(&m, &a));
	if (a.vector != 5)
		FAIL("the second request took vector %u, the answer to the "
		     "first, which had timed out; expected 5", a.vector);
	CHECK(bk.vec_fd[5] >= 0 && bk.vec_fd[3] < 0);
	/* the late vector went back to the broker, then came the request */
	gave_back(sv[1], 3);
	CHECK(client_said(sv[1]).type == BK_TAKE);
	/* and the one after is answered in turn */
	take_in_turn(&m, sv[1], 7);

	/* the client out of descriptors when an answer comes: its
	 * descriptor is lost, and its vector goes back to the broker (the
	 * broker's vectors are one pool for all its clients) */
	struct rlimit keep, none;
	CHECK(getrlimit(RLIMIT_NOFILE, &keep) == 0);
	none = keep;
	none.rlim_cur = (rlim_t)lowest_free_fd();
	answer(sv[1], 9);
	CHECK(setrlimit(RLIMIT_NOFILE, &none) == 0);
	EXPECT(broker_bell_open(&m, &a), -EMFILE);
	CHECK(setrlimit(RLIMIT_NOFILE, &keep) == 0);
	CHECK(client_said(sv[1]).type == BK_TAKE);
	gave_back(sv[1], 9);
	/* ...and so does a late one's, read as the next request begins */
	EXPECT(broker_bell_open(&m, &a), -ETIMEDOUT);
	CHECK(client_said(sv[1]).type == BK_TAKE);
	answer(sv[1], 11);
	answer(sv[1], 12);
	none.rlim_cur = (rlim_t)lowest_free_fd();
	CHECK(setrlimit(RLIMIT_NOFILE, &none) == 0);
	EXPECT(broker_bell_open(&m, &a), -EMFILE);
	CHECK(setrlimit(RLIMIT_NOFILE, &keep) == 0);
	gave_back(sv[1], 11);
	CHECK(client_said(sv[1]).type == BK_TAKE);
	gave_back(sv[1], 12);
	CHECK(bk.late == 0);
	/* nothing owed: the next request gets its own answer at once */
	take_in_turn(&m, sv[1], 13);
	printf("a vector answered after its request timed out went back to "
	       "the broker; the next requests got their own answers\n");
	for (unsigned v = 0; v < BROKER_MAX_VECTORS; v++)
		if (bk.vec_fd[v] >= 0)
			close(bk.vec_fd[v]);
	close(sv[0]);
	close(sv[1]);
	pthread_mutex_destroy(&bk.lock);
	return 0;
}
