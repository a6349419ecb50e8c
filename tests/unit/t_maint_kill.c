/* Init and clear killed at random points, and at each step they take
 * (the test builds' hooks): the window they leave is either usable or
 * refused by every board -- and smq_validate (what dump shows) says which,
 * truthfully -- and the next clear or init, run plainly (no force),
 * finishes it.  After all of it, a queue carries a message again.
 *
 * The random kills go on for KILL_SECS or up to KILL_MOST, whichever ends
 * first, and at least KILL_FLOOR (a busy machine makes fewer, never none:
 * testlib's test_going());
 * SMQ_KILLS=N makes exactly N (make reliability), which is then the
 * floor. */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include "testint.h"
#include "testlib.h"

/* Big enough that an init or clear takes a while to write. */
static const struct smq_geometry G = { 4, 8, 64, 4096, NULL };
static const struct smq_geometry G_OTHER = { 3, 5, 32, 8192, NULL };
/* 40 kills a second on two idle cores, 30 beside two CPU hogs */
#define KILL_SECS 2.5
#define KILL_MOST 100
#define KILL_FLOOR 20

static uint64_t mono_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

struct job {
	const char *spec;
	int kind;  /* 0 clear all, 1 clear one, 2 init same, 3 init other */
	int die_at; /* a hook to die at, or 0 */
};

static int die_at;
static void die_here(enum smq_hook where)
{
	if ((int)where == die_at)
		raise(SIGKILL);
}

static int maintain(void *p)
{
	struct job *j = p;
	struct smq_window *w;

	if (smq_open(j->spec, 0, SMQ_OPEN_RAW, &w))
		_exit(3);
	die_at = j->die_at;
	smq_test_hook = die_here;
	switch (j->kind) {
	case 0: smq_clear(w, -1); break;
	case 1: smq_clear(w, 3); break;
	case 2: smq_init(w, &G, sizeof(G)); break;
	default: smq_init(w, &G_OTHER, sizeof(G_OTHER)); break;
	}
	smq_close(w);
	return 0;
}

/* How long one maintenance takes here, to spread the kills over it. */
static uint64_t time_one(const char *spec, int kind)
{
	struct job j = { spec, kind, 0 };
	uint64_t t0 = mono_us();
	test_wait_ok(test_fork(maintain, &j), "a maintenance");
	return mono_us() - t0;
}

/* What every other call says of the window, as a board would see it;
 * and, in *q3, what opening queue 3 (the one a clear of one queue
 * empties) says, and in *q2 another queue. */
static int board_verdict(const char *spec, int *q3, int *q2)
{
	struct smq_window *w;
	struct smq_queue *q;
	int err = smq_open(spec, 1, 0, &w);

	*q3 = *q2 = err;
	if (err)
		return err;
	err = smq_announce(w);
	if (!(*q3 = smq_queue_open(w, 3, SMQ_SENDER, 0, &q)))
		smq_queue_close(q);
	if (!(*q2 = smq_queue_open(w, 2, SMQ_SENDER, 0, &q)))
		smq_queue_close(q);
	smq_close(w);
	return err;
}

/* What the kills left, by verdict */
struct tally {
	int usable, unfinished, unfinished_one, unformatted;
	int finished_by[2];     /* init, clear */
};

/* Kill i: the maintenance j, killed at its step (j->die_at) or after
 * delay us; dump's verdict of what it left against every board's, and the
 * next maintenance, run plainly, finishes it. */
static void kill_one(const char *spec, int i, const struct job *j,
		     uint64_t delay, struct tally *t)
{
	struct smq_window *w;
	int status;

	pid_t pid = test_fork(maintain, (void *)j);
	if (!j->die_at) {
		uint64_t until = mono_us() + delay;
		while (mono_us() < until)
			;
		kill(pid, SIGKILL);
	}
	waitpid(pid, &status, 0);
	if (j->die_at && !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
		FAIL("step %d of kind %d: not killed there", j->die_at,
		     j->kind);

	/* dump's verdict against every board's */
	struct smq_fault f;
	int v, b, q3, q2;
	if (smq_open(spec, 0, SMQ_OPEN_RAW, &w))
		FAIL("kill %d: cannot attach raw", i);
	v = smq_validate(w, &f, sizeof(f));
	const struct smq_sb *sb = at(w, 0);
	uint32_t one = sb ? sb->maint_queue : 0;
	smq_close(w);
	b = board_verdict(spec, &q3, &q2);
	if (v == 0) {
		t->usable++;
		if (b || q3 || q2)
			FAIL("kill %d: validate says usable, a board gets %s "
			     "(queue 3: %s)", i, smq_strerror(b),
			     smq_strerror(q3));
	} else if (v == -SMQ_EINCOMPLETE && one) {
		/* a clear of one queue: the rest of the window is
		 * usable; that queue is refused once it was told */
		t->unfinished_one++;
		if (one != 4 || b || q2 ||
		    (q3 && q3 != -SMQ_EINCOMPLETE))
			FAIL("kill %d: validate says a clear of queue %u "
			     "unfinished, a board gets %s (queue 3: %s, "
			     "queue 2: %s)", i, one - 1, smq_strerror(b),
			     smq_strerror(q3), smq_strerror(q2));
	} else if (v == -SMQ_EINCOMPLETE) {
		/* a board is refused: no longer let in (the phase), or
		 * its notice told (the notices) */
		t->unfinished++;
		if (b != (strcmp(f.field, "maint_phase") ? -ESTALE
						       : -SMQ_EINCOMPLETE))
			FAIL("kill %d: validate says unfinished (%s), a board "
			     "gets %s", i, f.field, smq_strerror(b));
	} else if (v == -SMQ_EUNFORMATTED || v == -SMQ_ETOOSMALL) {
		/* killed in init before the magic: unformatted */
		t->unformatted++;
		if (!b)
			FAIL("kill %d: validate says %s, a board attaches",
			     i, smq_strerror(v));
	} else {
		FAIL("kill %d (kind %d, %llu us): validate says %s (%s)", i,
		     j->kind, (unsigned long long)delay, smq_strerror(v),
		     f.field);
	}
	/* the next maintenance, plainly, finishes it */
	if (v) {
		OK(smq_open(spec, 0, SMQ_OPEN_RAW, &w));
		bool clear = v == -SMQ_EINCOMPLETE;
		OK(clear ? smq_clear(w, -1) : smq_init(w, &G, sizeof(G)));
		t->finished_by[clear]++;
		OK(smq_validate(w, NULL, 0));
		smq_close(w);
		OK(board_verdict(spec, &q3, &q2));
		OK(q3);
	}
}

int main(void)
{
	const char *env = getenv("SMQ_KILLS");
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, G.boards, G.queues, G.entries,
					 G.entry_size);
	uint64_t seed = 0x6b696c6c;
	struct tally t = { 0, 0, 0, 0, { 0, 0 } };

	OK(smq_close(w));
	uint64_t span = 0;
	for (int k = 0; k < 4; k++) {
		uint64_t took = time_one(spec, k);
		span = took > span ? took : span;
	}
	test_wait_ok(test_fork(maintain, &(struct job){ spec, 2, 0 }), "init");

	/* every step of every kind first, then random points */
	int steps = 4 * (SMQ_HOOK_MAINT_FORMATTED - SMQ_HOOK_MAINT_LOCKED + 1);
	for (int i = 0; i < steps; i++) {
		struct job j = { spec, i % 4, SMQ_HOOK_MAINT_LOCKED + i / 4 };
		kill_one(spec, i, &j, 0, &t);
	}
	struct test_budget b;
	if (env)
		test_budget_count(&b, (uint64_t)atoi(env));
	else
		test_budget(&b, KILL_SECS, KILL_FLOOR, KILL_MOST);
	uint64_t done;
	for (done = 0; test_going(&b, done); done++) {
		struct job j = { spec, (int)(test_rand(&seed) % 4), 0 };
		uint64_t delay = test_rand(&seed) % (span + span / 2 + 1);
		kill_one(spec, steps + (int)done, &j, delay, &t);
	}
	/* and traffic goes on */
	struct smq_queue *tx, *rx;
	struct smq_window *w1;
	char buf[16];
	size_t n;
	OK(smq_open(spec, 0, 0, &w));
	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	OK(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &rx));
	OK(smq_send(tx, "after", 5, 0));
	OK(smq_receive(rx, buf, sizeof(buf), &n, NULL, 1000));
	CHECK(n == 5 && !memcmp(buf, "after", 5));
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_close(w1));
	OK(smq_close(w));
	printf("%d kills at each step and %d at random points over %llu us: "
	       "left usable %d, unfinished %d and a clear of one queue "
	       "unfinished %d (finished by clear %d), unformatted %d "
	       "(finished by init %d); every verdict agreed with what a board "
	       "saw\n", steps, (int)done, (unsigned long long)span, t.usable,
	       t.unfinished, t.unfinished_one, t.finished_by[1], t.unformatted,
	       t.finished_by[0]);
	test_work("kills at each step", (uint64_t)steps, (uint64_t)steps);
	test_work("kills at random points", done, b.floor);
	return 0;
}
