#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testlib.h"

#define MAX_WINDOWS 32

static char paths[MAX_WINDOWS][128];
static int npaths;

static pid_t owner;

/* Only the process that made the windows removes them: a forked child
 * that fails must not pull them from under its parent. */
static void cleanup(void)
{
	if (getpid() != owner)
		return;
	for (int i = 0; i < npaths; i++)
		unlink(paths[i]);
}

const char *test_window(void)
{
	static char spec[MAX_WINDOWS][160];

	if (npaths == MAX_WINDOWS)
		FAIL("too many test windows");
	if (!owner) {
		owner = getpid();
		atexit(cleanup);
	}
	snprintf(paths[npaths], sizeof(paths[0]), "/dev/shm/smq-test-%d-%d",
		 (int)getpid(), npaths);
	unlink(paths[npaths]);
	/* the same object, through either transport: shm (light marks) unless
	 * SMQ_TEST_TRANSPORT=file (every mark with a full barrier) */
	const char *t = getenv("SMQ_TEST_TRANSPORT");
	if (t && !strcmp(t, "file"))
		snprintf(spec[npaths], sizeof(spec[0]), "file:%s", paths[npaths]);
	else
		snprintf(spec[npaths], sizeof(spec[0]), "shm:%s",
			 paths[npaths] + strlen("/dev/shm/"));
	return spec[npaths++];
}

const char *test_path(const char *spec)
{
	static char path[16][160];
	static int n;

	if (!strncmp(spec, "file:", 5))
		return spec + 5;
	if (strncmp(spec, "shm:", 4))
		return spec;
	char *p = path[n++ % 16];
	snprintf(p, sizeof(path[0]), "/dev/shm/%s", spec + 4);
	return p;
}

struct smq_window *test_init(const char *spec, uint32_t boards, uint32_t queues,
			     uint32_t entries, uint32_t entry_size)
{
	struct smq_window *w;
	const char *sum = getenv("SMQ_TEST_CHECKSUM");
	struct smq_shape sh = {
		{ boards, queues, entries, entry_size, NULL }, NULL,
		sum && atoi(sum) ? SMQ_SHAPE_CHECKSUM : 0, NULL, 0
	};

	/* forced: the tests re-format under boards at work on purpose (those
	 * of the refusal open a handle of their own, not forced) */
	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE, &w));
	OK(smq_init_shape(w, &sh, sizeof(sh)));
	return w;
}

int test_pin(int cpu)
{
	cpu_set_t set;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&set);
	CPU_SET(cpu % (n > 0 ? n : 1), &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

pid_t test_fork(int (*fn)(void *), void *arg)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		FAIL("fork failed");
	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

void test_wait_ok(pid_t pid, const char *what)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		FAIL("waitpid %s", what);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		FAIL("%s failed (status 0x%x)", what, status);
}

uint64_t test_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint8_t *test_snapshot(const char *spec, size_t *len)
{
	int fd = open(test_path(spec), O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		FAIL("snapshot %s", spec);
	uint8_t *buf = malloc((size_t)st.st_size + 1);
	if (!buf || read(fd, buf, (size_t)st.st_size) != st.st_size)
		FAIL("read %s", spec);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

void test_same(const uint8_t *snap, size_t len, const char *spec,
	       const char *what)
{
	test_same_except(snap, len, spec, what, 0, 0);
}

void test_same_except(const uint8_t *snap, size_t len, const char *spec,
		      const char *what, size_t from, size_t to)
{
	size_t n;
	uint8_t *now = test_snapshot(spec, &n);

	if (n != len)
		FAIL("%s: window size changed %zu -> %zu", what, len, n);
	for (size_t i = 0; i < n; i++)
		if (now[i] != snap[i] && (i < from || i >= to))
			FAIL("%s: window byte %zu changed 0x%02x -> 0x%02x", what,
			     i, snap[i], now[i]);
	free(now);
}
