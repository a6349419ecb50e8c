/* Groups: a send to every member queue, a receive from any of them with
 * rotating fairness, sleeping on one doorbell for the whole set (the
 * groups of the SCI message-passing layer the SimpleMessageQueue paper
 * builds on).  A group handle is a queue handle per member. */
#include <stdlib.h>
#include <string.h>
#include "queue.h"

struct smq_group {
	struct smq_window *w;
	enum smq_role role;
	unsigned n;
	unsigned cursor;        /* the member whose turn it is (receive) */
	int peeked;             /* the member smq_group_peek() holds, or -1 */
	struct smq_queue *q[SMQ_GROUP_MAX_MEMBERS];
	struct smq_bell_addr bell;  /* the receivers' one doorbell */
	bool has_bell;
};

static void group_free(struct smq_group *g)
{
	for (unsigned i = 0; i < g->n; i++)
		if (g->q[i])
			smq_queue_close(g->q[i]);
	if (g->has_bell && g->w->map.tp->bell_close)
		g->w->map.tp->bell_close(&g->w->map, &g->bell);
	free(g);
}

/* What smq_queue_open() says of a board that is not queue q's receiver
 * or not among its senders, asked before any member is opened */
static int may_open(const struct smq_window *w, unsigned q,
		    enum smq_role role)
{
	if (role == SMQ_RECEIVER)
		return w->lay.receiver[q] == w->board ? 0 : -EPERM;
	if (role == SMQ_SENDER)
		return lay_sends(&w->lay, q, w->board) ? 0 : -SMQ_ENOTSENDER;
	return -EINVAL;
}

int smq_group_open_queues(struct smq_window *w, const unsigned *queues,
			  unsigned n, enum smq_role role, unsigned flags,
			  struct smq_group **gp)
{
	struct smq_group *g;
	int err;

	if (!gp)
		return -EINVAL;
	*gp = NULL;
	if (!w || !queues || n < 1 || n > SMQ_GROUP_MAX_MEMBERS)
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	if (!w->valid)
		return w->readonly ? -EROFS : -SMQ_EUNFORMATTED;
	/* application queues, each once: the diagnostic ones are for
	 * measurements */
	for (unsigned i = 0; i < n; i++) {
		if (queues[i] >= w->lay.queues - w->lay.diag_queues)
			return smq_stale(w) ? -ESTALE : -EINVAL;
		for (unsigned j = 0; j < i; j++)
			if (queues[i] == queues[j])
				return -EINVAL;
	}
	/* every member this board may open in the role, before the first
	 * open writes: a refusal costs no write */
	for (unsigned i = 0; i < n; i++)
		if ((err = may_open(w, queues[i], role)))
			return smq_stale(w) ? -ESTALE : err;
	if (!(g = calloc(1, sizeof(*g))))
		return -ENOMEM;
	g->w = w;
	g->role = role;
	g->peeked = -1;
	/* receivers share one doorbell: a ring of any member wakes the set */
	if (role == SMQ_RECEIVER && w->map.tp->bell_open &&
	    !w->map.tp->bell_open(&w->map, &g->bell))
		g->has_bell = true;
	for (unsigned i = 0; i < n; i++) {
		err = smq_queue_open_bell(w, queues[i], role, flags,
					  role == SMQ_RECEIVER ? &g->bell : NULL,
					  g->has_bell, &g->q[i]);
		if (err) {
			g->n = i;
			group_free(g);
			return err;
		}
	}
	g->n = n;
	*gp = g;
	return 0;
}

int smq_group_open(struct smq_window *w, const char *name, enum smq_role role,
		   unsigned flags, struct smq_group **gp)
{
	struct smq_group_info info;
	unsigned queues[SMQ_GROUP_MAX_MEMBERS];

	if (!gp)
		return -EINVAL;
	*gp = NULL;
	if (!w || !name)
		return -EINVAL;
	if (smq_inherited(w))
		return -EBADF;
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	int err = smq_stale(w);
	if (err)
		return err;
	unsigned count = smq_group_count(w);
	for (unsigned i = 0; i < count; i++) {
		if ((err = smq_group_get(w, i, &info)))
			return smq_stale(w) ? -ESTALE : err;
		if (strncmp(info.name, name, sizeof(info.name)))
			continue;
		for (unsigned k = 0; k < info.count; k++)
			queues[k] = info.queues[k];
		return smq_group_open_queues(w, queues, info.count, role, flags,
					     gp);
	}
	return smq_stale(w) ? -ESTALE : -ESRCH;
}

int smq_group_close(struct smq_group *g)
{
	if (!g)
		return -EINVAL;
	if (smq_inherited(g->w))
		return -EBADF;
	group_free(g);
	return 0;
}

int smq_group_member(struct smq_group *g, unsigned member)
{
	if (!g)
		return -EINVAL;
	if (smq_inherited(g->w))
		return -EBADF;
	if (member >= g->n)
		return -EINVAL;
	return (int)g->q[member]->index;
}

/* Every member in *pending first without waiting, then those that were
 * full, each with what is left of the caller's time: a stopped receiver
 * costs the others nothing.  A member that took the message leaves
 * *pending, so a retry with it sends to the others only; one that failed
 * for another reason than a full ring is not tried again in this call. */
int smq_group_send(struct smq_group *g, const void *data, size_t len,
		   uint64_t *pending, int timeout_ms)
{
	struct timespec deadline;
	uint64_t todo, full = 0;
	int first = 0;

	if (!g)
		return -EINVAL;
	if (smq_inherited(g->w))
		return -EBADF;
	if (g->role != SMQ_SENDER)
		return -EINVAL;
	uint64_t all = g->n == 64 ? ~0ull : (1ull << g->n) - 1;
	todo = (pending ? *pending : all) & all;
	if (timeout_ms > 0)
		smq_deadline(&deadline, timeout_ms);
	for (unsigned i = 0; i < g->n; i++) {
		if (!(todo >> i & 1))
			continue;
		int err = smq_send(g->q[i], data, len, 0);
		if (!err)
			todo &= ~(1ull << i);
		else if (err == -EAGAIN)
			full |= 1ull << i;
		else if (!first)
			first = err;
	}
	for (unsigned i = 0; i < g->n && timeout_ms != 0; i++) {
		if (!(full >> i & 1))
			continue;
		int left = timeout_ms > 0 ? smq_ms_left(&deadline)
					  : SMQ_WAIT_FOREVER;
		int err = smq_send(g->q[i], data, len, left);
		if (!err)
			todo &= ~(1ull << i);
		else if (err == -EINTR) {
			first = err;  /* a signal ends the whole wait */
			break;
		} else if (!first)
			first = err == -EAGAIN ? -ETIMEDOUT : err;
	}
	if (todo && !first)
		first = timeout_ms == 0 ? -EAGAIN : -ETIMEDOUT;
	if (pending)
		*pending = todo;
	return todo ? first : 0;
}

/* The next member with a message, from the one whose turn it is, or -1. */
static int ready_member(struct smq_group *g)
{
	for (unsigned i = 0, m = g->cursor; i < g->n;
	     i++, m = m + 1 == g->n ? 0 : m + 1)
		if (smq_queue_ready(g->q[m]))
			return (int)m;
	return -1;
}

/* The member whose message comes next, waiting for one up to timeout_ms:
 * the first with a message from the one whose turn it is.  A fault (a
 * stale handle, a damaged lane) names its member in *queue. */
static int next_member(struct smq_group *g, int timeout_ms, unsigned *queue)
{
	struct timespec deadline;
	unsigned which = SMQ_GROUP_MAX_MEMBERS;

	if (g->peeked >= 0)
		return g->peeked;
	if (timeout_ms > 0)
		smq_deadline(&deadline, timeout_ms);
	for (;;) {
		int m = ready_member(g);
		if (m >= 0)
			return m;
		int left = timeout_ms > 0 ? smq_ms_left(&deadline) : timeout_ms;
		if (timeout_ms > 0 && !left)
			return -ETIMEDOUT;
		int s = smq_wait_any(g->q, g->n, left, &which);
		if (s < 0) {
			if (queue && which < g->n)
				*queue = g->q[which]->index;
			return s;
		}
	}
}

/* Rotating fairness: after a member's message, the turn passes to the
 * next member, so a flooded member cannot starve the others; within a
 * member the sending boards take turns as they do in a queue. */
static void pass_turn(struct smq_group *g, unsigned m)
{
	g->cursor = m + 1 == g->n ? 0 : m + 1;
}

int smq_group_receive(struct smq_group *g, void *buf, size_t cap,
		      size_t *len, unsigned *sender, unsigned *queue,
		      int timeout_ms)
{
	if (!g)
		return -EINVAL;
	if (smq_inherited(g->w))
		return -EBADF;
	if (g->role != SMQ_RECEIVER || (cap && !buf))
		return -EINVAL;
	for (;;) {
		int m = next_member(g, timeout_ms, queue);
		if (m < 0)
			return m;
		int err = smq_receive(g->q[m], buf, cap, len, sender, 0);
		if (err == -EAGAIN)
			continue;
		if (queue)
			*queue = g->q[m]->index;
		if (err == -EMSGSIZE) {
			/* it stays queued, and peeked in its queue as
			 * smq_receive() leaves it: the member keeps the
			 * turn, and a peek its hold */
			g->peeked = m;
			g->cursor = (unsigned)m;
			return err;
		}
		g->peeked = -1;
		pass_turn(g, (unsigned)m);
		return err;
	}
}

int smq_group_peek(struct smq_group *g, const void **data, size_t *len,
		   unsigned *sender, unsigned *queue, int timeout_ms)
{
	if (!g)
		return -EINVAL;
	if (smq_inherited(g->w))
		return -EBADF;
	if (g->role != SMQ_RECEIVER || !data)
		return -EINVAL;
	for (;;) {
		int m = next_member(g, timeout_ms, queue);
		if (m < 0)
			return m;
		int err = smq_peek(g->q[m], data, len, sender, 0);
		if (err == -EAGAIN)
			continue;
		if (queue)
			*queue = g->q[m]->index;
		/* a damaged message was taken off: the next member's turn */
		g->peeked = err ? -1 : m;
		if (err == -SMQ_EPAYLOAD)
			pass_turn(g, (unsigned)m);
		return err;
	}
}

int smq_group_commit(struct smq_group *g)
{
	if (!g)
		return -EINVAL;
	if (smq_inherited(g->w))
		return -EBADF;
	if (g->role != SMQ_RECEIVER)
		return -EINVAL;
	if (g->peeked < 0)
		return -ENOMSG;
	unsigned m = (unsigned)g->peeked;
	g->peeked = -1;
	int err = smq_commit(g->q[m]);
	if (!err)
		pass_turn(g, m);
	return err;
}
