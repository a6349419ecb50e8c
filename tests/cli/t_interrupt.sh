#!/bin/sh
# Ctrl-C and SIGTERM end the commands that wait, asleep in the library or
# not, as they always did: the library's waits now end on a signal
# handler (-EINTR), and each command says what it said before.
#  - recv asleep on a queue, and on a group (one doorbell for the set):
#    SIGINT exits 130, SIGTERM 143, the queue's receiver given up, the
#    next recv takes what came;
#  - sync on board 0 waiting for a board that never comes: the signal
#    ends it; the boards then synchronise;
#  - pingpong whose sides sleep: Ctrl-C prints the rows measured,
#    "(interrupted)", exit 1; a pingpong half of its own (--peer) that
#    waits for its peer: "interrupted", exit 1.
# No time is asserted: each wait is bounded and says what it waited for.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
export SMQ_WINDOW=shm:$SHM
row() { "$S" dump 2>/dev/null | grep -E "^$1 "; }
receiver_is() { row "$1" | grep -Eq "^$1 +[0-9]+ $2 "; }
until_ok() { within 20 "$@" >/dev/null 2>&1; }

"$S" init -n 2 --queues 4 --group pair=0,2 --force >/dev/null || die "init"

# ---- recv asleep: SIGINT, SIGTERM ----
# recv_stopped SIGNAL RC WHAT ARGS...: a recv of ARGS on board 0 asleep,
# then SIGNAL: it exits RC and gives its queues up
recv_stopped() {
	sig=$1 want=$2 what=$3
	shift 3
	bg_start "$S" recv "$@" -c 0 -T 600
	RX=$pid
	until_ok receiver_is "$q" asleep || failed "$what: never showed asleep: $(row "$q")"
	stop_pid 10 $RX "$what, sent SIG$sig" "$sig"
	case_begin
	[ "$rc" = "$want" ] || no "exit $rc, expected $want"
	until_ok receiver_is "$q" none || no "queue $q's receiver: $(row "$q")"
	verdict "$what: SIG$sig ends it (exit $want), the queue given up"
}
q=0 recv_stopped INT 130 "recv -q 0" -q 0
q=0 recv_stopped TERM 143 "recv -q 0" -q 0
q=2 recv_stopped INT 130 "recv --group pair" --group pair
"$S" send -q 0 after >/dev/null || failed "send after"
"$S" recv -q 0 -T 10 >"$T/got" 2>&1 && grep -qx after "$T/got" &&
	ok "the next recv takes what came: $(cat "$T/got")" ||
	failed "the next recv: $(cat "$T/got")"

# ---- sync waiting for a board that never comes ----
# (a command a script starts in the background has SIGINT ignored, as a
# shell without job control leaves it: given back to it, as a terminal's
# Ctrl-C finds it)
dfl_int='import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])'
for sig in INT TERM; do
	bg_start python3 -c "$dfl_int" "$S" sync -T 60
	SY=$pid
	# in its wait: board 0 announced, and the sync napping between looks
	until_ok sh -c "\"$S\" dump 2>/dev/null | grep -Eq '^ *0 +(initialized|announced)'" ||
		failed "board 0 not seen announced (dump: $("$S" dump 2>&1 | sed -n '/board/,+3p' | head -n 4))"
	wait_for 20 "sync on board 0 to nap between its looks" napping $SY
	stop_pid 10 $SY "sync on board 0, sent SIG$sig" $sig
	[ "$rc" -gt 128 ] && ok "sync waiting for board 1: SIG$sig ends it (exit $rc)" ||
		failed "sync waiting for board 1: SIG$sig, exit $rc"
done
bg_start "$S" -b 1 sync -T 20
"$S" sync -T 20 >/dev/null 2>&1 && wait_pid 20 $pid "board 1's sync" && [ "$rc" = 0 ] &&
	ok "the boards then synchronise" || failed "the boards' sync afterwards (board 1 exit $rc)"

# ---- pingpong: sides that sleep, Ctrl-C prints what was measured ----
bg_start sh -c "exec \"$S\" pingpong --wait sleep --duration 60 --size 0 >\"$T/pp.txt\" 2>\"$T/pp.err\""
PP=$pid
# its round trips under way: a diagnostic queue has received messages
pp_moving() {
	"$S" dump 2>/dev/null | awk '/^diagnostic queues/ { d = 1; next }
		d && $1 ~ /^[0-9]+$/ && $(NF - 3) > 0 { f = 1 } END { exit !f }'
}
wait_for 30 "pingpong --wait sleep to bounce messages" pp_moving
sleep 2  # on purpose: rows measured before the Ctrl-C
stop_pid 30 $PP "pingpong --wait sleep, sent SIGINT" INT
if [ "$rc" = 1 ] && grep -q "(interrupted)" "$T/pp.txt" &&
   grep -qE '^ +0 +[0-9]+ ' "$T/pp.txt"; then
	ok "pingpong --wait sleep: Ctrl-C prints the rows measured, exit 1"
else
	failed "pingpong --wait sleep: Ctrl-C, exit $rc"
	sed 's/^/    /' "$T/pp.txt" "$T/pp.err"
fi

# a half of its own waits for its peer, which never comes
bg_start sh -c "exec \"$S\" -b 1 pingpong --peer --wait sleep --size 0 >\"$T/peer.txt\" 2>\"$T/peer.err\""
PE=$pid
until_ok receiver_is 5 asleep || note "the peer half's queue not seen asleep: $(row 5)"
stop_pid 30 $PE "pingpong --peer on board 1, sent SIGINT" INT
if [ "$rc" = 1 ] && grep -q "interrupted" "$T/peer.err"; then
	ok "pingpong --peer: Ctrl-C ends it, \"$(cat "$T/peer.err")\""
else
	failed "pingpong --peer: Ctrl-C, exit $rc"
	sed 's/^/    /' "$T/peer.txt" "$T/peer.err"
fi
"$S" dump >/dev/null 2>"$T/err" && ok "the window is valid afterwards" ||
	failed "dump after the runs: $(cat "$T/err")"

finish 10
