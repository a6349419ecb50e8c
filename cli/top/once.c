/* smqctl top --once: one frame, as text or JSON, with rates over one
 * interval. */
#include <stdio.h>
#include "top.h"

/* ---- --once ---- */

/* The JSON writer has no floating point: a rate is written as its integer
 * part, and the fraction appended to the same number. */
static void json_rate(struct json *j, const char *key, double r)
{
	json_double(j, key, r > 0 ? r : 0, 3);
}

static void once_json(const struct viewer *v, double secs)
{
	const struct snap *s = v->cur;
	const struct smq_window_info *wi = &s->wi;
	struct json j;

	json_open(&j, stdout);
	json_begin(&j, NULL, '{');
	json_str(&j, "window", wi->name);
	json_str(&j, "transport", wi->transport);
	json_u64(&j, "generation", wi->generation);
	json_str(&j, "system_state", sys_state_word(wi->system_state));
	json_u64(&j, "boards", wi->geometry.boards);
	json_u64(&j, "queues", wi->geometry.queues);
	json_u64(&j, "entries", wi->geometry.entries);
	json_u64(&j, "entry_size", wi->geometry.entry_size);
	json_u64(&j, "time_ns", s->real_ns);
	json_u64(&j, "interval_ms", (uint64_t)v->interval_ms);
	json_rate(&j, "elapsed_s", secs);
	json_begin(&j, "board_table", '[');
	for (unsigned b = 0; b < s->nboards; b++) {
		const struct smq_board_info *bi = &s->boards[b];
		json_begin(&j, NULL, '{');
		json_u64(&j, "board", b);
		json_str(&j, "state", board_state_word(bi->state));
		json_str(&j, "activity", activity_key(bi->activity));
		json_u64(&j, "pid", bi->pid);
		json_str(&j, "host", bi->host);
		json_u64(&j, "heartbeat", bi->heartbeat);
		json_i64(&j, "heartbeat_age_ms", bi->heartbeat_age_ms);
		json_str(&j, "alive", alive_word(bi->alive));
		json_end(&j, '}');
	}
	json_end(&j, ']');
	json_begin(&j, "queue_table", '[');
	for (unsigned q = 0; q < s->nqueues; q++) {
		const struct smq_queue_info *qi = &s->queues[q];
		const struct rate *r = &v->rates[q];
		json_begin(&j, NULL, '{');
		json_u64(&j, "queue", q);
		json_bool(&j, "diagnostic", qi->flags & SMQ_QUEUE_DIAGNOSTIC);
		json_u64(&j, "receiver", qi->receiver);
		json_u64(&j, "receiver_pid", qi->receiver_pid);
		json_str(&j, "receiver_state",
			 receiver_word(qi->receiver_state));
		json_bool(&j, "sleeping", qi->sleeping);
		json_begin(&j, "senders", '[');
		for (unsigned b = 0; b < s->wi.geometry.boards; b++)
			if (qi->senders >> b & 1)
				json_u64(&j, NULL, b);
		json_end(&j, ']');
		json_u64(&j, "fill", qi->fill);
		json_u64(&j, "capacity", qi->capacity);
		json_u64(&j, "sent", qi->sent);
		json_u64(&j, "bytes_sent", qi->bytes_sent);
		json_u64(&j, "received", qi->received);
		json_u64(&j, "bytes_received", qi->bytes_received);
		json_u64(&j, "full_waits", qi->full_waits);
		json_u64(&j, "full_refusals", qi->full_refusals);
		json_u64(&j, "corrupt", qi->corrupt);
		json_u64(&j, "doorbells", qi->doorbells);
		json_u64(&j, "queued", qi->queued);
		json_bool(&j, "stalled", qi->stalled);
		json_i64(&j, "stalled_ms", qi->stalled_ms);
		json_i64(&j, "receiver_stopped", qi->receiver_stopped);
		json_rate(&j, "msgs_per_s", r->msgs);
		json_rate(&j, "received_per_s", r->received);
		json_rate(&j, "mb_per_s", r->bytes / 1e6);
		json_rate(&j, "doorbells_per_s", r->doorbells);
		json_rate(&j, "full_waits_per_s", r->full_waits);
		json_rate(&j, "refusals_per_s", r->refused);
		json_end(&j, '}');
	}
	json_end(&j, ']');
	const struct totals *t = &v->tot;
	json_begin(&j, "totals", '{');
	json_u64(&j, "msgs", t->msgs);
	json_u64(&j, "bytes", t->bytes);
	json_u64(&j, "received", t->received);
	json_u64(&j, "doorbells", t->doorbells);
	json_u64(&j, "full_waits", t->full_waits);
	json_u64(&j, "full_refusals", t->refused);
	json_u64(&j, "corrupt", t->corrupt);
	json_rate(&j, "msgs_per_s", t->rate.msgs);
	json_rate(&j, "received_per_s", t->rate.received);
	json_rate(&j, "mb_per_s", t->rate.bytes / 1e6);
	json_rate(&j, "doorbells_per_s", t->rate.doorbells);
	json_rate(&j, "full_waits_per_s", t->rate.full_waits);
	json_rate(&j, "refusals_per_s", t->rate.refused);
	json_end(&j, '}');
	json_end(&j, '}');
	json_close(&j);
}

static void once_text(const struct viewer *v, double secs)
{
	const struct snap *s = v->cur;
	char line[1024];
	int barw = bar_width(0);

	header_text(s, "%Y-%m-%d %H:%M:%S", line, sizeof(line));
	puts(line);
	printf("rates over %.2f s\n\n", secs);
	board_head(line, sizeof(line));
	puts(line);
	for (unsigned b = 0; b < s->nboards; b++) {
		board_text(s, b, line, sizeof(line));
		puts(line);
	}
	putchar('\n');
	queue_head(barw, line, sizeof(line));
	puts(line);
	for (unsigned q = 0; q < s->nqueues; q++) {
		queue_text(v, q, barw, line, sizeof(line));
		puts(line);
	}
	putchar('\n');
	rates_text(v, line, sizeof(line));
	puts(line);
	totals_text(v, s->mono_ns, line, sizeof(line));
	puts(line);
}

/* A board or receiver of another host whose heartbeat top has not seen
 * long enough to judge. */
static bool snap_unknown(const struct snap *s)
{
	for (unsigned b = 0; b < s->nboards; b++)
		if (s->boards[b].activity == SMQ_ACTIVITY_UNKNOWN)
			return true;
	for (unsigned q = 0; q < s->nqueues; q++)
		if (s->queues[q].receiver_state == SMQ_RECEIVER_UNKNOWN)
			return true;
	return false;
}

static void totals_from_here(struct viewer *v)
{
	reset_totals(v);
	v->tot.since_mono_ns = v->cur->mono_ns;
	v->tot.since_real_ns = v->cur->real_ns;
}

int run_once(struct viewer *v)
{
	uint64_t first = 0;

	/* a base, one interval, a second reading; again if the window was
	 * re-initialised in between, and again until what another host's
	 * heartbeat says is known (for up to the heartbeat timeout) */
	for (int tries = 0; tries < 10; tries++) {
		int rc = take_frame(v);
		if (rc < 0)
			return top_fail(v, rc);
		if (rc || !v->show_rates) {
			if (!rc)  /* a base: the totals count from here */
				totals_from_here(v);
			sleep_ms(rc ? RETRY_MS : v->interval_ms);
			continue;
		}
		if (!first) {
			first = v->next->mono_ns;
			/* queues that hold messages, watched for --stall
			 * (given) before the frame is shown */
			if (v->stall_ms) {
				smq_watch(v->w, SMQ_WATCH_QUEUES,
					  SMQ_WAIT_FOREVER);
				tries--;
				continue;
			}
		}
		if (snap_unknown(v->cur) &&
		    v->cur->mono_ns - first < LIVENESS_LOOK_MS * NS_PER_MS) {
			/* another interval: the totals are of the last one,
			 * the one the rates are of */
			totals_from_here(v);
			tries--;
			sleep_ms(v->interval_ms);
			continue;
		}
		double secs = (double)(v->cur->mono_ns - v->next->mono_ns) / 1e9;
		if (v->ctx->json)
			once_json(v, secs);
		else
			once_text(v, secs);
		return 0;
	}
	return say_error("top: window %s keeps being re-initialised: no two "
		     "readings an interval apart", window_spec(v->ctx));
}
