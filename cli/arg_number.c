/* Numbers and durations on the command line, strict: a bad value is a
 * usage error through argp that names the option. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "smqctl.h"

bool value_u32(const char *opt, const char *arg, uint32_t min, uint32_t max,
	       uint32_t *out, char *why, size_t n)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!arg || !*arg || *arg == '-' || *arg == '+' || *arg == ' ') {
		snprintf(why, n, "%s needs a number from %" PRIu32 " to %" PRIu32
			 ", not '%s'", opt, min, max, arg ? arg : "");
		return false;
	}
	v = strtoull(arg, &end, 10);
	if (*end) {
		snprintf(why, n, "%s needs a number, not '%s'", opt, arg);
		return false;
	}
	if (errno == ERANGE || v < min || v > max) {
		snprintf(why, n, "%s %s is out of range: %" PRIu32 " to %" PRIu32,
			 opt, arg, min, max);
		return false;
	}
	*out = (uint32_t)v;
	return true;
}

uint32_t arg_u32(struct argp_state *st, const char *opt, const char *arg,
		 uint32_t min, uint32_t max)
{
	char why[256];
	uint32_t v = 0;

	if (!value_u32(opt, arg, min, max, &v, why, sizeof(why)))
		argp_error(st, "%s", why);
	return v;
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
