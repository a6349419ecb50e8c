/* smqctl send: one message from an argument, a file or stdin. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "smqctl.h"

struct send_opts {
	unsigned queue;
	bool queue_set;
	int timeout_ms;
	const char *file, *text;
	const char *group;      /* --group NAME */
};

enum { OPT_GROUP = 0x100 };

static const struct argp_option options[] = {
	{ "queue", 'q', "Q", 0, "Send on queue Q (default 0)", 0 },
	{ "group", OPT_GROUP, "NAME", 0,
	  "Send to every queue of group NAME (smqctl init --group); says which "
	  "queues took it and which stayed full", 0 },
	{ "timeout", 'T', "TIME", 0,
	  "Wait up to TIME for room in a full ring (default 1s; 0: not at all)", 0 },
	{ "file", 'f', "FILE", 0, "Send the contents of FILE ('-': stdin)", 0 },
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct send_opts *o = st->input;

	switch (key) {
	case 'q':
		o->queue = arg_u32(st, "--queue", arg, 0, SMQ_MAX_QUEUES - 1);
		o->queue_set = true;
		break;
	case OPT_GROUP:
		o->group = arg;
		break;
	case ARGP_KEY_END:
		if (o->group && o->queue_set)
			argp_error(st, "--queue and --group exclude each other");
		break;
	case 'T':
		o->timeout_ms = arg_duration(st, "--timeout", arg);
		break;
	case 'f':
		o->file = arg;
		break;
	case ARGP_KEY_ARG:
		if (o->text || o->file)
			argp_error(st, "one message at a time: unexpected '%s'", arg);
		o->text = arg;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = {
	options, parse, "[MESSAGE]",
	"Send one message on a queue as this board (--board).  The message is "
	"MESSAGE, the contents of --file, or standard input when neither is "
	"given or MESSAGE is '-'.", NULL, NULL, NULL
};

/* Reads at most limit+1 bytes so that a message one byte too large is
 * told apart from one that fits. */
static int read_all(FILE *f, size_t limit, char **buf, size_t *len)
{
	size_t cap = limit + 1, n = 0;
	char *p = malloc(cap ? cap : 1);

	if (!p)
		return -ENOMEM;
	errno = 0;
	while (n < cap) {
		size_t got = fread(p + n, 1, cap - n, f);
		if (!got)
			break;
		n += got;
	}
	if (ferror(f)) {
		int e = errno ? errno : EIO;  /* read(2)'s: EISDIR, ... */
		free(p);
		return -e;
	}
	*buf = p;
	*len = n;
	return 0;
}

/* What a sender meeting a full queue should know of its receiver. */
static const char *receiver_says(const struct smq_queue_info *qi)
{
	static char buf[96];

	switch (qi->receiver_state) {
	case SMQ_RECEIVER_NONE:
		return "no receiver has it open";
	case SMQ_RECEIVER_DEAD:
		snprintf(buf, sizeof(buf), "its receiver, pid %u, died with it "
			 "open", qi->receiver_pid);
		return buf;
	case SMQ_RECEIVER_AWAY:
		snprintf(buf, sizeof(buf), "its receiver, pid %u, is not taking "
			 "messages: not waiting for one", qi->receiver_pid);
		return buf;
	case SMQ_RECEIVER_WAITING:
		return "its receiver is taking messages more slowly than they "
		       "come";
	default:
		return "is its receiver running?";
	}
}

/* "0, 1 and 3": the queues of the members in mask. */
static const char *members_words(struct smq_group *g, uint64_t mask,
				 char *buf, size_t n)
{
	size_t at = 0;
	unsigned count = (unsigned)__builtin_popcountll(mask), i = 0;

	buf[0] = 0;
	for (unsigned m = 0; m < 64 && at < n; m++) {
		if (!(mask >> m & 1))
			continue;
		i++;
		at += (size_t)snprintf(buf + at, n - at, "%s%d",
				       i == 1 ? "" : i == count ? " and " : ", ",
				       smq_group_member(g, m));
	}
	return buf;
}

/* send --group: one message to every queue of the group. */
static int send_group(struct ctx *ctx, struct smq_window *w,
		      const struct send_opts *o, const void *data, size_t len)
{
	struct smq_group *g;
	uint64_t pending = SMQ_GROUP_ALL;
	char took[512], left[512];
	int err = smq_group_open(w, o->group, SMQ_SENDER, 0, &g);

	if (err == -ESRCH)
		return say_no_group(ctx, o->group);
	if (err == -SMQ_ENOTSENDER)
		return say_error("send: board %u is not among the senders of "
				 "every queue of group %s (smqctl dump shows "
				 "each queue's senders)", ctx->board, o->group);
	if (err)
		return window_error(ctx, "send", err);
	int n = 0;
	while (smq_group_member(g, (unsigned)n) >= 0)
		n++;
	uint64_t all = n == 64 ? ~0ull : (1ull << n) - 1;
	err = smq_group_send(g, data, len, &pending, o->timeout_ms);
	members_words(g, all & ~pending, took, sizeof(took));
	members_words(g, pending, left, sizeof(left));
	smq_group_close(g);
	if (err == -EAGAIN || err == -ETIMEDOUT) {
		fprintf(stderr, "smqctl: group %s: queue%s %s stayed full: no "
			"room after ", o->group,
			__builtin_popcountll(pending) > 1 ? "s" : "", left);
		print_duration(stderr, o->timeout_ms);
		fprintf(stderr, "; %s%s took it (send again to the full ones: "
			"smqctl send --queue Q)\n", *took ? "queues " : "",
			*took ? took : "none");
		return 1;
	}
	if (err)
		return window_error(ctx, "send", err);
	if (ctx->verbose)
		fprintf(stderr, "smqctl: sent %zu bytes to group %s (queues %s) "
			"as board %u\n", len, o->group, took, ctx->board);
	return 0;
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct send_opts o = { 0, false, 1000, NULL, NULL, NULL };
	struct smq_window *w;
	struct smq_window_info wi;
	struct smq_queue *q;
	char *data = NULL;
	size_t len = 0;
	int err;

	parse_cmd(&argp, argc, argv, &o, ctx);
	if (open_window(ctx, 0, &w))
		return 1;
	if (!o.group && check_queue(w, o.queue)) {
		smq_close(w);
		return 1;
	}
	smq_window_info(w, &wi, sizeof(wi));
	if (o.text && strcmp(o.text, "-")) {
		len = strlen(o.text);
		data = strdup(o.text);
		err = data ? 0 : -ENOMEM;
	} else {
		const char *path = o.file && strcmp(o.file, "-") ? o.file : NULL;
		FILE *f = path ? fopen(path, "rb") : stdin;
		if (!f) {
			int e = errno;
			smq_close(w);
			return say_error("cannot read %s: %s", path, strerror(e));
		}
		err = read_all(f, wi.geometry.entry_size, &data, &len);
		if (path)
			fclose(f);
	}
	if (err) {
		smq_close(w);
		return say_error("cannot read the message%s%s: %s",
				 o.file && strcmp(o.file, "-") ? " from " : "",
				 o.file && strcmp(o.file, "-") ? o.file : "",
				 strerror(-err));
	}
	if (len > wi.geometry.entry_size) {
		free(data);
		smq_close(w);
		return say_error("message of %s%zu bytes is larger than the entry size "
			     "%u of %s", o.text ? "" : "at least ", len,
			     wi.geometry.entry_size, wi.name);
	}
	if (o.group) {
		int rc = send_group(ctx, w, &o, data, len);
		free(data);
		smq_close(w);
		return rc;
	}
	err = smq_queue_open(w, o.queue, SMQ_SENDER, 0, &q);
	if (!err) {
		err = smq_send(q, data, len, o.timeout_ms);
		smq_queue_close(q);
	}
	free(data);
	struct smq_queue_info qi;
	memset(&qi, 0, sizeof(qi));
	if (err)
		smq_queue_info(w, o.queue, &qi, sizeof(qi));
	smq_close(w);
	if (err == -EAGAIN || err == -ETIMEDOUT) {
		fprintf(stderr, "smqctl: queue %u is full: no room after ",
			o.queue);
		print_duration(stderr, o.timeout_ms);
		fprintf(stderr, " (%s)\n", receiver_says(&qi));
		return 1;
	}
	if (err == -SMQ_ENOTSENDER) {
		char set[200];
		return say_error("send: board %u is not among the senders of queue "
			     "%u (%s): only they have a lane in it (smqctl init "
			     "--senders)", ctx->board, o.queue,
			     board_set(qi.senders, wi.geometry.boards, set,
				       sizeof(set)));
	}
	if (err)
		return window_error(ctx, "send", err);
	if (ctx->verbose)
		fprintf(stderr, "smqctl: sent %zu bytes on queue %u as board %u\n",
			len, o.queue, ctx->board);
	return 0;
}

const struct cmd cmd_send = { "send", run, &argp, "send a message" };
