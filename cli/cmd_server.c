/* smqctl server: an ivshmem server for QEMU's ivshmem-doorbell device and
 * host peers.  It owns the memory (the --window), and prints a line for
 * every peer that comes or goes, until SIGINT or SIGTERM. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "smq_tools.h"  /* the ivshmem server */
#include "smqctl.h"

struct server_opts {
	const char *socket;
	uint64_t size;
	unsigned vectors;
	unsigned mode;
};

enum { OPT_SOCKET = 0x100, OPT_SHM_SIZE, OPT_VECTORS, OPT_OLD_SIZE };

static const struct argp_option options[] = {
	{ "socket", OPT_SOCKET, "PATH", 0,
	  "Listen on the UNIX socket PATH (required)", 0 },
	{ "shm-size", OPT_SHM_SIZE, "SIZE", 0,
	  "Bytes of shared memory, a power of two: 4K to 64G, with K, M or G "
	  "(default 4M)", 0 },
	{ "vectors", OPT_VECTORS, "N", 0,
	  "Interrupt vectors of every peer, 1 to 64 (default 8)", 0 },
	{ "mode", 'm', "OCTAL", 0,
	  "Permission bits of the socket (default 0600)", 0 },
	/* The old name of --shm-size, a list of message sizes in other
	 * commands: refused, naming the new one, rather than read two ways.
	 * The argument is optional so that every spelling reaches this
	 * message, not getopt's. */
	{ "size", OPT_OLD_SIZE, "SIZE", OPTION_HIDDEN | OPTION_ARG_OPTIONAL,
	  NULL, 0 },
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct server_opts *o = st->input;

	switch (key) {
	case OPT_SOCKET:
		o->socket = arg_socket_path(st, arg);
		break;
	case OPT_SHM_SIZE:
		o->size = arg_size(st, "--shm-size", arg, 4096, 64ull << 30);
		/* QEMU maps the memory as a PCI BAR, whose size is a power
		 * of two */
		if (o->size & (o->size - 1))
			argp_error(st, "--shm-size %s is not a power of two: QEMU "
				   "maps the memory as a PCI BAR, whose size is "
				   "one", arg);
		break;
	case OPT_OLD_SIZE:
		argp_error(st, "--size is a list of message sizes (-z: pingpong, "
			   "bench, model); the size of the shared memory is "
			   "--shm-size SIZE");
		break;
	case OPT_VECTORS:
		o->vectors = arg_u32(st, "--vectors", arg, 1,
				     SMQ_SERVER_MAX_VECTORS);
		break;
	case 'm':
		o->mode = arg_mode(st, arg);
		break;
	case ARGP_KEY_END:
		if (!o->socket)
			argp_error(st, "--socket PATH is required");
		break;
	default:
		return no_operands(key, arg, st);
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"Run an ivshmem server on a UNIX socket, for QEMU's ivshmem-doorbell "
	"device (-chardev socket,path=PATH) and host peers.  It owns the "
	"memory, the --window (shm:NAME or file:PATH), creating it if need "
	"be; gives each peer an ID and its interrupt eventfds; and prints a "
	"line for each peer that joins or leaves.  SIGINT or SIGTERM stops it "
	"and removes the socket.", NULL, NULL, NULL
};

/* ---- output ---- */

static const char *reason(int err)
{
	switch (-err) {
	case EPROTO:
		return "it sent data, and the protocol is one-way";
	case ENOSPC:
		return "every ID from 0 to 65535 is taken";
	case EMFILE:
	case ENFILE:
		return "the server is out of file descriptors";
	case ENOMEM:
		return "the server is out of memory";
	default:
		return smq_strerror(err);
	}
}

static void print_event(const struct ctx *ctx, const struct smq_server_event *ev)
{
	static const char *const names[] = { "", "joined", "left", "refused" };
	const char *name = ev->type >= 1 && ev->type <= 3 ? names[ev->type]
							   : "unknown";

	if (ctx->json) {
		struct json j;
		json_open_line(&j, stdout);
		json_begin(&j, NULL, '{');
		json_str(&j, "event", name);
		if (ev->type != SMQ_PEER_REFUSED)
			json_u64(&j, "peer", ev->peer);
		if (ev->pid > 0)
			json_i64(&j, "pid", ev->pid);
		else
			json_null(&j, "pid");
		if (ev->error)
			json_str(&j, "reason", reason(ev->error));
		json_end(&j, '}');
		json_close(&j);
	} else if (ev->type == SMQ_PEER_REFUSED) {
		printf("client refused");
		if (ev->pid > 0)
			printf(" (pid %d)", ev->pid);
		printf(": %s\n", reason(ev->error));
	} else {
		printf("peer %u %s", ev->peer, name);
		if (ev->type == SMQ_PEER_JOINED && ev->pid > 0)
			printf(" (pid %d)", ev->pid);
		if (ev->error)
			printf(" (dropped: %s)", reason(ev->error));
		putchar('\n');
	}
	fflush(stdout);
}

static void print_listening(const struct ctx *ctx, const char *socket,
			    const char *memory, const struct smq_server_info *si)
{
	char human[32];

	if (ctx->json) {
		struct json j;
		json_open_line(&j, stdout);
		json_begin(&j, NULL, '{');
		json_str(&j, "event", "listening");
		json_str(&j, "socket", socket);
		json_str(&j, "memory", memory);
		json_u64(&j, "size", si->memory_size);
		json_u64(&j, "vectors", si->vectors);
		json_end(&j, '}');
		json_close(&j);
	} else {
		printf("listening on %s: memory %s, %s, %u vector%s\n", socket,
		       memory, human_bytes(si->memory_size, human), si->vectors,
		       si->vectors == 1 ? "" : "s");
	}
	fflush(stdout);
}

/* ---- running ---- */

/* Every peer holds an eventfd per vector here: take all the descriptors
 * the hard limit allows. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int open_error_msg(const struct server_opts *o, const char *memory,
			  int err)
{
	switch (-err) {
	case EADDRINUSE:
		return say_error("another server is listening on %s", o->socket);
	case EEXIST:
		return say_error("%s exists and is not a socket: not removing it",
			     o->socket);
	case ELOOP:
		return say_error("memory %s is a symbolic link: refused", memory);
	case EPERM:
		return say_error("memory %s belongs to another user: refused", memory);
	case EPROTONOSUPPORT:
		return say_error("the server's memory (--window) is shm:NAME or "
			     "file:PATH, not '%s'", memory);
	case EFBIG:
		return say_error("memory %s is larger than 64 TiB", memory);
	case EINVAL:
		if (!strncmp(memory, "file:", 5) || memory[0] == '/' ||
		    memory[0] == '.')
			return say_error("memory %s is not a regular file", memory);
		return say_error("bad window spec '%s': a shm name is 1 to 200 of "
			     "A-Z a-z 0-9 . _ -, not starting with '.', without "
			     "'..'", memory);
	case ENAMETOOLONG:
		return say_error("memory %s: the path is too long", memory);
	case ENOENT: {
		char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
		snprintf(dir, sizeof(dir), "%s", o->socket);
		char *slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = 0;
			if (access(dir, F_OK) < 0)
				return say_error("cannot make socket %s: no directory "
					     "%s", o->socket, dir);
		}
		return say_error("cannot serve %s with memory %s: %s", o->socket,
			     memory, smq_strerror(err));
	}
	default:
		return say_error("cannot serve %s with memory %s: %s", o->socket,
			     memory, smq_strerror(err));
	}
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct server_opts o = { NULL, 4u << 20, 8, 0600 };
	struct smq_server *s;
	struct smq_server_info si;
	struct smq_server_event ev;
	sigset_t stop;
	int sigfd, err, rc = 0;

	parse_cmd(&argp, argc, argv, &o, ctx);
	if (ctx->board_set) {
		fprintf(stderr, "smqctl: server acts as no board: --board has no "
			"meaning here\n");
		return EXIT_USAGE;
	}
	const char *memory = window_spec(ctx);
	struct smq_server_config c = { o.socket, memory, o.size, o.vectors,
				       o.mode };

	/* The signals that stop the server are read, not caught: none is
	 * lost between two looks.  A closed standard output is a write
	 * error, not a death that leaves the socket behind. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigfd = signalfd(-1, &stop, SFD_CLOEXEC);
	if (sigfd < 0)
		return say_error("cannot watch for signals: %s", strerror(errno));
	raise_fd_limit();

	err = smq_server_open(&c, sizeof(c), &s);
	if (err) {
		close(sigfd);
		return open_error_msg(&o, memory, err);
	}
	smq_server_info(s, &si, sizeof(si));
	print_listening(ctx, o.socket, memory, &si);
	notify_ready();

	struct pollfd pf[2] = { { smq_server_fd(s), POLLIN, 0 },
				{ sigfd, POLLIN, 0 } };
	for (;;) {
		while ((err = smq_server_next(s, 0, &ev, sizeof(ev))) == 0)
			print_event(ctx, &ev);
		if (err != -ETIMEDOUT) {
			rc = say_error("server on %s: %s", o.socket, smq_strerror(err));
			break;
		}
		if (ferror(stdout)) {
			rc = say_error("write error on standard output: stopping");
			break;
		}
		if (poll(pf, 2, -1) < 0 && errno != EINTR) {
			rc = say_error("server on %s: %s", o.socket, strerror(errno));
			break;
		}
		if (pf[1].revents) {
			struct signalfd_siginfo si_sig;
			if (read(sigfd, &si_sig, sizeof(si_sig)) > 0 && ctx->verbose)
				say_warning("%s: stopping the server on %s",
				     strsignal((int)si_sig.ssi_signo), o.socket);
			break;
		}
	}
	err = smq_server_close(s);
	close(sigfd);
	if (err && !rc)
		rc = say_error("cannot remove socket %s: %s", o.socket, strerror(-err));
	return rc;
}

const struct cmd cmd_server = { "server", run, &argp,
				"serve ivshmem peers (QEMU ivshmem-doorbell)" };
