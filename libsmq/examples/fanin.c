/* Many senders, one queue, and a receiver that may die at any moment yet
 * loses nothing: at-least-once receive (smq_peek, record, smq_commit).
 *   usage: fanin [-w SPEC] [-n MESSAGES] [-k KILLS]
 * SPEC is the window (default shm:smq-fanin-PID, one of this run alone).
 * Build: cc -std=c11 fanin.c $(pkg-config --cflags --libs libsmq)
 *
 * Boards 1, 2 and 3 each send MESSAGES numbered messages (default 2000) to
 * queue 0, which board 0 receives.  The receiver records each message
 * before it takes it off the queue; its record is a pipe to this program,
 * which stands for the durable store (a file, a database) a real receiver
 * writes to.  This program kills the receiver KILLS times (default 2) with
 * SIGKILL while the senders run, and starts another.  A receiver killed
 * between recording a message and taking it leaves it queued, and the
 * next one records it again: a duplicate, at most one per kill, never a
 * loss.  At the end it prints what each sender got through and exits 0
 * only if nothing was lost (and there were no more duplicates than
 * kills). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <smq.h>

#define SENDERS 3
#define BOARDS (SENDERS + 1)
#define ALL_DONE (((1u << SENDERS) - 1) << 1) /* a bit for each sender */

struct record {                 /* one message received, as recorded */
	uint32_t sender, seq;
};

static int fail(const char *spec, const char *what, int err)
{
	char why[256];

	fprintf(stderr, "fanin: %s: %s\n", what,
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

/* Attach as board and synchronise, trying again for up to 10 s while
 * the error is one that goes away by itself (smq_transient()).  A
 * receiver that restarts does the same: on a ready window it is quick. */
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

/* A sender: messages 0 to n - 1.  While the receiver is down the queue
 * fills and smq_send waits for room (up to 10 s here). */
static int sender(const char *spec, unsigned board, uint32_t n)
{
	struct smq_window *w;
	struct smq_queue *q;
	int err;

	if ((err = attach(spec, board, &w)))
		return fail(spec, "sender: attach", err);
	if ((err = smq_queue_open(w, 0, SMQ_SENDER, 0, &q))) {
		smq_close(w);
		return fail(spec, "sender: open queue 0", err);
	}
	for (uint32_t seq = 0; seq < n && !err; seq++)
		err = smq_send(q, &seq, sizeof(seq), 10000);
	if (err)
		fail(spec, "sender: send", err);
	smq_queue_close(q);
	smq_close(w);
	return err ? 1 : 0;
}

/* The receiver, board 0.  done: the senders whose last message is
 * recorded already (the store tells a restarted receiver where it is). */
static int receive(const char *spec, int log_fd, uint32_t n, unsigned done)
{
	struct smq_window *w;
	struct smq_queue *q;
	int err;

	if ((err = attach(spec, 0, &w)))
		return fail(spec, "receiver: attach", err);
	/* a queue's receiver that was killed is taken over */
	if ((err = smq_queue_open(w, 0, SMQ_RECEIVER, 0, &q))) {
		smq_close(w);
		return fail(spec, "receiver: open queue 0", err);
	}
	while (done != ALL_DONE) {
		const void *data;
		size_t len;
		unsigned from;
		struct record r;

		/* 1. look at the next message; it stays queued */
		if ((err = smq_peek(q, &data, &len, &from, 10000)))
			break;
		if (len != sizeof(r.seq) || from < 1 || from > SENDERS) {
			err = -EBADMSG;
			break;
		}
		r.sender = from;
		memcpy(&r.seq, data, sizeof(r.seq)); /* may be unaligned */
		/* 2. record it: once write() returns, it is safe (a pipe
		 * write this small is all or nothing) */
		if (write(log_fd, &r, sizeof(r)) != (ssize_t)sizeof(r)) {
			perror("fanin: receiver: record");
			err = -EIO;
			break;
		}
		/* 3. only now take it off the queue.  Killed before this, the
		 * message stays for the next receiver: recorded twice. */
		if ((err = smq_commit(q)))
			break;
		if (r.seq == n - 1)
			done |= 1u << r.sender;
	}
	if (err)
		fail(spec, "receiver", err);
	smq_queue_close(q);
	smq_close(w);
	return err ? 1 : 0;
}

/* What the store holds: how often each message was recorded. */
struct tally {
	uint32_t n;
	unsigned char *seen[BOARDS];    /* [sender][seq], senders 1 to 3 */
	unsigned long records;
	unsigned done;                  /* senders whose last message came */
};

static void note(struct tally *t, const struct record *r)
{
	t->records++;
	if (r->sender < 1 || r->sender > SENDERS || r->seq >= t->n) {
		fprintf(stderr, "fanin: a record of board %" PRIu32 " message %"
			PRIu32 ": no such message\n", r->sender, r->seq);
		return;
	}
	if (t->seen[r->sender][r->seq] < 255)
		t->seen[r->sender][r->seq]++;
	if (r->seq == t->n - 1)
		t->done |= 1u << r->sender;
}

/* Reads what is recorded, waiting up to timeout_ms for the first record
 * (every write was one whole record).  Returns how many records it read. */
static long read_records(int fd, struct tally *t, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct record r[64];
	long got = 0;

	while (poll(&p, 1, got ? 0 : timeout_ms) > 0) {
		ssize_t len = read(fd, r, sizeof(r));
		if (len <= 0)
			break;
		for (size_t i = 0; i < (size_t)len / sizeof(r[0]); i++)
			note(t, &r[i]);
		got += len / (ssize_t)sizeof(r[0]);
	}
	return got;
}

static pid_t start(int (*fn)(const char *, unsigned, uint32_t),
		   const char *spec, unsigned board, uint32_t n)
{
	fflush(stdout);         /* or the child prints it again */
	pid_t pid = fork();
	if (pid == 0)
		exit(fn(spec, board, n));
	if (pid < 0)
		perror("fanin: fork");
	return pid;
}

static pid_t start_receiver(const char *spec, int log_fd, uint32_t n,
			    unsigned done)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		exit(receive(spec, log_fd, n, done));
	if (pid < 0)
		perror("fanin: fork");
	return pid;
}

/* Runs the receiver to the end, killing it after each kill_every
 * records (unless it finished first: it may be up to a pipe's worth of
 * records ahead) and starting another.  log: the pipe, read end and write end.
 * Returns how many times it was killed, or -1. */
static int run_receiver(const char *spec, const int log[2], struct tally *t,
			int kills)
{
	unsigned long kill_every = (unsigned long)SENDERS * t->n / (kills + 1);
	int killed = 0, status;
	pid_t rx = start_receiver(spec, log[1], t->n, 0);

	while (rx > 0) {
		if (!read_records(log[0], t, 100) &&
		    waitpid(rx, &status, WNOHANG) == rx) {
			read_records(log[0], t, 0);  /* its last ones */
			return WIFEXITED(status) && !WEXITSTATUS(status) ?
			       killed : -1;
		}
		if (killed < kills && t->records >= kill_every * (killed + 1)) {
			if (kill(rx, SIGKILL) < 0 ||
			    waitpid(rx, &status, 0) != rx)
				return -1;
			read_records(log[0], t, 0);  /* what it recorded */
			if (WIFEXITED(status))  /* it had finished already */
				return WEXITSTATUS(status) ? -1 : killed;
			killed++;
			printf("fanin: receiver killed after %lu records; "
			       "restarted\n", t->records);
			rx = start_receiver(spec, log[1], t->n, t->done);
		}
	}
	return -1;
}

/* Counts what was lost and recorded twice, and says so. */
static int summary(const struct tally *t, int kills)
{
	unsigned long lost = 0, dups = 0;

	for (unsigned s = 1; s <= SENDERS; s++) {
		unsigned long got = 0, twice = 0;
		for (uint32_t i = 0; i < t->n; i++) {
			got += t->seen[s][i] > 0;
			twice += t->seen[s][i] > 1 ? t->seen[s][i] - 1u : 0;
		}
		printf("board %u: %lu of %" PRIu32 " received, %lu "
		       "duplicate%s\n", s, got, t->n, twice,
		       twice == 1 ? "" : "s");
		lost += t->n - got;
		dups += twice;
	}
	printf("fanin: lost %lu, duplicates %lu (at most %d: one per kill)\n",
	       lost, dups, kills);
	return lost == 0 && dups <= (unsigned long)kills ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct smq_geometry g = { .boards = BOARDS, .queues = 1,
				  .entries = 16,
				  .entry_size = sizeof(uint32_t) };
	struct tally t = { .n = 2000 };
	struct smq_window *w;
	char spec_buf[64];
	const char *spec = NULL;
	pid_t senders[BOARDS];
	int log[2], kills = 2, opt, err, rc = 0, status;

	while ((opt = getopt(argc, argv, "w:n:k:")) != -1) {
		if (opt == 'w')
			spec = optarg;
		else if (opt == 'n' && atol(optarg) > 0)
			t.n = (uint32_t)atol(optarg);
		else if (opt == 'k' && (kills = atoi(optarg)) >= 0)
			continue;
		else
			goto usage;
	}
	if (optind < argc)
		goto usage;
	if (!spec) {
		snprintf(spec_buf, sizeof(spec_buf), "shm:smq-fanin-%ld",
			 (long)getpid());
		spec = spec_buf;
	}
	for (unsigned s = 1; s <= SENDERS; s++)
		if (!(t.seen[s] = calloc(t.n, 1))) {
			perror("fanin");
			return 1;
		}
	if (pipe(log) < 0) {
		perror("fanin: pipe");
		return 1;
	}

	/* Board 0 formats the window; its receiver processes come later. */
	if ((err = smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w)))
		return fail(spec, "open", err);
	err = smq_init(w, &g, sizeof(g));
	smq_close(w);
	if (err)
		return fail(spec, "init", err);
	printf("fanin: %d senders x %" PRIu32 " messages to queue 0; the "
	       "receiver is killed up to %d times\n", SENDERS, t.n, kills);
	for (unsigned s = 1; s <= SENDERS; s++)
		if ((senders[s] = start(sender, spec, s, t.n)) < 0)
			rc = 1;
	if (!rc && (kills = run_receiver(spec, log, &t, kills)) < 0) {
		fprintf(stderr, "fanin: the receiver failed\n");
		rc = 1;
	}
	for (unsigned s = 1; s <= SENDERS; s++)
		if (senders[s] > 0 &&
		    (waitpid(senders[s], &status, 0) != senders[s] ||
		     !WIFEXITED(status) || WEXITSTATUS(status)))
			rc = 1;
	read_records(log[0], &t, 0);
	if (summary(&t, kills < 0 ? 0 : kills))
		rc = 1;
	if ((err = smq_remove(spec)) && err != -ENOENT)
		rc = fail(spec, "remove", err);
	for (unsigned s = 1; s <= SENDERS; s++)
		free(t.seen[s]);
	return rc;
usage:
	fprintf(stderr, "usage: %s [-w SPEC] [-n MESSAGES] [-k KILLS]\n",
		argv[0]);
	return 2;
}
