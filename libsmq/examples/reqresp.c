/* A request/response service over a window of two boards.
 *   usage: reqresp [-w SPEC] [-n REQUESTS]
 * SPEC is the window (default shm:smq-reqresp-PID, one of this run alone).
 * Build: cc -std=c11 reqresp.c $(pkg-config --cflags --libs libsmq)
 *
 * Board 0 is the server: it receives requests on queue 0, its own, and
 * sends each answer to the queue of the board that asked (board b
 * receives queue b), so any number of clients could share it.  Board 1 is
 * a client: it sends REQUESTS requests (default 1000), one at a time, and
 * checks every answer.  The program exits 0 only if every answer was
 * right.  Board 0 formats the window before board 1 starts, and removes it
 * at the end. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <smq.h>

#define BOARDS 2

/* Messages are bytes: both boards must agree on this layout (fixed-width
 * fields; boards of different byte order would also fix one). */
enum { OP_SQUARE = 1, OP_STOP = 2 };
struct request {
	uint32_t id;
	uint32_t op;
	int64_t x;
};
struct answer {
	uint32_t id;
	uint32_t pad;
	int64_t value;          /* x * x */
};

static int fail(const char *spec, const char *what, int err)
{
	char why[256];

	fprintf(stderr, "reqresp: %s: %s\n", what,
		smq_explain(spec, err, why, sizeof(why)));
	return 1;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Attach as a board other than 0 and synchronise, trying again for up
 * to 10 s while the error is one that goes away by itself
 * (smq_transient(): the window not created or formatted yet, being
 * formatted, board 0 not ready yet). */
static int attach(const char *spec, unsigned board, struct smq_window **wp)
{
	struct timespec start, pause = { 0, 10000000 };
	int err;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		if (!(err = smq_open(spec, board, 0, wp))) {
			err = smq_synchronize(*wp, 0, 1000, 5, NULL);
			if (!err)
				return 0;
			smq_close(*wp);
		}
		if (!smq_transient(err) || ms_since(&start) >= 10000)
			return err;
		nanosleep(&pause, NULL);
	}
}

/* Board 0: answers requests until a client says stop.  The queue back to
 * a client is opened when its first request comes. */
static int serve(const char *spec, struct smq_window *w)
{
	struct smq_queue *requests, *answers[BOARDS] = { NULL };
	struct request rq;
	size_t len;
	unsigned from;
	long served = 0;
	int err;

	if ((err = smq_queue_open(w, 0, SMQ_RECEIVER, 0, &requests)))
		return fail(spec, "server: open queue 0", err);
	for (;;) {
		/* 10 s without a request: the client is gone */
		err = smq_receive(requests, &rq, sizeof(rq), &len, &from,
				  10000);
		if (err)
			break;
		if (len != sizeof(rq) || from >= BOARDS) {
			fprintf(stderr, "reqresp: server: a request of %zu "
				"bytes from board %u: ignored\n", len, from);
			continue;
		}
		if (rq.op == OP_STOP)
			break;
		if (!answers[from] && (err = smq_queue_open(w, from, SMQ_SENDER,
							    0, &answers[from])))
			break;
		struct answer a = { .id = rq.id, .value = rq.x * rq.x };
		if ((err = smq_send(answers[from], &a, sizeof(a), 1000)))
			break;
		served++;
	}
	if (err)
		fail(spec, "server", err);
	else
		printf("board 0: served %ld requests\n", served);
	for (unsigned b = 0; b < BOARDS; b++)
		if (answers[b])
			smq_queue_close(answers[b]);
	smq_queue_close(requests);
	return err ? 1 : 0;
}

/* Board 1: one request at a time; every answer is checked. */
static int ask(const char *spec, struct smq_window *w, long n)
{
	struct smq_queue *requests, *answers;
	struct answer a;
	size_t len;
	unsigned from;
	long right = 0;
	int err;

	if ((err = smq_queue_open(w, 0, SMQ_SENDER, 0, &requests)))
		return fail(spec, "client: open queue 0", err);
	if ((err = smq_queue_open(w, 1, SMQ_RECEIVER, 0, &answers))) {
		smq_queue_close(requests);
		return fail(spec, "client: open queue 1", err);
	}
	for (long i = 0; i < n; i++) {
		struct request rq = { .id = (uint32_t)i, .op = OP_SQUARE,
				      .x = i * 7 - 1000 };
		if ((err = smq_send(requests, &rq, sizeof(rq), 1000)) ||
		    (err = smq_receive(answers, &a, sizeof(a), &len, &from,
				       5000)))
			break;
		if (len == sizeof(a) && from == 0 && a.id == rq.id &&
		    a.value == rq.x * rq.x)
			right++;
		else
			fprintf(stderr, "reqresp: client: request %ld (%lld "
				"squared): answer %" PRIu32 " says %lld\n", i,
				(long long)rq.x, a.id, (long long)a.value);
	}
	if (err)
		fail(spec, "client", err);
	/* the server stops when told; a real service would run on */
	struct request stop = { .op = OP_STOP };
	int stop_err = smq_send(requests, &stop, sizeof(stop), 1000);
	if (stop_err)
		fail(spec, "client: stop the server", stop_err);
	printf("board 1: %ld of %ld answers right\n", right, n);
	smq_queue_close(answers);
	smq_queue_close(requests);
	return !err && right == n ? 0 : 1;
}

static int client(const char *spec, long n)
{
	struct smq_window *w;
	int err, rc;

	if ((err = attach(spec, 1, &w)))
		return fail(spec, "client: attach", err);
	rc = ask(spec, w, n);
	smq_close(w);
	return rc;
}

/* Board 0: formats the window, starts the client, serves it. */
static int server(const char *spec, long n)
{
	struct smq_geometry g = { .boards = BOARDS, .queues = BOARDS,
				  .entries = 16,
				  .entry_size = sizeof(struct request) };
	struct smq_window *w;
	int err, rc, status;

	if ((err = smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w)))
		return fail(spec, "server: open", err);
	if ((err = smq_init(w, &g, sizeof(g)))) {
		smq_close(w);
		return fail(spec, "server: init", err);
	}
	fflush(stdout);         /* or the child prints it again */
	pid_t pid = fork();
	if (pid < 0) {
		perror("reqresp: fork");
		smq_close(w);
		return 1;
	}
	if (pid == 0)
		exit(client(spec, n)); /* its own handle: w is not for it */
	if ((err = smq_synchronize(w, 0, 10000, 5, NULL)))
		rc = fail(spec, "server: synchronize", err);
	else
		rc = serve(spec, w);
	smq_close(w);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		rc = 1;
	return rc;
}

int main(int argc, char **argv)
{
	char spec_buf[64];
	const char *spec = NULL;
	long n = 1000;
	int opt, err, rc;

	while ((opt = getopt(argc, argv, "w:n:")) != -1) {
		if (opt == 'w')
			spec = optarg;
		else if (opt == 'n' && (n = atol(optarg)) > 0)
			continue;
		else
			goto usage;
	}
	if (optind < argc)
		goto usage;
	if (!spec) {
		snprintf(spec_buf, sizeof(spec_buf), "shm:smq-reqresp-%ld",
			 (long)getpid());
		spec = spec_buf;
	}
	rc = server(spec, n);
	/* nothing left behind: the window's object goes */
	if ((err = smq_remove(spec)) && err != -ENOENT)
		rc = fail(spec, "remove", err);
	return rc;
usage:
	fprintf(stderr, "usage: %s [-w SPEC] [-n REQUESTS]\n", argv[0]);
	return 2;
}
