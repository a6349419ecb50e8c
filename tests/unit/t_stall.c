/* Maintenance against a call held at a known point, deterministically.
 *
 * A call is held mid-copy by a page fault: its buffer is a page that
 * userfaultfd leaves missing until the test releases it (a sender's
 * source, read inside the send; a receiver's destination, written between
 * finding a message and taking it).  A receiver is held inside its take
 * by the test builds' hook.  Board 0 then clears or re-formats the window
 * (or tries to), and the call is released.  Whatever the order, nothing
 * of the stale call lands in the new layout, no message is lost, doubled
 * or overwritten, and smq_validate agrees.  Also: a held call outlasting
 * the handshake timeout is named and the window left as it was; a second
 * maintenance while one runs is refused; a killed holder does not block.
 *
 * Needs userfaultfd (root, or vm.unprivileged_userfaultfd=1): else the
 * page-fault parts skip, the hook parts still run. */
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include "testint.h"
#include "testlib.h"

/* the least count of checks a run makes (424 as root here; fewer
 * where a part needs root or a device) */
TEST_FLOOR(400);

#define PAGE 4096
#define HANDSHAKE_MS 300

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A nap between looks at a word another process or thread sets, or at
 * the window, where no event says the change came; each use says what. */
static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Between the test and the process it holds. */
struct shared {
	_Atomic int held;       /* the call is held */
	_Atomic int release;    /* the test lets it go */
	_Atomic int result;     /* what the held call returned */
	_Atomic int done;
	_Atomic int told;       /* a maintenance of the child told the boards
				   (SMQ_HOOK_MAINT_TOLD): its handshake next */
	_Atomic int returned;   /* the held call has returned */
	_Atomic int go_on;      /* the test has looked: go on */
	_Atomic int got;        /* messages the receiver took, after */
	char text[64];          /* the first one */
};

static struct shared *shared_new(void)
{
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(sh != MAP_FAILED);
	memset(sh, 0, sizeof(*sh));
	return sh;
}

static void wait_for(_Atomic int *flag, const char *what)
{
	uint64_t until = now_ms() + 10000;
	while (!atomic_load(flag))
		if (now_ms() > until)
			FAIL("%s: not within 10 s", what);
		else
			/* a word the other side sets: no event */
			nap_ms(1);
}

/* ---- a page whose first touch blocks until released ---- */

struct held_page {
	int uffd;
	uint8_t *page;
	uint8_t content[PAGE];
	struct shared *sh;
};

static void *serve_fault(void *p)
{
	struct held_page *h = p;
	struct pollfd pfd = { h->uffd, POLLIN, 0 };
	struct uffd_msg msg;

	while (poll(&pfd, 1, -1) < 0 && errno == EINTR)
		;
	if (read(h->uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT)
		FAIL("userfaultfd: no fault to serve");
	atomic_store(&h->sh->held, 1);
	while (!atomic_load(&h->sh->release))
		/* until the test says release: a word, no event */
		nap_ms(1);
	struct uffdio_copy copy = {
		.dst = (uintptr_t)h->page, .src = (uintptr_t)h->content,
		.len = PAGE, .mode = 0,
	};
	if (ioctl(h->uffd, UFFDIO_COPY, &copy) < 0)
		FAIL("UFFDIO_COPY: %s", strerror(errno));
	return NULL;
}

static int uffd_open(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	struct uffdio_api api = { .api = UFFD_API, .features = 0 };

	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api) < 0) {
		close(fd);
		return -errno;
	}
	return fd;
}

/* A page that holds content once released; its server thread runs. */
static void held_page(struct held_page *h, struct shared *sh, const void *c,
		      size_t n, pthread_t *th)
{
	h->sh = sh;
	h->uffd = uffd_open();
	CHECK(h->uffd >= 0);
	h->page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(h->page != MAP_FAILED);
	memset(h->content, 0, sizeof(h->content));
	memcpy(h->content, c, n);
	struct uffdio_register reg = {
		.range = { (uintptr_t)h->page, PAGE },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	if (ioctl(h->uffd, UFFDIO_REGISTER, &reg) < 0)
		FAIL("UFFDIO_REGISTER: %s", strerror(errno));
	CHECK(pthread_create(th, NULL, serve_fault, h) == 0);
}

/* ---- the held processes ---- */

struct job {
	const char *spec;
	unsigned board, queue;
	const char *text;
	struct shared *sh;
};

/* Sends text from a page that faults: held inside smq_send, mark up. */
static int held_sender(void *p)
{
	struct job *j = p;
	struct smq_window *w;
	struct smq_queue *q;
	struct held_page h;
	pthread_t th;

	OK(smq_open(j->spec, j->board, 0, &w));
	OK(smq_queue_open(w, j->queue, SMQ_SENDER, 0, &q));
	held_page(&h, j->sh, j->text, strlen(j->text), &th);
	atomic_store(&j->sh->result, smq_send(q, h.page, strlen(j->text), 5000));
	atomic_store(&j->sh->done, 1);
	CHECK(pthread_join(th, NULL) == 0);
	smq_queue_close(q);
	smq_close(w);
	return 0;
}

/* Takes every message left in queue; counts them, keeps the first. */
static int take_all(const char *spec, unsigned board, unsigned queue,
		    struct shared *sh)
{
	struct smq_window *w;
	struct smq_queue *q;
	char buf[64];
	size_t n;

	/* a maintenance may still be finishing: stale means attach again */
	for (int tries = 0;; tries++) {
		int err = smq_open(spec, board, 0, &w);
		if (!err &&
		    (err = smq_queue_open(w, queue, SMQ_RECEIVER, SMQ_POLL, &q)))
			OK(smq_close(w));
		if (!err)
			break;
		/* stale, or an init still writing */
		if ((err != -ESTALE && err != -EBUSY) || tries == 1000)
			FAIL("take_all: %s", smq_strerror(err));
		/* again: an init writes, and no event says it ended */
		nap_ms(5);
	}
	while (smq_receive(q, buf, sizeof(buf) - 1, &n, NULL, 200) == 0) {
		buf[n] = 0;
		if (!atomic_fetch_add(&sh->got, 1))
			snprintf(sh->text, sizeof(sh->text), "%s", buf);
	}
	OK(smq_queue_close(q));
	OK(smq_close(w));
	return 0;
}

/* Receives into a page that faults: held between finding the message and
 * taking it (no mark up); then takes what is left, attached anew. */
static int held_receiver(void *p)
{
	struct job *j = p;
	struct smq_window *w;
	struct smq_queue *q;
	struct held_page h;
	pthread_t th;
	size_t n;

	OK(smq_open(j->spec, j->board, 0, &w));
	OK(smq_queue_open(w, j->queue, SMQ_RECEIVER, SMQ_POLL, &q));
	held_page(&h, j->sh, "", 0, &th);
	int err = smq_receive(q, h.page, PAGE, &n, NULL, 5000);
	atomic_store(&j->sh->result, err);
	if (!err) {
		atomic_fetch_add(&j->sh->got, 1);
		snprintf(j->sh->text, sizeof(j->sh->text), "%.*s", (int)n, h.page);
	}
	atomic_store(&j->sh->returned, 1);
	wait_for(&j->sh->go_on, "the test's look");
	CHECK(pthread_join(th, NULL) == 0);
	smq_queue_close(q);
	smq_close(w);
	take_all(j->spec, j->board, j->queue, j->sh);
	atomic_store(&j->sh->done, 1);
	return 0;
}

/* Held inside its take by the hook (at hold_at), mark up; a take of one
 * message, or of a burst of hook_burst. */
static struct shared *hook_sh;
static enum smq_hook hold_at = SMQ_HOOK_COMMIT;
static unsigned hook_burst = 1;
static void hold_here(enum smq_hook where)
{
	if (where != hold_at || atomic_load(&hook_sh->held))
		return;
	atomic_store(&hook_sh->held, 1);
	while (!atomic_load(&hook_sh->release))
		/* until the test says release: a word, no event */
		nap_ms(1);
}

static int hooked_receiver(void *p)
{
	struct job *j = p;
	struct smq_window *w;
	struct smq_queue *q;
	char buf[64];
	size_t n;

	OK(smq_open(j->spec, j->board, 0, &w));
	OK(smq_queue_open(w, j->queue, SMQ_RECEIVER, SMQ_POLL, &q));
	hook_sh = j->sh;
	smq_test_hook = hold_here;
	int err;
	if (hook_burst > 1) {
		char more[8][64];
		struct iovec v[8];
		size_t lens[8];
		CHECK(hook_burst <= 8);
		for (unsigned i = 0; i < hook_burst; i++)
			v[i] = (struct iovec){ more[i], sizeof(more[i]) - 1 };
		err = smq_receive_burst(q, v, hook_burst, lens, NULL, 5000);
		if (err > 0) {
			atomic_fetch_add(&j->sh->got, err);
			more[0][lens[0]] = 0;
			snprintf(j->sh->text, sizeof(j->sh->text), "%s",
				 more[0]);
			err = err == (int)hook_burst ? 0 : -EIO;
		}
	} else {
		err = smq_receive(q, buf, sizeof(buf) - 1, &n, NULL, 5000);
		if (!err) {
			buf[n] = 0;
			atomic_fetch_add(&j->sh->got, 1);
			snprintf(j->sh->text, sizeof(j->sh->text), "%s", buf);
		}
	}
	smq_test_hook = NULL;
	atomic_store(&j->sh->result, err);
	atomic_store(&j->sh->returned, 1);
	smq_queue_close(q);
	smq_close(w);
	take_all(j->spec, j->board, j->queue, j->sh);
	atomic_store(&j->sh->done, 1);
	return 0;
}

/* ---- board 0's side ---- */

struct maint {
	struct smq_window *w;
	int kind;               /* 0: clear(queue), 1: init(g) */
	int queue;
	struct smq_geometry g;
	_Atomic int result, done;
};

static void *run_maint(void *p)
{
	struct maint *m = p;
	int err = m->kind ? smq_init(m->w, &m->g, sizeof(m->g)) : smq_clear(m->w, m->queue);
	atomic_store(&m->result, err);
	atomic_store(&m->done, 1);
	return NULL;
}

static const struct smq_geometry G = { 2, 2, 8, 64, NULL };
static const struct smq_geometry G_OTHER = { 3, 5, 16, 128, NULL };

static void send_text(const char *spec, unsigned board, unsigned queue,
		      const char *text)
{
	struct smq_window *w;
	struct smq_queue *q;

	OK(smq_open(spec, board, 0, &w));
	OK(smq_queue_open(w, queue, SMQ_SENDER, 0, &q));
	OK(smq_send(q, text, strlen(text), 0));
	OK(smq_queue_close(q));
	OK(smq_close(w));
}

/* How many messages queue holds and the first, taken by a new receiver. */
static int drain(const char *spec, unsigned board, unsigned queue,
		 char *first)
{
	struct shared *sh = shared_new();
	take_all(spec, board, queue, sh);
	int got = sh->got;
	snprintf(first, 64, "%s", sh->text);
	munmap(sh, sizeof(*sh));
	return got;
}

/* a maintenance of this process: told the boards, writing */
static _Atomic int maint_told, maint_writing;
static void count_maint(enum smq_hook where)
{
	if (where == SMQ_HOOK_MAINT_TOLD)
		maint_told++;
	else if (where == SMQ_HOOK_MAINT_WRITING)
		maint_writing++;
}

/* A sender held mid-copy while board 0 clears or re-formats. */
static void sender_held(int kind, int queue, const char *what)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, G.boards, G.queues, G.entries,
					 G.entry_size);
	struct shared *sh = shared_new();
	struct job j = { spec, 1, 0, "held in the copy", sh };
	struct maint m = { w, kind, queue, G_OTHER, 0, 0 };
	pthread_t th;
	char first[64];

	pid_t pid = test_fork(held_sender, &j);
	wait_for(&sh->held, "the sender held");
	maint_told = maint_writing = 0;
	smq_test_hook = count_maint;
	CHECK(pthread_create(&th, NULL, run_maint, &m) == 0);
	if (kind == 0 && queue == 1) {
		/* a clear of another queue has no call of its own to wait
		 * for: it is done while the send is still held (30 s: a
		 * give-up bound) */
		WAIT_UNTIL(atomic_load(&m.done), 30, "%s: board 0's clear of "
			   "another queue while the send is held", what);
		if (atomic_load(&sh->done))
			FAIL("%s: board 0 waited for a call on another queue",
			     what);
	} else {
		/* the handshake waits for the held call: it has told the
		 * boards and is not writing; what the held send returns
		 * after the release (0, its message gone with the queue)
		 * says it landed before the new layout */
		WAIT_UNTIL(maint_told > 0, 30, "%s: board 0's maintenance to "
			   "begin its handshake", what);
		if (maint_writing || atomic_load(&m.done))
			FAIL("%s: board 0 did not wait for the call held "
			     "mid-copy (returned %d)", what,
			     atomic_load(&m.result));
	}
	atomic_store(&sh->release, 1);
	CHECK(pthread_join(th, NULL) == 0);
	test_wait_ok(pid, "held sender");
	smq_test_hook = NULL;
	OK(atomic_load(&m.result));
	/* the send finished before the new layout was written */
	OK(atomic_load(&sh->result));
	OK(smq_validate(w, NULL, 0));
	int got = drain(spec, 0, 0, first);
	if (kind == 0 && queue == 1) {
		/* its queue was kept: the message is there, once */
		if (got != 1 || strcmp(first, "held in the copy"))
			FAIL("%s: %d messages after, first '%s'", what, got, first);
	} else if (got != 0) {
		FAIL("%s: %d messages after the queue was emptied", what, got);
	}
	OK(smq_validate(w, NULL, 0));
	if (kind == 0 && queue == 1)
		printf("%s: board 0 went on at once; the held send landed "
		       "after; %d message after, whole\n", what, got);
	else
		printf("%s: board 0 waited for the call; it landed before the "
		       "new layout; %d message%s after, whole\n", what, got,
		       got == 1 ? "" : "s");
	OK(smq_close(w));
	munmap(sh, sizeof(*sh));
}

/* A sender held longer than the handshake lasts: named, window as it was. */
/* An init of G_OTHER, run beside the test: its result. */
struct init_job { struct smq_window *w; _Atomic int result, done; };
static void *init_beside(void *p)
{
	struct init_job *ij = p;

	atomic_store(&ij->result, smq_init(ij->w, &G_OTHER, sizeof(G_OTHER)));
	atomic_store(&ij->done, 1);
	return NULL;
}

static void sender_held_too_long(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, G.boards, G.queues, G.entries,
					 G.entry_size);
	struct shared *sh = shared_new();
	struct job j = { spec, 1, 0, "outlasts the handshake", sh };
	struct smq_window_info before, after;
	struct smq_holdout ho;
	struct smq_fault f;
	char first[64];
	size_t len;

	pid_t pid = test_fork(held_sender, &j);
	wait_for(&sh->held, "the sender held");
	/* a receiver of queue 0 in this process, on a window handle of its
	 * own */
	struct smq_window *wr;
	struct smq_queue *rq;
	OK(smq_open(spec, 0, 0, &wr));
	OK(smq_queue_open(wr, 0, SMQ_RECEIVER, 0, &rq));
	OK(smq_window_info(w, &before, sizeof(before)));
	uint8_t *snap = test_snapshot(spec, &len);
	OK(smq_set_timeout(w, SMQ_TIMEOUT_HANDSHAKE, HANDSHAKE_MS));
	uint64_t t0 = now_ms();
	struct init_job ij = { w, 0, 0 };
	pthread_t th;
	CHECK(pthread_create(&th, NULL, init_beside, &ij) == 0);
	/* the receiver meets the handshake and does what smq_receive(3)
	 * says: closes both handles (stale, its close cannot give its claim
	 * back) to open them again */
	char buf[64];
	size_t n;
	int err;
	while ((err = smq_receive(rq, buf, sizeof(buf), &n, NULL, 0)) ==
	       -EAGAIN && !atomic_load(&ij.done))
		/* a receive of 0 ms meets the handshake only as it looks */
		nap_ms(1);
	EXPECT(err, -ESTALE);
	OK(smq_queue_close(rq));
	OK(smq_close(wr));
	CHECK(pthread_join(th, NULL) == 0);
	EXPECT(atomic_load(&ij.result), -SMQ_EHELD);
	uint64_t took = now_ms() - t0;
	OK(smq_holdout(w, &ho, sizeof(ho)));
	if (ho.board != 1 || ho.pid != (uint32_t)pid || !ho.same_host)
		FAIL("holdout names board %u pid %u (same host %d), not board "
		     "1 pid %d", ho.board, ho.pid, ho.same_host, (int)pid);
	/* a lower bound only (the handshake's own timeout, which no busy
	 * machine shortens): never how fast */
	CHECK(took >= HANDSHAKE_MS);
	/* as it was: same generation, usable, the same bytes but for the
	 * maintenance line and the marks */
	OK(smq_validate(w, &f, sizeof(f)));
	OK(smq_window_info(w, &after, sizeof(after)));
	CHECK(after.generation == before.generation && after.maint_phase == 0);
	CHECK(after.system_state == before.system_state);
	test_same_except(snap, len, spec, "a handshake that failed",
			 offsetof(struct smq_sb, maint_owner), SMQ_BOARD_TABLE);
	free(snap);
	/* the window as it was: the receiver opens its queue again (its old
	 * claim, of no open handle, is its own to take back), and a second
	 * receiver of the process is still refused */
	OK(smq_open(spec, 0, 0, &wr));
	OK(smq_queue_open(wr, 0, SMQ_RECEIVER, 0, &rq));
	struct smq_queue *twice;
	EXPECT(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &twice), -SMQ_EHOLDING);
	OK(smq_queue_close(rq));
	OK(smq_close(wr));
	/* the held send goes on in the layout it began in */
	atomic_store(&sh->release, 1);
	test_wait_ok(pid, "held sender");
	OK(atomic_load(&sh->result));
	int got = drain(spec, 0, 0, first);
	if (got != 1 || strcmp(first, "outlasts the handshake"))
		FAIL("after a failed handshake: %d messages, first '%s'", got,
		     first);
	/* and now the init goes through */
	OK(smq_init(w, &G_OTHER, sizeof(G_OTHER)));
	OK(smq_validate(w, NULL, 0));
	printf("a call held past the handshake (%d ms): init refused in %llu ms "
	       "naming board %u pid %u; the window as it was; the message "
	       "delivered once; init again: done\n", HANDSHAKE_MS,
	       (unsigned long long)took, ho.board, ho.pid);
	OK(smq_close(w));
	munmap(sh, sizeof(*sh));
}

/* A receiver held between finding a message and taking it (by a page
 * fault), or inside its take (by the hook), while board 0 clears or
 * re-formats. */
static void receiver_held(int (*fn)(void *), bool in_take, int kind,
			  int queue, const char *what)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, G.boards, G.queues, G.entries,
					 G.entry_size);
	struct shared *sh = shared_new();
	struct job j = { spec, 1, 1, NULL, sh };
	struct maint m = { w, kind, queue, G_OTHER, 0, 0 };
	pthread_t th;
	size_t len;

	send_text(spec, 0, 1, "one");
	send_text(spec, 0, 1, "two");
	/* a clear of queue 0 is not about the receiver of queue 1 at all */
	bool other = kind == 0 && queue == 0;
	pid_t pid = test_fork(fn, &j);
	wait_for(&sh->held, "the receiver held");
	maint_told = maint_writing = 0;
	smq_test_hook = count_maint;
	CHECK(pthread_create(&th, NULL, run_maint, &m) == 0);
	if (in_take && !other) {
		/* its handshake begun (told), not writing: it waits */
		WAIT_UNTIL(maint_told > 0, 30, "%s: board 0's maintenance to "
			   "begin its handshake", what);
		if (maint_writing || atomic_load(&m.done))
			FAIL("%s: board 0 did not wait for the held take", what);
	}
	if (!in_take || other) {
		/* nothing to wait for: the copy out writes nothing of ours */
		wait_for(&m.done, "maintenance beside a copy out");
		OK(atomic_load(&m.result));
	}
	uint8_t *snap = test_snapshot(spec, &len);
	atomic_store(&sh->release, 1);
	CHECK(pthread_join(th, NULL) == 0);
	smq_test_hook = NULL;
	OK(atomic_load(&m.result));
	if (other) {
		/* its queue was not touched: the take goes through */
		wait_for(&sh->returned, "the receiver");
		OK(atomic_load(&sh->result));
	} else if (!in_take) {
		/* released after: its take is refused and writes nothing but
		 * its own marks */
		wait_for(&sh->returned, "the receiver");
		EXPECT(atomic_load(&sh->result), -ESTALE);
		test_same_except(snap, len, spec, what, SMQ_CTL_OFF,
				 SMQ_BOARD_TABLE);
	}
	atomic_store(&sh->go_on, 1);
	free(snap);
	test_wait_ok(pid, "held receiver");
	OK(smq_validate(w, NULL, 0));
	/* Queue 1 kept: every message exactly once, in order, over the held
	 * take and what a new receiver took after; emptied: none after. */
	int got = atomic_load(&sh->got);
	int taken = (in_take || other) && !atomic_load(&sh->result);
	if (other) {
		if (got != 2 || strcmp(sh->text, "one"))
			FAIL("%s: %d messages (first '%s'), not 'one' 'two'", what,
			     got, sh->text);
	} else if (got != taken) {
		FAIL("%s: %d messages after the queue was emptied", what,
		     got - taken);
	}
	printf("%s: %s; %d message%s taken in all, none twice\n", what,
	       other ? "board 0 went on; the take went through" :
	       in_take ? "board 0 waited for the take" :
	       "board 0 went on; the late take was refused", got,
	       got == 1 ? "" : "s");
	OK(smq_close(w));
	munmap(sh, sizeof(*sh));
}

/* A receiver held where it looks at its lanes with no mark up: between a
 * signature that matched and the entry's header (peeking), or between a
 * lane's bottom and its top (waiting).  Board 0 re-formats meanwhile, which
 * zeroes the entry and the lane.  What the receiver then reads is of the
 * new layout: it says -ESTALE, never a corrupt window or an empty message
 * that was never sent. */
static int looking_receiver(void *p)
{
	struct job *j = p;
	struct smq_window *w;
	struct smq_queue *q;
	const void *data;
	char buf[64];
	size_t n;
	int err;

	OK(smq_open(j->spec, j->board, 0, &w));
	OK(smq_queue_open(w, j->queue, SMQ_RECEIVER, SMQ_POLL, &q));
	if (hold_at != SMQ_HOOK_PEEK) {
		/* take what there is: the lane's bottom is past 0 */
		while (!smq_receive(q, buf, sizeof(buf), &n, NULL, 0))
			;
	}
	hook_sh = j->sh;
	smq_test_hook = hold_here;
	if (hold_at == SMQ_HOOK_OPEN_LOOK) {
		OK(smq_queue_close(q));
		q = NULL;
		err = smq_queue_open(w, j->queue, SMQ_RECEIVER, SMQ_POLL, &q);
	} else if (j->text)  /* peek only */
		err = smq_peek(q, &data, &n, NULL, 5000);
	else
		err = smq_receive(q, buf, sizeof(buf), &n, NULL, 5000);
	smq_test_hook = NULL;
	atomic_store(&j->sh->result, err);
	atomic_store(&j->sh->returned, 1);
	smq_queue_close(q);
	smq_close(w);
	return 0;
}

static void receiver_looking(enum smq_hook where, bool peek, unsigned queue,
			     const char *what)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, G.boards, G.queues, G.entries,
					 G.entry_size);
	struct shared *sh = shared_new();
	unsigned receiver = queue == 0 ? 0 : 1;
	struct job j = { spec, receiver, queue, peek ? "peek" : NULL, sh };
	size_t len;

	send_text(spec, 1 - receiver, queue, "one");
	send_text(spec, 1 - receiver, queue, "two");
	hold_at = where;
	pid_t pid = test_fork(looking_receiver, &j);
	wait_for(&sh->held, "the receiver held while it looks");
	/* no mark is up: board 0 does not wait */
	OK(smq_init(w, &G, sizeof(G)));
	uint8_t *snap = test_snapshot(spec, &len);
	atomic_store(&sh->release, 1);
	wait_for(&sh->returned, "the looking receiver");
	test_wait_ok(pid, "looking receiver");
	hold_at = SMQ_HOOK_COMMIT;
	int err = atomic_load(&sh->result);
	if (err != -ESTALE)
		FAIL("%s: %s returned %d (%s), not -ESTALE", what,
		     where == SMQ_HOOK_OPEN_LOOK ? "smq_queue_open" :
		     peek ? "smq_peek" : "smq_receive", err, smq_strerror(err));
	test_same_except(snap, len, spec, what, SMQ_CTL_OFF, SMQ_BOARD_TABLE);
	OK(smq_validate(w, NULL, 0));
	printf("%s: -ESTALE, nothing written\n", what);
	free(snap);
	OK(smq_close(w));
	munmap(sh, sizeof(*sh));
}

/* A receiver held between its two writes of a bottom: its own, then the
 * sender's copy, after a take of one message or of a burst of k.  Reading
 * the receiver's own across the bus (arming a wait for room), the sender
 * sees k more free entries than its copy says, and uses them.  The copy
 * is then behind the sender's top by a ring and k: not damage, to this
 * handle, to another of the board, to one opened now, or to validation.
 * The full lane is -EAGAIN, never a corrupt window, and every message
 * arrives once, in order. */
static void sender_beside_half_take(unsigned k)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, G.boards, G.queues, G.entries,
					 G.entry_size);
	struct shared *sh = shared_new();
	struct job j = { spec, 1, 1, NULL, sh };
	struct smq_window *ws;
	struct smq_queue *q;
	char text[16];
	unsigned sent = 0;
	int err;

	OK(smq_open(spec, 0, 0, &ws));
	OK(smq_queue_open(ws, 1, SMQ_SENDER, 0, &q));
	for (;; sent++) {
		snprintf(text, sizeof(text), "m%u", sent);
		if ((err = smq_send(q, text, strlen(text), 0)))
			break;
	}
	EXPECT(err, -EAGAIN);
	CHECK(sent == G.entries);
	struct smq_queue *other;  /* another sending handle of the board */
	OK(smq_queue_open(ws, 1, SMQ_SENDER, 0, &other));
	hold_at = SMQ_HOOK_COMMIT_FAR;
	hook_burst = k;
	pid_t pid = test_fork(hooked_receiver, &j);
	wait_for(&sh->held, "the receiver held between its bottoms");
	/* room for k: the receiver's own bottom says so */
	for (unsigned i = 0; i < k; i++, sent++) {
		snprintf(text, sizeof(text), "m%u", sent);
		OK(smq_send(q, text, strlen(text), 2000));
	}
	/* and no more, yet the lane is sound: to this handle, to another
	 * that knows only the copy, to one opened now, and to a
	 * validation */
	EXPECT(smq_send(q, "over", 4, 0), -EAGAIN);
	EXPECT(smq_send(q, "over", 4, 50), -ETIMEDOUT);
	EXPECT(smq_send(other, "over", 4, 0), -EAGAIN);
	struct smq_queue *q2;
	OK(smq_queue_open(ws, 1, SMQ_SENDER, 0, &q2));
	EXPECT(smq_send(q2, "over", 4, 0), -EAGAIN);
	OK(smq_queue_close(q2));
	OK(smq_validate(w, NULL, 0));
	atomic_store(&sh->release, 1);
	test_wait_ok(pid, "half-take receiver");
	hold_at = SMQ_HOOK_COMMIT;
	hook_burst = 1;
	OK(smq_queue_close(other));
	OK(smq_validate(w, NULL, 0));
	/* the held take got m0; take_all the rest, after it */
	if (atomic_load(&sh->result) || atomic_load(&sh->got) != (int)sent ||
	    strcmp(sh->text, "m0"))
		FAIL("half take: result %d, %d of %u messages, first '%s'",
		     atomic_load(&sh->result), atomic_load(&sh->got), sent,
		     sh->text);
	printf("a sender beside a receiver between its two bottom writes "
	       "(a take of %u): the entries it freed used, the full lane "
	       "-EAGAIN, all %u messages taken, m0 first\n", k, sent);
	OK(smq_queue_close(q));
	OK(smq_close(ws));
	OK(smq_close(w));
	munmap(sh, sizeof(*sh));
}

/* Light marks: handles on shm and split set their marks with a compiler
 * barrier (and say so in their slots), on file with a full one; board 0
 * completes the light ones of its kernel with membarrier, and waits for a
 * light one of another boot, which membarrier cannot reach. */
static int settle_waits;
static void count_settle(enum smq_hook where)
{
	if (where == SMQ_HOOK_MAINT_SETTLE)
		settle_waits++;
}

static bool slot_light(const char *spec)
{
	struct smq_window *w1;
	struct smq_queue *q;

	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &q));
	bool light = LOAD(&q->slot->flags) & SMQ_SLOT_LIGHT;
	CHECK(light == w1->map.order->light);
	OK(smq_queue_close(q));
	OK(smq_close(w1));
	return light;
}

static void light_marks(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, G.boards, G.queues, G.entries,
					 G.entry_size);
	bool light = smq_order_of_kernel()->light;
	char file[200];

	CHECK(slot_light(spec) == (light && !strncmp(spec, "shm:", 4)));
	snprintf(file, sizeof(file), "file:%s", test_path(spec));
	CHECK(!slot_light(file));

	/* a light slot of this kernel: membarrier, no wait */
	struct smq_window *w1;
	struct smq_queue *q;
	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &q));
	smq_test_hook = count_settle;
	settle_waits = 0;
	OK(smq_clear(w, -1));
	CHECK(settle_waits == 0);
	OK(smq_queue_close(q));
	OK(smq_close(w1));

	/* a light slot of another boot (a shm object that also backs a
	 * virtual machine's memory): board 0 waits SMQ_SETTLE_MS */
	struct smq_handle_slot *s = at(w, lay_ctl(1) +
		offsetof(struct smq_ctl, slot[SMQ_SLOTS - 1]));
	STORE(&s->boot, w->boot ^ 1);
	STORE(&s->kind, SMQ_SLOT_QUEUE);
	STORE(&s->flags, SMQ_SLOT_LIGHT);
	STORE(&s->busy, 0);
	STORE(&s->tag, (uint64_t)1 << 32 | 1);
	settle_waits = 0;
	uint64_t t0 = now_ms();
	OK(smq_clear(w, -1));
	uint64_t took = now_ms() - t0;
	/* counted; and a lower bound only (the settle's own wait) */
	CHECK(settle_waits == 1 && took >= SMQ_SETTLE_MS);
	/* the same slot, not light: no wait */
	STORE(&s->flags, 0);
	settle_waits = 0;
	OK(smq_clear(w, -1));
	CHECK(settle_waits == 0);
	smq_test_hook = NULL;
	STORE(&s->tag, 0);
	printf("light marks: %s, file ones not; board 0 waited %llu ms for a "
	       "light mark of another boot, none for its own\n",
	       light ? "shm handles light" : "none light (membarrier refused)",
	       (unsigned long long)took);
	OK(smq_close(w));
}

/* A held sender that is killed: its mark is taken down, not waited on. */
static void holder_killed(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, G.boards, G.queues, G.entries,
					 G.entry_size);
	struct shared *sh = shared_new();
	struct job j = { spec, 1, 0, "never sent", sh };
	int status;

	pid_t pid = test_fork(held_sender, &j);
	wait_for(&sh->held, "the sender held");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	/* 60 s: a give-up bound; a clear that waited for the dead
	 * holder's mark would fail with -SMQ_EHELD at its end */
	OK(smq_set_timeout(w, SMQ_TIMEOUT_HANDSHAKE, 60000));
	OK(smq_clear(w, -1));
	OK(smq_validate(w, NULL, 0));
	printf("a sender killed while held: clear done, its mark taken "
	       "down\n");
	OK(smq_close(w));
	munmap(sh, sizeof(*sh));
}

/* One maintenance at a time: a second one while the first writes. */
static struct shared *maint_sh;
static enum smq_hook maint_hold_at;
static void hold_maint(enum smq_hook where)
{
	if (where != maint_hold_at || atomic_load(&maint_sh->held))
		return;
	atomic_store(&maint_sh->held, 1);
	while (!atomic_load(&maint_sh->release))
		/* until the test says release: a word, no event */
		nap_ms(1);
}

/* Board 0 runs op, held at the hook at; its result goes to j->sh. */
static int held_maint(struct job *j, enum smq_hook at,
		      int (*op)(struct smq_window *w))
{
	struct smq_window *w;

	OK(smq_open(j->spec, 0, 0, &w));
	maint_sh = j->sh;
	maint_hold_at = at;
	smq_test_hook = hold_maint;
	atomic_store(&j->sh->result, op(w));
	OK(smq_close(w));
	return 0;
}

static int clear_all(struct smq_window *w)
{
	return smq_clear(w, -1);
}

static int held_clear(void *p)
{
	return held_maint(p, SMQ_HOOK_MAINT_WRITING, clear_all);
}

/* A board attaching, held at where (between the superblock's layout and
 * the tables, or between the geometry and the queue table; an attach has
 * no mark: it writes nothing), while board 0 re-formats to another
 * geometry, to the end or held while it writes.  What the attach reads
 * after is not the window it began to read: -ESTALE (attach again) or
 * -EBUSY (an init under way), never a fault of the window, and never a
 * read or write beyond what it checked (AddressSanitizer's build). */
static int attaching(void *p)
{
	struct job *j = p;
	struct smq_window *w;

	hook_sh = j->sh;  /* hold_at: set before the fork */
	smq_test_hook = hold_here;
	int err = smq_open(j->spec, j->board, 0, &w);
	smq_test_hook = NULL;
	atomic_store(&j->sh->result, err);
	atomic_store(&j->sh->returned, 1);
	if (!err)
		smq_close(w);
	return 0;
}

static int init_other(struct smq_window *w)
{
	return smq_init(w, &G_OTHER, sizeof(G_OTHER));
}

static int init_held_writing(void *p)
{
	return held_maint(p, SMQ_HOOK_MAINT_FORMATTED, init_other);
}

static void attach_looking(enum smq_hook where, bool to_the_end,
			   const char *what)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, G.boards, G.queues, G.entries,
					 G.entry_size);
	struct shared *sh = shared_new(), *msh = shared_new();
	struct job j = { spec, 1, 0, NULL, sh }, jm = { spec, 0, 0, NULL, msh };
	struct smq_window_info wi;
	pid_t mpid = 0;

	hold_at = where;
	pid_t pid = test_fork(attaching, &j);
	hold_at = SMQ_HOOK_COMMIT;
	wait_for(&sh->held, "the attach held");
	if (to_the_end) {
		OK(smq_init(w, &G_OTHER, sizeof(G_OTHER)));
	} else {
		mpid = test_fork(init_held_writing, &jm);
		wait_for(&msh->held, "the init held while it writes");
	}
	atomic_store(&sh->release, 1);
	wait_for(&sh->returned, "the attach");
	test_wait_ok(pid, "attaching board");
	int err = atomic_load(&sh->result), want = to_the_end ? -ESTALE : -EBUSY;
	if (err != want)
		FAIL("%s: smq_open returned %d (%s), not %d (%s)", what, err,
		     smq_strerror(err), want, smq_strerror(want));
	if (mpid) {
		/* a clear meanwhile reads the same half-written window: it is
		 * refused as a second maintenance, naming the init */
		struct smq_holdout ho;
		EXPECT(smq_clear(w, -1), -EALREADY);
		OK(smq_holdout(w, &ho, sizeof(ho)));
		CHECK(ho.board == 0 && ho.pid == (uint32_t)mpid && ho.same_host);
		atomic_store(&msh->release, 1);
		test_wait_ok(mpid, "held init");
		OK(atomic_load(&msh->result));
	}
	OK(smq_close(w));
	/* attached again, the board finds the new geometry whole */
	OK(smq_open(spec, 1, 0, &w));
	OK(smq_window_info(w, &wi, sizeof(wi)));
	CHECK(wi.geometry.boards == G_OTHER.boards &&
	      wi.geometry.queues == G_OTHER.queues);
	OK(smq_validate(w, NULL, 0));
	printf("%s: %s%s, then attached to the new layout\n", what,
	       to_the_end ? "-ESTALE" : "-EBUSY",
	       to_the_end ? "" : " (a clear meanwhile: -EALREADY)");
	OK(smq_close(w));
	munmap(sh, sizeof(*sh));
	munmap(msh, sizeof(*msh));
}

/* A board that mapped the window before board 0 grew it for a larger
 * geometry, and reads the superblock after: the window is whole, only
 * larger than the mapping.  It attaches to the new layout; a handle of the
 * old one validates the window as it is now. */
static void attach_after_growth(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, G.boards, G.queues, G.entries,
					 G.entry_size), *old;
	struct shared *sh = shared_new();
	struct job j = { spec, 1, 0, NULL, sh };
	struct smq_window_info wi;

	OK(smq_open(spec, 1, 0, &old));
	hold_at = SMQ_HOOK_ATTACH_MAPPED;
	pid_t pid = test_fork(attaching, &j);
	hold_at = SMQ_HOOK_COMMIT;
	wait_for(&sh->held, "the open held, the window mapped");
	OK(smq_init(w, &G_OTHER, sizeof(G_OTHER)));
	atomic_store(&sh->release, 1);
	wait_for(&sh->returned, "the open");
	test_wait_ok(pid, "opening board");
	int err = atomic_load(&sh->result);
	if (err)
		FAIL("open of a window grown since it was mapped: %d (%s)", err,
		     smq_strerror(err));
	OK(smq_validate(old, NULL, 0));
	EXPECT(smq_window_info(old, &wi, sizeof(wi)), -ESTALE);
	OK(smq_close(old));
	printf("an open that mapped the window before an init grew it: "
	       "attached; an old handle validates it\n");
	OK(smq_close(w));
	munmap(sh, sizeof(*sh));
}

/* Holds a loan on queue 0 as board 1 (its mark up) until released. */
static int loan_holder(void *p)
{
	struct job *j = p;
	struct smq_window *w;
	struct smq_queue *q;
	void *data;

	OK(smq_open(j->spec, 1, 0, &w));
	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &q));
	OK(smq_loan(q, 4, &data, 0));
	atomic_store(&j->sh->held, 1);
	wait_for(&j->sh->release, "the test's release");
	smq_loan_abort(q);
	smq_queue_close(q);
	smq_close(w);
	return 0;
}

static _Atomic int *told_flag;
static void say_told(enum smq_hook where)
{
	if (where == SMQ_HOOK_MAINT_TOLD)
		atomic_store(told_flag, 1);
}

static int clear_queue_0(void *p)
{
	struct job *j = p;
	struct smq_window *w;

	OK(smq_open(j->spec, 0, SMQ_OPEN_FORCE, &w));
	OK(smq_set_timeout(w, SMQ_TIMEOUT_HANDSHAKE, 30000));
	atomic_store(&j->sh->returned, 1);
	told_flag = &j->sh->told;
	smq_test_hook = say_told;
	smq_clear(w, 0);  /* killed in its handshake */
	return 1;
}

/* A clear of queue 0 killed in its handshake leaves its phase (and the
 * queue's epoch 0): the next clear finishes it.  One of queue 1 that
 * cannot (a call on queue 0 outlasts the handshake) must leave that
 * phase as it found it, not take it down with its own: else queue 0
 * keeps its epoch 0 with nothing to say a clear is unfinished, a window
 * validation calls corrupt and no clear of another queue repairs. */
static void unfinished_clear_kept(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, G.boards, G.queues, G.entries,
					 G.entry_size), *wf;
	struct shared *sh = shared_new();
	struct job j = { spec, 1, 0, NULL, sh };
	struct smq_window_info wi;

	pid_t holder = test_fork(loan_holder, &j);
	wait_for(&sh->held, "the loan held");
	pid_t clearer = test_fork(clear_queue_0, &j);
	wait_for(&sh->returned, "the clearer ready");
	/* killed once it has told the queue's boards (its phase is up):
	 * in its handshake, waiting for the loan */
	wait_for(&sh->told, "the clearer to begin its handshake");
	kill(clearer, SIGKILL);
	waitpid(clearer, NULL, 0);
	OK(smq_window_info(w, &wi, sizeof(wi)));
	CHECK(wi.maint_phase != 0 && wi.maint_alive == 0);
	EXPECT(smq_validate(w, NULL, 0), -SMQ_EINCOMPLETE);
	OK(smq_open(spec, 0, SMQ_OPEN_FORCE, &wf));
	OK(smq_set_timeout(wf, SMQ_TIMEOUT_HANDSHAKE, HANDSHAKE_MS));
	EXPECT(smq_clear(wf, 1), -SMQ_EHELD);
	/* who held on: the loan's holder, on queue 0 (not queue 1, the one
	 * asked for) */
	struct smq_holdout h;
	OK(smq_holdout(wf, &h, sizeof(h)));
	if (h.board != 1 || h.pid != (uint32_t)holder || h.queue != 0)
		FAIL("holdout board %u pid %u queue %d, expected board 1 pid %d "
		     "queue 0", h.board, h.pid, h.queue, (int)holder);
	OK(smq_window_info(w, &wi, sizeof(wi)));
	if (wi.maint_phase == 0)
		FAIL("a clear of queue 1 that failed took down the phase of "
		     "queue 0's unfinished clear");
	EXPECT(smq_validate(w, NULL, 0), -SMQ_EINCOMPLETE);
	atomic_store(&sh->release, 1);
	test_wait_ok(holder, "loan holder");
	/* the next clear of queue 1 finishes queue 0's first */
	OK(smq_clear(wf, 1));
	OK(smq_validate(w, NULL, 0));
	send_text(spec, 1, 0, "after");
	char first[64];
	if (drain(spec, 0, 0, first) != 1 || strcmp(first, "after"))
		FAIL("queue 0 after its clear was finished: '%s'", first);
	printf("a clear of queue 1 that failed beside queue 0's unfinished "
	       "one: that one's phase kept, finished by the next clear\n");
	OK(smq_close(wf));
	OK(smq_close(w));
	munmap(sh, sizeof(*sh));
}

static void one_maintenance(void)
{
	const char *spec = test_window();
	struct smq_window *w = test_init(spec, G.boards, G.queues, G.entries,
					 G.entry_size);
	struct shared *sh = shared_new();
	struct job j = { spec, 0, 0, NULL, sh };
	struct smq_holdout ho;
	struct smq_window_info wi;
	struct smq_fault f;

	pid_t pid = test_fork(held_clear, &j);
	wait_for(&sh->held, "the clear held");
	EXPECT(smq_init(w, &G, sizeof(G)), -EALREADY);
	EXPECT(smq_clear(w, 0), -EALREADY);
	OK(smq_holdout(w, &ho, sizeof(ho)));
	CHECK(ho.board == 0 && ho.pid == (uint32_t)pid && ho.same_host);
	/* every handle reads stale while it writes */
	EXPECT(smq_window_info(w, &wi, sizeof(wi)), -ESTALE);
	CHECK(wi.maint_phase == 2 && wi.maint_pid == (uint32_t)pid &&
	      wi.maint_alive == 1);
	EXPECT(smq_validate(w, &f, sizeof(f)), -EBUSY);
	atomic_store(&sh->release, 1);
	test_wait_ok(pid, "held clear");
	OK(atomic_load(&sh->result));
	OK(smq_validate(w, NULL, 0));
	printf("a second init or clear while one runs: -EALREADY, naming pid "
	       "%u\n", ho.pid);
	OK(smq_close(w));
	munmap(sh, sizeof(*sh));
}

int main(void)
{
	int fd = uffd_open();
	bool uffd = fd >= 0;

	if (uffd)
		close(fd);
	else
		printf("userfaultfd unavailable (%s): page-fault holds skipped\n",
		       strerror(-fd));
	if (uffd) {
		sender_held(0, 1, "a sender held mid-copy, clear of another queue");
		sender_held(0, 0, "a sender held mid-copy, clear of its queue");
		sender_held(0, -1, "a sender held mid-copy, clear of every queue");
		sender_held(1, 0, "a sender held mid-copy, init of another geometry");
		sender_held_too_long();
		receiver_held(held_receiver, false, 0, 0, "a receiver held in "
			      "its copy out, clear of another queue");
		receiver_held(held_receiver, false, 0, 1, "a receiver held in "
			      "its copy out, clear of its queue");
		receiver_held(held_receiver, false, 1, 0, "a receiver held in "
			      "its copy out, init of another geometry");
		holder_killed();
	}
	receiver_held(hooked_receiver, true, 0, 0, "a receiver held in its "
		      "take, clear of another queue");
	receiver_held(hooked_receiver, true, 0, 1, "a receiver held in its "
		      "take, clear of its queue");
	receiver_held(hooked_receiver, true, 1, 0, "a receiver held in its "
		      "take, init of another geometry");
	receiver_looking(SMQ_HOOK_PEEK, false, 0, "a receiver held between "
			 "a signature and its header, init");
	receiver_looking(SMQ_HOOK_PEEK, true, 1, "a peek held between a "
			 "signature and its header, init");
	receiver_looking(SMQ_HOOK_LANE_LOOK, false, 1, "a waiting receiver "
			 "held between a lane's bottom and top, init");
	receiver_looking(SMQ_HOOK_OPEN_LOOK, false, 1, "a receiver opening, "
			 "held between a lane's bottom and top, init");
	attach_looking(SMQ_HOOK_ATTACH_LOOK, true, "an attach held between "
		       "the superblock and the tables, init to the end");
	attach_looking(SMQ_HOOK_ATTACH_LOOK, false, "an attach held between "
		       "the superblock and the tables, init held while it "
		       "writes");
	attach_looking(SMQ_HOOK_GEOMETRY_READ, true, "an attach held between "
		       "the geometry and the queue table, init of more queues");
	attach_after_growth();
	one_maintenance();
	unfinished_clear_kept();
	sender_beside_half_take(1);
	sender_beside_half_take(4);
	light_marks();
	if (!uffd) {
		printf("the page-fault holds need userfaultfd\n");
		return SKIP;
	}
	return 0;
}
