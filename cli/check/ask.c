/* smqctl check between boards: what the coordinator's tests share --
 * whether a pair's view is sound, a request to a board and its answer,
 * the figures of an ordered pair.  Under cross.c, which runs the tests,
 * and map.c and pairs.c, the tests, which use these and are called by
 * it. */
#include <math.h>
#include <string.h>
#include "cross.h"

/* Board a's view of board b's region is sound, as far as looks tell. */
bool cross_view_ok(const struct cross *x, unsigned a, unsigned b)
{
	if (!x->ready[a] || !x->ready[b])
		return false;
	if (a == x->self)
		return x->look[b].kind == SMQ_MAP_OK;
	return !x->views_wrong[a] || x->bad_view[a].board != b;
}

/* A request to board b, its answer op from board from: 0 or -errno. */
int cross_ask(struct cross *x, unsigned b, struct wire_msg *m, int op,
	      unsigned from)
{
	int err = agent_send(&x->me, b, m, STEP_TIMEOUT_MS);

	return err ? err : agent_wait(&x->me, op, (int)from, m,
				      STEP_TIMEOUT_MS);
}

static void pair_figures_init(struct pair_figures *p, unsigned a, unsigned b)
{
	memset(p, 0, sizeof(*p));
	p->from = a;
	p->to = b;
	p->wake_median_ns = p->wake_p99_ns = p->wake_max_ns = NAN;
	p->polled_median_ns = p->read_median_ns = p->read_p99_ns = NAN;
	p->half_rtt_ns = p->pingpong_msgs_per_s = NAN;
	p->stream_mb_per_s = p->stream_fraction = p->rtt_over_read = NAN;
	for (int k = 0; k < CHECK_RAW_SIZES; k++)
		p->write_mb_per_s[k] = p->model_mb_per_s[k] = NAN;
}

/* The figures of the ordered pair (a, b), made on first use. */
struct pair_figures *cross_pair(struct cross *x, unsigned a, unsigned b)
{
	struct check_run *cr = x->cr;

	for (int i = 0; i < cr->npairs; i++)
		if (cr->pairs[i].from == a && cr->pairs[i].to == b)
			return &cr->pairs[i];
	if (cr->npairs == CHECK_MAX_PAIRS)
		return NULL;
	pair_figures_init(&cr->pairs[cr->npairs], a, b);
	return &cr->pairs[cr->npairs++];
}
