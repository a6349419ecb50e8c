/* smqctl top: following the window, a reading (snap.c) at a time,
 * through a re-initialisation or a replacement. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "top.h"

/* ---- following the window ---- */

static void note_attach(struct viewer *v, const struct snap *s)
{
	char when[16] = "";
	time_t t = (time_t)(s->real_ns / NS_PER_S);
	struct tm tm;

	if (localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	snprintf(v->note, sizeof(v->note), "re-attached %s: generation %"
		 PRIu64, when, s->wi.generation);
}

/* A monitor's handle follows re-inits and says when its window was
 * removed (-EIDRM), but not that another of the same name was made since:
 * a fresh attach can.  If the fresh one shows another window (generation
 * or format time), it replaces ours. */
static int probe(struct viewer *v, const struct snap *s, bool *replaced)
{
	struct smq_window *w;
	struct smq_window_info wi;
	int err = smq_open(window_spec(v->ctx), v->ctx->board, SMQ_OPEN_READONLY, &w);

	if (err)
		return err;
	err = smq_window_info(w, &wi, sizeof(wi));
	if (!err && (wi.generation != s->wi.generation ||
		     wi.format_time_ns != s->wi.format_time_ns)) {
		smq_close(v->w);
		v->w = w;
		if (v->stall_ms)
			smq_set_timeout(w, SMQ_TIMEOUT_STALL, v->stall_ms);
		*replaced = true;
		return 0;
	}
	smq_close(w);
	return err == -ESTALE ? 0 : err;
}

static void compute_rates(struct viewer *v, const struct snap *a,
			  const struct snap *b)
{
	double secs = (double)(b->mono_ns - a->mono_ns) / 1e9;
	struct totals *t = &v->tot;

	if (secs <= 0)
		secs = 1e-9;
	memset(&t->rate, 0, sizeof(t->rate));
	for (unsigned q = 0; q < b->nqueues; q++) {
		const struct smq_queue_info *x = &a->queues[q], *y = &b->queues[q];
#define DELTA(f) (y->f >= x->f ? y->f - x->f : 0)
		uint64_t msgs = DELTA(sent), bytes = DELTA(bytes_sent);
		uint64_t bells = DELTA(doorbells), waits = DELTA(full_waits);
		uint64_t got = DELTA(received);
		t->corrupt += DELTA(corrupt);
#undef DELTA
		/* 32-bit counts in the window: their difference modulo 2^32 */
		uint64_t refused = (uint32_t)(y->full_refusals -
					      x->full_refusals);
		struct rate *r = &v->rates[q];
		r->msgs = (double)msgs / secs;
		r->bytes = (double)bytes / secs;
		r->doorbells = (double)bells / secs;
		r->full_waits = (double)waits / secs;
		r->received = (double)got / secs;
		r->refused = (double)refused / secs;
		t->msgs += msgs;
		t->bytes += bytes;
		t->doorbells += bells;
		t->full_waits += waits;
		t->received += got;
		t->refused += refused;
		t->rate.msgs += r->msgs;
		t->rate.bytes += r->bytes;
		t->rate.doorbells += r->doorbells;
		t->rate.full_waits += r->full_waits;
		t->rate.received += r->received;
		t->rate.refused += r->refused;
	}
}

static int row_cmp(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? 1 : -1;
	return a->queue < b->queue ? -1 : a->queue > b->queue;
}

void sort_rows(struct viewer *v)
{
	const struct snap *s = v->cur;

	for (unsigned q = 0; q < s->nqueues; q++) {
		double key = 0;
		switch (v->sort) {
		case SORT_MSGS:
			key = v->show_rates ? v->rates[q].msgs : 0;
			break;
		case SORT_BYTES:
			key = v->show_rates ? v->rates[q].bytes : 0;
			break;
		case SORT_FILL:
			key = (double)s->queues[q].fill;
			break;
		}
		v->rows[q] = (struct row){ q, key };
	}
	if (v->sort != SORT_QUEUE)
		qsort(v->rows, s->nqueues, sizeof(*v->rows), row_cmp);
}

static int ensure_rows(struct viewer *v, unsigned n)
{
	unsigned cap = v->rate_cap;
	void *p;

	if (n <= cap)
		return 0;
	if (!(p = grow(v->rates, &cap, n, sizeof(*v->rates))))
		return -ENOMEM;
	v->rates = p;
	cap = v->rate_cap;
	if (!(p = grow(v->rows, &cap, n, sizeof(*v->rows))))
		return -ENOMEM;
	v->rows = p;
	v->rate_cap = cap;
	return 0;
}

static int keep_event(const struct event *e, void *arg)
{
	struct viewer *v = arg;
	struct recent_event *r = &v->recent[v->recent_next];

	r->real_ns = e->time_ns;
	event_text(e, r->text, sizeof(r->text));
	v->recent_next = (v->recent_next + 1) % EVENTS_KEPT;
	if (v->nrecent < EVENTS_KEPT)
		v->nrecent++;
	return 0;
}

/* About a minute of each queue's message rate: as many samples as
 * intervals fit in HISTORY_S. */
static void keep_history(struct viewer *v, const struct snap *s)
{
	unsigned len = (unsigned)(HISTORY_S * 1000 / v->interval_ms);

	len = len < 2 ? 2 : len > HISTORY_MAX ? HISTORY_MAX : len;
	if (s->nqueues * len > v->history_cap || v->history_len != len) {
		free(v->history);
		v->history = calloc((size_t)s->nqueues * len, sizeof(float));
		v->history_cap = v->history ? s->nqueues * len : 0;
		v->history_len = len;
		v->history_pos = v->history_n = 0;
		if (!v->history)
			return;
	}
	for (unsigned q = 0; q < s->nqueues; q++)
		v->history[q * len + v->history_pos] =
			v->show_rates ? (float)v->rates[q].msgs : 0;
	v->history_pos = (v->history_pos + 1) % len;
	if (v->history_n < len)
		v->history_n++;
}

/* Takes a reading into v->cur.  Returns 0 with a new frame, 1 when the
 * window cannot be read just now (v->trouble says why; the last frame
 * stays), or a negative error once that has lasted GRACE_NS. */
int take_frame(struct viewer *v)
{
	uint64_t now = mono_ns();
	struct snap *s = v->next;
	bool fresh = false;  /* a new handle: no deltas against the last frame */
	int err = v->w ? guarded_snap(v->w, s) : -ESTALE;

	v->trouble_open = false;
	if (!err && (v->trouble_since || !v->probed_ns ||
		     now - v->probed_ns >= PROBE_NS)) {
		v->probed_ns = now;
		if ((err = probe(v, s, &fresh)))
			v->trouble_open = true;
		else if (fresh)
			err = guarded_snap(v->w, s);
	}
	/* removed (a window of that name may be there again), or caught
	 * mid-format: a fresh look */
	if (err == -ESTALE || err == -SMQ_ETOOSMALL || err == -EIDRM) {
		if (v->w)
			smq_close(v->w);
		err = smq_open(window_spec(v->ctx), v->ctx->board,
			       SMQ_OPEN_READONLY, &v->w);
		if (err)
			v->trouble_open = true;
		else {
			if (v->stall_ms)
				smq_set_timeout(v->w, SMQ_TIMEOUT_STALL,
						v->stall_ms);
			fresh = true;
			err = guarded_snap(v->w, s);
		}
	}
	/* a monitor's handle follows a re-init by itself: a new generation
	 * is another window all the same */
	if (!err && !fresh && v->have_frame &&
	    (s->wi.generation != v->cur->wi.generation ||
	     s->wi.format_time_ns != v->cur->wi.format_time_ns))
		fresh = true;
	if (!err)
		err = ensure_rows(v, s->nqueues);
	if (err) {
		if (!v->trouble_since)
			v->trouble_since = now;
		v->trouble = err;
		ev_watch_feed(&v->events, err, NULL, NULL, 0, NULL, 0, now,
			      real_ns(), keep_event, v);
		return now - v->trouble_since >= GRACE_NS ? err : 1;
	}
	v->trouble_since = 0;
	if (fresh) {
		note_attach(v, s);
		v->prev_ok = false;
	}
	v->show_rates = v->prev_ok && v->have_frame &&
			v->cur->nqueues == s->nqueues;
	if (v->show_rates)
		compute_rates(v, v->cur, s);
	v->next = v->cur;
	v->cur = s;
	v->have_frame = v->prev_ok = true;
	if (v->restart_rates) {
		/* counted, but the rates span the pause: start them again */
		v->show_rates = v->restart_rates = false;
		memset(&v->tot.rate, 0, sizeof(v->tot.rate));
	}
	sort_rows(v);
	ev_watch_feed(&v->events, 0, &s->wi, s->boards, s->nboards, s->queues,
		      s->nqueues, s->mono_ns, s->real_ns, keep_event, v);
	if (fresh)
		v->history_n = 0;  /* another window: another history */
	keep_history(v, s);
	return 0;
}

void reset_totals(struct viewer *v)
{
	memset(&v->tot, 0, sizeof(v->tot));
	v->tot.since_mono_ns = mono_ns();
	v->tot.since_real_ns = real_ns();
}

/* What the failure that ends top was. */
int top_fail(struct viewer *v, int err)
{
	screen_end();
	if (v->trouble_open)
		return open_error(v->ctx, err);
	return window_error(v->ctx, "cannot read window", err);
}
