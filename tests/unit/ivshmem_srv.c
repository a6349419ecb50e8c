/* A server in a child process, and client helpers, for the tests of the
 * ivshmem server and client (t_ivshmem, t_ivshmem_idle).  The server
 * reports every event, with the IDs connected after it, through a pipe;
 * it exits 0 only if it closed cleanly, with the descriptors it had
 * before it opened, and its socket gone. */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/wait.h>
#include <time.h>
#include "testlib.h"
#include "ivshmem_srv.h"

char srv_dir[64];
int srv_nofile;

/* A server of srv_nofile's: SIGUSR1 lowers its soft limit of open files
 * to SRV_LOW_NOFILE, SIGUSR2 gives it back (srv_limit()); in the
 * handler, so that a server busy in a call takes it too. */
static void limit_signal(int sig)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = sig == SIGUSR1 ? SRV_LOW_NOFILE : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* The soft limit of open files of process pid, as /proc says it (-1
 * unlimited or unknown) */
static long soft_nofile(pid_t pid)
{
	char path[64], line[256];
	long soft = -2;

	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -2;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Max open files", 14))
			soft = strtol(line + 14, NULL, 10);
	fclose(f);
	return soft;
}

void srv_limit(struct srv *sv, bool low)
{
	if (kill(sv->pid, low ? SIGUSR1 : SIGUSR2))
		FAIL("kill");
	/* the handler has run: its limit says so (waited for, not slept) */
	if (low)
		WAIT_UNTIL(soft_nofile(sv->pid) == SRV_LOW_NOFILE, 30,
			   "the server (pid %d) to lower its limit of files",
			   (int)sv->pid);
	else
		WAIT_UNTIL(soft_nofile(sv->pid) != SRV_LOW_NOFILE, 30,
			   "the server (pid %d) to give its limit of files "
			   "back", (int)sv->pid);
}

int count_fds(void)
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

void deadline_in(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_nsec -= 1000000000L;
		ts->tv_sec++;
	}
}

/* A nap; each use says why (a time on purpose, or looks at what no event
 * tells of) */
void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- a server in a child process ---- */

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

	if (srv_nofile > 0) {
		struct sigaction sa = { .sa_handler = limit_signal };
		if (sigaction(SIGUSR1, &sa, NULL) ||
		    sigaction(SIGUSR2, &sa, NULL))
			_exit(9);
		/* a user of its own, whom no other process charges with
		 * descriptors in flight; the socket's directory its own */
		uid_t u = (uid_t)(2000000000 + getpid() % 100000);
		rlim_t n = (rlim_t)(count_fds() + srv_nofile);
		struct rlimit rl = { n, n };
		if (setrlimit(RLIMIT_NOFILE, &rl) ||
		    (geteuid() == 0 &&   /* else ours: the best there is */
		     (chown(srv_dir, u, u) || setgroups(0, NULL) ||
		      setresgid(u, u, u) || setresuid(u, u, u))))
			_exit(9);
	}

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
int start_server(struct srv *sv, const char *name, const char *memory,
			uint64_t size, unsigned vectors)
{
	int ev[2], st[2];
	struct record r;

	snprintf(sv->path, sizeof(sv->path), "%s/%s", srv_dir, name);
	struct smq_server_config c = { sv->path, memory, size, vectors, 0 };
	if (pipe2(ev, O_CLOEXEC) || pipe2(st, O_CLOEXEC))
		FAIL("pipe");
	sv->pid = test_fork_raw();
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

void stop_server(struct srv *sv)
{
	if (write(sv->stop, "x", 1) != 1)
		FAIL("stop");
	test_wait_ok(sv->pid, "the server (clean close, no leak)");
	close(sv->events);
	close(sv->stop);
}

struct record next_event(struct srv *sv)
{
	struct pollfd pf = { sv->events, POLLIN, 0 };
	struct record r;

	if (poll(&pf, 1, 10000) != 1)
		FAIL("no server event within 10 s");
	if (read(sv->events, &r, sizeof(r)) != (ssize_t)sizeof(r))
		FAIL("short event record");
	return r;
}

void expect_event(struct srv *sv, int type, unsigned peer, int err)
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

void no_event(struct srv *sv, int ms)
{
	struct pollfd pf = { sv->events, POLLIN, 0 };

	if (poll(&pf, 1, ms) != 0) {
		struct record r = next_event(sv);
		FAIL("unexpected server event: type %d peer %u error %d",
		     r.ev.type, r.ev.peer, r.ev.error);
	}
}

/* ---- client helpers ---- */

struct ivc *join_at(int line, struct srv *sv, unsigned vectors, int want_id)
{
	struct ivc *c;

	OK(ivc_connect(&c, sv->path, vectors));
	if (ivc_id(c) != want_id)
		FAIL("line %d: got ID %d, expected %d", line, ivc_id(c), want_id);
	expect_event(sv, SMQ_PEER_JOINED, (unsigned)want_id, 0);
	return c;
}

/* Takes notifications until peer's presence is as wanted: asleep on the
 * socket between them, until the server says more (10 s at most, a
 * give-up bound). */
void until_peer(struct ivc *c, unsigned peer, int connected)
{
	uint64_t end = test_now_ns() + 10000000000ull;

	for (;;) {
		int r = ivc_update(c);
		if (r < 0)
			FAIL("ivc_update: %s", smq_strerror(r));
		if (ivc_peer_connected(c, peer) == connected)
			return;
		uint64_t now = test_now_ns();
		if (now >= end)
			break;
		struct pollfd pf = { ivc_socket_fd(c), POLLIN, 0 };
		poll(&pf, 1, (int)((end - now) / 1000000) + 1);
	}
	FAIL("client %d: peer %u still %s", ivc_id(c), peer,
	     connected ? "missing" : "there");
}

void expect_quiet(struct ivc *c, unsigned vector)
{
	struct pollfd pf = { ivc_vector_fd(c, vector), POLLIN, 0 };

	if (pf.fd < 0 || poll(&pf, 1, 0) != 0)
		FAIL("client %d: vector %u is rung (or missing)", ivc_id(c),
		     vector);
}

/* from rings to's vector v: to wakes on v, and on no other vector */
void ring_ok(struct ivc *from, struct ivc *to, unsigned v)
{
	struct timespec dl;

	OK(ivc_ring(from, (unsigned)ivc_id(to), v));
	deadline_in(&dl, 5000);
	OK(ivc_wait(to, v, &dl));
	for (unsigned o = 0; o < ivc_vectors(to); o++)
		expect_quiet(to, o);
}

/* The directory goes at exit with the test's shm objects (testlib's
 * registry), however the test ends. */
void srv_setup(void)
{
	snprintf(srv_dir, sizeof(srv_dir), "%s", test_dir());
	signal(SIGPIPE, SIG_IGN);
}
