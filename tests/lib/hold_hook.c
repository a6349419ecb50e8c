/* Test builds of smqctl only (tests/smqctl-hooked, never installed): hold
 * the command at one of the library's test hooks, named by the
 * environment, so that a script can run another command against it.
 *
 *     SMQ_TEST_HOLD=POINT:PATH
 *
 * The first time the call reaches hook POINT (maint_locked, maint_told,
 * maint_writing, maint_formatted, commit, ...: libsmq/hook.h without its
 * prefix, in lower case), it creates the file PATH holding its pid ("I am
 * held here") and waits until PATH is removed.  It waits at most
 * SMQ_TEST_HOLD_MAX seconds (default 60), then says so and goes on: a
 * broken test does not hang.  Without SMQ_TEST_HOLD it is the plain
 * smqctl. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "format/hook.h"

static const struct {
	const char *name;
	enum smq_hook hook;
} points[] = {
	{ "commit", SMQ_HOOK_COMMIT },
	{ "commit_far", SMQ_HOOK_COMMIT_FAR },
	{ "maint_locked", SMQ_HOOK_MAINT_LOCKED },
	{ "maint_telling", SMQ_HOOK_MAINT_TELLING },
	{ "maint_told", SMQ_HOOK_MAINT_TOLD },
	{ "maint_writing", SMQ_HOOK_MAINT_WRITING },
	{ "maint_formatted", SMQ_HOOK_MAINT_FORMATTED },
	{ "maint_settle", SMQ_HOOK_MAINT_SETTLE },
	{ "peek", SMQ_HOOK_PEEK },
	{ "lane_look", SMQ_HOOK_LANE_LOOK },
	{ "open_look", SMQ_HOOK_OPEN_LOOK },
	{ "attach_mapped", SMQ_HOOK_ATTACH_MAPPED },
	{ "attach_look", SMQ_HOOK_ATTACH_LOOK },
	{ "geometry_read", SMQ_HOOK_GEOMETRY_READ },
	{ "loan_submit", SMQ_HOOK_LOAN_SUBMIT },
	{ "sleep", SMQ_HOOK_SLEEP },
	{ "rung", SMQ_HOOK_RUNG },
	{ "slept_out", SMQ_HOOK_SLEPT_OUT },
	{ "maint_locking", SMQ_HOOK_MAINT_LOCKING },
	{ "journal_writing", SMQ_HOOK_JOURNAL_WRITING },
	{ "journal_read", SMQ_HOOK_JOURNAL_READ },
};

static enum smq_hook hold_at;
static const char *hold_path;
static int hold_max_s = 60;
static int held;  /* once per process: the first call to get there */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void hold(enum smq_hook where)
{
	char pid[32];
	int fd, n;

	if (where != hold_at || held)
		return;
	held = 1;
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	fd = open(hold_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, pid, (size_t)n) != n) {
		fprintf(stderr, "hold_hook: cannot create %s: %s\n", hold_path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	close(fd);
	double until = now_s() + hold_max_s;
	while (access(hold_path, F_OK) == 0) {
		if (now_s() > until) {
			fprintf(stderr, "hold_hook: %s was not removed within "
				"%d s: going on\n", hold_path, hold_max_s);
			return;
		}
		/* until the test removes the file: looked at, no event */
		struct timespec nap = { 0, 5 * 1000 * 1000 };
		nanosleep(&nap, NULL);
	}
}

/* Before main: a bad SMQ_TEST_HOLD ends the run (exit 3, not 1 or 2,
 * which the tests expect of smqctl itself). */
__attribute__((constructor)) static void hold_from_env(void)
{
	const char *spec = getenv("SMQ_TEST_HOLD");
	const char *max = getenv("SMQ_TEST_HOLD_MAX");
	const char *colon;

	if (!spec || !*spec)
		return;
	colon = strchr(spec, ':');
	if (colon && colon[1]) {
		size_t len = (size_t)(colon - spec);
		for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++)
			if (strlen(points[i].name) == len &&
			    !strncmp(points[i].name, spec, len))
				hold_at = points[i].hook;
	}
	if (!hold_at) {
		fprintf(stderr, "hold_hook: SMQ_TEST_HOLD='%s': want POINT:PATH, "
			"POINT a hook of libsmq/hook.h such as maint_locked\n",
			spec);
		_exit(3);
	}
	if (max && atoi(max) > 0)
		hold_max_s = atoi(max);
	hold_path = colon + 1;
	smq_test_hook = hold;
}
