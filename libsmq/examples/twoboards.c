/* Two boards as two processes over one window (default: $SMQ_WINDOW, else
 * shm:smq).  Board 0 formats the window and waits for board 1; then they
 * bounce messages, as the SimpleMessageQueue paper's ping-pong test does.
 *   usage: smq-example [COUNT [SIZE]] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "smq.h"

static int fail(const char *what, int err)
{
	fprintf(stderr, "smq-example: %s: %s\n", what, smq_strerror(err));
	return 1;
}

/* Queue 0 is received by board 0, queue 1 by board 1. */
static int pingpong(struct smq_window *w, unsigned board, long count,
		    size_t size)
{
	struct smq_queue *tx, *rx;
	char buf[1024];
	size_t len;
	unsigned from;
	int err;

	if ((err = smq_queue_open(w, board, SMQ_RECEIVER, 0, &rx)) ||
	    (err = smq_queue_open(w, 1 - board, SMQ_SENDER, 0, &tx)))
		return fail("open queue", err);
	memset(buf, 'a' + (int)board, size);
	for (long i = 0; i < count; i++) {
		if (board == 0 && (err = smq_send(tx, buf, size, 1000)))
			return fail("send", err);
		if ((err = smq_receive(rx, buf, sizeof(buf), &len, &from, 5000)))
			return fail("receive", err);
		if (len != size || from != 1 - board)
			return fail("receive", -EBADMSG);
		if (board == 1 && (err = smq_send(tx, buf, size, 1000)))
			return fail("send", err);
	}
	smq_queue_close(tx);
	smq_queue_close(rx);
	return 0;
}

static int board1(const char *spec, long count, size_t size)
{
	struct smq_window *w = NULL;
	int err;

	/* Board 0 may still be formatting: wait for a window to attach to. */
	for (int tries = 0; tries < 500; tries++) {
		err = smq_open(&w, spec, 1, 0);
		if (!err && !(err = smq_synchronize(w, 5000, 5, NULL)))
			break;
		if (w)
			smq_close(w);
		w = NULL;
		usleep(10000);
	}
	if (!w)
		return fail("board 1: attach", err);
	err = pingpong(w, 1, count, size);
	smq_close(w);
	return err;
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 100000;
	size_t size = argc > 2 ? (size_t)atol(argv[2]) : 100;
	const char *spec = smq_default_window();
	struct smq_geometry g = { .boards = 2, .queues = 2, .entries = 64,
				  .entry_size = 1024 };
	struct smq_window *w;
	struct timespec t0, t1;
	uint64_t pending;
	int err, status;

	if (count <= 0 || size > 1024) {
		fprintf(stderr, "usage: smq-example [COUNT [SIZE<=1024]]\n");
		return 2;
	}
	if ((err = smq_open(&w, spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW)) ||
	    (err = smq_init(w, &g)))
		return fail(spec, err);
	printf("board 0: formatted %s: %u boards, %u queues, %u entries of %u bytes\n",
	       spec, g.boards, g.queues, g.entries, g.entry_size);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		_exit(board1(spec, count, size));
	if ((err = smq_synchronize(w, 10000, 5, &pending)))
		return fail("board 0: synchronize", err);
	printf("board 0: board 1 announced itself, system ready\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = pingpong(w, 0, count, size);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		err = 1;
	if (err)
		return 1;
	double s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("ping-pong: %ld round trips of %zu bytes in %.3f s: "
	       "%.0f messages/s per direction, %.2f us half round trip\n",
	       count, size, s, count / s, s / count / 2 * 1e6);
	smq_close(w);
	return 0;
}
