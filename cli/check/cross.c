/* smqctl check between boards: the coordinator.  Every other board takes
 * part through an agent (agent.c): one forked here for each board that
 * shares this host, or 'smqctl --board N check --peer' on its own host.
 * The coordinator says hello to each, reads every region through its own
 * mapping, then runs each test pair by pair and gathers the figures:
 * the map (map.c words the verdict), doorbells, the raw link, the queues.
 * A pair whose view is wrong gets nothing sent through it. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cross.h"

static uint64_t new_id(void)
{
	uint64_t id = 0;

	if (getrandom(&id, sizeof(id), 0) != sizeof(id))
		id = now_ns() ^ ((uint64_t)getpid() << 32);
	return id | 1;
}

/* Which boards this host runs an agent for: those of this host, or of
 * a transport that is one host's (shm, split), unless one waits there
 * already (--peer); -1 with why when a board cannot take part.  A file
 * may be memory other hosts share (file@OFFSET: on CXL's backing file):
 * a board of it that ran on another host answers from there; one that
 * never ran anywhere is taken to be this host's. */
static int plan(struct cross *x, char *why, size_t n)
{
	struct smq_window *w;
	struct smq_window_info wi;
	int err = smq_open(window_spec(x->cr->ctx), 0, SMQ_OPEN_READONLY, &w);

	if (err) {
		snprintf(why, n, "the window did not open: %s", smq_strerror(err));
		return -1;
	}
	smq_window_info(w, &wi, sizeof(wi));
	x->boards = wi.geometry.boards;
	bool one_host = !strcmp(wi.transport, "shm") ||
			!strcmp(wi.transport, "split");
	bool file = !strcmp(wi.transport, "file");
	for (unsigned b = 0; b < x->boards; b++) {
		struct smq_board_info bi;
		struct smq_queue_info qi;
		if (b == x->self)
			continue;
		smq_board_info(w, b, &bi, sizeof(bi));
		smq_queue_info(w, wi.geometry.queues + b, &qi, sizeof(qi));
		bool waiting = qi.receiver_pid && qi.receiver_alive != 0;
		x->local[b] = !waiting && (one_host || bi.same_host ||
					   (file && !bi.boot));
	}
	smq_close(w);
	return 0;
}

/* An agent the coordinator stops: it leaves its wait and closes its
 * handles (killed, it would leave them dead, and its board shown dead). */
static void stop_agent(int sig)
{
	(void)sig;
	measure_interrupted = 1;
}

static void agent_child(struct cross *x, unsigned b, uint64_t id)
{
	struct agent a;
	char why[300];

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, stop_agent);
	if (agent_open(&a, x->cr->ctx, b, CHILD_TIMEOUT_MS, why, sizeof(why))) {
		fprintf(stderr, "smqctl: check: %s\n", why);
		_exit(1);
	}
	a.id = id;
	int err = agent_serve(&a);
	agent_close(&a);
	_exit(err ? 1 : 0);
}

static int fork_agents(struct cross *x)
{
	fflush(NULL);
	for (unsigned b = 0; b < x->boards; b++) {
		if (!x->local[b])
			continue;
		pid_t pid = fork();
		if (pid < 0)
			return -errno;
		if (pid == 0)
			agent_child(x, b, x->me.id);
		x->child[b] = pid;
	}
	return 0;
}

static void reap_agents(struct cross *x)
{
	struct wire_msg m;

	for (unsigned b = 0; b < x->boards; b++) {
		if (b == x->self || !x->ready[b] || !x->me.w)
			continue;
		wire_init(&x->me, &m, OP_QUIT);
		agent_send(&x->me, b, &m, 1000);
	}
	/* one that was not told (it never answered, or we could not tell
	 * it) is stopped by a signal, and closes its handles; killed only
	 * if it does not leave even then */
	for (unsigned b = 0; b < x->boards; b++)
		if (x->child[b] && (!x->ready[b] || !x->me.w))
			kill(x->child[b], SIGTERM);
	for (unsigned b = 0; b < x->boards; b++) {
		int st;
		if (!x->child[b])
			continue;
		for (int i = 0; i < 400 && !waitpid(x->child[b], &st, WNOHANG);
		     i++)
			usleep(5000);
		if (!waitpid(x->child[b], &st, WNOHANG)) {
			kill(x->child[b], SIGKILL);
			waitpid(x->child[b], &st, 0);
		}
	}
}

/* Hello to every other board until each answers or the timeout: the
 * answer brings the first region its view reads wrong. */
static void hellos(struct cross *x)
{
	uint64_t end = now_ns() + (uint64_t)x->cr->o->timeout_ms * 1000000ull;
	unsigned missing = x->boards - 1;
	struct wire_msg m;
	int wait_ms = 10;

	for (unsigned b = 0; b < x->boards; b++)
		missing -= x->unseen[b];
	while (missing && now_ns() < end && !measure_interrupted) {
		for (unsigned b = 0; b < x->boards; b++) {
			if (b == x->self || x->ready[b] || x->unseen[b])
				continue;
			wire_init(&x->me, &m, OP_HELLO);
			agent_send(&x->me, b, &m, 0);
		}
		while (!agent_wait(&x->me, OP_READY, -1, &m, wait_ms)) {
			unsigned b = m.h.from;
			if (b >= x->boards || x->ready[b])
				continue;
			x->ready[b] = true;
			missing--;
			x->views_wrong[b] = m.count;
			if (m.count)
				x->bad_view[b] = m.u.map;
		}
		wait_ms = wait_ms < 100 ? 2 * wait_ms : 200;
	}
}

/* What every cross check says of the boards that did not take part. */
static bool absent_boards(struct cross *x)
{
	for (unsigned b = 0; b < x->boards; b++) {
		if (x->ready[b] || x->unseen[b])
			continue;
		for (int i = CK_MAP; i <= CK_QUEUES; i++) {
			check_set(x->cr, (enum check_id)i, CHECK_FAIL, "board %u "
				  "did not answer within %d ms", b,
				  x->cr->o->timeout_ms);
			check_next(x->cr, (enum check_id)i, x->local[b]
				   ? "see why its agent failed (above, on "
				     "standard error)"
				   : "run 'smqctl --board %u check --peer' on "
				     "its host, before the timeout (one that "
				     "runs and says its view of this board's "
				     "region reads wrong does not answer)", b);
		}
		return true;
	}
	return false;
}

static int coordinate(struct check_run *cr, struct cross *x)
{
	char why[300];

	x->me.id = new_id();
	if (plan(x, why, sizeof(why))) {
		check_skip_group(cr, "cross", "%s", why);
		return 0;
	}
	if (x->boards < 2) {
		check_skip_group(cr, "cross", "the window has one board: "
				 "nothing between boards");
		return 0;
	}
	if (fork_agents(x)) {
		check_skip_group(cr, "cross", "cannot fork the boards' agents");
		return 0;
	}
	uint64_t id = x->me.id;
	if (agent_open(&x->me, cr->ctx, x->self, STEP_TIMEOUT_MS, why,
		       sizeof(why))) {
		check_skip_group(cr, "cross", "%s", why);
		x->me.w = NULL;
		reap_agents(x);
		return 0;
	}
	x->me.id = id;
	x->ready[x->self] = true;
	/* a hello is a write into the other's region: none through a view
	 * that reads wrong */
	for (unsigned b = 0; b < x->boards; b++) {
		smq_map_look(x->me.w, b, &x->look[b], sizeof(x->look[b]));
		x->unseen[b] = x->look[b].kind != SMQ_MAP_OK;
	}
	hellos(x);
	/* again, every area cleared now: a view that lands in one says by
	 * how much it is off */
	for (unsigned b = 0; b < x->boards; b++)
		smq_map_look(x->me.w, b, &x->look[b], sizeof(x->look[b]));
	absent_boards(x);
	cross_map(x);
	cross_bells(x);
	cross_raw(x);
	cross_queues(x);
	reap_agents(x);
	agent_close(&x->me);
	return 0;
}

/* --peer: this board's agent, until the coordinator says it is done. */
static int serve_peer(struct check_run *cr, struct cross *x)
{
	char why[300];

	if (agent_open(&x->me, cr->ctx, x->self, cr->o->timeout_ms, why,
		       sizeof(why))) {
		check_set(cr, CK_MAP, CHECK_FAIL, "%s", why);
		check_skip_group(cr, "cross", "this board's agent did not start");
		return 0;
	}
	if (!cr->ctx->json)
		fprintf(stderr, "smqctl: board %u waiting for the board that "
			"runs 'smqctl check' (up to %d ms)\n", x->self,
			cr->o->timeout_ms);
	int err = agent_serve(&x->me);
	bool greeted = x->me.greeted;
	agent_close(&x->me);
	if (!greeted) {
		for (int i = CK_MAP; i <= CK_QUEUES; i++) {
			check_set(cr, (enum check_id)i, CHECK_FAIL, "no board "
				  "asked for the checks between boards within "
				  "%d ms", cr->o->timeout_ms);
			check_next(cr, (enum check_id)i, "run 'smqctl check' "
				   "(without --peer) on the board that drives");
		}
		return 0;
	}
	check_skip_group(cr, "cross", "this board took part (--peer)%s; the "
			 "board that ran 'smqctl check' reports them",
			 err ? ", but its part ended early" : "");
	return 0;
}

int check_boards(struct check_run *cr)
{
	static struct cross x;
	bool any = false;

	for (int i = CK_MAP; i <= CK_QUEUES; i++)
		any |= check_wanted(cr, (enum check_id)i);
	if (!any)
		return 0;
	memset(&x, 0, sizeof(x));
	x.cr = cr;
	x.self = cr->ctx->board;
	return cr->o->peer_mode ? serve_peer(cr, &x) : coordinate(cr, &x);
}
