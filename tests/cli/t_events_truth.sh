#!/bin/sh
# smqctl events keeps up with the state: each case as an operator met it.
#  - a board whose receiver was killed and which synced again is said to be
#    back (it stayed "dead");
#  - a receiver that opened and closed between two looks is said attached
#    and closed (it stayed "attached");
#  - a clear of a full queue whose receiver died says the queue has room
#    and the dead receiver's claim is gone (it stayed "full", "dead");
#  - a stopped receiver behind a queued message: stopped, stalled, and once
#    it goes on, moving and running again;
#  - --until: exit 0 at once for a state that holds, 0 for an event that
#    comes, 3 when --timeout passes first; --board, --queue, --kind narrow;
#  - a closed output ends events with exit 0 and no message.
# The window keeps no journal (init --journal 0): these are what watchers
# see from their own looks (t_journal.sh: what journals say).
# Waits are bounded; no duration is asserted.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
export SMQ_WINDOW=shm:$SHM
RT=$((60 * slow))
row() { "$S" dump 2>/dev/null | grep -E "^$1 "; }
receiver_is() { row "$1" | grep -Eq "^$1 +[0-9]+ $2 "; }
until_ok() { within 10 "$@" >/dev/null 2>&1; }
# said FILE REGEX: the events in FILE come to hold a line matching REGEX
said() { within 10 grep -Eq -e "$2" "$1"; }

"$S" init -n 2 --queues 4 --force --journal 0 >/dev/null || die "init"
bg_start "$S" -b 1 sync -T 10
"$S" sync -T 10 >/dev/null || failed "board 0's sync"
wait_pid 10 $pid "board 1's sync"

# a watcher for the whole script: it looks every 2 s, so that what the
# steps below do between two of its looks is counted, not seen
bg_start sh -c "exec \"$S\" events --interval 2s --stall 1s >\"$T/slow\""
SLOWEV=$pid
bg_start sh -c "exec \"$S\" events --stall 1s >\"$T/ev\""
EV=$pid
until_ok test -e "$T/ev"

# ---- a board back from the dead ----
bg_start "$S" -b 1 recv -q 1 -c 0 -T $RT
RX=$pid
until_ok receiver_is 1 asleep || failed "the receiver never showed asleep"
kill -9 $RX
said "$T/ev" "board 1 dead" || failed "no board 1 dead: $(cat "$T/ev")"
"$S" -b 1 sync -T 10 >/dev/null || failed "board 1's sync again"
said "$T/ev" "board 1 back" &&
	ok "a board whose receiver was killed and which synced again is back: $(grep 'board 1 back' "$T/ev")" ||
	failed "board 1 is never said back: $(tail -n 3 "$T/ev")"

# ---- opened and closed between two looks of the slow watcher ----
"$S" send -q 3 one >/dev/null || failed "send on queue 3"
"$S" -b 1 recv -q 3 -T 5 >/dev/null || failed "recv on queue 3"
said "$T/slow" "queue 3: receiver closed the queue" &&
	grep -q "queue 3: receiver attached" "$T/slow" &&
	ok "between two looks: queue 3's receiver said attached, then closed" ||
	failed "the slow watcher: $(grep 'queue 3' "$T/slow")"

# ---- a clear of a full queue whose receiver died ----
bg_start "$S" -b 1 recv -q 1 -c 0 -T $RT
RX=$pid
until_ok receiver_is 1 asleep || failed "the second receiver never showed asleep"
kill -9 $RX
until_ok receiver_is 1 dead || failed "the second receiver never showed dead"
i=0
while "$S" send -q 1 -T 0 x >/dev/null 2>&1; do i=$((i + 1)); done
said "$T/ev" "queue 1 full" || failed "queue 1 never said full ($i sent)"
"$S" clear -q 1 --force >/dev/null || failed "clear -q 1 --force"
said "$T/ev" "queue 1 has room again" &&
	grep -q "queue 1: receiver closed the queue (pid $RX)" "$T/ev" &&
	ok "clear of a full queue with a dead receiver: room again, the claim gone" ||
	failed "after the clear: $(grep 'queue 1' "$T/ev" | tail -n 4)"

# ---- stopped, stalled, and going on ----
bg_start sh -c "exec \"$S\" -b 1 recv -q 1 -c 0 -T $RT >\"$T/got\""
RX=$pid
until_ok receiver_is 1 asleep || failed "the third receiver never showed asleep"
kill -STOP $RX
"$S" send -q 1 held >/dev/null || failed "send held"
said "$T/ev" "queue 1: receiver stopped" && said "$T/ev" "queue 1 stalled" &&
	ok "a stopped receiver: stopped, then stalled" ||
	failed "stopped: $(grep 'queue 1' "$T/ev" | tail -n 4)"
kill -CONT $RX
said "$T/ev" "queue 1 moves again" && said "$T/ev" "queue 1: receiver runs again" &&
	ok "it went on: moving and running again" ||
	failed "after SIGCONT: $(grep 'queue 1' "$T/ev" | tail -n 4)"

# ---- --until ----
run -b 1 events --until board_ready -T 10
case_begin
want_rc 0
want_out "board 1 ready (so at the first look)"
verdict "--until board_ready of a ready board: exit 0 at once"
run events --until board_dead -T 0.5
case_begin
want_rc 3
want_no_out
verdict "--until board_dead with none dying: exit 3 at --timeout"
bg_start sh -c "exec \"$S\" --json events --queue 2 --until receiver_attached -T $RT >\"$T/w.json\""
W=$pid
# the receiver attaches after the watcher's first look: an event that comes
wait_for 10 "the watcher's first look" napping $W
"$S" -b 0 send -q 2 -T 0 nothing >/dev/null 2>&1
bg_start "$S" recv -q 2 -c 0 -T $RT
R2=$pid
wait_pid 10 $W "events --until receiver_attached"
[ "$rc" = 0 ] && python3 - "$T/w.json" <<'PY' && ok "--until for an event that comes: exit 0, the event last" || failed "--until receiver_attached: exit $rc, $(cat "$T/w.json")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
last = lines[-1]
assert last["event"] == "receiver_attached" and last["queue"] == 2, last
assert "first look" not in last["text"], last
assert all(e.get("queue") == 2 for e in lines), lines
PY
kill $R2

# --kind and --board narrow what is printed
run -b 1 events --kind board_ready,board_gone --until board_ready -T 5
case_begin
want_rc 0
grep -qv "board 1" "$T/out" && no "an event not of board 1: $(grep -v 'board 1' "$T/out")"
grep -q "receiver" "$T/out" && no "a kind not asked for"
verdict "--board 1 --kind: only board 1's events of those kinds"
# the window's own events are every board's: a watcher of board 1 sees
# the window removed and made again
bg_start sh -c "exec \"$S\" -b 1 events --kind window_unreadable,window_readable,generation >\"$T/wb\""
WB=$pid
# (whether its first look comes before the removal or after, the window
# is said unreadable once)
rm -f "/dev/shm/$SHM"
said "$T/wb" "window cannot be read"
"$S" init -n 2 --queues 4 --journal 0 >/dev/null || failed "init again"
said "$T/wb" "window can be read again" &&
	ok "-b 1 events: the window unreadable and readable again, every board's" ||
	failed "-b 1 events of the window going and coming back: $(cat "$T/wb")"
stop_pid 10 $WB "the watcher of board 1"
run events --kind nonsense
case_begin
want_rc 2
want_err "no event is called 'nonsense'"
verdict "--kind of an unknown name is a usage error"

# ---- a closed output ----
( "$S" events; echo $? >"$T/pipe0.rc" ) 2>"$T/pipe.err" | true
[ "$(cat "$T/pipe0.rc")" = 0 ] && [ ! -s "$T/pipe.err" ] &&
	ok "events | true: exit 0, nothing on stderr" ||
	failed "events | true: exit $(cat "$T/pipe0.rc"), $(cat "$T/pipe.err")"
( "$S" events --until board_dead; echo $? >"$T/pipe.rc" ) 2>"$T/pipe.err" | true
[ "$(cat "$T/pipe.rc")" = 1 ] && [ ! -s "$T/pipe.err" ] &&
	ok "events --until | true: exit 1 (the event did not come), nothing said" ||
	failed "events --until | true: exit $(cat "$T/pipe.rc"), $(cat "$T/pipe.err")"
kill $EV $SLOWEV 2>/dev/null
finish 13
