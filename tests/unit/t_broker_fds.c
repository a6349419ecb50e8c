/* The vfio broker out of file descriptors: a client that connects then
 * cannot be accepted (EMFILE).  The listening socket stays ready, so a
 * broker that only gave up would find it ready again at once and never
 * return from smq_broker_next(), nor read its signals.  It takes the
 * connection with a descriptor it keeps for that, refuses it (said as a
 * client dropped with the error) and returns.  A broker needs a VFIO
 * device to open: this test builds one around a listening socket alone,
 * which is all that accepting uses. */
#include "transport/vfio_broker.c"
#include <signal.h>
#include <sys/resource.h>
#include "testlib.h"

/* the least count of checks a run makes (12 here) */
TEST_FLOOR(12);

static void too_long(int sig)
{
	static const char m[] = "t_broker_fds: smq_broker_next() still "
				"running 3 s into a 300 ms timeout\n";
	(void)sig;
	(void)!write(2, m, sizeof(m) - 1);
	_exit(1);
}

int main(void)
{
	struct smq_broker b = { .listen_fd = -1, .epoll_fd = -1,
				.reserve_fd = -1 };
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct smq_broker_event ev;
	struct rlimit rl;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s/broker.sock", test_dir());
	b.listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK |
			     SOCK_CLOEXEC, 0);
	CHECK(b.listen_fd >= 0);
	CHECK(bind(b.listen_fd, (struct sockaddr *)&a, sizeof(a)) == 0);
	CHECK(listen(b.listen_fd, 16) == 0);
	CHECK((b.epoll_fd = epoll_create1(EPOLL_CLOEXEC)) >= 0);
	struct epoll_event e = { .events = EPOLLIN, .data.ptr = NULL };
	CHECK(epoll_ctl(b.epoll_fd, EPOLL_CTL_ADD, b.listen_fd, &e) == 0);
	CHECK((b.reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0);
	int cl = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	CHECK(cl >= 0);
	/* out of descriptors: a low limit, every one of them taken */
	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	rl.rlim_cur = 64;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	int filler[64], nfill = 0, fd;
	while ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0 &&
	       nfill < 64)
		filler[nfill++] = fd;
	CHECK(fd < 0 && errno == EMFILE);
	CHECK(connect(cl, (struct sockaddr *)&a, sizeof(a)) == 0);
	signal(SIGALRM, too_long);
	alarm(3);
	int err = smq_broker_next(&b, 300, &ev, sizeof(ev));
	alarm(0);
	if (err)
		FAIL("smq_broker_next: %s, expected the refusal", strerror(-err));
	if (ev.type != SMQ_CLIENT_DETACHED || ev.error != -EMFILE ||
	    ev.pid != getpid())
		FAIL("event type %d pid %d error %d, expected a client of pid "
		     "%d dropped with -EMFILE", ev.type, ev.pid, ev.error,
		     (int)getpid());
	/* the descriptors back (a sanitizer reads /proc at exit) */
	for (int i = 0; i < nfill; i++)
		close(filler[i]);
	/* refused, not left: the peer sees its connection closed */
	char byte;
	CHECK(recv(cl, &byte, 1, 0) == 0);
	printf("broker_fds: out of descriptors, a client is refused and the "
	       "broker returns\n");
	unlink(a.sun_path);
	return 0;
}
