/* vfio_check: the guest side of tests/t_qemu_vfio.sh.  Drives QEMU's
 * ivshmem through libsmq's VFIO and doorbell modules and says what it finds
 * on stdout, one fact a line, each starting "VFIO: ".
 *
 *   vfio_check open BDF          open through VFIO and close; exit 0 if it
 *                                opened, else print the errno and its
 *                                explanation and exit 1
 *   vfio_check plain BDF         an ivshmem-plain: it opens and maps, but
 *                                has no MSI-X and no doorbell
 *   vfio_check share BDF         an ivshmem-doorbell opened by one process
 *                                and used by another, which was passed its
 *                                device file and an MSI-X eventfd; and
 *                                what is left when the opener ends
 *   vfio_check run BDF a|b N     an ivshmem-doorbell as guest A or B of the
 *                                mailbox in tests/qemu/vfio_mailbox.h:
 *                                N rounds of A ringing B and B answering,
 *                                then one ring from the host answered
 *
 * Exit 0 when every check held, 1 otherwise, 2 for bad usage. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "transport/doorbell_dev.h"
#include "transport/vfio.h"
#include "vfio_mailbox.h"

#define WAIT_PEER_MS 90000  /* the other guest may still be booting */
#define WAIT_RING_MS 10000

static int failures;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("VFIO: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	va_end(ap);
}

static void check(int cond, const char *what)
{
	say("%s %s", cond ? "ok" : "FAIL", what);
	if (!cond)
		failures++;
}

static const char *errname(int err)
{
	const char *n = strerrorname_np(err < 0 ? -err : err);
	return n ? n : "?";
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A nap between looks at the other side's word in the shared BAR: a
 * state no event of ours tells of */
static void nap_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Whether the sysfs file of BAR can be mapped now; 0 or -errno. */
static int sysfs_map(const char *bdf, int bar)
{
	char path[96];
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource%d", bdf,
		 bar);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int err = p == MAP_FAILED ? -errno : 0;
	if (p != MAP_FAILED)
		munmap(p, 4096);
	close(fd);
	return err;
}

/* What this process holds: open descriptors and mappings, to find leaks. */
static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0, c;
	if (!f)
		return -1;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

struct held {
	int fds, maps;
};

static struct held held_now(void)
{
	return (struct held){ count_fds(), count_lines("/proc/self/maps") };
}

static void check_nothing_leaked(struct held before)
{
	struct held after = held_now();
	say("held before %d fds %d maps, after close %d fds %d maps",
	    before.fds, before.maps, after.fds, after.maps);
	check(before.fds >= 0 && before.fds == after.fds &&
	      before.maps == after.maps,
	      "closing left no descriptor and no mapping behind");
}

static void describe_bars(struct smq_vfio *v)
{
	for (unsigned bar = 0; bar < 6; bar++) {
		struct smq_vfio_bar b;
		if (smq_vfio_bar_info(v, bar, &b) == 0 && b.size)
			say("bar%u size %llu mappable %d", bar,
			    (unsigned long long)b.size, b.mappable);
	}
}

static int open_or_say(struct smq_vfio **v, const char *bdf)
{
	int err = smq_vfio_open(v, bdf);
	if (err)
		say("open rc %d %s: %s", err, errname(err),
		    smq_vfio_explain(err));
	else
		say("open ok %s", smq_vfio_bdf(*v));
	return err;
}

static int cmd_open(const char *bdf)
{
	struct smq_vfio *v;
	if (open_or_say(&v, bdf))
		return 1;
	smq_vfio_close(v);
	return 0;
}

/* The second open of a held group fails with EBUSY, from this process as
 * from any other; after a close it opens again. */
static void check_exclusive(const char *bdf)
{
	struct smq_vfio *v2;
	int err = smq_vfio_open(&v2, bdf);
	say("second open while held: %d %s", err, errname(err));
	check(err == -EBUSY, "a held group refuses a second open with EBUSY");
	if (!err)
		smq_vfio_close(v2);
}

static int cmd_plain(const char *bdf)
{
	struct smq_vfio *v;
	struct smq_doorbell *db;
	void *mem;
	uint64_t size;

	struct held before = held_now();
	if (open_or_say(&v, bdf))
		return 1;
	describe_bars(v);
	int n = smq_vfio_msix_count(v);
	say("msix %d", n);
	check(n == 0, "ivshmem-plain offers no MSI-X vector");
	check(smq_vfio_find_cap(v, 0x11) == -ENOENT,
	      "ivshmem-plain has no MSI-X capability");
	int err = smq_doorbell_open(&db, v);
	say("doorbell rc %d %s", err, errname(err));
	check(err == -EOPNOTSUPP, "ivshmem-plain is known but has no doorbell");
	const struct smq_doorbell_dev *t = smq_doorbell_dev_find(0x1af4, 0x1110,
								 false);
	check(t && strcmp(t->name, "ivshmem-plain") == 0 && !t->ring,
	      "the table's entry without MSI-X is ivshmem-plain");
	err = smq_vfio_map_bar(v, 2, &mem, &size);
	check(err == 0 && size >= 4096, "BAR2 of ivshmem-plain maps");
	if (!err) {
		/* a word through the mapping, read back through the device
		 * file (the pread path) */
		volatile uint32_t *w = mem;
		w[0] = 0x5a5a1234;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		smq_vfio_close(v);
		if (open_or_say(&v, bdf))
			return 1;
		uint32_t back = 0;
		err = smq_vfio_bar_read(v, 2, 0, &back, 4);
		say("BAR2 word read back without a mapping: %d 0x%08x", err,
		    back);
		check(err == 0 && back == 0x5a5a1234,
		      "a word written through the mapping reads back through "
		      "pread after reopening");
	}
	smq_vfio_close(v);
	check_nothing_leaked(before);
	return failures ? 1 : 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static void report_rtt(const char *how, int64_t *rtt, int n)
{
	if (n <= 0)
		return;
	qsort(rtt, (size_t)n, sizeof(*rtt), cmp_i64);
	say("round trip %s: %d, us min %.1f median %.1f max %.1f", how, n,
	    rtt[0] / 1e3, rtt[n / 2] / 1e3, rtt[n - 1] / 1e3);
}

/* Waits for one interrupt that must be on vector WANT alone. */
static int wait_vector(struct smq_vfio *v, unsigned want, int timeout_ms,
		       const char *what)
{
	uint64_t counts[VEC_COUNT];
	int fired = smq_vfio_msix_wait(v, timeout_ms, counts);
	if (fired < 0) {
		say("FAIL %s: wait rc %d %s", what, fired, errname(fired));
		failures++;
		return -1;
	}
	if (fired == 0) {
		say("FAIL %s: no interrupt within %d ms", what, timeout_ms);
		failures++;
		return -1;
	}
	int right = counts[want] >= 1;
	for (unsigned i = 0; i < VEC_COUNT; i++)
		if (i != want && counts[i])
			right = 0;
	if (!right) {
		say("FAIL %s: vectors fired %llu %llu %llu %llu, wanted %u",
		    what, (unsigned long long)counts[0],
		    (unsigned long long)counts[1],
		    (unsigned long long)counts[2],
		    (unsigned long long)counts[3], want);
		failures++;
		return -1;
	}
	return 0;
}

/* BAR0 mapped, and IVPosition read through the mapping as it was read
 * through the device file. */
static void map_regs(struct smq_vfio *v, int32_t pos_file)
{
	void *regs;
	uint64_t size;
	int32_t pos_map = -1;
	int err = smq_vfio_map_bar(v, 0, &regs, &size);
	say("bar0 mmap rc %d %s", err, err ? errname(err) : "ok");
	if (err == 0) {
		smq_vfio_bar_read(v, 0, 8, &pos_map, 4);
		check(pos_map == pos_file,
		      "IVPosition reads the same through the mapping");
	} else {
		check(err == -EOPNOTSUPP, "BAR0 not mappable: registers "
					  "through the device file");
	}
}

static int wait_state(void *shm, int who, uint32_t state, int timeout_ms)
{
	int64_t end = now_ns() + (int64_t)timeout_ms * 1000000;
	while (mbox_state(shm, who) < state) {
		if (now_ns() > end)
			return -ETIMEDOUT;
		/* the other side's word: no event */
		nap_ms(1);
	}
	return 0;
}

static int cmd_run(const char *bdf, int role, int rounds)
{
	struct smq_vfio *v;
	struct smq_doorbell *db;
	void *shm;
	uint64_t shm_size;
	int me = role == 'a' ? MBOX_A : MBOX_B;
	int peer = role == 'a' ? MBOX_B : MBOX_A;
	int err;
	struct held before = held_now();

	if (open_or_say(&v, bdf))
		return 1;
	describe_bars(v);
	check_exclusive(bdf);

	/* IVPosition through the device file before BAR0 is mapped, then
	 * through the mapping if VFIO allows one. */
	int32_t pos_file = -1;
	err = smq_vfio_bar_read(v, 0, 8, &pos_file, 4);
	check(err == 0, "IVPosition read through the device file");

	if ((err = smq_doorbell_open(&db, v))) {
		say("FAIL doorbell rc %d %s", err, errname(err));
		smq_vfio_close(v);
		return 1;
	}
	uint32_t id = smq_doorbell_id(db);
	int nvec = smq_doorbell_vectors(db);
	say("doorbell %s id %u vectors %d", smq_doorbell_type(db)->name, id,
	    nvec);
	check((uint32_t)pos_file == id, "the doorbell ID is IVPosition");
	check(smq_vfio_find_cap(v, 0x11) >= 0,
	      "ivshmem-doorbell has an MSI-X capability");
	check(nvec >= VEC_COUNT, "the device has the vectors the test uses");
	if (nvec < VEC_COUNT)
		goto out;

	int sysfs_before = sysfs_map(bdf, 2);
	err = smq_doorbell_map_shm(db, &shm, &shm_size);
	say("shm bar2 rc %d size %llu", err, (unsigned long long)shm_size);
	check(err == 0 && shm_size >= 4096, "BAR2 (the shared memory) maps");
	if (err)
		goto out;
	int sysfs_after = sysfs_map(bdf, 2);
	say("sysfs resource2 mmap before VFIO mapped BAR2: %d %s; after: %d %s",
	    sysfs_before, sysfs_before ? errname(sysfs_before) : "ok",
	    sysfs_after, sysfs_after ? errname(sysfs_after) : "ok");

	err = smq_vfio_msix_enable(v, VEC_COUNT);
	check(err == 0, "MSI-X vectors 0-3 routed to eventfds");
	if (err) {
		say("msix_enable rc %d %s", err, errname(err));
		goto out;
	}
	check(smq_vfio_msix_enable(v, 1) == -EALREADY,
	      "a second MSI-X enable says EALREADY");
	mbox_publish(shm, me, id, MBOX_READY);
	say("ready as %c, id %u", role, id);

	if (wait_state(shm, peer, MBOX_READY, WAIT_PEER_MS)) {
		say("FAIL the other guest did not get ready");
		failures++;
		goto out;
	}
	uint32_t peer_id = mbox_slot(shm, peer)->id;
	say("peer id %u", peer_id);

	/* The rounds: A rings B on 1 and times the answer on 2.  The first
	 * half rings through the device file (pwrite), the second through a
	 * mapping of BAR0 if VFIO gives one. */
	int64_t *rtt = calloc((size_t)rounds, sizeof(*rtt));
	int done = 0;
	for (int i = 0; i < rounds && rtt; i++) {
		if (i == rounds / 2)
			map_regs(v, pos_file);
		if (role == 'a') {
			int64_t t0 = now_ns();
			if ((err = smq_doorbell_ring(db, peer_id, VEC_A_TO_B))) {
				say("FAIL ring rc %d", err);
				failures++;
				break;
			}
			if (wait_vector(v, VEC_B_TO_A, WAIT_RING_MS,
					"B's answer"))
				break;
			rtt[done++] = now_ns() - t0;
		} else {
			if (wait_vector(v, VEC_A_TO_B, i ? WAIT_RING_MS
							 : WAIT_PEER_MS,
					"A's ring"))
				break;
			if ((err = smq_doorbell_ring(db, peer_id, VEC_B_TO_A))) {
				say("FAIL ring rc %d", err);
				failures++;
				break;
			}
			done++;
		}
	}
	say("rounds %d of %d", done, rounds);
	check(done == rounds, role == 'a' ? "every ring of B was answered on "
					    "vector 2"
					  : "every ring from A came on vector 1 "
					    "and was answered");
	if (role == 'a' && done == rounds) {
		report_rtt("ringing through the device file", rtt, rounds / 2);
		report_rtt("ringing through the mapping", rtt + rounds / 2,
			   rounds - rounds / 2);
	}
	free(rtt);
	mbox_publish(shm, me, id, MBOX_PEERS_DONE);

	/* The host rings on 3; the answer goes to the host on 0. */
	if (wait_vector(v, VEC_HOST_RING, WAIT_PEER_MS, "the host's ring") ==
	    0) {
		uint32_t host = mbox_slot(shm, MBOX_HOST)->id;
		say("ok the host's ring came on vector 3");
		check(mbox_state(shm, MBOX_HOST) >= MBOX_READY,
		      "the host's slot names its ID");
		err = smq_doorbell_ring(db, host, VEC_HOST_ANSWER);
		check(err == 0, "answered the host on vector 0");
	}
	mbox_publish(shm, me, id, MBOX_FINISHED);

out:
	err = smq_vfio_msix_disable(v);
	check(err == 0, "MSI-X routing torn down");
	smq_doorbell_close(db);
	smq_vfio_close(v);
	check_nothing_leaked(before);
	/* After the close the group is free again. */
	if (open_or_say(&v, bdf) == 0)
		smq_vfio_close(v);
	else
		failures++;
	return failures ? 1 : 0;
}

/* ---- share: the device passed to another process ---- */

#define SHARE_VEC 1
#define SHARE_AT 64          /* bytes from BAR2's end: clear of the mailbox */

static int send_fds(int sock, const int *fds, int n)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	char c = 'F';
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = CMSG_SPACE((size_t)n * sizeof(int)) };
	memset(&u, 0, sizeof(u));
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, (size_t)n * sizeof(int));
	return sendmsg(sock, &mh, 0) == 1 ? 0 : -errno;
}

static int recv_fds(int sock, int *fds, int n)
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	char c;
	struct iovec iov = { &c, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = u.buf,
			     .msg_controllen = sizeof(u.buf) };
	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1)
		return -EIO;
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN((size_t)n * sizeof(int)))
		return -EPROTO;
	memcpy(fds, CMSG_DATA(cm), (size_t)n * sizeof(int));
	return 0;
}

/* The owner: opens the device, routes MSI-X, hands the device file and
 * vector SHARE_VEC's eventfd over SOCK, writes a word into BAR2, and
 * waits for a byte, then ends as a killed process would, closing
 * nothing itself. */
static void share_owner(const char *bdf, int sock)
{
	struct smq_vfio *v;
	struct smq_doorbell *db;
	void *shm;
	uint64_t size;

	if (smq_vfio_open(&v, bdf) || smq_doorbell_open(&db, v) ||
	    smq_doorbell_map_shm(db, &shm, &size) ||
	    smq_vfio_msix_enable(v, VEC_COUNT))
		_exit(3);
	*(volatile uint32_t *)((char *)shm + size - SHARE_AT) = 0x5eed0001u;
	int fds[2] = { smq_vfio_device_fd(v), smq_vfio_msix_fd(v, SHARE_VEC) };
	char c;
	if (send_fds(sock, fds, 2) || read(sock, &c, 1) != 1)
		_exit(4);
	_exit(0);
}

static int wait_fd(int fd, int ms)
{
	struct pollfd pf = { fd, POLLIN, 0 };
	uint64_t n;
	if (poll(&pf, 1, ms) != 1)
		return -ETIMEDOUT;
	return read(fd, &n, sizeof(n)) == sizeof(n) ? 0 : -errno;
}

/* What a process that holds the device file can do, from another process
 * than the one that opened the device: the ground a broker stands on. */
static int cmd_share(const char *bdf)
{
	int sp[2], fds[2], err;
	struct smq_vfio *v, *again;
	struct smq_doorbell *db;
	void *shm;
	uint64_t size;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return 1;
	fflush(NULL);
	pid_t owner = fork();
	if (owner == 0) {
		close(sp[0]);
		share_owner(bdf, sp[1]);
	}
	close(sp[1]);
	if ((err = recv_fds(sp[0], fds, 2))) {
		say("FAIL share: nothing came from the owner (%d)", err);
		return 1;
	}
	err = smq_vfio_adopt(&v, fds[0], bdf);
	check(err == 0, "share: a device file passed on is adopted");
	if (err)
		return 1;
	close(fds[0]);
	check(smq_vfio_msix_enable(v, 1) == -EPERM,
	      "share: the adopter cannot take over the owner's MSI-X");
	err = smq_doorbell_open(&db, v);
	check(err == 0, "share: the adopter reads the doorbell ID");
	if (err)
		return 1;
	uint32_t id = smq_doorbell_id(db);
	err = smq_doorbell_map_shm(db, &shm, &size);
	volatile uint32_t *word = err ? NULL :
		(volatile uint32_t *)((char *)shm + size - SHARE_AT);
	check(word && *word == 0x5eed0001u,
	      "share: BAR2 maps in the adopter, the owner's word in it");
	err = smq_doorbell_ring(db, id, SHARE_VEC);
	check(!err && wait_fd(fds[1], WAIT_RING_MS) == 0,
	      "share: the adopter rings, the interrupt comes on the owner's "
	      "eventfd it was handed");

	/* the owner ends, as a broker that is killed */
	if (write(sp[0], "x", 1) != 1 || waitpid(owner, NULL, 0) != owner)
		failures++;
	close(sp[0]);
	if (word)
		*word = 0x5eed0002u;
	say("share: after the owner ended: BAR2 %s",
	    word && *word == 0x5eed0002u ? "still mapped" : "gone");
	err = smq_doorbell_ring(db, id, SHARE_VEC);
	int irq = err ? err : wait_fd(fds[1], 2000);
	say("share: after the owner ended: a ring %s (%d %s)",
	    irq ? "brings no interrupt" : "still interrupts", irq,
	    irq ? errname(irq) : "ok");
	err = smq_vfio_open(&again, bdf);
	say("share: a new owner while the device file is held: open rc %d %s",
	    err, err ? errname(err) : "ok");
	if (!err)
		smq_vfio_close(again);
	smq_doorbell_close(db);
	smq_vfio_close(v);
	close(fds[1]);
	/* all let go: the device opens again */
	err = smq_vfio_open(&again, bdf);
	check(err == 0, "share: once the adopter closed, the device opens "
			"again");
	if (!err)
		smq_vfio_close(again);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "open") == 0)
		return cmd_open(argv[2]);
	if (argc == 3 && strcmp(argv[1], "plain") == 0)
		return cmd_plain(argv[2]);
	if (argc == 3 && strcmp(argv[1], "share") == 0)
		return cmd_share(argv[2]);
	if (argc == 5 && strcmp(argv[1], "run") == 0 &&
	    (strcmp(argv[3], "a") == 0 || strcmp(argv[3], "b") == 0) &&
	    atoi(argv[4]) > 0)
		return cmd_run(argv[2], argv[3][0], atoi(argv[4]));
	fprintf(stderr, "usage: vfio_check open|plain|share BDF\n"
			"       vfio_check run BDF a|b ROUNDS\n");
	return 2;
}
