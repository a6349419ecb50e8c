#!/bin/sh
# smq(7) and smq-format(7) against the library.  The tables are read from
# both pages, wherever they are; smq-format(7) holds the bytes, so smq(7)
# holds no table of fields.  Every table of fields marked ".\" fields:
# STRUCT" must give each named field the offset and size it has in
# libsmq/format/format.h, and its rows must cover the structure exactly: a
# "reserved" row is a padding member of the structure, at its offset and
# of its size, so that a field taking over padding shows (the program
# below names every padding member: renaming one does not compile).
# Every block under EXAMPLE must be what a program calling the layout
# functions prints for the same geometry (a queue with a sender set, and
# journals), and the table of the journal's kinds must name every value of
# enum smq_journal_kind, with its number.
# Exit 0 pass, 1 fail, 77 skip (no library built, no compiler).
. "$(dirname "$0")/../lib/lib.sh"
CC=${CC:-cc}
# the pages, read as one (a table counts wherever it is)
pages="man/smq.7 man/smq-format.7"
page=$T/pages
cat $pages >"$page" || die "cannot read $pages"
[ -f "$B/libsmq-internal.a" ] || skip "no $B/libsmq-internal.a: run make first"
command -v "$CC" >/dev/null 2>&1 || skip "no C compiler ($CC)"
cat >"$T/numbers.c" <<'CEOF'
/* smq(7)'s numbers, from the library: "fields" prints every member of
 * the format's structures (struct field offset size; a padding member as
 * struct + offset size; and struct - 0 sizeof); "example" prints the
 * EXAMPLE section's blocks, separated by "--". */
#include <stdio.h>
#include <string.h>
#include "format/format.h"

#define U(x) ((unsigned long long)(x))
#define F(S, f) printf("%s %s %llu %llu\n", #S, #f, \
		       U(offsetof(struct S, f)), U(sizeof(((struct S *)0)->f)))
#define R(S, f) printf("%s + %llu %llu\n", #S, \
		       U(offsetof(struct S, f)), U(sizeof(((struct S *)0)->f)))
#define END(S) printf("%s - 0 %llu\n", #S, U(sizeof(struct S)))

static void fields(void)
{
	F(smq_sb, magic); F(smq_sb, version); F(smq_sb, sb_size);
	F(smq_sb, features_incompat); F(smq_sb, features_compat);
	F(smq_sb, boards); F(smq_sb, queues); F(smq_sb, entries);
	F(smq_sb, entry_size); F(smq_sb, window_size); F(smq_sb, diag_queues);
	F(smq_sb, diag_entries); F(smq_sb, diag_entry_size);
	F(smq_sb, checksum); F(smq_sb, generation); F(smq_sb, system_state);
	R(smq_sb, pad1); F(smq_sb, format_time_ns); F(smq_sb, epoch_last);
	F(smq_sb, size_fixed); F(smq_sb, emptied); R(smq_sb, pad2); F(smq_sb, maint_owner); F(smq_sb, maint_boot);
	F(smq_sb, maint_phase); F(smq_sb, maint_queue); F(smq_sb, maint_from);
	R(smq_sb, pad4); F(smq_sb, tables_extra); F(smq_sb, body_extra);
	F(smq_sb, journal_entries); R(smq_sb, pad5); R(smq_sb, pad6);
	END(smq_sb);
	F(smq_ctl, notice); F(smq_ctl, local); F(smq_ctl, slot); END(smq_ctl);
	F(smq_notice, generation); F(smq_notice, system_state);
	R(smq_notice, pad); F(smq_notice, check); R(smq_notice, pad2);
	END(smq_notice);
	F(smq_ctl_local, beats); R(smq_ctl_local, pad); END(smq_ctl_local);
	F(smq_handle_slot, tag); F(smq_handle_slot, boot);
	F(smq_handle_slot, busy); F(smq_handle_slot, kind);
	F(smq_handle_slot, generation); F(smq_handle_slot, flags);
	F(smq_handle_slot, queue); F(smq_handle_slot, role);
	F(smq_handle_slot, lock_waiters); F(smq_handle_slot, lock_waited);
	R(smq_handle_slot, pad); END(smq_handle_slot);
	F(smq_board_slot, state); F(smq_board_slot, announces);
	F(smq_board_slot, generation); F(smq_board_slot, heartbeat);
	F(smq_board_slot, boot); F(smq_board_slot, tag);
	F(smq_board_slot, bell); F(smq_board_slot, announcer);
	F(smq_board_slot, host); END(smq_board_slot);
	F(smq_qdesc, index); F(smq_qdesc, receiver); F(smq_qdesc, flags);
	F(smq_qdesc, senders); END(smq_qdesc);
	F(smq_group_head, groups); F(smq_group_head, members);
	R(smq_group_head, pad); END(smq_group_head);
	F(smq_group_desc, name); F(smq_group_desc, first);
	F(smq_group_desc, count); R(smq_group_desc, pad); END(smq_group_desc);
	F(smq_bell_addr, kind); F(smq_bell_addr, vector);
	F(smq_bell_addr, peer); F(smq_bell_addr, host); END(smq_bell_addr);
	F(smq_lane_out, top); F(smq_lane_out, lock); F(smq_lane_out, messages);
	F(smq_lane_out, bytes); F(smq_lane_out, full_waits);
	F(smq_lane_out, doorbells); F(smq_lane_out, ring_kinds);
	F(smq_lane_out, full_refusals); F(smq_lane_out, host);
	END(smq_lane_out);
	F(smq_lane_fc, bottom); R(smq_lane_fc, pad); END(smq_lane_fc);
	F(smq_lane_wake, sleep_epoch); F(smq_lane_wake, bell);
	F(smq_lane_wake, space_bell); F(smq_lane_wake, rx_polls);
	F(smq_lane_wake, queue_epoch); F(smq_lane_wake, sleeper);
	F(smq_lane_wake, sleeper_boot); R(smq_lane_wake, pad2);
	END(smq_lane_wake);
	F(smq_rx, index); F(smq_rx, cursor); F(smq_rx, owner);
	F(smq_rx, messages); F(smq_rx, bytes); F(smq_rx, sleeps);
	F(smq_rx, wakeups); F(smq_rx, epoch); F(smq_rx, sleep_epoch);
	END(smq_rx);
	F(smq_rx_info, ring_kinds); F(smq_rx_info, waiting);
	F(smq_rx_info, host); F(smq_rx_info, owner_boot);
	F(smq_rx_info, opens); F(smq_rx_info, takeovers);
	F(smq_rx_info, beats); F(smq_rx_info, corrupt);
	R(smq_rx_info, pad2); END(smq_rx_info);
	F(smq_bell, doorbell); R(smq_bell, pad); END(smq_bell);
	F(smq_lane_in, top); R(smq_lane_in, pad); END(smq_lane_in);
	F(smq_lane_ask, space_wait); F(smq_lane_ask, bell);
	R(smq_lane_ask, pad); END(smq_lane_ask);
	F(smq_entry, size); F(smq_entry, check); F(smq_entry, signature);
	END(smq_entry);
	F(smq_scratch_head, magic); F(smq_scratch_head, board);
	F(smq_scratch_head, size); F(smq_scratch_head, offset);
	F(smq_scratch_head, check); R(smq_scratch_head, pad);
	END(smq_scratch_head);
	F(smq_journal_head, magic); F(smq_journal_head, board);
	F(smq_journal_head, slots); F(smq_journal_head, incarnation);
	F(smq_journal_head, made_generation); F(smq_journal_head, check);
	R(smq_journal_head, pad); F(smq_journal_head, head);
	F(smq_journal_head, last_boot); R(smq_journal_head, pad2);
	END(smq_journal_head);
	F(smq_journal_slot, seq); F(smq_journal_slot, time_ns);
	F(smq_journal_slot, generation); F(smq_journal_slot, epoch);
	F(smq_journal_slot, kind); F(smq_journal_slot, role);
	F(smq_journal_slot, queue); F(smq_journal_slot, pid);
	F(smq_journal_slot, check); F(smq_journal_slot, a);
	F(smq_journal_slot, b); END(smq_journal_slot);
}

static void at(uint64_t off, const char *indent, const char *what)
{
	printf("%6llu  0x%05llx  %s%s\n", U(off), U(off), indent, what);
}

/* "bottom[0], bottom[1] at 279432": a queue's lines of one kind, one per
 * lane, step bytes apart; lane k is the k'th sending board's. */
static void lanes_at(const struct smq_layout *l, unsigned q, uint64_t first,
		     uint64_t step, const char *what)
{
	char s[160];
	int n = 0;

	for (unsigned k = 0; k < lay_lanes(l, q); k++) {
		n += snprintf(s + n, sizeof(s) - (size_t)n, "%s%s[%u]",
			      k ? ", " : "", what, k);
		if (k)
			n += snprintf(s + n, sizeof(s) - (size_t)n, " at %llu",
				      U(first + k * step));
	}
	at(first, "    ", s);
}

static void superblock_and_tables(const struct smq_layout *l)
{
	unsigned B = l->boards, Q = l->queues;
	char s[160];

	at(0, "", "superblock page (region 0)");
	for (unsigned b = 0; b < B; b++) {
		snprintf(s, sizeof(s), "control block of board %u "
			 "(region %u)%s", b, b, b ? "" : ": notice");
		at(lay_ctl(b), "", s);
		if (b == 0) {
			at(lay_ctl(0) + offsetof(struct smq_ctl, local), "  ",
			   "local line");
			snprintf(s, sizeof(s), "handle slots 0 to %u, %u "
				 "bytes each", SMQ_SLOTS - 1,
				 (unsigned)sizeof(struct smq_handle_slot));
			at(lay_ctl(0) + offsetof(struct smq_ctl, slot), "  ",
			   s);
		}
	}
	snprintf(s, sizeof(s), "control blocks of boards %u to %u (no such "
		 "boards)", B, SMQ_MAX_BOARDS - 1);
	at(lay_ctl(B), "", s);
	at(lay_slot(0), "", "board table: slot of board 0 (region 0)");
	for (unsigned b = 1; b < B; b++) {
		snprintf(s, sizeof(s), "slot of board %u", b);
		at(lay_slot(b), "  ", s);
	}
	snprintf(s, sizeof(s), "slots of boards %u to %u (no such boards)", B,
		 SMQ_MAX_BOARDS - 1);
	at(lay_slot(B), "  ", s);
	for (unsigned q = 0; q < Q; q++) {
		snprintf(s, sizeof(s), "%squeue %u, receiver %u, "
			 "senders 0x%llx%s", q ? "" : "queue table: ", q,
			 l->receiver[q],
			 U(l->senders[q]), l->qflags[q] & SMQ_QUEUE_DIAGNOSTIC
			 ? ", diagnostic" : "");
		at(l->queue_table + sizeof(struct smq_qdesc) * q, q ? "  " : "",
		   s);
	}
	at(l->queue_table + sizeof(struct smq_qdesc) * Q, "  ",
	   "zero to the page boundary");
}

static void receive_area(const struct smq_layout *l, unsigned q)
{
	unsigned n = lay_lanes(l, q);
	char s[160];

	snprintf(s, sizeof(s), "receive area of queue %u%s: rx", q,
		 l->qflags[q] & SMQ_QUEUE_DIAGNOSTIC ? " (diagnostic)" : "");
	at(l->rx[q], "  ", s);
	at(lay_rx_info(l, q), "    ", "rx_info");
	lanes_at(l, q, lay_bottoms(l, q), 8, "bottom");
	at(lay_bell(l, q), "    ", "bell");
	lanes_at(l, q, lay_lane_in_k(l, q, 0), SMQ_LINE, "lane_in");
	lanes_at(l, q, lay_lane_ask_k(l, q, 0), SMQ_LINE, "lane_ask");
	for (unsigned k = 0; k < n; k++) {
		snprintf(s, sizeof(s), "ring of lane %u (board %u)%s", k,
			 lay_lane_board(l, q, k), k ? "" : ": ");
		if (!k)
			snprintf(s + strlen(s), sizeof(s) - strlen(s),
				 "%u entries of %llu bytes", lay_entries(l, q),
				 U(lay_stride(l, q)));
		at(lay_ring_k(l, q, k), "    ", s);
	}
}

/* Board b's journal, the start of its body_extra (feature journal). */
static void journal(const struct smq_layout *l, unsigned b)
{
	uint64_t j = lay_journal(l, b), n = l->journal;
	uint64_t slots_end = j + SMQ_LINE + n * SMQ_LINE;
	char s[160];

	snprintf(s, sizeof(s), "journal of board %u: head line", b);
	at(j, "  ", s);
	snprintf(s, sizeof(s), "slots 0 to %llu, 64 bytes each", U(n - 1));
	at(j + SMQ_LINE, "    ", s);
	if (slots_end < j + smq_journal_bytes(l->journal))
		at(slots_end, "    ", "zero to the end of the journal");
	if (j + smq_journal_bytes(l->journal) < l->body[b] + l->body_size[b])
		at(j + smq_journal_bytes(l->journal), "  ",
		   "the rest of body_extra");
}

static void bodies(const struct smq_layout *l)
{
	char s[160];

	for (unsigned b = 0; b < l->boards; b++) {
		uint64_t end = l->body[b];
		snprintf(s, sizeof(s), "body of board %u, %llu bytes "
			 "(region %u)", b, U(l->body_size[b]), b);
		at(l->body[b], "", s);
		for (unsigned q = 0; q < l->queues; q++) {
			if (!lay_sends(l, q, b))
				continue;
			snprintf(s, sizeof(s), "queue %u: lane_out; "
				 "lane_fc %llu; lane_wake %llu", q,
				 U(lay_lane_fc(l, b, q)),
				 U(lay_lane_wake(l, b, q)));
			at(lay_lane_out(l, b, q), "  ", s);
			end = lay_lane_out(l, b, q) + SMQ_LANE_LINES * SMQ_LINE;
		}
		for (unsigned q = 0; q < l->queues; q++) {
			if (l->receiver[q] != b)
				continue;
			receive_area(l, q);
			end = lay_ring_k(l, q, lay_lanes(l, q));
		}
		uint64_t extra = l->body[b] + l->body_size[b] - l->body_extra;
		if (end < extra)
			at(end, "  ", "zero to the page boundary");
		if (l->journal)
			journal(l, b);
	}
	at(l->size, "", "end: window_size");
}

static void split_objects(const struct smq_layout *l)
{
	char s[160];

	printf("object  offset  canonical   bytes  holds\n");
	for (unsigned b = 0; b < l->boards; b++) {
		static const char *const what0[] = { "superblock page",
			"control block of board 0", "board table, queue table",
			"body of board 0" };
		struct smq_range r[SMQ_MAX_RANGES];
		int n = smq_layout_ranges(l, b, r);
		uint64_t o = 0;
		for (int i = 0; i < n; i++) {
			if (b == 0)
				snprintf(s, sizeof(s), "%s", what0[i]);
			else
				snprintf(s, sizeof(s), "%s of board %u",
					 i ? "body" : "control block", b);
			printf("NAME.%u  %6llu  %9llu  %6llu  %s\n", b, U(o),
			       U(r[i].start), U(r[i].len), s);
			o += r[i].len;
		}
	}
}

/* One message: board snd sends sequence seq on queue q, its receiver
 * takes it. */
static void message(const struct smq_layout *l, unsigned q, unsigned snd,
		    uint64_t seq)
{
	unsigned k = lay_lane(l, q, snd);
	uint64_t e = lay_entry(l, q, snd, seq);
	char s[160];

	snprintf(s, sizeof(s), "payload of entry %llu of board %u on queue %u",
		 U(seq), snd, q);
	at(e + SMQ_ENTRY_HEADER, "", s);
	at(e, "  ", "size and check");
	at(e + offsetof(struct smq_entry, signature), "  ",
	   "signature, after a publish");
	snprintf(s, sizeof(s), "lane_out(%u, %u).top := %llu, after a "
		 "publish", snd, q, U(seq + 1));
	at(lay_lane_out(l, snd, q), "", s);
	snprintf(s, sizeof(s), "lane_in(%u, %u).top := %llu", q, snd,
		 U(seq + 1));
	at(lay_lane_in(l, q, snd), "", s);
	snprintf(s, sizeof(s), "lane_wake(%u, %u).sleep_epoch read, after a "
		 "full fence", snd, q);
	at(lay_lane_wake(l, snd, q), "", s);
	printf("--\n");
	at(e + offsetof(struct smq_entry, signature), "",
	   "the signature it expects, found");
	at(e, "  ", "after a consume: size and check, then the payload");
	snprintf(s, sizeof(s), "bottom[%u] of queue %u := %llu (release)", k,
		 q, U(seq + 1));
	at(lay_bottoms(l, q) + 8ull * k, "", s);
	snprintf(s, sizeof(s), "lane_fc(%u, %u).bottom := %llu (release)", snd,
		 q, U(seq + 1));
	at(lay_lane_fc(l, snd, q), "", s);
	snprintf(s, sizeof(s), "rx(%u).cursor := %u", q,
		 (k + 1) % lay_lanes(l, q));
	at(l->rx[q] + offsetof(struct smq_rx, cursor), "", s);
	snprintf(s, sizeof(s), "lane_ask(%u, %u).space_wait read, after a full "
		 "fence", q, snd);
	at(lay_lane_ask(l, q, snd), "", s);
}

/* The receiver of queue q arms a sleep. */
static void arm_sleep(const struct smq_layout *l, unsigned q)
{
	unsigned rcv = l->receiver[q];
	char s[160];

	snprintf(s, sizeof(s), "bell(%u).doorbell read first: the value it "
		 "sleeps on", q);
	at(lay_bell(l, q), "", s);
	/* how to wake it and who sleeps, in every lane, published before
	 * the odd epoch that makes a sender read them */
	for (unsigned k = 0; k < lay_lanes(l, q); k++) {
		unsigned t = lay_lane_board(l, q, k);
		uint64_t w = lay_lane_wake(l, t, q);
		snprintf(s, sizeof(s), "lane_wake(%u, %u).bell := its doorbell "
			 "address", t, q);
		at(w + offsetof(struct smq_lane_wake, bell), "", s);
		at(w + offsetof(struct smq_lane_wake, sleeper), "  ",
		   "sleeper := its tag");
		at(w + offsetof(struct smq_lane_wake, sleeper_boot), "  ",
		   "sleeper_boot := its boot hash");
	}
	snprintf(s, sizeof(s), "rx(%u).sleep_epoch := odd, after a publish", q);
	at(l->rx[q] + offsetof(struct smq_rx, sleep_epoch), "", s);
	for (unsigned k = 0; k < lay_lanes(l, q); k++) {
		unsigned t = lay_lane_board(l, q, k);
		snprintf(s, sizeof(s), "lane_wake(%u, %u).sleep_epoch := odd",
			 t, q);
		at(lay_lane_wake(l, t, q), "", s);
	}
	for (unsigned k = 0; k < lay_lanes(l, q); k++) {
		unsigned t = lay_lane_board(l, q, k);
		uint64_t o = lay_lane_out(l, t, q);
		if (t == rcv)
			continue;
		snprintf(s, sizeof(s), "lane_out(%u, %u).top read across, "
			 "after a full fence", t, q);
		at(o, "", s);
		at(o + offsetof(struct smq_lane_out, ring_kinds), "  ",
		   "ring_kinds");
		at(o + offsetof(struct smq_lane_out, host), "  ", "host");
	}
}

/* A process of board b writes entry seq of its journal; a reader of
 * another board reads it. */
static void journal_entry(const struct smq_layout *l, unsigned b,
			  uint64_t seq)
{
	uint64_t j = lay_journal(l, b), e = lay_journal_slot(l, b, seq);
	char s[160];

	snprintf(s, sizeof(s), "journal[%u].head: fetch-and-add 1 returns %llu",
		 b, U(seq));
	at(j + offsetof(struct smq_journal_head, head), "", s);
	snprintf(s, sizeof(s), "slot %llu: seq := %llu | 1 << 63 (being "
		 "written)", U(seq & (l->journal - 1)), U(seq));
	at(e, "", s);
	at(e + offsetof(struct smq_journal_slot, time_ns), "  ",
	   "time_ns to b, check among them, after a publish");
	snprintf(s, sizeof(s), "seq := %llu (release), after a publish",
		 U(seq));
	at(e, "", s);
	printf("--\n");
	snprintf(s, sizeof(s), "journal[%u].head read (acquire): %llu, the "
		 "oldest entry %llu", b, U(seq + 1),
		 U(seq + 1 > l->journal ? seq + 1 - l->journal : 1));
	at(j + offsetof(struct smq_journal_head, head), "", s);
	snprintf(s, sizeof(s), "slot %llu: seq read (acquire): %llu",
		 U(seq & (l->journal - 1)), U(seq));
	at(e, "", s);
	at(e, "  ", "the 64 bytes copied, then a consume");
	snprintf(s, sizeof(s), "seq read again: %llu, so the copy is entry "
		 "%llu, whole", U(seq), U(seq));
	at(e, "", s);
}

static void example(void)
{
	/* queue 0: every board (a mask of 0 says so); queue 1 carries
	 * messages from board 0 to board 1 only */
	static const uint64_t senders[2] = { 0, 1 };
	const struct smq_shape sh = { { 2, 2, 64, 1024, NULL }, senders, 0,
				      NULL, 0, 0, 16 };
	struct smq_layout l;

	if (smq_layout_make(&l, &sh, 0, smq_shape_body_extra(&sh))) {
		printf("layout failed\n");
		return;
	}
	unsigned Q = l.queues, app = Q - l.diag_queues;

	/* the values of the layout formulas */
	printf("queues          = %u (%u application queues, then %u "
	       "diagnostic)\n", Q, app, l.diag_queues);
	for (unsigned q = 0; q < Q; q++)
		printf("senders[%u]      = 0x%llx, lanes(%u) = %u, "
		       "bottoms_size(%u) = %llu\n", q, U(l.senders[q]), q,
		       lay_lanes(&l, q), q, U(lay_bottoms_size(&l, q)));
	printf("stride          = %llu\n", U(l.stride));
	printf("diag_entries    = %u\n", l.diag_entries);
	printf("diag_entry_size = %u\n", l.diag_entry_size);
	printf("diag_stride     = %llu\n", U(l.diag_stride));
	printf("body_extra      = %llu = journal_bytes(%u)\n",
	       U(l.body_extra), l.journal);
	printf("tables_end      = %llu\n", U(l.tables_end));
	for (unsigned b = 0; b < l.boards; b++)
		printf("body[%u]         = %llu, body_size[%u] = %llu\n", b,
		       U(l.body[b]), b, U(l.body_size[b]));
	for (unsigned b = 0; b < l.boards; b++)
		printf("journal[%u]      = %llu\n", b, U(lay_journal(&l, b)));
	printf("window_size     = %llu\n", U(l.size));
	printf("--\n");
	superblock_and_tables(&l);
	bodies(&l);
	printf("--\n");
	split_objects(&l);
	printf("--\n");
	message(&l, 0, 1, 70);
	printf("--\n");
	arm_sleep(&l, 0);
	printf("--\n");
	journal_entry(&l, 1, 21);
	smq_layout_free(&l);
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "fields"))
		fields();
	else if (argc == 2 && !strcmp(argv[1], "example"))
		example();
	else
		return 2;
	return 0;
}
CEOF
"$CC" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Iinclude -Ilibsmq -o "$T/numbers" \
	"$T/numbers.c" "$B/libsmq-internal.a" -pthread ||
	die "cannot build"
"$T/numbers" fields >"$T/fields" && "$T/numbers" example >"$T/example" ||
	die "the program failed"

# ---- the tables of fields ----
tally awk -v fields="$T/fields" '
BEGIN {
	while ((getline line < fields) > 0) {
		split(line, w, " ")
		if (w[2] == "-") size[w[1]] = w[4]
		else if (w[2] == "+") pad[w[1] " " w[3]] = w[4]
		else { off[w[1] " " w[2]] = w[3]; len[w[1] " " w[2]] = w[4] }
	}
}
/^\.\\" fields: / { cur = $3; seen[cur] = 1; next }
cur != "" && /^\.EX/ { inex = 1; end = 0; next }
cur != "" && /^\.EE/ {
	if (end != size[cur]) {
		printf "FAIL %s: the rows end at %d, the structure at %d\n", \
			cur, end, size[cur]; bad = 1
	}
	inex = 0; cur = ""; next
}
inex && $1 ~ /^[0-9]+$/ {
	if ($2 !~ /^[0-9]+$/) next          # the payload: not in the structure
	if ($1 != end) {
		printf "FAIL %s.%s: at %d, where the row before ends at %d\n", \
			cur, $4, $1, end; bad = 1
	}
	end = $1 + $2
	if ($4 == "reserved") {
		k = cur " " $1
		if (!(k in pad)) {
			printf "FAIL %s: reserved %d bytes at %d, where the " \
				"code has no padding\n", cur, $2, $1
			bad = 1
		} else if (pad[k] != $2) {
			printf "FAIL %s: reserved %d bytes at %d, where the " \
				"code has %d\n", cur, $2, $1, pad[k]
			bad = 1
		}
		padded[k] = 1
		next
	}
	k = cur " " $4
	if (!(k in off)) {
		printf "FAIL %s.%s: no such field\n", cur, $4; bad = 1; next
	}
	if (off[k] != $1 || len[k] != $2) {
		printf "FAIL %s.%s: the page says %d, %d bytes; " \
			"the code %d, %d\n", cur, $4, $1, $2, off[k], len[k]
		bad = 1
	}
	done[k] = 1
	next
}
END {
	for (k in off) {
		split(k, w, " ")
		if ((w[1] in seen) && !(k in done)) {
			printf "FAIL %s.%s: missing from the table\n", \
				w[1], w[2]
			bad = 1
		}
	}
	for (k in pad) {
		split(k, w, " ")
		if ((w[1] in seen) && !(k in padded)) {
			printf "FAIL %s: %d bytes of padding at %d, not " \
				"reserved in the table\n", w[1], pad[k], w[2]
			bad = 1
		}
	}
	for (s in size)
		if (!(s in seen)) {
			printf "FAIL struct %s: no table\n", s; bad = 1
		}
	exit bad
}' "$page" && ok "the tables of fields"

# ---- the journal's kinds: every value of enum smq_journal_kind (smq.h)
# is a row "N  NAME ..." of the table marked ".\" kinds:", and no other ----
sed -n '/^enum smq_journal_kind {/,/^};/s/^[^A-Z]*SMQ_JOURNAL_\([A-Z_]*\) = \([0-9]*\).*/\2 \1/p' \
	include/smq.h | sort >"$T/kinds-code"
awk '/^\.\\" kinds: smq_journal_kind/ { on = 1; next }
     on && /^\.EX/ { ex = 1; next }
     on && /^\.EE/ { exit }
     ex && $1 ~ /^[0-9]+$/ { print $1, $2 }' "$page" | sort >"$T/kinds-page"
if [ "$(wc -l <"$T/kinds-code")" -lt 15 ]; then
	failed "fewer than 15 journal kinds read from smq.h"
elif diff -u "$T/kinds-code" "$T/kinds-page" >"$T/diff"; then
	ok "the journal's kinds ($(wc -l <"$T/kinds-code"))"
else
	failed "the journal's kinds differ (- smq.h, + the page):"
	cat "$T/diff"
fi

# ---- the EXAMPLE blocks ----
awk '
/^\.SH / { inside = ($2 == "EXAMPLE"); next }
inside && /^\.EX/ { if (n++) print "--"; ex = 1; next }
inside && /^\.EE/ { ex = 0; next }
inside && ex { print }' "$page" >"$T/page-example"
if diff -u "$T/example" "$T/page-example" >"$T/diff"; then
	ok "the EXAMPLE numbers"
else
	failed "the EXAMPLE section differs from the library (- library, + page):"
	cat "$T/diff"
fi
# the bytes are smq-format(7)'s: no table of fields in smq(7)
tables=$(grep -c '^\.\\" fields:' man/smq.7)
[ "$tables" = 0 ] && ok "smq(7) holds no table of fields: smq-format(7) has them" ||
	failed "smq(7) holds $tables tables of fields: they belong in smq-format(7)"
# each page names the other where a reader looks for it
sed -n '/^\.SH SEE ALSO/,$p' man/smq.7 | grep -q '^\.BR smq\\-format (7)' &&
	sed -n '/^\.SH SEE ALSO/,$p' man/smq-format.7 | grep -q '^\.BR smq (7)' &&
	ok "smq(7) and smq-format(7) name each other under SEE ALSO" ||
	failed "smq(7) and smq-format(7) do not name each other under SEE ALSO"
finish 5
