/* A window's shape as values: the names of its keys, the setter that
 * the options and a description file both go through, so that a value
 * means the same and is refused in the same words either way, the check
 * of what only the whole shape tells, and the library's struct.  It lies
 * under options.c, description.c and fit.c, which all use it, since the
 * options read a description file and size a window through the other
 * two. */
#include <inttypes.h>
#include <string.h>
#include "shape.h"

const char *const shape_key_names[SHAPE_NKEYS] = {
	"boards", "queues", "entries", "entry-size", "receiver", "senders",
	"checksum", "group", "scratch", "journal",
};

static bool group_name_ok(const char *name)
{
	size_t k = strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstu"
			  "vwxyz0123456789._-");
	return k && !name[k];
}

/* "Q:B" or "Q:B,B...": the queue, and the rest after the colon. */
static bool queue_part(const char *shown, const char *value,
		       const char *want, uint32_t *q, const char **rest,
		       char *why, size_t n)
{
	const char *colon = value ? strchr(value, ':') : NULL;
	char num[32], name[64];

	if (!colon || colon == value || !colon[1] ||
	    (size_t)(colon - value) >= sizeof(num)) {
		snprintf(why, n, "%s needs %s, not '%s'", shown, want,
			 value ? value : "");
		return false;
	}
	memcpy(num, value, (size_t)(colon - value));
	num[colon - value] = 0;
	snprintf(name, sizeof(name), "%s queue", shown);
	*rest = colon + 1;
	return value_u32(name, num, 0, SMQ_MAX_QUEUES - 1, q, why, n);
}

/* "0,2,5": a mask of boards. */
static bool board_mask(const char *shown, const char *list, uint64_t *mask,
		       char *why, size_t n)
{
	char name[64];
	const char *b = list;

	snprintf(name, sizeof(name), "%s board", shown);
	*mask = 0;
	for (;;) {
		const char *comma = strchr(b, ',');
		size_t len = comma ? (size_t)(comma - b) : strlen(b);
		char num[32];
		uint32_t v;
		if (len >= sizeof(num)) {
			snprintf(why, n, "%s %.*s... is not a board number",
				 name, 20, b);
			return false;
		}
		memcpy(num, b, len);
		num[len] = 0;
		if (!value_u32(name, num, 0, SMQ_MAX_BOARDS - 1, &v, why, n))
			return false;
		*mask |= 1ull << v;
		if (!comma)
			return true;
		b = comma + 1;
	}
}

/* A feature's flag: on without a value or with "yes", off with "no". */
static bool set_flag(struct shape_opts *s, uint32_t flag, const char *shown,
		     const char *value, char *why, size_t n)
{
	if (!value || !strcmp(value, "yes"))
		s->flags |= flag;
	else if (!strcmp(value, "no"))
		s->flags &= ~flag;
	else {
		snprintf(why, n, "%s takes yes or no, not '%s'", shown, value);
		return false;
	}
	return true;
}

/* A queue's receiver or senders given twice in a file: a mistake that a
 * command line, where the last one counts, cannot make as easily. */
static bool once(uint32_t *seen, uint32_t at, const char *what, uint32_t q,
		 char *why, size_t n)
{
	if (at != SHAPE_AT_OPTION && *seen) {
		snprintf(why, n, "%s of queue %" PRIu32 " is given on line %"
			 PRIu32 " already", what, q, *seen);
		return false;
	}
	*seen = at;
	return true;
}

static bool set_queue_key(struct shape_opts *s, enum shape_key key,
			  const char *value, const char *shown, uint32_t at,
			  char *why, size_t n)
{
	const char *rest;
	uint32_t q, b;
	uint64_t mask;

	if (key == SHAPE_RECEIVER) {
		char name[64];
		if (!queue_part(shown, value, "QUEUE:BOARD", &q, &rest, why, n))
			return false;
		snprintf(name, sizeof(name), "%s board", shown);
		if (!value_u32(name, rest, 0, SMQ_MAX_BOARDS - 1, &b, why, n) ||
		    !once(&s->receiver_at[q], at, "the receiver", q, why, n))
			return false;
		s->receivers[q] = (uint16_t)b;
		return true;
	}
	if (!queue_part(shown, value, "QUEUE:BOARD,BOARD...", &q, &rest, why,
			n) ||
	    !board_mask(shown, rest, &mask, why, n) ||
	    !once(&s->senders_at[q], at, "the senders", q, why, n))
		return false;
	s->senders[q] = mask;
	s->any_sets = true;
	return true;
}

/* "NAME=Q,Q...": a new group, its members distinct. */
static bool set_group(struct shape_opts *s, const char *value,
		      const char *shown, uint32_t at, char *why, size_t n)
{
	const char *eq = strchr(value, '=');
	size_t len = eq ? (size_t)(eq - value) : 0;
	uint32_t g = s->ngroups, count = 0;
	char name[SMQ_GROUP_NAME_MAX + 1];

	if (!eq || !len || !eq[1]) {
		snprintf(why, n, "%s needs NAME=QUEUE,QUEUE..., not '%s'", shown,
			 value);
		return false;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(len < sizeof(name) ? len
				     : sizeof(name) - 1), value);
	if (len > SMQ_GROUP_NAME_MAX || !group_name_ok(name)) {
		snprintf(why, n, "%s: '%.*s' is not a group name (1 to %d of "
			 "A-Z a-z 0-9 . _ -)", shown, (int)len, value,
			 SMQ_GROUP_NAME_MAX);
		return false;
	}
	for (uint32_t i = 0; i < g; i++)
		if (!strcmp(s->group_name[i], name)) {
			snprintf(why, n, "%s: group %s is given %s already",
				 shown, name, at == SHAPE_AT_OPTION ? "once"
				 : "on an earlier line");
			return false;
		}
	if (g == SMQ_MAX_GROUPS) {
		snprintf(why, n, "%s: more than %d groups", shown,
			 SMQ_MAX_GROUPS);
		return false;
	}
	for (const char *p = eq + 1; *p;) {
		char num[32], label[64];
		size_t k = strcspn(p, ",");
		uint32_t q;
		snprintf(label, sizeof(label), "%s %s queue", shown, name);
		if (k >= sizeof(num) || (p[k] == ',' && !p[k + 1])) {
			snprintf(why, n, "%s: '%s' is not a list of queue "
				 "numbers (QUEUE,QUEUE...)", shown, value);
			return false;
		}
		snprintf(num, sizeof(num), "%.*s", (int)k, p);
		if (!value_u32(label, num, 0, SMQ_MAX_QUEUES - 1, &q, why, n))
			return false;
		for (uint32_t i = 0; i < count; i++)
			if (s->group_queues[g][i] == q) {
				snprintf(why, n, "%s: queue %u is in group %s "
					 "twice", shown, q, name);
				return false;
			}
		if (count == SMQ_GROUP_MAX_MEMBERS) {
			snprintf(why, n, "%s: group %s has more than %d queues",
				 shown, name, SMQ_GROUP_MAX_MEMBERS);
			return false;
		}
		s->group_queues[g][count++] = q;
		p += k + (p[k] == ',');
	}
	memcpy(s->group_name[g], name, sizeof(name));
	s->groups[g] = (struct smq_group_def){ s->group_name[g],
					       s->group_queues[g], count };
	s->group_at[g] = at;
	s->ngroups = g + 1;
	return true;
}

bool shape_set(struct shape_opts *s, enum shape_key key, const char *value,
	       const char *shown, uint32_t at, char *why, size_t n)
{
	uint32_t v;
	uint64_t size;
	bool queue_key = key == SHAPE_RECEIVER || key == SHAPE_SENDERS ||
			 key == SHAPE_GROUP;

	if (!queue_key && at != SHAPE_AT_OPTION && s->key_at[key]) {
		snprintf(why, n, "%s is given on line %" PRIu32 " already",
			 shown, s->key_at[key]);
		return false;
	}
	if (key != SHAPE_CHECKSUM && key != SHAPE_SCRATCH &&
	    (!value || !*value)) {
		snprintf(why, n, "%s needs a value", shown);
		return false;
	}
	switch (key) {
	case SHAPE_BOARDS:
		if (!value_u32(shown, value, 1, SMQ_MAX_BOARDS, &v, why, n))
			return false;
		s->g.boards = v;
		break;
	case SHAPE_QUEUES:
		if (!value_u32(shown, value, 1, SMQ_MAX_QUEUES, &v, why, n))
			return false;
		s->g.queues = v;
		break;
	case SHAPE_ENTRIES:
		if (!value_u32(shown, value, 1, SMQ_MAX_ENTRIES, &v, why, n))
			return false;
		if (v & (v - 1)) {
			snprintf(why, n, "%s %s is not a power of two", shown,
				 value);
			return false;
		}
		s->g.entries = v;
		break;
	case SHAPE_ENTRY_SIZE:
		/* init refuses a window of empty messages only */
		if (!value_size(shown, value, 1, SMQ_MAX_ENTRY_SIZE, &size, why,
				n))
			return false;
		s->g.entry_size = (uint32_t)size;
		break;
	case SHAPE_RECEIVER:
	case SHAPE_SENDERS:
		if (!set_queue_key(s, key, value, shown, at, why, n))
			return false;
		break;
	case SHAPE_CHECKSUM:
	case SHAPE_SCRATCH:
		if (!set_flag(s, key == SHAPE_CHECKSUM ? SMQ_SHAPE_CHECKSUM
			      : SMQ_SHAPE_SCRATCH, shown, value, why, n))
			return false;
		break;
	case SHAPE_GROUP:
		if (!set_group(s, value, shown, at, why, n))
			return false;
		break;
	case SHAPE_JOURNAL:
		if (!strcmp(value, "0") || !strcmp(value, "no")) {
			s->flags |= SMQ_SHAPE_NO_JOURNAL;
			s->journal = 0;
			break;
		}
		if (!value_u32(shown, value, SMQ_JOURNAL_MIN, SMQ_JOURNAL_MAX, &v,
			       why, n))
			return false;
		if (v & (v - 1)) {
			snprintf(why, n, "%s %s is not a power of two", shown,
				 value);
			return false;
		}
		s->flags &= ~SMQ_SHAPE_NO_JOURNAL;
		s->journal = v;
		break;
	default:
		return false;
	}
	s->given |= 1u << key;
	if (!queue_key)
		s->key_at[key] = at;
	return true;
}

bool shape_check(const struct shape_opts *s, const char *dashes, char *why,
		 size_t n, uint32_t *at)
{
	const struct smq_geometry *g = &s->g;

	for (uint32_t q = 0; q < SMQ_MAX_QUEUES; q++) {
		unsigned r = s->receivers[q];
		uint64_t m = s->senders[q];
		if (s->receiver_at[q] && (q >= g->queues || r >= g->boards)) {
			*at = s->receiver_at[q];
			if (q >= g->queues)
				snprintf(why, n, "%sreceiver %u:%u: queue %u does "
					 "not exist: %u queues", dashes, q, r, q,
					 g->queues);
			else
				snprintf(why, n, "%sreceiver %u:%u: board %u does "
					 "not exist: %u boards", dashes, q, r, r,
					 g->boards);
			return false;
		}
		if (s->senders_at[q] &&
		    (q >= g->queues || (g->boards < 64 && m >> g->boards))) {
			*at = s->senders_at[q];
			if (q >= g->queues)
				snprintf(why, n, "%ssenders %u:...: queue %u does "
					 "not exist: %u queues", dashes, q, q,
					 g->queues);
			else
				snprintf(why, n, "%ssenders %u:...: board %u does "
					 "not exist: %u boards", dashes, q,
					 63 - __builtin_clzll(m), g->boards);
			return false;
		}
	}
	for (uint32_t i = 0; i < s->ngroups; i++)
		for (uint32_t k = 0; k < s->groups[i].count; k++)
			if (s->group_queues[i][k] >= g->queues) {
				*at = s->group_at[i];
				snprintf(why, n, "%sgroup %s=...: queue %u does "
					 "not exist: %u queues", dashes,
					 s->group_name[i], s->group_queues[i][k],
					 g->queues);
				return false;
			}
	return true;
}

struct smq_shape shape_of(const struct shape_opts *s)
{
	struct smq_shape sh = { s->g, s->any_sets ? s->senders : NULL,
				s->flags, s->groups, s->ngroups, 0,
				s->journal };

	sh.geometry.receivers = s->receivers;
	return sh;
}
