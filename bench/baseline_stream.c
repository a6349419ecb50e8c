/* The stream baselines: a pipe, a Unix SEQPACKET socket and a POSIX
 * message queue (see baseline_proc.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "../cli/measure/baseline_proc.h"
#include "products.h"

/* The writer is the parent (on cpu_a), the reader the child (on cpu_b).  The
 * time runs from just before the writer's first write to just after the
 * reader's last read: the reader passes its end time back in the shared
 * page.  A writer that stops early ends the stream: it closes a pipe (the
 * reader sees end of file), and sends a message of the wrong length on a
 * socket or a message queue (0 bytes, or 1 when messages are empty). */
struct stream {
	enum stream_kind kind;
	size_t size;
	int wfd, rfd;        /* pipe ends or the socket pair, -1 when closed */
	mqd_t mq;            /* (mqd_t)-1 when closed */
	size_t bufsize;      /* room for a message, plus one byte */
};

static long read_limit(const char *path)
{
	FILE *f = fopen(path, "re");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static const char *mq_open_why(int e, size_t msgsize)
{
	long max;

	switch (e) {
	case EINVAL:
		max = read_limit("/proc/sys/fs/mqueue/msgsize_max");
		if (max >= 0 && msgsize > (size_t)max) {
			snprintf(why_buf, sizeof(why_buf), "%zu-byte messages exceed "
				 "/proc/sys/fs/mqueue/msgsize_max (%ld)", msgsize, max);
			return why_buf;
		}
		return "mq_open refused 10 messages of this size: see "
		       "/proc/sys/fs/mqueue/msgsize_max and msg_max";
	case EMFILE:
		return "mq_open: the message queue byte limit (ulimit -q, "
		       "RLIMIT_MSGQUEUE) or the open file limit is reached";
	case ENFILE:
		return "mq_open: the system's open file limit is reached";
	case ENOSPC:
		return "mq_open: /proc/sys/fs/mqueue/queues_max is reached";
	case EACCES:
	case EPERM:
		return "mq_open: not allowed to create a message queue";
	case ENOSYS:
		return "this kernel has no POSIX message queues";
	case ENOMEM:
		return "mq_open: out of memory";
	default:
		return "mq_open failed";
	}
}

static void stream_close(struct stream *s)
{
	if (s->wfd >= 0)
		close(s->wfd);
	if (s->rfd >= 0)
		close(s->rfd);
	if (s->mq != (mqd_t)-1)
		mq_close(s->mq);
	s->wfd = s->rfd = -1;
	s->mq = (mqd_t)-1;
}

static int stream_open(struct stream *s, const char **why)
{
	int fds[2];

	switch (s->kind) {
	case STREAM_PIPE:
		if (pipe2(fds, O_CLOEXEC))
			return fail(why, "pipe failed", -errno);
		s->rfd = fds[0];
		s->wfd = fds[1];
		return 0;
	case STREAM_UNIX: {
		int sndbuf;
		socklen_t len = sizeof(sndbuf);
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds))
			return fail(why, "socketpair failed", -errno);
		s->wfd = fds[0];
		s->rfd = fds[1];
		/* The kernel refuses a datagram over the send buffer less 32
		 * bytes; grow the buffer (up to wmem_max) for big messages. */
		if (getsockopt(s->wfd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len))
			return fail(why, "getsockopt failed", -errno);
		if (s->size + 64 > (size_t)sndbuf) {
			int want = s->size > INT_MAX / 2 ? INT_MAX : (int)s->size * 2;
			setsockopt(s->wfd, SOL_SOCKET, SO_SNDBUF, &want, sizeof(want));
			len = sizeof(sndbuf);
			if (getsockopt(s->wfd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len))
				return fail(why, "getsockopt failed", -errno);
		}
		if (s->size + 32 > (size_t)sndbuf) {
			snprintf(why_buf, sizeof(why_buf), "%zu-byte messages exceed the "
				 "socket send buffer (%d; /proc/sys/net/core/wmem_max)",
				 s->size, sndbuf);
			return fail(why, why_buf, -EMSGSIZE);
		}
		return 0;
	}
	case STREAM_MQUEUE: {
		static unsigned serial;
		struct mq_attr attr = { 0 };
		char name[64];
		if (s->size > LONG_MAX)
			return fail(why, mq_open_why(EINVAL, s->size), -EINVAL);
		attr.mq_maxmsg = 10;
		attr.mq_msgsize = (long)(s->size ? s->size : 1);
		for (int tries = 0; s->mq == (mqd_t)-1; tries++) {
			snprintf(name, sizeof(name), "/smq-baseline-%ld-%u",
				 (long)getpid(),
				 __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED));
			s->mq = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
			if (s->mq == (mqd_t)-1 && (errno != EEXIST || tries == 9)) {
				int e = errno;
				return fail(why, mq_open_why(e, (size_t)attr.mq_msgsize), -e);
			}
		}
		/* The child inherits the descriptor across fork, so both
		 * sides have it open already: no name is left behind. */
		mq_unlink(name);
		return 0;
	}
	}
	return fail(why, "unknown stream kind", -EINVAL);
}

/* The writer sends one message of len bytes, whole.  deadline bounds a
 * blocked mq_send so a dead reader is noticed; it is renewed when it passes. */
static int send_msg(struct stream *s, const char *buf, size_t len,
		    struct peer *p, struct timespec *deadline)
{
	size_t off = 0;
	ssize_t n;

	switch (s->kind) {
	case STREAM_PIPE:
		while (off < len) {
			if ((n = write(s->wfd, buf + off, len - off)) >= 0)
				off += (size_t)n;
			else if (errno != EINTR)
				return -errno;
		}
		return 0;
	case STREAM_UNIX:
		while (send(s->wfd, buf, len, MSG_NOSIGNAL) < 0)
			if (errno != EINTR)
				return -errno;
		return 0;
	case STREAM_MQUEUE:
		while (mq_timedsend(s->mq, buf, len, 0, deadline) < 0) {
			if (errno == ETIMEDOUT) {
				if (!peer_alive(p))
					return -ECHILD;
				clock_gettime(CLOCK_REALTIME, deadline);
				deadline->tv_sec += 1;
			} else if (errno != EINTR) {
				return -errno;
			}
		}
		return 0;
	}
	return -EINVAL;
}

/* The reader takes one message: 1, 0 at the end of the stream, or -errno. */
static int recv_msg(struct stream *s, char *buf)
{
	size_t off = 0;
	ssize_t n;

	switch (s->kind) {
	case STREAM_PIPE:
		while (off < s->size) {
			n = read(s->rfd, buf + off, s->size - off);
			if (n > 0)
				off += (size_t)n;
			else if (n == 0)
				return off ? -EPIPE : 0;
			else if (errno != EINTR)
				return -errno;
		}
		return 1;
	case STREAM_UNIX:
		while ((n = recv(s->rfd, buf, s->bufsize, 0)) < 0)
			if (errno != EINTR)
				return -errno;
		return (size_t)n == s->size;
	case STREAM_MQUEUE:
		while ((n = mq_receive(s->mq, buf, s->bufsize, NULL)) < 0)
			if (errno != EINTR)
				return -errno;
		return (size_t)n == s->size;
	}
	return -EINVAL;
}

static void child_stream(struct stream *s, struct shared *sh, uint64_t count,
			 pid_t parent, int cpu, const struct affinity *before)
{
	struct control *ctl = &sh->ctl;
	uint64_t n;
	char *buf;
	int e = 0;

	if (s->wfd >= 0) {
		close(s->wfd);  /* else a pipe's reader never sees end of file */
		s->wfd = -1;
	}
	child_setup(parent, cpu, before, ctl);
	if (!(buf = malloc(s->bufsize))) {
		ctl->err = -ENOMEM;
		ctl->why = "no memory for the reader's buffer";
		raise_flag(&ctl->ready);
		_exit(1);
	}
	memset(buf, 0, s->bufsize);
	struct cpu_window win;
	cpu_window_start(&win);
	raise_flag(&ctl->ready);
	for (n = 0; n < count; n++)
		if ((e = recv_msg(s, buf)) <= 0)
			break;
	ctl->end_ns = now_ns();
	ctl->received = n;
	cpu_window_stop(&win, &ctl->cpu, &ctl->wall);
	free(buf);
	if (e < 0) {
		ctl->err = e;
		ctl->why = e == -EPIPE ? "the pipe ended inside a message"
				       : "the reader's read failed";
		_exit(1);
	}
	_exit(0);
}

static const char *const stream_names[] = {
	[STREAM_PIPE] = "pipe",
	[STREAM_UNIX] = "unix seqpacket",
	[STREAM_MQUEUE] = "mqueue",
};

/* The writer's side of a stream: what it measured. */
struct stream_run {
	uint64_t sent, t0;      /* messages written; when, now_ns() */
	double cpu, wall;       /* see cpu_window_stop() */
	bool shown;             /* progress was shown */
};

/* The writer: count messages of size bytes (fewer when interrupted, and
 * then the end of the stream), timed.  0, or the error that stopped it. */
static int stream_write(struct stream *s, const char *buf, uint64_t count,
			struct peer *peer, const char *name,
			struct stream_run *sr)
{
	struct timespec deadline;
	struct cpu_window win;
	size_t size = s->size;
	int err = 0;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 1;
	cpu_window_start(&win);
	sr->t0 = now_ns();
	while (sr->sent < count && !measure_interrupted) {
		if ((err = send_msg(s, buf, size, peer, &deadline)))
			break;
		if (++sr->sent % PROGRESS_EVERY == 0) {
			progress(name, sr->sent, count);
			sr->shown = true;
		}
	}
	if (!err && sr->sent < count && s->kind != STREAM_PIPE)
		err = send_msg(s, buf, size ? 0 : 1, peer, &deadline);
	cpu_window_stop(&win, &sr->cpu, &sr->wall);
	if (s->wfd >= 0) {
		close(s->wfd);
		s->wfd = -1;
	}
	return err;
}

/* Waits for the reader to leave and makes the result of what was
 * measured.  0, or a negative errno with *why set. */
static int stream_finish(struct shared *sh, enum stream_kind kind, int err,
			 struct peer *peer, const struct stream_run *sr,
			 struct result *r, const char **why)
{
	/* On a writer's error the reader waits for more: kill it. */
	peer_reap(peer, err && err != -ECHILD);
	if (sr->shown)
		progress_end();
	if (err == -EINTR)
		return err;
	/* a pipe or socket with no reader: the reader left */
	if (err == -ECHILD || err == -EPIPE || err == -ECONNRESET ||
	    sh->ctl.err || (!err && !peer_exited_ok(peer)))
		return peer_error(&sh->ctl, why);
	if (err == -EMSGSIZE && kind == STREAM_UNIX) {
		fail(why, "the socket refused a message this large", err);
		return err;
	}
	if (err) {
		fail(why, kind == STREAM_PIPE ? "writing to the pipe failed" :
			  kind == STREAM_UNIX ? "sending on the socket failed" :
			  "mq_send failed", err);
		return err;
	}
	if (!sh->ctl.received)
		return fail(why, "interrupted before anything was measured",
			    -EINTR);
	return reader_result(sh, sr->sent, sr->t0, sr->cpu, sr->wall, r, why);
}

/* What a stream of this kind cannot carry: 0, or a negative errno with
 * *why set.  Names the result after the kind. */
static int stream_check(enum stream_kind kind, size_t size, uint64_t count,
			struct result *r, const char **why)
{
	if ((unsigned)kind > STREAM_MQUEUE) {
		result_init(r, "stream", size);
		return fail(why, "unknown stream kind", -EINVAL);
	}
	result_init(r, stream_names[kind], size);
	if (!count)
		return fail(why, "no messages to measure", -EINVAL);
	if (kind == STREAM_PIPE && !size)
		return fail(why, "a pipe carries no 0-byte messages", -EINVAL);
	if (size > SIZE_MAX - 2)
		return fail(why, "messages too large", -EINVAL);
	return 0;
}

int baseline_stream(enum stream_kind kind, size_t size, uint64_t count,
		    int cpu_a, int cpu_b, struct result *r, const char **why)
{
	struct stream s = { kind, size, -1, -1, (mqd_t)-1, 0 };
	struct peer peer = { -1, false, 0 };
	struct shared *sh = NULL;
	struct affinity aff;
	struct sigaction ign, old_pipe;
	struct stream_run sr = { .cpu = -1 };
	char *buf = NULL;
	int err;

	if ((err = stream_check(kind, size, count, r, why)))
		return err;
	s.bufsize = (size ? size : 1) + 1;
	if (!(buf = malloc(s.bufsize)))
		return fail(why, "no memory for the writer's buffer", -ENOMEM);
	memset(buf, 0xa5, s.bufsize);
	if (!(sh = shared_get())) {
		free(buf);
		return fail(why, "no shared memory page", -ENOMEM);
	}
	sh->ctl.cpu = -1;
	if ((err = stream_open(&s, why))) {
		stream_close(&s);
		shared_put(sh);
		free(buf);
		return err;
	}

	/* A dead reader must give the writer EPIPE, not kill the program. */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old_pipe);
	pid_t parent = getpid();
	if ((err = start_peer(cpu_a, &aff, &peer, why)))
		goto out;
	if (peer.pid == 0) {
		free(buf);  /* the writer's; the reader has its own */
		child_stream(&s, sh, count, parent, cpu_b, &aff);
	}
	if (s.rfd >= 0) {
		close(s.rfd);
		s.rfd = -1;
	}

	if ((err = wait_flag(&sh->ctl.ready, &peer)) || sh->ctl.err) {
		if (err == -EINTR)
			fail(why, "interrupted before anything was measured", err);
	} else {
		err = stream_write(&s, buf, count, &peer, r->name, &sr);
	}
	err = stream_finish(sh, kind, err, &peer, &sr, r, why);
out:
	affinity_restore(&aff);
	sigaction(SIGPIPE, &old_pipe, NULL);
	stream_close(&s);
	shared_put(sh);
	free(buf);
	return err;
}
