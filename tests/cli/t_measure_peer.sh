#!/bin/sh
# pingpong and bench when the other side stops answering (-T), and when
# the side that drives is killed.
#  (a) a forked peer stopped (SIGSTOP) mid-run, -T 1: pingpong exits 1
#      naming board 1 and the 1 s it waited; the stopped peer does not
#      outlive the run;
#  (b) bench likewise;
#  (c) --peer on board 0 with no one serving, -T 1: exit 1, board 1 did
#      not answer within 1 s (starting);
#  (d) --peer on board 1 (serving) with no one driving, -T 1: exit 1,
#      board 0 sent nothing for 1 s;
#  (e) -T 0 and a bad duration are refused (exit 2, the option named);
#  (f) the driving pingpong killed (SIGKILL): its peer process ends at
#      once (the kernel tells it), not after its wait for a message, and
#      gives its queue up (no receiver left, none dead); the next
#      pingpong runs (after --drain of what was left).
# Waits are bounded; no duration is asserted.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
need_command python3 "it reads dump's JSON"
export SMQ_WINDOW=shm:$SHM
"$S" init -n 2 --force >/dev/null || die "init"
# child_of PID: the peer process a run forked
child_of() { pgrep -P "$1" | head -n 1; }
gone() { ! kill -0 "$1" 2>/dev/null; }
# taken: the messages the peer (board 1) has taken on its diagnostic
# queue, 3 (the window's queues 0-3: 2 and 3 are the diagnostic ones of
# -n 2); moving N: more than N
taken() {
	"$S" --json dump 2>/dev/null | python3 -c 'import json, sys
print(json.load(sys.stdin)["queue_table"][3]["received"])'
}
moving() { [ "$(taken)" -gt "$1" ] 2>/dev/null; }

# ---- (a), (b): a stopped peer ----
for cmd in pingpong bench; do
	before=$(taken)
	bg_start sh -c "exec \"$S\" $cmd --drain -c 100000000 -z 64 -T 1 >\"$T/out.$cmd\" 2>\"$T/err.$cmd\""
	RUN=$pid
	within 10 sh -c "[ -n \"\$(pgrep -P $RUN)\" ]" || failed "$cmd: no peer process"
	PEER=$(child_of $RUN)
	# the peer running its rounds: its queue's counts move
	wait_for 10 "$cmd's peer to take messages" moving "$before"
	kill -STOP "$PEER"
	wait_pid 8 $RUN "$cmd with its peer stopped"
	[ "$rc" -eq 1 ] && grep -q "$cmd: board 1 did not answer within 1 s" "$T/err.$cmd" &&
		ok "$cmd -T 1, peer stopped: exit 1, '$(tail -n 1 "$T/err.$cmd")'" ||
		failed "$cmd -T 1, peer stopped: exit $rc: $(cat "$T/err.$cmd")"
	within 5 gone "$PEER" ||
		{ failed "$cmd: the stopped peer $PEER outlived its run"; kill -9 "$PEER"; }
done

# ---- (c), (d): --peer with nobody on the other side ----
run pingpong --peer -T 1 -z 0 -c 10
[ "$rc" -eq 1 ] && grep -q "starting: board 1 did not answer within 1 s" "$T/err" &&
	ok "--peer on board 0, nobody serving: '$(tail -n 1 "$T/err")'" ||
	failed "--peer on board 0, nobody serving: exit $rc, $(cat "$T/err")"
run -b 1 pingpong --peer --drain -T 1
[ "$rc" -eq 1 ] && grep -q "board 0 sent nothing for 1 s: stopped serving" "$T/err" &&
	ok "--peer on board 1, nobody driving: '$(tail -n 1 "$T/err")'" ||
	failed "--peer on board 1, nobody driving: exit $rc, $(cat "$T/err")"

# ---- (e) bad -T ----
run pingpong -T 0
[ "$rc" -eq 2 ] && grep -q -- "--timeout needs a time greater than 0" "$T/err" ||
	failed "pingpong -T 0: exit $rc, $(cat "$T/err")"
run bench -T 2x
[ "$rc" -eq 2 ] && grep -q -- "--timeout: unknown unit in '2x'" "$T/err" &&
	ok "-T 0 and -T 2x refused, naming --timeout" ||
	failed "bench -T 2x: exit $rc, $(cat "$T/err")"

# ---- (f) the driver killed ----
bg_start sh -c "exec \"$S\" pingpong --drain -c 100000000 -z 0 >/dev/null 2>\"$T/err.f\""
RUN=$pid
within 10 sh -c "[ -n \"\$(pgrep -P $RUN)\" ]" || failed "pingpong (f): no peer process"
before=$(taken)
PEER=$(child_of $RUN)
wait_for 10 "pingpong (f)'s peer to take messages" moving "$before"
kill -9 $RUN
wait $RUN 2>/dev/null
untrack $RUN
# within 5 s: before the 10 s a peer waits for a message could end it
within 5 gone "$PEER" || { failed "the peer $PEER of a killed pingpong still runs after 5 s"; kill -9 "$PEER"; }
# the diagnostic queues of -n 2 are 2 (board 0's) and 3 (board 1's):
# board 0's receiver died with its process; board 1's (the peer's) was
# given up: the dump's receiver states, queue by queue
"$S" --json dump >"$T/dump.f" || failed "dump after (f)"
states=$(sed -n 's/.*"receiver_state": *"\([a-z]*\)".*/\1/p' "$T/dump.f" | tr '\n' ' ')
[ "$states" = "none none dead none " ] ||
	failed "after the driver's kill, receivers of queues 0-3: $states(want queue 3's none: the peer gave its queue up)"
run pingpong --drain -c 100 -z 0
[ "$rc" -eq 0 ] && ok "a killed pingpong's peer ended, its queue given up; the next pingpong runs" ||
	failed "the next pingpong: exit $rc, $(cat "$T/err")"
finish 6
