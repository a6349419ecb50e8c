/* Two boards as two processes over one window: board 0, the system board,
 * formats the window and waits for board 1; then they bounce messages, as
 * the SimpleMessageQueue paper's ping-pong test does, and board 0 removes
 * the window at the end.
 *   usage: twoboards [-w SPEC] [COUNT [SIZE]]
 * SPEC is the window (default shm:smq-example-PID, one of this run alone).
 * Build: cc -std=c11 twoboards.c $(pkg-config --cflags --libs libsmq)
 *
 * Board 1 starts first, as a board that boots before the system board
 * may.  It finds either nothing yet, and then waits until board 0 has
 * formatted the window, or a window an earlier run left behind, formatted
 * and even ready.  That one it must not join: board 0's init would empty
 * every queue of it, and what board 1 sent would be lost.  So it waits for
 * the next generation instead (SMQ_SYNC_NEW_GENERATION). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <smq.h>

#define MAX_SIZE 1024

static int fail(const char *spec, const char *what, int err)
{
	char why[256];

	fprintf(stderr, "twoboards: %s: %s\n", what,
		smq_explain(spec, err, why, sizeof(why)));
	return 1;
}

static void nap_ms(long ms)
{
	struct timespec t = { ms / 1000, ms % 1000 * 1000000 };

	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

/* Queue 0 is received by board 0, queue 1 by board 1.  Board 0 sends
 * first; board 1 sends back what it received. */
static int pingpong(const char *spec, struct smq_window *w, unsigned board,
		    long count, size_t size)
{
	struct smq_queue *tx, *rx;
	char buf[MAX_SIZE];
	size_t len;
	unsigned from;
	int err;

	if ((err = smq_queue_open(w, board, SMQ_RECEIVER, 0, &rx)))
		return fail(spec, "open my queue", err);
	if ((err = smq_queue_open(w, 1 - board, SMQ_SENDER, 0, &tx))) {
		smq_queue_close(rx);
		return fail(spec, "open the other board's queue", err);
	}
	memset(buf, 'a' + (int)board, size);
	for (long i = 0; i < count && !err; i++) {
		if (board == 0 && (err = smq_send(tx, buf, size, 1000)))
			break;
		err = smq_receive(rx, buf, sizeof(buf), &len, &from, 5000);
		if (err)
			break;
		if (len != size || from != 1 - board)
			err = -EBADMSG;
		else if (board == 1)
			err = smq_send(tx, buf, size, 1000);
	}
	if (err)
		fail(spec, board ? "board 1: ping-pong" : "board 0: ping-pong",
		     err);
	smq_queue_close(tx);
	smq_queue_close(rx);
	return err ? 1 : 0;
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Board 1 attaches.  Its first look tells board 0 (through told_fd) that
 * it has looked: here that stands for "board 1 booted first".  A window
 * already there is an earlier start's: board 1 waits for a new generation.
 * Otherwise it tries again, for up to 10 s, while the error is one that
 * goes away by itself (smq_transient(): the window not created yet, not
 * formatted yet, being formatted, board 0 not ready yet). */
static int board1_attach(const char *spec, int told_fd, struct smq_window **wp)
{
	struct smq_window *w;
	struct timespec start;
	int err = smq_open(spec, 1, 0, &w);

	if (write(told_fd, "!", 1) != 1 || close(told_fd) < 0)
		perror("twoboards: board 1: telling board 0");
	if (!err) {
		printf("board 1: found a window of an earlier run: waiting for "
		       "board 0 to format it anew\n");
		fflush(stdout);
		err = smq_synchronize(w, SMQ_SYNC_NEW_GENERATION, 10000, 5,
				      NULL);
		if (err) {
			smq_close(w);
			return fail(spec, "board 1: synchronize", err);
		}
		*wp = w;
		return 0;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (smq_transient(err) && ms_since(&start) < 10000) {
		nap_ms(10);
		if ((err = smq_open(spec, 1, 0, &w)))
			continue;
		if (!(err = smq_synchronize(w, 0, 1000, 5, NULL))) {
			*wp = w;
			return 0;
		}
		smq_close(w);
	}
	return fail(spec, "board 1: attach", err);
}

static int board1(const char *spec, int told_fd, long count, size_t size)
{
	struct smq_window *w = NULL;
	int rc;

	if (board1_attach(spec, told_fd, &w))
		return 1;
	rc = pingpong(spec, w, 1, count, size);
	smq_close(w);
	return rc;
}

/* Board 0: formats the window, waits for board 1, plays. */
static int board0(const char *spec, long count, size_t size)
{
	struct smq_geometry g = { .boards = 2, .queues = 2, .entries = 64,
				  .entry_size = MAX_SIZE };
	struct smq_window *w;
	struct timespec t0, t1;
	uint64_t pending;
	int err, rc;

	/* RAW: attach even to a window that is not formatted (yet), to
	 * format it; CREATE: create its object if there is none. */
	if ((err = smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w)))
		return fail(spec, "board 0: open", err);
	if ((err = smq_init(w, &g, sizeof(g)))) {
		smq_close(w);
		return fail(spec, "board 0: init", err);
	}
	printf("board 0: formatted %s: %u boards, %u queues, %u entries of "
	       "%u bytes\n", spec, g.boards, g.queues, g.entries, g.entry_size);
	fflush(stdout);
	if ((err = smq_synchronize(w, 0, 10000, 5, &pending))) {
		if (err == -ETIMEDOUT)
			fprintf(stderr, "twoboards: board 0: boards that "
				"never came (bit b is board b): %#llx\n",
				(unsigned long long)pending);
		smq_close(w);
		return fail(spec, "board 0: synchronize", err);
	}
	printf("board 0: board 1 announced itself, system ready\n");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = pingpong(spec, w, 0, count, size);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	smq_close(w);
	if (rc)
		return rc;
	double s = (double)(t1.tv_sec - t0.tv_sec) +
		   (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("ping-pong: %ld round trips of %zu bytes in %.3f s: "
	       "%.0f messages/s per direction, %.2f us half round trip\n",
	       count, size, s, (double)count / s, s / (double)count / 2 * 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	char spec_buf[64];
	const char *spec = NULL;
	int told[2], opt, err, status, rc;
	char c;

	while ((opt = getopt(argc, argv, "w:")) != -1) {
		if (opt != 'w')
			goto usage;
		spec = optarg;
	}
	long count = optind < argc ? atol(argv[optind]) : 100000;
	long size = optind + 1 < argc ? atol(argv[optind + 1]) : 100;
	if (count <= 0 || size < 0 || size > MAX_SIZE || optind + 2 < argc)
		goto usage;
	if (!spec) {
		snprintf(spec_buf, sizeof(spec_buf), "shm:smq-example-%ld",
			 (long)getpid());
		spec = spec_buf;
	}

	if (pipe(told) < 0) {
		perror("twoboards: pipe");
		return 1;
	}
	fflush(stdout);         /* or the child prints it again */
	pid_t pid = fork();
	if (pid < 0) {
		perror("twoboards: fork");
		return 1;
	}
	if (pid == 0) {
		close(told[0]);
		exit(board1(spec, told[1], count, (size_t)size));
	}
	close(told[1]);
	/* Board 0 starts once board 1 has looked (or died trying). */
	if (read(told[0], &c, 1) != 1)
		fprintf(stderr, "twoboards: board 1 did not look at the "
			"window\n");
	close(told[0]);
	rc = board0(spec, count, (size_t)size);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		rc = 1;
	/* Remove the window's object: nothing is left behind in /dev/shm.
	 * Boards still attached keep their mapping until they close it. */
	if ((err = smq_remove(spec)) && err != -ENOENT)
		rc = fail(spec, "remove", err);
	return rc;
usage:
	fprintf(stderr, "usage: %s [-w SPEC] [COUNT [SIZE<=%d]]\n", argv[0],
		MAX_SIZE);
	return 2;
}
