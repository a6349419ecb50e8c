/* smqctl check between boards: a board's agent.  It receives on its own
 * diagnostic queue and sends on the others', and does what the
 * coordinator asks: clear, write or read back the scratch areas, echo a
 * partner's pings while asleep on its doorbell, measure.  The coordinator
 * is an agent too, and does its own part in place of a message to
 * itself. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "wire.h"

/* Our diagnostic queue must be free: no receiver, and nothing in it but
 * what an earlier check left, which is ours to drop. */
static int take_queue(struct agent *a, char *why, size_t n)
{
	struct smq_queue_info qi;
	unsigned q = a->diag0 + a->self;

	smq_queue_info(a->w, q, &qi, sizeof(qi));
	if (qi.receiver_pid && qi.receiver_alive != 0) {
		snprintf(why, n, "board %u's diagnostic queue %u has a receiver "
			 "(pid %u%s): another check or measurement runs",
			 a->self, q, qi.receiver_pid, qi.receiver_alive < 0
			 ? ", another host" : "");
		return -EBUSY;
	}
	int err = agent_mode(a, SERVE_SPIN);
	if (err) {
		snprintf(why, n, "board %u cannot receive on its diagnostic "
			 "queue %u: %s", a->self, q, smq_strerror(err));
		return err;
	}
	const void *data;
	size_t len;
	while (!smq_peek(a->rx, &data, &len, NULL, 0)) {
		if (!is_wire(data, len)) {
			snprintf(why, n, "board %u's diagnostic queue %u holds "
				 "messages that are not check's (smqctl --board "
				 "%u pingpong --drain drops them)", a->self, q,
				 a->self);
			return -ENOTEMPTY;
		}
		smq_commit(a->rx);
	}
	return 0;
}

int agent_open(struct agent *a, struct ctx *ctx, unsigned self,
	       int timeout_ms, char *why, size_t n)
{
	struct smq_window_info wi;
	struct smq_queue_info qi;

	memset(a, 0, sizeof(*a));
	a->ctx = ctx;
	a->self = self;
	a->timeout_ms = timeout_ms;
	int err = smq_open(window_spec(ctx), self, 0, &a->w);
	if (err) {
		snprintf(why, n, "board %u cannot open the window: %s", self,
			 smq_strerror(err));
		return err;
	}
	smq_window_info(a->w, &wi, sizeof(wi));
	a->boards = wi.geometry.boards;
	a->diag0 = wi.geometry.queues;
	a->scratch = wi.features_compat & SMQ_FEATURE_SCRATCH;
	smq_queue_info(a->w, a->diag0, &qi, sizeof(qi));
	a->entry_size = qi.entry_size;
	if (a->entry_size < sizeof(struct wire_msg)) {
		snprintf(why, n, "the diagnostic queues take messages of at "
			 "most %u bytes: check needs %zu (smqctl init "
			 "--entry-size)", a->entry_size, sizeof(struct wire_msg));
		agent_close(a);
		return -EMSGSIZE;
	}
	a->buf = malloc(a->entry_size);
	if (!a->buf) {
		snprintf(why, n, "out of memory");
		agent_close(a);
		return -ENOMEM;
	}
	if ((err = take_queue(a, why, n))) {
		agent_close(a);
		return err;
	}
	/* an area of words that say their own offsets: a view that wraps
	 * or is shifted into it says by how much (smq_map_look) */
	if (a->scratch && (err = smq_map_clear(a->w))) {
		snprintf(why, n, "board %u cannot clear its scratch area: %s",
			 self, smq_strerror(err));
		agent_close(a);
		return err;
	}
	return 0;
}

void agent_close(struct agent *a)
{
	if (a->rx)
		smq_queue_close(a->rx);
	for (unsigned b = 0; b < SMQ_MAX_BOARDS; b++)
		if (a->tx[b])
			smq_queue_close(a->tx[b]);
	if (a->w)
		smq_close(a->w);
	free(a->buf);
	memset(a, 0, sizeof(*a));
}

static int reply(struct agent *a, unsigned to, int op, int status)
{
	struct wire_msg r;

	wire_init(a, &r, op);
	r.status = status;
	return agent_send(a, to, &r, a->timeout_ms);
}

/* One request of the coordinator, done. */
static int handle(struct agent *a, const struct wire_msg *m)
{
	struct wire_msg r;
	unsigned c = m->h.from;

	wire_init(a, &r, OP_DONE);
	switch (m->h.op) {
	case OP_HELLO:
		/* the coordinator says hello until answered: answer once,
		 * or the other answers would be taken for later ones */
		if (a->greeted)
			return 0;
		a->greeted = true;
		r.h.op = OP_READY;
		for (unsigned b = 0; b < a->boards; b++) {
			struct smq_map_result look;
			smq_map_look(a->w, b, &look, sizeof(look));
			if (look.kind != SMQ_MAP_OK && !r.count++)
				r.u.map = look;
			/* an answer is a write into the coordinator's
			 * region: none through a view that reads wrong */
			if (look.kind != SMQ_MAP_OK && b == c) {
				fprintf(stderr, "smqctl: check: board %u's view "
					"of board %u's region reads wrong (offset "
					"%#llx, %s): it does not answer\n", a->self,
					c, (unsigned long long)look.offset,
					look.what);
				return -EIO;
			}
		}
		return agent_send(a, c, &r, a->timeout_ms);
	case OP_CLEAR:
		return reply(a, c, OP_DONE, smq_map_clear(a->w));
	case OP_WRITE:
		return reply(a, c, OP_DONE, smq_map_write(a->w, m->a, m->nonce));
	case OP_VERIFY:
		r.h.op = OP_RESULT;
		r.status = smq_map_verify(a->w, m->a, m->nonce, &r.u.map,
					  sizeof(r.u.map));
		return agent_send(a, c, &r, a->timeout_ms);
	case OP_SERVE:
		return agent_serve_pair(a, m->a, (int)m->b, c);
	case OP_RING:
		r.h.op = OP_BELLS;
		measure_bells(a, m->a, &r.u.bell);
		return agent_send(a, c, &r, a->timeout_ms);
	case OP_RAW:
		r.h.op = OP_RAWFIG;
		measure_raw(a, m->a, &r.u.raw);
		return agent_send(a, c, &r, a->timeout_ms);
	case OP_QUEUE:
		r.h.op = OP_QUEUEFIG;
		measure_queue(a, m->a, &r.u.queue);
		return agent_send(a, c, &r, a->timeout_ms);
	default:
		return 0;
	}
}

/* A board at work for another: echo its pings, count its stream, switch
 * modes when it says, until it ends; then tell it what came, and the
 * coordinator that we are done. */
int agent_serve_pair(struct agent *a, unsigned partner, int mode,
		     unsigned coordinator)
{
	struct wire_head h;
	uint64_t count = 0, errors = 0;
	int err = agent_mode(a, mode);

	if (coordinator != a->self)
		reply(a, coordinator, OP_READY, err);
	if (err)
		return err;
	for (;;) {
		size_t len;
		err = smq_receive(a->rx, a->buf, a->entry_size, &len, NULL,
				  a->timeout_ms);
		if (err)
			break;
		if (!is_wire(a->buf, len))
			continue;
		memcpy(&h, a->buf, sizeof(h));
		if (h.id != a->id || h.from != partner)
			continue;
		if (h.op == OP_PING) {
			((struct wire_head *)a->buf)->op = OP_PONG;
			((struct wire_head *)a->buf)->from = (uint16_t)a->self;
			if ((err = agent_sender(a, partner)) ||
			    (err = smq_send(a->tx[partner], a->buf, len,
					    a->timeout_ms)))
				break;
		} else if (h.op == OP_STREAM) {
			errors += h.seq != count;
			count++;
		} else if (h.op == OP_MODE && len == sizeof(struct wire_msg)) {
			struct wire_msg m;
			memcpy(&m, a->buf, sizeof(m));
			if ((err = agent_mode(a, (int)m.b)))
				break;
			reply(a, partner, OP_READY, 0);
		} else if (h.op == OP_END) {
			struct wire_msg m;
			wire_init(a, &m, OP_ENDED);
			m.nonce = count;
			m.count = (uint32_t)errors;
			err = agent_send(a, partner, &m, a->timeout_ms);
			break;
		}
	}
	int merr = agent_mode(a, SERVE_SPIN);
	if (coordinator != a->self)
		reply(a, coordinator, OP_DONE, err ? err : merr);
	return err ? err : merr;
}

int agent_serve(struct agent *a)
{
	struct wire_msg m;
	uint64_t idle_end = now_ns() + (uint64_t)a->timeout_ms * 1000000ull;

	for (;;) {
		/* a slice at a time, so that a stop (measure_interrupted:
		 * -EINTR) is seen within one */
		int err = agent_wait(a, 0, -1, &m, SERVE_SLICE_MS);
		if (err == -ETIMEDOUT && now_ns() < idle_end)
			continue;
		if (err)
			return err;
		idle_end = now_ns() + (uint64_t)a->timeout_ms * 1000000ull;
		if (m.h.op == OP_QUIT)
			return 0;
		if ((err = handle(a, &m)) && err != -ETIMEDOUT)
			return err;
	}
}
