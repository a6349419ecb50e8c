/* Sender sets: a board outside a queue's sender set has no lane in it,
 * and opening the queue as a sender is refused (-SMQ_ENOTSENDER) before
 * anything is written: the window's bytes are the same after the refusal,
 * for a queue and for a group with such a queue among its members, named
 * or listed, wherever that member comes.  The boards of the set open it,
 * send, and their messages arrive; a board of no set of a queue still
 * sends on the diagnostic queues, where every board has a lane. */
#include "testint.h"
#include "testlib.h"

TEST_FLOOR(85);

#define BOARDS 3
#define QUEUES 4

/* Queue 0: only board 1 sends; 1: boards 0 and 2; 2: only board 2;
 * 3: every board.  Receivers q % 3. */
static const uint64_t senders[QUEUES] = { 1u << 1, 1u << 0 | 1u << 2,
					  1u << 2, 0 };

static bool sends(unsigned b, unsigned q)
{
	return !senders[q] || (senders[q] >> b & 1);
}

static void refused_alone(const char *spec, struct smq_window *w[BOARDS])
{
	size_t len;
	uint8_t *snap = test_snapshot(spec, &len);
	unsigned refused = 0;

	for (unsigned b = 0; b < BOARDS; b++)
		for (unsigned q = 0; q < QUEUES; q++) {
			struct smq_queue *tx = (void *)1;
			if (sends(b, q))
				continue;
			EXPECT(smq_queue_open(w[b], q, SMQ_SENDER, 0, &tx),
			       -SMQ_ENOTSENDER);
			CHECK(tx == NULL);
			EXPECT(smq_queue_open(w[b], q, SMQ_SENDER, SMQ_POLL,
					      &tx), -SMQ_ENOTSENDER);
			refused++;
		}
	CHECK(refused == 5);
	test_same(snap, len, spec, "sends refused to boards outside the set");
	free(snap);
}

/* A group with a member board b may not send on, wherever it comes. */
static void refused_in_groups(const char *spec, struct smq_window *w[BOARDS])
{
	static const unsigned lists[][3] = {
		{ 3, 2, 0 },    /* board 0: 3 yes, 2 no, 0 no */
		{ 2, 3, 1 },
		{ 3, 1, 2 },    /* board 0: the third refused */
	};
	struct smq_group *g = (void *)1;
	size_t len;
	uint8_t *snap = test_snapshot(spec, &len);

	for (unsigned i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		EXPECT(smq_group_open_queues(w[0], lists[i], 3, SMQ_SENDER, 0,
					     &g), -SMQ_ENOTSENDER);
		CHECK(g == NULL);
	}
	/* by name: "mixed" is queues 3 and 0 */
	EXPECT(smq_group_open(w[2], "mixed", SMQ_SENDER, 0, &g),
	       -SMQ_ENOTSENDER);
	CHECK(g == NULL);
	EXPECT(smq_group_open(w[0], "mixed", SMQ_SENDER, 0, &g),
	       -SMQ_ENOTSENDER);
	test_same(snap, len, spec, "group sends refused for one member");
	free(snap);
	/* board 1 sends on both: the group opens */
	OK(smq_group_open(w[1], "mixed", SMQ_SENDER, 0, &g));
	OK(smq_group_close(g));
}

/* The boards of each set send; board 0 of none of queue 0 or 2 sends on
 * every diagnostic queue; every message arrives, from its board. */
static void allowed(struct smq_window *w[BOARDS])
{
	struct smq_window_info wi;
	char buf[16];
	size_t len;
	unsigned from;

	for (unsigned q = 0; q < QUEUES; q++) {
		struct smq_queue *rx;
		OK(smq_queue_open(w[q % BOARDS], q, SMQ_RECEIVER, 0, &rx));
		for (unsigned b = 0; b < BOARDS; b++) {
			struct smq_queue *tx;
			if (!sends(b, q))
				continue;
			OK(smq_queue_open(w[b], q, SMQ_SENDER, 0, &tx));
			buf[0] = (char)('0' + b);
			OK(smq_send(tx, buf, 1, 0));
			OK(smq_queue_close(tx));
			OK(smq_receive(rx, buf, sizeof(buf), &len, &from, 0));
			CHECK(len == 1 && buf[0] == '0' + (int)b && from == b);
		}
		EXPECT(smq_receive(rx, buf, sizeof(buf), &len, &from, 0),
		       -EAGAIN);
		OK(smq_queue_close(rx));
	}
	OK(smq_window_info(w[0], &wi, sizeof(wi)));
	for (unsigned d = 0; d < wi.diag_queues; d++) {
		struct smq_queue *tx;
		OK(smq_queue_open(w[0], QUEUES + d, SMQ_SENDER, 0, &tx));
		OK(smq_queue_close(tx));
	}
}

int main(void)
{
	const char *spec = test_window();
	const uint32_t mixed[] = { 3, 0 };
	const struct smq_group_def groups[] = { { "mixed", mixed, 2 } };
	struct smq_shape sh = {
		{ BOARDS, QUEUES, 8, 64, NULL }, senders, 0, groups, 1, 0, 0
	};
	struct smq_window *w[BOARDS];

	OK(smq_open(spec, 0, SMQ_OPEN_CREATE | SMQ_OPEN_RAW | SMQ_OPEN_FORCE,
		    &w[0]));
	OK(smq_init_shape(w[0], &sh, sizeof(sh)));
	for (unsigned b = 1; b < BOARDS; b++)
		OK(smq_open(spec, b, 0, &w[b]));
	refused_alone(spec, w);
	printf("a board outside a queue's sender set: -SMQ_ENOTSENDER, "
	       "nothing written\n");
	refused_in_groups(spec, w);
	printf("a group with such a member: -SMQ_ENOTSENDER, nothing "
	       "written\n");
	allowed(w);
	printf("the boards of each set send, and every board on the "
	       "diagnostic queues\n");
	OK(smq_validate(w[0], NULL, 0));
	for (unsigned b = 0; b < BOARDS; b++)
		OK(smq_close(w[b]));
	return 0;
}
