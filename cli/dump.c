/* smqctl dump: the window's superblock, boards and queues. */
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include "smqctl.h"

struct dump_opts {
	int queue;
};

static const struct argp_option options[] = {
	{ "queue", 'q', "Q", 0, "Show only queue Q", 0 },
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct dump_opts *o = st->input;

	switch (key) {
	case 'q':
		o->queue = (int)arg_u32(st, "--queue", arg, 0, SMQ_MAX_QUEUES - 1);
		break;
	case ARGP_KEY_ARG:
		argp_error(st, "unexpected argument '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"Show the window: superblock, boards (state, generation, heartbeat "
	"age) and queues (receiving board, top, bottom, fill, counters, "
	"sleeping).  With -v, every sending board's lane too.  On a corrupted "
	"window, name the field that is wrong and its offset, and exit 1.",
	NULL, NULL, NULL
};

static const char *const sys_states[] = { "formatting", "formatted", "ready" };
static const char *const board_states[] = { "absent", "initialized", "ready" };

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Heartbeat age in ms; -1 if never. */
static int64_t age_ms(uint64_t then_ns, uint64_t now_ns)
{
	if (!then_ns)
		return -1;
	return then_ns > now_ns ? 0 : (int64_t)((now_ns - then_ns) / 1000000);
}

static void json_dump(struct smq_window *w, const struct smq_window_info *wi,
		      int only, int verbose)
{
	uint64_t now = realtime_ns();
	struct json j;

	json_open(&j, stdout);
	json_begin(&j, NULL, '{');
	json_str(&j, "window", wi->name);
	json_str(&j, "transport", wi->transport);
	json_u64(&j, "version", wi->version);
	json_u64(&j, "generation", wi->generation);
	json_str(&j, "system_state", wi->system_state <= 2
		 ? sys_states[wi->system_state] : "?");
	json_u64(&j, "format_time_ns", wi->format_time_ns);
	json_u64(&j, "boards", wi->geometry.boards);
	json_u64(&j, "queues", wi->geometry.queues);
	json_u64(&j, "entries", wi->geometry.entries);
	json_u64(&j, "entry_size", wi->geometry.entry_size);
	json_u64(&j, "window_size", wi->window_size);
	json_u64(&j, "mapped_size", wi->mapped_size);
	json_str(&j, "notify", wi->notify);
	json_begin(&j, "board_table", '[');
	for (unsigned b = 0; b < wi->geometry.boards; b++) {
		struct smq_board_info bi;
		smq_board_info(w, b, &bi);
		json_begin(&j, NULL, '{');
		json_u64(&j, "board", b);
		json_str(&j, "state", bi.state <= 2 ? board_states[bi.state] : "?");
		json_u64(&j, "generation", bi.generation);
		json_u64(&j, "pid", bi.pid);
		json_str(&j, "host", bi.host);
		json_i64(&j, "heartbeat_age_ms", age_ms(bi.heartbeat_ns, now));
		json_u64(&j, "heartbeats", bi.heartbeat_count);
		json_bool(&j, "alive", bi.alive);
		json_end(&j, '}');
	}
	json_end(&j, ']');
	json_begin(&j, "queue_table", '[');
	for (unsigned q = 0; q < wi->geometry.queues; q++) {
		struct smq_queue_info qi;
		if (only >= 0 && q != (unsigned)only)
			continue;
		smq_queue_info(w, q, &qi);
		json_begin(&j, NULL, '{');
		json_u64(&j, "queue", q);
		json_u64(&j, "receiver", qi.receiver);
		json_u64(&j, "receiver_pid", qi.receiver_pid);
		json_bool(&j, "sleeping", qi.sleeping);
		json_u64(&j, "top", qi.top);
		json_u64(&j, "bottom", qi.bottom);
		json_u64(&j, "fill", qi.fill);
		json_u64(&j, "capacity", qi.capacity);
		json_u64(&j, "sent", qi.sent);
		json_u64(&j, "bytes_sent", qi.bytes_sent);
		json_u64(&j, "received", qi.received);
		json_u64(&j, "bytes_received", qi.bytes_received);
		json_u64(&j, "full_waits", qi.full_waits);
		json_u64(&j, "doorbells", qi.doorbells);
		json_u64(&j, "sleeps", qi.sleeps);
		json_u64(&j, "wakeups", qi.wakeups);
		if (verbose) {
			json_begin(&j, "lanes", '[');
			for (unsigned s = 0; s < wi->geometry.boards; s++) {
				struct smq_lane_info li;
				smq_lane_info(w, q, s, &li);
				json_begin(&j, NULL, '{');
				json_u64(&j, "sender", s);
				json_u64(&j, "top", li.top);
				json_u64(&j, "bottom", li.bottom);
				json_u64(&j, "messages", li.messages);
				json_u64(&j, "bytes", li.bytes);
				json_u64(&j, "full_waits", li.full_waits);
				json_u64(&j, "doorbells", li.doorbells);
				json_bool(&j, "sender_waiting", li.sender_waiting);
				json_end(&j, '}');
			}
			json_end(&j, ']');
		}
		json_end(&j, '}');
	}
	json_end(&j, ']');
	json_end(&j, '}');
	json_close(&j);
}

static void text_dump(struct smq_window *w, const struct smq_window_info *wi,
		      int only, int verbose)
{
	uint64_t now = realtime_ns();
	char size[32], when[64] = "never";
	time_t t = (time_t)(wi->format_time_ns / 1000000000ull);
	struct tm tm;

	if (wi->format_time_ns && localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	printf("window %s: format v%u, generation %" PRIu64 ", system %s, "
	       "formatted %s\n", wi->name, wi->version, wi->generation,
	       wi->system_state <= 2 ? sys_states[wi->system_state] : "?", when);
	printf("geometry: %u boards, %u queues, %u entries of %u bytes; "
	       "uses %s of %" PRIu64 " bytes mapped\n", wi->geometry.boards,
	       wi->geometry.queues, wi->geometry.entries,
	       wi->geometry.entry_size, human_bytes(wi->window_size, size),
	       wi->mapped_size);
	printf("notification: %s\n\n", wi->notify);

	printf("%-5s  %-11s  %10s  %8s  %-16s  %10s  %s\n", "BOARD", "STATE",
	       "GENERATION", "PID", "HOST", "HEARTBEAT", "ALIVE");
	for (unsigned b = 0; b < wi->geometry.boards; b++) {
		struct smq_board_info bi;
		char age[32] = "-";
		smq_board_info(w, b, &bi);
		int64_t ms = age_ms(bi.heartbeat_ns, now);
		if (ms >= 0)
			snprintf(age, sizeof(age), "%.1fs ago", (double)ms / 1000);
		char gen[24] = "-";
		if (bi.state != SMQ_BOARD_ABSENT)
			snprintf(gen, sizeof(gen), "%" PRIu64, bi.generation);
		/* a board may be at work (receiving) without having announced
		 * itself: then it has a pid and a heartbeat but no state */
		if (!bi.pid)
			printf("%-5u  %-11s  %10s  %8s  %-16s  %10s  %s\n", b,
			       bi.state <= 2 ? board_states[bi.state] : "?", gen,
			       "-", "-", "-", "-");
		else
			printf("%-5u  %-11s  %10s  %8u  %-16.16s  %10s  %s\n", b,
			       bi.state <= 2 ? board_states[bi.state] : "?", gen,
			       bi.pid, bi.host, age, bi.alive ? "yes" : "no");
	}
	printf("\n%-5s  %-8s  %-15s  %12s  %12s  %12s  %10s  %10s  %7s\n",
	       "QUEUE", "RECEIVER", "FILL", "SENT", "RECEIVED", "BYTES",
	       "FULL-WAITS", "DOORBELLS", "SLEEPING");
	for (unsigned q = 0; q < wi->geometry.queues; q++) {
		struct smq_queue_info qi;
		char fill[32], rcv[32];
		if (only >= 0 && q != (unsigned)only)
			continue;
		smq_queue_info(w, q, &qi);
		snprintf(fill, sizeof(fill), "%" PRIu64 "/%" PRIu64, qi.fill,
			 qi.capacity);
		if (qi.receiver_pid)
			snprintf(rcv, sizeof(rcv), "%u", qi.receiver);
		else
			snprintf(rcv, sizeof(rcv), "%u (-)", qi.receiver);
		printf("%-5u  %-8s  %-15s  %12" PRIu64 "  %12" PRIu64 "  %12" PRIu64
		       "  %10" PRIu64 "  %10" PRIu64 "  %7s\n", q, rcv, fill,
		       qi.sent, qi.received, qi.bytes_received, qi.full_waits,
		       qi.doorbells, qi.sleeping ? "yes" : "no");
		if (!verbose)
			continue;
		printf("       receiver pid %u, top %" PRIu64 ", bottom %" PRIu64
		       ", %" PRIu64 " sleeps, %" PRIu64 " wakeups\n",
		       qi.receiver_pid, qi.top, qi.bottom, qi.sleeps, qi.wakeups);
		for (unsigned s = 0; s < wi->geometry.boards; s++) {
			struct smq_lane_info li;
			smq_lane_info(w, q, s, &li);
			printf("       lane of board %u: top %" PRIu64 ", bottom %"
			       PRIu64 ", %" PRIu64 " messages, %" PRIu64
			       " bytes, %" PRIu64 " full waits, %" PRIu64
			       " doorbells%s\n", s, li.top, li.bottom, li.messages,
			       li.bytes, li.full_waits, li.doorbells,
			       li.sender_waiting ? ", sender waiting" : "");
		}
	}
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct dump_opts o = { -1 };
	struct smq_window *w;
	struct smq_window_info wi;
	struct smq_fault f;

	parse_cmd(&argp, argc, argv, &o, ctx);
	if (open_window(ctx, 0, &w))
		return 1;
	if (o.queue >= 0 && check_queue(w, (unsigned)o.queue)) {
		smq_close(w);
		return 1;
	}
	smq_window_info(w, &wi);
	if (ctx->json)
		json_dump(w, &wi, o.queue, ctx->verbose);
	else
		text_dump(w, &wi, o.queue, ctx->verbose);
	/* Entries and sequence numbers: a fault here is reported after what
	 * could be shown. */
	int err = smq_validate(w, &f);
	smq_close(w);
	if (err)
		return error("window %s: %s: field %s at offset %#" PRIx64
			     " holds %" PRIu64 " (bound %" PRIu64 ")",
			     window_spec(ctx), smq_strerror(err), f.field,
			     f.offset, f.value, f.limit);
	return 0;
}

const struct cmd cmd_dump = { "dump", run, &argp,
			      "show the window, its boards and queues" };
