/* smqctl dump: the window's superblock, boards and queues, and whether
 * the window is usable: it exits 1 whenever another command would refuse
 * the window, and says why. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "smqctl.h"

struct dump_opts {
	struct queue_opt q;     /* --queue; -1: every queue */
	int stall_ms;           /* --stall; 0: not given */
};

static const struct argp_option options[] = {
	STALL_OPTION("Watch each queue that holds messages for up to TIME and "
		     "mark it stalled if its bottom does not move meanwhile "
		     "(default: one look, no stall judged)"),
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct dump_opts *o = st->input;

	switch (key) {
	case ARGP_KEY_INIT:
		st->child_inputs[0] = &o->q;
		break;
	case OPT_STALL:
		o->stall_ms = arg_stall(st, arg);
		break;
	default:
		return no_operands(key, arg, st);
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"Show the window: superblock, boards (state, what their processes "
	"do, generation, heartbeat, how long since this command saw it move, "
	"doorbell) and queues (receiving board and its receiver: waiting, "
	"asleep, away, dead or none; the fullest lane, counters), the "
	"diagnostic queues apart.  A board or receiver of another host is "
	"judged by its heartbeat, watched for up to 5 s; a receiver stopped by "
	"a signal or a debugger is said to be; with --stall, a queue that "
	"holds messages is watched until its bottom moves or it is stalled.  "
	"With -v, every "
	"sending board's lane too, and who holds handles.  "
	"Exit 1, naming the field, its offset and what was expected, whenever "
	"the window is corrupted or another command would refuse it (an init "
	"or clear that did not finish).",
	queue_children, NULL, NULL
};

static void json_fault(struct json *j, int err, const struct smq_fault *f)
{
	if (!err) {
		json_null(j, "fault");
		return;
	}
	json_begin(j, "fault", '{');
	json_str(j, "error", smq_strerror(err));
	json_str(j, "field", f->field);
	json_u64(j, "offset", f->offset);
	json_u64(j, "value", f->value);
	json_u64(j, fault_kind_key(f->kind), f->limit);
	json_end(j, '}');
}

/* A window whose layout could not be read: what there is, and why. */
static void json_unusable(const struct smq_window_info *wi, int err,
			  const struct smq_fault *f)
{
	struct json j;

	json_open(&j, stdout);
	json_begin(&j, NULL, '{');
	json_str(&j, "window", wi->name);
	json_str(&j, "transport", wi->transport);
	json_u64(&j, "mapped_size", wi->mapped_size);
	json_fault(&j, err, f);
	json_end(&j, '}');
	json_close(&j);
}

static void json_lanes(struct json *j, struct smq_window *w, unsigned q,
		       unsigned boards)
{
	json_begin(j, "lanes", '[');
	for (unsigned s = 0; s < boards; s++) {
		struct smq_lane_info li;
		if (smq_lane_info(w, q, s, &li, sizeof(li)) == -ENOENT)
			continue;  /* not among the queue's senders */
		json_begin(j, NULL, '{');
		json_u64(j, "sender", s);
		json_u64(j, "top", li.top);
		json_u64(j, "bottom", li.bottom);
		json_u64(j, "fill", li.fill);
		json_u64(j, "messages", li.messages);
		json_u64(j, "bytes", li.bytes);
		json_u64(j, "full_waits", li.full_waits);
		json_u64(j, "full_refusals", li.full_refusals);
		json_u64(j, "doorbells", li.doorbells);
		json_u64(j, "lock_pid", li.lock_pid);
		json_bool(j, "sender_waiting", li.sender_waiting);
		json_end(j, '}');
	}
	json_end(j, ']');
}

static void json_queue(struct json *j, struct smq_window *w, unsigned q,
		       unsigned boards, int verbose)
{
	struct smq_queue_info qi;

	smq_queue_info(w, q, &qi, sizeof(qi));
	json_begin(j, NULL, '{');
	json_u64(j, "queue", q);
	json_bool(j, "diagnostic", qi.flags & SMQ_QUEUE_DIAGNOSTIC);
	json_u64(j, "receiver", qi.receiver);
	json_u64(j, "receiver_pid", qi.receiver_pid);
	json_str(j, "receiver_state", receiver_word(qi.receiver_state));
	json_str(j, "receiver_alive", qi.receiver_pid
		 ? alive_word(qi.receiver_alive) : "no");
	json_i64(j, "receiver_heartbeat_age_ms", qi.receiver_age_ms);
	json_u64(j, "receiver_beats", qi.receiver_beats);
	json_u64(j, "receiver_opens", qi.receiver_opens);
	json_u64(j, "receiver_takeovers", qi.receiver_takeovers);
	json_bool(j, "sleeping", qi.sleeping);
	json_i64(j, "receiver_stopped", qi.receiver_stopped);
	json_bool(j, "stalled", qi.stalled);
	json_i64(j, "stalled_ms", qi.stalled_ms);
	json_begin(j, "senders", '[');
	for (unsigned s = 0; s < boards; s++)
		if (qi.senders >> s & 1)
			json_u64(j, NULL, s);
	json_end(j, ']');
	json_u64(j, "epoch", qi.epoch);
	json_u64(j, "top", qi.top);
	json_u64(j, "bottom", qi.bottom);
	json_u64(j, "fill", qi.fill);
	json_u64(j, "capacity", qi.capacity);
	json_u64(j, "queued", qi.queued);
	json_u64(j, "sent", qi.sent);
	json_u64(j, "bytes_sent", qi.bytes_sent);
	json_u64(j, "received", qi.received);
	json_u64(j, "bytes_received", qi.bytes_received);
	json_u64(j, "full_waits", qi.full_waits);
	json_u64(j, "full_refusals", qi.full_refusals);
	json_u64(j, "corrupt", qi.corrupt);
	json_u64(j, "doorbells", qi.doorbells);
	json_u64(j, "sleeps", qi.sleeps);
	json_u64(j, "wakeups", qi.wakeups);
	if (verbose)
		json_lanes(j, w, q, boards);
	json_end(j, '}');
}

/* The window's format features, by name (an unknown bit by number). */
static void json_features(struct json *j, const struct smq_window_info *wi)
{
	char word[32];

	json_begin(j, "features", '[');
	for (unsigned i = 0; i < 64; i++) {
		uint32_t bits = i < 32 ? wi->features_incompat
				       : wi->features_compat;
		if (bits >> (i % 32) & 1)
			json_str(j, NULL, feature_word(i < 32, i % 32, word,
						       sizeof(word)));
	}
	json_end(j, ']');
}

/* The groups the window names (feature groups). */
static void json_groups(struct json *j, struct smq_window *w,
			const struct smq_window_info *wi)
{
	struct smq_group_info gi;

	json_begin(j, "groups", '[');
	for (unsigned i = 0; i < wi->groups; i++) {
		/* stale: an init or clear runs, and the table is the one the
		 * snapshot attached to, as the boards and queues are */
		int err = smq_group_info(w, i, &gi, sizeof(gi));
		if (err && err != -ESTALE)
			break;
		json_begin(j, NULL, '{');
		json_str(j, "name", gi.name);
		json_begin(j, "queues", '[');
		for (unsigned k = 0; k < gi.count; k++)
			json_u64(j, NULL, gi.queues[k]);
		json_end(j, ']');
		json_end(j, '}');
	}
	json_end(j, ']');
}

static void text_groups(struct smq_window *w, const struct smq_window_info *wi)
{
	struct smq_group_info gi;

	if (!wi->groups)
		return;
	printf("\ngroups:\n%-31s  %s\n", "GROUP", "QUEUES");
	for (unsigned i = 0; i < wi->groups; i++) {
		int err = smq_group_info(w, i, &gi, sizeof(gi));
		if (err && err != -ESTALE)
			break;
		printf("%-31s  ", gi.name);
		for (unsigned k = 0; k < gi.count; k++)
			printf("%s%u", k ? "," : "", gi.queues[k]);
		putchar('\n');
	}
}

static void json_dump(struct smq_window *w, const struct smq_window_info *wi,
		      const struct smq_board_info *bi, int only, int verbose,
		      int err, const struct smq_fault *f)
{
	unsigned nq = wi->geometry.queues + wi->diag_queues;
	struct json j;

	json_open(&j, stdout);
	json_begin(&j, NULL, '{');
	json_str(&j, "window", wi->name);
	json_str(&j, "transport", wi->transport);
	json_u64(&j, "version", wi->version);
	json_features(&j, wi);
	json_u64(&j, "generation", wi->generation);
	json_str(&j, "system_state", sys_state_word(wi->system_state));
	json_u64(&j, "maintenance_phase", wi->maint_phase);
	json_u64(&j, "maintenance_pid", wi->maint_pid);
	json_u64(&j, "format_time_ns", wi->format_time_ns);
	json_u64(&j, "boards", wi->geometry.boards);
	json_u64(&j, "queues", wi->geometry.queues);
	json_u64(&j, "diagnostic_queues", wi->diag_queues);
	json_u64(&j, "entries", wi->geometry.entries);
	json_u64(&j, "entry_size", wi->geometry.entry_size);
	json_u64(&j, "window_size", wi->window_size);
	json_u64(&j, "mapped_size", wi->mapped_size);
	json_u64(&j, "journal_slots", bi[0].journal_slots);
	json_u64(&j, "incarnation", wi->incarnation);
	json_str(&j, "notify", wi->notify);
	json_fault(&j, err, f);
	json_begin(&j, "board_table", '[');
	for (unsigned b = 0; b < wi->geometry.boards; b++) {
		json_begin(&j, NULL, '{');
		json_u64(&j, "board", b);
		json_str(&j, "state", board_state_word(bi[b].state));
		json_str(&j, "activity", activity_key(bi[b].activity));
		json_u64(&j, "generation", bi[b].generation);
		json_u64(&j, "pid", bi[b].pid);
		json_str(&j, "host", bi[b].host);
		json_bool(&j, "same_host", bi[b].same_host);
		json_u64(&j, "heartbeat", bi[b].heartbeat);
		json_i64(&j, "heartbeat_age_ms", bi[b].heartbeat_age_ms);
		json_str(&j, "alive", alive_word(bi[b].alive));
		json_u64(&j, "handles", bi[b].handles);
		json_u64(&j, "queue_handles", bi[b].queue_handles);
		json_u64(&j, "dead_handles", bi[b].dead_handles);
		json_u64(&j, "announcer_pid", bi[b].announcer_pid);
		json_u64(&j, "announces", bi[b].announces);
		json_u64(&j, "journal_written", bi[b].journal_head
			 ? bi[b].journal_head - 1 : 0);
		json_begin(&j, "doorbell", '{');
		json_str(&j, "kind", bell_kind_word(bi[b].doorbell.kind));
		json_u64(&j, "id", bi[b].doorbell.peer);
		json_end(&j, '}');
		json_end(&j, '}');
	}
	json_end(&j, ']');
	json_begin(&j, "queue_table", '[');
	for (unsigned q = 0; q < nq; q++)
		if (only < 0 || q == (unsigned)only)
			json_queue(&j, w, q, wi->geometry.boards, verbose);
	json_end(&j, ']');
	json_groups(&j, w, wi);
	json_end(&j, '}');
	json_close(&j);
}

static void text_boards(const struct smq_window_info *wi,
			const struct smq_board_info *bi)
{
	printf("%-5s  %-11s  %-8s  %7s  %8s  %-16s  %10s  %9s  %s\n", "BOARD",
	       "STATE", "ACTIVITY", "HANDLES", "PID", "HOST", "HEARTBEAT",
	       "MOVED", "DOORBELL");
	for (unsigned b = 0; b < wi->geometry.boards; b++) {
		char age[32] = "-", host[80], bell[32] = "-", handles[24] = "-";
		char pid[16] = "-", beat[24] = "-";
		if (bi[b].heartbeat_age_ms >= 0)
			snprintf(age, sizeof(age), "%.1fs ago",
				 (double)bi[b].heartbeat_age_ms / 1000);
		if (bi[b].doorbell.kind == SMQ_BELL_IVSHMEM)
			snprintf(bell, sizeof(bell), "ivshmem %u",
				 bi[b].doorbell.peer);
		else if (bi[b].doorbell.kind == SMQ_BELL_FUTEX)
			snprintf(bell, sizeof(bell), "futex");
		if (bi[b].handles || bi[b].dead_handles)
			snprintf(handles, sizeof(handles), bi[b].dead_handles
				 ? "%u+%u" : "%u", bi[b].handles,
				 bi[b].dead_handles);
		/* a board may be at work (receiving) without having announced
		 * itself: then it has a pid and a heartbeat but no state */
		if (bi[b].pid) {
			snprintf(pid, sizeof(pid), "%u", bi[b].pid);
			snprintf(beat, sizeof(beat), "%" PRIu64, bi[b].heartbeat);
		}
		printf("%-5u  %-11s  %-8s  %7s  %8s  %-16.16s  %10s  %9s  %s\n",
		       b, board_state_word(bi[b].state),
		       activity_word(bi[b].activity), handles, pid,
		       bi[b].pid ? text_safe(bi[b].host, host, sizeof(host))
				 : "-", beat, age, bell);
	}
}

/* The receiver in a word; asleep is a waiting one that sleeps. */
static const char *receiver_text(const struct smq_queue_info *qi)
{
	if (qi->receiver_state == SMQ_RECEIVER_WAITING && qi->sleeping)
		return "asleep";
	return receiver_word(qi->receiver_state);
}

/* "  stalled 1.2s, receiver stopped": what is wrong with a queue that no
 * column says, after its row */
static const char *stuck_text(const struct smq_queue_info *qi, char *buf,
			      size_t n)
{
	int len = 0;

	buf[0] = 0;
	if (qi->stalled)
		len = snprintf(buf, n, "  stalled %.1fs",
			       (double)qi->stalled_ms / 1000);
	if (qi->receiver_stopped > 0 && len >= 0 && (size_t)len < n)
		snprintf(buf + len, n - (size_t)len, "%sreceiver stopped",
			 len ? ", " : "  ");
	return buf;
}

static void text_queue(struct smq_window *w, unsigned q, unsigned boards,
		       int verbose)
{
	struct smq_queue_info qi;
	char fill[32], rcv[48], set[200];

	smq_queue_info(w, q, &qi, sizeof(qi));
	snprintf(fill, sizeof(fill), "%" PRIu64 "/%" PRIu64, qi.fill,
		 qi.capacity);
	snprintf(rcv, sizeof(rcv), "%u %s", qi.receiver, receiver_text(&qi));
	printf("%-5u  %-14s  %-11s  %8" PRIu64 "  %12" PRIu64 "  %12" PRIu64
	       "  %12" PRIu64 "  %10" PRIu64 "  %10" PRIu64 "%s\n", q, rcv,
	       fill, qi.queued, qi.sent, qi.received, qi.bytes_received,
	       qi.full_waits, qi.doorbells, stuck_text(&qi, set, sizeof(set)));
	if (qi.corrupt)
		printf("       %" PRIu64 " message%s failed %s checksum: "
		       "refused, not delivered\n", qi.corrupt,
		       qi.corrupt == 1 ? "" : "s",
		       qi.corrupt == 1 ? "its" : "their");
	if (!verbose)
		return;
	printf("       receiver pid %u (%s", qi.receiver_pid,
	       receiver_word(qi.receiver_state));
	if (qi.receiver_age_ms >= 0)
		printf(", heartbeat moved %.1fs ago",
		       (double)qi.receiver_age_ms / 1000);
	printf("), %" PRIu64 " opened, %" PRIu64 " taken over from a dead one; "
	       "top %" PRIu64 ", bottom %" PRIu64 " (sums over lanes), %" PRIu64
	       " sleeps, %" PRIu64 " wakeups; epoch %#" PRIx64 "\n",
	       qi.receiver_opens, qi.receiver_takeovers, qi.top, qi.bottom,
	       qi.sleeps, qi.wakeups, qi.epoch);
	printf("       senders: %s\n", board_set(qi.senders, boards, set,
					       sizeof(set)));
	for (unsigned s = 0; s < boards; s++) {
		struct smq_lane_info li;
		if (smq_lane_info(w, q, s, &li, sizeof(li)) == -ENOENT)
			continue;
		printf("       lane of board %u: fill %" PRIu64 "/%" PRIu64
		       ", top %" PRIu64 ", bottom %" PRIu64 ", %" PRIu64
		       " messages, %" PRIu64 " bytes, %" PRIu64 " full waits, %"
		       PRIu64 " refused full, %" PRIu64 " doorbells%s\n", s,
		       li.fill, qi.capacity, li.top, li.bottom, li.messages,
		       li.bytes, li.full_waits, li.full_refusals, li.doorbells,
		       li.sender_waiting ? ", sender waiting" : "");
	}
}

static void text_queues(struct smq_window *w, const struct smq_window_info *wi,
			int only, int verbose, bool diag)
{
	unsigned from = diag ? wi->geometry.queues : 0;
	unsigned to = diag ? wi->geometry.queues + wi->diag_queues
			   : wi->geometry.queues;
	bool header = false;

	for (unsigned q = from; q < to; q++) {
		if (only >= 0 && q != (unsigned)only)
			continue;
		if (!header) {
			printf("\n%s\n%-5s  %-14s  %-11s  %8s  %12s  %12s  %12s  "
			       "%10s  %10s\n", diag ? "diagnostic queues "
			       "(pingpong, bench):" : "queues:", "QUEUE",
			       "RECEIVER", "FILL", "QUEUED", "SENT", "RECEIVED",
			       "BYTES", "FULL-WAITS", "DOORBELLS");
			header = true;
		}
		text_queue(w, q, wi->geometry.boards, verbose);
	}
}

/* -v: every handle open, by whom, doing what. */
static void text_workers(struct smq_window *w)
{
	struct smq_worker wk[256];
	char host[80];
	int n = smq_workers(w, wk, 256, sizeof(wk[0]));

	if (n <= 0)
		return;
	printf("\nhandles open (processes not known to be dead):\n");
	for (int i = 0; i < n && i < 256; i++) {
		printf("  board %u pid %u on %s: ", wk[i].board, wk[i].pid,
		       wk[i].host[0] ? text_safe(wk[i].host, host, sizeof(host))
				     : "?");
		if (wk[i].role)
			printf("%s of queue %u", wk[i].role == SMQ_RECEIVER
			       ? "receiver" : "sender", wk[i].queue);
		else
			printf("window");
		printf("%s%s\n", wk[i].in_call ? ", in a call" : "",
		       wk[i].alive < 0 ? ", alive or not not known (another "
		       "host)" : "");
	}
	if (n > 256)
		printf("  and %d more\n", n - 256);
}

static void text_dump(struct smq_window *w, const struct smq_window_info *wi,
		      const struct smq_board_info *bi, int only, int verbose)
{
	char size[32], when[64] = "never";
	time_t t = (time_t)(wi->format_time_ns / 1000000000ull);
	struct tm tm;

	if (wi->format_time_ns && localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	char feats[128];
	printf("window %s: format v%u (features: %s), generation %" PRIu64
	       ", system %s, formatted %s\n", wi->name, wi->version,
	       features_text(wi->features_incompat, wi->features_compat, feats,
			     sizeof(feats)),
	       wi->generation, sys_state_word(wi->system_state), when);
	printf("geometry: %u boards, %u queues (and %u diagnostic), %u entries "
	       "of %u bytes per sending board; uses %s of %" PRIu64
	       " bytes mapped\n", wi->geometry.boards, wi->geometry.queues,
	       wi->diag_queues, wi->geometry.entries, wi->geometry.entry_size,
	       human_bytes(wi->window_size, size), wi->mapped_size);
	if (bi[0].journal_slots) {
		printf("journal: %u entries a board; written:",
		       bi[0].journal_slots);
		for (unsigned b = 0; b < wi->geometry.boards; b++)
			printf("%s board %u %" PRIu64, b ? "," : "", b,
			       bi[b].journal_head ? bi[b].journal_head - 1 : 0);
		printf(" (smqctl events --since all)\n");
	} else {
		printf("journal: none\n");
	}
	printf("this board's doorbell: %s\n\n", wi->notify);
	text_boards(wi, bi);
	if (verbose)
		text_workers(w);
	text_queues(w, wi, only, verbose, false);
	text_queues(w, wi, only, verbose, true);
	text_groups(w, wi);
	printf("\nACTIVITY: at rest (no process attached: normal once ready), "
	       "attached, at work (a queue open), dead (processes died "
	       "without closing), unknown (another host, not seen long "
	       "enough); HANDLES: open (+ left by the dead); RECEIVER: "
	       "waiting, asleep, away (not waiting for one), dead, none; after a "
	       "row, stalled (it held messages with its bottom unmoved for "
	       "--stall) and receiver stopped (a signal, a debugger); FILL: the "
	       "fullest lane, what a sender meets; QUEUED: messages waiting "
	       "in all lanes; MOVED: when this dump last saw the heartbeat "
	       "move\n");
}

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct dump_opts o = { { -1, "Show only queue Q" }, 0 };
	struct smq_board_info bi[SMQ_MAX_BOARDS];
	struct smq_window *w;
	struct smq_window_info wi;
	struct smq_fault f;

	parse_cmd(&argp, argc, argv, &o, ctx);
	/* raw: a window that fails its checks is shown as far as it can be,
	 * its fault in the JSON too; read-only: watching never writes, and
	 * claims none of the board's handle slots */
	int err = smq_open(window_spec(ctx), ctx->board,
			   SMQ_OPEN_RAW | SMQ_OPEN_READONLY, &w);
	if (err)
		return open_error(ctx, err);
	int ierr = smq_window_info(w, &wi, sizeof(wi));
	if (ierr == -EIDRM) {  /* removed since it was opened */
		smq_close(w);
		return window_error(ctx, "dump", ierr);
	}
	if (!ierr && ctx->board >= wi.geometry.boards) {
		smq_close(w);  /* a valid window without this board */
		return open_error(ctx, -EINVAL);
	}
	if (ierr && ierr != -ESTALE) {  /* unformatted, or a fault */
		err = smq_validate(w, &f, sizeof(f));
		smq_close(w);
		if (ctx->json)
			json_unusable(&wi, err, &f);
		return err == -SMQ_EUNFORMATTED ? window_error(ctx, "dump", err)
						  : fault_error(ctx, err, &f);
	}
	if (o.q.queue >= 0 && check_queue(w, (unsigned)o.q.queue)) {
		smq_close(w);
		return 1;
	}
	/* without --stall, no stall is judged: a look is an instant, and
	 * the watch of another host's boards is not a watch of queues */
	smq_set_timeout(w, SMQ_TIMEOUT_STALL,
			o.stall_ms ? o.stall_ms : SMQ_WAIT_FOREVER);
	/* the library judges another host by two looks, a queue by how
	 * long it holds: watched until it can, a bounded while */
	smq_watch(w, SMQ_WATCH_BOARDS | (o.stall_ms ? SMQ_WATCH_QUEUES : 0),
		  SMQ_WAIT_FOREVER);
	for (unsigned b = 0; b < wi.geometry.boards; b++)
		smq_board_info(w, b, &bi[b], sizeof(bi[b]));
	err = smq_validate(w, &f, sizeof(f));
	if (ctx->json)
		json_dump(w, &wi, bi, o.q.queue, ctx->verbose, err, &f);
	else
		text_dump(w, &wi, bi, o.q.queue, ctx->verbose);
	smq_close(w);
	return err ? fault_error(ctx, err, &f) : 0;
}

const struct cmd cmd_dump = { "dump", run, &argp,
			      "show the window, its boards and queues" };
