/* libsmq internals: what a board writes into its journal (journal.c),
 * apart from window.h, so that the handle does not call the journal,
 * which writes through the handle's marks. */
#ifndef SMQ_JOURNAL_H
#define SMQ_JOURNAL_H

#include "window.h"

/* journal.c: an entry in this board's journal (feature journal; a monitor
 * or a window without one writes nothing).  Its own mark: stale, nothing
 * is written. */
struct smq_jnote {
	uint16_t kind;          /* enum smq_journal_kind */
	uint16_t role;
	uint32_t queue;         /* SMQ_NO_QUEUE */
	uint64_t epoch, a, b;
};
void smq_journal_write(struct smq_window *w, const struct smq_jnote *n);
static inline void smq_journal(struct smq_window *w, uint16_t kind,
			       uint16_t role, uint32_t queue, uint64_t epoch,
			       uint64_t a, uint64_t b)
{
	struct smq_jnote n = { kind, role, queue, epoch, a, b };
	smq_journal_write(w, &n);
}

#endif
