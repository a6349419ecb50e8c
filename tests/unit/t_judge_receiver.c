/* A receiver of another host that died waiting is judged dead while its
 * board lives.
 *
 * Board 1 runs on "another host": its processes read another boot id (a
 * mount namespace where a file of the test is bound over the kernel's),
 * so to this process no pid of theirs means anything and only heartbeats
 * tell.  Two processes of board 1 receive, queue 1 and queue 3, each
 * waiting in a call (each beats its queue's heartbeat and the board's
 * once a sleep slice).  The receiver of queue 1 is killed: its heartbeat
 * stops, and it stays marked as waiting in a call, where it would beat.
 * The board's heartbeat goes on (queue 3's receiver).  Once this process
 * has watched queue 1's receiver's heartbeat stand still for
 * SMQ_HEARTBEAT_TIMEOUT_MS it must judge it dead, though its board is
 * alive: a receiver waiting in a call beats, so one that stopped died
 * (smq(7), Who is at work).  Queue 3's receiver, alive, stays waiting.
 *
 * Needs root (a mount namespace): skipped otherwise, saying so. */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include "testint.h"
#include "testlib.h"

/* the checks every run makes, whatever the timing: the looks while the
 * killed receiver's heartbeat stands still (about a hundred of four
 * checks each on a quiet machine, 450 checks in all under load) come on
 * top, fewer the slower the machine */
TEST_FLOOR(20);

static const char *spec;
static char boot_id[256];
static uint64_t w_boot;         /* this host's boot hash */

/* This process, and what it forks, on another host: its own mount
 * namespace, the boot id a file of the test.  Exits 77 if it cannot. */
static void become_other_host(void)
{
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount(boot_id, "/proc/sys/kernel/random/boot_id", NULL, MS_BIND,
		  NULL))
		_exit(SKIP);
}

static int can_be_other_host(void *arg)
{
	(void)arg;
	become_other_host();
	return smq_boot_hash() == w_boot ? 1 : 0;
}

/* Board 1 of the other host, receiving queue arg for ever (until killed). */
static int other_receiver(void *arg)
{
	unsigned q = (unsigned)(uintptr_t)arg;
	struct smq_window *w;
	struct smq_queue *rx;
	char buf[64];
	size_t len;

	become_other_host();
	OK(smq_open(spec, 1, 0, &w));
	OK(smq_queue_open(w, q, SMQ_RECEIVER, SMQ_SLEEP, &rx));
	int err = smq_receive(rx, buf, sizeof(buf), &len, NULL,
			      SMQ_WAIT_FOREVER);
	FAIL("queue %u's receiver returned %d (%s): nothing is sent", q, err,
	     smq_strerror(err));
}

static const char *state_name(int s)
{
	static const char *names[] = { "unknown", "none", "waiting", "away",
				       "dead" };
	return s >= 0 && s <= SMQ_RECEIVER_DEAD ? names[s] : "?";
}

static struct smq_queue_info queue(struct smq_window *w, unsigned q)
{
	struct smq_queue_info qi;

	OK(smq_queue_info(w, q, &qi, sizeof(qi)));
	return qi;
}

static int board_alive(struct smq_window *w, unsigned b)
{
	struct smq_board_info bi;

	OK(smq_board_info(w, b, &bi, sizeof(bi)));
	CHECK(!bi.same_host);
	return bi.alive;
}

int main(void)
{
	spec = test_window();
	snprintf(boot_id, sizeof(boot_id), "%s/boot_id", test_dir());
	int fd = open(boot_id, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || dprintf(fd, "0badb007-5eed-4a11-8000-%012d\n",
			      (int)getpid()) < 0)
		FAIL("cannot write %s", boot_id);
	close(fd);
	w_boot = smq_boot_hash();

	/* whether a process can be of another host here at all */
	int st;
	pid_t probe = test_fork(can_be_other_host, NULL);
	if (waitpid(probe, &st, 0) != probe || !WIFEXITED(st))
		FAIL("the probe for a mount namespace (status 0x%x)", st);
	if (WEXITSTATUS(st) == SKIP) {
		printf("cannot give a process another boot id here (a mount "
		       "namespace needs root)\n");
		return SKIP;
	}
	CHECK(WEXITSTATUS(st) == 0);
	/* four queues: 1 and 3 are board 1's */
	struct smq_window *w = test_init(spec, 2, 4, 8, 64);
	pid_t stays = test_fork(other_receiver, (void *)(uintptr_t)3);
	pid_t dies = test_fork(other_receiver, (void *)(uintptr_t)1);
	/* both seen waiting, the board alive: their heartbeats moved
	 * (another host's first look at a count says nothing) */
	WAIT_UNTIL(queue(w, 1).receiver_state == SMQ_RECEIVER_WAITING &&
		   queue(w, 3).receiver_state == SMQ_RECEIVER_WAITING &&
		   board_alive(w, 1) == 1, 30,
		   "board 1, of another host, seen alive with its two "
		   "receivers waiting");
	CHECK(queue(w, 1).receiver_pid == (uint32_t)dies);

	kill(dies, SIGKILL);
	CHECK(waitpid(dies, &st, 0) == dies && WIFSIGNALED(st));
	/* judged dead once its heartbeat has stood still the timeout, seen
	 * by this process, which watches the board's move meanwhile: never
	 * judged alive past that */
	struct smq_queue_info qi;
	unsigned looks = 0;
	int board = -1, other = -1;
	test_waiting("queue 1's receiver, killed, to be judged dead");
	for (;;) {
		board = board_alive(w, 1);
		other = queue(w, 3).receiver_state;
		qi = queue(w, 1);
		looks++;
		if (qi.receiver_state == SMQ_RECEIVER_DEAD)
			break;
		if (qi.receiver_age_ms >= SMQ_HEARTBEAT_TIMEOUT_MS)
			FAIL("queue 1's receiver, killed waiting, is judged %s "
			     "after its heartbeat stood still %lld ms (its "
			     "board judged alive: %d)",
			     state_name(qi.receiver_state),
			     (long long)qi.receiver_age_ms, board);
		if (looks > 400)
			FAIL("queue 1's receiver not judged after %u looks "
			     "(state %s, heartbeat still %lld ms)", looks,
			     state_name(qi.receiver_state),
			     (long long)qi.receiver_age_ms);
		/* a heartbeat that stands still is judged as time passes: no
		 * event says when; a nap between looks (400 at most) */
		usleep(50000);
	}
	test_waiting(NULL);
	CHECK(qi.receiver_alive == 0 && !qi.sleeping);
	CHECK(qi.receiver_age_ms >= SMQ_HEARTBEAT_TIMEOUT_MS);
	/* its board lives, and so does the other receiver */
	if (board != 1 || board_alive(w, 1) != 1)
		FAIL("board 1 not judged alive while queue 3's receiver beats");
	if (other != SMQ_RECEIVER_WAITING)
		FAIL("queue 3's receiver, alive, judged %s", state_name(other));
	printf("a receiver of another host killed waiting: dead after its "
	       "heartbeat stood still %d ms, its board alive\n",
	       SMQ_HEARTBEAT_TIMEOUT_MS);
	kill(stays, SIGKILL);
	waitpid(stays, &st, 0);
	OK(smq_close(w));
	return 0;
}
