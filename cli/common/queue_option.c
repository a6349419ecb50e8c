/* --queue Q, for the commands that act on one queue or on all of them
 * (clear, dump): one option table and one parser, as a child parser. */
#include <string.h>
#include "../smqctl.h"

static const struct argp_option options[] = {
	/* the text is the command's: queue_help() */
	{ "queue", 'q', "Q", 0, NULL, 0 },
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct queue_opt *o = st->input;

	if (key != 'q')
		return ARGP_ERR_UNKNOWN;
	o->queue = (int)arg_u32(st, "--queue", arg, 0, SMQ_MAX_QUEUES - 1);
	return 0;
}

/* Each command does something else with the queue, so --help says what
 * in its words.  argp frees what is not text. */
static char *queue_help(int key, const char *text, void *input)
{
	const struct queue_opt *o = input;

	if (key != 'q' || !o || !o->doc)
		return (char *)text;
	return strdup(o->doc);
}

const struct argp queue_argp = { options, parse, NULL, NULL, NULL,
				 queue_help, NULL };

const struct argp_child queue_children[] = {
	{ &queue_argp, 0, NULL, 0 },
	{ 0 }
};
