/* placeholder: smqctl top is being written */
#include "smqctl.h"

static const struct argp argp = { NULL, NULL, NULL, "not yet", NULL, NULL, NULL };

static int run(int argc, char **argv, struct ctx *ctx)
{
	parse_cmd(&argp, argc, argv, NULL, ctx);
	return error("top: not yet");
}

const struct cmd cmd_top = { "top", run, &argp, "not yet" };
