/* A board whose host rebooted, or whose pid was reused: a receiver and a
 * sender that start again with the same pid (and tid) as a process that
 * held the queue before take it back.  A pid means nothing after a reboot
 * or once reused: the claims carry the boot and the process's start.  A
 * live claim is still honoured.  Also: a board of another boot's marks
 * do not stop a clear on this host once that board is gone from it. */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "testint.h"
#include "testlib.h"

/* the least count of checks a run makes (36 here) */
TEST_FLOOR(36);

/* The tag a process with this pid had before the host's last boot (or an
 * earlier process with the same pid): same id, another hash. */
static uint64_t stale_tag(uint32_t id, uint64_t salt)
{
	return (uint64_t)id << 32 | (uint32_t)(0x9e3779b9u ^ salt);
}

/* A process whose first thread has exited (its /proc stat says zombie)
 * while another receives: alive, its claim honoured. */
struct leader { const char *spec; _Atomic int claimed, release; };

static void *receiving_thread(void *p)
{
	struct leader *ld = p;
	struct smq_window *w;
	struct smq_queue *q;

	OK(smq_open(ld->spec, 0, 0, &w));
	OK(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &q));
	atomic_store(&ld->claimed, 1);
	WAIT_UNTIL(atomic_load(&ld->release), 60, "the test to let the "
		   "receiver go");
	OK(smq_queue_close(q));
	OK(smq_close(w));
	/* the process ends here, its first thread long gone: what it
	 * inherited from the test (whose stack went with that thread) is not
	 * a leak a sanitizer's exit report should judge */
	_exit(0);
}

static int leader_exits(void *p)
{
	pthread_t t;

	CHECK(pthread_create(&t, NULL, receiving_thread, p) == 0);
	pthread_exit(NULL);  /* the process goes on in its other thread */
}

/* The first thread of process pid shows as a zombie in stat[]. */
static bool leader_zombie(pid_t pid, char *stat, size_t n)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	stat[0] = 0;
	if ((f = fopen(path, "r"))) {
		if (!fgets(stat, (int)n, f))
			stat[0] = 0;
		fclose(f);
	}
	const char *e = strrchr(stat, ')');
	return e && e[1] == ' ' && e[2] == 'Z';
}

static void zombie_leader(const char *spec, struct smq_window *w0)
{
	struct leader *ld = mmap(NULL, sizeof(*ld), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct smq_queue *rx;
	struct smq_queue_info qi;
	char stat[512] = "";

	CHECK(ld != MAP_FAILED);
	ld->spec = spec;
	pid_t pid = test_fork(leader_exits, ld);
	WAIT_UNTIL(atomic_load(&ld->claimed), 20, "the receiving thread of "
		   "pid %d to claim queue 0", (int)pid);
	WAIT_UNTIL(leader_zombie(pid, stat, sizeof(stat)), 20, "the first "
		   "thread of pid %d to show as a zombie", (int)pid);
	EXPECT(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &rx), -EBUSY);
	OK(smq_queue_info(w0, 0, &qi, sizeof(qi)));
	if (qi.receiver_pid != (uint32_t)pid || qi.receiver_alive != 1)
		FAIL("a receiver whose first thread exited: pid %u alive %d",
		     qi.receiver_pid, qi.receiver_alive);
	atomic_store(&ld->release, 1);
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0);
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &rx));
	OK(smq_queue_close(rx));
	printf("a receiver whose first thread exited while another receives: "
	       "alive, its claim honoured\n");
	munmap(ld, sizeof(*ld));
}

int main(void)
{
	const char *spec = test_window();
	struct smq_window *w0 = test_init(spec, 2, 2, 8, 64), *w1;
	struct smq_queue *rx, *rx2 = (void *)1, *tx;
	struct smq_queue_info qi;
	struct smq_lane_info li;
	uint32_t pid = (uint32_t)getpid();
	uint32_t tid = (uint32_t)syscall(SYS_gettid);
	char buf[16];
	size_t n;
	unsigned from;

	OK(smq_open(spec, 1, 0, &w1));
	const struct smq_layout *l = &w0->lay;
	struct smq_rx *r = at(w0, l->rx[0]);
	struct smq_rx_info *ri = at(w0, lay_rx_info(l, 0));
	struct smq_lane_out *out = at(w1, lay_lane_out(l, 1, 0));

	/* a receiver of queue 0 from before the reboot, with our very pid */
	STORE(&r->owner, stale_tag(pid, 1));
	STORE(&ri->owner_boot, smq_boot_hash() ^ 0x5a5a);
	OK(smq_queue_info(w0, 0, &qi, sizeof(qi)));
	CHECK(qi.receiver_pid == pid && qi.receiver_alive == -1);
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &rx));
	OK(smq_queue_info(w0, 0, &qi, sizeof(qi)));
	CHECK(qi.receiver_pid == pid && qi.receiver_alive == 1);
	printf("a receiver claim of our pid from another boot: taken back\n");

	/* ...and one of this boot whose process had our pid and is gone */
	OK(smq_queue_close(rx));
	STORE(&r->owner, stale_tag(pid, 2));
	STORE(&ri->owner_boot, smq_boot_hash());
	OK(smq_queue_info(w0, 0, &qi, sizeof(qi)));
	CHECK(qi.receiver_pid == pid && qi.receiver_alive == 0);
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &rx));
	printf("a receiver claim of a reused pid: taken back\n");

	/* a live claim is honoured: ours, from another handle */
	EXPECT(smq_queue_open(w0, 0, SMQ_RECEIVER, 0, &rx2), -SMQ_EHOLDING);
	CHECK(rx2 == NULL);

	/* a lane lock held by a thread of our tid from before the reboot */
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	STORE(&out->lock, stale_tag(tid, 3));
	OK(smq_lane_info(w0, 0, 1, &li, sizeof(li)));
	CHECK(li.lock_pid == tid);
	OK(smq_send(tx, "back", 4, 1000));
	OK(smq_receive(rx, buf, sizeof(buf), &n, &from, 1000));
	CHECK(n == 4 && !memcmp(buf, "back", 4) && from == 1);
	OK(smq_lane_info(w0, 0, 1, &li, sizeof(li)));
	CHECK(li.lock_pid == 0);
	printf("a lane lock of our tid from another boot: taken back, the "
	       "message delivered\n");

	/* a board's in-flight mark from another boot of this host does not
	 * hold a clear: the board's processes there are gone */
	struct smq_ctl *c1 = at(w1, lay_ctl(1));
	STORE(&c1->slot[5].tag, stale_tag(pid, 4));
	STORE(&c1->slot[5].boot, smq_boot_hash());
	STORE(&c1->slot[5].kind, SMQ_SLOT_QUEUE);
	STORE(&c1->slot[5].busy, 1);
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_set_timeout(w0, SMQ_TIMEOUT_HANDSHAKE, 300));
	OK(smq_clear(w0, -1));
	CHECK(LOAD(&c1->slot[5].busy) == 0);
	printf("a mark left busy by a process that is gone: not waited for\n");
	OK(smq_validate(w0, NULL, 0));
	zombie_leader(spec, w0);
	OK(smq_close(w1));
	OK(smq_close(w0));
	return 0;
}
