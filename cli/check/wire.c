/* smqctl check between boards: the wire, as every board's agent and
 * what it measures use it (wire.h says what the messages are): a
 * message begun, told from a test's data, sent to a board's diagnostic
 * queue, and waited for on our own, in the mode a test needs.  Under
 * agent.c, which serves the coordinator, and measure.c, which the agent
 * runs and which talks to the partner board itself. */
#include <errno.h>
#include <string.h>
#include "wire.h"

static const unsigned mode_flags[] = {
	[SERVE_SPIN] = 0, [SERVE_SLEEP] = SMQ_SLEEP, [SERVE_POLL] = SMQ_POLL,
};

void wire_init(const struct agent *a, struct wire_msg *m, int op)
{
	memset(m, 0, sizeof(*m));
	m->h.magic = WIRE_MAGIC;
	m->h.op = (uint16_t)op;
	m->h.from = (uint16_t)a->self;
	m->h.id = a->id;
}

bool is_wire(const void *p, size_t len)
{
	struct wire_head h;

	if (len < sizeof(h))
		return false;
	memcpy(&h, p, sizeof(h));
	return h.magic == WIRE_MAGIC;
}

/* Our receiver, in mode: a queue handle waits as it was opened. */
int agent_mode(struct agent *a, int mode)
{
	if (a->rx && a->rx_mode == mode)
		return 0;
	if (a->rx)
		smq_queue_close(a->rx);
	a->rx = NULL;
	int err = smq_queue_open(a->w, a->diag0 + a->self, SMQ_RECEIVER,
				 mode_flags[mode], &a->rx);
	a->rx_mode = mode;
	return err;
}

int agent_sender(struct agent *a, unsigned to)
{
	if (to >= a->boards)
		return -EINVAL;
	if (a->tx[to])
		return 0;
	return smq_queue_open(a->w, a->diag0 + to, SMQ_SENDER, 0, &a->tx[to]);
}

int agent_send(struct agent *a, unsigned to, const struct wire_msg *m,
	       int timeout_ms)
{
	int err = agent_sender(a, to);

	return err ? err : smq_send(a->tx[to], m, sizeof(*m), timeout_ms);
}

static bool matches(const struct wire_msg *m, int op, int from)
{
	return (!op || m->h.op == op) && (from < 0 || m->h.from == from);
}

int agent_wait(struct agent *a, int op, int from, struct wire_msg *m,
	       int timeout_ms)
{
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000ull;

	for (int i = 0; i < a->nstash; i++)
		if (matches(&a->stash[i], op, from)) {
			*m = a->stash[i];
			memmove(&a->stash[i], &a->stash[i + 1],
				(size_t)(a->nstash - i - 1) * sizeof(*m));
			a->nstash--;
			return 0;
		}
	for (;;) {
		int64_t left = (int64_t)(end - now_ns()) / 1000000;
		size_t len;
		int err = smq_receive(a->rx, a->buf, a->entry_size, &len, NULL,
				      left > 0 ? (int)left : 0);
		if (err == -EAGAIN || err == -ETIMEDOUT)
			return measure_interrupted ? -EINTR : -ETIMEDOUT;
		if (err)
			return err;
		if (len != sizeof(*m) || !is_wire(a->buf, len))
			continue;  /* a data message of a test that ended */
		memcpy(m, a->buf, sizeof(*m));
		if (!a->id && m->h.op == OP_HELLO)
			a->id = m->h.id;  /* --peer: the first coordinator's */
		if (m->h.id != a->id)
			continue;  /* an earlier run's */
		if (matches(m, op, from))
			return 0;
		if (a->nstash < (int)(sizeof(a->stash) / sizeof(a->stash[0])))
			a->stash[a->nstash++] = *m;
	}
}
