/* smqctl check between boards: the window map.  First what every board
 * knows each other region holds, read through its own mapping (the
 * hellos brought the others' looks); where a view reads wrong, nothing
 * is written through it.  Then, pair by pair, the owner clears its
 * scratch data, the writer writes its words into it, and the owner reads
 * them back.  The verdict names the first wrong offset and what the view
 * looks like: shifted, aliased, stuck bits, nothing arrived. */
#include <inttypes.h>
#include <string.h>
#include "cross.h"

static void look_words(const struct smq_map_result *r, char *buf, size_t n)
{
	switch (r->kind) {
	case SMQ_MAP_SHIFTED:
		snprintf(buf, n, "is shifted by %+" PRId64 " bytes: offset %#"
			 PRIx64 " (%s) shows what belongs at %#" PRIx64 " (a "
			 "translation offset)", r->shift, r->offset, r->what,
			 r->offset + (uint64_t)r->shift);
		break;
	case SMQ_MAP_ALIASED:
		snprintf(buf, n, "wraps every %" PRIu64 " bytes: offset %#"
			 PRIx64 " (%s) shows what lies %" PRIu64 " bytes lower, "
			 "while lower offsets read right (a window smaller "
			 "than the region)", r->wrap, r->offset, r->what, r->wrap);
		break;
	case SMQ_MAP_NOTHING:
		snprintf(buf, n, "reads all ones at offset %#" PRIx64 " (%s): "
			 "nothing answers there", r->offset, r->what);
		break;
	default:
		snprintf(buf, n, "reads %#" PRIx64 " at offset %#" PRIx64
			 " (%s), not %#" PRIx64, r->found, r->offset, r->what,
			 r->expected);
	}
}

static void verify_words(const struct smq_map_result *r, unsigned writer,
			 char *buf, size_t n)
{
	switch (r->kind) {
	case SMQ_MAP_SHIFTED:
		snprintf(buf, n, "board %u's writes land %+" PRId64 " bytes from "
			 "where they were aimed (the first wrong word at %#"
			 PRIx64 ")", writer, -r->shift, r->offset);
		break;
	case SMQ_MAP_STUCK:
		snprintf(buf, n, "board %u's writes arrive with bits %#" PRIx64
			 " stuck at one and %#" PRIx64 " at zero (the first "
			 "wrong word at %#" PRIx64 ")", writer, r->stuck_ones,
			 r->stuck_zeros, r->offset);
		break;
	case SMQ_MAP_NOTHING:
		snprintf(buf, n, "nothing of board %u's writes arrived (from %#"
			 PRIx64 ")", writer, r->offset);
		break;
	default:
		snprintf(buf, n, "board %u's writes arrived wrong: %" PRIu64
			 " of %" PRIu64 " words, the first at %#" PRIx64
			 " holds %#" PRIx64 ", not %#" PRIx64, writer, r->wrong,
			 r->words, r->offset, r->found, r->expected);
	}
}

/* The first view that reads wrong, and how many there are. */
static unsigned bad_views(struct cross *x, unsigned *a, unsigned *b,
			  const struct smq_map_result **r)
{
	unsigned n = 0;

	for (unsigned k = 0; k < x->boards; k++)
		if ((x->ready[k] || x->unseen[k]) &&
		    x->look[k].kind != SMQ_MAP_OK && !n++) {
			*a = x->self;
			*b = k;
			*r = &x->look[k];
		}
	for (unsigned k = 0; k < x->boards; k++) {
		if (k == x->self || !x->views_wrong[k])
			continue;
		if (!n) {
			*a = k;
			*b = x->bad_view[k].board;
			*r = &x->bad_view[k];
		}
		n += x->views_wrong[k];
	}
	return n;
}

static int clear_at(struct cross *x, unsigned b)
{
	struct wire_msg m;

	if (b == x->self)
		return smq_map_clear(x->me.w);
	wire_init(&x->me, &m, OP_CLEAR);
	int err = cross_ask(x, b, &m, OP_DONE, b);
	return err ? err : m.status;
}

static int write_from(struct cross *x, unsigned a, unsigned b, uint64_t nonce)
{
	struct wire_msg m;

	if (a == x->self)
		return smq_map_write(x->me.w, b, nonce);
	wire_init(&x->me, &m, OP_WRITE);
	m.a = b;
	m.nonce = nonce;
	int err = cross_ask(x, a, &m, OP_DONE, a);
	return err ? err : m.status;
}

static int verify_at(struct cross *x, unsigned b, unsigned a, uint64_t nonce,
		     struct smq_map_result *r)
{
	struct wire_msg m;

	if (b == x->self)
		return smq_map_verify(x->me.w, a, nonce, r, sizeof(*r));
	wire_init(&x->me, &m, OP_VERIFY);
	m.a = a;
	m.nonce = nonce;
	int err = cross_ask(x, b, &m, OP_RESULT, b);
	*r = m.u.map;
	return err ? err : m.status;
}

/* Board a writes board b's scratch data, which b reads back: 0 with r
 * filled, or -errno. */
static int write_test(struct cross *x, unsigned a, unsigned b,
		      struct smq_map_result *r)
{
	uint64_t nonce = x->me.id ^ (a << 6 | b);
	int err = clear_at(x, b);

	if (!err)
		err = write_from(x, a, b, nonce);
	if (!err)
		err = verify_at(x, b, a, nonce, r);
	return err;
}

static void writes(struct cross *x)
{
	struct check_run *cr = x->cr;
	struct smq_map_result r;
	unsigned tested = 0, wrong = 0;
	char words[400];

	for (unsigned a = 0; a < x->boards; a++)
		for (unsigned b = 0; b < x->boards; b++) {
			if (a == b || !cross_view_ok(x, a, b))
				continue;
			int err = write_test(x, a, b, &r);
			if (err) {
				check_set(cr, CK_MAP, CHECK_FAIL, "board %u's "
					  "words into board %u's scratch area: "
					  "%s", a, b, smq_strerror(err));
				return;
			}
			tested++;
			if (r.kind == SMQ_MAP_OK || wrong++)
				continue;
			verify_words(&r, a, words, sizeof(words));
			check_set(cr, CK_MAP, CHECK_FAIL, "board %u's scratch "
				  "area: %s", b, words);
			check_next(cr, CK_MAP, "check board %u's path to board "
				   "%u: the bridge's window and its translation "
				   "(stuck bits: the link's lanes, the card)",
				   a, b);
		}
	check_set(cr, CK_MAP, CHECK_PASS, "%u views of the others' regions "
		  "read their known words right, and %u scratch areas got "
		  "8192 words each back as written", x->boards * (x->boards - 1),
		  tested);
}

void cross_map(struct cross *x)
{
	struct check_run *cr = x->cr;
	const struct smq_map_result *r = NULL;
	unsigned a = 0, b = 0;
	char words[400];

	unsigned n = bad_views(x, &a, &b, &r);
	if (n) {
		look_words(r, words, sizeof(words));
		check_set(cr, CK_MAP, CHECK_FAIL, "board %u's view of board %u's "
			  "region %s%s", a, b, words, n > 1 ? "; and other views"
			  : "");
		check_next(cr, CK_MAP, "check the window of the bridge from "
			   "board %u to board %u (its translation, its size); "
			   "nothing was sent through that view", a, b);
		return;
	}
	if (!x->me.scratch) {
		check_set(cr, CK_MAP, CHECK_SKIP, "the window has no scratch "
			  "areas (formatted with smqctl init --no-scratch, or "
			  "by an smq without the feature): the known words of "
			  "every region read right, but no writes are tested");
		return;
	}
	if (check_wanted(cr, CK_MAP))
		writes(x);
}
