/* Who a process is.  A pid means nothing after a reboot or once it is
 * reused, so a process is named by a tag: its pid and a hash of this
 * boot's id and the process's start time. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "clock.h"
#include "identity.h"

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

/* The kernel's random boot id: the same for every process of this boot,
 * new at every boot.  Without /proc, the boot time from the clocks. */
uint64_t smq_boot_hash(void)
{
	char buf[64];
	uint64_t h = 0x736d71626f6f74ull;

	if (read_small("/proc/sys/kernel/random/boot_id", buf, sizeof(buf)) > 0) {
		for (const char *p = buf; *p && *p != '\n'; p++)
			h = mix64(h ^ (unsigned char)*p);
	} else {
		uint64_t boot_s = (smq_realtime_ns() - smq_now_ns()) / 1000000000ull;
		h = mix64(h ^ boot_s);
	}
	return h ? h : 1;
}

/* Field 22 of /proc/PID/stat (or /proc/PID/task/TID/stat): start time in
 * clock ticks after boot, and in *state field 3 (R, S, Z...).  0 if it
 * cannot be read. */
static int64_t start_time(const char *path, char *state)
{
	char buf[1024];

	*state = 0;
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	const char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	*state = p[2];
	/* fields after the name: state is field 3, starttime field 22 */
	p += 2;
	for (int field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return 0;
		p++;
	}
	return strtoll(p, NULL, 10);
}

static uint64_t make_tag(uint32_t id, int64_t start)
{
	uint64_t h = mix64(smq_boot_hash() ^ mix64((uint64_t)start + 1));
	return (uint64_t)id << 32 | (uint32_t)(h ? h : 1);
}

uint64_t smq_tag_self(void)
{
	char state;
	return make_tag((uint32_t)getpid(), start_time("/proc/self/stat",
						       &state));
}

uint64_t smq_tag_thread(void)
{
	char path[64];
	pid_t tid = (pid_t)syscall(SYS_gettid);

	char state;
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	return make_tag((uint32_t)tid, start_time(path, &state));
}

/* A process whose first thread has exited shows as a zombie while its
 * other threads run: alive if /proc/ID/status counts more than one. */
static bool threads_left(uint32_t id)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%u/status", id);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return false;
	const char *p = strstr(buf, "\nThreads:");
	return p && strtol(p + 9, NULL, 10) > 1;
}

/* /proc/ID/stat answers for a thread id too.  What cannot be told is
 * alive: a live process judged dead would lose its calls and claims to
 * the next one, a dead one judged alive only makes maintenance wait. */
int smq_tag_alive(uint64_t tag)
{
	char path[64], state;
	uint32_t id = smq_tag_pid(tag);

	/* 0 and what does not fit a pid_t would make kill() signal groups */
	if (id == 0 || id > 0x3fffffff)
		return 0;
	snprintf(path, sizeof(path), "/proc/%u/stat", id);
	int64_t start = start_time(path, &state);
	if (start > 0) {
		if (make_tag(id, start) != tag || state == 'X')
			return 0;
		return state != 'Z' || threads_left(id);
	}
	/* unread: no process has that id, or /proc is absent or hides it
	 * from us (hidepid, a process of another user): some process has
	 * that id if we may signal it or are refused */
	return !(kill((pid_t)id, 0) < 0 && errno == ESRCH);
}

/* Stopped by a signal (SIGSTOP, SIGTSTP) or held by a debugger: the
 * kernel says 'T' or 't' for its first thread.  A process of another
 * host, or one /proc does not show us, cannot be told: -1. */
int smq_tag_stopped(uint64_t tag)
{
	char path[64], state;
	uint32_t id = smq_tag_pid(tag);

	if (id == 0 || id > 0x3fffffff)
		return -1;
	snprintf(path, sizeof(path), "/proc/%u/stat", id);
	int64_t start = start_time(path, &state);
	if (start <= 0 || make_tag(id, start) != tag)
		return -1;
	return state == 'T' || state == 't';
}
