/* A window's shape from options: the child parser that init, probe and
 * model share, and what a command does with the shape once parsed (the
 * file of --from read, the window's bytes).  Each option is set through
 * shape_set() (shape.c), as a line of a description file is. */
#include <string.h>
#include "shape.h"

/* -q is a queue in every other command, -s a PCI slot: the number of
 * queues and the entry size have long options only. */
enum { OPT_QUEUES = 0x100, OPT_ENTRY_SIZE, OPT_SENDERS, OPT_CHECKSUM,
       OPT_FROM, OPT_GROUP, OPT_NO_SCRATCH, OPT_JOURNAL };

static const struct argp_option options[] = {
	{ "boards", 'n', "N", 0, "Number of boards, 1 to 64 (default 2)", 0 },
	{ "queues", OPT_QUEUES, "N", 0,
	  "Number of queues (default: one per board)", 0 },
	{ "entries", 'e', "N", 0,
	  "Entries per ring, a power of two (default 64)", 0 },
	{ "entry-size", OPT_ENTRY_SIZE, "BYTES", 0,
	  "Largest message in bytes, with K or M (default 1K, at most 16M)", 0 },
	{ "receiver", 'r', "Q:B", 0,
	  "Queue Q is received by board B (default: board Q mod boards); "
	  "repeatable", 0 },
	{ "senders", OPT_SENDERS, "Q:B,B...", 0,
	  "Only boards B... send on queue Q: only they get a lane (memory) "
	  "in it (default: every board); repeatable", 0 },
	{ "checksum", OPT_CHECKSUM, NULL, 0,
	  "Every entry carries a CRC-32C of its header and payload, which the "
	  "receiver checks before it hands the message over", 0 },
	{ "group", OPT_GROUP, "NAME=Q,Q...", 0,
	  "A group: a name every board sees for queues Q... (up to 64), for "
	  "send --group and recv --group; repeatable", 0 },
	{ "no-scratch", OPT_NO_SCRATCH, NULL, 0,
	  "No scratch area at the end of each board's region (64 KiB and a "
	  "page each, which smqctl check tests the window's map and the raw "
	  "link in): the window is smaller, and check skips those tests", 0 },
	{ "journal", OPT_JOURNAL, "N", 0,
	  "Entries of each board's journal, a power of two from 16 to 65536 "
	  "(default 256); 0: no journal (what the boards did is then said "
	  "only as events sees it)", 0 },
	{ "from", OPT_FROM, "FILE", 0,
	  "Read the whole shape from FILE ('-': standard input), a "
	  "description: a line per option of this group, without its dashes "
	  "('boards 4', 'senders 3:0,2', '# comments'; smqctl(1), DESCRIPTION "
	  "FILES); none of them beside it", 0 },
	{ 0 }
};

void shape_defaults(struct shape_opts *s)
{
	memset(s, 0, sizeof(*s));
	s->g = (struct smq_geometry){ 2, 0, 64, 1024, NULL };
	/* check's tests of the map need the scratch areas: reserved unless
	 * told not to */
	s->flags = SMQ_SHAPE_SCRATCH;
}

static error_t parse(int key, char *arg, struct argp_state *st)
{
	struct shape_opts *s = st->input;
	static const struct { int opt; enum shape_key key; } keys[] = {
		{ 'n', SHAPE_BOARDS }, { OPT_QUEUES, SHAPE_QUEUES },
		{ 'e', SHAPE_ENTRIES }, { OPT_ENTRY_SIZE, SHAPE_ENTRY_SIZE },
		{ 'r', SHAPE_RECEIVER }, { OPT_SENDERS, SHAPE_SENDERS },
		{ OPT_CHECKSUM, SHAPE_CHECKSUM }, { OPT_GROUP, SHAPE_GROUP },
		{ OPT_JOURNAL, SHAPE_JOURNAL },
	};
	char why[256], shown[32];
	uint32_t at;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (keys[i].opt != key)
			continue;
		snprintf(shown, sizeof(shown), "--%s",
			 shape_key_names[keys[i].key]);
		if (!shape_set(s, keys[i].key, arg, shown, SHAPE_AT_OPTION, why,
			       sizeof(why)))
			argp_error(st, "%s", why);
		return 0;
	}
	switch (key) {
	case OPT_NO_SCRATCH:
		if (!shape_set(s, SHAPE_SCRATCH, "no", "--no-scratch",
			       SHAPE_AT_OPTION, why, sizeof(why)))
			argp_error(st, "%s", why);
		break;
	case OPT_FROM:
		if (!*arg)
			argp_error(st, "--from needs a file");
		s->from = arg;
		break;
	case ARGP_KEY_END:
		for (int k = 0; s->from && k < SHAPE_NKEYS; k++)
			if (s->given & (1u << k))
				argp_error(st, "--%s%s beside --from %s: the file "
					   "holds the whole shape (give it "
					   "there)", k == SHAPE_SCRATCH ? "no-"
					   : "", shape_key_names[k], s->from);
		if (s->from)
			break;
		if (!(s->given & (1u << SHAPE_QUEUES)))
			s->g.queues = s->g.boards;
		if (!shape_check(s, "--", why, sizeof(why), &at))
			argp_error(st, "%s", why);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp shape_argp = { options, parse, NULL, NULL, NULL, NULL,
				 NULL };

int shape_ready(struct shape_opts *s)
{
	int rc = s->from ? shape_read_file(s) : 0;

	if (rc)
		return rc;
	for (uint32_t q = 0; q < s->g.queues; q++)
		if (!s->receiver_at[q])
			s->receivers[q] = (uint16_t)(q % s->g.boards);
	s->g.receivers = s->receivers;
	return 0;
}

bool shape_given(const struct shape_opts *s)
{
	return s->given || s->from;
}

int shape_window(struct shape_opts *s, uint64_t *bytes)
{
	char words[160];
	int rc = shape_ready(s);

	if (rc)
		return rc;
	if (!shape_bytes(s, 0, 0, 0, bytes))
		return say_error("a window of %s is too large",
				 shape_words(s, words, sizeof(words)));
	return 0;
}

const char *shape_words(const struct shape_opts *s, char *buf, size_t n)
{
	const struct smq_geometry *g = &s->g;
	uint32_t es = g->entry_size;
	char size[32];

	if (es && !(es % (1u << 20)))
		snprintf(size, sizeof(size), "%u MiB", es >> 20);
	else if (es && !(es % 1024))
		snprintf(size, sizeof(size), "%u KiB", es >> 10);
	else
		snprintf(size, sizeof(size), "%u B", es);
	snprintf(buf, n, "%u board%s x %u queue%s x %u entr%s x %s%s%s%s%s",
		 g->boards, g->boards == 1 ? "" : "s", g->queues,
		 g->queues == 1 ? "" : "s", g->entries,
		 g->entries == 1 ? "y" : "ies", size,
		 s->any_sets ? ", sender sets" : "",
		 s->flags & SMQ_SHAPE_CHECKSUM ? ", checksums" : "",
		 s->flags & SMQ_SHAPE_SCRATCH ? "" : ", no scratch areas",
		 s->flags & SMQ_SHAPE_NO_JOURNAL ? ", no journal" : "");
	return buf;
}
