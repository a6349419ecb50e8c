/* bench --baseline: the scratch windows smq is measured on (each of its
 * own, formatted, used and removed) and their slot counts.  Under
 * compare.c and compare_ways.c, which both measure through them. */
#include <string.h>
#include <unistd.h>
#include "compare.h"

static int run_jobs(struct session *s, void *arg)
{
	struct jobs *js = arg;

	for (int i = 0; i < js->n && !measure_interrupted; i++) {
		struct job *j = &js->job[i];
		int rc = j->stream ? stream_size(s, j->size, j->count, &j->how,
						 j->out)
				   : pingpong_size(s, j->size, j->count, 0, false,
						   &j->how, j->out);
		if (rc)
			return rc;
	}
	return 0;
}

int scratch_make(uint32_t entries, uint32_t entry_size, unsigned flags,
		 char *spec, size_t spec_len, char *path, size_t path_len)
{
	struct smq_shape g = { { 2, 2, entries, entry_size, NULL }, NULL,
			       flags, NULL, 0, 0, 0 };
	struct smq_window *w;
	int err;

	/* the default transport's, as a user's window is */
	snprintf(path, path_len, "/dev/shm/smq-bench-%d-%u-%u", (int)getpid(),
		 entries, entry_size);
	snprintf(spec, spec_len, "shm:%s", path + strlen("/dev/shm/"));
	unlink(path);
	err = smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW, &w);
	if (!err) {
		err = smq_init_shape(w, &g, sizeof(g));
		smq_close(w);
	}
	if (err) {
		unlink(path);
		return say_error("scratch window %s: %s", spec, smq_strerror(err));
	}
	return 0;
}

/* Formats a scratch window of its own, runs the jobs on it, removes it. */
int scratch_run(struct ctx *ctx, struct session_opts *so, int mode,
		       uint32_t entries, uint32_t entry_size, unsigned flags,
		       struct jobs *js)
{
	char path[128], spec[160];
	int rc;

	if ((rc = scratch_make(entries, entry_size, flags, spec, sizeof(spec),
			       path, sizeof(path))))
		return rc;
	if (isatty(2))
		fprintf(stderr, "\r\033[Kbench --baseline: smq, %s, %u entries of %u "
			"bytes%s", mode_name(mode), entries, entry_size,
			flags & SMQ_SHAPE_CHECKSUM ? ", checksums" : "");
	struct ctx sc = *ctx;
	struct session_opts o = *so;
	sc.window = spec;
	sc.board = 0;
	o.mode = mode;
	o.peer_mode = false;
	o.peer_board = 1;
	/* its own window: its application queues, of the size measured */
	o.queues[0] = 0;
	o.queues[1] = 1;
	o.force = true;
	o.sizes = NULL;
	o.nsizes = 0;
	rc = session_main(&sc, &o, run_jobs, js);
	unlink(path);
	return rc;
}

uint32_t big_entries(size_t size)
{
	uint32_t n = (uint32_t)((2u << 20) / size);
	return n < 4 ? 4 : n;
}
