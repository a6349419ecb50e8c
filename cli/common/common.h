/* smqctl's shared helpers that sit below the dispatch: what main.c and
 * every command both use, kept apart from main.c so that a command never
 * calls back up into the file that calls it.  options.c: the common
 * options (the input they fill, struct ctx) and the window they name, a
 * command's parse with them as a child, and the end of a run;
 * socket_option.c: the options of the commands that listen on a socket.
 * smqctl.h includes this header. */
#ifndef SMQCTL_COMMON_H
#define SMQCTL_COMMON_H

#include <argp.h>
#include <stdbool.h>

/* Options every command takes (the shared child parser). */
struct ctx {
	const char *window;   /* NULL: $SMQ_WINDOW, else the built-in default */
	unsigned board;
	bool board_set;
	bool json;
	int verbose;
	const char *cmd;      /* name of the running command */
};

extern const struct argp common_argp;
/* The window the options name: --window, else $SMQ_WINDOW, else the
 * built-in default. */
const char *window_spec(const struct ctx *ctx);

/* Parses a command's own arguments: argv[0] becomes "smqctl CMD". */
void parse_cmd(const struct argp *argp, int argc, char **argv, void *input,
	       struct ctx *ctx);
/* The end of a command's argp parser: an operand is an error (no command
 * takes one), any other key is not ours. */
error_t no_operands(int key, char *arg, struct argp_state *st);
/* rc, or 1 if stdout could not be written (a full disk, a closed pipe):
 * the exit status of a run, or of an option that ends it (--window
 * help). */
int finish(int rc);

/* socket_option.c: --socket PATH of the commands that listen on a UNIX
 * socket (server, broker).  A path that is empty or too long for a
 * socket is a usage error through argp. */
const char *arg_socket_path(struct argp_state *st, const char *arg);

#endif
