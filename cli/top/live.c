/* smqctl top: the live view, drawn with curses, and its keys. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <curses.h>
#include "top.h"

static const char *const sort_names[SORT_KEYS] = { "queue", "msgs/s", "MB/s",
						   "fill" };

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
	if (v->trouble_since) {
		char why[256];
		/* the transport's cause: an ivshmem server of another
		 * protocol version is no "unknown transport" */
		smq_explain(window_spec(v->ctx), v->trouble, why, sizeof(why));
		ADD("  cannot %s window: %s, retrying", v->trouble_open
		    ? "open" : "read", why);
	}
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
	 * the queues' heading and two lines of totals; the latest events
	 * (a heading and up to five) when there is room for them; the boards
	 * get a third of the rest, the queues the remainder */
	int rest = LINES - 8;
	if (rest < 0)
		rest = 0;
	int event_rows = v->nrecent < 5 ? (int)v->nrecent : 5;
	if (rest - (event_rows + 1) < 6)
		event_rows = -1;  /* no room: none, nor their heading */
	rest -= event_rows + 1;
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
		unsigned work = 0, dead = 0;
		for (unsigned b = shown; b < s->nboards; b++) {
			work += s->boards[b].activity == SMQ_ACTIVITY_WORKING;
			dead += s->boards[b].activity == SMQ_ACTIVITY_DEAD;
		}
		snprintf(line, sizeof(line), "%5s %s%u boards: %u at work, %u "
			 "dead", "...", shown ? "and " : "", s->nboards - shown,
			 work, dead);
		put(y++, A_NORMAL, line);
	}
	y++;
	int barw = bar_width(COLS);
	queue_head(barw, line, sizeof(line));
	/* what the terminal leaves right of the counters: the last minute */
	int histw = COLS - (int)strlen(line) - 2;
	if (histw >= 8 && (size_t)histw < sizeof(line) - strlen(line) - 2)
		snprintf(line + strlen(line), sizeof(line) - strlen(line),
			 "  %-*s", histw, histw >= 19 ? "MSGS/S, LAST MINUTE"
			 : histw >= 11 ? "LAST MINUTE" : "LAST MIN");
	else
		histw = 0;
	if (!queue_rows && s->nqueues)  /* said where the heading would be */
		snprintf(line, sizeof(line), "terminal too small to show the %u "
			 "queues (%dx%d): make it taller, or smqctl top --once",
			 s->nqueues, COLS, LINES);
	put(y++, queue_rows ? A_REVERSE : A_BOLD, line);
	/* only the visible rows are formatted */
	for (unsigned i = 0; i < v->page && v->first_row + i < s->nqueues; i++) {
		unsigned q = v->rows[v->first_row + i].queue;
		queue_text(v, q, barw, line, sizeof(line));
		if (histw) {
			char h[HISTORY_MAX + 1];
			history_text(v, q, histw, h, sizeof(h));
			snprintf(line + strlen(line), sizeof(line) - strlen(line),
				 "  %s", h);
		}
		put(y + (int)i, A_NORMAL, line);
	}
	y += queue_rows;
	if (event_rows >= 0) {
		put(y++, A_BOLD, "latest events:");
		for (int i = event_rows; i > 0; i--) {
			unsigned k = (v->recent_next + EVENTS_KEPT - (unsigned)i) %
				     EVENTS_KEPT;
			event_line(&v->recent[k], line, sizeof(line));
			put(y++, A_NORMAL, line);
		}
	}
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

int run_live(struct viewer *v)
{
	uint64_t interval = (uint64_t)v->interval_ms * NS_PER_MS, due = 0;

	if (screen_begin())
		return 1;
	for (;;) {
		uint64_t now = mono_ns();
		if (!v->paused && now >= due) {
			int rc = take_frame(v);
			if (rc < 0)
				return top_fail(v, rc);
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
