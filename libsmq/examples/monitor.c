/* A read-only monitor: every board's state and every queue's counters,
 * once a second, for as long as the window exists.
 *   usage: monitor [-w SPEC] [-i MS] [-c COUNT]
 * SPEC is the window (default $SMQ_WINDOW, else shm:smq); -i the interval
 * in ms (default 1000); -c stops after COUNT looks (-c 1: once).
 * Build: cc -std=c11 monitor.c $(pkg-config --cflags --libs libsmq)
 *
 * Opened with SMQ_OPEN_READONLY, the monitor is no board: it claims no
 * board and no handle slot and never writes, so it can watch any window
 * without disturbing it.  Its snapshots follow the window: after an init
 * or clear they show the new generation (-ESTALE only while one is under
 * way), and once the window is removed they return -EIDRM: the monitor
 * then exits 0.  It waits for a window not created or formatted yet. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <smq.h>

static const char *system_state(uint32_t s)
{
	return s == SMQ_SYS_READY ? "ready" :
	       s == SMQ_SYS_FORMATTED ? "formatted" : "formatting";
}

static const char *board_state(uint32_t s)
{
	return s == SMQ_BOARD_READY ? "ready" :
	       s == SMQ_BOARD_INITIALIZED ? "initialized" : "absent";
}

static const char *alive(int a)
{
	return a > 0 ? "alive" : a == 0 ? "dead" : "not known yet";
}

/* One look: the snapshots first, then print, so that a look an init cut
 * short prints nothing.  Returns 0 or what a snapshot returned. */
static int look(struct smq_window *w, uint64_t *generation)
{
	struct smq_window_info wi;
	struct smq_board_info bi[SMQ_MAX_BOARDS];
	struct smq_queue_info *qi;
	int err;

	if ((err = smq_window_info(w, &wi, sizeof(wi))))
		return err;
	unsigned boards = wi.geometry.boards, queues = wi.geometry.queues;
	if (!(qi = calloc(queues, sizeof(*qi))))
		return -ENOMEM;
	for (unsigned b = 0; b < boards && !err; b++)
		err = smq_board_info(w, b, &bi[b], sizeof(bi[b]));
	for (unsigned q = 0; q < queues && !err; q++)
		err = smq_queue_info(w, q, &qi[q], sizeof(qi[q]));
	if (err) {
		free(qi);
		return err;
	}
	if (*generation && wi.generation != *generation)
		printf("formatted anew: generation %" PRIu64 " -> %" PRIu64
		       "\n", *generation, wi.generation);
	*generation = wi.generation;
	printf("%s: generation %" PRIu64 ", system %s, %u boards, %u queues of "
	       "%u x %u bytes\n", wi.name, wi.generation,
	       system_state(wi.system_state), boards, queues,
	       wi.geometry.entries, wi.geometry.entry_size);
	for (unsigned b = 0; b < boards; b++) {
		printf("  board %u: %s", b, board_state(bi[b].state));
		if (bi[b].state != SMQ_BOARD_ABSENT)
			printf(", pid %" PRIu32 " on %s, %s", bi[b].pid,
			       bi[b].host, alive(bi[b].alive));
		printf("\n");
	}
	for (unsigned q = 0; q < queues; q++)
		printf("  queue %u -> board %" PRIu32 ": %" PRIu64 " queued, %"
		       PRIu64 " sent, %" PRIu64 " received, %" PRIu64
		       " full waits\n", q, qi[q].receiver, qi[q].queued,
		       qi[q].sent, qi[q].received, qi[q].full_waits);
	free(qi);
	return 0;
}

int main(int argc, char **argv)
{
	const char *spec = smq_default_window();
	long interval = 1000, count = -1;
	struct smq_window *w;
	uint64_t generation = 0;
	char why[256];
	int opt, err, rc = 0;

	while ((opt = getopt(argc, argv, "w:i:c:")) != -1) {
		if (opt == 'w')
			spec = optarg;
		else if (opt == 'i' && (interval = atol(optarg)) > 0)
			continue;
		else if (opt == 'c' && (count = atol(optarg)) > 0)
			continue;
		else
			goto usage;
	}
	if (optind < argc)
		goto usage;
	struct timespec pause = { interval / 1000, interval % 1000 * 1000000 };

	/* Wait for the window to be created (-ENOENT, which smq_transient()
	 * accepts); a monitor opens a window that is not formatted yet. */
	while ((err = smq_open(spec, 0, SMQ_OPEN_READONLY, &w))) {
		if (!smq_transient(err)) {
			fprintf(stderr, "monitor: %s\n",
				smq_explain(spec, err, why, sizeof(why)));
			return 1;
		}
		nanosleep(&pause, NULL);
	}
	for (long n = 0; count < 0 || n < count; n++) {
		if (n)
			nanosleep(&pause, NULL);
		err = look(w, &generation);
		if (err == -EIDRM) {
			printf("%s: removed\n", spec);
			break;
		} else if (err == -ESTALE) {
			printf("%s: being formatted (an init or clear is under "
			       "way)\n", spec);
		} else if (err == -SMQ_EUNFORMATTED) {
			printf("%s: not formatted yet\n", spec);
		} else if (err) {
			fprintf(stderr, "monitor: %s\n",
				smq_explain(spec, err, why, sizeof(why)));
			rc = 1;
			break;
		}
		if (fflush(stdout) == EOF) {
			perror("monitor: standard output");
			rc = 1;
			break;
		}
	}
	smq_close(w);
	return rc;
usage:
	fprintf(stderr, "usage: %s [-w SPEC] [-i MS] [-c COUNT]\n", argv[0]);
	return 2;
}
