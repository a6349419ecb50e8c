#!/bin/sh
# The journal: what the boards did, read after the fact by a watcher that
# was not there (smqctl events --since all), each board's entries in its
# own order, nothing added and nothing left out.
#  (a) a story on two boards over two generations: init, sync, a receiver
#      killed and its claim taken over, sends, a clear of a queue holding
#      two messages, an init over one held message; a watcher started
#      afterwards reads exactly that story, board by board, with the pids
#      of the processes that acted and the counts emptied;
#  (b) a watcher stopped (SIGSTOP) while board 0 writes 40 entries into a
#      journal of 16 says, when it goes on, that exactly 24 were lost, then
#      gives the 16 still there, in order;
#  (c) a process killed while it writes an entry (held at hook
#      journal_writing): the watcher says the entry abandoned, then reads
#      the entries written after it; nothing else of the window is harmed
#      (the next send goes through and its message is received);
#  (d) a window re-formatted in another shape under a following watcher:
#      the journal says it started again, and the new story follows;
#  (e) syncs that time out (board 1, then board 0, three boards): each
#      writes one announcement and one sync_gave_up, naming the boards it
#      waited for and that it took its announcement back;
#  (f) init --journal 0: no journal, and events --since all says so;
#  (g) an application linked with the shared library alone (no smqctl):
#      its receiver's open and close, with its pid, in its board's
#      journal, read afterwards.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
need_command python3
[ -x "$B/tests/smqctl-hooked" ] ||
	skip "the hooked smqctl is not built ($B/tests/smqctl-hooked): run make first"
cp "$B/tests/smqctl-hooked" "$T/smqctl-hooked" && chmod 755 "$T/smqctl-hooked" || exit 1
H=$T/smqctl-hooked
export SMQ_WINDOW=shm:$SHM
unset SMQ_TEST_HOLD 2>/dev/null
row() { "$S" dump 2>/dev/null | grep -E "^$1 "; }
receiver_is() { row "$1" | grep -Eq "^$1 +[0-9]+ $2 "; }

# story FILE: one line per journal entry of an events --json FILE:
# "GENERATION BOARD SEQ EVENT [qQUEUE] [pid PID] [old_pid PID] [emptied N]"
story() {
	python3 - "$1" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("source") != "journal":
        continue
    w = [str(e.get("generation")), str(e.get("journal_board")),
         str(e.get("seq")), e["event"]]
    if "queue" in e:
        w.append("q%d" % e["queue"])
    for k in ("pid", "old_pid", "emptied"):
        if k in e:
            w.append("%s %s" % (k, e[k]))
    if e["event"].startswith("journal_"):
        w.append("count %s" % e["count"])
    print(" ".join(w))
EOF
}

# ---- (a) the story of two generations ----
"$S" init -n 2 --queues 4 --force >/dev/null || die "init"
"$S" dump --json >"$T/dump"
G=$(jnum generation "$T/dump")
[ -n "$G" ] || die "no generation in dump --json"
bg_start "$S" -b 1 sync -T 10
SYNC1=$pid
bg_start "$S" sync -T 10
SYNC0=$pid
wait_pid 10 $SYNC0 "board 0's sync" || failed "board 0's sync: exit $rc"
wait_pid 10 $SYNC1 "board 1's sync" || failed "board 1's sync: exit $rc"
bg_start "$S" -b 1 recv -q 1 -c 0 -T $((60 * slow))
RX1=$pid
within 10 receiver_is 1 asleep || failed "the first receiver never showed asleep"
kill -9 $RX1
wait $RX1 2>/dev/null
untrack $RX1
bg_start "$S" send -q 1 a
SA=$pid
wait_pid 10 $SA "send -q 1 a" || failed "send -q 1 a: exit $rc"
bg_start sh -c "exec \"$S\" -b 1 recv -q 1 -T 10 >\"$T/got\""
RX2=$pid
wait_pid 20 $RX2 "the second receiver" || failed "the second receiver: exit $rc"
[ "$(cat "$T/got")" = a ] || failed "the second receiver got '$(cat "$T/got")', not a"
bg_start "$S" send -q 3 x
SX=$pid
wait_pid 10 $SX "send -q 3 x"
bg_start "$S" send -q 3 y
SY=$pid
wait_pid 10 $SY "send -q 3 y"
"$S" clear -q 3 --force >/dev/null || failed "clear -q 3"
bg_start "$S" send -q 2 b
SB=$pid
wait_pid 10 $SB "send -q 2 b"
"$S" init -n 2 --queues 4 --force >/dev/null || failed "the second init"
"$S" events --since all --json -T 1 >"$T/ev" || failed "events --since all: exit $?"
story "$T/ev" >"$T/story"
G2=$((G + 1))
# what the steps above did, board by board (a sync's announcer is the
# sync itself; sender_gone of a send, receiver_gone of a recv: they closed)
python3 - "$T/story" "$G" "$SYNC0" "$SYNC1" "$RX1" "$SA" "$RX2" "$SX" "$SY" "$SB" >"$T/diff" <<'EOF'
import sys
story = [l.split(" ") for l in open(sys.argv[1]).read().splitlines()]
g, sync0, sync1, rx1, sa, rx2, sx, sy, sb = sys.argv[2:]
g2 = str(int(g) + 1)
want = [
    (g, "0", "generation", None), (g, "0", "board_announced", sync0),
    (g, "0", "system_ready", sync0),
    (g, "0", "sender_attached", sa), (g, "0", "sender_gone", sa),
    (g, "0", "sender_attached", sx), (g, "0", "sender_gone", sx),
    (g, "0", "sender_attached", sy), (g, "0", "sender_gone", sy),
    (g, "0", "queue_cleared", None),
    (g, "0", "sender_attached", sb), (g, "0", "sender_gone", sb),
    (g, "1", "board_announced", sync1),
    (g, "1", "receiver_attached", rx1),
    (g, "1", "takeover", rx2), (g, "1", "receiver_attached", rx2),
    (g, "1", "receiver_gone", rx2),
    (g2, "0", "generation", None), (g2, "0", "queue_emptied", None),
]
seq = {}
bad = []
if len(story) != len(want):
    bad.append("%d entries, %d wanted" % (len(story), len(want)))
for got, (wg, wb, wev, wpid) in zip(story, want):
    line = " ".join(got)
    seq[wb] = seq.get(wb, 0) + 1
    if got[0] != wg or got[1] != wb or got[3] != wev:
        bad.append("'%s', wanted generation %s board %s %s" % (line, wg, wb, wev))
    elif got[2] != str(seq[wb]):
        bad.append("'%s': sequence %s wanted" % (line, seq[wb]))
    elif wpid and "pid " + wpid not in line:
        bad.append("'%s': pid %s wanted" % (line, wpid))
for l in story:
    line = " ".join(l)
    if l[3] == "takeover" and "old_pid " + rx1 not in line:
        bad.append("'%s': taken from the killed %s" % (line, rx1))
    if l[3] == "queue_cleared" and not ("q3" in line and "emptied 2" in line):
        bad.append("'%s': queue 3's 2 messages wanted" % line)
    if l[3] == "generation" and l[0] == g2 and "emptied 1" not in line:
        bad.append("'%s': 1 message emptied wanted" % line)
    if l[3] == "queue_emptied" and not ("q2" in line and "emptied 1" in line):
        bad.append("'%s': queue 2's 1 message wanted" % line)
bad and print("\n".join(bad))
EOF
[ -s "$T/diff" ] &&
	failed "the story read afterwards: $(cat "$T/diff"); it was: $(cat "$T/story")" ||
	ok "a watcher after the fact reads the two generations' story, board by board, pids and counts"
grep -q '"source": "journal"' "$T/ev" && ! grep -q '"source": "observed"' "$T/ev" ||
	failed "events --since all -T 1 on a window at rest: $(grep -c observed "$T/ev") observed events"

# ---- (b) a watcher stopped while 40 entries go into 16 slots ----
"$S" init -n 2 --queues 2 --journal 16 --force >/dev/null || die "init --journal 16"
bg_start sh -c "exec \"$S\" events --since all --json >\"$T/ev2\""
EV=$pid
wait_line 10 "$T/ev2" '"event": "generation"' || failed "the watcher never read the init"
kill -STOP $EV
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	"$S" send -q 1 "m$i" >/dev/null || failed "send m$i"
done
kill -CONT $EV
wait_line 10 "$T/ev2" '"event": "journal_lost"' || failed "the watcher never said entries lost"
within 10 sh -c "[ \$(grep -c '\"event\": \"sender_' \"$T/ev2\") -ge 16 ]"
stop_pid 10 $EV "the watcher"
story "$T/ev2" >"$T/story2"
python3 - "$T/story2" >"$T/diff" <<'EOF'
import sys
s = [l.split(" ") for l in open(sys.argv[1]).read().splitlines()]
bad = []
kinds = [l[3] for l in s]
want = ["generation", "journal_lost"] + ["sender_attached", "sender_gone"] * 8
if kinds != want:
    bad.append("kinds %s" % kinds)
else:
    if "count 24" not in " ".join(s[1]):
        bad.append("lost: '%s', 24 wanted" % " ".join(s[1]))
    if [int(l[2]) for l in s[2:]] != list(range(26, 42)):
        bad.append("sequences %s, 26..41 wanted" % [l[2] for l in s[2:]])
bad and print("\n".join(bad))
EOF
[ -s "$T/diff" ] &&
	failed "a paused watcher: $(cat "$T/diff"); it read: $(cat "$T/story2")" ||
	ok "a watcher paused over 40 entries of a 16-entry journal: exactly 24 lost, then the 16 in order"

# every key printed is one smqctl(1) describes, of every event or of one
# from a journal
PYTHONPATH=$ROOT/tests/lib python3 - "$T/ev" "$T/ev2" >"$T/keys" 2>&1 <<'EOF'
import json, sys
from json_keys import blocks
b = blocks("man/smqctl.1")
known = b.get("events", set()) | b.get("events from a journal", set())
printed = set()
for f in sys.argv[1:]:
    for l in open(f):
        printed |= set(json.loads(l))
if printed - known:
    print("printed but not in smqctl(1): %s" % sorted(printed - known))
EOF
[ -s "$T/keys" ] && failed "events --json keys: $(cat "$T/keys")" ||
	ok "every key events --json printed is in smqctl(1)"

# ---- (c) a writer killed mid-entry ----
"$S" init -n 2 --queues 2 --force >/dev/null || die "init for (c)"
bg_start sh -c "exec \"$S\" events --since all --json >\"$T/ev3\""
EV=$pid
bg_start env SMQ_TEST_HOLD="journal_writing:$T/held" "$H" send -q 1 lost
HELD=$pid
wait_for 10 "the send held at journal_writing" test -s "$T/held"
kill -9 $HELD
wait $HELD 2>/dev/null
untrack $HELD
bg_start "$S" send -q 1 after
SAFTER=$pid
wait_pid 10 $SAFTER "send after" || failed "the send after the killed one: exit $rc"
wait_line 10 "$T/ev3" '"event": "journal_abandoned"' || failed "the abandoned entry never said"
wait_line 10 "$T/ev3" "\"pid\": $SAFTER" || failed "the entries after the abandoned one never read"
"$S" -b 1 recv -q 1 -T 5 >"$T/got3" || failed "recv after the killed send"
stop_pid 10 $EV "the watcher"
story "$T/ev3" >"$T/story3"
# the held entry is the killed send's first (its opening); the next
# send's own follow it
python3 - "$T/story3" "$SAFTER" >"$T/diff" <<'EOF'
import sys
s = [l.split(" ") for l in open(sys.argv[1]).read().splitlines()]
after = sys.argv[2]
bad = []
kinds = [l[3] for l in s]
# the init's: its generation, and what it emptied (20 messages of (b))
if kinds[:3] != ["generation", "queue_emptied", "journal_abandoned"] or s[2][2] != "3":
    bad.append("first %s, wanted generation, queue_emptied, then journal_abandoned at 3" % [" ".join(l) for l in s[:3]])
later = [l for l in s[3:] if "pid " + after in " ".join(l)]
if not later or int(later[0][2]) != 4 or later[0][3] not in ("sender_attached", "takeover"):
    bad.append("the next send's entries: %s, from sequence 4" % [" ".join(l) for l in later])
bad and print("\n".join(bad))
EOF
[ -s "$T/diff" ] &&
	failed "a writer killed mid-entry: $(cat "$T/diff"); read: $(cat "$T/story3")" ||
	ok "a writer killed mid-entry: abandoned, and the journal goes on after it"
[ "$(cat "$T/got3")" = after ] ||
	failed "after the killed send, recv got '$(cat "$T/got3")', not the next send's"

# ---- (d) re-formatted in another shape under a following watcher ----
bg_start sh -c "exec \"$S\" events --since all --json >\"$T/ev4\""
EV=$pid
wait_line 10 "$T/ev4" '"event": "generation"' || failed "the (d) watcher never read the init"
"$S" init -n 2 --queues 3 --force >/dev/null || failed "init --queues 3"
wait_line 10 "$T/ev4" '"event": "journal_restarted"' &&
	within 10 sh -c "[ \$(grep -c '\"event\": \"generation\"' \"$T/ev4\") -eq 2 ]" &&
	ok "a re-formatted window: the watcher says the journal started again, and reads the new init" ||
	failed "re-formatted under a watcher: $(grep -o '"event": "[a-z_]*"' "$T/ev4" | tr '\n' ' ')"
stop_pid 10 $EV "the watcher"

# ---- (e) syncs that give up ----
"$S" init -n 3 --queues 2 --force >/dev/null || failed "init for (e)"
"$S" -b 1 sync -T 0.3 >/dev/null 2>&1 && failed "board 1's sync alone did not time out"
"$S" sync -T 0.3 >/dev/null 2>&1 && failed "board 0's sync alone did not time out"
"$S" events --since all --json -T 1 >"$T/ev5" || failed "events (e): exit $?"
python3 - "$T/ev5" >"$T/diff" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if '"journal"' in l]
bad = []
for b, missing in ((1, [0, 2]), (0, [1, 2])):
    mine = [(e["event"], e.get("missing"), e.get("withdrew")) for e in ev
            if e["journal_board"] == b and e["event"] != "generation"]
    if mine != [("board_announced", None, None),
                ("sync_gave_up", missing, True)]:
        bad.append("board %d: %s" % (b, mine))
bad and print("; ".join(bad))
EOF
[ -s "$T/diff" ] && failed "syncs that gave up: $(cat "$T/diff")" ||
	ok "a sync that times out: one announcement, one sync_gave_up naming whom it waited for"

# ---- (g) an application linked with libsmq alone ----
# Its steps are journaled by the library, not by smqctl: a watcher after
# the fact reads its receiver open and close with its pid, and the sends.
A=$B/tests/journal_app
if [ -x "$A" ]; then
	"$S" init -n 2 --queues 2 --force >/dev/null || failed "init for (g)"
	bg_start sh -c "exec \"$A\" \"shm:$SHM\" 1 1 2 >\"$T/app\" 2>&1"
	APP=$pid
	within 10 receiver_is 1 asleep || failed "the application's receiver never showed asleep"
	"$S" send -q 1 one >/dev/null && "$S" send -q 1 two >/dev/null || failed "sends to the application"
	wait_pid 10 $APP "the application" || failed "the application: exit $rc: $(cat "$T/app")"
	"$S" events --since all --json -T 1 >"$T/ev7" || failed "events (g): exit $?"
	story "$T/ev7" | awk '$2 == 1' >"$T/story7"
	got=$(awk '{ print $4, $5, $6, $7 }' "$T/story7" | tr '\n' ';')
	[ "$got" = "receiver_attached q1 pid $APP;receiver_gone q1 pid $APP;" ] &&
	[ "$(cat "$T/app")" = "$(printf 'one\ntwo')" ] &&
		ok "an application on libsmq alone: its receiver's open and close, with its pid, read afterwards" ||
		failed "the application's journal (board 1): '$got' (pid $APP); it printed: $(cat "$T/app")"
else
	failed "$A is not built: run make tests"
fi

# ---- (f) no journal ----
"$S" init -n 2 --queues 2 --journal 0 --force >/dev/null || failed "init --journal 0"
"$S" dump --json | grep -q '"journal_slots": 0' || failed "dump --json after --journal 0: $("$S" dump --json | grep journal)"
run events --since all -T 1
[ "$rc" -ne 0 ] && grep -qi "journal" "$T/err" &&
	ok "events --since all without a journal: exit $rc, '$(head -n 1 "$T/err")'" ||
	failed "events --since all without a journal: exit $rc, $(cat "$T/err")"
finish 8
