/* Transports are picked by the prefix of a window spec ("shm:NAME",
 * "file:PATH"); a bare path is a file, a bare name an shm object.  A
 * transport whose window may begin inside its object takes an offset in
 * the prefix, "file@2M:PATH": before the colon, where no path can put
 * it (a path may hold any character but NUL, a transport's name no '@'). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "format/format.h"
#include "common.h"

static const struct smq_transport *const transports[] = {
	&smq_transport_shm,
	&smq_transport_file,
	&smq_transport_split,
	&smq_transport_pci,
	&smq_transport_ivshmem,
	&smq_transport_broker,
	&smq_transport_dax,
};
#define NTRANSPORTS (sizeof(transports) / sizeof(transports[0]))

const char *smq_transport_name(unsigned i)
{
	return i < NTRANSPORTS ? transports[i]->name : NULL;
}

const char *smq_transport_help(unsigned i)
{
	return i < NTRANSPORTS ? transports[i]->help : NULL;
}

const char *smq_default_window(void)
{
	const char *env = getenv("SMQ_WINDOW");
	return env && *env ? env : SMQ_DEFAULT_WINDOW;
}

/* The transport a spec names and the argument it takes (after "name:"
 * or "name@OFFSET:"): a bare name is shm's, a path starting with / or .
 * is a file. */
const struct smq_transport *smq_transport_of(const char *spec,
					     const char **arg)
{
	if (!spec || !*spec)
		spec = smq_default_window();
	*arg = spec;
	if (spec[0] == '/' || spec[0] == '.')
		return &smq_transport_file;
	const char *colon = strchr(spec, ':');
	if (!colon)
		return &smq_transport_shm;
	const char *at = memchr(spec, '@', (size_t)(colon - spec));
	size_t n = (size_t)((at ? at : colon) - spec);
	*arg = colon + 1;
	for (unsigned i = 0; i < NTRANSPORTS; i++)
		if (strlen(transports[i]->name) == n &&
		    !memcmp(transports[i]->name, spec, n))
			return transports[i];
	return NULL;
}

/* The offset of "name@OFFSET:": bytes, or with K, M, G or T (powers of
 * 1024).  0 when there is none; -EINVAL when it is malformed or not a
 * whole number of pages (mmap(2) maps pages); -EOPNOTSUPP when the
 * transport takes none. */
static int parse_offset(const char *spec, const struct smq_transport *tp,
			uint64_t *offset)
{
	const char *colon, *at;

	*offset = 0;
	if (!spec || !*spec)
		spec = smq_default_window();
	if (spec[0] == '/' || spec[0] == '.' || !(colon = strchr(spec, ':')) ||
	    !(at = memchr(spec, '@', (size_t)(colon - spec))))
		return 0;
	if (!tp->takes_offset)
		return -EOPNOTSUPP;
	const char *p = at + 1;
	uint64_t v = 0;
	if (p == colon)
		return -EINVAL;
	for (; p < colon && *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p < colon) {
		static const char units[] = "KMGT";
		const char *u = strchr(units, *p);
		if (!u || !*u || p + 1 != colon)
			return -EINVAL;
		unsigned shift = 10 * (unsigned)(u - units + 1);
		if (v > UINT64_MAX >> shift)
			return -EINVAL;
		v <<= shift;
	}
	if (v % (uint64_t)sysconf(_SC_PAGESIZE) || v > (uint64_t)INT64_MAX)
		return -EINVAL;
	*offset = v;
	return 0;
}

/* offset as the spec writes it: the largest unit that divides it. */
static void offset_words(uint64_t offset, char *buf, size_t len)
{
	static const char units[] = "\0KMGT";
	unsigned u = 0;

	while (u < 4 && offset && !(offset & 1023)) {
		offset >>= 10;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 "%.*s", offset, u ? 1 : 0, units + u);
}

int smq_transport_open(struct smq_map *m, const char *spec, unsigned flags)
{
	const char *arg;
	const struct smq_transport *tp = smq_transport_of(spec, &arg);
	uint64_t offset;
	int err;

	if (!tp)
		return -EPROTONOSUPPORT;
	if ((err = parse_offset(spec, tp, &offset)))
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->tp = tp;
	m->order = &smq_order_c11;
	m->create = flags & SMQ_OPEN_CREATE;
	m->force = flags & SMQ_OPEN_FORCE;
	m->readonly = flags & SMQ_OPEN_READONLY;
	m->offset = offset;
	if ((err = tp->open(m, arg, flags)) || !offset)
		return err;
	/* the name opens the same window again (a monitor that follows) */
	char off[32], name[sizeof(m->name)];
	offset_words(offset, off, sizeof(off));
	snprintf(name, sizeof(name), "%s@%s:%s", tp->name, off, arg);
	memcpy(m->name, name, sizeof(name));
	return 0;
}

/* A window at an offset is part of an object that holds other things (a
 * virtual machine's memory): never removed. */
int smq_remove(const char *spec)
{
	const char *arg;
	const struct smq_transport *tp = smq_transport_of(spec, &arg);
	uint64_t offset;

	if (!tp)
		return -EPROTONOSUPPORT;
	if (parse_offset(spec, tp, &offset))
		return -EINVAL;
	if (offset)
		return -EOPNOTSUPP;
	return tp->remove ? tp->remove(arg) : -EOPNOTSUPP;
}

/* Words for a spec whose offset is refused, false for one whose is fine. */
static bool offset_explain(const char *spec, const struct smq_transport *tp,
			   int err, char *buf, size_t len)
{
	uint64_t offset;
	int perr = parse_offset(spec, tp, &offset);

	if (perr == -EOPNOTSUPP) {
		snprintf(buf, len, "bad window spec '%s': %s: takes no offset "
			 "(only windows that can begin inside a file or device "
			 "do: file@OFFSET:, dax@OFFSET:)", spec, tp->name);
		return true;
	}
	if (perr) {
		snprintf(buf, len, "bad window spec '%s': the offset after '@' "
			 "is a whole number of pages of %ld bytes, in bytes or "
			 "with K, M, G or T (2M: 2 MiB)", spec,
			 sysconf(_SC_PAGESIZE));
		return true;
	}
	if (offset && err == -EOPNOTSUPP) {
		snprintf(buf, len, "window %s begins inside a larger object: "
			 "smq does not remove it", spec);
		return true;
	}
	return false;
}

const char *smq_explain(const char *spec, int err, char *buf, size_t len)
{
	const char *arg;
	const struct smq_transport *tp = smq_transport_of(spec, &arg);

	if (!buf || !len)
		return smq_strerror(err);
	if (err > 0)
		err = -err;
	if (tp && offset_explain(spec && *spec ? spec : smq_default_window(),
				 tp, err, buf, len))
		return buf;
	uint64_t offset = 0;
	if (tp)
		parse_offset(spec, tp, &offset);
	if (tp && tp->explain_at && tp->explain_at(arg, offset, err, buf, len))
		return buf;
	if (!tp || !tp->explain || !tp->explain(arg, err, buf, len))
		snprintf(buf, len, "%s", smq_strerror(err));
	return buf;
}

int smq_list_windows(int (*fn)(const char *spec, void *arg), void *arg)
{
	if (!fn)
		return -EINVAL;
	for (unsigned i = 0; i < NTRANSPORTS; i++) {
		if (!transports[i]->list)
			continue;
		int r = transports[i]->list(fn, arg);
		if (r)
			return r;
	}
	return 0;
}
