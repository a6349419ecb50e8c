/* smqctl recv: receive messages and write them out. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "smqctl.h"

struct recv_opts {
	int queue;
	int timeout_ms;
	uint32_t count;
	bool hex;
};

static const struct argp_option options[] = {
	{ "queue", 'q', "Q", 0,
	  "Receive on queue Q (default: the first queue this board receives)", 0 },
	{ "timeout", 't', "TIME", 0,
	  "Wait up to TIME for each message (default inf)", 0 },
	{ "count", 'c', "N", 0,
	  "Receive N messages (default 1; 0: until the timeout)", 0 },
	{ "hex", 'x', NULL, 0,
	  "Print each message as a line of hex, with its sender and size", 0 },
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct recv_opts *o = st->input;

	switch (key) {
	case 'q':
		o->queue = (int)arg_u32(st, "--queue", arg, 0, SMQ_MAX_QUEUES - 1);
		break;
	case 't':
		o->timeout_ms = arg_duration(st, "--timeout", arg);
		break;
	case 'c':
		o->count = arg_u32(st, "--count", arg, 0, UINT32_MAX);
		break;
	case 'x':
		o->hex = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(st, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (o->count == 0 && o->timeout_ms < 0)
			argp_error(st, "--count 0 needs a --timeout to end");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"Receive messages on a queue this board (--board) receives, and write "
	"them to standard output: raw bytes, or with --hex a line each, or with "
	"--json an object each.", NULL, NULL, NULL
};

static int first_received_queue(struct smq_window *w, unsigned board)
{
	struct smq_window_info wi;

	smq_window_info(w, &wi);
	for (unsigned q = 0; q < wi.geometry.queues; q++) {
		struct smq_queue_info qi;
		if (!smq_queue_info(w, q, &qi) && qi.receiver == board)
			return (int)q;
	}
	return -1;
}

static void print_message(const struct ctx *ctx, const struct recv_opts *o,
			  const uint8_t *buf, size_t len, unsigned from)
{
	if (ctx->json) {
		printf("{\"queue\": %d, \"sender\": %u, \"size\": %zu, \"hex\": \"",
		       o->queue, from, len);
		for (size_t i = 0; i < len; i++)
			printf("%02x", buf[i]);
		printf("\"}\n");
	} else if (o->hex) {
		printf("board %u, %zu bytes:", from, len);
		for (size_t i = 0; i < len; i++)
			printf(" %02x", buf[i]);
		putchar('\n');
	} else {
		fwrite(buf, 1, len, stdout);
	}
	fflush(stdout);
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct recv_opts o = { -1, SMQ_WAIT_FOREVER, 1, false };
	struct smq_window *w;
	struct smq_window_info wi;
	struct smq_queue *q;
	uint8_t *buf;
	int err;

	parse_cmd(&argp, argc, argv, &o, ctx);
	if (open_window(ctx, 0, &w))
		return 1;
	smq_window_info(w, &wi);
	if (o.queue < 0 && (o.queue = first_received_queue(w, ctx->board)) < 0) {
		smq_close(w);
		return error("board %u receives no queue of %s", ctx->board, wi.name);
	}
	if (check_queue(w, (unsigned)o.queue)) {
		smq_close(w);
		return 1;
	}
	err = smq_queue_open(w, (unsigned)o.queue, SMQ_RECEIVER, 0, &q);
	if (err) {
		struct smq_queue_info qi;
		smq_queue_info(w, (unsigned)o.queue, &qi);
		smq_close(w);
		if (err == -EPERM)
			return error("queue %d is received by board %u, not board %u",
				     o.queue, qi.receiver, ctx->board);
		if (err == -EBUSY)
			return error("queue %d already has a receiver (pid %u)",
				     o.queue, qi.receiver_pid);
		return window_error(ctx, "recv", err);
	}
	buf = malloc(wi.geometry.entry_size ? wi.geometry.entry_size : 1);
	if (!buf) {
		smq_queue_close(q);
		smq_close(w);
		return error("out of memory");
	}
	uint32_t got = 0;
	int rc = 0;
	while (o.count == 0 || got < o.count) {
		size_t len;
		unsigned from;
		err = smq_receive(q, buf, wi.geometry.entry_size, &len, &from,
				  o.timeout_ms);
		if (err)
			break;
		print_message(ctx, &o, buf, len, from);
		got++;
	}
	if (err == -ETIMEDOUT || err == -EAGAIN) {
		if (o.count) {
			fprintf(stderr, "smqctl: no message on queue %d after ",
				o.queue);
			print_duration(stderr, o.timeout_ms);
			fprintf(stderr, " (received %u of %u)\n", got, o.count);
			rc = 1;
		}
	} else if (err) {
		rc = window_error(ctx, "recv", err);
	}
	free(buf);
	smq_queue_close(q);
	smq_close(w);
	return rc;
}

const struct cmd cmd_recv = { "recv", run, &argp, "receive messages" };
