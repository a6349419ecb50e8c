/* smqctl metrics: reading the window, and following it when it is
 * formatted anew, removed, or replaced by another of the same name. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "metrics.h"

/* A window being formatted is looked at again this often, this many
 * times, before the reading says it is down. */
#define BUSY_RETRY_MS 20
#define READ_TRIES 10

static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

void metrics_src_init(struct metrics_src *m, const char *spec)
{
	memset(m, 0, sizeof(*m));
	m->spec = spec;
	m->err = -ENOENT;
}

void metrics_src_free(struct metrics_src *m)
{
	if (m->w)
		smq_close(m->w);
	free(m->boards);
	free(m->queues);
	memset(m, 0, sizeof(*m));
}

static int grow(void **p, unsigned *cap, unsigned want, size_t size)
{
	if (want <= *cap)
		return 0;
	void *q = realloc(*p, (size_t)want * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = want;
	return 0;
}

static int read_boards(struct metrics_src *m)
{
	for (unsigned b = 0; b < m->nboards; b++) {
		int err = smq_board_info(m->w, b, &m->boards[b],
					 sizeof(m->boards[b]));
		if (err)
			return err;
	}
	return 0;
}

/* One reading, consistent: the generation is the same before and after
 * (an init or clear between the two changes the layout under us). */
static int read_once(void *p)
{
	struct metrics_src *m = p;
	struct smq_window_info after;
	int err = smq_window_info(m->w, &m->wi, sizeof(m->wi));

	if (err)
		return err;
	unsigned nb = m->wi.geometry.boards;
	unsigned nq = m->wi.geometry.queues + m->wi.diag_queues;
	if (grow((void **)&m->boards, &m->board_cap, nb, sizeof(*m->boards)) ||
	    grow((void **)&m->queues, &m->queue_cap, nq, sizeof(*m->queues)))
		return -ENOMEM;
	m->nboards = nb;
	m->nqueues = nq;
	if ((err = read_boards(m)))
		return err;
	for (unsigned q = 0; q < nq; q++)
		if ((err = smq_queue_info(m->w, q, &m->queues[q],
					  sizeof(m->queues[q]))))
			return err;
	if ((err = smq_window_info(m->w, &after, sizeof(after))))
		return err;
	return after.generation == m->wi.generation ? 0 : -ESTALE;
}

static void let_go(struct metrics_src *m)
{
	if (m->w)
		smq_close(m->w);
	m->w = NULL;
}

int metrics_read(struct metrics_src *m)
{
	int err = 0;

	for (int tries = 0; tries < READ_TRIES; tries++) {
		if (!m->w && (err = smq_open(m->spec, 0, SMQ_OPEN_READONLY,
					     &m->w))) {
			m->w = NULL;
			if (err != -EBUSY && err != -EALREADY)
				break;
			nap_ms(BUSY_RETRY_MS);
			continue;
		}
		err = bus_guarded(read_once, m);
		if (!err)
			break;
		/* removed (another window of that name may be there now),
		 * or caught mid-format: a fresh attach */
		if (err == -EIDRM || err == -SMQ_ETOOSMALL) {
			let_go(m);
			continue;
		}
		if (err != -ESTALE && err != -EBUSY)
			break;
		nap_ms(BUSY_RETRY_MS);
	}
	m->err = err;
	return err;
}

void metrics_settle(struct metrics_src *m)
{
	if (m->err || !m->w)
		return;
	/* the library watches until it can judge another host's boards */
	smq_watch(m->w, SMQ_WATCH_BOARDS, SMQ_WAIT_FOREVER);
	metrics_read(m);
}

void metrics_tell(struct metrics_src *m)
{
	char why[256];

	if (m->err == m->last_said)
		return;
	if (m->err)
		say_warning("window %s cannot be read (smq_up 0): %s", m->spec,
			    smq_explain(m->spec, m->err, why, sizeof(why)));
	else if (m->last_said)
		say_warning("window %s can be read again (smq_up 1)", m->spec);
	m->last_said = m->err;
}

void metrics_block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}
