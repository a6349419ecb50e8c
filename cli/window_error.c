/* Why an operation on a window failed, in words that say what to do:
 * a bad spec, a missing or foreign window, a fault in its layout, a
 * board that held on. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>
#include "smqctl.h"

static const char *limit_words(int kind)
{
	return kind == SMQ_FAULT_AT_MOST ? "at most"
	       : kind == SMQ_FAULT_AT_LEAST ? "at least" : "expected";
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
		if (!strcmp(f->field, "notice.generation"))
			return say_error("window %s: an init or clear did not finish: "
				     "board %" PRIu64 "'s notice holds generation %"
				     PRIu64 ", the superblock %" PRIu64 " (run "
				     "smqctl clear or init on board 0)", spec,
				     (f->offset - 4096) / 4096, f->value, f->limit);
		return say_error("window %s: an init or clear did not finish, or runs "
			     "on board 0's host (field %s at offset %#" PRIx64
			     " holds %" PRIu64 "; run smqctl clear or init on "
			     "board 0)", spec, f->field, f->offset, f->value);
	case SMQ_EMAGIC:
		return say_error("window %s is not an smq window: bad magic at offset "
			     "0 (expected \"SMQWINDW\")", spec);
	case SMQ_ETOOSMALL:
		return say_error("window %s is too small: its geometry needs %" PRIu64
			     " bytes (truncated?)", spec, f->limit);
	case SMQ_EVERSION:
		return say_error("window %s: %s: field version at offset %#" PRIx64
			     " holds %" PRIu64 " (this smqctl reads version %"
			     PRIu64 ")", spec, smq_strerror(err), f->offset,
			     f->value, f->limit);
	case SMQ_ECHECKSUM:
		return say_error("window %s: %s: field checksum at offset %#" PRIx64
			     " holds %#" PRIx64 ", the geometry sums to %#" PRIx64,
			     spec, smq_strerror(err), f->offset, f->value,
			     f->limit);
	default:
		return say_error("window %s: %s: field %s at offset %#" PRIx64
			     " holds %" PRIu64 " (%s %" PRIu64 ")", spec,
			     smq_strerror(err), f->field, f->offset, f->value,
			     limit_words(f->kind), f->limit);
	}
}

/* Says which field of a bad window is wrong, where, and what was
 * expected of it. */
static int explain_fault(struct ctx *ctx, int err)
{
	struct smq_window *w;
	struct smq_fault f;
	const char *spec = window_spec(ctx);

	if (smq_open(&w, spec, 0, SMQ_OPEN_RAW))
		return say_error("window %s: %s", spec, smq_strerror(err));
	int verr = smq_validate(w, &f);
	smq_close(w);
	if (!verr || verr == -SMQ_EUNFORMATTED)
		return say_error("window %s: %s", spec, smq_strerror(err));
	return fault_error(ctx, verr, &f);
}

const char *window_file(const char *spec, char *buf, size_t n)
{
	if (!strncmp(spec, "shm:", 4))
		snprintf(buf, n, "/dev/shm/%s", spec + 4);
	else if (!strncmp(spec, "split:", 6))
		snprintf(buf, n, "/dev/shm/%s.0", spec + 6);
	else if (!strncmp(spec, "file:", 5))
		snprintf(buf, n, "%s", spec + 5);
	else if (spec[0] == '/' || spec[0] == '.')
		snprintf(buf, n, "%s", spec);
	else if (!strchr(spec, ':'))
		snprintf(buf, n, "/dev/shm/%s", spec);
	else
		return NULL;
	return buf;
}

/* Why a window object is not ours to format: another user's, or
 * writable by others. */
static int foreign_error(const char *what, const char *spec)
{
	char path[512];
	struct stat st;

	if (window_file(spec, path, sizeof(path)) && !lstat(path, &st)) {
		if (st.st_uid != geteuid()) {
			struct passwd *pw = getpwuid(st.st_uid);
			return say_error("%s %s: it belongs to %s (uid %u), not to us: "
				     "formatting it would leave that user a hand in "
				     "it (--force makes it ours, mode 0600)", what,
				     spec, pw ? pw->pw_name : "another user",
				     (unsigned)st.st_uid);
		}
		return say_error("%s %s: others may write it (mode %04o): formatting "
			     "it would leave them a hand in it (--force makes it "
			     "mode 0600)", what, spec, (unsigned)(st.st_mode & 07777));
	}
	return say_error("%s %s: %s", what, spec, smq_strerror(-SMQ_EFOREIGN));
}

int maint_error(struct ctx *ctx, struct smq_window *w, const char *what,
		int err, int timeout_ms)
{
	struct smq_holdout h;
	char host[80];

	smq_holdout(w, &h);
	text_safe(h.host, host, sizeof(host));
	if (err == -SMQ_EHELD) {
		fflush(stdout);
		fprintf(stderr, "smqctl: %s: board %u (pid %u%s%s) did not leave a "
			"call it began under the old generation within ", what,
			h.board, h.pid, host[0] ? " on " : "", host);
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

static bool is_pci(const char *spec)
{
	return !strncmp(spec, "pci:", 4);
}

int window_error(struct ctx *ctx, const char *what, int err)
{
	const char *spec = window_spec(ctx);

	if (is_pci(spec)) {
		switch (-err) {
		case ENODEV:
			return say_error("no PCI device %s (smqctl probe lists them)",
				     spec + 4);
		case ENXIO:
			return say_error("%s is not a memory BAR of that device "
				     "(smqctl probe shows its BARs)", spec);
		case EBUSY:
			return say_error("%s: the device is bound to a kernel driver "
				     "(smqctl probe -v shows which): unbind it "
				     "before mapping its BAR", spec);
		case EACCES:
		case EPERM:
			return say_error("%s %s: permission denied: mapping a PCI BAR "
				     "needs root", what, spec);
		case ENOSPC:
			return say_error("%s: the BAR is smaller than the window's "
				     "layout", spec);
		}
	}
	switch (-err) {
	case ENOENT:
		return say_error("window %s does not exist (board 0 creates it: "
			     "smqctl init)", spec);
	case EACCES:
	case EPERM:
		return say_error("%s %s: permission denied (the window belongs to "
			     "another user, or needs root)", what, spec);
	case EPROTONOSUPPORT:
		return say_error("unknown transport in window spec '%s' (see "
			     "smqctl --window help)", spec);
	case ELOOP:
		return say_error("%s %s: it is a symbolic link: name the window "
			     "itself (a link could make init format another file)",
			     what, spec);
	case SMQ_EFOREIGN:
		return foreign_error(what, spec);
	case ESTALE:
		return say_error("%s: window %s was re-initialised meanwhile: "
			     "attach again", what, spec);
	case EBUSY:  /* says nothing of a fault */
		return fault_error(ctx, err, NULL);
	case SMQ_EUNFORMATTED:
		return say_error("window %s is not formatted (run smqctl init on "
			     "board 0)", spec);
	case SMQ_EMAGIC: case SMQ_EVERSION: case SMQ_ECHECKSUM:
	case SMQ_EGEOMETRY: case SMQ_ETOOSMALL: case SMQ_ECORRUPT:
	case SMQ_ESIGNATURE: case SMQ_EINCOMPLETE:
		return explain_fault(ctx, err);
	default:
		return say_error("%s %s: %s", what, spec, smq_strerror(err));
	}
}

int open_error(struct ctx *ctx, int err)
{
	const char *spec = window_spec(ctx);

	if (err == -EINVAL) {
		/* a bad name, or a board the window does not have */
		struct smq_window *raw;
		struct smq_window_info wi;
		if (!smq_open(&raw, spec, 0, SMQ_OPEN_RAW)) {
			int ierr = smq_window_info(raw, &wi);
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
		if (!strncmp(spec, "file:", 5) || spec[0] == '/' || spec[0] == '.')
			return say_error("window %s is not a regular file", spec);
		if (is_pci(spec))
			return say_error("bad window spec '%s': pci:[DOMAIN:]BUS:SLOT."
				     "FUNC[/BAR] in hex, BAR 0 to 5", spec);
		return say_error("bad window spec '%s': a shm name is 1 to 200 of "
			     "A-Z a-z 0-9 . _ -, not starting with '.', without "
			     "'..'", spec);
	}
	return window_error(ctx, "cannot open window", err);
}
