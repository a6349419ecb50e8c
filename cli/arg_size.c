/* Sizes on the command line: one parser for every option that takes a
 * size (init --entry-size, server --size, the --size lists of pingpong,
 * bench and model, model's --mps and --mrrs). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "smqctl.h"

/* "64", "64K", "4M", "1G", "64KiB": a number with an optional binary
 * suffix.  Sets *end after the number and its suffix; returns false when s
 * does not start with one. */
static bool parse_size(const char *s, uint64_t *out, const char **end,
		       bool *overflow)
{
	unsigned long long v, scale = 1;
	char *e;

	*overflow = false;
	*end = s;
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &e, 10);
	if (errno == ERANGE)
		*overflow = true;
	switch (*e) {
	case 'k': case 'K': scale = 1ull << 10; e++; break;
	case 'm': case 'M': scale = 1ull << 20; e++; break;
	case 'g': case 'G': scale = 1ull << 30; e++; break;
	}
	if (scale > 1 && e[0] == 'i' && e[1] == 'B')
		e += 2;
	if (v > UINT64_MAX / scale)
		*overflow = true;
	*out = *overflow ? UINT64_MAX : v * scale;
	*end = e;
	return true;
}

/* One size of a list or an option; the range is checked here, so that
 * every message names the option and the bounds in the same words. */
static uint64_t size_in(struct argp_state *st, const char *opt,
			const char *arg, const char *s, const char **end,
			uint64_t min, uint64_t max)
{
	char lo[32], hi[32];
	uint64_t v = 0;
	bool over = false;

	if (!parse_size(s, &v, end, &over))
		argp_error(st, "%s needs a size such as 64, 4K, 1M or 1G, not "
			   "'%s'", opt, arg);
	if (**end && **end != ',')
		argp_error(st, "%s: unknown unit in '%s' (K, M or G, binary)",
			   opt, arg);
	if (over || v < min || v > max)
		argp_error(st, "%s %.*s is out of range: %s to %s", opt,
			   (int)(*end - s), s, size_words(min, lo),
			   size_words(max, hi));
	return v;
}

uint64_t arg_size(struct argp_state *st, const char *opt, const char *arg,
		  uint64_t min, uint64_t max)
{
	const char *end;
	uint64_t v = size_in(st, opt, arg, arg, &end, min, max);

	if (*end)
		argp_error(st, "%s needs one size such as 64, 4K, 1M or 1G, not "
			   "'%s'", opt, arg);
	return v;
}

int arg_sizes(struct argp_state *st, const char *opt, const char *arg,
	      size_t *out, int max)
{
	const char *p = arg;
	int n = 0;

	for (;;) {
		const char *end;
		if (n == max)
			argp_error(st, "%s: at most %d sizes", opt, max);
		out[n++] = (size_t)size_in(st, opt, arg, p, &end, 0,
					   SMQ_MAX_ENTRY_SIZE);
		if (!*end)
			return n;
		if (*end != ',')
			argp_error(st, "%s needs sizes like 0,10,100,4K,1M, not "
				   "'%s'", opt, arg);
		p = end + 1;
	}
}

const char *size_words(uint64_t n, char buf[32])
{
	static const char unit[] = "KMGT";
	int u = -1;

	while (n && n % 1024 == 0 && u < 3) {
		n /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, 32, "%" PRIu64, n);
	else
		snprintf(buf, 32, "%" PRIu64 "%c", n, unit[u]);
	return buf;
}
