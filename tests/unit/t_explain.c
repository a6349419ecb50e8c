/* Each transport says the true cause of its errors (smq_explain()): a
 * directory that does not exist is not a window board 0 has yet to make;
 * an object of another user names that user; a bad shm name, an unknown
 * transport; every VFIO errno of the pci transport its own cause, and
 * what the device's state tells (its driver, root); an ivshmem server
 * that is missing, hangs up, or speaks another version; and
 * smq_list_windows() finds a window and not an object that is none. */
#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include "testint.h"
#include "testlib.h"

/* the least count of checks a run makes (62 as root here; fewer
 * where a part needs root or a device) */
TEST_FLOOR(50);

static char words[1024];

/* The words for err of spec; fails unless they hold want (and, if
 * given, not unwanted). */
static void says(const char *spec, int err, const char *want,
		 const char *unwanted)
{
	smq_explain(spec, err, words, sizeof(words));
	if (!strstr(words, want))
		FAIL("%s, error %d: \"%s\" lacks \"%s\"", spec, err, words, want);
	if (unwanted && strstr(words, unwanted))
		FAIL("%s, error %d: \"%s\" says \"%s\"", spec, err, words,
		     unwanted);
	printf("ok  %s %d: %s\n", spec, err, words);
}

static int open_err(const char *spec, unsigned flags)
{
	struct smq_window *w;
	int err = smq_open(spec, 0, flags, &w);

	if (!err)
		smq_close(w);
	return err;
}

static void files(void)
{
	char spec[128], dir[64];

	snprintf(spec, sizeof(spec), "file:/nonexistent-%d/dir/x", getpid());
	/* not the window board 0 has yet to make: nothing to wait for */
	EXPECT(open_err(spec, SMQ_OPEN_CREATE), -ENOTDIR);
	EXPECT(open_err(spec, 0), -ENOTDIR);
	CHECK(!smq_transient(-ENOTDIR));
	snprintf(dir, sizeof(dir), "directory /nonexistent-%d/dir does not "
		 "exist", getpid());
	says(spec, -ENOTDIR, dir, "does not exist yet");
	says(spec, -ENOENT, dir, "does not exist yet");
	snprintf(spec, sizeof(spec), "file:/dev/shm/%s", test_name("none"));
	EXPECT(open_err(spec, 0), -ENOENT);
	says(spec, -ENOENT, "does not exist yet: board 0 creates it", NULL);
	says("shm:smq-explain-none", -ENOENT, "does not exist yet", NULL);
	says("split:smq-explain-none", -ENOENT, "window split:smq-explain-none "
	     "does not exist yet", NULL);
	EXPECT(open_err("file:/dev/null", 0), -EINVAL);
	says("file:/dev/null", -EINVAL, "not a regular file (it is a device)",
	     "shm name");
}

static void names(void)
{
	EXPECT(open_err("shm:../x", 0), -EINVAL);
	says("shm:../x", -EINVAL, "bad window spec 'shm:../x': a shm name is",
	     NULL);
	says("split:a/b", -EINVAL, "bad window spec 'split:a/b'", NULL);
	/* an unknown transport has no words of its own: the library's */
	EXPECT(open_err("nosuch:x", 0), -EPROTONOSUPPORT);
	smq_explain("nosuch:x", -EPROTONOSUPPORT, words, sizeof(words));
	CHECK(!strcmp(words, smq_strerror(-EPROTONOSUPPORT)));
	CHECK(strstr(words, "unknown transport"));
}

/* Writable by others: the mode; another user's (as root): the name. */
static void foreign(void)
{
	char spec[200], path[200], want[128];

	snprintf(spec, sizeof(spec), "shm:%s", test_name("open"));
	snprintf(path, sizeof(path), "/dev/shm/%s", test_name("open"));
	int fd = open(path, O_CREAT | O_RDWR | O_EXCL, 0600);
	CHECK(fd >= 0);
	CHECK(fchmod(fd, 0666) == 0);
	EXPECT(open_err(spec, SMQ_OPEN_CREATE), -SMQ_EFOREIGN);
	says(spec, -SMQ_EFOREIGN, "others may write it (mode 0666)", NULL);
	struct passwd *pw = getpwuid(65534);
	if (geteuid() == 0 && pw && fchown(fd, 65534, 65534) == 0 &&
	    fchmod(fd, 0600) == 0) {
		EXPECT(open_err(spec, SMQ_OPEN_CREATE), -SMQ_EFOREIGN);
		snprintf(want, sizeof(want), "belongs to %s (uid 65534)",
			 pw->pw_name);
		says(spec, -SMQ_EFOREIGN, want, NULL);
	} else {
		printf("note: another user's object needs root and uid 65534\n");
	}
	close(fd);
	unlink(path);
	/* a symbolic link is named as one */
	snprintf(spec, sizeof(spec), "shm:%s", test_name("link"));
	snprintf(path, sizeof(path), "/dev/shm/%s", test_name("link"));
	CHECK(symlink("/dev/null", path) == 0);
	EXPECT(open_err(spec, 0), -ELOOP);
	says(spec, -ELOOP, "is a symbolic link", NULL);
	unlink(path);
}

#define FAKE "pci:ff:1f.7/2"

/* Every errno vfio.h documents, on a device that is not there: each its
 * own cause, none the words of another. */
static void vfio_errnos(void)
{
	static const struct { int err; const char *cause; } c[] = {
		{ -EOPNOTSUPP, "has no IOMMU group" },
		{ -EUNATCH, "not bound to vfio-pci" },
		{ -ENOPKG, "/dev/vfio/vfio does not exist: the vfio modules" },
		{ -ENOENT, "group has no node in /dev/vfio" },
		{ -EPROTO, "another VFIO API version" },
		{ -EPROTONOSUPPORT, "no type1 IOMMU backend" },
		{ -EBUSY, "VFIO group is held by another open" },
		{ -EXDEV, "not viable: another device in it is bound" },
		{ -EPERM, "cannot remap interrupts" },
		{ -EACCES, "no permission to open the device's /dev/vfio group" },
	};
	char seen[sizeof(c) / sizeof(c[0])][sizeof(words)];

	if (access("/sys/bus/pci/devices/0000:ff:1f.7", F_OK) == 0) {
		printf("note: 0000:ff:1f.7 exists here: VFIO words skipped\n");
		return;
	}
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		says(FAKE, c[i].err, c[i].cause, NULL);
		CHECK(strstr(words, "0000:ff:1f.7"));
		snprintf(seen[i], sizeof(seen[i]), "%s", words);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(seen[i], seen[j]))
				FAIL("%d and %d read the same", c[i].err,
				     c[j].err);
	}
	says(FAKE, -ENODEV, "no PCI device at 0000:ff:1f.7", NULL);
	says(FAKE, -ENXIO, "BAR 2 of 0000:ff:1f.7 is not a memory BAR", NULL);
	says("pci:zz", -EINVAL, "bad window spec 'pci:zz'", NULL);
	says("pci:00:03.0/9", -EINVAL, "BAR 0 to 5", NULL);
	EXPECT(open_err(FAKE, 0), -ENODEV);
}

/* A device of this host bound to a driver other than vfio-pci: what its
 * state tells (through sysfs, not VFIO). */
static void host_device(void)
{
	DIR *d = opendir("/sys/bus/pci/devices");
	struct dirent *e;
	char spec[300] = "", drv[256], path[320];

	while (d && !*spec && (e = readdir(d))) {
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver",
			 e->d_name);
		ssize_t n = readlink(path, drv, sizeof(drv) - 1);
		drv[n > 0 ? n : 0] = 0;
		if (n > 0 && !strstr(drv, "/vfio-pci"))
			snprintf(spec, sizeof(spec), "pci:%s", e->d_name);
	}
	if (d)
		closedir(d);
	if (!*spec) {
		printf("note: no PCI device bound to a kernel driver here\n");
		return;
	}
	const char *name = strrchr(drv, '/') + 1;
	says(spec, -EBUSY, "is bound to a kernel driver", "VFIO");
	CHECK(strstr(words, name));
	says(spec, -EUNATCH, "its driver is", NULL);
	CHECK(strstr(words, name));
	says(spec, -EPERM, "the kernel refused to map a BAR", "interrupts");
	/* not root: the BAR needs root, not a /dev/vfio node */
	if (geteuid() == 0) {
		pid_t pid = test_fork_raw();
		if (pid == 0) {
			if (setgid(65534) || setuid(65534))
				_exit(3);
			smq_explain(spec, -EACCES, words, sizeof(words));
			_exit(strstr(words, "needs root") ? 0 : 1);
		}
		int st;
		CHECK(waitpid(pid, &st, 0) == pid);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
			printf("note: cannot become uid 65534: needs-root "
			       "skipped\n");
		else
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	} else {
		says(spec, -EACCES, "needs root", NULL);
	}
}

/* A server that says first (a version) and hangs up, or hangs up at
 * once (first < 0). */
static pid_t fake_server(const char *path, int64_t first, int accepts)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 4))
		FAIL("fake server");
	pid_t pid = test_fork_raw();
	if (pid == 0) {
		for (int i = 0; i < accepts; i++) {
			int fd = accept(l, NULL, NULL);
			if (fd < 0)
				_exit(1);
			if (first >= 0 &&
			    write(fd, &first, sizeof(first)) != sizeof(first))
				_exit(1);
			close(fd);
		}
		_exit(0);
	}
	close(l);
	return pid;
}

/* A server that sets a client up with memory of its choosing: a shm
 * object of size bytes, or (size < 0) the read end of a pipe. */
static pid_t memory_server(const char *path, long size)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 4))
		FAIL("memory server");
	pid_t pid = test_fork_raw();
	if (pid == 0) {
		int p[2], mem = -1, ev = eventfd(0, 0);
		if (size >= 0) {
			mem = memfd_create("smq-explain", 0);
			if (mem < 0 || ftruncate(mem, size) < 0)
				_exit(1);
		} else if (pipe(p) == 0) {
			mem = p[0];
		}
		int fd = accept(l, NULL, NULL);
		if (fd < 0 || ev < 0 || mem < 0)
			_exit(1);
		struct { int64_t v; int fd; } m[] = {
			{ 0, -1 }, { 0, -1 }, { -1, mem }, { 0, ev } };
		for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
			/* no SIGPIPE: a client out of descriptors hangs up
			 * before the last of these */
			if (smq_send_fd(fd, &m[i].v, 8, m[i].fd, MSG_NOSIGNAL))
				_exit(0);   /* the client hung up */
		char c;
		(void)!read(fd, &c, 1);   /* until the client hangs up */
		_exit(0);
	}
	close(l);
	return pid;
}

/* The memory a server hands out, and a process out of descriptors: each
 * its own cause, none "bad window spec" or "protocol error". */
static void ivshmem_memory(const char *path, const char *spec)
{
	pid_t pid = memory_server(path, 0);
	EXPECT(open_err(spec, 0), -ENODATA);
	says(spec, -ENODATA, "the memory the server handed out has 0 bytes",
	     "spec");
	test_wait_ok(pid, "the server of empty memory");
	unlink(path);
	pid = memory_server(path, -1);
	EXPECT(open_err(spec, 0), -ENODEV);
	says(spec, -ENODEV, "the memory the server handed out is not a "
	     "regular file", "spec");
	test_wait_ok(pid, "the server of a pipe");
	unlink(path);

	/* a client with room for its socket and no more */
	pid = memory_server(path, 65536);
	pid_t c = test_fork_raw();
	if (c == 0) {
		int free_fd = dup(0);
		struct rlimit rl;
		char want[96];
		if (free_fd < 0 || getrlimit(RLIMIT_NOFILE, &rl))
			_exit(3);
		rl.rlim_cur = (rlim_t)free_fd + 1;   /* the socket's slot */
		close(free_fd);
		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(3);
		int err = open_err(spec, 0);
		if (err != -EMFILE) {
			fprintf(stderr, "out of descriptors: %d (%s)\n", err,
				smq_strerror(err));
			_exit(1);
		}
		snprintf(want, sizeof(want), "out of file descriptors (its "
			 "limit, RLIMIT_NOFILE or ulimit -n, is %llu open files)",
			 (unsigned long long)rl.rlim_cur);
		says(spec, err, want, "protocol");
		fflush(stdout);
		_exit(0);
	}
	test_wait_ok(c, "the client out of descriptors");
	test_wait_ok(pid, "the server of 64 KiB");
	unlink(path);
	says(spec, -ENOTCONN, "the ivshmem server closed the connection", NULL);
	CHECK(strstr(smq_strerror(-ENOTCONN), "closed the connection"));
}

static void ivshmem(void)
{
	char path[108], spec[120];

	snprintf(path, sizeof(path), "%s/ivshmem.sock", test_dir());
	snprintf(spec, sizeof(spec), "ivshmem:%s", path);
	EXPECT(open_err(spec, 0), -ENOENT);
	says(spec, -ENOENT, "no ivshmem server: the socket", NULL);
	says("ivshmem:/nonexistent-dir/s", -ENOENT,
	     "directory /nonexistent-dir does not exist", NULL);
	/* a server that speaks version 7: both numbers (explain asks it) */
	pid_t pid = fake_server(path, 7, 2);
	EXPECT(open_err(spec, 0), -EPROTONOSUPPORT);
	says(spec, -EPROTONOSUPPORT, "speaks version 7 of the ivshmem "
	     "protocol, this library version 0", NULL);
	test_wait_ok(pid, "the version 7 server");
	unlink(path);
	/* one that hangs up before the memory: it refused us */
	pid = fake_server(path, -1, 1);
	EXPECT(open_err(spec, 0), -ECONNRESET);
	says(spec, -ECONNRESET, "refused this client", NULL);
	test_wait_ok(pid, "the server that hangs up");
	/* the socket of a server that ended */
	EXPECT(open_err(spec, 0), -ECONNREFUSED);
	says(spec, -ECONNREFUSED, "no ivshmem server listens", NULL);
	unlink(path);
	/* one that speaks version 7 once, and is gone when asked again */
	pid = fake_server(path, 7, 1);
	EXPECT(open_err(spec, 0), -EPROTONOSUPPORT);
	test_wait_ok(pid, "the version 7 server");
	says(spec, -EPROTONOSUPPORT, "another version of the ivshmem protocol "
	     "than 0", "unknown transport");
	unlink(path);
	ivshmem_memory(path, spec);
}

/* A SOCK_SEQPACKET server that sends one message m (with fd, -1: none),
 * or, with stream, a SOCK_STREAM one that sends nothing. */
static pid_t seqpacket_server(const char *path, const void *m, size_t len,
			      int fd, int stream)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int l = socket(AF_UNIX, (stream ? SOCK_STREAM : SOCK_SEQPACKET) |
		       SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 4))
		FAIL("seqpacket server");
	pid_t pid = test_fork_raw();
	if (pid == 0) {
		int c = accept(l, NULL, NULL);
		if (c < 0)
			_exit(1);
		if (!stream && smq_send_fd(c, m, len, fd, 0))
			_exit(1);
		char x;
		(void)!read(c, &x, 1);   /* until the client hangs up */
		_exit(0);
	}
	close(l);
	return pid;
}

/* The broker: transport against what is not a broker, and
 * smq_broker_open() against what it cannot hold (no device here). */
static void broker(void)
{
	char path[108], spec[120];
	struct smq_broker *b;
	uint32_t junk[16] = { 0x424d5153u, 7 };

	snprintf(path, sizeof(path), "%s/broker.sock", test_dir());
	snprintf(spec, sizeof(spec), "broker:%s", path);
	EXPECT(open_err(spec, 0), -ENOENT);
	says(spec, -ENOENT, "no vfio broker listens", NULL);
	/* an ivshmem server's kind of socket */
	pid_t pid = seqpacket_server(path, NULL, 0, -1, 1);
	EXPECT(open_err(spec, 0), -EPROTO);
	says(spec, -EPROTO, "not an smq vfio broker", NULL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(path);
	/* a message of the right size that is no HELLO */
	pid = seqpacket_server(path, junk, 44, -1, 0);
	EXPECT(open_err(spec, 0), -EPROTO);
	test_wait_ok(pid, "the server of junk");
	unlink(path);
	says(spec, -ENOTCONN, "the vfio broker stopped", NULL);
	says(spec, -EIDRM, "the vfio broker stopped", "removed");
	/* a broker holds a PCI device bound to vfio-pci, nothing else */
	struct smq_broker_config c = { path, "shm:x", 0 };
	EXPECT(smq_broker_open(&c, sizeof(c), &b), -EPROTONOSUPPORT);
	c.window = "pci:zz";
	EXPECT(smq_broker_open(&c, sizeof(c), &b), -EINVAL);
	c.window = "pci:00:01.0/9";
	EXPECT(smq_broker_open(&c, sizeof(c), &b), -EINVAL);
	if (access("/sys/bus/pci/devices/0000:ff:1f.7", F_OK) < 0) {
		c.window = "pci:ff:1f.7";
		EXPECT(smq_broker_open(&c, sizeof(c), &b), -ENODEV);
	}
	CHECK(b == NULL && access(path, F_OK) < 0);
	EXPECT(smq_broker_open(NULL, sizeof(c), &b), -EINVAL);
}

struct found {
	const char *want, *unwanted;
	int got, bad;
};

static int look(const char *spec, void *arg)
{
	struct found *f = arg;

	f->got += !strcmp(spec, f->want);
	f->bad += !strcmp(spec, f->unwanted);
	return 0;
}

static int stop(const char *spec, void *arg)
{
	(void)spec;
	(void)arg;
	return 42;
}

static void listing(void)
{
	char spec[200], junk[200], path[200], split[200];

	snprintf(spec, sizeof(spec), "shm:%s", test_name("w"));
	snprintf(junk, sizeof(junk), "shm:%s", test_name("junk"));
	snprintf(split, sizeof(split), "split:%s", test_name("s"));
	snprintf(path, sizeof(path), "/dev/shm/%s", test_name("junk"));
	smq_close(test_init(spec, 2, 2, 4, 64));
	smq_close(test_init(split, 2, 2, 4, 64));
	FILE *f = fopen(path, "w");
	CHECK(f && fputs("SMQWINDX and not a window\n", f) >= 0 && !fclose(f));

	struct found fd = { spec, junk, 0, 0 };
	OK(smq_list_windows(look, &fd));
	CHECK(fd.got == 1 && fd.bad == 0);
	struct found fs = { split, "", 0, 0 };
	OK(smq_list_windows(look, &fs));
	CHECK(fs.got == 1);
	EXPECT(smq_list_windows(stop, NULL), 42);
	EXPECT(smq_list_windows(NULL, NULL), -EINVAL);
	OK(smq_remove(spec));
	OK(smq_remove(split));
	unlink(path);
	fd.got = 0;
	OK(smq_list_windows(look, &fd));
	CHECK(fd.got == 0);
}

int main(void)
{
	files();
	names();
	foreign();
	vfio_errnos();
	host_device();
	ivshmem();
	broker();
	listing();
	printf("all explain checks passed\n");
	return 0;
}
