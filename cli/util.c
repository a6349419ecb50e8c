#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>
#include "smqctl.h"

static void vmsg(const char *fmt, va_list ap)
{
	fflush(stdout);
	fputs("smqctl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int say_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	return 1;
}

void say_warning(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

uint32_t arg_u32(struct argp_state *st, const char *opt, const char *arg,
		 uint32_t min, uint32_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!arg || !*arg || *arg == '-' || *arg == '+' || *arg == ' ')
		argp_error(st, "%s needs a number from %" PRIu32 " to %" PRIu32
			   ", not '%s'", opt, min, max, arg ? arg : "");
	v = strtoull(arg, &end, 10);
	if (*end)
		argp_error(st, "%s needs a number, not '%s'", opt, arg);
	if (errno == ERANGE || v < min || v > max)
		argp_error(st, "%s %s is out of range: %" PRIu32 " to %" PRIu32,
			   opt, arg, min, max);
	return (uint32_t)v;
}

int arg_duration(struct argp_state *st, const char *opt, const char *arg)
{
	char *end;
	double v, scale = 1000;

	if (!strcmp(arg, "inf") || !strcmp(arg, "forever") || !strcmp(arg, "-1"))
		return SMQ_WAIT_FOREVER;
	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || errno || isnan(v))
		argp_error(st, "%s needs a duration such as 2, 0.5, 200ms, 3s, 1m "
			   "or inf, not '%s'", opt, arg);
	if (!strcmp(end, "ms"))
		scale = 1;
	else if (!strcmp(end, "m"))
		scale = 60000;
	else if (*end && strcmp(end, "s"))
		argp_error(st, "%s: unknown unit in '%s' (ms, s or m)", opt, arg);
	v *= scale;
	if (v < 0 || v > 86400000.0 * 24)
		argp_error(st, "%s %s is out of range: 0 to 24 days, or inf", opt,
			   arg);
	return (int)ceil(v);
}

void print_duration(FILE *f, int ms)
{
	if (ms < 0)
		fputs("forever", f);
	else if (ms % 1000)
		fprintf(f, "%d ms", ms);
	else
		fprintf(f, "%d s", ms / 1000);
}

const char *window_spec(const struct ctx *ctx)
{
	return ctx->window && *ctx->window ? ctx->window : smq_default_window();
}

const char *human_bytes(uint64_t n, char buf[32])
{
	const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;
	double v = (double)n;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, 32, "%" PRIu64 " B", n);
	else
		snprintf(buf, 32, "%.1f %s", v, unit[u]);
	return buf;
}

const char *text_safe(const char *s, char *buf, size_t n)
{
	size_t len = 0;

	for (; *s && len + 5 < n; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c > 0x7e)
			len += (size_t)snprintf(buf + len, n - len, "\\x%02x", c);
		else
			buf[len++] = (char)c;
	}
	buf[len] = 0;
	return buf;
}

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

int open_window(struct ctx *ctx, unsigned flags, struct smq_window **w)
{
	int err = smq_open(w, window_spec(ctx), ctx->board, flags);

	return err ? open_error(ctx, err) : 0;
}

int check_queue(struct smq_window *w, unsigned queue)
{
	struct smq_window_info wi;

	smq_window_info(w, &wi);
	if (queue >= wi.geometry.queues + wi.diag_queues)
		return say_error("queue %u does not exist: the window has %u queue%s "
			     "(0 to %u) and %u diagnostic (%u to %u)", queue,
			     wi.geometry.queues, wi.geometry.queues == 1 ? "" : "s",
			     wi.geometry.queues - 1, wi.diag_queues,
			     wi.geometry.queues,
			     wi.geometry.queues + wi.diag_queues - 1);
	return 0;
}

/* ---- JSON ---- */

void json_open(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

static void json_key(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	if (j->depth)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	if (key) {
		fputc('"', j->f);
		fputs(key, j->f);
		fputs("\": ", j->f);
	}
}

static void json_escaped(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void json_begin(struct json *j, const char *key, char brace)
{
	json_key(j, key);
	fputc(brace, j->f);
	if (j->depth < 15)
		j->depth++;
	j->first[j->depth] = true;
}

void json_end(struct json *j, char brace)
{
	bool empty = j->first[j->depth];
	j->depth--;
	if (!empty)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(brace, j->f);
}

void json_str(struct json *j, const char *key, const char *val)
{
	json_key(j, key);
	json_escaped(j->f, val);
}

void json_u64(struct json *j, const char *key, uint64_t val)
{
	json_key(j, key);
	fprintf(j->f, "%" PRIu64, val);
}

void json_i64(struct json *j, const char *key, int64_t val)
{
	json_key(j, key);
	fprintf(j->f, "%" PRId64, val);
}

void json_double(struct json *j, const char *key, double val, int decimals)
{
	json_key(j, key);
	if (isfinite(val))
		fprintf(j->f, "%.*f", decimals, val);
	else
		fputs("null", j->f);
}

void json_null(struct json *j, const char *key)
{
	json_key(j, key);
	fputs("null", j->f);
}

void json_bool(struct json *j, const char *key, bool val)
{
	json_key(j, key);
	fputs(val ? "true" : "false", j->f);
}

void json_close(struct json *j)
{
	fputc('\n', j->f);
}
