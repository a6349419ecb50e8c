/* Parsing lists of sizes, shared by pingpong and bench. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "smqctl.h"

static size_t arg_size(struct argp_state *st, const char *opt, const char *s,
		char **end)
{
	errno = 0;
	if (*s == '-' || *s == '+' || *s == ' ')
		argp_error(st, "%s: '%s' is not a size", opt, s);
	unsigned long long v = strtoull(s, end, 10);
	if (*end == s || errno)
		argp_error(st, "%s: '%s' is not a size", opt, s);
	unsigned long long scale = 1;
	if (**end == 'k' || **end == 'K')
		scale = 1024, (*end)++;
	else if (**end == 'm' || **end == 'M')
		scale = 1024 * 1024, (*end)++;
	if (v > SMQ_MAX_ENTRY_SIZE / scale)
		argp_error(st, "%s: %s is larger than the largest entry (%u "
			   "bytes)", opt, s, SMQ_MAX_ENTRY_SIZE);
	return (size_t)(v * scale);
}

int arg_sizes(struct argp_state *st, const char *opt, const char *arg,
	      size_t *out, int max)
{
	const char *p = arg;
	int n = 0;

	for (;;) {
		char *end;
		if (n == max)
			argp_error(st, "%s: at most %d sizes", opt, max);
		out[n++] = arg_size(st, opt, p, &end);
		if (!*end)
			return n;
		if (*end != ',')
			argp_error(st, "%s needs sizes like 0,10,100,4K,1M, not "
				   "'%s'", opt, arg);
		p = end + 1;
	}
}
