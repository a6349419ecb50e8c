/* The library as a user meets it: structs that carry their size, a
 * read-only monitor that claims nothing and sees the window removed, a
 * window removed by a call, a sync that waits for a new generation, the
 * errors worth a retry, and words for every code. */
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include "testint.h"
#include "testlib.h"

/* the least count of checks a run makes (1076 here) */
TEST_FLOOR(900);

/* A time on purpose; each use says why */
static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* ---- structs across the interface ---- */

static void test_sizes(const char *spec)
{
	struct smq_window *w = test_init(spec, 2, 3, 8, 64);
	unsigned char buf[sizeof(struct smq_window_info) + 32];
	struct smq_window_info wi;

	/* an older, smaller struct (1.0's): filled as far as it goes,
	 * nothing past; smaller than any header's: refused
	 * (t_struct_least) */
	memset(buf, 0xaa, sizeof(buf));
	size_t small = offsetof(struct smq_window_info, first_bytes) +
		       sizeof(wi.first_bytes);
	OK(smq_window_info(w, (struct smq_window_info *)(void *)buf, small));
	CHECK(!strcmp((char *)buf, "shm") || !strcmp((char *)buf, "file"));
	for (size_t i = small; i < sizeof(buf); i++)
		CHECK(buf[i] == 0xaa);
	EXPECT(smq_window_info(w, (struct smq_window_info *)(void *)buf,
			       offsetof(struct smq_window_info, board)),
	       -EINVAL);
	/* ours: filled, nothing written past it */
	memset(buf, 0xaa, sizeof(buf));
	OK(smq_window_info(w, (struct smq_window_info *)(void *)buf,
			   sizeof(wi)));
	memcpy(&wi, buf, sizeof(wi));
	CHECK(wi.geometry.boards == 2 && wi.geometry.queues == 3);
	for (size_t i = sizeof(wi); i < sizeof(buf); i++)
		CHECK(buf[i] == 0xaa);
	/* a newer, larger struct: what this library does not know is zeroed */
	memset(buf, 0xaa, sizeof(buf));
	OK(smq_window_info(w, (struct smq_window_info *)(void *)buf,
			   sizeof(buf)));
	for (size_t i = sizeof(wi); i < sizeof(buf); i++)
		CHECK(buf[i] == 0);
	EXPECT(smq_window_info(w, &wi, 0), -EINVAL);

	/* an input struct from a newer header: zero past ours is the default,
	 * anything else is refused before a byte of the window is written */
	struct { struct smq_geometry g; uint64_t newer[2]; } in;
	memset(&in, 0, sizeof(in));
	in.g = (struct smq_geometry){ 2, 4, 8, 64, NULL };
	OK(smq_init(w, &in.g, sizeof(in)));
	OK(smq_window_info(w, &wi, sizeof(wi)));
	CHECK(wi.geometry.queues == 4 && wi.generation == 2);
	in.newer[1] = 1;
	size_t len;
	uint8_t *snap = test_snapshot(spec, &len);
	EXPECT(smq_init(w, &in.g, sizeof(in)), -E2BIG);
	test_same(snap, len, spec, "smq_init of a struct with unknown fields");
	free(snap);
	uint64_t bytes = 0;
	EXPECT(smq_layout_size(&in.g, sizeof(in), &bytes), -E2BIG);
	OK(smq_layout_size(&in.g, sizeof(in.g), &bytes));
	CHECK(bytes >= wi.window_size);
	/* a geometry of empty messages only is a mistake init refuses */
	in.g.entry_size = 0;
	EXPECT(smq_init(w, &in.g, sizeof(in.g)), -EINVAL);
	OK(smq_close(w));
	printf("structs: smaller filled as far as they go, larger zeroed, "
	       "unknown input refused\n");
}

/* ---- a monitor ---- */

static int monitor_blocked(struct smq_window *m)
{
	struct smq_geometry g = { 1, 1, 1, 1, NULL };
	struct smq_queue *q;

	EXPECT(smq_queue_open(m, 0, SMQ_SENDER, 0, &q), -EROFS);
	EXPECT(smq_announce(m), -EROFS);
	EXPECT(smq_heartbeat(m), -EROFS);
	EXPECT(smq_synchronize(m, 0, 0, 0, NULL), -EROFS);
	EXPECT(smq_init(m, &g, sizeof(g)), -EROFS);
	EXPECT(smq_clear(m, -1), -EROFS);
	EXPECT(smq_set_mode(m, 0600), -EROFS);
	return 0;
}

static void test_monitor(const char *spec)
{
	struct smq_window *w, *b1, *m, *mons[80];
	struct smq_window_info wi;
	struct smq_board_info bi;
	struct smq_queue_info qi;
	size_t len;

	EXPECT(smq_open(spec, 0, SMQ_OPEN_READONLY, &m), -ENOENT);
	EXPECT(smq_open(spec, 0, SMQ_OPEN_READONLY | SMQ_OPEN_CREATE, &m),
	       -EINVAL);
	/* created, not yet formatted: a monitor waits for it */
	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w));
	OK(smq_open(spec, 5, SMQ_OPEN_READONLY, &m));
	EXPECT(smq_window_info(m, &wi, sizeof(wi)), -SMQ_EUNFORMATTED);
	struct smq_geometry g = { 2, 2, 8, 64, NULL };
	OK(smq_init(w, &g, sizeof(g)));
	OK(smq_window_info(m, &wi, sizeof(wi)));
	CHECK(wi.board == SMQ_NO_BOARD && wi.generation == 1);
	monitor_blocked(m);

	/* it claims nothing: the window is the same byte for byte after 80
	 * monitors opened, looked and closed (a board has 62 handle slots) */
	uint8_t *snap = test_snapshot(spec, &len);
	for (int i = 0; i < 80; i++) {
		OK(smq_open(spec, 0, SMQ_OPEN_READONLY, &mons[i]));
		OK(smq_window_info(mons[i], &wi, sizeof(wi)));
		OK(smq_board_info(mons[i], 1, &bi, sizeof(bi)));
		OK(smq_queue_info(mons[i], 0, &qi, sizeof(qi)));
		OK(smq_validate(mons[i], NULL, 0));
	}
	for (int i = 0; i < 80; i++)
		OK(smq_close(mons[i]));
	test_same(snap, len, spec, "80 monitors");
	free(snap);

	/* it sees boards come and a message queued */
	OK(smq_open(spec, 1, 0, &b1));
	OK(smq_announce(b1));
	OK(smq_board_info(m, 1, &bi, sizeof(bi)));
	CHECK(bi.state == SMQ_BOARD_INITIALIZED && bi.pid == (uint32_t)getpid());
	struct smq_queue *q;
	OK(smq_queue_open(b1, 0, SMQ_SENDER, 0, &q));
	OK(smq_send(q, "x", 1, 0));
	OK(smq_queue_info(m, 0, &qi, sizeof(qi)));
	CHECK(qi.queued == 1 && qi.sent == 1);
	OK(smq_queue_close(q));

	/* it follows a re-init to a new geometry, where a board's handle
	 * turns stale */
	g.queues = 5;
	OK(smq_init(w, &g, sizeof(g)));
	EXPECT(smq_window_info(b1, &wi, sizeof(wi)), -ESTALE);
	OK(smq_window_info(m, &wi, sizeof(wi)));
	CHECK(wi.generation == 2 && wi.geometry.queues == 5);
	OK(smq_queue_info(m, 4, &qi, sizeof(qi)));
	CHECK(qi.queued == 0);
	OK(smq_clear(w, -1));
	OK(smq_board_info(m, 1, &bi, sizeof(bi)));
	OK(smq_window_info(m, &wi, sizeof(wi)));
	CHECK(wi.generation == 3);

	/* and the window removed: every snapshot says so, its struct zeroed */
	OK(smq_remove(spec));
	memset(&wi, 0xaa, sizeof(wi));
	memset(&bi, 0xaa, sizeof(bi));
	memset(&qi, 0xaa, sizeof(qi));
	struct smq_fault f;
	memset(&f, 0xaa, sizeof(f));
	EXPECT(smq_window_info(m, &wi, sizeof(wi)), -EIDRM);
	EXPECT(smq_board_info(m, 0, &bi, sizeof(bi)), -EIDRM);
	EXPECT(smq_queue_info(m, 0, &qi, sizeof(qi)), -EIDRM);
	EXPECT(smq_validate(m, &f, sizeof(f)), -EIDRM);
	CHECK(wi.generation == 0 && wi.geometry.boards == 0 && !wi.name[0]);
	CHECK(bi.state == 0 && bi.host[0] == 0 && qi.sent == 0);
	CHECK(f.field[0] == 0 && f.board == -1);
	/* a board's handle keeps its memory until closed */
	OK(smq_window_info(w, &wi, sizeof(wi)));
	OK(smq_close(m));
	OK(smq_close(b1));
	OK(smq_close(w));
	EXPECT(smq_open(spec, 0, SMQ_OPEN_READONLY, &m), -ENOENT);
	printf("monitor: no board, no slot, no write; follows re-inits; "
	       "sees the window removed\n");
}

/* ---- a monitor shared by threads, while board 0 re-formats ---- */

struct looker {
	struct smq_window *m;
	volatile int *stop;
	unsigned looks;
};

static void *look(void *arg)
{
	struct looker *l = arg;
	struct smq_window_info wi;
	struct smq_queue_info qi;
	struct smq_board_info bi;

	while (!*l->stop) {
		int err = smq_window_info(l->m, &wi, sizeof(wi));
		if (err && err != -ESTALE && err != -SMQ_EUNFORMATTED)
			FAIL("window_info: %s", smq_strerror(err));
		for (unsigned q = 0; !err && q < wi.geometry.queues; q++)
			smq_queue_info(l->m, q, &qi, sizeof(qi));
		smq_board_info(l->m, 1, &bi, sizeof(bi));
		smq_validate(l->m, NULL, 0);
		__atomic_add_fetch(&l->looks, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void test_monitor_threads(const char *spec)
{
	struct smq_window *w, *m;
	pthread_t th[3];
	struct looker l[3];
	volatile int stop = 0;

	/* created empty, so that the threads map it anew once it is made */
	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w));
	OK(smq_open(spec, 0, SMQ_OPEN_READONLY, &m));
	for (int i = 0; i < 3; i++) {
		l[i] = (struct looker){ m, &stop, 0 };
		CHECK(pthread_create(&th[i], NULL, look, &l[i]) == 0);
	}
	/* each has looked at the window unmade */
	for (int i = 0; i < 3; i++)
		WAIT_UNTIL(__atomic_load_n(&l[i].looks, __ATOMIC_ACQUIRE), 20,
			   "looker %d's first look", i);
	for (int i = 0; i < 40; i++) {
		struct smq_geometry g = { 2, i & 1 ? 50 : 2, 4, 64, NULL };
		OK(smq_init(w, &g, sizeof(g)));
		/* a pace, not a state: the threads look between formats */
		sleep_ms(2);
	}
	stop = 1;
	unsigned looks = 0;
	for (int i = 0; i < 3; i++) {
		CHECK(pthread_join(th[i], NULL) == 0);
		looks += l[i].looks;
	}
	CHECK(looks > 0);
	OK(smq_close(m));
	OK(smq_close(w));
	printf("monitor: 3 threads looked %u times through 40 re-formats\n",
	       looks);
}

/* ---- a monitor after an init that was killed ---- */

static int tag_of_child(void *arg)
{
	int fd = *(int *)arg;
	uint64_t tag = smq_tag_self();
	return write(fd, &tag, sizeof(tag)) == sizeof(tag) ? 0 : 1;
}

static void test_monitor_killed_init(const char *spec)
{
	struct smq_window *w = test_init(spec, 2, 2, 4, 64), *m;
	struct smq_window_info wi;
	struct smq_fault f;
	uint64_t tag;
	int p[2];

	/* an init that told the boards and died, as its process left it */
	CHECK(pipe(p) == 0);
	pid_t pid = test_fork(tag_of_child, &p[1]);
	test_wait_ok(pid, "child");
	CHECK(read(p[0], &tag, sizeof(tag)) == sizeof(tag));
	close(p[0]);
	close(p[1]);
	OK(smq_close(w));
	int fd = open(test_path(spec), O_RDWR);
	CHECK(fd >= 0);
	struct smq_sb *sb = mmap(NULL, SMQ_SB_SIZE, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, 0);
	CHECK(sb != MAP_FAILED);
	STORE(&sb->maint_owner, tag);
	STORE(&sb->maint_boot, smq_boot_hash());
	STORE(&sb->maint_phase, SMQ_MAINT_WAITING);
	munmap(sb, SMQ_SB_SIZE);
	close(fd);

	/* not "formatted anew, attach again" for ever: the window as it is,
	 * and validation names the unfinished init */
	OK(smq_open(spec, 0, SMQ_OPEN_READONLY, &m));
	for (int i = 0; i < 3; i++)
		OK(smq_window_info(m, &wi, sizeof(wi)));
	CHECK(wi.maint_phase == SMQ_MAINT_WAITING && wi.maint_alive == 0);
	EXPECT(smq_validate(m, &f, sizeof(f)), -SMQ_EINCOMPLETE);
	OK(smq_close(m));
	printf("monitor: an init killed midway is shown as it is, not as a "
	       "re-format that never ends\n");
}

/* ---- a fault's board ---- */

static void test_fault_board(const char *spec)
{
	struct smq_window *w = test_init(spec, 2, 2, 4, 64);
	struct smq_fault f;

	OK(smq_close(w));
	int fd = open(test_path(spec), O_RDWR);
	CHECK(fd >= 0 && pwrite(fd, "NOTSMQ!!", 8, 0) == 8);
	close(fd);
	OK(smq_open(spec, 0, SMQ_OPEN_RAW, &w));
	EXPECT(smq_validate(w, &f, sizeof(f)), -SMQ_EMAGIC);
	CHECK(f.offset == 0 && f.board == 0);  /* board 0's superblock */
	OK(smq_close(w));
	printf("fault: a bad magic is board 0's\n");
}

/* ---- removing ---- */

static void test_remove(const char *spec)
{
	struct smq_window *w;
	char path[256], name[300];
	struct stat st;

	w = test_init(spec, 1, 1, 1, 1);
	OK(smq_close(w));
	OK(smq_remove(spec));
	CHECK(stat(test_path(spec), &st) < 0 && errno == ENOENT);
	EXPECT(smq_remove(spec), -ENOENT);

	/* a file of the user's own is not ours to remove */
	snprintf(path, sizeof(path), "/dev/shm/%s", test_name("user.txt"));
	FILE *f = fopen(path, "w");
	CHECK(f && fputs("the user's data\n", f) >= 0 && !fclose(f));
	snprintf(name, sizeof(name), "file:%s", path);
	EXPECT(smq_remove(name), -SMQ_ENOTWINDOW);
	CHECK(stat(path, &st) == 0);
	/* ...which smq_window_info() says without formatting it, as init
	 * would judge it; and not of a window */
	struct smq_window_info wi;
	OK(smq_open(name, 0, SMQ_OPEN_READONLY | SMQ_OPEN_RAW, &w));
	smq_window_info(w, &wi, sizeof(wi));
	CHECK(wi.not_window == 1);
	OK(smq_close(w));
	EXPECT(smq_open(name, 0, 0, &w), -SMQ_EMAGIC);
	CHECK(stat(path, &st) == 0 && st.st_size == 16);
	unlink(path);
	/* a split window's first object smaller than a page is judged on
	 * what it holds: text is not a window, zeros are (its first bytes
	 * as found) */
	const char *small = test_name("small");
	snprintf(path, sizeof(path), "/dev/shm/%s.0", small);
	snprintf(name, sizeof(name), "split:%s", small);
	for (int zero = 0; zero < 2; zero++) {
		f = fopen(path, "w");
		CHECK(f && (zero ? fwrite("\0\0\0\0", 1, 4, f) == 4
				 : fputs("the user's data\n", f) >= 0) &&
		      !fclose(f));
		OK(smq_open(name, 0, SMQ_OPEN_READONLY | SMQ_OPEN_RAW, &w));
		smq_window_info(w, &wi, sizeof(wi));
		CHECK(wi.not_window == !zero);
		CHECK(zero || !memcmp(wi.first_bytes, "the user's data\n", 16));
		OK(smq_close(w));
	}
	unlink(path);
	snprintf(name, sizeof(name), "file:%s/formatted", test_dir());
	w = test_init(name, 2, 2, 4, 64);
	OK(smq_close(w));
	OK(smq_open(name, 0, SMQ_OPEN_READONLY | SMQ_OPEN_RAW, &w));
	OK(smq_window_info(w, &wi, sizeof(wi)));
	CHECK(wi.not_window == 0);
	OK(smq_close(w));

	/* every region of a split window */
	snprintf(name, sizeof(name), "split:%s", test_name("split"));
	w = test_init(name, 3, 3, 4, 64);
	OK(smq_close(w));
	for (int b = 0; b < 3; b++) {
		snprintf(path, sizeof(path), "/dev/shm/%s.%d",
			 test_name("split"), b);
		CHECK(stat(path, &st) == 0);
	}
	OK(smq_remove(name));
	for (int b = 0; b < 3; b++) {
		snprintf(path, sizeof(path), "/dev/shm/%s.%d",
			 test_name("split"), b);
		CHECK(stat(path, &st) < 0);
	}
	EXPECT(smq_remove("pci:0000:00:00.0/2"), -EOPNOTSUPP);
	EXPECT(smq_remove("nosuch:x"), -EPROTONOSUPPORT);
	printf("remove: windows of every kind gone, a user's file kept\n");
}

/* ---- a board that starts first on a leftover window ---- */

struct late {
	const char *spec;
	int pipe_w;
};

static int board1_waits(void *arg)
{
	const struct late *l = arg;
	struct smq_window *w;
	struct smq_window_info wi;
	struct smq_queue *q;
	uint64_t pending = 0;

	OK(smq_open(l->spec, 1, 0, &w));
	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &q));
	/* a queue open on the handle: it cannot move to a new layout */
	EXPECT(smq_synchronize(w, SMQ_SYNC_NEW_GENERATION, 100, 5, &pending),
	       -EBUSY);
	OK(smq_queue_close(q));
	EXPECT(smq_synchronize(w, SMQ_SYNC_NEW_GENERATION, 50, 5, &pending),
	       -ETIMEDOUT);
	CHECK(pending & 1);
	CHECK(write(l->pipe_w, "w", 1) == 1);
	OK(smq_synchronize(w, SMQ_SYNC_NEW_GENERATION, 20000, 5, NULL));
	OK(smq_window_info(w, &wi, sizeof(wi)));
	CHECK(wi.generation == 2 && wi.system_state == SMQ_SYS_READY);
	OK(smq_queue_open(w, 0, SMQ_SENDER, 0, &q));
	OK(smq_send(q, "new", 3, 5000));
	OK(smq_queue_close(q));
	OK(smq_close(w));
	return 0;
}

static void test_new_generation(const char *spec)
{
	struct smq_window *w = test_init(spec, 2, 1, 8, 64);
	struct smq_window_info wi;
	struct smq_board_info bi;
	int p[2];
	char c;

	/* the leftover window of an earlier start, ready */
	OK(smq_close(w));
	CHECK(pipe(p) == 0);
	struct late l = { spec, p[1] };
	pid_t pid = test_fork(board1_waits, &l);
	/* its end only: a child that dies before it says is read as such */
	close(p[1]);
	test_waiting("board 1 (pid %d) to start waiting", (int)pid);
	CHECK(read(p[0], &c, 1) == 1);
	test_waiting(NULL);
	/* time passes on purpose, not a stand-in: board 1's sync looks every
	 * 5 ms, and one that announced into the old generation would show
	 * below; no state says it never will */
	sleep_ms(100);
	/* it waits without announcing into the old generation */
	OK(smq_open(spec, 0, 0, &w));
	OK(smq_board_info(w, 1, &bi, sizeof(bi)));
	CHECK(bi.state == SMQ_BOARD_ABSENT);
	struct smq_geometry g = { 2, 1, 8, 64, NULL };
	OK(smq_init(w, &g, sizeof(g)));
	OK(smq_synchronize(w, 0, 20000, 5, NULL));
	struct smq_queue *q;
	char buf[8];
	size_t n;
	unsigned from;
	OK(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &q));
	OK(smq_receive(q, buf, sizeof(buf), &n, &from, 20000));
	CHECK(n == 3 && !memcmp(buf, "new", 3) && from == 1);
	test_wait_ok(pid, "board 1");
	OK(smq_window_info(w, &wi, sizeof(wi)));
	CHECK(wi.generation == 2);
	OK(smq_queue_close(q));
	OK(smq_close(w));
	close(p[0]);
	printf("sync: a board started on a leftover window waited for the new "
	       "generation and its message arrived\n");
}

/* ---- errors ---- */

static void test_errors(void)
{
	static const int transient[] = { ENOENT, SMQ_EUNFORMATTED, EBUSY,
					 ESTALE, SMQ_EINCOMPLETE, EALREADY };
	static const int final[] = { EINVAL, ENOTDIR, SMQ_EMAGIC, SMQ_EVERSION,
				     SMQ_EFOREIGN, SMQ_ENOTWINDOW, EPERM,
				     EPROTONOSUPPORT, EROFS, EIDRM, E2BIG };
	for (size_t i = 0; i < sizeof(transient) / sizeof(transient[0]); i++)
		CHECK(smq_transient(-transient[i]) == 1);
	for (size_t i = 0; i < sizeof(final) / sizeof(final[0]); i++)
		CHECK(smq_transient(-final[i]) == 0);

	/* libc's words for these are about sockets and System V IPC */
	CHECK(!strstr(smq_strerror(-ETIMEDOUT), "Connection"));
	CHECK(!strstr(smq_strerror(-EUSERS), "Too many users"));
	CHECK(!strstr(smq_strerror(-ENOMSG), "desired type"));
	CHECK(strstr(smq_strerror(-EIDRM), "removed"));
	CHECK(strstr(smq_strerror(-EROFS), "read-only"));
	CHECK(!strchr(smq_strerror(-SMQ_EVERSION), '1'));
	/* every code of ours has words of its own */
	for (int e = SMQ_EUNFORMATTED; e <= SMQ_EFOREIGN; e++) {
		const char *s = smq_strerror(-e);
		CHECK(s && *s && !strstr(s, "Unknown error"));
		for (int o = SMQ_EUNFORMATTED; o < e; o++)
			CHECK(strcmp(s, smq_strerror(-o)));
	}
	CHECK(smq_strerror(SMQ_EFOREIGN + 1) != NULL);
	char buf[200];
	CHECK(smq_explain("nosuch:x", -EPROTONOSUPPORT, buf, sizeof(buf)) ==
	      buf && strstr(buf, "transport"));
	printf("errors: retry only where it helps; words for every code\n");
}

int main(void)
{
	test_sizes(test_window());
	test_monitor(test_window());
	test_monitor_threads(test_window());
	test_monitor_killed_init(test_window());
	test_fault_board(test_window());
	test_remove(test_window());
	test_new_generation(test_window());
	test_errors();
	return 0;
}
