/* Transports are picked by the prefix of a window spec ("shm:NAME",
 * "file:PATH"); a bare path is a file, a bare name an shm object. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "format/format.h"
#include "common.h"

static const struct smq_transport *const transports[] = {
	&smq_transport_shm,
	&smq_transport_file,
	&smq_transport_split,
	&smq_transport_pci,
	&smq_transport_ivshmem,
	&smq_transport_broker,
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

/* The transport a spec names and the argument it takes (after "name:"):
 * a bare name is shm's, a path starting with / or . is a file. */
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
	size_t n = (size_t)(colon - spec);
	*arg = colon + 1;
	for (unsigned i = 0; i < NTRANSPORTS; i++)
		if (strlen(transports[i]->name) == n &&
		    !memcmp(transports[i]->name, spec, n))
			return transports[i];
	return NULL;
}

int smq_transport_open(struct smq_map *m, const char *spec, unsigned flags)
{
	const char *arg;
	const struct smq_transport *tp = smq_transport_of(spec, &arg);

	if (!tp)
		return -EPROTONOSUPPORT;
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->tp = tp;
	m->order = &smq_order_c11;
	m->create = flags & SMQ_OPEN_CREATE;
	m->force = flags & SMQ_OPEN_FORCE;
	m->readonly = flags & SMQ_OPEN_READONLY;
	return tp->open(m, arg, flags);
}

int smq_remove(const char *spec)
{
	const char *arg;
	const struct smq_transport *tp = smq_transport_of(spec, &arg);

	if (!tp)
		return -EPROTONOSUPPORT;
	return tp->remove ? tp->remove(arg) : -EOPNOTSUPP;
}

const char *smq_explain(const char *spec, int err, char *buf, size_t len)
{
	const char *arg;
	const struct smq_transport *tp = smq_transport_of(spec, &arg);

	if (!buf || !len)
		return smq_strerror(err);
	if (err > 0)
		err = -err;
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
