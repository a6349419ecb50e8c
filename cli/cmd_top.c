/* smqctl top: a live view of the window: boards, queues, rates.
 *
 * Top only reads.  It attaches as --board but never announces, beats or
 * opens a queue, so watching a window cannot change what it shows, and a
 * window being formatted under it is followed, not disturbed: a stale
 * handle is replaced by a fresh attach.
 *
 * The terminal is restored on every way out (as htop does in its
 * CRT.c): normal exit, error paths (curses ends before the message is
 * printed), atexit, and the signals that end the process. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "smqctl.h"
#include <curses.h>

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull
/* A fresh attach this often tells a removed or replaced window. */
#define PROBE_NS NS_PER_S
/* A window that cannot be read for this long is gone, not being
 * formatted. */
#define GRACE_NS (3 * NS_PER_S)
#define RETRY_MS 200

enum sort_key { SORT_QUEUE, SORT_MSGS, SORT_BYTES, SORT_FILL, SORT_KEYS };
static const char *const sort_names[SORT_KEYS] = { "queue", "msgs/s", "MB/s",
						   "fill" };
static const char *const sys_states[] = { "formatting", "formatted", "ready" };
static const char *const board_states[] = { "absent", "initialized", "ready" };

enum { OPT_ONCE = 0x200 };

struct top_opts {
	int interval_ms;
	bool once;
	struct ctx *ctx;
};

static const struct argp_option options[] = {
	{ "interval", 'i', "TIME", 0,
	  "Refresh every TIME, and measure rates over it (default 1s; e.g. "
	  "0.5, 200ms, 2s)", 0 },
	{ "once", OPT_ONCE, NULL, 0,
	  "Print one plain-text frame, with rates over one interval, and exit "
	  "(with --json, one JSON object)", 0 },
	{ 0 }
};

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct top_opts *o = st->input;

	switch (key) {
	case 'i':
		o->interval_ms = arg_duration(st, "--interval", arg);
		if (o->interval_ms <= 0)
			argp_error(st, "--interval needs a time greater than 0, "
				   "not '%s'", arg);
		break;
	case OPT_ONCE:
		o->once = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(st, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (o->ctx->json && !o->once)
			argp_error(st, "--json needs --once (the live view is "
				   "for a terminal)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp argp = {
	options, parse, NULL,
	"Watch the window live: its state, boards and queues, with messages, "
	"megabytes (10^6 bytes), doorbells and full-ring waits per second "
	"measured over each refresh.  Keys: q quit, r reset the rates and "
	"totals, s cycle the sort column (queue, msgs/s, MB/s, fill), p pause, "
	"arrows, PgUp, PgDn, Home and End scroll the queues.  Top only reads "
	"the window, and attaches again by itself when the window is "
	"re-initialised.",
	NULL, NULL, NULL
};

/* ---- one reading of the window ---- */

struct snap {
	struct smq_window_info wi;
	struct smq_board_info *boards;
	struct smq_queue_info *queues;
	unsigned nboards, nqueues;     /* valid entries */
	unsigned board_cap, queue_cap; /* allocated */
	uint64_t mono_ns, real_ns;     /* when it was taken */
};

struct rate {
	double msgs, bytes, doorbells, full_waits;
};

struct row {
	unsigned queue;
	double key;
};

struct totals {
	uint64_t msgs, bytes, received, doorbells, full_waits;
	uint64_t since_mono_ns, since_real_ns;
	struct rate rate;  /* all queues, over the last interval */
};

struct viewer {
	struct ctx *ctx;
	int interval_ms;
	struct smq_window *w;
	struct snap snaps[2];
	struct snap *cur, *next;
	bool have_frame;  /* cur holds a reading */
	bool prev_ok;     /* cur may serve as the base of the next deltas */
	bool show_rates;  /* rates[] were measured up to cur */
	bool restart_rates; /* the next frame starts the rates again */
	struct rate *rates;
	struct row *rows;
	unsigned rate_cap;
	struct totals tot;
	int sort;
	bool paused;
	unsigned first_row, page;  /* scrolling of the queue list */
	uint64_t probed_ns;
	uint64_t trouble_since;  /* since when the window cannot be read */
	int trouble;
	bool trouble_open;       /* it is attaching that fails */
	char note[160];          /* re-attached, in the header */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static uint64_t real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void *grow(void *p, unsigned *cap, unsigned want, size_t size)
{
	if (want <= *cap)
		return p;
	void *q = realloc(p, (size_t)want * size);
	if (q)
		*cap = want;
	return q;
}

static int read_snap(struct smq_window *w, struct snap *s)
{
	int err = smq_window_info(w, &s->wi);
	if (err)
		return err;
	unsigned nb = s->wi.geometry.boards;
	unsigned nq = s->wi.geometry.queues + s->wi.diag_queues;
	unsigned bcap = s->board_cap, qcap = s->queue_cap;
	void *p = grow(s->boards, &bcap, nb, sizeof(*s->boards));
	if (!p)
		return -ENOMEM;
	s->boards = p;
	s->board_cap = bcap;
	p = grow(s->queues, &qcap, nq, sizeof(*s->queues));
	if (!p)
		return -ENOMEM;
	s->queues = p;
	s->queue_cap = qcap;
	for (unsigned b = 0; b < nb; b++)
		if ((err = smq_board_info(w, b, &s->boards[b])))
			return err;
	for (unsigned q = 0; q < nq; q++)
		if ((err = smq_queue_info(w, q, &s->queues[q])))
			return err;
	s->nboards = nb;
	s->nqueues = nq;
	s->mono_ns = mono_ns();
	s->real_ns = real_ns();
	return 0;
}

/* ---- signals and the terminal ---- */

static volatile sig_atomic_t screen_on;
/* A window truncated under the mapping raises SIGBUS on the next read:
 * while a reading is guarded, that is an error of the reading. */
static sigjmp_buf bus_jump;
static volatile sig_atomic_t bus_armed;

static void screen_end(void)
{
	if (screen_on) {
		screen_on = 0;
		endwin();
	}
}

static void on_signal(int sig)
{
	if (sig == SIGBUS && bus_armed) {
		bus_armed = 0;
		siglongjmp(bus_jump, 1);
	}
	/* endwin is not async-signal-safe, but the process ends here: a
	 * terminal left in raw mode is the worse outcome (htop does the
	 * same). */
	screen_end();
	signal(sig, SIG_DFL);
	raise(sig);  /* delivered on return: the parent sees the signal */
}

static void catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGBUS,
				    SIGSEGV, SIGFPE, SIGABRT };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;
		/* a signal ignored from the start (nohup, a background job of
		 * a shell) stays ignored */
		if (!sigaction(sigs[i], NULL, &old) && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
	atexit(screen_end);
}

static int guarded_snap(struct smq_window *w, struct snap *s)
{
	int err;

	if (sigsetjmp(bus_jump, 1))
		return -SMQ_ETOOSMALL;
	bus_armed = 1;
	err = read_snap(w, s);
	bus_armed = 0;
	return err;
}

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

/* The handle cannot tell that its window was removed, or replaced by
 * another of the same name: a fresh attach can.  If the fresh one shows
 * another window (generation or format time), it replaces ours. */
static int probe(struct viewer *v, const struct snap *s, bool *replaced)
{
	struct smq_window *w;
	struct smq_window_info wi;
	int err = smq_open(&w, window_spec(v->ctx), v->ctx->board, 0);

	if (err)
		return err;
	err = smq_window_info(w, &wi);
	if (!err && (wi.generation != s->wi.generation ||
		     wi.format_time_ns != s->wi.format_time_ns)) {
		smq_close(v->w);
		v->w = w;
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
		t->received += DELTA(received);
#undef DELTA
		struct rate *r = &v->rates[q];
		r->msgs = (double)msgs / secs;
		r->bytes = (double)bytes / secs;
		r->doorbells = (double)bells / secs;
		r->full_waits = (double)waits / secs;
		t->msgs += msgs;
		t->bytes += bytes;
		t->doorbells += bells;
		t->full_waits += waits;
		t->rate.msgs += r->msgs;
		t->rate.bytes += r->bytes;
		t->rate.doorbells += r->doorbells;
		t->rate.full_waits += r->full_waits;
	}
}

static int row_cmp(const void *x, const void *y)
{
	const struct row *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? 1 : -1;
	return a->queue < b->queue ? -1 : a->queue > b->queue;
}

static void sort_rows(struct viewer *v)
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

/* Takes a reading into v->cur.  Returns 0 with a new frame, 1 when the
 * window cannot be read just now (v->trouble says why; the last frame
 * stays), or a negative error once that has lasted GRACE_NS. */
static int take_frame(struct viewer *v)
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
	if (err == -ESTALE || err == -SMQ_ETOOSMALL) {
		if (v->w)
			smq_close(v->w);
		err = smq_open(&v->w, window_spec(v->ctx), v->ctx->board, 0);
		if (err)
			v->trouble_open = true;
		else {
			fresh = true;
			err = guarded_snap(v->w, s);
		}
	}
	if (!err)
		err = ensure_rows(v, s->nqueues);
	if (err) {
		if (!v->trouble_since)
			v->trouble_since = now;
		v->trouble = err;
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
	return 0;
}

static void reset_totals(struct viewer *v)
{
	memset(&v->tot, 0, sizeof(v->tot));
	v->tot.since_mono_ns = mono_ns();
	v->tot.since_real_ns = real_ns();
}

/* ---- the text of a frame, shared by the live view and --once ---- */

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

static void header_text(const struct snap *s, const char *timefmt,
			char *buf, size_t n)
{
	const struct smq_window_info *wi = &s->wi;
	char when[32];

	/* the time first: a long window name is what the width cuts */
	snprintf(buf, n, "%s  %s  generation %" PRIu64 "  system %s  %u "
		 "boards, %u queues, %u entries of %u B",
		 fmt_time(s->real_ns, timefmt, when), wi->name, wi->generation,
		 wi->system_state <= 2 ? sys_states[wi->system_state] : "?",
		 wi->geometry.boards, wi->geometry.queues, wi->geometry.entries,
		 wi->geometry.entry_size);
}

static void board_head(char *buf, size_t n)
{
	snprintf(buf, n, "%5s %-11s %8s %-16s %10s %-7s %s", "BOARD", "STATE",
		 "PID", "HOST", "MOVED", "ALIVE", "DOORBELL");
}

static const char *alive_word(int alive)
{
	return alive > 0 ? "yes" : alive == 0 ? "no" : "unknown";
}

static void board_text(const struct snap *s, unsigned b, char *buf, size_t n)
{
	const struct smq_board_info *bi = &s->boards[b];
	const char *state = bi->state <= 2 ? board_states[bi->state] : "?";
	char age[32] = "-", host[80], bell[24] = "-";

	/* like dump: a board at work without having announced itself has a
	 * pid and a heartbeat but no state */
	if (!bi->pid) {
		snprintf(buf, n, "%5u %-11s %8s %-16s %10s %-7s %s", b, state, "-",
			 "-", "-", "-", "-");
		return;
	}
	/* how long since top saw the heartbeat move, on this host's clock */
	if (bi->heartbeat_age_ms >= 0)
		snprintf(age, sizeof(age), "%.1fs ago",
			 (double)bi->heartbeat_age_ms / 1000);
	if (bi->doorbell.kind == 2)
		snprintf(bell, sizeof(bell), "ivshmem %u", bi->doorbell.peer);
	else if (bi->doorbell.kind == 1)
		snprintf(bell, sizeof(bell), "futex");
	snprintf(buf, n, "%5u %-11s %8u %-16.16s %10s %-7s %s", b, state,
		 bi->pid, text_safe(bi->host, host, sizeof(host)), age,
		 alive_word(bi->alive), bell);
}

/* The fill bar takes what the terminal leaves; 0: no terminal. */
static int bar_width(int cols)
{
	int w = cols - 99;
	return cols <= 0 ? 20 : w < 8 ? 8 : w > 40 ? 40 : w;
}

static void queue_head(int barw, char *buf, size_t n)
{
	snprintf(buf, n, "%5s %-7s %-5s %-*s %9s %9s %9s %8s %12s %12s", "QUEUE",
		 "RCVR", "SLEEP", barw + 2 + 1 + 11, "FILL", "MSGS/S", "MB/S",
		 "BELLS/S", "FULL/S", "SENT", "RECEIVED");
}

static void queue_text(const struct viewer *v, unsigned q, int barw,
		       char *buf, size_t n)
{
	const struct smq_queue_info *qi = &v->cur->queues[q];
	const struct rate *r = &v->rates[q];
	bool ok = v->show_rates;
	char rcv[24], bar[48], fill[48], a[24], b[24], c[24], d[24];
	int full = 0;

	/* diagnostic queues are marked: measurements run there */
	snprintf(rcv, sizeof(rcv), "%u%s%s", qi->receiver,
		 qi->receiver_pid ? "" : " (-)",
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
	snprintf(buf, n, "%5u %-7s %-5s %s %11s %9s %9s %9s %8s %12" PRIu64
		 " %12" PRIu64, q, rcv,
		 qi->sleeping ? "yes" : qi->receiver_pid ? "no" : "-", bar, fill,
		 fmt_rate(r->msgs, ok, a), fmt_mb(r->bytes, ok, b),
		 fmt_rate(r->doorbells, ok, c), fmt_rate(r->full_waits, ok, d),
		 qi->sent, qi->received);
}

static void rates_text(const struct viewer *v, char *buf, size_t n)
{
	const struct snap *s = v->cur;
	const struct rate *r = &v->tot.rate;
	bool ok = v->show_rates;
	unsigned receivers = 0, sleeping = 0;
	char a[24], b[24], c[24], d[24];

	for (unsigned q = 0; q < s->nqueues; q++) {
		receivers += s->queues[q].receiver_pid != 0;
		sleeping += s->queues[q].sleeping != 0;
	}
	snprintf(buf, n, "all queues: %s msgs/s, %s MB/s, %s doorbells/s, %s "
		 "full waits/s; %u receivers, %u sleeping",
		 fmt_rate(r->msgs, ok, a), fmt_mb(r->bytes, ok, b),
		 fmt_rate(r->doorbells, ok, c), fmt_rate(r->full_waits, ok, d),
		 receivers, sleeping);
}

static void totals_text(const struct viewer *v, uint64_t now_mono, char *buf,
			size_t n)
{
	const struct totals *t = &v->tot;
	char when[32], size[32];
	double secs = (double)(now_mono - t->since_mono_ns) / 1e9;

	snprintf(buf, n, "since %s (%.1f s): %" PRIu64 " msgs, %s sent, %"
		 PRIu64 " received, %" PRIu64 " doorbells, %" PRIu64
		 " full waits", fmt_time(t->since_real_ns, "%H:%M:%S", when),
		 secs, t->msgs, human_bytes(t->bytes, size), t->received,
		 t->doorbells, t->full_waits);
}

/* ---- the live view ---- */

static void put(int y, int attr, const char *text)
{
	if (y < 0 || y >= LINES)
		return;
	attron(attr);
	mvaddnstr(y, 0, text, COLS);
	if (attr & A_REVERSE) {
		int len = (int)strlen(text);
		if (len < COLS)
			mvhline(y, len, ' ', COLS - len);
	}
	attroff(attr);
}

static void status_text(const struct viewer *v, char *buf, size_t n)
{
	size_t len;

	if (v->interval_ms % 1000)
		len = (size_t)snprintf(buf, n, "every %d ms", v->interval_ms);
	else
		len = (size_t)snprintf(buf, n, "every %d s",
				       v->interval_ms / 1000);
#define ADD(...) do { if (len < n) \
	len += (size_t)snprintf(buf + len, n - len, __VA_ARGS__); } while (0)
	ADD("  sort: %s", sort_names[v->sort]);
	if (v->paused)
		ADD("  PAUSED");
	if (v->have_frame && v->page)
		ADD("  queues %u-%u of %u", v->first_row + 1,
		    v->first_row + (v->page < v->cur->nqueues - v->first_row
				    ? v->page : v->cur->nqueues - v->first_row),
		    v->cur->nqueues);
	if (v->trouble_since)
		ADD("  cannot %s window: %s, retrying", v->trouble_open
		    ? "open" : "read", smq_strerror(v->trouble));
	if (v->note[0])
		ADD("  %s", v->note);
	ADD("  | q quit  r reset  s sort  p pause  arrows PgUp PgDn Home End "
	    "scroll");
#undef ADD
}

static void draw(struct viewer *v)
{
	char line[1024];
	int y = 0;

	erase();
	if (!v->have_frame) {
		snprintf(line, sizeof(line), "smqctl top: %s",
			 window_spec(v->ctx));
		put(y++, A_REVERSE, line);
		status_text(v, line, sizeof(line));
		put(y, A_NORMAL, line);
		refresh();
		return;
	}
	const struct snap *s = v->cur;
	header_text(s, "%H:%M:%S", line, sizeof(line));
	put(y++, A_REVERSE, line);

	/* below the two header lines: a blank, the boards' heading, a blank,
	 * the queues' heading and two lines of totals; the boards get a third
	 * of the rest, the queues the remainder */
	int rest = LINES - 8;
	if (rest < 0)
		rest = 0;
	int board_rows = (int)s->nboards;
	if (board_rows > rest / 3)
		board_rows = rest / 3 > 1 ? rest / 3 : 1;
	int queue_rows = rest - board_rows;
	if (queue_rows < 0)
		queue_rows = 0;
	v->page = (unsigned)queue_rows;
	unsigned last = s->nqueues > v->page ? s->nqueues - v->page : 0;
	if (v->first_row > last)
		v->first_row = last;

	status_text(v, line, sizeof(line));
	put(y++, v->paused ? A_BOLD : A_NORMAL, line);
	y++;
	board_head(line, sizeof(line));
	put(y++, A_BOLD, line);
	unsigned shown = (unsigned)board_rows;
	if (shown < s->nboards && shown)
		shown--;  /* the last row sums up the rest */
	for (unsigned b = 0; b < shown; b++) {
		board_text(s, b, line, sizeof(line));
		put(y++, A_NORMAL, line);
	}
	if (shown < s->nboards) {
		unsigned alive = 0;
		for (unsigned b = shown; b < s->nboards; b++)
			alive += s->boards[b].alive > 0;
		snprintf(line, sizeof(line), "%5s %s%u boards, %u alive", "...",
			 shown ? "and " : "", s->nboards - shown, alive);
		put(y++, A_NORMAL, line);
	}
	y++;
	int barw = bar_width(COLS);
	queue_head(barw, line, sizeof(line));
	put(y++, A_REVERSE, line);
	/* only the visible rows are formatted */
	for (unsigned i = 0; i < v->page && v->first_row + i < s->nqueues; i++) {
		queue_text(v, v->rows[v->first_row + i].queue, barw, line,
			   sizeof(line));
		put(y + (int)i, A_NORMAL, line);
	}
	y += queue_rows;
	rates_text(v, line, sizeof(line));
	put(y++, A_BOLD, line);
	totals_text(v, v->paused || !v->have_frame ? s->mono_ns : mono_ns(),
		    line, sizeof(line));
	put(y, A_NORMAL, line);
	refresh();
}

static int screen_begin(void)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return say_error("top: the live view needs a terminal (--once prints "
			     "one plain frame)");
	const char *term = getenv("TERM");
	if (!newterm(NULL, stdout, stdin))
		return say_error("top: cannot drive the terminal (TERM=%s); --once "
			     "prints one plain frame", term ? term : "unset");
	screen_on = 1;
	cbreak();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	keypad(stdscr, TRUE);
	curs_set(0);
	return 0;
}

/* What the failure that ends top was. */
static int fail(struct viewer *v, int err)
{
	screen_end();
	if (v->trouble_open)
		return open_error(v->ctx, err);
	return window_error(v->ctx, "cannot read window", err);
}

/* Returns false to quit. */
static bool key(struct viewer *v, int ch, uint64_t *due)
{
	switch (ch) {
	case 'q': case 'Q':
		return false;
	case 's': case 'S':
		v->sort = (v->sort + 1) % SORT_KEYS;
		if (v->have_frame)
			sort_rows(v);
		break;
	case 'p': case 'P': case ' ':
		v->paused = !v->paused;
		if (!v->paused) {
			/* counts go on from the frame before the pause; rates
			 * start again from now */
			*due = 0;
			v->restart_rates = true;
		}
		break;
	case 'r': case 'R':
		reset_totals(v);
		v->show_rates = false;
		v->prev_ok = false;
		if (!v->paused)
			*due = 0;  /* this frame is the base of the next rates */
		break;
	case KEY_UP: case 'k':
		if (v->first_row)
			v->first_row--;
		break;
	case KEY_DOWN: case 'j':
		v->first_row++;  /* draw() keeps it in range */
		break;
	case KEY_PPAGE:
		v->first_row = v->first_row > v->page ? v->first_row - v->page : 0;
		break;
	case KEY_NPAGE:
		v->first_row += v->page;
		break;
	case KEY_HOME: case 'g':
		v->first_row = 0;
		break;
	case KEY_END: case 'G':
		v->first_row = ~0u / 2;
		break;
	case 12:  /* ^L */
		clearok(curscr, TRUE);
		break;
	}
	return true;
}

static int run_live(struct viewer *v)
{
	uint64_t interval = (uint64_t)v->interval_ms * NS_PER_MS, due = 0;

	if (screen_begin())
		return 1;
	for (;;) {
		uint64_t now = mono_ns();
		if (!v->paused && now >= due) {
			int rc = take_frame(v);
			if (rc < 0)
				return fail(v, rc);
			now = mono_ns();
			due = now + (rc ? (interval < RETRY_MS * NS_PER_MS
					   ? interval : RETRY_MS * NS_PER_MS)
				     : interval);
			draw(v);
		}
		/* keys are handled as they come, whatever the interval */
		int wait_ms = 1000;
		if (!v->paused) {
			uint64_t left = due > now ? (due - now + NS_PER_MS - 1) /
						    NS_PER_MS : 1;
			wait_ms = left < 1000 ? (int)left : 1000;
		}
		timeout(wait_ms);
		int ch = getch();
		if (ch == ERR)
			continue;
		if (!key(v, ch, &due))
			break;
		draw(v);
	}
	screen_end();
	return 0;
}

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
	json_str(&j, "system_state", wi->system_state <= 2
		 ? sys_states[wi->system_state] : "?");
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
		json_str(&j, "state", bi->state <= 2 ? board_states[bi->state]
			 : "?");
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
		json_bool(&j, "sleeping", qi->sleeping);
		json_u64(&j, "fill", qi->fill);
		json_u64(&j, "capacity", qi->capacity);
		json_u64(&j, "sent", qi->sent);
		json_u64(&j, "bytes_sent", qi->bytes_sent);
		json_u64(&j, "received", qi->received);
		json_u64(&j, "bytes_received", qi->bytes_received);
		json_u64(&j, "full_waits", qi->full_waits);
		json_u64(&j, "doorbells", qi->doorbells);
		json_rate(&j, "msgs_per_s", r->msgs);
		json_rate(&j, "mb_per_s", r->bytes / 1e6);
		json_rate(&j, "doorbells_per_s", r->doorbells);
		json_rate(&j, "full_waits_per_s", r->full_waits);
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
	json_rate(&j, "msgs_per_s", t->rate.msgs);
	json_rate(&j, "mb_per_s", t->rate.bytes / 1e6);
	json_rate(&j, "doorbells_per_s", t->rate.doorbells);
	json_rate(&j, "full_waits_per_s", t->rate.full_waits);
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

static int run_once(struct viewer *v)
{
	/* a base, one interval, a second reading; again if the window was
	 * re-initialised in between */
	for (int tries = 0; tries < 10; tries++) {
		int rc = take_frame(v);
		if (rc < 0)
			return fail(v, rc);
		if (rc || !v->show_rates) {
			if (!rc) {  /* a base: the totals count from here */
				reset_totals(v);
				v->tot.since_mono_ns = v->cur->mono_ns;
				v->tot.since_real_ns = v->cur->real_ns;
			}
			sleep_ms(rc ? RETRY_MS : v->interval_ms);
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

static int run(int argc, char **argv, struct ctx *ctx)
{
	struct top_opts o = { 1000, false, ctx };
	struct viewer v;

	parse_cmd(&argp, argc, argv, &o, ctx);
	memset(&v, 0, sizeof(v));
	v.ctx = ctx;
	v.interval_ms = o.interval_ms;
	v.cur = &v.snaps[0];
	v.next = &v.snaps[1];
	if (open_window(ctx, 0, &v.w))
		return 1;
	catch_signals();
	reset_totals(&v);
	int rc = o.once ? run_once(&v) : run_live(&v);
	if (v.w)
		smq_close(v.w);
	for (int i = 0; i < 2; i++) {
		free(v.snaps[i].boards);
		free(v.snaps[i].queues);
	}
	free(v.rates);
	free(v.rows);
	return rc;
}

const struct cmd cmd_top = { "top", run, &argp,
			     "watch boards and queues live, with rates" };
