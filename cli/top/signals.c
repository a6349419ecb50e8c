/* smqctl top: the signals that end the process restore the terminal;
 * SIGBUS during a reading is an error of that reading. */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <curses.h>
#include "top.h"

volatile sig_atomic_t screen_on;
/* A window truncated under the mapping raises SIGBUS on the next read:
 * while a reading is guarded, that is an error of the reading. */
static sigjmp_buf bus_jump;
static volatile sig_atomic_t bus_armed;

void screen_end(void)
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

int guarded_snap(struct smq_window *w, struct snap *s)
{
	int err;

	if (sigsetjmp(bus_jump, 1))
		return -SMQ_ETOOSMALL;
	bus_armed = 1;
	err = read_snap(w, s);
	bus_armed = 0;
	return err;
}
