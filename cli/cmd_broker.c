/* smqctl broker: a vfio broker for a board's PCI device (--window pci:BDF):
 * it holds the device, which VFIO lets one process do, and hands it to the
 * board's other processes (--window broker:SOCKET), printing a line for
 * every one that attaches or leaves, until SIGINT, SIGTERM or SIGHUP. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include "smq_tools.h"  /* the vfio broker */
#include "smqctl.h"

struct broker_opts {
	const char *socket;
	unsigned mode;
};

enum { OPT_SOCKET = 0x100 };

static const struct argp_option options[] = {
	{ "socket", OPT_SOCKET, "PATH", 0,
	  "Listen on the UNIX socket PATH (required)", 0 },
	{ "mode", 'm', "OCTAL", 0,
	  "Permission bits of the socket: who may attach (default 0600)", 0 },
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct broker_opts *o = st->input;

	switch (key) {
	case OPT_SOCKET:
		o->socket = arg_socket_path(st, arg);
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
	"Hold the board's PCI device (--window pci:BDF, bound to vfio-pci) and "
	"hand it to the board's other processes, which attach with --window "
	"broker:PATH: VFIO lets one process hold a device, so without a "
	"broker only one smqctl or application can use it at a time.  Each "
	"gets the device's file and an interrupt vector for each waiter.  "
	"SIGINT, SIGTERM or SIGHUP stops it and removes the socket.",
	NULL, NULL, NULL
};

static void print_listening(const struct ctx *ctx, const char *socket,
			    const struct smq_broker_info *bi)
{
	char human[32];

	if (ctx->json) {
		struct json j;
		json_open_line(&j, stdout);
		json_begin(&j, NULL, '{');
		json_str(&j, "event", "listening");
		json_str(&j, "socket", socket);
		json_str(&j, "device", bi->device);
		json_i64(&j, "bar", bi->bar);
		json_u64(&j, "size", bi->memory_size);
		json_u64(&j, "vectors", bi->vectors);
		json_end(&j, '}');
		json_close(&j);
	} else {
		printf("listening on %s: device %s, BAR %d of %s, %u vector%s\n",
		       socket, bi->device, bi->bar,
		       human_bytes(bi->memory_size, human), bi->vectors,
		       bi->vectors == 1 ? "" : "s");
	}
	fflush(stdout);
}

static void print_event(const struct ctx *ctx, const struct smq_broker_event *ev)
{
	const char *name = ev->type == SMQ_CLIENT_ATTACHED ? "attached"
			   : "detached";

	if (ctx->json) {
		struct json j;
		json_open_line(&j, stdout);
		json_begin(&j, NULL, '{');
		json_str(&j, "event", name);
		if (ev->pid > 0)
			json_i64(&j, "pid", ev->pid);
		else
			json_null(&j, "pid");
		if (ev->type == SMQ_CLIENT_DETACHED)
			json_u64(&j, "vectors", ev->vectors);
		if (ev->error)
			json_str(&j, "reason", smq_strerror(ev->error));
		json_end(&j, '}');
		json_close(&j);
	} else {
		printf("client %s", name);
		if (ev->pid > 0)
			printf(" (pid %d)", ev->pid);
		if (ev->type == SMQ_CLIENT_DETACHED && ev->vectors)
			printf(", %u vector%s given back", ev->vectors,
			       ev->vectors == 1 ? "" : "s");
		if (ev->error)
			printf(" (dropped: %s)", ev->error == -EPROTO
			       ? "it broke the broker's protocol"
			       : smq_strerror(ev->error));
		putchar('\n');
	}
	fflush(stdout);
}

static int open_error_msg(const struct broker_opts *o, const char *window,
			  int err)
{
	char words[512];

	switch (-err) {
	case EADDRINUSE:
		return say_error("another broker is listening on %s", o->socket);
	case EEXIST:
		return say_error("%s exists and is not a socket: not removing it",
			     o->socket);
	case EPROTONOSUPPORT:
		if (strncmp(window, "pci:", 4))
			return say_error("a broker holds a PCI device: --window "
				     "pci:BDF, not '%s'", window);
		break;
	default:
		break;
	}
	return say_error("broker: %s", smq_explain(window, err, words,
						   sizeof(words)));
}

/* The signals that stop it are read, not caught: none is lost between
 * two looks. */
static int serve(struct ctx *ctx, struct smq_broker *b, const char *socket,
		 int sigfd)
{
	struct pollfd pf[2] = { { smq_broker_fd(b), POLLIN, 0 },
				{ sigfd, POLLIN, 0 } };
	struct smq_broker_event ev;
	int err;

	for (;;) {
		while ((err = smq_broker_next(b, 0, &ev, sizeof(ev))) == 0)
			print_event(ctx, &ev);
		/* -EINTR: stopped and continued (Ctrl-Z, fg) */
		if (err != -ETIMEDOUT && err != -EINTR)
			return say_error("broker on %s: %s", socket,
				     smq_strerror(err));
		if (ferror(stdout))
			return say_error("write error on standard output: "
				     "stopping");
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			return say_error("broker on %s: %s", socket,
				     strerror(errno));
		if (pf[1].revents) {
			struct signalfd_siginfo si;
			if (read(sigfd, &si, sizeof(si)) > 0 && ctx->verbose)
				say_warning("%s: stopping the broker on %s",
				     strsignal((int)si.ssi_signo), socket);
			return 0;
		}
	}
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct broker_opts o = { NULL, 0600 };
	struct smq_broker *b;
	struct smq_broker_info bi;
	sigset_t stop;
	int sigfd, err, rc;

	parse_cmd(&argp, argc, argv, &o, ctx);
	if (ctx->board_set) {
		fprintf(stderr, "smqctl: broker acts as no board: --board has no "
			"meaning here\n");
		return EXIT_USAGE;
	}
	const char *window = window_spec(ctx);
	struct smq_broker_config c = { o.socket, window, o.mode };

	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigfd = signalfd(-1, &stop, SFD_CLOEXEC);
	if (sigfd < 0)
		return say_error("cannot watch for signals: %s", strerror(errno));
	if ((err = smq_broker_open(&c, sizeof(c), &b))) {
		close(sigfd);
		return open_error_msg(&o, window, err);
	}
	smq_broker_info(b, &bi, sizeof(bi));
	print_listening(ctx, o.socket, &bi);
	notify_ready();
	rc = serve(ctx, b, o.socket, sigfd);
	err = smq_broker_close(b);
	close(sigfd);
	if (err && !rc)
		rc = say_error("cannot remove socket %s: %s", o.socket,
			       strerror(-err));
	return rc;
}

const struct cmd cmd_broker = { "broker", run, &argp,
				"hold a PCI device for the board's processes "
				"(vfio broker)" };
