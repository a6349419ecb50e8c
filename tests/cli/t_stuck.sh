#!/bin/sh
# A receiver that is stuck, not dead: what every tool must say.
#  - a receiver stopped with SIGSTOP while senders queue messages: check
#    --stall 1s fails naming the queue, the receiver's pid, that it is
#    stopped, how long and how many wait; dump and top --once mark the
#    queue stalled; a long-running metrics' gauge of the seconds the
#    queue held messages with its bottom unmoved passes 1;
#  - after SIGCONT every message arrives, once each;
#  - a slow receiver (a message every half second) is never stalled at
#    --stall 2s.
# No time is asserted: waits are bounded, and what is checked is what the
# tools say once they said it.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
export SMQ_WINDOW=shm:$SHM
RT=$((60 * slow))
row() { "$S" dump 2>/dev/null | grep -E "^$1 "; }
receiver_is() { row "$1" | grep -Eq "^$1 +[0-9]+ $2 "; }
until_ok() { within 10 "$@" >/dev/null 2>&1; }

"$S" init -n 2 --queues 2 --force >/dev/null || die "init"
bg_start "$S" -b 1 sync -T 10
"$S" sync -T 10 >/dev/null || failed "board 0's sync"
wait_pid 10 $pid "board 1's sync"

# ---- a receiver stopped behind queued messages ----
bg_start sh -c "exec \"$S\" -b 1 recv -q 1 -c 0 -T $RT >\"$T/got\""
RX=$pid
until_ok receiver_is 1 asleep || failed "the receiver never showed asleep"
kill -STOP $RX
for i in 1 2 3; do "$S" send -q 1 "m$i" || failed "send m$i"; done

run check --only receivers,full-queues,stalled --stall 1s
case_begin
want_rc 1
grep -Eq "^FAIL  stalled +.*queue 1 .*$RX.*stopped" "$T/out" ||
	no "no FAIL line naming queue 1, pid $RX and 'stopped'"
grep -Eq "^FAIL  stalled +.*3 messages" "$T/out" || no "the FAIL does not say 3 messages wait"
verdict "check --stall 1s fails naming the stalled queue: $(grep stalled "$T/out" | head -n 1)"

run --json dump --stall 1s
python3 - "$T/out" 1 <<'PY' && ok "dump --json: queue 1 stalled, its receiver stopped" || failed "dump --json: $(grep -E 'stall|stopped' "$T/out" | head -n 6)"
import json, sys
q = json.load(open(sys.argv[1]))["queue_table"][int(sys.argv[2])]
sys.exit(0 if q["stalled"] and q["stalled_ms"] >= 1000 and
         q["receiver_stopped"] and q["queued"] == 3 else 1)
PY
"$S" dump --stall 1s >"$T/out" 2>&1
grep -Eq '^1 +1 asleep.*stalled' "$T/out" && grep -q 'stopped' "$T/out" &&
	ok "dump: queue 1 marked stalled, its receiver stopped: $(grep -E '^1 ' "$T/out")" ||
	failed "dump does not mark queue 1: $(grep -E '^1 ' "$T/out")"

"$S" --json top --once --interval 0.1 --stall 1s >"$T/top.json" 2>&1
python3 - "$T/top.json" <<'PY' && ok "top --once: queue 1 stalled" || failed "top --once: $(grep -E 'stall' "$T/top.json" | head -n 4)"
import json, sys
t = json.load(open(sys.argv[1]))
q = [q for q in t["queue_table"] if q["queue"] == 1][0]
sys.exit(0 if q["stalled"] else 1)
PY

mkdir "$T/prom"
bg_start "$S" metrics --textfile "$T/prom" --interval 0.2
MX=$pid
gauge() {
	sed -n 's/^smq_queue_stalled_seconds{.*queue="1".*} \([0-9.]*\)$/\1/p' \
		"$T/prom"/*.prom 2>/dev/null | awk '$1 > 1 { f = 1 } END { exit !f }'
}
until_ok gauge && ok "metrics: smq_queue_stalled_seconds of queue 1 passed 1: $(grep 'stalled_seconds.*queue="1"' "$T/prom"/*.prom)" ||
	failed "metrics: $(grep stalled "$T/prom"/*.prom)"
kill $MX
wait_pid 10 $MX "metrics --textfile"

# ---- after SIGCONT, every message once ----
kill -CONT $RX
until_ok test "$(wc -l <"$T/got")" -ge 3
kill -INT $RX
wait_pid 10 $RX "the receiver, sent SIGINT"
[ "$(printf 'm1\nm2\nm3\n')" = "$(cat "$T/got")" ] &&
	ok "after SIGCONT every message arrived once" ||
	failed "after SIGCONT the receiver wrote: $(tr '\n' ' ' <"$T/got")"

# ---- a slow receiver is not stalled ----
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do "$S" send -q 1 "s$i" >/dev/null; done
# (the 0.5 s is the point, a pace: a receiver slow on purpose)
bg_start sh -c "while \"$S\" -b 1 recv -q 1 -c 1 -T 5 >>\"$T/slow\"; do sleep 0.5; done"
SLOW=$pid
run check --only stalled --stall 2s
case_begin
want_rc 0
grep -q '^PASS  stalled' "$T/out" || no "no PASS line for stalled"
verdict "check --stall 2s: a receiver taking one message per 0.5 s is not stalled"
run --json dump --stall 2s
python3 - "$T/out" <<'PY' && ok "dump --stall 2s: the slow queue is not stalled" || failed "dump --stall 2s: $(grep -E 'stall' "$T/out" | head -n 4)"
import json, sys
q = json.load(open(sys.argv[1]))["queue_table"][1]
sys.exit(0 if not q["stalled"] else 1)
PY
kill $SLOW 2>/dev/null
finish 8
