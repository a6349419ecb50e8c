/* Events on their way to the caller: below both what compares looks
 * (watch.c) and what reads the journals (journal.c), which emit them. */
#include "events.h"

/* What a journal says, when the window has one: not guessed as well from
 * two looks (a watcher that looks late still reads it there) */
static bool journal_says(enum ev_type t)
{
	switch (t) {
	case EV_GENERATION: case EV_QUEUE_CLEARED: case EV_BOARD_ANNOUNCED:
	case EV_SYSTEM_READY: case EV_BOARD_REBOOTED: case EV_QUEUE_FULL:
	case EV_QUEUE_DRAINED: case EV_RECEIVER_ATTACHED: case EV_RECEIVER_GONE:
	case EV_MESSAGES_CORRUPT:
		return true;
	default:
		return false;
	}
}

void ev_emit(struct emit *em, struct event e)
{
	if (em->journaled && !e.journal && !e.holds && journal_says(e.type))
		return;
	if (!e.journal)
		e.time_ns = em->now;
	if (!e.count)
		e.count = 1;
	if (!em->rc)
		em->rc = em->fn(&e, em->arg);
}
