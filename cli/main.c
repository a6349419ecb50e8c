/* smqctl: diagnostics and configuration of smq windows.
 * The top-level parser takes the shared options and stops at the command
 * name; the command parses the rest with its own argp. */
#include <ctype.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "smqctl.h"
#include "probe.h"

const char *argp_program_version = "smqctl " SMQ_VERSION;

const struct cmd *const smqctl_cmds[] = {
	&cmd_init, &cmd_clear, &cmd_sync, &cmd_dump, &cmd_send, &cmd_recv,
	&cmd_pingpong, &cmd_bench, &cmd_top, &cmd_probe, &cmd_model,
	&cmd_check, &cmd_server, &cmd_broker, &cmd_metrics, &cmd_events,
	NULL,
};

static const struct cmd *find_cmd(const char *name)
{
	for (int i = 0; smqctl_cmds[i]; i++)
		if (!strcmp(smqctl_cmds[i]->name, name))
			return smqctl_cmds[i];
	return NULL;
}

/* A mapped BAR can fault when the device goes away or the mapping outruns
 * it: say so and exit instead of dumping core (switchtec-user does the
 * same).  Only async-signal-safe calls here. */
static void on_sigbus(int sig)
{
	static const char msg[] = "smqctl: bus error reading the window: the "
		"device was removed or reset, or the window is smaller than "
		"mapped (truncated?)\n";
	(void)sig;
	bus_catch();  /* a guarded reading: its error, not the end */
	ssize_t r = write(2, msg, sizeof(msg) - 1);
	(void)r;
	_exit(1);
}

enum { OPT_LIST_CMDS = 0x100, OPT_LIST_OPTS, OPT_LIST_ARGS, OPT_LIST_WINDOWS,
       OPT_LIST_DEVICES };

/* ---- top level ---- */

struct main_args {
	struct ctx *ctx;
	int cmd_index;  /* argv index of the command name, 0 if none */
};

/* Calls fn on each option of argp and its children, hidden ones aside.  A
 * child without a header (queue_argp) is one with its parent's options
 * in --help, and it led the tables it was taken from: it comes first.
 * One with a header (session_argp), a section of its own in --help,
 * comes after them. */
static void each_option(const struct argp *argp,
			void (*fn)(const struct argp_option *o))
{
	for (const struct argp_child *c = argp->children; c && c->argp; c++)
		if (!c->header)
			each_option(c->argp, fn);
	for (const struct argp_option *o = argp->options; o && (o->name || o->key || o->doc); o++)
		if (o->name && !(o->flags & OPTION_HIDDEN))
			fn(o);
	for (const struct argp_child *c = argp->children; c && c->argp; c++)
		if (c->header)
			each_option(c->argp, fn);
}

static void print_name_line(const struct argp_option *o)
{
	printf("--%s\n", o->name);
}

static void list_options(const struct argp *argp)
{
	each_option(argp, print_name_line);
}

/* What the completions offer after an option, by the name of its argument:
 * files, window specs (--list-windows), or words.  The words of HOW are
 * those that --wait of pingpong and bench takes (tests/docs/t_cli_docs.sh checks
 * that each is accepted). */
static const struct {
	const char *arg, *kind;
} arg_kinds[] = {
	{ "FILE", "file" },
	{ "PATH", "file" },
	{ "SPEC", "window" },
	{ "HOW", "words poll sleep spin" },
};

static void print_arg_line(int key, const char *name, const char *arg)
{
	const char *kind = "-";

	for (size_t i = 0; arg && i < sizeof(arg_kinds) / sizeof(arg_kinds[0]); i++)
		if (!strcmp(arg, arg_kinds[i].arg))
			kind = arg_kinds[i].kind;
	if (key > 0 && key < 0x80 && isprint(key))
		printf("-%c", key);
	else
		putchar('-');
	printf(" --%s %s %s\n", name, arg ? arg : "-", kind);
}

static void print_option_line(const struct argp_option *o)
{
	print_arg_line(o->key, o->name, o->arg);
}

static void list_args(const struct argp *argp)
{
	each_option(argp, print_option_line);
}

static int print_spec(const char *spec, void *arg)
{
	(void)arg;
	puts(spec);
	return 0;
}

/* The windows a completion offers: 'help', every transport's prefix, and
 * the windows the library finds on this host. */
static void list_windows(void)
{
	puts("help");
	for (unsigned i = 0; smq_transport_name(i); i++)
		printf("%s:\n", smq_transport_name(i));
	smq_list_windows(print_spec, NULL);
}

/* The PCI devices a pci: window could be: the candidates of smqctl probe
 * (NTBs, ivshmem), each as the spec of the BAR smq would map. */
static int list_devices(const char *dump)
{
	struct probe_list l;
	int err = probe_scan(&l, NULL, dump);

	if (err)
		return say_error("cannot list PCI devices: %s", *probe_last_error()
			     ? probe_last_error() : strerror(-err));
	for (int i = 0; i < l.n; i++) {
		struct probe_advice a;
		probe_advise(&l.dev[i], &a);
		if (a.spec[0])
			puts(a.spec);
	}
	probe_free(&l);
	return 0;
}

static const struct argp_option top_options[] = {
	{ "list-cmds", OPT_LIST_CMDS, NULL, OPTION_HIDDEN,
	  "List the commands, one a line (for completions)", 0 },
	{ "list-opts", OPT_LIST_OPTS, "CMD", OPTION_HIDDEN,
	  "List the long options of CMD, one a line (for completions)", 0 },
	{ "list-args", OPT_LIST_ARGS, "CMD", OPTION_HIDDEN,
	  "List the options of CMD, one a line: short form or '-', long form, "
	  "argument or '-', and what completes it (file, window, words ...) "
	  "or '-'", 0 },
	{ "list-windows", OPT_LIST_WINDOWS, NULL, OPTION_HIDDEN,
	  "List window specs to complete: help, the transports, the smq "
	  "windows in /dev/shm", 0 },
	{ "list-devices", OPT_LIST_DEVICES, "DUMP", OPTION_HIDDEN |
	  OPTION_ARG_OPTIONAL,
	  "List the pci: windows of the PCI devices that could carry one (from "
	  "the bus, or an 'lspci -x' DUMP)", 0 },
	{ 0 }
};

static error_t top_parse(int key, char *arg, struct argp_state *st)
{
	struct main_args *top = st->input;

	switch (key) {
	case ARGP_KEY_INIT:
		st->child_inputs[0] = top->ctx;
		break;
	case OPT_LIST_CMDS:
		for (int i = 0; smqctl_cmds[i]; i++)
			puts(smqctl_cmds[i]->name);
		puts("help");
		exit(finish(0));
	case OPT_LIST_OPTS: {
		const struct cmd *c = find_cmd(arg);
		if (!c && strcmp(arg, "help"))
			argp_error(st, "no command '%s'", arg);
		if (c)
			list_options(c->argp);
		list_options(&common_argp);
		/* argp's own: every command's, and the program's version */
		printf("--help\n--usage\n%s", c ? "" : "--version\n");
		exit(finish(0));
	}
	case OPT_LIST_ARGS: {
		const struct cmd *c = find_cmd(arg);
		if (!c && strcmp(arg, "help"))
			argp_error(st, "no command '%s'", arg);
		if (c)
			list_args(c->argp);
		list_args(&common_argp);
		/* argp's own */
		print_arg_line('?', "help", NULL);
		print_arg_line(0, "usage", NULL);
		print_arg_line('V', "version", NULL);
		exit(finish(0));
	}
	case OPT_LIST_WINDOWS:
		list_windows();
		exit(finish(0));
	case OPT_LIST_DEVICES:
		exit(finish(list_devices(arg)));
	case ARGP_KEY_ARG:
		top->cmd_index = st->next - 1;
		st->next = st->argc;  /* the rest is the command's */
		break;
	case ARGP_KEY_NO_ARGS:
		argp_error(st, "no command given");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static char *top_help_filter(int key, const char *text, void *input)
{
	(void)input;
	if (key != ARGP_KEY_HELP_POST_DOC)
		return (char *)text;
	size_t n = 4096;
	char *buf = malloc(n), *p = buf;
	if (!buf)
		return (char *)text;
	p += snprintf(p, n, "Commands:\n");
	for (int i = 0; smqctl_cmds[i]; i++)
		p += snprintf(p, n - (size_t)(p - buf), "  %-10s %s\n",
			      smqctl_cmds[i]->name, smqctl_cmds[i]->summary);
	snprintf(p, n - (size_t)(p - buf), "  %-10s %s\n\n%s", "help",
		 "show the help of a command", text ? text : "");
	return buf;
}

static const struct argp_child top_children[] = {
	{ &common_argp, 0, "Common options (also after the command):", 0 },
	{ 0 }
};

static const struct argp top_argp = {
	top_options, top_parse, "COMMAND [OPTION...] [ARG...]",
	"Configure, watch and measure smq message queues in memory shared "
	"between boards over PCI/PCIe, or between processes of one host."
	"\vRun 'smqctl help COMMAND' or 'smqctl COMMAND --help' for a command's "
	"options.  Exit status: 0 success, 1 failure, 2 usage error.\n\n"
	"See smqctl(1).",
	top_children, top_help_filter, NULL
};

int main(int argc, char **argv)
{
	struct ctx ctx = { 0 };
	struct main_args top = { &ctx, 0 };

	argp_err_exit_status = EXIT_USAGE;
	signal(SIGBUS, on_sigbus);
	argv[0] = (char *)"smqctl";  /* messages name the tool, not its path */
	argp_parse(&top_argp, argc, argv, ARGP_IN_ORDER, NULL, &top);

	char **sub = argv + top.cmd_index;
	int subc = argc - top.cmd_index;
	const char *name = sub[0];
	if (!strcmp(name, "help")) {
		if (subc < 2) {
			argp_help(&top_argp, stdout, ARGP_HELP_STD_HELP, "smqctl");
			return finish(0);
		}
		if (!strcmp(sub[1], "help") || !strcmp(sub[1], "--help") ||
		    !strcmp(sub[1], "-?")) {
			printf("Usage: smqctl help [COMMAND]\n"
			       "Without COMMAND, print the usage of smqctl, the "
			       "common options and the\ncommands; with one, print "
			       "the help of COMMAND, as 'smqctl COMMAND --help'\n"
			       "does.\n\nCommands:");
			for (int i = 0; smqctl_cmds[i]; i++)
				printf(" %s", smqctl_cmds[i]->name);
			printf(" help\n\nSee smqctl-help(1).\n");
			return finish(0);
		}
		const struct cmd *c = find_cmd(sub[1]);
		if (!c) {
			fprintf(stderr, "smqctl: no command '%s' (smqctl help "
				"lists them)\n", sub[1]);
			return EXIT_USAGE;
		}
		char *help_argv[] = { (char *)c->name, (char *)"--help", NULL };
		ctx.cmd = c->name;
		return finish(c->run(2, help_argv, &ctx));
	}
	const struct cmd *c = find_cmd(name);
	if (!c) {
		fprintf(stderr, "smqctl: no command '%s' (smqctl help lists "
			"them)\n", name);
		return EXIT_USAGE;
	}
	ctx.cmd = c->name;
	return finish(c->run(subc, sub, &ctx));
}
