/* Numbers and durations on the command line, strict: a bad value is a
 * usage error through argp that names the option. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../smqctl.h"

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

unsigned arg_mode(struct argp_state *st, const char *arg)
{
	unsigned long v = 0;
	size_t n = strspn(arg, "01234567");

	if (n && !arg[n] && n <= 8) {
		for (size_t i = 0; i < n; i++)
			v = v * 8 + (unsigned long)(arg[i] - '0');
	}
	if (!n || arg[n] || n > 8 || v < 1 || v > 07777)
		argp_error(st, "--mode needs octal permission bits such as "
			   "0600 or 0660, not '%s'", arg);
	return (unsigned)v;
}

/* Decimal digits with at most one point among them: what strtod reads
 * of a duration, but no sign, space, hexadecimal or exponent. */
static size_t decimal_len(const char *s)
{
	size_t i = strspn(s, "0123456789"), frac = 0;

	if (s[i] == '.')
		frac = strspn(s + i + 1, "0123456789") + 1;
	return i + frac > 1 || (i + frac == 1 && s[0] != '.') ? i + frac : 0;
}

int arg_duration(struct argp_state *st, const char *opt, const char *arg)
{
	char *end;
	double v, scale = 1000;

	if (!strcmp(arg, "inf") || !strcmp(arg, "forever") || !strcmp(arg, "-1"))
		return SMQ_WAIT_FOREVER;
	if (arg[0] == '-' && decimal_len(arg + 1))
		argp_error(st, "%s %s is out of range: 0 to 24 days, or inf", opt,
			   arg);
	size_t n = decimal_len(arg);
	errno = 0;
	v = strtod(arg, &end);
	if (!n || end != arg + n || errno || isnan(v))
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

int arg_stall(struct argp_state *st, const char *arg)
{
	int ms = arg_duration(st, "--stall", arg);

	if (!ms)
		argp_error(st, "--stall needs a time greater than 0, or inf, not "
			   "'%s'", arg);
	return ms;
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
