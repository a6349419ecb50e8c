/* Text for people: sizes in words, and text from a window made safe to
 * print. */
#include <inttypes.h>
#include "smqctl.h"

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
