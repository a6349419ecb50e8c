/* smqctl top: the signals that end the process restore the terminal;
 * SIGBUS during a reading is an error of that reading. */
#include <stdlib.h>
#include <string.h>
#include <curses.h>
#include "top.h"

volatile sig_atomic_t screen_on;

void screen_end(void)
{
	if (screen_on) {
		screen_on = 0;
		endwin();
	}
}

static void on_signal(int sig)
{
	if (sig == SIGBUS)
		bus_catch();  /* a guarded reading: its error */
	/* endwin is not async-signal-safe, but the process ends here: a
	 * terminal left in raw mode is the worse outcome (htop does the
	 * same). */
	screen_end();
	signal(sig, SIG_DFL);
	raise(sig);  /* delivered on return: the parent sees the signal */
}

void catch_signals(void)
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

struct snap_call { struct smq_window *w; struct snap *s; };

static int snap_call(void *p)
{
	struct snap_call *c = p;
	return read_snap(c->w, c->s);
}

int guarded_snap(struct smq_window *w, struct snap *s)
{
	struct snap_call c = { w, s };
	return bus_guarded(snap_call, &c);
}
