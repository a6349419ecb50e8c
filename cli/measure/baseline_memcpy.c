/* The memcpy baseline: single-core copies (see baseline_proc.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "baseline_proc.h"

int baseline_memcpy(size_t size, uint64_t bytes_total, struct result *r,
		    const char **why)
{
	void *src = NULL, *dst = NULL;
	uint64_t copies, done = 0;
	bool shown = false;

	result_init(r, "memcpy", size);
	if (!size)
		return fail(why, "a 0-byte copy moves nothing", -EINVAL);
	if (!bytes_total)
		return fail(why, "no bytes to copy", -EINVAL);
	copies = bytes_total / size + (bytes_total % size != 0);
	if (posix_memalign(&src, 64, size) || posix_memalign(&dst, 64, size)) {
		free(src);
		return fail(why, "no memory for the copy buffers", -ENOMEM);
	}
	memset(src, 0x5a, size);
	memset(dst, 0, size);
	memcpy(dst, src, size);  /* warm the caches and the TLB */

	struct cpu_window win;
	double cpu, wall;
	cpu_window_start(&win);
	uint64_t t0 = now_ns();
	while (done < copies && !measure_interrupted) {
		memcpy(dst, src, size);
		/* dst may be read here: the copies cannot be dropped or merged */
		__asm__ __volatile__("" : : "r"(dst), "r"(src) : "memory");
		if (++done % PROGRESS_EVERY == 0) {
			progress(r->name, done, copies);
			shown = true;
		}
	}
	uint64_t t1 = now_ns();
	cpu_window_stop(&win, &cpu, &wall);
	if (shown)
		progress_end();
	free(src);
	free(dst);
	if (!done)
		return fail(why, "interrupted before anything was measured", -EINTR);
	if (t1 == t0)
		return fail(why, "too short to time: copy more bytes", -EIO);
	result_rates(r, done, t1 - t0);
	r->cpu_a = cpu;
	r->wall_a = wall;
	return 0;
}
