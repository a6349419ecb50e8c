/* Drives an ivshmem server (smqctl server) for tests/cli/t_ivshmem_conform.sh
 * with strict clients (ivshmem_strict.h) and libsmq's own:
 *
 *   ivshmem_conform watch SOCKET VECTORS
 *	one strict client: prints "id N" once set up, follows every message
 *	until its standard input closes, then what is left to read (quiet
 *	for 300 ms); prints "peers: ID..." (those it knows) and "conformant",
 *	and stays connected until SIGTERM.
 *   ivshmem_conform churn SOCKET VECTORS CYCLES SEED
 *	CYCLES strict clients, up to four at once, each leaving at a random
 *	point of its setup or after it; at random moments one is stopped
 *	(SIGSTOP), and later killed or let go on.  Prints the count.
 *   ivshmem_conform wake SOCKET
 *	formats the server's memory as a window of two boards; board 1
 *	sleeps in smq_receive() and stays asleep through what comes while
 *	this prints "ready" and waits for a line on its standard input
 *	(the churn); then board 0 sends, and the receive must end rung by
 *	its doorbell, not at the end of its sleep slice.
 *
 * Exit 0 conformant, 1 a breach or a failure (named on stderr), 2 usage.
 * Built on the test build of libsmq (its hooks say how a sleep ended). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "format/hook.h"
#include "ivshmem_strict.h"
#include "smq.h"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A nap; each use says why (a pace on purpose, or looks at what no event
 * tells of) */
static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int fail(const char *who, struct strict *s, int err)
{
	if (err == -EPROTO)
		fprintf(stderr, "%s: breach: %s\n", who, s->why);
	else if (err == -ECONNRESET)
		fprintf(stderr, "%s: the server closed the connection\n", who);
	else
		fprintf(stderr, "%s: %s\n", who, strerror(-err));
	return 1;
}

/* ---- watch ---- */

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int watch(const char *path, unsigned vectors)
{
	struct strict *s = malloc(sizeof(*s));
	unsigned ids[256];
	int err;

	if (!s)
		return 1;
	if ((err = strict_connect(s, path, vectors)) ||
	    (err = strict_setup(s, 10000)))
		return fail("watch", s, err);
	printf("id %d\n", s->id);
	fflush(stdout);
	for (;;) {
		struct pollfd pf[2] = { { s->sock, POLLIN, 0 },
					{ 0, POLLIN, 0 } };
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			return fail("watch", s, -errno);
		if (pf[0].revents && (err = strict_step(s, 0)) < 0)
			return fail("watch", s, err);
		if (pf[1].revents) {
			char c;
			if (read(0, &c, 1) <= 0)
				break;
		}
	}
	/* what the server has still to say, within a bound */
	int64_t until = now_ms() + 10000;
	while ((err = strict_step(s, 300)) == 1 && now_ms() < until)
		;
	if (err < 0)
		return fail("watch", s, err);
	unsigned n = strict_peers(s, ids, 256);
	printf("peers:");
	for (unsigned i = 0; i < n && i < 256; i++)
		printf(" %u", ids[i]);
	printf("\n");
	printf("conformant: %lu messages, %lu peers announced, %lu "
	       "removed\n", s->messages, s->joins, s->removals);
	fflush(stdout);
	/* stays, so that the others' pictures hold still: until SIGTERM */
	for (int i = 0; i < 600 && !stop; i++)
		/* (its handler sets stop; a nap a look, 60 s at most) */
		sleep_ms(100);
	strict_close(s);
	free(s);
	return 0;
}

/* ---- churn ---- */

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A client of the churn: leaves after k messages (k < 0: after its
 * setup and ms of following).  Exit 0, 1 breach, 3 dropped. */
static void churn_client(const char *path, unsigned vectors, long k, int ms)
{
	struct strict *s = malloc(sizeof(*s));
	int err;

	alarm(60);   /* never outlive the test */
	if (!s)
		_exit(1);
	if ((err = strict_connect(s, path, vectors)))
		_exit(fail("churn client", s, err));
	while (k != 0 && !strict_ready(s)) {
		if ((err = strict_step(s, 10000)) <= 0)
			_exit(fail("churn client", s, err ? err : -ETIMEDOUT));
		k--;
	}
	int64_t until = now_ms() + ms;
	while (k < 0 && now_ms() < until) {
		if ((err = strict_step(s, (int)(until - now_ms()))) < 0)
			_exit(fail("churn client", s, err) + (err == -ECONNRESET
							      ? 2 : 0));
	}
	strict_close(s);
	_exit(0);
}

struct child {
	pid_t pid;
	bool stopped;
};

static int reap(struct child *c, unsigned *live, unsigned *done)
{
	int st, bad = 0;

	for (unsigned i = 0; i < *live;) {
		pid_t r = waitpid(c[i].pid, &st, WNOHANG);
		if (r == 0) {
			i++;
			continue;
		}
		if (r == c[i].pid && WIFEXITED(st) && WEXITSTATUS(st))
			bad++;
		else if (r == c[i].pid && WIFSIGNALED(st) &&
			 WTERMSIG(st) != SIGKILL)
			bad++;
		c[i] = c[--*live];
		++*done;
	}
	return bad;
}

static int churn(const char *path, unsigned vectors, long cycles,
		 uint64_t seed)
{
	struct child c[4];
	unsigned live = 0, done = 0, stops = 0, kills = 0;
	long started = 0;
	int bad = 0;

	seed = seed * 2654435761u + 1;
	alarm(900);
	while (done < cycles) {
		if (live < 4 && started < cycles) {
			/* a third leave inside their setup */
			long k = rnd(&seed) % 3 ? -1 : (long)(rnd(&seed) % 12);
			int ms = (int)(rnd(&seed) % 5);
			fflush(NULL);
			pid_t pid = fork();
			if (pid < 0)
				return fail("churn", NULL, -errno);
			if (pid == 0)
				churn_client(path, vectors, k, ms);
			c[live++] = (struct child){ pid, false };
			started++;
		}
		if (live) {
			struct child *x = &c[rnd(&seed) % live];
			unsigned what = (unsigned)(rnd(&seed) % 8);
			if (!x->stopped && what == 0) {
				kill(x->pid, SIGSTOP);
				x->stopped = true;
				stops++;
			} else if (x->stopped && what < 3) {
				kill(x->pid, SIGKILL);
				kills++;
			} else if (x->stopped && what < 5) {
				kill(x->pid, SIGCONT);
				x->stopped = false;
			}
		}
		if (rnd(&seed) % 2)
			/* a pace at random, on purpose */
			sleep_ms((int)(rnd(&seed) % 3));
		bad += reap(c, &live, &done);
	}
	printf("%u clients came and went (%u stopped at random moments, %u "
	       "of them killed while stopped); %d broke off with a fault\n",
	       done, stops, kills, bad);
	return bad ? 1 : 0;
}

/* ---- wake ---- */

static int sleeps, rungs, outs;    /* counted by the hooks */
static int64_t slept_at;           /* when the last sleep began */

static void count(enum smq_hook where)
{
	if (where == SMQ_HOOK_SLEEP) {
		__atomic_store_n(&slept_at, now_ms(), __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&sleeps, 1, __ATOMIC_SEQ_CST);
	} else if (where == SMQ_HOOK_RUNG) {
		__atomic_add_fetch(&rungs, 1, __ATOMIC_SEQ_CST);
	} else if (where == SMQ_HOOK_SLEPT_OUT) {
		__atomic_add_fetch(&outs, 1, __ATOMIC_SEQ_CST);
	}
}

struct receiver {
	struct smq_queue *rx;
	int done[2];             /* a byte per message (0) or error (1) */
	int64_t at;              /* when the last receive returned */
	int err;
};

static void *receive_loop(void *arg)
{
	struct receiver *r = arg;
	char buf[64], ok;
	size_t n;

	for (;;) {
		r->err = smq_receive(r->rx, buf, sizeof(buf), &n, NULL, 120000);
		r->at = now_ms();
		if (!r->err && n == 4 && !memcmp(buf, "stop", 4))
			return NULL;
		ok = r->err ? 1 : 0;
		if (write(r->done[1], &ok, 1) != 1 || r->err)
			return NULL;
	}
}

/* Until the receiver begins a new sleep (at most ms): whether it did. */
static bool new_sleep(int ms)
{
	int before = __atomic_load_n(&sleeps, __ATOMIC_SEQ_CST);
	int64_t until = now_ms() + ms;

	while (__atomic_load_n(&sleeps, __ATOMIC_SEQ_CST) == before &&
	       now_ms() < until)
		/* a count the hooks keep: no event */
		sleep_ms(1);
	return __atomic_load_n(&sleeps, __ATOMIC_SEQ_CST) != before;
}

/* A send just after the receiver began a sleep of 1 s: the sleep must end
 * rung.  One that ends at its slice is a doorbell that did not ring,
 * unless the send itself ended late in the sleep (a stalled machine):
 * then the trial tells nothing, and another is made.  (A ring written
 * before the sleep's end is seen however late the sleeper runs: poll()
 * reports a ready descriptor before a timeout.) */
static int wake_trials(struct smq_queue *tx, struct receiver *r)
{
	for (int trial = 1; trial <= 5; trial++) {
		struct pollfd pf = { r->done[0], POLLIN, 0 };
		char ok;

		if (!new_sleep(5000)) {
			fprintf(stderr, "wake: the receiver did not sleep again "
				"within 5 s\n");
			return 1;
		}
		int rung0 = __atomic_load_n(&rungs, __ATOMIC_SEQ_CST);
		int out0 = __atomic_load_n(&outs, __ATOMIC_SEQ_CST);
		int64_t t0 = now_ms();
		int err = smq_send(tx, "wake", 4, 1000);
		if (err) {
			fprintf(stderr, "wake: send: %s\n", smq_strerror(err));
			return 1;
		}
		/* the ring is written when the send returns: if that is
		 * before the sleep's end, the sleep ends rung */
		int64_t into = now_ms() -
			       __atomic_load_n(&slept_at, __ATOMIC_SEQ_CST);
		if (poll(&pf, 1, 10000) != 1 || read(r->done[0], &ok, 1) != 1 ||
		    ok) {
			fprintf(stderr, "wake: no message within 10 s (%s)\n",
				smq_strerror(r->err));
			return 1;
		}
		int64_t took = r->at - t0;
		bool rung = __atomic_load_n(&rungs, __ATOMIC_SEQ_CST) != rung0;
		bool out = __atomic_load_n(&outs, __ATOMIC_SEQ_CST) != out0;
		if (rung && !out) {
			printf("the sleeping receiver was woken by its doorbell "
			       "%lld ms after the send (trial %d)\n",
			       (long long)took, trial);
			return 0;
		}
		if (into < 900) {
			fprintf(stderr, "wake: sent %lld ms into a sleep of 1000 "
				"ms, the receiver woke only at its end (%lld ms "
				"later): its doorbell did not ring\n",
				(long long)into, (long long)took);
			return 1;
		}
		printf("trial %d: the send came %lld ms into the sleep (a "
		       "stalled machine): not telling, again\n", trial,
		       (long long)into);
	}
	fprintf(stderr, "wake: 5 trials told nothing: every send came late "
		"into the receiver's sleep\n");
	return 1;
}

static int wake(const char *path)
{
	const struct smq_geometry g = { 2, 1, 4, 64, (const uint16_t[]){ 1 } };
	struct smq_window *w0, *w1;
	struct smq_queue *tx;
	struct receiver r = { 0 };
	char spec[200], line[16];
	pthread_t t;
	int err;

	snprintf(spec, sizeof(spec), "ivshmem:%s", path);
	if ((err = smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w0)) ||
	    (err = smq_init(w0, &g, sizeof(g))) ||
	    (err = smq_open(spec, 1, 0, &w1)) ||
	    (err = smq_queue_open(w1, 0, SMQ_RECEIVER, SMQ_SLEEP, &r.rx)) ||
	    (err = smq_queue_open(w0, 0, SMQ_SENDER, 0, &tx))) {
		fprintf(stderr, "wake: %s\n",
			smq_explain(spec, err, spec, sizeof(spec)));
		return 1;
	}
	if (pipe(r.done) < 0)
		return 1;
	smq_test_hook = count;
	if (pthread_create(&t, NULL, receive_loop, &r))
		return 1;
	if (!new_sleep(10000)) {
		fprintf(stderr, "wake: the receiver did not sleep within 10 s\n");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	struct pollfd pf = { r.done[0], POLLIN, 0 };
	if (poll(&pf, 1, 0) != 0) {
		fprintf(stderr, "wake: the receiver returned before any send "
			"(%s)\n", smq_strerror(r.err));
		return 1;
	}
	printf("the receiver slept through it all: %d sleeps, %d ended at "
	       "their slice\n", __atomic_load_n(&sleeps, __ATOMIC_SEQ_CST),
	       __atomic_load_n(&outs, __ATOMIC_SEQ_CST));
	err = wake_trials(tx, &r);
	if (smq_send(tx, "stop", 4, 1000) == 0)
		pthread_join(t, NULL);
	else
		err = 1;
	smq_test_hook = NULL;
	smq_queue_close(r.rx);
	smq_queue_close(tx);
	smq_close(w1);
	smq_close(w0);
	return err;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_term);
	if (argc == 4 && !strcmp(argv[1], "watch"))
		return watch(argv[2], (unsigned)atoi(argv[3]));
	if (argc == 6 && !strcmp(argv[1], "churn"))
		return churn(argv[2], (unsigned)atoi(argv[3]), atol(argv[4]),
			     strtoull(argv[5], NULL, 10));
	if (argc == 3 && !strcmp(argv[1], "wake"))
		return wake(argv[2]);
	fprintf(stderr, "usage: ivshmem_conform watch SOCKET VECTORS | churn "
		"SOCKET VECTORS CYCLES SEED | wake SOCKET\n");
	return 2;
}
