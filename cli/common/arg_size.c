/* Sizes on the command line and in a description file: one parser for
 * every option that takes a size (init --entry-size and its description
 * file, server --shm-size, the --size lists of pingpong, bench and model,
 * model's --mps and --mrrs). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../smqctl.h"

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
 * every message names the option and the bounds in the same words.
 * false: why says what is wrong. */
static bool size_in(const char *opt, const char *arg, const char *s,
		    const char **end, uint64_t min, uint64_t max,
		    uint64_t *out, char *why, size_t n)
{
	char lo[32], hi[32];
	uint64_t v = 0;
	bool over = false;

	if (!parse_size(s, &v, end, &over)) {
		snprintf(why, n, "%s needs a size such as 64, 4K, 1M or 1G, not "
			 "'%s'", opt, arg);
		return false;
	}
	if (**end && **end != ',') {
		snprintf(why, n, "%s: unknown unit in '%s' (K, M or G, binary)",
			 opt, arg);
		return false;
	}
	if (over || v < min || v > max) {
		snprintf(why, n, "%s %.*s is out of range: %s to %s", opt,
			 (int)(*end - s), s, size_words(min, lo),
			 size_words(max, hi));
		return false;
	}
	*out = v;
	return true;
}

bool value_size(const char *opt, const char *arg, uint64_t min, uint64_t max,
		uint64_t *out, char *why, size_t n)
{
	const char *end;

	if (!size_in(opt, arg, arg, &end, min, max, out, why, n))
		return false;
	if (*end) {
		snprintf(why, n, "%s needs one size such as 64, 4K, 1M or 1G, "
			 "not '%s'", opt, arg);
		return false;
	}
	return true;
}

uint64_t arg_size(struct argp_state *st, const char *opt, const char *arg,
		  uint64_t min, uint64_t max)
{
	char why[256];
	uint64_t v = 0;

	if (!value_size(opt, arg, min, max, &v, why, sizeof(why)))
		argp_error(st, "%s", why);
	return v;
}

int arg_sizes(struct argp_state *st, const char *opt, const char *arg,
	      size_t *out, int max)
{
	const char *p = arg;
	int n = 0;

	for (;;) {
		const char *end;
		char why[256];
		uint64_t v = 0;
		if (n == max)
			argp_error(st, "%s: at most %d sizes", opt, max);
		if (!size_in(opt, arg, p, &end, 0, SMQ_MAX_ENTRY_SIZE, &v, why,
			     sizeof(why)))
			argp_error(st, "%s", why);
		out[n++] = (size_t)v;
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
