/* A small JSON writer: objects and arrays nest, commas are managed. */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "../smqctl.h"

void json_open(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

void json_open_line(struct json *j, FILE *f)
{
	json_open(j, f);
	j->line = true;
}

static void json_key(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		fputs(j->line ? ", " : ",", j->f);
	j->first[j->depth] = false;
	if (j->depth && !j->line)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	if (key) {
		fputc('"', j->f);
		fputs(key, j->f);
		fputs("\": ", j->f);
	}
}

/* A string: quote, backslash and control characters escaped; a byte that
 * is not UTF-8 (a host name in a window holds any bytes) becomes U+FFFD,
 * since JSON text is UTF-8. */
void json_quote(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		size_t n = utf8_len(p);
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else if (n)
			fwrite(p, 1, n, f);
		else
			fputs("\\ufffd", f);
		p += n ? n : 1;
	}
	fputc('"', f);
}

void json_begin(struct json *j, const char *key, char brace)
{
	json_key(j, key);
	fputc(brace, j->f);
	if (j->depth < 15)
		j->depth++;
	j->first[j->depth] = true;
}

void json_end(struct json *j, char brace)
{
	bool empty = j->first[j->depth];
	j->depth--;
	if (!empty && !j->line)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(brace, j->f);
}

void json_str(struct json *j, const char *key, const char *val)
{
	json_key(j, key);
	json_quote(j->f, val);
}

void json_u64(struct json *j, const char *key, uint64_t val)
{
	json_key(j, key);
	fprintf(j->f, "%" PRIu64, val);
}

void json_i64(struct json *j, const char *key, int64_t val)
{
	json_key(j, key);
	fprintf(j->f, "%" PRId64, val);
}

void json_double(struct json *j, const char *key, double val, int decimals)
{
	json_key(j, key);
	if (isfinite(val))
		fprintf(j->f, "%.*f", decimals, val);
	else
		fputs("null", j->f);
}

/* bytes as a string, two hex digits each */
void json_bytes(struct json *j, const char *key, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	json_key(j, key);
	fputc('"', j->f);
	for (size_t i = 0; i < len; i++)
		fprintf(j->f, "%02x", p[i]);
	fputc('"', j->f);
}

void json_null(struct json *j, const char *key)
{
	json_key(j, key);
	fputs("null", j->f);
}

void json_bool(struct json *j, const char *key, bool val)
{
	json_key(j, key);
	fputs(val ? "true" : "false", j->f);
}

void json_close(struct json *j)
{
	fputc('\n', j->f);
}
