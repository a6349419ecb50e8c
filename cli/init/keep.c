/* smqctl init --keep: a window that already holds the shape asked for,
 * and is sound, is left as it is -- its generation, its queued messages,
 * the boards at work on it -- so that board 0, rebooting alone, rejoins a
 * system that runs.  It is looked at as a monitor: nothing is written. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include "init.h"

static void differs(struct keep_look *k, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void differs(struct keep_look *k, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(k->why, sizeof(k->why), fmt, ap);
	va_end(ap);
}

static bool same_geometry(const struct smq_window_info *wi,
			  const struct shape_opts *s, struct keep_look *k)
{
	const struct smq_geometry *a = &wi->geometry, *b = &s->g;
	uint32_t want = s->flags & SMQ_SHAPE_CHECKSUM ? SMQ_FEATURE_CHECKSUM
						      : 0;
	/* the scratch areas are check's, not the queues', and the journal
	 * tells what happened: a window with or without them (or with
	 * another journal) holds the shape (one formatted before init made
	 * them is kept across an upgrade, its queued messages with it); so
	 * does one without the barriers left to membarrier (its sends keep
	 * them) */
	uint32_t compat = s->ngroups ? SMQ_FEATURE_GROUPS : 0;
	uint32_t incompat = wi->features_incompat &
			    ~(SMQ_FEATURE_JOURNAL | SMQ_FEATURE_MEMBARRIER);

	if (a->boards != b->boards)
		differs(k, "it has %u boards, not %u", a->boards, b->boards);
	else if (a->queues != b->queues)
		differs(k, "it has %u queues, not %u", a->queues, b->queues);
	else if (a->entries != b->entries)
		differs(k, "it has %u entries a ring, not %u", a->entries,
			b->entries);
	else if (a->entry_size != b->entry_size)
		differs(k, "its entries hold %u bytes, not %u", a->entry_size,
			b->entry_size);
	else if (incompat != want ||
		 (wi->features_compat & ~SMQ_FEATURE_SCRATCH) != compat)
		differs(k, "it has the features %#x and %#x (smq(7)), not %#x "
			"and %#x (checksums %s, groups %s)", incompat,
			wi->features_compat & ~SMQ_FEATURE_SCRATCH, want, compat,
			want ? "on" : "off", compat ? "on" : "off");
	else if (wi->groups != s->ngroups)
		differs(k, "it has %u groups, not %u", wi->groups, s->ngroups);
	else
		return true;
	return false;
}

/* Every group, by name and members, in the order given. */
static bool same_groups(struct smq_window *w, const struct shape_opts *s,
			struct keep_look *k)
{
	for (uint32_t i = 0; i < s->ngroups; i++) {
		const struct smq_group_def *d = &s->groups[i];
		struct smq_group_info gi;
		int err = smq_group_info(w, i, &gi, sizeof(gi));
		if (err) {
			differs(k, "its group %u cannot be read: %s", i,
				smq_strerror(err));
			return false;
		}
		bool same = !strcmp(gi.name, d->name) && gi.count == d->count;
		for (uint32_t m = 0; same && m < d->count; m++)
			same = gi.queues[m] == d->queues[m];
		if (!same) {
			char has[400] = "", want[400] = "";
			for (uint32_t m = 0; m < gi.count; m++)
				snprintf(has + strlen(has), sizeof(has) - strlen(has),
					 "%s%u", m ? "," : "", gi.queues[m]);
			for (uint32_t m = 0; m < d->count; m++)
				snprintf(want + strlen(want),
					 sizeof(want) - strlen(want), "%s%u",
					 m ? "," : "", d->queues[m]);
			differs(k, "its group %u is %s=%s, not %s=%s", i,
				gi.name, has, d->name, want);
			return false;
		}
	}
	return true;
}

static bool same_queues(struct smq_window *w, const struct shape_opts *s,
			struct keep_look *k)
{
	uint64_t every = s->g.boards == 64 ? ~0ull
					   : (1ull << s->g.boards) - 1;
	char has[200], want[200];

	for (unsigned q = 0; q < s->g.queues; q++) {
		struct smq_queue_info qi;
		int err = smq_queue_info(w, q, &qi, sizeof(qi));
		uint64_t set = s->senders[q] ? s->senders[q] : every;
		if (err) {
			differs(k, "its queue %u cannot be read: %s", q,
				smq_strerror(err));
			return false;
		}
		if (qi.receiver != s->receivers[q]) {
			differs(k, "its queue %u is received by board %u, not "
				"%u", q, qi.receiver, s->receivers[q]);
			return false;
		}
		if (qi.senders != set) {
			differs(k, "its queue %u is sent on by %s, not %s", q,
				board_set(qi.senders, s->g.boards, has,
					  sizeof(has)),
				board_set(set, s->g.boards, want,
					  sizeof(want)));
			return false;
		}
	}
	return true;
}

void keep_look(struct ctx *ctx, const struct shape_opts *s,
	       struct keep_look *k)
{
	struct smq_window *w;
	struct smq_window_info wi;
	struct smq_fault f;
	int err;

	memset(k, 0, sizeof(*k));
	k->asked = true;
	err = smq_open(window_spec(ctx), 0, SMQ_OPEN_READONLY, &w);
	if (err == -ENOENT) {
		differs(k, "it does not exist");
		return;
	}
	if (err) {
		differs(k, "it cannot be read as a window: %s",
			smq_strerror(err));
		return;
	}
	/* everything a board would check, and whether it is usable: an
	 * init or clear left unfinished is finished by formatting */
	if ((err = smq_validate(w, &f, sizeof(f))))
		differs(k, "it is not sound: %s%s%s", smq_strerror(err),
			f.field[0] ? ", at " : "", f.field);
	else if ((err = smq_window_info(w, &wi, sizeof(wi))))
		differs(k, "it cannot be read: %s", smq_strerror(err));
	else if (wi.maint_phase)
		differs(k, "an init or clear runs on it, or was left "
			"unfinished");
	else if (same_geometry(&wi, s, k) && same_queues(w, s, k) &&
		 same_groups(w, s, k)) {
		k->same = true;
		k->generation = wi.generation;
	}
	smq_close(w);
}
