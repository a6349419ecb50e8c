/* Measurement sessions between two boards (see session.h): the peer's
 * side, and setting up both halves; control.c says what they say to each
 * other. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>
#include "session.h"

#define CTL_TIMEOUT_MS 10000   /* both halves here: the peer is a fork */
#define PEER_TIMEOUT_MS 60000  /* --peer: the other half is started by hand */

/* ---- the peer: echo or drain until told to quit ---- */

/* The peer's side of a round: takes the messages as the round says and
 * checks them; in a ping-pong, answers each burst (or message) with as
 * many, made again as the initiator made them. */
static int serve_round(struct session *s, const struct session_msg *ctl)
{
	struct how h = { (ctl->how.flags & HOW_ZERO_COPY) != 0,
			 (ctl->how.flags & HOW_VERIFY) != 0,
			 ctl->how.burst > MAX_BURST ? MAX_BURST : ctl->how.burst };
	uint64_t n = 0, errors = 0;
	struct way_bufs b;
	struct way_got got;
	struct cpu_window win;
	double cpu, wall;
	bool timing = false;
	int err = way_bufs_get(&b, &h, ctl->size);

	if (!err)
		err = session_tell(s, OP_READY);
	cpu_window_start(&win);
	while (!err && (!ctl->count || n < ctl->count)) {
		if (!timing && n >= ctl->warm) {
			cpu_window_start(&win);
			timing = true;
		}
		uint64_t left = ctl->count ? ctl->count - n : UINT32_MAX;
		err = way_receive(s, &h, &b, ctl->size, n,
				  left < b.n ? (unsigned)left : b.n,
				  s->timeout_ms, &got);
		if (err)
			break;
		errors += got.wrong;
		if (ctl->op == OP_PING && got.n)
			err = way_send(s, &h, &b, ctl->size, n, got.n);
		n += got.n;
		if (got.stop)
			break;
	}
	/* the CPU share is measured over our own window, not the
	 * initiator's: the two are offset by a message or two */
	cpu_window_stop(&win, &cpu, &wall);
	way_bufs_put(&b);
	if (err)
		return err;
	struct session_msg m = { SESSION_MAGIC, OP_REPORT, s->id, ctl->size, n,
				 cpu, { errors }, 0, wall };
	MEASURE_WAIT(err, smq_send(s->tx, &m, sizeof(m), s->timeout_ms));
	return err;
}

static int serve(struct session *s, pid_t parent)
{
	size_t len;
	int waited = 0;

	for (;;) {
		/* a peer half of its own (--peer) ends on SIGINT between
		 * rounds; a forked one ignores it (its parent ends the run) */
		if (measure_interrupted)
			return -EINTR;
		int err = smq_receive(s->rx, s->buf, s->wi.geometry.entry_size,
				      &len, NULL, 1000);
		if (err == -EINTR)
			continue;
		if (err == -ETIMEDOUT) {
			/* a forked peer outlives no parent; a real one gives up
			 * after its timeout */
			if ((parent && getppid() != parent) ||
			    (!parent && s->timeout_ms >= 0 &&
			     ++waited * 1000 >= s->timeout_ms))
				return -ETIMEDOUT;
			continue;
		}
		if (err)
			return err;
		waited = 0;
		struct session_msg m;
		if (!is_ctl(s->buf, len, 0, 0))
			continue;
		memcpy(&m, s->buf, sizeof(m));
		if (m.op == OP_HELLO && !parent && m.id != s->id) {
			s->id = m.id;  /* a board started elsewhere: adopt */
			s->greeted = false;
		}
		if (m.id != s->id)
			continue;  /* left over from an earlier run */
		if (m.op == OP_HELLO) {
			/* The initiator repeats its hello until answered; answer
			 * once, or the extra READYs would be taken for the answers
			 * to its rounds. */
			if (!s->greeted &&
			    (err = session_tell(s, OP_READY)))
				return err;
			s->greeted = true;
			continue;
		}
		if (m.op == OP_QUIT)
			return 0;
		if ((m.op == OP_PING || m.op == OP_STREAM) &&
		    (err = serve_round(s, &m)))
			return err;
	}
}

/* ---- setting up ---- */

/* Whether queue q may carry a measurement, before anything is sent: it
 * must be a diagnostic queue (an application queue only with --force),
 * received by board b, hold no message (with --drain, what an interrupted
 * run left in a diagnostic queue of ours is dropped) and have no receiver.
 * With --peer, the other board's queue is the other half's to check: its
 * receiver may be that half, started first, and our own may hold that
 * half's hello already: session_open() looks at the messages.  0, or the
 * exit status. */
static int queue_free(struct smq_window *w, const struct session_opts *o,
		      int q, unsigned b, unsigned self)
{
	struct smq_queue_info qi;
	bool mine = b == self || !o->peer_mode;

	if (check_queue(w, (unsigned)q))
		return 1;
	smq_queue_info(w, (unsigned)q, &qi, sizeof(qi));
	bool diag = qi.flags & SMQ_QUEUE_DIAGNOSTIC;
	if (qi.receiver != b)
		return say_error("queue %d is received by board %u, not board %u",
			     q, qi.receiver, b);
	if (!diag && !o->force)
		return say_error("queue %d is an application queue: a measurement "
			     "would take its messages and send it its own; use the "
			     "diagnostic queues (the default) or --force", q);
	if (qi.receiver_pid && qi.receiver_alive != 0 && mine)
		return say_error("queue %d already has a receiver (pid %u%s): a "
			     "measurement never shares a queue", q,
			     qi.receiver_pid, qi.receiver_alive < 0
			     ? ", on another host" : "");
	if (qi.queued && !(o->peer_mode || (diag && o->drain)))
		return say_error("queue %d holds %" PRIu64 " message%s: a measurement "
			     "never takes them%s", q, qi.queued,
			     qi.queued == 1 ? "" : "s", diag
			     ? " (left by an interrupted run? --drain drops "
			       "them)" : "");
	return 0;
}

static void session_close(struct session *s)
{
	if (s->rx)
		smq_queue_close(s->rx);
	if (s->tx)
		smq_queue_close(s->tx);
	free(s->buf);
	if (s->w)
		smq_close(s->w);
	memset(s, 0, sizeof(*s));
}

static int session_open(struct session *s, struct ctx *ctx, unsigned self,
			unsigned peer, unsigned q_self, unsigned q_peer,
			int mode, int timeout_ms, bool drain)
{
	struct ctx mine = *ctx;
	int err;

	memset(s, 0, sizeof(*s));
	s->ctx = ctx;
	s->self = self;
	s->peer = peer;
	s->q_self = q_self;
	s->q_peer = q_peer;
	s->timeout_ms = timeout_ms;
	s->mode = mode;
	mine.board = self;
	if (open_window(&mine, 0, &s->w))
		return -1;
	smq_window_info(s->w, &s->wi, sizeof(s->wi));
	s->buf = calloc(1, s->wi.geometry.entry_size);
	struct smq_queue_info qi;
	smq_queue_info(s->w, q_self, &qi, sizeof(qi));
	s->entry_size = qi.entry_size;
	s->capacity = qi.capacity;
	smq_queue_info(s->w, q_peer, &qi, sizeof(qi));
	if (qi.capacity < s->capacity)
		s->capacity = qi.capacity;
	smq_queue_info(s->w, q_self, &qi, sizeof(qi));
	s->checksum = s->wi.features_incompat & SMQ_FEATURE_CHECKSUM;
	drain = drain && (qi.flags & SMQ_QUEUE_DIAGNOSTIC);
	if (!s->buf) {
		session_close(s);
		return say_error("out of memory");
	}
	err = smq_queue_open(s->w, q_self, SMQ_RECEIVER, (unsigned)mode, &s->rx);
	if (err == -EBUSY) {
		/* it came after queue_free looked */
		smq_queue_info(s->w, q_self, &qi, sizeof(qi));
		session_close(s);
		return say_error("queue %u already has a receiver (pid %u): a "
			     "measurement never shares a queue", q_self,
			     qi.receiver_pid);
	}
	/* the sender waits for room as the receiver waits for a message */
	if (!err)
		err = smq_queue_open(s->w, q_peer, SMQ_SENDER, (unsigned)mode,
				     &s->tx);
	if (err) {
		session_close(s);
		return window_error(ctx, "open queue", err);
	}
	/* how our receiver's waits are woken (a doorbell, or why it polls) */
	smq_queue_notify(s->rx, s->notify, sizeof(s->notify));
	/* What our queue holds before we start.  A hello of an initiator
	 * that started first is said again: it goes.  Anything else stays
	 * (peeked, never taken) and we refuse, unless --drain says it is an
	 * interrupted run's, in a diagnostic queue. */
	const void *data;
	size_t len;
	unsigned dropped = 0;
	while (!smq_peek(s->rx, &data, &len, NULL, 0)) {
		if (!is_ctl(data, len, 0, OP_HELLO) && !drain) {
			session_close(s);
			return say_error("queue %u holds messages: a measurement never "
				     "takes them%s", q_self, qi.flags &
				     SMQ_QUEUE_DIAGNOSTIC ? " (left by an "
				     "interrupted run? --drain drops them)" : "");
		}
		if (!is_ctl(data, len, 0, OP_HELLO))
			dropped++;
		smq_commit(s->rx);
	}
	if (dropped)
		say_warning("dropped %u message%s left in diagnostic queue %u", dropped,
		     dropped == 1 ? "" : "s", q_self);
	return 0;
}

static uint64_t new_id(void)
{
	uint64_t id = 0;
	if (getrandom(&id, sizeof(id), 0) != sizeof(id))
		id = now_ns() ^ ((uint64_t)getpid() << 32);
	return id | 1;
}

/* 0, or 1 after saying why the sizes do not fit the window. */
static int sizes_check(const struct session_opts *o, uint32_t entry_size,
		       const char *window)
{
	char list[160] = "";
	size_t used = 0;
	int bad = 0, first = -1;

	for (int k = 0; k < o->nsizes; k++) {
		if (o->sizes[k] <= entry_size)
			continue;
		if (first < 0)
			first = k;
		int n = snprintf(list + used, sizeof(list) - used, "%s%zu",
				 bad ? ", " : "", o->sizes[k]);
		if (n > 0 && (size_t)n < sizeof(list) - used)
			used += (size_t)n;
		bad++;
	}
	if (!bad)
		return 0;
	if (bad == 1)
		return say_error("size %zu is larger than the entry size %u of %s: "
			     "nothing measured", o->sizes[first], entry_size,
			     window);
	return say_error("sizes %s are larger than the entry size %u of %s: "
		     "nothing measured", list, entry_size, window);
}

/* 0, or 1 after saying why this process cannot run on cpu. */
static int pin_error(int cpu, const char *who)
{
	int err = cpu_pin(cpu);
	char list[256];

	if (!err)
		return 0;
	return say_error("cannot pin %s to CPU %d: %s (allowed: %s)", who, cpu,
		     strerror(-err), cpu_allowed_list(list, sizeof(list)));
}

/* The two boards of a session and the queue each receives on. */
struct pairing {
	unsigned self, peer;
	unsigned q_self, q_peer;
};

/* Checks the window for a session between this board and its peer, and
 * picks the queues: 0, or the exit status. */
static int session_pair(struct ctx *ctx, const struct session_opts *o,
			struct pairing *p)
{
	struct smq_window *w;
	struct smq_window_info wi;
	unsigned self = ctx->board;
	unsigned peer = o->peer_board >= 0 ? (unsigned)o->peer_board
					   : self == 0 ? 1 : 0;
	int rc;

	if (open_window(ctx, 0, &w))
		return 1;
	smq_window_info(w, &wi, sizeof(wi));
	if (peer >= wi.geometry.boards || peer == self) {
		smq_close(w);
		return say_error("the peer must be another board of the window's %u, "
			     "not board %u", wi.geometry.boards, peer);
	}
	unsigned lo = self < peer ? self : peer, hi = self < peer ? peer : self;
	/* board b's diagnostic queue is queues + b */
	int qlo = o->queues[0] >= 0 ? o->queues[0]
				    : (int)(wi.geometry.queues + lo);
	int qhi = o->queues[1] >= 0 ? o->queues[1]
				    : (int)(wi.geometry.queues + hi);
	/* Nothing is sent to a queue that holds messages or that another
	 * receiver takes from: checked here, before the first message. */
	for (int i = 0; i < 2; i++) {
		int q = i ? qhi : qlo;
		unsigned b = i ? hi : lo;
		if ((rc = queue_free(w, o, q, b, self))) {
			smq_close(w);
			return rc;
		}
	}
	/* the largest message both queues take */
	struct smq_queue_info qa, qb;
	smq_queue_info(w, (unsigned)qlo, &qa, sizeof(qa));
	smq_queue_info(w, (unsigned)qhi, &qb, sizeof(qb));
	uint32_t limit = qa.entry_size < qb.entry_size ? qa.entry_size
						       : qb.entry_size;
	smq_close(w);
	if (limit < sizeof(struct session_msg))
		return say_error("queues %d and %d take messages of at most %u bytes: "
			     "measurements need %zu", qlo, qhi, limit,
			     sizeof(struct session_msg));
	/* every size before the first: all of them are measured, or none */
	if ((!o->peer_mode || self < peer) &&
	    (rc = sizes_check(o, limit, wi.name)))
		return rc;
	*p = (struct pairing){ self, peer, (unsigned)(self == lo ? qlo : qhi),
			       (unsigned)(self == lo ? qhi : qlo) };
	return 0;
}

/* With --peer: only this board's half, serving or driving the rounds. */
static int session_peer_half(struct ctx *ctx, const struct session_opts *o,
			     const struct pairing *p,
			     int (*run_rounds)(struct session *s, void *arg),
			     void *arg)
{
	struct session s;
	int rc;

	if ((rc = pin_error(o->cpu[0], "this board")))
		return rc;
	int timeout_ms = o->timeout_ms ? o->timeout_ms : PEER_TIMEOUT_MS;
	if (session_open(&s, ctx, p->self, p->peer, p->q_self, p->q_peer,
			 o->mode, timeout_ms, o->drain))
		return 1;
	if (p->self > p->peer) {
		/* the driving board prints how its receiver is woken
		 * with the results; this is the only word of ours */
		if (!ctx->json)
			fprintf(stderr, "smqctl: board %u serving board %u "
				"(queues %u and %u; notification: %s)\n",
				p->self, p->peer, p->q_self, p->q_peer,
				s.notify);
		int err = serve(&s, 0);
		if (err == -ETIMEDOUT) {
			/* no driver came, or it went: the serving half's
			 * wait ended, not the driver */
			fprintf(stderr, "smqctl: board %u sent nothing for ",
				p->peer);
			print_duration(stderr, timeout_ms);
			fprintf(stderr, ": stopped serving\n");
			session_close(&s);
			return 1;
		}
		session_close(&s);
		return err == -EINTR ? say_error("interrupted")
		       : err ? window_error(ctx, "peer", err) : 0;
	}
	s.id = new_id();
	int err = session_hello(&s, timeout_ms, true);
	if (err) {
		rc = err == -EINTR ? say_error("interrupted")
		     : session_error(&s, "starting", err);
		session_close(&s);
		return rc;
	}
	rc = run_rounds(&s, arg);
	session_tell(&s, OP_QUIT);
	session_close(&s);
	return rc;
}

/* The forked peer's half: serves until told to quit, then leaves. */
static void session_child(struct ctx *ctx, const struct session_opts *o,
			  const struct pairing *p, uint64_t id, pid_t parent)
{
	/* a driver killed outright (SIGKILL) tells nobody: the kernel tells
	 * its child, at once, rather than the child's next wait ending; the
	 * child's wait ends and it gives its queue up */
	measure_orphan_signals();
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(1);
	if (pin_error(o->cpu[1], "the peer board"))
		_exit(1);
	struct session ps;
	if (session_open(&ps, ctx, p->peer, p->self, p->q_peer, p->q_self,
			 o->mode, o->timeout_ms ? o->timeout_ms : CTL_TIMEOUT_MS,
			 o->drain))
		_exit(1);
	ps.id = id;
	int err = serve(&ps, parent);
	session_close(&ps);
	_exit(err ? 1 : 0);
}

/* Both halves here: the peer is a child process, pinned apart. */
static int session_both_halves(struct ctx *ctx, const struct session_opts *o,
			       const struct pairing *p,
			       int (*run_rounds)(struct session *s, void *arg),
			       void *arg)
{
	struct session s;
	uint64_t id = new_id();
	pid_t parent = getpid();
	int rc;

	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return say_error("fork: %s", strerror(errno));
	if (pid == 0)
		session_child(ctx, o, p, id, parent);
	rc = 1;
	if (!pin_error(o->cpu[0], "this board") &&
	    !session_open(&s, ctx, p->self, p->peer, p->q_self, p->q_peer,
			  o->mode, o->timeout_ms ? o->timeout_ms : CTL_TIMEOUT_MS,
			  o->drain)) {
		s.id = id;
		int err = session_hello(&s, s.timeout_ms, false);
		if (err == -EINTR)
			rc = say_error("interrupted");
		else if (err)
			rc = session_error(&s, "starting the peer", err);
		else
			rc = run_rounds(&s, arg);
		session_tell(&s, OP_QUIT);
		session_close(&s);
	}
	/* the peer leaves at once on OP_QUIT; wait up to 5 s, in short naps
	 * (bench --baseline runs seven sessions); after a failure, a second:
	 * a peer that did not answer will not answer now */
	int status;
	for (int i = 0; i < (rc ? 200 : 1000) &&
			waitpid(pid, &status, WNOHANG) == 0; i++)
		usleep(5000);
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	return rc;
}

int session_main(struct ctx *ctx, struct session_opts *o,
		 int (*run_rounds)(struct session *s, void *arg), void *arg)
{
	struct pairing p;
	int rc;

	if ((rc = session_pair(ctx, o, &p)))
		return rc;
	/* With --peer the other half pins itself; on one host both halves
	 * would pick the same first CPU, so a peer half pins only if told. */
	if (!o->cpu_set && !o->peer_mode) {
		o->cpu[0] = cpu_pick(0);
		o->cpu[1] = cpu_pick(1);
	}
	if (o->peer_mode)
		o->cpu[1] = -1;
	if (!o->cpu_checked && (rc = session_cpu_check(o, o->mode == SMQ_POLL)))
		return rc;
	measure_signals();

	if (o->peer_mode)
		return session_peer_half(ctx, o, &p, run_rounds, arg);
	return session_both_halves(ctx, o, &p, run_rounds, arg);
}

