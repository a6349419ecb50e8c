/* Text for people: sizes in words, and text from a window made safe to
 * print. */
#include <inttypes.h>
#include <string.h>
#include "../smqctl.h"

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

/* The length of the UTF-8 sequence at s (1 to 4), or 0 if it is not one. */
size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2
		   : c >= 0xe0 && c <= 0xef ? 3
		   : c >= 0xf0 && c <= 0xf4 ? 4 : 0;

	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
		return 0;  /* overlong, a surrogate, or past U+10FFFF */
	return n;
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

const char *first_bytes_text(const struct smq_window_info *wi, char *buf,
			     size_t n)
{
	size_t k = wi->mapped_size < sizeof(wi->first_bytes)
		   ? (size_t)wi->mapped_size : sizeof(wi->first_bytes);
	char text[sizeof(wi->first_bytes) + 1];

	memcpy(text, wi->first_bytes, k);
	text[k] = 0;
	for (size_t i = 0; i < k; i++)
		if (!text[i])
			text[i] = '.';
	return text_safe(text, buf, n);
}
