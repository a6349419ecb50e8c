#!/bin/sh
# One truth about who is at work: each case as a user met it, with the
# commands a user runs (smqctl only), and what every tool must now say.
#  - a receiver killed with SIGKILL: dump and top say it died (not
#    asleep), metrics too, and a send after it rings no doorbell;
#  - a recv ended by Ctrl-C closes its queue: none, not dead;
#  - init refuses a receiver at work on a board whose sync gave up, and
#    board 0's own receiver, naming each; the receiver goes on;
#  - clear --queue 0 leaves queue 1's receiver, the boards and the
#    generation as they were;
#  - a board whose sync gave up is absent, and board 0's sync does not
#    count it;
#  - a second sync of a board whose sync runs is refused with its pid;
#  - a board whose processes all ended is "at rest", not "dead".
# Every wait is bounded.  Exit 0 pass, 1 fail.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
export SMQ_WINDOW=shm:$SHM
bg() { bg_start "$@"; }
# until COMMAND succeeds, 10 s at most; 1 if it never did
until_ok() { within 10 "$@" >/dev/null 2>&1; }
# a receiver's wait for each message
RT=$((60 * slow))
row() { "$S" dump 2>/dev/null | grep -E "^$1 "; }
receiver_is() { row "$1" | grep -Eq "^$1 +[0-9]+ $2 "; }

# ---- a receiver killed with SIGKILL ----
"$S" init -n 2 --queues 2 --force >/dev/null || failed "init"
bg "$S" -b 1 recv -q 1 -c 100 -T $RT
RX=$!
until_ok receiver_is 1 asleep || failed "the receiver never showed asleep"
kill -9 $RX
until_ok receiver_is 1 dead && ok "dump: a receiver killed with SIGKILL is dead, not asleep: $(row 1)" ||
	failed "dump after SIGKILL: $(row 1)"
"$S" --json top --once --interval 0.1 >"$T/top.json"
grep -q '"receiver_state": "dead"' "$T/top.json" &&
	ok "top --once: the receiver is dead" || failed "top --once: $(grep receiver_state "$T/top.json")"
"$S" metrics | grep -q '^smq_queue_receiver_state{.*queue="1".*state="dead"} 1$' &&
	ok "metrics: smq_queue_receiver_state dead" || failed "metrics do not say the receiver died"
"$S" send -q 1 after || failed "send after the kill"
"$S" --json -v dump >"$T/d.json"
python3 - "$T/d.json" <<'PY' && ok "a send after the kill rang no doorbell (sleeping false, doorbells 0)" || failed "a send rang the dead receiver's doorbell"
import json, sys
q = json.load(open(sys.argv[1]))["queue_table"][1]
sys.exit(0 if q["doorbells"] == 0 and not q["sleeping"] and q["queued"] == 1 else 1)
PY

# ---- recv ended by Ctrl-C ----
bg "$S" -b 1 recv -q 1 -c 100 -T $RT >/dev/null
RX=$!
until_ok receiver_is 1 asleep || failed "the second receiver never showed asleep"
kill -INT $RX
wait_pid 10 $RX "the receiver, sent SIGINT"
until_ok receiver_is 1 none && [ $rc = 130 ] &&
	ok "a recv ended by Ctrl-C closed its queue (exit $rc): $(row 1)" ||
	failed "recv after Ctrl-C: exit $rc, $(row 1)"

# ---- init beside a receiver on a board whose sync gave up ----
"$S" init -n 3 --queues 4 --force >/dev/null || failed "init -n 3"
"$S" -b 1 sync -T 0.5 >/dev/null 2>&1 && failed "board 1's sync did not time out alone"
"$S" --json dump >"$T/d.json"
grep -q '"state": "absent"' "$T/d.json" || failed "board 1's sync gave up but did not take its announcement back"
bg "$S" -b 1 recv -q 1 -c 100 -T 20 >/dev/null
RX=$!
until_ok receiver_is 1 asleep || failed "the receiver of queue 1 never showed"
"$S" init -n 3 --queues 4 >"$T/out" 2>"$T/err"
rc=$?
if [ $rc = 1 ] && grep -q "board 1 pid $RX .*(receiver of queue 1)" "$T/err" &&
   kill -0 $RX 2>/dev/null; then
	ok "init refuses a receiver at work on a board whose sync gave up: $(cat "$T/err")"
else
	failed "init beside a receiver: exit $rc, $(cat "$T/out" "$T/err")"
fi
bg "$S" recv -q 0 -c 100 -T 20 >/dev/null
R0=$!
until_ok receiver_is 0 asleep || failed "board 0's receiver never showed"
"$S" init -n 3 --queues 4 >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 1 ] && grep -q "board 0 pid $R0 .*(receiver of queue 0)" "$T/err" &&
	ok "init refuses board 0's own receiver too" ||
	failed "init beside board 0's receiver: exit $rc, $(cat "$T/err")"

# ---- clear of one queue beside another's receiver ----
gen=$("$S" --json dump | sed -n 's/^  "generation": \([0-9]*\),$/\1/p')
"$S" clear -q 2 >"$T/out" 2>"$T/err" || failed "clear -q 2: $(cat "$T/err")"
gen2=$("$S" --json dump | sed -n 's/^  "generation": \([0-9]*\),$/\1/p')
"$S" send -q 1 still >/dev/null || failed "send to queue 1 after the clear"
if [ "$gen" = "$gen2" ] && kill -0 $RX 2>/dev/null && receiver_is 1 asleep &&
   receiver_is 0 asleep; then
	ok "clear --queue 2: generation $gen goes on, the receivers of queues 0 and 1 too"
else
	failed "clear --queue 2: generation $gen -> $gen2, $(row 0); $(row 1)"
fi
"$S" clear -q 1 >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 1 ] && grep -q "processes are at work on queue 1: board 1 pid $RX" "$T/err" &&
	ok "clear --queue 1 refuses its receiver: $(cat "$T/err")" ||
	failed "clear --queue 1 beside its receiver: exit $rc, $(cat "$T/err")"
kill -INT $RX $R0
wait_pid 10 $RX "the receiver of queue 1, sent SIGINT"
wait_pid 10 $R0 "the receiver of queue 0, sent SIGINT"

# ---- a board whose sync gave up is not counted ----
"$S" init -n 2 --queues 2 >/dev/null || failed "init -n 2 (nobody at work)"
"$S" -b 1 sync -T 0.3 >/dev/null 2>&1
"$S" sync -T 1 >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 1 ] && grep -q "board 1 never announced itself" "$T/err" &&
	ok "board 0's sync does not count a board whose sync gave up: $(cat "$T/err")" ||
	failed "board 0's sync after board 1 gave up: exit $rc, $(cat "$T/out" "$T/err")"

# ---- one process announces a board ----
bg "$S" -b 1 sync -T 20 >/dev/null
S1=$!
until_ok sh -c "'$S' --json dump | grep -q '\"announcer_pid\": $S1'" ||
	failed "board 1's sync never showed as its announcer"
"$S" -b 1 sync -T 2 >"$T/out" 2>"$T/err"
rc=$?
[ $rc = 1 ] && grep -q "board 1 is being announced by pid $S1" "$T/err" &&
	ok "a second sync of board 1 is refused, naming the first: $(cat "$T/err")" ||
	failed "a second sync of board 1: exit $rc, $(cat "$T/out" "$T/err")"
"$S" sync -T 10 >/dev/null || failed "board 0's sync with board 1's first sync"
wait_pid 20 $S1 "board 1's first sync" || failed "board 1's first sync"
"$S" -b 1 sync -T 2 >/dev/null && ok "once ready, another sync of board 1 returns at once" ||
	failed "a sync of a ready board 1"

# ---- boards whose processes all ended ----
"$S" --json dump >"$T/d.json"
python3 - "$T/d.json" <<'PY' && ok "boards ready with no process attached are at rest, not dead" || failed "boards after their syncs ended: $(grep -E '"(activity|alive)"' "$T/d.json")"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if all(b["state"] == "ready" and b["activity"] == "none"
                  for b in d["board_table"]) else 1)
PY
"$S" dump | grep -q "at rest (no process attached: normal once ready)" &&
	ok "dump says what at rest means" || failed "dump does not explain at rest"
finish 14
