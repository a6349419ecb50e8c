/* Measurement sessions between two boards (see session.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>
#include "model.h"
#include "probe.h"
#include "session.h"

#define SESSION_MAGIC 0x50504d53u  /* "SMPP" */
#define CTL_TIMEOUT_MS 10000

/* ---- options ---- */

enum { OPT_MODE = 0x200, OPT_CPU, OPT_PEER, OPT_PEER_BOARD, OPT_QUEUES, OPT_CSV,
       OPT_FORCE, OPT_DRAIN };

static const struct argp_option session_options[] = {
	{ "mode", OPT_MODE, "MODE", 0,
	  "poll (busy-poll; pingpong's default), sleep (sleep at once) or "
	  "spin (spin 20 us, then sleep; bench's default)", 0 },
	{ "cpu", OPT_CPU, "A,B", 0,
	  "Pin this board to CPU A and the peer to CPU B (default: the first "
	  "two CPUs this process may use; with --peer only A counts and the "
	  "default is not to pin; -1 leaves a side unpinned)", 0 },
	{ "peer", OPT_PEER, NULL, 0,
	  "Run only this board's half, against the same command run on the "
	  "peer board (across real boards)", 0 },
	{ "peer-board", OPT_PEER_BOARD, "N", 0,
	  "The other board (default 1, or 0 when --board is not 0)", 0 },
	{ "queues", OPT_QUEUES, "A,B", 0,
	  "Queue A (received by the lower-numbered board) and queue B (by the "
	  "other); default: the two boards' diagnostic queues.  An "
	  "application queue needs --force", 0 },
	{ "drain", OPT_DRAIN, NULL, 0,
	  "Drop what an earlier, interrupted run left in this board's "
	  "diagnostic queue (never an application queue's messages)", 0 },
	{ "csv", OPT_CSV, NULL, 0, "Print comma-separated values", 0 },
	{ "force", OPT_FORCE, NULL, 0,
	  "Run even where the measurement would be misleading (both sides "
	  "busy-polling on one CPU) or would intrude on application queues", 0 },
	{ 0 }
};

void session_opts_init(struct session_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = SMQ_POLL;
	o->cpu[0] = o->cpu[1] = -1;
	o->peer_board = -1;
	o->queues[0] = o->queues[1] = -1;
}

static void two_ints(struct argp_state *st, const char *opt, const char *arg,
		     int out[2], int min, int max)
{
	char *end;
	for (int i = 0; i < 2; i++) {
		errno = 0;
		long v = strtol(arg, &end, 10);
		if (end == arg || errno || v < min || v > max ||
		    (i == 0 && *end != ',') || (i == 1 && *end))
			argp_error(st, "%s needs two numbers A,B from %d to %d, "
				   "not '%s'", opt, min, max, arg);
		out[i] = (int)v;
		arg = end + 1;
	}
}

static error_t session_parse(int key, char *arg, struct argp_state *st)
{
	struct session_opts *o = st->input;

	switch (key) {
	case OPT_MODE:
		if (!strcmp(arg, "poll"))
			o->mode = SMQ_POLL;
		else if (!strcmp(arg, "sleep"))
			o->mode = SMQ_SLEEP;
		else if (!strcmp(arg, "spin"))
			o->mode = 0;
		else
			argp_error(st, "--mode is poll, sleep or spin, not '%s'", arg);
		break;
	case OPT_CPU:
		two_ints(st, "--cpu", arg, o->cpu, -1, CPU_SETSIZE - 1);
		o->cpu_set = true;
		break;
	case OPT_PEER:
		o->peer_mode = true;
		break;
	case OPT_PEER_BOARD:
		o->peer_board = (int)arg_u32(st, "--peer-board", arg, 0,
					     SMQ_MAX_BOARDS - 1);
		break;
	case OPT_QUEUES:
		two_ints(st, "--queues", arg, o->queues, 0, SMQ_MAX_QUEUES - 1);
		break;
	case OPT_CSV:
		o->csv = true;
		break;
	case OPT_FORCE:
		o->force = true;
		break;
	case OPT_DRAIN:
		o->drain = true;
		break;
	case ARGP_KEY_END:
		/* a CPU this process may not use would leave a side unpinned
		 * while the output names the CPU; with --peer only A is ours */
		for (int i = 0; o->cpu_set && i < (o->peer_mode ? 1 : 2); i++) {
			char list[256];
			if (o->cpu[i] >= 0 && !cpu_allowed(o->cpu[i]))
				argp_error(st, "--cpu %d,%d: CPU %d is not one this "
					   "process may use (allowed: %s)", o->cpu[0],
					   o->cpu[1], o->cpu[i],
					   cpu_allowed_list(list, sizeof(list)));
		}
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int session_opts_check(const struct ctx *ctx, const struct session_opts *o)
{
	if (ctx->json && o->csv) {
		say_error("--json and --csv exclude each other");
		return EXIT_USAGE;
	}
	return 0;
}

int session_cpu_check(const struct session_opts *o, bool polls)
{
	char list[256], why[320];
	int only = cpu_allowed_count() == 1 ? cpu_pick(0) : -1;

	if (!polls || o->peer_mode)
		return 0;
	if (only >= 0)
		snprintf(why, sizeof(why), "CPU %d, the only one this process may "
			 "use (allowed: %s)", only,
			 cpu_allowed_list(list, sizeof(list)));
	else if (o->cpu[0] >= 0 && o->cpu[0] == o->cpu[1])
		snprintf(why, sizeof(why), "CPU %d (--cpu %d,%d)", o->cpu[0],
			 o->cpu[0], o->cpu[1]);
	else
		return 0;
	if (o->force) {
		say_warning("warning: both sides busy-poll on %s: each waits until the "
		     "scheduler runs the other, so the figures measure the "
		     "scheduler, not smq (--force)", why);
		return 0;
	}
	say_error("both sides would busy-poll on %s: each would wait until the "
	      "scheduler runs the other, so the figures would measure the "
	      "scheduler, not smq; give two CPUs with --cpu, or use --mode spin "
	      "or sleep, or run anyway with --force", why);
	return EXIT_USAGE;
}

const struct argp session_argp = { session_options, session_parse, NULL,
				   NULL, NULL, NULL, NULL };

/* ---- messages ---- */

void session_fill(uint8_t *buf, size_t size, uint64_t seq)
{
	if (size >= sizeof(seq))
		memcpy(buf, &seq, sizeof(seq));
}

static bool is_ctl(const uint8_t *buf, size_t len, uint64_t id, uint32_t op)
{
	struct session_msg m;

	if (len != sizeof(m))
		return false;
	memcpy(&m, buf, sizeof(m));
	return m.magic == SESSION_MAGIC && (!id || m.id == id) &&
	       (!op || m.op == op);
}

static int send_msg(struct session *s, uint32_t op, uint64_t size,
		    uint64_t count, double cpu, uint64_t errors, uint64_t warm)
{
	struct session_msg m = { SESSION_MAGIC, op, s->id, size, count, cpu,
				 errors, warm, 0 };
	return smq_send(s->tx, &m, sizeof(m), s->timeout_ms);
}

/* Waits for a control message op of this session; skips anything else. */
static int wait_msg(struct session *s, uint32_t op, struct session_msg *m,
		    int timeout_ms)
{
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000ull;

	for (;;) {
		size_t len;
		int64_t left = (int64_t)(end - now_ns()) / 1000000;
		int err = smq_receive(s->rx, s->buf, s->wi.geometry.entry_size,
				      &len, NULL, left > 0 ? (int)left : 0);
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
		  uint64_t count, uint64_t warm)
{
	struct session_msg m;
	int err = send_msg(s, op, size, count, 0, 0, warm);

	return err ? err : wait_msg(s, OP_READY, &m, CTL_TIMEOUT_MS);
}

int session_stop(struct session *s)
{
	return send_msg(s, OP_STOP, 0, 0, 0, 0, 0);
}

int session_report(struct session *s, struct session_msg *r)
{
	return wait_msg(s, OP_REPORT, r, CTL_TIMEOUT_MS * 3);
}

/* ---- the peer: echo or drain until told to quit ---- */

static int serve_round(struct session *s, const struct session_msg *ctl)
{
	size_t cap = s->wi.geometry.entry_size, len;
	uint64_t n = 0, errors = 0;
	int err = send_msg(s, OP_READY, 0, 0, 0, 0, 0);
	struct cpu_window win;
	double cpu, wall;

	cpu_window_start(&win);
	while (!err && (!ctl->count || n < ctl->count)) {
		if (n == ctl->warm)
			cpu_window_start(&win);
		err = smq_receive(s->rx, s->buf, cap, &len, NULL, s->timeout_ms);
		if (err)
			break;
		if (len == sizeof(struct session_msg) &&
		    is_ctl(s->buf, len, s->id, OP_STOP))
			break;
		if (ctl->op == OP_PING) {
			err = smq_send(s->tx, s->buf, len, s->timeout_ms);
		} else {
			uint64_t seq = n;
			if (len >= sizeof(seq))
				memcpy(&seq, s->buf, sizeof(seq));
			if (len != ctl->size || seq != n)
				errors++;
		}
		n++;
	}
	/* the CPU share is measured over our own window, not the
	 * initiator's: the two are offset by a message or two */
	cpu_window_stop(&win, &cpu, &wall);
	if (err)
		return err;
	struct session_msg m = { SESSION_MAGIC, OP_REPORT, s->id, ctl->size, n,
				 cpu, errors, 0, wall };
	return smq_send(s->tx, &m, sizeof(m), s->timeout_ms);
}

static int serve(struct session *s, pid_t parent)
{
	size_t len;
	int waited = 0;

	for (;;) {
		int err = smq_receive(s->rx, s->buf, s->wi.geometry.entry_size,
				      &len, NULL, 1000);
		if (err == -ETIMEDOUT) {
			/* a forked peer outlives no parent; a real one gives up
			 * after its timeout */
			if ((parent && getppid() != parent) ||
			    (!parent && ++waited * 1000 >= s->timeout_ms))
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
			    (err = send_msg(s, OP_READY, 0, 0, 0, 0, 0)))
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
	smq_queue_info(w, (unsigned)q, &qi);
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
	smq_window_info(s->w, &s->wi);
	s->buf = calloc(1, s->wi.geometry.entry_size);
	struct smq_queue_info qi;
	smq_queue_info(s->w, q_self, &qi);
	s->entry_size = qi.entry_size;
	drain = drain && (qi.flags & SMQ_QUEUE_DIAGNOSTIC);
	if (!s->buf) {
		session_close(s);
		return say_error("out of memory");
	}
	err = smq_queue_open(s->w, q_self, SMQ_RECEIVER, (unsigned)mode, &s->rx);
	if (err == -EBUSY) {
		/* it came after queue_free looked */
		smq_queue_info(s->w, q_self, &qi);
		session_close(s);
		return say_error("queue %u already has a receiver (pid %u): a "
			     "measurement never shares a queue", q_self,
			     qi.receiver_pid);
	}
	if (!err)
		err = smq_queue_open(s->w, q_peer, SMQ_SENDER, 0, &s->tx);
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

/* The initiator says hello until the peer answers for this session. */
static int hello(struct session *s, int timeout_ms, bool say)
{
	uint64_t start = now_ns();
	uint64_t end = start + (uint64_t)timeout_ms * 1000000ull;
	struct session_msg m;
	bool said = false;
	int wait_ms = 10;

	/* A peer starting up discards what its queue held, perhaps our first
	 * hello: say it again soon, then every 200 ms. */
	while (now_ns() < end) {
		int err = send_msg(s, OP_HELLO, 0, 0, 0, 0, 0);
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

int session_main(struct ctx *ctx, struct session_opts *o,
		 int (*run_rounds)(struct session *s, void *arg), void *arg)
{
	struct smq_window *w;
	struct smq_window_info wi;
	struct session s;
	unsigned self = ctx->board;
	unsigned peer = o->peer_board >= 0 ? (unsigned)o->peer_board
					   : self == 0 ? 1 : 0;
	int rc;

	if (open_window(ctx, 0, &w))
		return 1;
	smq_window_info(w, &wi);
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
	smq_queue_info(w, (unsigned)qlo, &qa);
	smq_queue_info(w, (unsigned)qhi, &qb);
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
	unsigned q_self = (unsigned)(self == lo ? qlo : qhi);
	unsigned q_peer = (unsigned)(self == lo ? qhi : qlo);
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

	if (o->peer_mode) {
		if ((rc = pin_error(o->cpu[0], "this board")))
			return rc;
		if (session_open(&s, ctx, self, peer, q_self, q_peer, o->mode,
				 60000, o->drain))
			return 1;
		if (self > peer) {
			/* the driving board prints how its receiver is woken
			 * with the results; this is the only word of ours */
			if (!ctx->json)
				fprintf(stderr, "smqctl: board %u serving board %u "
					"(queues %u and %u; notification: %s)\n",
					self, peer, q_self, q_peer, s.notify);
			int err = serve(&s, 0);
			session_close(&s);
			return err ? window_error(ctx, "peer", err) : 0;
		}
		s.id = new_id();
		int err = hello(&s, 60000, true);
		if (err) {
			session_close(&s);
			return err == -EINTR ? say_error("interrupted")
			       : err == -ETIMEDOUT
				? say_error("board %u did not answer within 60 s", peer)
				: window_error(ctx, "hello", err);
		}
		rc = run_rounds(&s, arg);
		send_msg(&s, OP_QUIT, 0, 0, 0, 0, 0);
		session_close(&s);
		return rc;
	}

	/* Both halves here: the peer is a child process, pinned apart. */
	uint64_t id = new_id();
	pid_t parent = getpid();
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return say_error("fork: %s", strerror(errno));
	if (pid == 0) {
		signal(SIGINT, SIG_IGN);
		if (pin_error(o->cpu[1], "the peer board"))
			_exit(1);
		struct session ps;
		if (session_open(&ps, ctx, peer, self, q_peer, q_self, o->mode,
				 CTL_TIMEOUT_MS, o->drain))
			_exit(1);
		ps.id = id;
		int err = serve(&ps, parent);
		session_close(&ps);
		_exit(err ? 1 : 0);
	}
	rc = 1;
	if (!pin_error(o->cpu[0], "this board") &&
	    !session_open(&s, ctx, self, peer, q_self, q_peer, o->mode,
			  CTL_TIMEOUT_MS, o->drain)) {
		s.id = id;
		int err = hello(&s, CTL_TIMEOUT_MS, false);
		if (err == -EINTR)
			rc = say_error("interrupted");
		else if (err)
			rc = window_error(ctx, "starting the peer", err);
		else
			rc = run_rounds(&s, arg);
		send_msg(&s, OP_QUIT, 0, 0, 0, 0, 0);
		session_close(&s);
	}
	/* the peer leaves at once on OP_QUIT; wait up to 5 s, in short naps
	 * (bench --baseline runs seven sessions) */
	int status;
	for (int i = 0; i < 1000 && waitpid(pid, &status, WNOHANG) == 0; i++)
		usleep(5000);
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	return rc;
}

void session_predict(const struct session *s, struct result *r, int n,
		     char *note, size_t len)
{
	char slot[32];
	struct probe_list list = { 0 };
	unsigned dom, bus, dev, fn;

	if (strcmp(s->wi.transport, "pci") ||
	    sscanf(s->wi.name, "pci:%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4) {
		snprintf(note, len, "none: the window is not on a PCI device");
		return;
	}
	snprintf(slot, sizeof(slot), "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	struct probe_filter f = { slot, NULL };
	if (probe_scan(&list, &f, NULL) || list.n != 1) {
		snprintf(note, len, "none: %s not found by the probe", slot);
		probe_free(&list);
		return;
	}
	const struct probe_link *k = &list.dev[0].link;
	struct pcie_link_params p = { k->sta_speed, k->sta_width, k->mps,
				      k->mrrs };
	if (!k->present || pcie_params_check(&p)) {
		snprintf(note, len, "none: %s has no PCIe link to model", slot);
		probe_free(&list);
		return;
	}
	for (int i = 0; i < n; i++)
		r[i].predicted = pcie_queue_msgs_per_s(&p, r[i].size);
	snprintf(note, len, "the PCIe model for Gen%d x%d, MPS %d, MRRS %d "
		 "(smqctl model)", p.gen, p.width, p.mps, p.mrrs);
	probe_free(&list);
}

const char *cpu_name(int cpu, char buf[16])
{
	if (cpu < 0)
		return "-";
	snprintf(buf, 16, "%d", cpu);
	return buf;
}

const char *mode_name(int mode)
{
	return mode == SMQ_POLL ? "poll" : mode == SMQ_SLEEP ? "sleep" : "spin";
}

/* ---- output ---- */

static void json_cpu(struct json *j, const char *key, int cpu)
{
	if (cpu < 0)
		json_null(j, key);
	else
		json_i64(j, key, cpu);
}

/* A number for CSV, empty when not known. */
static void csv_double(double v, int decimals)
{
	if (isfinite(v))
		printf(",%.*f", decimals, v);
	else
		fputs(",", stdout);
}

/* The columns of a row, in order: JSON keys and CSV header alike. */
static const char *const row_keys[] = {
	"name", "size", "messages", "seconds", "msgs_per_s", "mb_per_s",
};
static const char *const latency_keys[] = {
	"min_ns", "mean_ns", "median_ns", "p95_ns", "p99_ns", "p999_ns",
	"max_ns",
};
static const char *const tail_keys[] = {
	"cpu_a_percent", "cpu_b_percent", "predicted_msgs_per_s",
};
#define NKEYS(a) (sizeof(a) / sizeof((a)[0]))

void result_csv_header(bool latency)
{
	for (size_t i = 0; i < NKEYS(row_keys); i++)
		printf("%s%s", i ? "," : "", row_keys[i]);
	for (size_t i = 0; latency && i < NKEYS(latency_keys); i++)
		printf(",%s", latency_keys[i]);
	for (size_t i = 0; i < NKEYS(tail_keys); i++)
		printf(",%s", tail_keys[i]);
	putchar('\n');
}

void result_row(struct json *j, const struct result *r, bool latency)
{
	const struct lat_stats *l = &r->half_rtt;
	double lat[] = { l->min, l->mean, l->median, l->p95, l->p99, l->p999,
			 l->max };
	double tail[] = { cpu_percent(r->cpu_a, r->wall_a),
			  cpu_percent(r->cpu_b, r->wall_b),
			  r->predicted > 0 ? r->predicted : NAN };
	int tail_dec[] = { 1, 1, 1 };

	if (!j) {
		/* names are ours ("smq poll", "pipe"): no commas or quotes */
		printf("%s,%zu,%" PRIu64 ",%.9f,%.1f,%.3f", r->name, r->size,
		       r->messages, r->seconds, r->msgs_per_s, r->mb_per_s);
		for (size_t i = 0; latency && i < NKEYS(lat); i++)
			csv_double(r->has_latency ? lat[i] : NAN, i == 1 ? 1 : 0);
		for (size_t i = 0; i < NKEYS(tail); i++)
			csv_double(tail[i], tail_dec[i]);
		putchar('\n');
		return;
	}
	json_begin(j, NULL, '{');
	json_str(j, row_keys[0], r->name);
	json_u64(j, row_keys[1], r->size);
	json_u64(j, row_keys[2], r->messages);
	json_double(j, row_keys[3], r->seconds, 9);
	json_double(j, row_keys[4], r->msgs_per_s, 1);
	json_double(j, row_keys[5], r->mb_per_s, 3);
	for (size_t i = 0; latency && i < NKEYS(lat); i++)
		json_double(j, latency_keys[i], r->has_latency ? lat[i] : NAN,
			    i == 1 ? 1 : 0);
	for (size_t i = 0; i < NKEYS(tail); i++)
		json_double(j, tail_keys[i], tail[i], tail_dec[i]);
	if (r->has_histogram) {
		int lo = HIST_BUCKETS, hi = -1;
		for (int k = 0; k < HIST_BUCKETS; k++)
			if (r->histogram[k]) {
				lo = k < lo ? k : lo;
				hi = k;
			}
		json_begin(j, "histogram", '[');
		for (int k = lo; k <= hi; k++) {
			json_begin(j, NULL, '{');
			json_u64(j, "low_ns", hist_low_ns(k));
			json_u64(j, "high_ns", hist_high_ns(k));
			json_u64(j, "count", r->histogram[k]);
			json_end(j, '}');
		}
		json_end(j, ']');
	}
	json_end(j, '}');
}

static void results_json(const struct session_opts *o,
			 const struct run_info *ri, const struct result *r,
			 int n, bool latency)
{
	const struct session *s = ri->s;
	struct json j;

	json_open(&j, stdout);
	json_begin(&j, NULL, '{');
	json_str(&j, "command", ri->command);
	json_str(&j, "window", s->wi.name);
	json_str(&j, "transport", s->wi.transport);
	json_str(&j, "notification", s->notify);
	json_u64(&j, "entries", s->wi.geometry.entries);
	json_u64(&j, "entry_size", s->wi.geometry.entry_size);
	json_str(&j, "mode", mode_name(s->mode));
	json_u64(&j, "board", s->self);
	json_u64(&j, "peer_board", s->peer);
	json_u64(&j, "send_queue", s->q_peer);
	json_u64(&j, "receive_queue", s->q_self);
	json_cpu(&j, "cpu_a", ri->cpu[0]);
	json_cpu(&j, "cpu_b", ri->cpu[1]);
	json_bool(&j, "peer_mode", o->peer_mode);
	json_bool(&j, "interrupted", ri->interrupted);
	json_str(&j, "prediction", ri->prediction);
	json_begin(&j, "results", '[');
	for (int i = 0; i < n; i++)
		result_row(&j, &r[i], latency);
	json_end(&j, ']');
	json_end(&j, '}');
	json_close(&j);
}

void results_print(struct ctx *ctx, const struct session_opts *o,
		   const struct run_info *ri, const struct result *r, int n,
		   bool latency)
{
	const struct session *s = ri->s;
	char c0[16], c1[16];

	if (ctx->json) {
		results_json(o, ri, r, n, latency);
		return;
	}
	if (o->csv) {
		result_csv_header(latency);
		for (int i = 0; i < n; i++)
			result_row(NULL, &r[i], latency);
		return;
	}
	if (latency)
		printf("pingpong on %s: board %u (cpu %s) <-> board %u (cpu %s), "
		       "queues %u and %u, mode %s%s\n", s->wi.name, s->self,
		       cpu_name(ri->cpu[0], c0), s->peer, cpu_name(ri->cpu[1], c1),
		       s->q_self, s->q_peer, mode_name(s->mode),
		       ri->interrupted ? " (interrupted)" : "");
	else
		printf("%s on %s: board %u (cpu %s) -> board %u (cpu %s), queue "
		       "%u, mode %s%s\n", ri->command, s->wi.name, s->self,
		       cpu_name(ri->cpu[0], c0), s->peer, cpu_name(ri->cpu[1], c1),
		       s->q_peer, mode_name(s->mode),
		       ri->interrupted ? " (interrupted)" : "");
	printf("notification: %s; prediction: %s\n", s->notify,
	       ri->prediction);
	if (latency)
		printf("%8s %12s %12s  %7s %7s %7s %7s %7s %7s %8s  %5s %5s\n",
		       "SIZE", "ROUND TRIPS", "MSGS/S/DIR", "MIN", "MEAN",
		       "MEDIAN", "P95", "P99", "P99.9", "MAX", "CPU-A", "CPU-B");
	else
		printf("%8s %12s %12s %12s  %5s %5s\n", "SIZE", "MESSAGES",
		       "MSGS/S", "MB/S", "CPU-A", "CPU-B");
	bool pred = false;
	for (int i = 0; i < n; i++) {
		char a[16] = "-", b[16] = "-";
		double pa = cpu_percent(r[i].cpu_a, r[i].wall_a);
		double pb = cpu_percent(r[i].cpu_b, r[i].wall_b);
		pred |= r[i].predicted > 0;
		if (isfinite(pa))
			snprintf(a, sizeof(a), "%.0f%%", pa);
		if (isfinite(pb))
			snprintf(b, sizeof(b), "%.0f%%", pb);
		if (latency) {
			const struct lat_stats *l = &r[i].half_rtt;
			printf("%8zu %12" PRIu64 " %12.0f  %7.2f %7.2f %7.2f %7.2f "
			       "%7.2f %7.2f %8.2f  %5s %5s\n", r[i].size,
			       r[i].messages, r[i].msgs_per_s, l->min / 1e3,
			       l->mean / 1e3, l->median / 1e3, l->p95 / 1e3,
			       l->p99 / 1e3, l->p999 / 1e3, l->max / 1e3, a, b);
		} else {
			printf("%8zu %12" PRIu64 " %12.0f %12.1f  %5s %5s\n",
			       r[i].size, r[i].messages, r[i].msgs_per_s,
			       r[i].mb_per_s, a, b);
		}
	}
	if (pred) {
		printf("%8s %12s %14s\n", "SIZE", "MSGS/S", "PCIE BOUND");
		for (int i = 0; i < n; i++)
			printf("%8zu %12.0f %14.0f\n", r[i].size, r[i].msgs_per_s,
			       r[i].predicted);
	}
	if (latency)
		printf("latency: half round trip in microseconds; CPU: share of "
		       "one core used by each side\n");
}

void histogram_print(const uint64_t counts[HIST_BUCKETS])
{
	uint64_t most = 0, n = 0;
	int lo = HIST_BUCKETS, hi = -1;

	for (int k = 0; k < HIST_BUCKETS; k++) {
		if (!counts[k])
			continue;
		lo = k < lo ? k : lo;
		hi = k;
		n += counts[k];
		most = counts[k] > most ? counts[k] : most;
	}
	if (!n)
		return;
	printf("half round trip histogram (%" PRIu64 " samples):\n", n);
	for (int k = lo; k <= hi; k++) {
		int bar = (int)((counts[k] * 50 + most - 1) / most);
		printf("  %9.3f - %9.3f us %10" PRIu64 " %.*s\n",
		       (double)hist_low_ns(k) / 1e3, (double)hist_high_ns(k) / 1e3,
		       counts[k], counts[k] ? bar : 0,
		       "##################################################");
	}
}
