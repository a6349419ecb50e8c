/* The control messages of a measurement session (see session.h and
 * control.h): what the initiator says to drive the rounds and what it
 * waits for, and what either side says alone.  Below session.c, which
 * sets a session up and serves the peer's side with them. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "session.h"

/* A deadline timeout_ms from now; forever (UINT64_MAX) when negative. */
static uint64_t deadline(int timeout_ms)
{
	return timeout_ms < 0 ? UINT64_MAX
			      : now_ns() + (uint64_t)timeout_ms * 1000000ull;
}

int session_tell(struct session *s, uint32_t op)
{
	struct session_msg m = { SESSION_MAGIC, op, s->id, 0, 0, 0, { 0 }, 0,
				 0 };
	int err;

	MEASURE_WAIT(err, smq_send(s->tx, &m, sizeof(m), s->timeout_ms));
	return err;
}

/* Waits for a control message op of this session; skips anything else. */
static int wait_msg(struct session *s, uint32_t op, struct session_msg *m,
		    int timeout_ms)
{
	uint64_t end = deadline(timeout_ms);

	for (;;) {
		size_t len;
		int64_t left = (int64_t)(end - now_ns()) / 1000000;
		int err = smq_receive(s->rx, s->buf, s->wi.geometry.entry_size,
				      &len, NULL, timeout_ms < 0 ? SMQ_WAIT_FOREVER
				      : left > 0 ? (int)left : 0);
		if (err == -EINTR && !measure_orphaned)
			continue;  /* as MEASURE_WAIT, with what time is left */
		if (err == -EAGAIN)
			err = -ETIMEDOUT;
		if (err)
			return err;
		if (is_ctl(s->buf, len, s->id, op)) {
			memcpy(m, s->buf, sizeof(*m));
			return 0;
		}
	}
}

int session_round(struct session *s, uint32_t op, uint64_t size,
		  uint64_t count, uint64_t warm, const struct how *h)
{
	struct session_msg m = { SESSION_MAGIC, op, s->id, size, count, 0,
				 { 0 }, warm, 0 };
	int err;

	m.how.flags = (h->zero_copy ? HOW_ZERO_COPY : 0) |
		      (h->verify ? HOW_VERIFY : 0);
	m.how.burst = h->burst;
	MEASURE_WAIT(err, smq_send(s->tx, &m, sizeof(m), s->timeout_ms));
	if (err)
		return err;
	return wait_msg(s, OP_READY, &m, s->timeout_ms);
}

int session_stop(struct session *s)
{
	return session_tell(s, OP_STOP);
}

int session_report(struct session *s, struct session_msg *r)
{
	/* the peer reports once it has taken what was sent: a lap of its
	 * ring at most, within the time it may take for each message */
	return wait_msg(s, OP_REPORT, r, s->timeout_ms);
}

int session_error(const struct session *s, const char *what, int err)
{
	if (err != -ETIMEDOUT)
		return window_error(s->ctx, what, err);
	fprintf(stderr, "smqctl: %s: board %u did not answer within ", what,
		s->peer);
	print_duration(stderr, s->timeout_ms);
	fprintf(stderr, " (queues %u and %u; -T waits longer)\n", s->q_peer,
		s->q_self);
	return 1;
}

int session_hello(struct session *s, int timeout_ms, bool say)
{
	uint64_t start = now_ns();
	uint64_t end = deadline(timeout_ms);
	struct session_msg m;
	bool said = false;
	int wait_ms = 10;

	/* A peer starting up discards what its queue held, perhaps our first
	 * hello: say it again soon, then every 200 ms. */
	while (now_ns() < end) {
		int err = session_tell(s, OP_HELLO);
		if (!err)
			err = wait_msg(s, OP_READY, &m, wait_ms);
		if (err != -ETIMEDOUT)
			return err;
		if (measure_interrupted)
			return -EINTR;
		wait_ms = wait_ms < 100 ? 2 * wait_ms : 200;
		if (say && !said && now_ns() - start >= 200000000ull) {
			fprintf(stderr, "smqctl: waiting for board %u (run the "
				"same command with --peer there)\n", s->peer);
			said = true;
		}
	}
	return -ETIMEDOUT;
}
