/* An application of one board, as a user writes it against libsmq alone
 * (linked with the shared library, no smqctl): it joins the window as
 * BOARD, receives COUNT messages on QUEUE, prints each, and closes.  What
 * it did is in its board's journal, written by the library.
 *   usage: journal_app SPEC BOARD QUEUE COUNT
 * Exit 0, or 1 with the call that failed on stderr. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <smq.h>

static int fail(const char *what, int err)
{
	fprintf(stderr, "journal_app: %s: %s\n", what, smq_strerror(err));
	return 1;
}

int main(int argc, char **argv)
{
	struct smq_window *w;
	struct smq_queue *q;
	char buf[4096];
	int err;

	if (argc != 5) {
		fprintf(stderr, "usage: journal_app SPEC BOARD QUEUE COUNT\n");
		return 2;
	}
	unsigned board = (unsigned)atoi(argv[2]);
	unsigned queue = (unsigned)atoi(argv[3]);
	int count = atoi(argv[4]);
	if ((err = smq_open(argv[1], board, 0, &w)))
		return fail("smq_open", err);
	if ((err = smq_queue_open(w, queue, SMQ_RECEIVER, 0, &q)))
		return fail("smq_queue_open", err);
	for (int i = 0; i < count; i++) {
		size_t len;
		if ((err = smq_receive(q, buf, sizeof(buf), &len, NULL, 30000)))
			return fail("smq_receive", err);
		printf("%.*s\n", (int)len, buf);
		fflush(stdout);
	}
	if ((err = smq_queue_close(q)))
		return fail("smq_queue_close", err);
	if ((err = smq_close(w)))
		return fail("smq_close", err);
	return 0;
}
