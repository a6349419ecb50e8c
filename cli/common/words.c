/* The words every command uses for the library's judgements and states:
 * dump, top, metrics and events say the same thing the same way.  The
 * judgement itself is the library's (smq_board_info().activity,
 * smq_queue_info().receiver_state); these are only its names. */
#include <stdio.h>
#include "../smqctl.h"

static const char *pick(const char *const *names, unsigned n, unsigned v)
{
	return v < n ? names[v] : "?";
}

const char *sys_state_word(unsigned s)
{
	static const char *const w[] = { "formatting", "formatted", "ready" };
	return pick(w, 3, s);
}

const char *board_state_word(unsigned s)
{
	static const char *const w[] = { "absent", "initialized", "ready" };
	return pick(w, 3, s);
}

const char *bell_kind_word(unsigned k)
{
	static const char *const w[] = { "none", "futex", "ivshmem" };
	return pick(w, 3, k);
}

/* A format feature: incompatible (incompat) or not, bit bit. */
const char *feature_word(bool incompat, unsigned bit, char *buf, size_t n)
{
	if (incompat && 1u << bit == SMQ_FEATURE_CHECKSUM)
		return "checksum";
	if (incompat && 1u << bit == SMQ_FEATURE_JOURNAL)
		return "journal";
	if (incompat && 1u << bit == SMQ_FEATURE_MEMBARRIER)
		return "membarrier";
	if (!incompat && 1u << bit == SMQ_FEATURE_GROUPS)
		return "groups";
	if (!incompat && 1u << bit == SMQ_FEATURE_SCRATCH)
		return "scratch";
	snprintf(buf, n, "%s_bit_%u", incompat ? "incompat" : "compat", bit);
	return buf;
}

/* Every feature of a window, or "none". */
const char *features_text(uint32_t incompat, uint32_t compat, char *buf,
			  size_t n)
{
	char word[32];
	size_t used = 0;

	buf[0] = 0;
	for (unsigned i = 0; i < 64 && used < n; i++) {
		uint32_t bits = i < 32 ? incompat : compat;
		if (bits >> (i % 32) & 1)
			used += (size_t)snprintf(buf + used, n - used, "%s%s",
						 used ? ", " : "",
						 feature_word(i < 32, i % 32, word,
							      sizeof(word)));
	}
	return used ? buf : "none";
}

const char *alive_word(int alive)
{
	return alive > 0 ? "yes" : alive == 0 ? "no" : "unknown";
}

/* enum smq_activity: what a board's processes do */
const char *activity_word(int a)
{
	static const char *const w[] = { "unknown", "at rest", "attached",
					  "at work", "dead" };
	return pick(w, 5, (unsigned)a);
}

/* ...as a metric's or JSON's label value: one word */
const char *activity_key(int a)
{
	static const char *const w[] = { "unknown", "none", "attached",
					  "working", "dead" };
	return pick(w, 5, (unsigned)a);
}

/* enum smq_receiver_state */
const char *receiver_word(int r)
{
	static const char *const w[] = { "unknown", "none", "waiting", "away",
					  "dead" };
	return pick(w, 5, (unsigned)r);
}

/* A board in a sentence: its state and what its processes do, as an
 * operator reads it ("ready, at rest: no process attached"). */
const char *board_condition(const struct smq_board_info *bi, char *buf,
			    size_t n)
{
	const char *state = board_state_word(bi->state);

	switch (bi->activity) {
	case SMQ_ACTIVITY_NONE:
		snprintf(buf, n, "%s, at rest: no process attached%s", state,
			 bi->state == SMQ_BOARD_READY ? "" :
			 bi->state == SMQ_BOARD_ABSENT ? " (not started)"
			 : " (its sync ended before the system was ready)");
		break;
	case SMQ_ACTIVITY_ATTACHED:
		snprintf(buf, n, "%s, attached: %u handle%s, no queue open",
			 state, bi->handles, bi->handles == 1 ? "" : "s");
		break;
	case SMQ_ACTIVITY_WORKING:
		snprintf(buf, n, "%s, at work: %u queue handle%s", state,
			 bi->queue_handles, bi->queue_handles == 1 ? "" : "s");
		break;
	case SMQ_ACTIVITY_DEAD:
		snprintf(buf, n, "%s, dead: %u handle%s left by processes that "
			 "died", state, bi->dead_handles,
			 bi->dead_handles == 1 ? "" : "s");
		break;
	default:
		snprintf(buf, n, "%s, not known yet: another host, its "
			 "heartbeat not seen long enough", state);
	}
	return buf;
}

/* Bit b of mask as a list "boards 0, 2 and 5", "board 3"; every board:
 * "every board". */
const char *board_set(uint64_t mask, unsigned boards, char *buf, size_t n)
{
	uint64_t all = boards >= 64 ? ~0ull : (1ull << boards) - 1;
	int count = __builtin_popcountll(mask), i = 0;
	size_t len;

	if ((mask & all) == all) {
		snprintf(buf, n, "every board");
		return buf;
	}
	len = (size_t)snprintf(buf, n, count == 1 ? "board " : "boards ");
	for (unsigned b = 0; b < 64 && len < n; b++)
		if (mask >> b & 1) {
			i++;
			len += (size_t)snprintf(buf + len, n - len, "%s%u",
				i == 1 ? "" : i == count ? " and " : ", ", b);
		}
	return buf;
}

/* enum smq_fault_kind: what a fault's limit is, as a JSON key and in
 * words before the limit */
const char *fault_kind_key(int kind)
{
	static const char *const w[] = { "expected", "at_most", "at_least",
					  "known", "subset_of", "pages_at_most" };
	return pick(w, 6, (unsigned)kind);
}

const char *fault_kind_words(int kind)
{
	static const char *const w[] = { "expected", "at most", "at least",
					  "the known bits are",
					  "a non-zero subset of",
					  "whole pages, at most" };
	return pick(w, 6, (unsigned)kind);
}
