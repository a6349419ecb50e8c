/* A window's incarnation (smq_window_info().incarnation): what a monitor
 * compares to tell a window made again under the same name from the one it
 * watched.  Inits and clears of one window keep it, whoever looks (the
 * handle that formats, a monitor); a window removed and made again under
 * its name has another; a window without a journal has none (0). */
#include "testlib.h"

TEST_FLOOR(35);

static uint64_t incarnation(struct smq_window *w)
{
	struct smq_window_info wi;

	OK(smq_window_info(w, &wi, sizeof(wi)));
	return wi.incarnation;
}

int main(void)
{
	const char *spec = test_window();
	struct smq_geometry g = { .boards = 2, .queues = 2, .entries = 8,
				  .entry_size = 64 };
	struct smq_window *w = test_init(spec, 2, 2, 8, 64), *m;

	uint64_t first = incarnation(w);
	CHECK(first != 0);
	OK(smq_open(spec, 1, SMQ_OPEN_READONLY, &m));
	CHECK(incarnation(m) == first);

	/* inits and clears of this window keep it */
	for (int i = 0; i < 3; i++) {
		OK(smq_init(w, &g, sizeof(g)));
		CHECK(incarnation(w) == first);
	}
	OK(smq_clear(w, SMQ_ALL_QUEUES));
	OK(smq_clear(w, 1));
	CHECK(incarnation(w) == first);
	OK(smq_close(m));
	OK(smq_open(spec, 1, SMQ_OPEN_READONLY, &m));
	CHECK(incarnation(m) == first);
	OK(smq_close(m));

	/* the window removed and made again under its name: another */
	OK(smq_close(w));
	OK(smq_remove(spec));
	w = test_init(spec, 2, 2, 8, 64);
	uint64_t second = incarnation(w);
	CHECK(second != 0 && second != first);

	/* no journal, no incarnation */
	struct smq_shape s = { .geometry = g, .flags = SMQ_SHAPE_NO_JOURNAL };
	OK(smq_init_shape(w, &s, sizeof(s)));
	CHECK(incarnation(w) == 0);
	OK(smq_close(w));
	printf("incarnation: kept by 3 inits and 2 clears, another once the "
	       "window was made again, none without a journal\n");
	return 0;
}
