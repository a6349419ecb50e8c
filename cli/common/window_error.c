/* Why an operation on a window failed, in words that say what to do.
 * The cause is the library's: its transport's words (smq_explain()), the
 * fault smq_validate() names, the board that held on; smqctl adds only
 * its own remedies (which command, which option). */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>
#include "../smqctl.h"

/* The magic found and the one expected, as the bytes they are. */
static int magic_error(const char *spec, const struct smq_fault *f)
{
	char found[9] = "", want[9] = "", safe[40], safe_want[40];

	memcpy(found, &f->value, 8);
	memcpy(want, &f->limit, 8);
	return say_error("window %s is not an smq window: bad magic at offset "
		     "%#" PRIx64 " (it begins \"%s\", expected \"%s\")", spec,
		     f->offset, text_safe(found, safe, sizeof(safe)),
		     text_safe(want, safe_want, sizeof(safe_want)));
}

int fault_error(struct ctx *ctx, int err, const struct smq_fault *f)
{
	const char *spec = window_spec(ctx);

	switch (-err) {
	case EBUSY:
		return say_error("window %s is being re-formatted right now (an init "
			     "or clear on board 0 is under way): try again when "
			     "it ends", spec);
	case SMQ_EINCOMPLETE:
		if (!strcmp(f->field, "notice.generation") && f->board >= 0)
			return say_error("window %s: an init or clear did not finish: "
				     "board %d's notice holds generation %"
				     PRIu64 ", the superblock %" PRIu64 " (run "
				     "smqctl clear or init on board 0)", spec,
				     f->board, f->value, f->limit);
		return say_error("window %s: an init or clear did not finish, or runs "
			     "on board 0's host (field %s at offset %#" PRIx64
			     " holds %" PRIu64 "; run smqctl clear or init on "
			     "board 0)", spec, f->field, f->offset, f->value);
	case SMQ_EMAGIC:
		return magic_error(spec, f);
	case SMQ_ETOOSMALL:
		return say_error("window %s is too small: its geometry needs %" PRIu64
			     " bytes (truncated?)", spec, f->limit);
	case SMQ_EVERSION:
		return say_error("window %s has format version %" PRIu64 "; this "
			     "smqctl reads version %" PRIu64 " (field version at "
			     "offset %#" PRIx64 ").  %s", spec, f->value, f->limit,
			     f->offset, f->value < f->limit
			     ? "To upgrade: stop every process attached to it, "
			       "then run smqctl init --force on board 0 (queued "
			       "messages are not carried over; see smqctl(1), "
			       "UPGRADING)"
			     : "A newer smq formatted it: use that version");
	case SMQ_EFEATURE:
		return say_error("window %s uses an incompatible feature this smqctl "
			     "does not know (bit %#" PRIx64 " of field "
			     "features_incompat at offset %#" PRIx64 "; it knows "
			     "%#" PRIx64 "): a newer smq formatted it, use that "
			     "version", spec, f->value, f->offset, f->limit);
	case SMQ_ECHECKSUM:
		return say_error("window %s: %s: field checksum at offset %#" PRIx64
			     " holds %#" PRIx64 ", the geometry sums to %#" PRIx64,
			     spec, smq_strerror(err), f->offset, f->value,
			     f->limit);
	default:
		return say_error("window %s: %s: field %s at offset %#" PRIx64
			     " holds %" PRIu64 " (%s %" PRIu64 ")", spec,
			     smq_strerror(err), f->field, f->offset, f->value,
			     fault_kind_words(f->kind), f->limit);
	}
}

/* Says which field of a bad window is wrong, where, and what was
 * expected of it. */
static int explain_fault(struct ctx *ctx, int err)
{
	struct smq_window *w;
	struct smq_fault f;
	const char *spec = window_spec(ctx);

	if (smq_open(spec, 0, SMQ_OPEN_RAW, &w))
		return say_error("window %s: %s", spec, smq_strerror(err));
	int verr = smq_validate(w, &f, sizeof(f));
	smq_close(w);
	if (!verr || verr == -SMQ_EUNFORMATTED)
		return say_error("window %s: %s", spec, smq_strerror(err));
	return fault_error(ctx, verr, &f);
}

/* The processes of other pids at work on queue (every queue: -1), as
 * smq_workers() names them; returns how many, up to max in list. */
static int workers_on(struct smq_window *w, int queue,
		      struct smq_worker *list, int max)
{
	struct smq_worker all[128];
	int n = smq_workers(w, all, 128, sizeof(all[0])), k = 0;

	for (int i = 0; i < n && i < 128; i++)
		if (all[i].role && all[i].pid != (uint32_t)getpid() &&
		    (queue < 0 || all[i].queue == (uint32_t)queue) && k < max)
			list[k++] = all[i];
	return k;
}

/* Who is at work on what init or clear would empty: every process, its
 * board, host and what it has open. */
static int at_work_error(struct smq_window *w, const char *what, int queue)
{
	struct smq_worker list[32];
	struct smq_holdout h;
	int n = workers_on(w, queue, list, 32);
	char host[80];

	fflush(stdout);
	fprintf(stderr, "smqctl: %s: processes are at work on ", what);
	if (queue < 0)
		fprintf(stderr, "the window");
	else
		fprintf(stderr, "queue %d", queue);
	if (!n) {
		/* a receiver whose claim outlived its handle's mark */
		smq_holdout(w, &h, sizeof(h));
		fprintf(stderr, ": board %u pid %u%s%s", h.board, h.pid,
			h.host[0] ? " on " : "",
			text_safe(h.host, host, sizeof(host)));
	}
	for (int i = 0; i < n; i++)
		fprintf(stderr, "%s board %u pid %u%s%s (%s of queue %u%s%s)",
			i ? ";" : ":", list[i].board, list[i].pid,
			list[i].host[0] ? " on " : "",
			text_safe(list[i].host, host, sizeof(host)),
			list[i].role == SMQ_RECEIVER ? "receiver" : "sender",
			list[i].queue, list[i].in_call ? ", in a call" : "",
			list[i].alive < 0 ? ", another host: alive or not, "
			"not known" : "");
	fprintf(stderr, ".  %s would empty %s under %s: stop %s first, or "
		"--force\n", what, queue < 0 ? "every queue" : "the queue",
		n > 1 ? "them" : "it", n > 1 ? "them" : "it");
	return 1;
}

int maint_error(struct ctx *ctx, struct smq_window *w, const char *what,
		int queue, int err, int timeout_ms)
{
	struct smq_holdout h;
	char host[80];

	if (err == -SMQ_EATWORK)
		return at_work_error(w, what, queue);
	smq_holdout(w, &h, sizeof(h));
	text_safe(h.host, host, sizeof(host));
	if (err == -SMQ_EHELD) {
		fflush(stdout);
		fprintf(stderr, "smqctl: %s: board %u (pid %u%s%s) did not leave a "
			"call it began ", what, h.board, h.pid,
			host[0] ? " on " : "", host);
		/* the queue of the call itself: it may not be the one asked
		 * for (a clear of one queue finishes another's first) */
		if (h.queue != SMQ_NO_QUEUE)
			fprintf(stderr, "on queue %u within ", h.queue);
		else if (queue >= 0)
			fprintf(stderr, "on queue %d within ", queue);
		else
			fprintf(stderr, "under the old generation within ");
		print_duration(stderr, timeout_ms);
		fprintf(stderr, "; nothing was changed.  %s\n", h.same_host
			? "See what that process is doing (stopped? stuck?), or "
			  "raise --timeout"
			: "See what that process is doing on its host; a "
			  "process there that died is let go as soon as any "
			  "smqctl runs as that board there (smqctl --board N "
			  "dump)");
		return 1;
	}
	if (err == -EALREADY)
		return say_error("%s: another init or clear runs on %s (pid %u%s%s): "
			     "one at a time; try again when it ends", what,
			     window_spec(ctx), h.pid, host[0] ? " on " : "", host);
	return window_error(ctx, what, err);
}

/* The transport's words for err, or NULL when it has none of its own
 * (smq_strerror()'s would be all). */
static const char *transport_words(struct ctx *ctx, int err, char *buf,
				   size_t len)
{
	const char *words = smq_explain(window_spec(ctx), err, buf, len);

	return strcmp(words, smq_strerror(err)) ? words : NULL;
}

/* The transport's cause, and smqctl's remedy where it has one: a window
 * that does not exist yet is board 0's to create, and init --force takes
 * over one that is not ours (SMQ_OPEN_FORCE). */
static int cause_error(int err, const char *words)
{
	if (err == -SMQ_EFOREIGN)
		return say_error("%s (init --force makes it ours, mode 0600)",
			     words);
	if (err == -ENOENT && strstr(words, "does not exist yet"))
		return say_error("%s (smqctl init)", words);
	return say_error("%s", words);
}

int window_error(struct ctx *ctx, const char *what, int err)
{
	const char *spec = window_spec(ctx);
	char buf[512];
	const char *words = transport_words(ctx, err, buf, sizeof(buf));

	if (words)
		return cause_error(err, words);
	switch (-err) {
	case EPROTONOSUPPORT:
		return say_error("unknown transport in window spec '%s' (see "
			     "smqctl --window help)", spec);
	case ESTALE:
		return say_error("%s: window %s was re-initialised, or the queue "
			     "cleared, meanwhile: open it again", what, spec);
	case EBUSY:  /* says nothing of a fault */
		return fault_error(ctx, err, NULL);
	case SMQ_EUNFORMATTED:
		return say_error("window %s is not formatted (run smqctl init on "
			     "board 0)", spec);
	case SMQ_EMAGIC: case SMQ_EVERSION: case SMQ_ECHECKSUM: case SMQ_EFEATURE:
	case SMQ_EGEOMETRY: case SMQ_ETOOSMALL: case SMQ_ECORRUPT:
	case SMQ_ESIGNATURE: case SMQ_EINCOMPLETE:
		return explain_fault(ctx, err);
	default:
		return say_error("%s %s: %s", what, spec, smq_strerror(err));
	}
}

/* -EINVAL from smq_open: a board the window does not have (smqctl's to
 * say: it knows the board it asked for), else the transport's words for
 * a bad spec or object. */
int open_error(struct ctx *ctx, int err)
{
	const char *spec = window_spec(ctx);

	if (err == -EINVAL) {
		struct smq_window *raw;
		struct smq_window_info wi;
		if (!smq_open(spec, 0, SMQ_OPEN_RAW, &raw)) {
			int ierr = smq_window_info(raw, &wi, sizeof(wi));
			smq_close(raw);
			if (!ierr || ierr == -ESTALE)
				return say_error("board %u does not exist: the window "
					     "has %u board%s", ctx->board,
					     wi.geometry.boards,
					     wi.geometry.boards == 1 ? "" : "s");
		}
		if (ctx->board >= SMQ_MAX_BOARDS)
			return say_error("board %u does not exist: at most %u boards",
				     ctx->board, SMQ_MAX_BOARDS);
	}
	return window_error(ctx, "cannot open window", err);
}
