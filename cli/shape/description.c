/* A window's shape from a description file (init --from): a line per
 * option of the shape, its long name and its value as on the command line
 * ("boards 4", "entry-size 4K", "senders 3:0,2", "checksum"); '#' begins
 * a comment.  Unlike an environment line it keeps a thousand sender sets
 * apart, and a bad line is named FILE:LINE. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "shape.h"

static const char *const keys_words = "boards, queues, entries, entry-size, "
	"receiver, senders, checksum, scratch, journal and group";

static int line_error(const struct shape_opts *s, uint32_t no,
		      const char *why)
{
	char shown[512];

	return say_error("%s:%" PRIu32 ": %s", s->from,
			 no, text_safe(why, shown, sizeof(shown)));
}

static int one_line(struct shape_opts *s, char *line, uint32_t no)
{
	static const char space[] = " \t\r\n\v\f";
	char *save, why[300];

	line[strcspn(line, "#")] = 0;
	char *key = strtok_r(line, space, &save);
	if (!key)
		return 0;
	char *value = strtok_r(NULL, space, &save);
	char *extra = strtok_r(NULL, space, &save);
	if (!strncmp(key, "--", 2) || strchr(key, '=')) {
		snprintf(why, sizeof(why), "'%s': write a key and its value "
			 "apart, without dashes, as in 'boards 4'", key);
		return line_error(s, no, why);
	}
	int k = 0;
	while (k < SHAPE_NKEYS && strcmp(key, shape_key_names[k]))
		k++;
	if (k == SHAPE_NKEYS) {
		snprintf(why, sizeof(why), "unknown key '%s' (a description "
			 "has %s)", key, keys_words);
		return line_error(s, no, why);
	}
	if (extra) {
		snprintf(why, sizeof(why), "%s takes one value, not '%s %s...'",
			 key, value, extra);
		return line_error(s, no, why);
	}
	if (!shape_set(s, (enum shape_key)k, value, key, no, why, sizeof(why)))
		return line_error(s, no, why);
	return 0;
}

int shape_read_file(struct shape_opts *s)
{
	bool in = !strcmp(s->from, "-");
	FILE *f = in ? stdin : fopen(s->from, "r");
	char *line = NULL, why[300];
	size_t cap = 0;
	ssize_t len;
	uint32_t no = 0, at;
	int rc = 0;

	if (!f)
		return say_error("cannot read the description %s: %s", s->from,
				 strerror(errno));
	while (!rc && (len = getline(&line, &cap, f)) >= 0) {
		no++;
		if (memchr(line, 0, (size_t)len))
			rc = line_error(s, no, "a NUL byte: this is not a "
					"description (text)");
		else
			rc = one_line(s, line, no);
	}
	if (!rc && ferror(f))
		rc = say_error("cannot read the description %s: %s", s->from,
			       strerror(errno));
	free(line);
	if (!in)
		fclose(f);
	if (rc)
		return rc;
	if (!(s->given & (1u << SHAPE_QUEUES)))
		s->g.queues = s->g.boards;
	if (!shape_check(s, "", why, sizeof(why), &at))
		return line_error(s, at, why);
	return 0;
}
