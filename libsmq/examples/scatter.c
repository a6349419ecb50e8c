/* Scatter and gather with groups, loans and bursts, over four boards.
 *   usage: scatter [-w SPEC] [-n ROUNDS]
 * SPEC is the window (default shm:smq-scatter-PID, one of this run alone).
 * Build: cc -std=c11 scatter.c $(pkg-config --cflags --libs libsmq)
 *
 * Board 0 formats a window with two groups: "workers", the queues that
 * boards 1 to 3 receive, and "results", three queues that board 0
 * receives, one a worker.  Each round, board 0 sends one job to the group
 * "workers" (a single call reaches every worker, and says which did not
 * take it in time); each worker takes the jobs that wait in a burst, and
 * writes each answer in place in its results queue (a loan: no buffer of
 * its own, nothing copied twice); board 0 gathers the answers from the
 * group "results", the workers taking turns, and checks every one.  The
 * program exits 0 only if every answer came, right.  It removes its
 * window at the end. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <smq.h>

#define WORKERS 3
#define BOARDS (WORKERS + 1)
#define BURST 8

struct job { uint32_t round, stop; int64_t x; };
struct answer { uint32_t round, board; int64_t value; };  /* x * board */

static int fail(const char *spec, const char *what, int err)
{
	char why[256];

	fprintf(stderr, "scatter: %s: %s\n", what,
		smq_explain(spec, err, why, sizeof(why)));
	return 1;
}

/* Queues 0 to 3: board q's; queues 4 to 6: board 0's, a worker's
 * answers each. */
static int format(const char *spec, struct smq_window **w)
{
	static const uint16_t receivers[] = { 0, 1, 2, 3, 0, 0, 0 };
	static const uint32_t workers[] = { 1, 2, 3 }, results[] = { 4, 5, 6 };
	static const struct smq_group_def groups[] = {
		{ "workers", workers, WORKERS }, { "results", results, WORKERS }
	};
	struct smq_shape shape;
	int err;

	memset(&shape, 0, sizeof(shape));
	shape.geometry.boards = BOARDS;
	shape.geometry.queues = 7;
	shape.geometry.entries = 16;
	shape.geometry.entry_size = 64;
	shape.geometry.receivers = receivers;
	shape.groups = groups;
	shape.ngroups = 2;
	if ((err = smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, w)))
		return fail(spec, "open", err);
	if ((err = smq_init_shape(*w, &shape, sizeof(shape))))
		return fail(spec, "init", err);
	return 0;
}

/* Board b: jobs from its queue, in bursts; answers written in place. */
static int worker(const char *spec, unsigned b)
{
	struct smq_window *w;
	struct smq_queue *in, *out;
	struct job jobs[BURST];
	struct iovec bufs[BURST];
	size_t lens[BURST];
	int err, n, stop = 0;

	if ((err = smq_open(spec, b, 0, &w)))
		return fail(spec, "worker open", err);
	if ((err = smq_queue_open(w, b, SMQ_RECEIVER, 0, &in)) ||
	    (err = smq_queue_open(w, WORKERS + b, SMQ_SENDER, 0, &out)))
		return fail(spec, "worker queues", err);
	for (int i = 0; i < BURST; i++) {
		bufs[i].iov_base = &jobs[i];
		bufs[i].iov_len = sizeof(jobs[i]);
	}
	while (!stop) {
		n = smq_receive_burst(in, bufs, BURST, lens, NULL, 10000);
		if (n < 0)
			return fail(spec, "worker receive", n);
		for (int i = 0; i < n && !stop; i++) {
			struct answer a = { jobs[i].round, b, jobs[i].x * b };
			void *slot;
			if ((stop = jobs[i].stop))
				break;
			/* the answer goes straight into board 0's ring;
			 * smq_loan_write copies it there (and sums it, on a
			 * window with checksums) */
			if ((err = smq_loan(out, sizeof(a), &slot, 10000)) ||
			    (err = smq_loan_write(out, 0, &a, sizeof(a))) ||
			    (err = smq_loan_submit(out, sizeof(a))))
				return fail(spec, "worker answer", err);
		}
	}
	smq_queue_close(in);
	smq_queue_close(out);
	smq_close(w);
	return 0;
}

/* Board 0: a job a round to every worker, every answer gathered. */
static int coordinator(const char *spec, struct smq_window *w, int rounds)
{
	struct smq_group *jobs, *answers;
	long right = 0, from[BOARDS] = { 0 };
	int err;

	if ((err = smq_group_open(w, "workers", SMQ_SENDER, 0, &jobs)) ||
	    (err = smq_group_open(w, "results", SMQ_RECEIVER, 0, &answers)))
		return fail(spec, "groups", err);
	for (int r = 0; r <= rounds; r++) {
		struct job j = { (uint32_t)r, r == rounds, 1000 + r };
		uint64_t pending = SMQ_GROUP_ALL;
		/* a worker whose ring is full is waited for; one that never
		 * takes it is named in pending, and only it is tried again */
		while ((err = smq_group_send(jobs, &j, sizeof(j), &pending,
					     1000)) == -ETIMEDOUT)
			fprintf(stderr, "scatter: round %d: workers %#" PRIx64
				" slow, trying them again\n", r, pending);
		if (err)
			return fail(spec, "send to workers", err);
		for (int k = 0; k < WORKERS && r < rounds; k++) {
			struct answer a;
			size_t len;
			unsigned queue;
			if ((err = smq_group_receive(answers, &a, sizeof(a),
						     &len, NULL, &queue,
						     10000)))
				return fail(spec, "gather", err);
			if (len == sizeof(a) && a.round == (uint32_t)r &&
			    a.board == queue - WORKERS &&
			    a.value == (int64_t)(1000 + r) * a.board) {
				right++;
				from[a.board]++;
			}
		}
	}
	smq_group_close(jobs);
	smq_group_close(answers);
	printf("board 0: %ld of %d answers right (boards 1, 2, 3: %ld, %ld, "
	       "%ld)\n", right, rounds * WORKERS, from[1], from[2], from[3]);
	return right == (long)rounds * WORKERS ? 0 : 1;
}

int main(int argc, char **argv)
{
	char own[64];
	const char *spec = NULL;
	int rounds = 1000, opt, rc, status;
	struct smq_window *w;
	pid_t pid[WORKERS];

	while ((opt = getopt(argc, argv, "w:n:")) != -1) {
		if (opt == 'w')
			spec = optarg;
		else if (opt == 'n' && atoi(optarg) > 0)
			rounds = atoi(optarg);
		else {
			fprintf(stderr, "usage: scatter [-w SPEC] [-n ROUNDS]\n");
			return 2;
		}
	}
	if (!spec) {
		snprintf(own, sizeof(own), "shm:smq-scatter-%ld", (long)getpid());
		spec = own;
	}
	if (format(spec, &w))
		return 1;
	fflush(NULL);
	for (unsigned b = 1; b <= WORKERS; b++)
		if ((pid[b - 1] = fork()) == 0)
			_exit(worker(spec, b));
	rc = coordinator(spec, w, rounds);
	for (int i = 0; i < WORKERS; i++) {
		waitpid(pid[i], &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			rc = 1;
	}
	smq_close(w);
	smq_remove(spec);
	return rc;
}
