/* smqctl: diagnostics and configuration of smq windows.
 * The top-level parser takes the shared options and stops at the command
 * name; the command parses the rest with its own argp (STYLE.md). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "smqctl.h"

const char *argp_program_version = "smqctl " SMQ_VERSION;

const struct cmd *const smqctl_cmds[] = {
	&cmd_init, &cmd_clear, &cmd_sync, &cmd_dump, &cmd_send, &cmd_recv,
	&cmd_pingpong, &cmd_bench, &cmd_top, &cmd_probe, &cmd_model,
	&cmd_server,
	NULL,
};

static const struct cmd *find_cmd(const char *name)
{
	for (int i = 0; smqctl_cmds[i]; i++)
		if (!strcmp(smqctl_cmds[i]->name, name))
			return smqctl_cmds[i];
	return NULL;
}

/* Exit 1 if stdout could not be written (a full disk, a closed pipe). */
static int finish(int rc)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "smqctl: write error on standard output: %s\n",
			strerror(errno));
		return 1;
	}
	return rc;
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
	ssize_t r = write(2, msg, sizeof(msg) - 1);
	(void)r;
	_exit(1);
}

/* ---- the shared options: one child parser, in every command too ---- */

enum { OPT_LIST_CMDS = 0x100, OPT_LIST_OPTS };

static const struct argp_option common_options[] = {
	{ "window", 'w', "SPEC", 0,
	  "Window to use: shm:NAME, file:PATH (default $SMQ_WINDOW, else "
	  SMQ_DEFAULT_WINDOW "); 'help' lists the transports", 0 },
	{ "board", 'b', "N", 0, "Act as board N (default 0, the system board)", 0 },
	{ "json", 'j', NULL, 0, "Print JSON instead of text", 0 },
	{ "verbose", 'v', NULL, 0, "Say more (repeat for even more)", 0 },
	{ 0 }
};

static void list_transports(void)
{
	printf("Window specs (default %s):\n", smq_default_window());
	for (unsigned i = 0; smq_transport_name(i); i++)
		printf("  %s\n", smq_transport_help(i));
}

static error_t common_parse(int key, char *arg, struct argp_state *st)
{
	struct ctx *ctx = st->input;

	switch (key) {
	case 'w':
		if (!*arg)
			argp_error(st, "--window needs a spec (see --window help)");
		if (!strcmp(arg, "help")) {
			list_transports();
			exit(finish(0));
		}
		ctx->window = arg;
		break;
	case 'b':
		ctx->board = arg_u32(st, "--board", arg, 0, SMQ_MAX_BOARDS - 1);
		ctx->board_set = true;
		break;
	case 'j':
		ctx->json = true;
		break;
	case 'v':
		ctx->verbose++;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp common_argp = { common_options, common_parse, NULL, NULL,
				  NULL, NULL, NULL };

/* ---- a command's own parser, with the shared one as a child ---- */

struct wrap_input {
	void *opts;
	struct ctx *ctx;
};

static error_t wrap_parse(int key, char *arg, struct argp_state *st)
{
	struct wrap_input *in = st->input;
	(void)arg;
	if (key == ARGP_KEY_INIT) {
		st->child_inputs[0] = in->opts;
		st->child_inputs[1] = in->ctx;
	}
	return ARGP_ERR_UNKNOWN;
}

void parse_cmd(const struct argp *argp, int argc, char **argv, void *input,
	       struct ctx *ctx)
{
	struct argp own = *argp;
	own.args_doc = NULL;
	own.doc = NULL;
	const struct argp_child children[] = {
		{ &own, 0, NULL, 0 },
		{ &common_argp, 0, "Common options:", 1 },
		{ 0 }
	};
	const struct argp wrapper = { NULL, wrap_parse, argp->args_doc,
				      argp->doc, children, NULL, NULL };
	struct wrap_input in = { input, ctx };
	char name[64];

	snprintf(name, sizeof(name), "smqctl %s", ctx->cmd);
	argv[0] = name;
	argp_parse(&wrapper, argc, argv, 0, NULL, &in);
}

/* ---- top level ---- */

struct top {
	struct ctx *ctx;
	int cmd_index;  /* argv index of the command name, 0 if none */
};

static void list_options(const struct argp *argp)
{
	for (const struct argp_option *o = argp->options; o && (o->name || o->key || o->doc); o++)
		if (o->name && !(o->flags & OPTION_HIDDEN))
			printf("--%s\n", o->name);
	for (const struct argp_child *c = argp->children; c && c->argp; c++)
		list_options(c->argp);
}

static const struct argp_option top_options[] = {
	{ "list-cmds", OPT_LIST_CMDS, NULL, OPTION_HIDDEN,
	  "List the commands, one a line (for completions)", 0 },
	{ "list-opts", OPT_LIST_OPTS, "CMD", OPTION_HIDDEN,
	  "List the long options of CMD, one a line (for completions)", 0 },
	{ 0 }
};

static error_t top_parse(int key, char *arg, struct argp_state *st)
{
	struct top *top = st->input;

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
		exit(finish(0));
	}
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
	"options.  Exit status: 0 success, 1 failure, 2 usage error.",
	top_children, top_help_filter, NULL
};

int main(int argc, char **argv)
{
	struct ctx ctx = { 0 };
	struct top top = { &ctx, 0 };

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
