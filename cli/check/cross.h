/* smqctl check between boards: the coordinator's state, shared by its
 * parts (cross.c the agents and hellos, map.c the window map, pairs.c
 * doorbells, the raw link and the queues, ask.c what the tests ask with
 * and fill). */
#ifndef SMQCTL_CHECK_CROSS_H
#define SMQCTL_CHECK_CROSS_H

#include <sys/types.h>
#include "wire.h"

/* A step of a test (an agent clearing, measuring a pair) ends within
 * this; an agent forked here waits this long for its next step. */
#define STEP_TIMEOUT_MS 30000
#define CHILD_TIMEOUT_MS 60000

struct cross {
	struct check_run *cr;
	struct agent me;                /* this board's part */
	unsigned self, boards;
	bool local[SMQ_MAX_BOARDS];     /* its agent is forked here */
	pid_t child[SMQ_MAX_BOARDS];
	bool ready[SMQ_MAX_BOARDS];     /* answered the hello */
	bool unseen[SMQ_MAX_BOARDS];    /* this board's view of its region
					   reads wrong: no hello was sent */
	/* what each board's view of the others read wrong, by its hello:
	 * how many regions, and the first */
	uint32_t views_wrong[SMQ_MAX_BOARDS];
	struct smq_map_result bad_view[SMQ_MAX_BOARDS];
	struct smq_map_result look[SMQ_MAX_BOARDS]; /* this board's view */
};

/* ask.c: under cross.c, map.c and pairs.c */
bool cross_view_ok(const struct cross *x, unsigned a, unsigned b);
/* Sends m to board b and waits for op from board from in its place. */
int cross_ask(struct cross *x, unsigned b, struct wire_msg *m, int op,
	      unsigned from);
struct pair_figures *cross_pair(struct cross *x, unsigned a, unsigned b);

void cross_map(struct cross *x);        /* map.c */
void cross_bells(struct cross *x);      /* pairs.c */
void cross_raw(struct cross *x);
void cross_queues(struct cross *x);

#endif
