/* smqctl internals: the command table and what every command shares (the
 * common options and a command's parse are common/common.h's, included
 * here). */
#ifndef SMQCTL_H
#define SMQCTL_H

#include <argp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "smq.h"
#include "common/common.h"

#define EXIT_USAGE 2

struct cmd {
	const char *name;
	int (*run)(int argc, char **argv, struct ctx *ctx);
	const struct argp *argp;  /* its options, for --list-opts */
	const char *summary;
};

extern const struct cmd *const smqctl_cmds[];

/* Messages: "smqctl: ..." on stderr.  say_error() returns 1 (failure). */
int say_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* -ESRCH from smq_group_open(): the window has no group of that name */
int say_no_group(const struct ctx *ctx, const char *name);
void say_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Strict numbers and durations for option parsing; on a bad value they
 * report through argp (exit 2) naming the option. */
uint32_t arg_u32(struct argp_state *st, const char *opt, const char *arg,
		 uint32_t min, uint32_t max);
/* The same checks for values that come from elsewhere (a description
 * file): false with why saying what is wrong, naming opt. */
bool value_u32(const char *opt, const char *arg, uint32_t min, uint32_t max,
	       uint32_t *out, char *why, size_t n);
bool value_size(const char *opt, const char *arg, uint64_t min, uint64_t max,
		uint64_t *out, char *why, size_t n);
/* "1.5", "30s", "200ms", "2m", "inf": milliseconds, or SMQ_WAIT_FOREVER */
int arg_duration(struct argp_state *st, const char *opt, const char *arg);
/* --stall TIME, of the commands that judge whether a queue is stalled
 * (smq_set_timeout(SMQ_TIMEOUT_STALL)): milliseconds, more than 0, or
 * SMQ_WAIT_FOREVER (never stalled) */
int arg_stall(struct argp_state *st, const char *arg);
#define OPT_STALL 0x2f0
#define STALL_OPTION(doc) { "stall", OPT_STALL, "TIME", 0, doc, 0 }
/* --mode OCTAL (init, server, broker): 1 to 4 octal digits after any
 * leading zeros, from 1 to 07777 (no sign, no space, not 0: bits nobody
 * can use) */
unsigned arg_mode(struct argp_state *st, const char *arg);
/* arg_size.c, the one size parser: a number of bytes with an optional
 * binary suffix K, M or G (KiB, MiB, GiB too), from min to max; anything
 * else is a usage error through argp that names the option. */
uint64_t arg_size(struct argp_state *st, const char *opt, const char *arg,
		  uint64_t min, uint64_t max);
/* "0,10,100,4K,1M" into out, each at most the largest entry; returns how
 * many. */
#define MAX_SIZES 64
int arg_sizes(struct argp_state *st, const char *opt, const char *arg,
	      size_t *out, int max);
/* n as the parser takes it back: "65536" is "64K", "1000" stays. */
const char *size_words(uint64_t n, char buf[32]);
void print_duration(FILE *f, int ms);

/* Opens the window for ctx->board and explains any failure. */
int open_window(struct ctx *ctx, unsigned flags, struct smq_window **w);
/* Explains why smq_open failed with err; always returns 1. */
int open_error(struct ctx *ctx, int err);
/* Explains err from an operation on the window named spec. */
int window_error(struct ctx *ctx, const char *what, int err);
int check_queue(struct smq_window *w, unsigned queue);
/* A valid window without the board ctx names: said, 1 (a window that
 * cannot be read is left to the caller); else 0. */
int check_board(struct ctx *ctx, struct smq_window *w);
/* common/bus.c: fn(arg) with SIGBUS (a window truncated or a device gone
 * under the mapping) made its error, -SMQ_ETOOSMALL; bus_catch() from a
 * SIGBUS handler jumps back there while a guarded call runs. */
int bus_guarded(int (*fn)(void *), void *arg);
void bus_catch(void);
const char *human_bytes(uint64_t n, char buf[32]);
/* s with control characters and bytes over 0x7e shown as \xNN: text a
 * window holds (host names) never drives the terminal. */
const char *text_safe(const char *s, char *buf, size_t n);
/* A window's first bytes as found (smq_window_info), printable. */
struct smq_window_info;
const char *first_bytes_text(const struct smq_window_info *wi, char *buf,
			     size_t n);
/* The length of the UTF-8 sequence at s (1 to 4), or 0 if it is not one:
 * JSON and Prometheus text must be UTF-8, a window holds any bytes. */
size_t utf8_len(const unsigned char *s);
/* words.c: the names of the library's states and judgements, the same in
 * every command */
const char *sys_state_word(unsigned s);
const char *board_state_word(unsigned s);
const char *bell_kind_word(unsigned k);
const char *alive_word(int alive);
const char *feature_word(bool incompat, unsigned bit, char *buf, size_t n);
const char *features_text(uint32_t incompat, uint32_t compat, char *buf,
			  size_t n);
const char *activity_word(int activity);   /* "at rest", "at work"... */
const char *activity_key(int activity);    /* one word: "none", "working" */
const char *receiver_word(int state);      /* "waiting", "dead"... */
const char *board_condition(const struct smq_board_info *bi, char *buf,
			    size_t n);
const char *board_set(uint64_t mask, unsigned boards, char *buf, size_t n);
const char *fault_kind_key(int kind);      /* "at_most"... */
const char *fault_kind_words(int kind);    /* "at most"... */

/* Explains why init or clear on w (of queue, or every queue: -1) failed
 * with err: processes at work there, a board that held on, another
 * maintenance, or window_error()'s words; returns 1. */
int maint_error(struct ctx *ctx, struct smq_window *w, const char *what,
		int queue, int err, int timeout_ms);
/* The library judges liveness on another host by two looks this far
 * apart: a command that must know waits this long once. */
#define LIVENESS_LOOK_MS (SMQ_HEARTBEAT_TIMEOUT_MS + 100)
/* Explains a fault smq_validate() found in the window; returns 1. */
int fault_error(struct ctx *ctx, int err, const struct smq_fault *f);

/* --queue Q, shared by clear and dump: a child parser whose input is a
 * struct queue_opt; the command's parser passes it on ARGP_KEY_INIT.
 * queue_children is the children of such a command: queue_argp alone. */
struct queue_opt {
	int queue;              /* -1: not given */
	const char *doc;        /* what --help says of --queue */
};
extern const struct argp queue_argp;
extern const struct argp_child queue_children[];

/* A small JSON writer: objects and arrays nest, commas are managed. */
struct json {
	FILE *f;
	int depth;
	bool first[16];
	bool line;              /* all on one line (JSON lines) */
};
void json_open(struct json *j, FILE *f);
void json_open_line(struct json *j, FILE *f);
void json_begin(struct json *j, const char *key, char brace);
void json_end(struct json *j, char brace);
void json_str(struct json *j, const char *key, const char *val);
/* s as a JSON string on f, quoted and escaped; a byte that is not UTF-8
 * becomes U+FFFD */
void json_quote(FILE *f, const char *s);
void json_u64(struct json *j, const char *key, uint64_t val);
void json_i64(struct json *j, const char *key, int64_t val);
void json_bool(struct json *j, const char *key, bool val);
void json_null(struct json *j, const char *key);
void json_bytes(struct json *j, const char *key, const void *buf, size_t len);
/* common/emptied.c: what init or clear emptied (smq_emptied()): "260
 * messages in 3 queues: queue 3: 256, ..." and the JSON key "emptied" */
const char *emptied_text(const struct smq_emptied *e, char *buf, size_t n);
void json_emptied(struct json *j, const struct smq_emptied *e);
/* A number with decimals; not finite prints null. */
void json_double(struct json *j, const char *key, double val, int decimals);
void json_close(struct json *j);

extern const struct cmd cmd_init, cmd_clear, cmd_sync, cmd_dump, cmd_send,
	cmd_recv, cmd_pingpong, cmd_bench, cmd_top, cmd_probe, cmd_model;
extern const struct cmd cmd_server;
extern const struct cmd cmd_broker;
/* notify.c: tells systemd (NOTIFY_SOCKET) READY=1; no-op without it. */
void notify_ready(void);
extern const struct cmd cmd_metrics;
extern const struct cmd cmd_events;
extern const struct cmd cmd_check;

#endif
