/* UCX beside smq: its tag-matching bandwidth test (ucx_perftest -t
 * tag_bw, Debian's ucx-utils) over its POSIX shared-memory transport,
 * between the same two CPUs.  Not a bare limit like the other baselines
 * but a peer that users pick: a library of its own, run as its own
 * programs, a server pinned to the second CPU and a client (the sender)
 * to the first, talking over a TCP port of this host to set up. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../cli/measure/baseline_proc.h"
#include "products.h"

#define UCX_PROGRAM "ucx_perftest"
#define UCX_TLS_DEFAULT "posix,self"
#define UCX_GIVE_UP_NS 120000000000ull  /* a run that never ends */
#define UCX_LISTEN_NS 5000000000ull     /* a server that never starts */

const char *ucx_transports(void)
{
	const char *tls = getenv("UCX_TLS");

	return tls && *tls ? tls : UCX_TLS_DEFAULT;
}

/* The program's path in $PATH, or false. */
static bool ucx_find(char *path, size_t len)
{
	const char *p = getenv("PATH");

	for (p = p ? p : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		if (n && n + sizeof(UCX_PROGRAM) + 1 < len) {
			snprintf(path, len, "%.*s/%s", (int)n, p, UCX_PROGRAM);
			if (!access(path, X_OK))
				return true;
		}
		p += n + (p[n] == ':');
	}
	return false;
}

/* A TCP port no one listens on now (the server binds it a moment later). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	if (fd < 0)
		return -1;
	if (!bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* Whether a socket of this host listens on port: /proc/net/tcp and tcp6
 * list it with state 0A.  Looked at, never connected to: the server takes
 * one connection, the client's. */
static bool listening(int port)
{
	static const char *const tables[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	char line[512];
	bool found = false;

	for (int i = 0; i < 2 && !found; i++) {
		FILE *f = fopen(tables[i], "re");
		if (!f)
			continue;
		while (!found && fgets(line, sizeof(line), f)) {
			char local[80], remote[80];
			unsigned state;
			if (sscanf(line, " %*d: %79s %79s %x", local, remote,
				   &state) != 3 || state != 0x0a)
				continue;
			const char *colon = strrchr(local, ':');
			found = colon && strtol(colon + 1, NULL, 16) == port;
		}
		fclose(f);
	}
	return found;
}

/* Starts the program with args, pinned to cpu, its output into fd out
 * (or /dev/null), its errors into fd err (or /dev/null). */
static pid_t ucx_start(const char *path, char *const *args, int cpu, int out,
		       int err)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	dup2(out >= 0 ? out : null, 1);
	dup2(err >= 0 ? err : null, 2);
	signal(SIGINT, SIG_IGN);  /* the parent decides when to stop */
	if (cpu >= 0 && cpu_pin(cpu))
		_exit(126);
	setenv("UCX_TLS", ucx_transports(), 1);
	execv(path, args);
	_exit(127);
}

/* Waits for pid until deadline (now_ns()), then kills it: its status. */
static int ucx_reap(pid_t pid, uint64_t deadline)
{
	const struct timespec nap = { 0, 2000000 };
	int status = 0;

	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (now_ns() > deadline || measure_interrupted) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		nanosleep(&nap, NULL);
	}
	return status;
}

int ucx_parse(const char *out, struct result *r)
{
	/* -f -v: a header of names, then the final numbers */
	const char *head = strstr(out, "iterations,");
	if (!head)
		return -EIO;
	const char *vals = strchr(head, '\n');
	if (!vals)
		return -EIO;
	vals++;
	int col = 0, want = -1;
	for (const char *p = head; p < vals - 1; col++) {
		size_t n = strcspn(p, ",\n");
		if (n == strlen("overall_mr") && !strncmp(p, "overall_mr", n))
			want = col;
		p += n + 1;
	}
	unsigned long long iters = strtoull(vals, NULL, 10);
	const char *v = vals;
	for (int i = 0; i < want && v; i++)
		if ((v = strchr(v, ',')))
			v++;
	double rate = want >= 0 && v ? strtod(v, NULL) : 0;
	if (!iters || !(rate > 0))
		return -EIO;
	result_rates(r, iters, (uint64_t)((double)iters / rate * 1e9));
	r->msgs_per_s = rate;
	r->mb_per_s = rate * (double)r->size / 1e6;
	return 0;
}

/* The client's output, read until it closes it: 0 or -EIO. */
static int read_all(int fd, char *buf, size_t len)
{
	size_t used = 0;
	ssize_t n;

	while (used + 1 < len &&
	       ((n = read(fd, buf + used, len - used - 1)) > 0 ||
		(n < 0 && errno == EINTR)))
		used += n > 0 ? (size_t)n : 0;
	buf[used] = 0;
	return 0;
}

/* The two programs, server first: 0, or a negative errno with *why. */
static int ucx_pair(const char *path, size_t size, uint64_t count,
		    int cpu_a, int cpu_b, char *out, size_t len,
		    const char **why)
{
	char port[16], sz[32], n[32], w[32];
	int p[2], pn = free_port();

	if (pn < 0)
		return fail(why, "no free TCP port for ucx_perftest to set up "
			    "on", -EADDRINUSE);
	snprintf(port, sizeof(port), "%d", pn);
	snprintf(sz, sizeof(sz), "%zu", size);
	snprintf(n, sizeof(n), "%llu", (unsigned long long)count);
	snprintf(w, sizeof(w), "%llu", (unsigned long long)(count / 10 + 1));
	char *server[] = { (char *)path, "-p", port, NULL };
	char *client[] = { (char *)path, "127.0.0.1", "-p", port, "-t",
			   "tag_bw", "-s", sz, "-n", n, "-w", w, "-f", "-v",
			   NULL };
	uint64_t listen_by = now_ns() + UCX_LISTEN_NS;
	uint64_t give_up = now_ns() + UCX_GIVE_UP_NS;
	const struct timespec nap = { 0, 1000000 };
	pid_t srv = ucx_start(path, server, cpu_b, -1, -1);
	if (srv < 0)
		return fail(why, "fork failed", -errno);
	/* a client that came first would find no one: wait for the server
	 * (a server that failed, or is slow, is the client's failure) */
	while (!listening(pn) && now_ns() < listen_by)
		nanosleep(&nap, NULL);
	if (pipe2(p, O_CLOEXEC)) {
		kill(srv, SIGKILL);
		ucx_reap(srv, 0);
		return fail(why, "pipe failed", -errno);
	}
	pid_t cli = ucx_start(path, client, cpu_a, p[1], p[1]);
	close(p[1]);
	if (cli > 0)
		read_all(p[0], out, len);
	close(p[0]);
	int cs = cli > 0 ? ucx_reap(cli, give_up) : -1;
	int ss = ucx_reap(srv, cs == 0 ? now_ns() + UCX_LISTEN_NS : 0);
	if (measure_interrupted)
		return fail(why, "interrupted", -EINTR);
	if (cs != 0 || ss != 0)
		return fail(why, "ucx_perftest failed (run it by hand with "
			    "UCX_TLS set as here to see why)", -EIO);
	return 0;
}

int baseline_ucx(size_t size, uint64_t count, int cpu_a, int cpu_b,
		 struct result *r, const char **why)
{
	char path[4096];
	static char out[16384];
	int err;

	result_init(r, "UCX tag_bw", size);
	if (!count)
		return fail(why, "no messages to measure", -EINVAL);
	if (!ucx_find(path, sizeof(path)))
		return fail(why, "ucx_perftest is not installed (Debian: "
			    "ucx-utils)", -ENOENT);
	if ((err = ucx_pair(path, size, count, cpu_a, cpu_b, out, sizeof(out),
			    why)))
		return err;
	if (ucx_parse(out, r))
		return fail(why, "ucx_perftest printed no final figures",
			    -EIO);
	return 0;
}
