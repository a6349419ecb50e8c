/* A window truncated under its mapping, or a device removed or reset,
 * raises SIGBUS at the next read.  A command that watches a window for a
 * long time (top, events, metrics) reads it under this guard, so that
 * such a reading is an error of that reading (-SMQ_ETOOSMALL), after
 * which it attaches afresh; elsewhere SIGBUS ends the command with words
 * (main.c).  A handle the read was cut short in is closed, never used
 * again: the library may have been inside a call. */
#include <setjmp.h>
#include <signal.h>
#include "../smqctl.h"

static sigjmp_buf bus_jump;
static volatile sig_atomic_t bus_armed;

void bus_catch(void)
{
	if (bus_armed) {
		bus_armed = 0;
		siglongjmp(bus_jump, 1);
	}
}

int bus_guarded(int (*fn)(void *), void *arg)
{
	int err;

	if (sigsetjmp(bus_jump, 1))
		return -SMQ_ETOOSMALL;
	bus_armed = 1;
	err = fn(arg);
	bus_armed = 0;
	return err;
}
