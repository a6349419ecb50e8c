/* The window the common options name (window_spec(), in
 * common/options.c): opening it, and the queues it has. */
#include "../smqctl.h"

int open_window(struct ctx *ctx, unsigned flags, struct smq_window **w)
{
	int err = smq_open(window_spec(ctx), ctx->board, flags, w);

	return err ? open_error(ctx, err) : 0;
}

int check_board(struct ctx *ctx, struct smq_window *w)
{
	struct smq_window_info wi;

	if (!smq_window_info(w, &wi, sizeof(wi)) &&
	    ctx->board >= wi.geometry.boards)
		return open_error(ctx, -EINVAL);
	return 0;
}

int check_queue(struct smq_window *w, unsigned queue)
{
	struct smq_window_info wi;

	smq_window_info(w, &wi, sizeof(wi));
	if (queue >= wi.geometry.queues + wi.diag_queues)
		return say_error("queue %u does not exist: the window has %u queue%s "
			     "(0 to %u) and %u diagnostic (%u to %u)", queue,
			     wi.geometry.queues, wi.geometry.queues == 1 ? "" : "s",
			     wi.geometry.queues - 1, wi.diag_queues,
			     wi.geometry.queues,
			     wi.geometry.queues + wi.diag_queues - 1);
	return 0;
}
