/* The options every command shares (--window, --board, --json,
 * --verbose) as one child parser, at the top level and in every command,
 * and the window they name; the parse of a command's own arguments with
 * that parser as a child; and the end of the run that checks standard
 * output.  They live below main.c's dispatch because every command
 * parses through them: were they in main.c, each command would call back
 * up into the file that calls it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../smqctl.h"

/* Exit 1 if stdout could not be written (a full disk, a closed pipe). */
int finish(int rc)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "smqctl: write error on standard output: %s\n",
			strerror(errno));
		return 1;
	}
	return rc;
}

/* ---- the shared options: one child parser, in every command too ---- */

static const struct argp_option common_options[] = {
	{ "window", 'w', "SPEC", 0,
	  "Window to use (default $SMQ_WINDOW, else " SMQ_DEFAULT_WINDOW
	  "); 'help' describes the specs", 0 },
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

/* --help lists every window spec the library has, as --window help does:
 * the first word of each transport's help ("pci:[DOMAIN:]BUS:SLOT.FUNC"). */
static char *common_help_filter(int key, const char *text, void *input)
{
	size_t n = 1024, len = 0;
	char *buf;

	(void)input;
	if (key != 'w' || !text || !(buf = malloc(n)))
		return (char *)text;
	len += (size_t)snprintf(buf, n, "Window to use: ");
	for (unsigned i = 0; smq_transport_help(i) && len < n; i++) {
		const char *h = smq_transport_help(i);
		len += (size_t)snprintf(buf + len, n - len, "%s%.*s",
					i ? ", " : "", (int)strcspn(h, " "), h);
	}
	if (len < n)
		snprintf(buf + len, n - len, "%s", text + strlen("Window to use"));
	return buf;
}

const struct argp common_argp = { common_options, common_parse, NULL, NULL,
				  NULL, common_help_filter, NULL };

/* Here, under messages.c, window_error.c and window_open.c: all three
 * name the window, and they call one another. */
const char *window_spec(const struct ctx *ctx)
{
	return ctx->window && *ctx->window ? ctx->window : smq_default_window();
}

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

error_t no_operands(int key, char *arg, struct argp_state *st)
{
	if (key != ARGP_KEY_ARG)
		return ARGP_ERR_UNKNOWN;
	argp_error(st, "unexpected argument '%s'", arg);
	return 0;
}

/* A command's --help ends with its page, as git's help points to
 * git-CMD(1): argp asks for that last text as ARGP_KEY_HELP_EXTRA. */
static char *wrap_help_filter(int key, const char *text, void *input)
{
	const struct wrap_input *in = input;
	char *see;

	if (key != ARGP_KEY_HELP_EXTRA || !in)
		return (char *)text;
	if (asprintf(&see, "See smqctl-%s(1).", in->ctx->cmd) < 0)
		return NULL;
	return see;
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
				      argp->doc, children, wrap_help_filter,
				      NULL };
	struct wrap_input in = { input, ctx };
	char name[64];

	snprintf(name, sizeof(name), "smqctl %s", ctx->cmd);
	argv[0] = name;
	argp_parse(&wrapper, argc, argv, 0, NULL, &in);
}
