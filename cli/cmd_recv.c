/* smqctl recv: receive messages and write them out, at least once: a
 * message is peeked, written, flushed, and only then taken from the queue,
 * so that a recv killed or failing to write leaves it for the next one. */
#include <errno.h>
#include <signal.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "smqctl.h"

/* A receive waits in slices this long at most, to see a signal: SIGINT,
 * SIGTERM and SIGHUP end recv with its queue closed, so that it is not
 * taken for a receiver that died. */
#define SLICE_MS 500
static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What recv takes from: one queue, or any queue of a group. */
struct source {
	struct smq_queue *q;
	struct smq_group *g;
	unsigned queue;         /* the queue of the message peeked */
};

static int peek_one(struct source *src, const void **data, size_t *len,
		    unsigned *from, int timeout_ms)
{
	if (src->g)
		return smq_group_peek(src->g, data, len, from, &src->queue,
				      timeout_ms);
	return smq_peek(src->q, data, len, from, timeout_ms);
}

/* smq_peek up to timeout_ms (SMQ_WAIT_FOREVER: no bound), in slices; a
 * stop signal makes it -EINTR. */
static int peek_sliced(struct source *q, const void **data, size_t *len,
		       unsigned *from, int timeout_ms)
{
	int64_t deadline = timeout_ms < 0 ? -1 : mono_ms() + timeout_ms;

	for (;;) {
		int slice = SLICE_MS;
		if (deadline >= 0) {
			int64_t left = deadline - mono_ms();
			slice = left < SLICE_MS ? (int)(left > 0 ? left : 0)
						: SLICE_MS;
		}
		if (stop_signal)
			return -EINTR;
		int err = peek_one(q, data, len, from, slice);
		if (err != -ETIMEDOUT && err != -EAGAIN)
			return err;
		if (deadline >= 0 && mono_ms() >= deadline)
			return timeout_ms == 0 ? -EAGAIN : -ETIMEDOUT;
	}
}

enum recv_format { TEXT, HEX, NUL_FRAMED, RAW };

struct recv_opts {
	int queue;
	const char *group;      /* --group NAME */
	int timeout_ms;
	uint32_t count;
	bool count_set;
	enum recv_format format;
	const char *format_opt;   /* the option that chose it */
};

enum { OPT_RAW = 0x100, OPT_GROUP };

static const struct argp_option options[] = {
	{ "queue", 'q', "Q", 0,
	  "Receive on queue Q (default: the first queue this board receives)", 0 },
	{ "group", OPT_GROUP, "NAME", 0,
	  "Receive on every queue of group NAME (smqctl init --group), the "
	  "queues taking turns; each message is written with its queue", 0 },
	{ "timeout", 'T', "TIME", 0,
	  "Wait up to TIME for each message (default inf)", 0 },
	{ "count", 'c', "N", 0,
	  "Receive N messages (default 1; 0: until the timeout)", 0 },
	{ "hex", 'x', NULL, 0,
	  "Print each message as a line of hex, with its sender and size", 0 },
	{ "null", '0', NULL, 0,
	  "Write each message as it is, followed by a NUL byte (for xargs -0, "
	  "read -d ''); a message holding a NUL stays queued", 0 },
	{ "raw", OPT_RAW, NULL, 0,
	  "Write the message as it is, nothing added (one message only)", 0 },
	{ 0 }
};

static void set_format(struct argp_state *st, struct recv_opts *o,
		       enum recv_format f, const char *opt)
{
	if (o->format_opt && o->format != f)
		argp_error(st, "%s and %s exclude each other", o->format_opt, opt);
	o->format = f;
	o->format_opt = opt;
}

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct recv_opts *o = st->input;

	switch (key) {
	case 'q':
		o->queue = (int)arg_u32(st, "--queue", arg, 0, SMQ_MAX_QUEUES - 1);
		break;
	case 'T':
		o->timeout_ms = arg_duration(st, "--timeout", arg);
		break;
	case OPT_GROUP:
		o->group = arg;
		break;
	case 'c':
		o->count = arg_u32(st, "--count", arg, 0, UINT32_MAX);
		o->count_set = true;
		break;
	case 'x':
		set_format(st, o, HEX, "--hex");
		break;
	case '0':
		set_format(st, o, NUL_FRAMED, "--null");
		break;
	case OPT_RAW:
		set_format(st, o, RAW, "--raw");
		break;
	case ARGP_KEY_END:
		if (o->group && o->queue >= 0)
			argp_error(st, "--queue and --group exclude each other");
		if (o->group && (o->format == NUL_FRAMED || o->format == RAW))
			argp_error(st, "%s writes messages as they are, with no "
				   "room for their queue: with --group use "
				   "text, --hex or --json", o->format_opt);
		if (o->count == 0 && o->timeout_ms < 0)
			argp_error(st, "--count 0 needs a --timeout to end");
		if (o->format == RAW && o->count != 1)
			argp_error(st, "--raw writes one message as it is, with "
				   "nothing to tell it from the next: for more, "
				   "use --null, --json or --hex");
		break;
	default:
		return no_operands(key, arg, st);
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"Receive messages on a queue this board (--board) receives, and write "
	"them to standard output: as text, a line each (a newline inside a "
	"message is written \\n, a backslash \\\\, bytes that are not text "
	"\\xNN); with --hex a line of hex each; with --null each as it is "
	"and a NUL; with --raw one message as it is; with --json an object "
	"each.  A message leaves the queue only once it is written: a recv "
	"that is killed may write one again, never lose one.", NULL, NULL, NULL
};

static int first_received_queue(struct smq_window *w, unsigned board)
{
	struct smq_window_info wi;

	smq_window_info(w, &wi, sizeof(wi));
	for (unsigned q = 0; q < wi.geometry.queues; q++) {
		struct smq_queue_info qi;
		if (!smq_queue_info(w, q, &qi, sizeof(qi)) && qi.receiver == board)
			return (int)q;
	}
	return -1;
}

/* Bytes of a UTF-8 sequence at p that a terminal shows as text (neither
 * malformed, overlong, a surrogate, nor a C1 control), or 0. */
static size_t utf8_text(const uint8_t *p, size_t n)
{
	size_t len;
	uint8_t lo = 0x80, hi = 0xbf;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2, lo = p[0] == 0xc2 ? 0xa0 : 0x80;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3, lo = p[0] == 0xe0 ? 0xa0 : 0x80,
		hi = p[0] == 0xed ? 0x9f : 0xbf;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4, lo = p[0] == 0xf0 ? 0x90 : 0x80,
		hi = p[0] == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

/* One line of text: the message, less a newline it ends with, with what
 * would break the line or drive the terminal escaped as in C (\n, \r, \\,
 * \xNN); tabs and UTF-8 text stay as they are. */
static void write_text(FILE *f, const uint8_t *p, size_t len)
{
	if (len && p[len - 1] == '\n')
		len--;
	for (size_t i = 0; i < len; i++) {
		uint8_t c = p[i];
		size_t k;
		if (c == '\\')
			fputs("\\\\", f);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\r')
			fputs("\\r", f);
		else if (c == '\t' || (c >= 0x20 && c < 0x7f))
			putc(c, f);
		else if (c >= 0x80 && (k = utf8_text(p + i, len - i))) {
			fwrite(p + i, 1, k, f);
			i += k - 1;
		} else
			fprintf(f, "\\x%02x", c);
	}
	putc('\n', f);
}

static void write_message(const struct ctx *ctx, const struct recv_opts *o,
			  const uint8_t *buf, size_t len, unsigned from,
			  unsigned queue)
{
	if (ctx->json) {
		struct json j;
		json_open_line(&j, stdout);
		json_begin(&j, NULL, '{');
		json_u64(&j, "queue", queue);
		json_u64(&j, "sender", from);
		json_u64(&j, "size", len);
		json_bytes(&j, "hex", buf, len);
		json_end(&j, '}');
		json_close(&j);
		return;
	}
	if (o->group)
		printf("queue %u: ", queue);
	switch (o->format) {
	case TEXT:
		write_text(stdout, buf, len);
		break;
	case HEX:
		printf("board %u, %zu bytes:", from, len);
		for (size_t i = 0; i < len; i++)
			printf(" %02x", buf[i]);
		putchar('\n');
		break;
	case NUL_FRAMED:
		fwrite(buf, 1, len, stdout);
		putchar(0);
		break;
	case RAW:
		fwrite(buf, 1, len, stdout);
		break;
	}
}

/* Writes messages from q until --count or --timeout; each is taken
 * from the queue only once it is written.  Returns the exit status. */
static int receive(struct ctx *ctx, const struct recv_opts *o,
		   struct source *q)
{
	uint32_t got = 0, refused = 0;
	int err = 0, rc = 0;

	while (o->count == 0 || got < o->count) {
		const void *data;
		size_t len;
		unsigned from;
		err = peek_sliced(q, &data, &len, &from, o->timeout_ms);
		if (!q->g)
			q->queue = (unsigned)o->queue;
		if (err == -SMQ_EPAYLOAD) {
			/* taken off already: said, and the next one comes */
			/* a size of 0 is a size past the entry's, not read */
			if (len)
				say_error("the message from board %u on queue %u "
					  "(%zu bytes) failed its checksum: "
					  "refused, not delivered", from,
					  q->queue, len);
			else
				say_error("the message from board %u on queue %u "
					  "is damaged (its size, or an empty "
					  "one's checksum): refused, not "
					  "delivered", from, q->queue);
			refused++;
			continue;
		}
		if (err)
			break;
		if (o->format == NUL_FRAMED && !ctx->json && memchr(data, 0, len)) {
			rc = say_error("the message from board %u on queue %u (%zu "
				   "bytes) holds a NUL byte, which --null cannot "
				   "frame: it stays queued (receive it with --json, "
				   "--hex or --raw)", from, q->queue, len);
			break;
		}
		/* written and flushed before it is taken: a recv killed here
		 * leaves it queued, and the next recv writes it (again) */
		write_message(ctx, o, data, len, from, q->queue);
		if (fflush(stdout) || ferror(stdout)) {
			int e = errno;
			/* said here, with what became of the message: nothing
			 * is left for main to report */
			__fpurge(stdout);
			clearerr(stdout);
			rc = say_error("cannot write to standard output: %s (the "
				   "message stays queued)", strerror(e));
			break;
		}
		if ((err = q->g ? smq_group_commit(q->g) : smq_commit(q->q))) {
			rc = window_error(ctx, "recv", err);
			break;
		}
		got++;
	}
	if (rc) {
		/* said above */
	} else if (err == -EINTR) {
		rc = 128 + stop_signal;  /* as if the signal had ended it */
	} else if (err == -ETIMEDOUT || err == -EAGAIN) {
		if (o->count) {
			if (o->group)
				fprintf(stderr, "smqctl: no message on group %s "
					"after ", o->group);
			else
				fprintf(stderr, "smqctl: no message on queue %d "
					"after ", o->queue);
			print_duration(stderr, o->timeout_ms);
			fprintf(stderr, " (received %u of %u)\n", got, o->count);
			rc = 1;
		}
	} else if (err) {
		rc = window_error(ctx, "recv", err);
	}
	/* a message lost to damage is a failure, whatever came after it */
	return rc ? rc : refused ? 1 : 0;
}

/* recv --group: every queue of the group, received by this board. */
static int open_group(struct ctx *ctx, struct smq_window *w,
		      const struct recv_opts *o, struct source *src)
{
	int err = smq_group_open(w, o->group, SMQ_RECEIVER, 0, &src->g);

	if (err == -ESRCH)
		return say_no_group(ctx, o->group);
	if (err == -EPERM)
		return say_error("group %s has queues that board %u does not "
				 "receive (smqctl dump shows each queue's "
				 "receiver)", o->group, ctx->board);
	if (err == -EBUSY)
		return say_error("a queue of group %s already has a receiver "
				 "(smqctl dump names it)", o->group);
	return err ? window_error(ctx, "recv", err) : 0;
}

static int open_queue(struct ctx *ctx, struct smq_window *w,
		      struct recv_opts *o, struct source *src)
{
	struct smq_window_info wi;
	int err;

	smq_window_info(w, &wi, sizeof(wi));
	if (o->queue < 0 && (o->queue = first_received_queue(w, ctx->board)) < 0)
		return say_error("board %u receives no queue of %s", ctx->board,
				 wi.name);
	if (check_queue(w, (unsigned)o->queue))
		return 1;
	err = smq_queue_open(w, (unsigned)o->queue, SMQ_RECEIVER, 0, &src->q);
	if (err) {
		struct smq_queue_info qi;
		smq_queue_info(w, (unsigned)o->queue, &qi, sizeof(qi));
		if (err == -EPERM)
			return say_error("queue %d is received by board %u, not "
					 "board %u", o->queue, qi.receiver,
					 ctx->board);
		if (err == -EBUSY)
			return say_error("queue %d already has a receiver (pid "
					 "%u)", o->queue, qi.receiver_pid);
		return window_error(ctx, "recv", err);
	}
	src->queue = (unsigned)o->queue;
	return 0;
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct recv_opts o = { -1, NULL, SMQ_WAIT_FOREVER, 1, false, TEXT,
			       NULL };
	struct source src = { NULL, NULL, 0 };
	struct smq_window *w;
	int rc;

	parse_cmd(&argp, argc, argv, &o, ctx);
	if (ctx->json && o.format_opt) {
		say_error("--json and %s exclude each other", o.format_opt);
		return EXIT_USAGE;
	}
	if (open_window(ctx, 0, &w))
		return 1;
	rc = o.group ? open_group(ctx, w, &o, &src) : open_queue(ctx, w, &o,
								  &src);
	if (rc) {
		smq_close(w);
		return rc;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	rc = receive(ctx, &o, &src);
	if (src.g)
		smq_group_close(src.g);
	else
		smq_queue_close(src.q);
	smq_close(w);
	return rc;
}

const struct cmd cmd_recv = { "recv", run, &argp, "receive messages" };
