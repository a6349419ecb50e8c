/* Transports are picked by the prefix of a window spec ("shm:NAME",
 * "file:PATH"); a bare path is a file, a bare name an shm object. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "internal.h"

static const struct smq_transport *const transports[] = {
	&smq_transport_shm,
	&smq_transport_file,
	&smq_transport_pci,
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

int smq_transport_open(struct smq_map *m, const char *spec, unsigned flags)
{
	const struct smq_transport *tp = &smq_transport_shm;
	const char *arg;

	if (!spec || !*spec)
		spec = smq_default_window();
	arg = spec;
	if (spec[0] == '/' || spec[0] == '.') {
		tp = &smq_transport_file;
	} else {
		const char *colon = strchr(spec, ':');
		if (colon) {
			size_t n = (size_t)(colon - spec);
			tp = NULL;
			for (unsigned i = 0; i < NTRANSPORTS; i++)
				if (strlen(transports[i]->name) == n &&
				    !memcmp(transports[i]->name, spec, n))
					tp = transports[i];
			if (!tp)
				return -EPROTONOSUPPORT;
			arg = colon + 1;
		}
	}
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->tp = tp;
	return tp->open(m, arg, flags);
}

/* Every transport maps a file descriptor: unmapping is the same for all. */
void smq_map_close(struct smq_map *m)
{
	if (m->base)
		munmap(m->base, m->size);
	if (m->fd >= 0)
		close(m->fd);
	m->base = NULL;
	m->fd = -1;
}
