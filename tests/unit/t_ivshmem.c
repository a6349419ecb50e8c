/* The ivshmem server (libsmq's smq_server_*) and client (the internal
 * ivc_*), against each other: IDs, the shared memory, rings on the right
 * vector and peer in both directions, a ring before the wait, peers
 * leaving and their IDs not given again at once, a client that breaks the
 * protocol, the socket's rules, the memory's rules, and no descriptor
 * leaked on either side (clients that do not read, or sleep: t_ivshmem_idle).
 *
 * The server runs in a child process and reports every event, with the
 * IDs connected after it, through a pipe. */
#include <fcntl.h>
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include "testint.h"
#include "testlib.h"
#include "ivshmem/client.h"
#include "ivshmem_srv.h"

/* the least count of checks a run makes (142 as root here; fewer
 * where a part needs root or a device) */
TEST_FLOOR(120);

static void *map_memory(struct ivc *c, size_t *len)
{
	struct stat st;

	if (fstat(ivc_memory_fd(c), &st) < 0)
		FAIL("fstat memory");
	*len = (size_t)st.st_size;
	void *p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ivc_memory_fd(c), 0);
	if (p == MAP_FAILED)
		FAIL("mmap memory");
	return p;
}

/* ---- the parts ---- */

static void peers_and_rings(void)
{
	struct srv sv;
	struct timespec dl;
	unsigned ids[8];

	OK(start_server(&sv, "main", NULL, 40000, 4));
	/* the first client: no peer to learn the count from, it settles */
	struct ivc *c0;
	OK(ivc_connect(&c0, sv.path, 0));
	CHECK(ivc_id(c0) == 0);
	expect_event(&sv, SMQ_PEER_JOINED, 0, 0);
	WAIT_UNTIL(ivc_update(c0) < 0 || ivc_vectors(c0) == 4, 10,
		   "the first client to settle on 4 vectors");
	CHECK(ivc_vectors(c0) == 4);
	/* the second learns it from the first, at once */
	struct ivc *c1 = join(&sv, 0, 1);
	CHECK(ivc_vectors(c1) == 4);
	CHECK(ivc_peer_connected(c1, 0) == 1);
	until_peer(c0, 1, 1);

	/* one memory, a power of two of at least 40000 bytes */
	size_t len0, len1;
	unsigned char *m0 = map_memory(c0, &len0), *m1 = map_memory(c1, &len1);
	CHECK(len0 == 65536 && len1 == 65536);
	memcpy(m0 + 1000, "ivshmem", 8);
	m1[60000] = 0x5a;
	CHECK(!memcmp(m1 + 1000, "ivshmem", 8));
	CHECK(m0[60000] == 0x5a);
	munmap(m0, len0);
	munmap(m1, len1);

	/* rings both ways, each on its vector only */
	for (unsigned v = 0; v < 4; v++) {
		ring_ok(c0, c1, v);
		ring_ok(c1, c0, v);
	}
	/* a ring before the wait is not lost; two make one wake-up */
	OK(ivc_ring(c0, 1, 2));
	OK(ivc_ring(c0, 1, 2));
	deadline_in(&dl, 0);
	OK(ivc_wait(c1, 2, &dl));
	deadline_in(&dl, 50);
	EXPECT(ivc_wait(c1, 2, &dl), -ETIMEDOUT);
	/* a client rings itself through its own ID */
	ring_ok(c0, c0, 3);
	/* what does not exist */
	EXPECT(ivc_ring(c0, 7, 0), -ENOENT);
	EXPECT(ivc_ring(c0, 1, 4), -ENXIO);
	EXPECT(ivc_wait(c0, 4, NULL), -ENXIO);

	/* a third client: everyone sees everyone */
	struct ivc *c2 = join(&sv, 4, 2);
	CHECK(ivc_peers(c2, ids, 8) == 2 && ids[0] == 0 && ids[1] == 1);
	until_peer(c0, 2, 1);
	until_peer(c1, 2, 1);
	ring_ok(c2, c0, 1);
	ring_ok(c0, c2, 2);
	ring_ok(c1, c2, 3);
	ring_ok(c2, c1, 0);

	/* client 1 leaves: the server says so, and so do the others */
	ivc_close(c1);
	expect_event(&sv, SMQ_PEER_LEFT, 1, 0);
	until_peer(c0, 1, 0);
	until_peer(c2, 1, 0);
	EXPECT(ivc_ring(c0, 1, 0), -ENOENT);
	CHECK(ivc_peers(c0, ids, 8) == 1 && ids[0] == 2);
	ring_ok(c2, c0, 0);

	/* a fourth takes the next ID, 3, not the freed 1: QEMU's device
	 * cannot take an ID back at once */
	struct ivc *c3 = join(&sv, 4, 3);
	CHECK(ivc_peers(c3, ids, 8) == 2 && ids[0] == 0 && ids[1] == 2);
	until_peer(c0, 3, 1);
	until_peer(c2, 3, 1);
	CHECK(ivc_peer_connected(c0, 1) == 0);
	ring_ok(c0, c3, 1);
	ring_ok(c3, c2, 3);

	/* a client that asks for fewer vectors keeps those */
	struct ivc *c4 = join(&sv, 2, 4);
	CHECK(ivc_vectors(c4) == 2);
	EXPECT(ivc_ring(c4, 0, 2), -ENXIO);
	ring_ok(c4, c0, 1);
	until_peer(c0, 4, 1);
	ring_ok(c0, c4, 1);
	ivc_close(c4);
	expect_event(&sv, SMQ_PEER_LEFT, 4, 0);

	/* a client that speaks is dropped; the others are told */
	int raw = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	strcpy(a.sun_path, sv.path);
	CHECK(raw >= 0 && connect(raw, (struct sockaddr *)&a, sizeof(a)) == 0);
	expect_event(&sv, SMQ_PEER_JOINED, 5, 0);
	until_peer(c0, 5, 1);
	CHECK(write(raw, "hello", 5) == 5);
	expect_event(&sv, SMQ_PEER_LEFT, 5, -EPROTO);
	until_peer(c0, 5, 0);
	until_peer(c2, 5, 0);
	close(raw);

	/* the server stops: the socket goes, the clients are told, and
	 * the peers they know still ring */
	stop_server(&sv);
	CHECK(access(sv.path, F_OK) < 0 && errno == ENOENT);
	for (int i = 0; i < 1000; i++) {
		int r = ivc_update(c0);
		if (r == -ENOTCONN)
			break;
		CHECK(r >= 0);
		/* asleep until the server's last words or its hang-up */
		struct pollfd pf = { ivc_socket_fd(c0), POLLIN, 0 };
		poll(&pf, 1, 5);
	}
	EXPECT(ivc_update(c0), -ENOTCONN);
	ring_ok(c0, c2, 0);
	ring_ok(c2, c3, 2);
	ivc_close(c0);
	ivc_close(c2);
	ivc_close(c3);
	EXPECT(ivc_connect(&c0, sv.path, 0), -ENOENT);
	CHECK(c0 == NULL);
}

/* Threads ring one peer at once while notifications are taken. */
struct ringer {
	struct ivc *c;
	unsigned peer;
	int err;
};

static void *ring_many(void *arg)
{
	struct ringer *r = arg;

	for (int i = 0; i < 2000 && !r->err; i++)
		r->err = ivc_ring(r->c, r->peer, (unsigned)i % 2);
	return NULL;
}

static void threads(void)
{
	struct srv sv;
	struct ringer r[4];
	pthread_t t[4];

	OK(start_server(&sv, "threads", NULL, 4096, 2));
	struct ivc *c0 = join(&sv, 2, 0), *c1 = join(&sv, 2, 1);
	until_peer(c0, 1, 1);
	for (int i = 0; i < 4; i++) {
		r[i] = (struct ringer){ c0, 1, 0 };
		CHECK(pthread_create(&t[i], NULL, ring_many, &r[i]) == 0);
	}
	/* peers come and go under the ringers */
	for (unsigned i = 0; i < 5; i++) {
		struct ivc *x = join(&sv, 2, (int)(2 + i));
		until_peer(c0, 2 + i, 1);
		ivc_close(x);
		expect_event(&sv, SMQ_PEER_LEFT, 2 + i, 0);
		until_peer(c0, 2 + i, 0);
	}
	for (int i = 0; i < 4; i++) {
		CHECK(pthread_join(t[i], NULL) == 0);
		OK(r[i].err);
	}
	struct timespec dl;
	deadline_in(&dl, 5000);
	OK(ivc_wait(c1, 0, &dl));
	deadline_in(&dl, 5000);
	OK(ivc_wait(c1, 1, &dl));
	ivc_close(c0);
	ivc_close(c1);
	expect_event(&sv, SMQ_PEER_LEFT, 0, 0);
	expect_event(&sv, SMQ_PEER_LEFT, 1, 0);
	stop_server(&sv);
}

/* A server that speaks another version, or garbage. */
static void fake_server(const char *path, int64_t first, int64_t second)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), fd;

	strcpy(a.sun_path, path);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
		FAIL("fake server");
	pid_t pid = test_fork_raw();
	if (pid == 0) {
		int64_t m[2] = { first, second };   /* little-endian here */
		fd = accept(l, NULL, NULL);
		if (fd < 0 || write(fd, m, sizeof(m)) != sizeof(m))
			_exit(1);
		char c;
		(void)!read(fd, &c, 1);   /* until the client hangs up */
		_exit(0);
	}
	close(l);
	struct ivc *c;
	EXPECT(ivc_connect(&c, path, 0), first == 0 ? -EPROTO : -EPROTONOSUPPORT);
	CHECK(c == NULL);
	test_wait_ok(pid, "the fake server");
	unlink(path);
}

static void socket_rules(void)
{
	struct srv sv, other;
	char path[108];
	struct stat st;

	OK(start_server(&sv, "rules", NULL, 4096, 1));
	CHECK(stat(sv.path, &st) == 0 && S_ISSOCK(st.st_mode) &&
	      (st.st_mode & 07777) == 0600);
	/* a live server's socket is refused, and left alone; the live one
	 * saw a client come and go */
	EXPECT(start_server(&other, "rules", NULL, 4096, 1), -EADDRINUSE);
	struct record r = next_event(&sv);
	CHECK(r.ev.type == SMQ_PEER_JOINED && r.ev.peer == 0);
	r = next_event(&sv);
	CHECK(r.ev.type == SMQ_PEER_LEFT && r.ev.peer == 0 && r.ev.error == 0);
	struct ivc *c = join(&sv, 1, 1);
	ivc_close(c);
	expect_event(&sv, SMQ_PEER_LEFT, 1, 0);
	stop_server(&sv);

	/* a stale socket (its server died) is replaced */
	snprintf(path, sizeof(path), "%s/stale", srv_dir);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	strcpy(a.sun_path, path);
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(l >= 0 && bind(l, (struct sockaddr *)&a, sizeof(a)) == 0);
	close(l);
	OK(start_server(&sv, "stale", NULL, 4096, 1));
	c = join(&sv, 1, 0);
	ivc_close(c);
	expect_event(&sv, SMQ_PEER_LEFT, 0, 0);
	stop_server(&sv);

	/* anything else at the path stays, and is refused */
	snprintf(path, sizeof(path), "%s/file", srv_dir);
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
	CHECK(fd >= 0 && write(fd, "keep", 4) == 4);
	close(fd);
	EXPECT(start_server(&sv, "file", NULL, 4096, 1), -EEXIST);
	CHECK(stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 4);
	unlink(path);

	/* bad configurations */
	struct smq_server *s;
	struct smq_server_config cfg = { path, NULL, 4096, 1, 0 };
	cfg.vectors = 0;
	EXPECT(smq_server_open(&cfg, sizeof(cfg), &s), -EINVAL);
	cfg.vectors = SMQ_SERVER_MAX_VECTORS + 1;
	EXPECT(smq_server_open(&cfg, sizeof(cfg), &s), -EINVAL);
	cfg.vectors = 1;
	cfg.size = 0;
	EXPECT(smq_server_open(&cfg, sizeof(cfg), &s), -EINVAL);
	cfg.size = 4096;
	cfg.memory = "pci:00:01.0";
	EXPECT(smq_server_open(&cfg, sizeof(cfg), &s), -EPROTONOSUPPORT);
	cfg.memory = "shm:../escape";
	EXPECT(smq_server_open(&cfg, sizeof(cfg), &s), -EINVAL);
	cfg.memory = NULL;
	char longpath[200];
	memset(longpath, 'x', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = 0;
	cfg.socket_path = longpath;
	EXPECT(smq_server_open(&cfg, sizeof(cfg), &s), -ENAMETOOLONG);
	CHECK(s == NULL);
	CHECK(access(path, F_OK) < 0);

	/* clients of servers that do not speak version 0 */
	snprintf(path, sizeof(path), "%s/fake", srv_dir);
	fake_server(path, 1, 0);
	fake_server(path, 0, 70000);
}

static void memory_rules(void)
{
	struct srv sv;
	char file[128], spec[140], link[128];
	struct stat st;

	/* a file is created 0600, at a power of two */
	snprintf(file, sizeof(file), "%s/mem", srv_dir);
	snprintf(spec, sizeof(spec), "file:%s", file);
	OK(start_server(&sv, "m1", spec, 5000, 1));
	CHECK(stat(file, &st) == 0 && (st.st_mode & 07777) == 0600 &&
	      st.st_size == 8192);
	/* clients map that very file */
	struct ivc *c = join(&sv, 1, 0);
	struct stat cst;
	CHECK(fstat(ivc_memory_fd(c), &cst) == 0 && cst.st_ino == st.st_ino);
	ivc_close(c);
	expect_event(&sv, SMQ_PEER_LEFT, 0, 0);
	stop_server(&sv);
	CHECK(stat(file, &st) == 0);   /* the memory stays */

	/* an existing one keeps its bytes, is never shrunk, and grows to a
	 * power of two */
	int fd = open(file, O_WRONLY | O_CLOEXEC);
	CHECK(fd >= 0 && ftruncate(fd, 20000) == 0 &&
	      pwrite(fd, "kept", 4, 100) == 4);
	close(fd);
	OK(start_server(&sv, "m2", spec, 4096, 1));
	CHECK(stat(file, &st) == 0 && st.st_size == 32768);
	char buf[4];
	fd = open(file, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && pread(fd, buf, 4, 100) == 4 && !memcmp(buf, "kept", 4));
	close(fd);
	stop_server(&sv);

	/* a symbolic link is refused, its target untouched */
	snprintf(link, sizeof(link), "%s/link", srv_dir);
	CHECK(symlink(file, link) == 0);
	snprintf(spec, sizeof(spec), "file:%s", link);
	EXPECT(start_server(&sv, "m3", spec, 65536, 1), -ELOOP);
	CHECK(stat(file, &st) == 0 && st.st_size == 32768);
	CHECK(access(sv.path, F_OK) < 0);

	/* not a regular file */
	snprintf(spec, sizeof(spec), "file:%s", srv_dir);
	EXPECT(start_server(&sv, "m4", spec, 4096, 1), -EISDIR);

	/* another user's: refused (making one needs root) */
	if (geteuid() == 0) {
		CHECK(chown(file, 65534, 65534) == 0);
		snprintf(spec, sizeof(spec), "file:%s", file);
		EXPECT(start_server(&sv, "m5", spec, 65536, 1), -EPERM);
		CHECK(stat(file, &st) == 0 && st.st_size == 32768);
		CHECK(access(sv.path, F_OK) < 0);
	} else {
		printf("note: not root: the row of another user's memory is "
		       "skipped\n");
	}

	/* a shm object, created and left in place; a failed start removes
	 * the one it made */
	const char *name = test_name("memory");
	snprintf(spec, sizeof(spec), "shm:%s", name);
	snprintf(file, sizeof(file), "/dev/shm/%s", name);
	OK(start_server(&sv, "m6", spec, 4096, 1));
	CHECK(stat(file, &st) == 0 && st.st_size == 4096 &&
	      (st.st_mode & 07777) == 0600);
	stop_server(&sv);
	CHECK(unlink(file) == 0);
	snprintf(link, sizeof(link), "%s/no/such/dir", srv_dir);
	struct smq_server *s;
	struct smq_server_config cfg = { link, spec, 4096, 1, 0 };
	EXPECT(smq_server_open(&cfg, sizeof(cfg), &s), -ENOENT);
	CHECK(access(file, F_OK) < 0);
}

int main(void)
{
	int fds;

	srv_setup();
	fds = count_fds();
	peers_and_rings();
	threads();
	socket_rules();
	memory_rules();
	if (count_fds() != fds)
		FAIL("descriptors: %d before, %d after", fds, count_fds());
	printf("ivshmem server and client agree\n");
	return 0;
}
