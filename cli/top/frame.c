/* smqctl top: the text of a frame, shared by the live view and
 * --once. */
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include "top.h"

static const char *fmt_rate(double r, bool valid, char buf[24])
{
	if (!valid)
		return "-";
	if (r < 999999.95)
		snprintf(buf, 24, "%.1f", r);
	else if (r < 999999.95e6)
		snprintf(buf, 24, "%.2fM", r / 1e6);
	else
		snprintf(buf, 24, "%.2fG", r / 1e9);
	return buf;
}

static const char *fmt_mb(double bytes, bool valid, char buf[24])
{
	if (!valid)
		return "-";
	snprintf(buf, 24, "%.2f", bytes / 1e6);
	return buf;
}

static const char *fmt_time(uint64_t ns, const char *format, char buf[32])
{
	time_t t = (time_t)(ns / NS_PER_S);
	struct tm tm;

	buf[0] = 0;
	if (localtime_r(&t, &tm))
		strftime(buf, 32, format, &tm);
	return buf;
}

void header_text(const struct snap *s, const char *timefmt, char *buf,
		 size_t n)
{
	const struct smq_window_info *wi = &s->wi;
	char when[32];

	/* the time first: a long window name is what the width cuts */
	snprintf(buf, n, "%s  %s  generation %" PRIu64 "  system %s  %u "
		 "boards, %u queues, %u entries of %u B",
		 fmt_time(s->real_ns, timefmt, when), wi->name, wi->generation,
		 sys_state_word(wi->system_state),
		 wi->geometry.boards, wi->geometry.queues, wi->geometry.entries,
		 wi->geometry.entry_size);
	size_t k = strlen(buf);
	if (wi->features_incompat & SMQ_FEATURE_CHECKSUM && k < n)
		snprintf(buf + k, n - k, ", checksums");
}

void board_head(char *buf, size_t n)
{
	snprintf(buf, n, "%5s %-11s %-8s %8s %-16s %10s %s", "BOARD", "STATE",
		 "ACTIVITY", "PID", "HOST", "MOVED", "DOORBELL");
}

void board_text(const struct snap *s, unsigned b, char *buf, size_t n)
{
	const struct smq_board_info *bi = &s->boards[b];
	const char *state = board_state_word(bi->state);
	const char *act = activity_word(bi->activity);
	char age[32] = "-", host[80], bell[24] = "-";

	/* like dump: a board at work without having announced itself has a
	 * pid and a heartbeat but no state */
	if (!bi->pid) {
		snprintf(buf, n, "%5u %-11s %-8s %8s %-16s %10s %s", b, state, act,
			 "-", "-", "-", "-");
		return;
	}
	/* how long since top saw the heartbeat move, on this host's clock */
	if (bi->heartbeat_age_ms >= 0)
		snprintf(age, sizeof(age), "%.1fs ago",
			 (double)bi->heartbeat_age_ms / 1000);
	if (bi->doorbell.kind == SMQ_BELL_IVSHMEM)
		snprintf(bell, sizeof(bell), "ivshmem %u", bi->doorbell.peer);
	else if (bi->doorbell.kind == SMQ_BELL_FUTEX)
		snprintf(bell, sizeof(bell), "futex");
	snprintf(buf, n, "%5u %-11s %-8s %8u %-16.16s %10s %s", b, state, act,
		 bi->pid, text_safe(bi->host, host, sizeof(host)), age, bell);
}

/* The fill bar takes half of what the terminal leaves, the rate history
 * the other half; 0: no terminal. */
int bar_width(int cols)
{
	int w = (cols - 109) / 2;
	return cols <= 0 ? 20 : w < 8 ? 8 : w > 40 ? 40 : w;
}

void queue_head(int barw, char *buf, size_t n)
{
	snprintf(buf, n, "%5s %-4s %-8s %-*s %9s %9s %9s %9s %8s %12s %12s",
		 "QUEUE", "RCVR", "RECEIVER", barw + 2 + 1 + 11, "FILL", "MSGS/S",
		 "RECV/S", "MB/S", "BELLS/S", "FULL/S", "SENT", "RECEIVED");
}

void queue_text(const struct viewer *v, unsigned q, int barw, char *buf,
		size_t n)
{
	const struct smq_queue_info *qi = &v->cur->queues[q];
	const struct rate *r = &v->rates[q];
	bool ok = v->show_rates;
	char rcv[24], bar[48], fill[48], a[24], b[24], c[24], d[24], e[24];
	char note[48] = "";
	int full = 0;

	/* diagnostic queues are marked: measurements run there */
	snprintf(rcv, sizeof(rcv), "%u%s", qi->receiver,
		 qi->flags & SMQ_QUEUE_DIAGNOSTIC ? " d" : "");
	if (qi->capacity)  /* rounded up: a queue that holds any shows it */
		full = (int)((qi->fill * (uint64_t)barw + qi->capacity - 1) /
			     qi->capacity);
	if (full > barw)
		full = barw;
	bar[0] = '[';
	memset(bar + 1, '#', (size_t)full);
	memset(bar + 1 + full, ' ', (size_t)(barw - full));
	bar[barw + 1] = ']';
	bar[barw + 2] = 0;
	snprintf(fill, sizeof(fill), "%" PRIu64 "/%" PRIu64, qi->fill,
		 qi->capacity);
	/* what no column says: held with its bottom unmoved, or its
	 * receiver stopped (a signal, a debugger) */
	if (qi->stalled)
		snprintf(note, sizeof(note), " STALLED %.0fs%s",
			 (double)qi->stalled_ms / 1000,
			 qi->receiver_stopped > 0 ? ", receiver stopped" : "");
	else if (qi->receiver_stopped > 0)
		snprintf(note, sizeof(note), " receiver stopped");
	/* a send that met the lane full: it waited, or was refused */
	snprintf(buf, n, "%5u %-4s %-8s %s %11s %9s %9s %9s %9s %8s %12" PRIu64
		 " %12" PRIu64 "%s", q, rcv,
		 qi->receiver_state == SMQ_RECEIVER_WAITING && qi->sleeping
		 ? "asleep" : receiver_word(qi->receiver_state), bar, fill,
		 fmt_rate(r->msgs, ok, a), fmt_rate(r->received, ok, e),
		 fmt_mb(r->bytes, ok, b), fmt_rate(r->doorbells, ok, c),
		 fmt_rate(r->full_waits + r->refused, ok, d), qi->sent,
		 qi->received, note);
}

void rates_text(const struct viewer *v, char *buf, size_t n)
{
	const struct snap *s = v->cur;
	const struct rate *r = &v->tot.rate;
	bool ok = v->show_rates;
	unsigned receivers = 0, sleeping = 0, dead = 0, stalled = 0;
	char a[24], b[24], c[24], d[24], f[24], g[24], e[32] = "", h[32] = "";

	for (unsigned q = 0; q < s->nqueues; q++) {
		int st = s->queues[q].receiver_state;
		receivers += st == SMQ_RECEIVER_WAITING || st == SMQ_RECEIVER_AWAY;
		sleeping += st == SMQ_RECEIVER_WAITING && s->queues[q].sleeping;
		dead += st == SMQ_RECEIVER_DEAD;
		stalled += s->queues[q].stalled != 0;
	}
	if (dead)
		snprintf(e, sizeof(e), ", %u dead", dead);
	if (stalled)
		snprintf(h, sizeof(h), ", %u STALLED", stalled);
	snprintf(buf, n, "all queues: %s msgs/s sent, %s received, %s MB/s, %s "
		 "doorbells/s, %s full waits/s, %s refused full/s; %u receivers, "
		 "%u asleep%s%s",
		 fmt_rate(r->msgs, ok, a), fmt_rate(r->received, ok, f),
		 fmt_mb(r->bytes, ok, b), fmt_rate(r->doorbells, ok, c),
		 fmt_rate(r->full_waits, ok, d), fmt_rate(r->refused, ok, g),
		 receivers, sleeping, e, h);
}

void totals_text(const struct viewer *v, uint64_t now_mono, char *buf,
		 size_t n)
{
	const struct totals *t = &v->tot;
	char when[32], size[32];
	double secs = (double)(now_mono - t->since_mono_ns) / 1e9;

	int k = snprintf(buf, n, "since %s (%.1f s): %" PRIu64 " msgs, %s sent, %"
			 PRIu64 " received, %" PRIu64 " doorbells, %" PRIu64
			 " full waits, %" PRIu64 " refused full",
			 fmt_time(t->since_real_ns, "%H:%M:%S", when), secs,
			 t->msgs, human_bytes(t->bytes, size), t->received,
			 t->doorbells, t->full_waits, t->refused);
	if (t->corrupt && k > 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, ", %" PRIu64 " CORRUPT "
			 "(failed their checksum, refused)", t->corrupt);
}

void history_text(const struct viewer *v, unsigned q, int w, char *buf,
		  size_t n)
{
	static const char levels[] = " _.-=+*#";
	unsigned len = v->history_len, have = v->history_n;
	float most = 0;

	buf[0] = 0;
	if (!v->history || w <= 0 || !have || n < 2)
		return;
	if ((unsigned)w > have)
		w = (int)have;
	if ((size_t)w >= n)
		w = (int)n - 1;
	const float *h = &v->history[q * len];
	for (int i = 0; i < w; i++) {
		float x = h[(v->history_pos + len - (unsigned)w + (unsigned)i) % len];
		most = x > most ? x : most;
	}
	for (int i = 0; i < w; i++) {
		float x = h[(v->history_pos + len - (unsigned)w + (unsigned)i) % len];
		int lvl = most > 0 ? (int)(x / most * 7 + 0.5f) : 0;
		if (x > 0 && lvl == 0)
			lvl = 1;  /* any message shows */
		buf[i] = levels[lvl];
	}
	buf[w] = 0;
}

void event_line(const struct recent_event *e, char *buf, size_t n)
{
	char when[32];

	snprintf(buf, n, "%s  %s", fmt_time(e->real_ns, "%H:%M:%S", when),
		 e->text);
}
