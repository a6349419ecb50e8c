/* The cache lines a small message moves between the sender's and the
 * receiver's side (count build).
 *
 * A busy-polling receiver looks at an empty queue, the sender sends, the
 * receiver takes the message: the pattern of a poll ping-pong, one side at
 * a time in one thread, each side's calls marked as its own.  The count
 * build's model (lines.c) says which lines each touch moved from the other
 * side: the entry itself must move (the sender writes it, the receiver
 * reads it); the lane's top, the bottoms and flow control should not, but
 * once a ring's worth of messages.  Asserted for 0 and 48 bytes (a header
 * and 48 bytes are one line), over plain and checksummed windows, so that
 * a line per message cannot creep back. */
#include "testint.h"
#include "testlib.h"

/* the least count of checks a run makes (18472 here) */
TEST_FLOOR(18000);

#ifndef SMQ_COUNT_FAR
#error "t_lines needs the count build (SMQ_COUNT_FAR)"
#endif

#define ENTRIES 64
#define WARM (2 * ENTRIES)
#define MEASURED (16 * ENTRIES)
/* lines moved per message, at most: the entry's one line there and back
 * (the sender takes it to write, the receiver fetches it), and a little
 * for what moves once a ring (the bottom the sender reads when the ring
 * looks full, and the receiver's next write of it) */
#define MOST 2.1

enum part { P_ENTRY, P_TOP, P_BOTTOM, P_WAKE, P_OTHER, P_PARTS };
static const char *const part_name[P_PARTS] = {
	"entry", "top", "bottom and flow control", "sleep and wake lines",
	"other"
};

static enum part part_of(struct smq_window *w, uintptr_t addr)
{
	const struct smq_layout *l = &w->lay;
	uint64_t off = addr;  /* a window offset: the mappings are named */
	uint64_t ring = lay_ring(l, 0, 1);

	if (off >= ring && off < ring + (uint64_t)ENTRIES * l->stride)
		return P_ENTRY;
	if (off == lay_lane_in(l, 0, 1) || off == lay_lane_out(l, 1, 0))
		return P_TOP;
	if (off == lay_lane_fc(l, 1, 0) || off == lay_bottoms(l, 0))
		return P_BOTTOM;
	if (off == lay_lane_wake(l, 1, 0) || off == lay_lane_ask(l, 0, 1) ||
	    off == lay_bell(l, 0))
		return P_WAKE;
	return P_OTHER;
}

static struct smq_line_move moves[SMQ_LINE_MOVES];

static double run(const char *spec, size_t size, bool checksum)
{
	struct smq_window *w0, *w1;
	struct smq_queue *rx, *tx;
	uint8_t msg[64] = { 0 }, buf[64];
	size_t len;
	double per[P_PARTS] = { 0 };

	setenv("SMQ_TEST_CHECKSUM", checksum ? "1" : "0", 1);
	w0 = test_init(spec, 2, 1, ENTRIES, 64);
	OK(smq_open(spec, 1, 0, &w1));
	OK(smq_queue_open(w0, 0, SMQ_RECEIVER, SMQ_POLL, &rx));
	OK(smq_queue_open(w1, 0, SMQ_SENDER, 0, &tx));
	smq_line_forget();
	for (struct smq_window *w = w0; w; w = w == w0 ? w1 : NULL)
		for (unsigned i = 0; i < w->map.nseg; i++)
			smq_line_mapping(w->map.seg[i].ptr, w->map.seg[i].len,
					 w->map.seg[i].start);
	for (int i = 0; i < WARM + MEASURED; i++) {
		if (i == WARM)
			smq_line_moves(NULL, 0);
		msg[0] = (uint8_t)i;
		smq_line_side = 0;
		EXPECT(smq_receive(rx, buf, sizeof(buf), &len, NULL, 0), -EAGAIN);
		smq_line_side = 1;
		OK(smq_send(tx, msg, size, 0));
		smq_line_side = 0;
		OK(smq_receive(rx, buf, sizeof(buf), &len, NULL, 0));
		smq_line_side = -1;
		CHECK(len == size && (!size || buf[0] == (uint8_t)i));
	}
	size_t n = smq_line_moves(moves, SMQ_LINE_MOVES);
	CHECK(n < SMQ_LINE_MOVES);
	for (size_t i = 0; i < n; i++)
		per[part_of(w0, moves[i].addr)] += 1.0 / MEASURED;
	double total = (double)n / MEASURED;
	printf("%2zu B%s: %.2f lines moved per message (", size,
	       checksum ? " checksummed" : "", total);
	for (int p = 0; p < P_PARTS; p++)
		printf("%s%s %.2f", p ? ", " : "", part_name[p], per[p]);
	printf(")\n");
	if (total > MOST)
		FAIL("%zu B%s: %.2f lines moved per message, more than %.1f "
		     "(entry %.2f, top %.2f, bottom and flow control %.2f, "
		     "sleep and wake %.2f, other %.2f)", size,
		     checksum ? " checksummed" : "", total, MOST,
		     per[P_ENTRY], per[P_TOP], per[P_BOTTOM], per[P_WAKE],
		     per[P_OTHER]);
	OK(smq_queue_close(tx));
	OK(smq_queue_close(rx));
	OK(smq_close(w1));
	OK(smq_close(w0));
	return total;
}

int main(void)
{
	const char *spec = test_window();

	for (int c = 0; c < 2; c++) {
		run(spec, 0, c);
		run(spec, 48, c);
	}
	return 0;
}
