#!/bin/sh
# smqctl end to end: every command's normal path over a window shared by two
# boards run as separate processes, a table of bad invocations (exit code,
# message, empty stdout, window bytes unchanged), and sync timeouts.
# Windows are files in a fresh temporary directory, plus one shm window.
# Prints "ok"/"FAIL" per case and a summary; exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
# A wrapped smqctl (SMQCTL_WRAP) is slow: the timeouts of the commands
# that wait while others run, and the bounds on how soon a command gives
# up, are then slow times longer.
need_smqctl
# a bad window spec's file, should smqctl make it
at_cleanup 'rm -f "/dev/$SHM-x"'
cd "$T" || exit 1  # anything created by mistake lands in $T

W=$T/w
export SMQ_WINDOW="file:$W"
unset SMQ_DEBUG 2>/dev/null
# every recv that would wait for a message waits at most this long
R=$((10 * slow))

if command -v python3 >/dev/null 2>&1 && python3 -c '' 2>/dev/null; then
	PY=1
else
	PY=0
	note "python3 not found: JSON parse sub-checks skipped"
fi

# json FILE PYTHON-EXPR: d is the parsed document (true when python3 absent)
json() {
	[ "$PY" = 1 ] || return 0
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2" 2>"$T/pyerr" ||
		no "JSON check failed: $2 ($(head -c 200 "$T/pyerr"))"
}
# jsonl FILE PYTHON-EXPR: d is the list of objects, one a line
jsonl() {
	[ "$PY" = 1 ] || return 0
	python3 -c 'import json,sys
d=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2" 2>"$T/pyerr" ||
		no "JSON check failed: $2 ($(head -c 200 "$T/pyerr"))"
}
fill() { # fill() QUEUE [SPEC]: messages waiting in QUEUE (all lanes), from
	# the text dump's QUEUED column (after RECEIVER, "BOARD WORD", and FILL)
	"$S" -w "${2:-file:$W}" dump 2>/dev/null |
		sed -En "s|^$1 +[0-9]+ [a-z]+ +[0-9]+/[0-9]+ +([0-9]+) .*|\1|p"
}
want_fill() { # want_fill QUEUE N [SPEC]
	[ "$(fill "$1" "$3")" = "$2" ] || no "queue $1 holds '$(fill "$1" "$3")' messages, expected $2"
}
generation() { # of the window $1 (a spec), from the text dump
	"$S" -w "$1" dump 2>/dev/null |
		sed -n '1s/.*generation \([0-9][0-9]*\),.*/\1/p'
}
epoch() { # epoch QUEUE: its epoch in $W, as dump -v says it (0x...)
	"$S" dump -v --queue "$1" 2>/dev/null |
		sed -n 's/^ *receiver pid .*; epoch \(0x[0-9a-f]*\)$/\1/p'
}
# hex N: N (a number of the shell's arithmetic) as dump prints an epoch
hex() { printf '%#x' "$1"; }
# waitfor SHELL-CONDITION: poll it for up to 10 s
waitfor() { within 10 eval "$1"; }
# announced B: board B has announced itself (dump shows it initialized)
announced() { "$S" dump 2>/dev/null | grep -Eq "^$1 +initialized "; }
# bg_smqctl OUTFILE ARGS...: smqctl in the background, pid in $bgpid
bg_smqctl() {
	o=$1
	shift
	bg_start "$S" "$@" >"$o" 2>"$o.err"
	bgpid=$pid
	eval "what_$bgpid=\"smqctl \$*\""
}
# bg_wait PID: waits for it (30 s at most), its exit status in $bgrc
bg_wait() {
	eval "what=\$what_$1"
	wait_pid 30 "$1" "$what"
	bgrc=$rc
}

echo "== normal paths"

# ---- init: text and JSON ----
run init --entries 16 --entry-size 256
want_rc 0
want_out "formatted file:$W: generation 1"
want_out "2 boards, 2 queues, 16 entries of 256 bytes"
want_out "uses "
grep -Eq '^  uses [0-9.]+ [KMG]?i?B \([0-9]+ bytes\)$' "$T/out" || no "no memory line"
[ -f "$W" ] || no "window file not created"
verdict "init --entries 16 --entry-size 256 (geometry and memory)"

run --json init -T 5s --entries 16 --entry-size 256
want_rc 0
json "$T/out" 'd["boards"]==2 and d["queues"]==2 and d["entries"]==16 and d["entry_size"]==256 and d["generation"]==2 and d["receivers"]==[0,1] and d["window_size"]>0'
[ "$PY" = 1 ] || want_out '"generation": 2'
verdict "--json init -T 5s: parses, geometry and generation 2"

# ---- sync: board 1 first, then board 0 ----
bg_smqctl "$T/b1" -b 1 sync --timeout $((5 * slow))
within 5 announced 1 || no "board 1's sync never showed it announced"
run sync --timeout $((5 * slow))
want_rc 0
want_out "board 1 announced"
want_out "system ready"
bg_wait "$bgpid"
[ "$bgrc" -eq 0 ] || no "board 1 sync exited $bgrc"
grep -q "board 1: system ready" "$T/b1" || no "board 1 did not print 'board 1: system ready'"
verdict "sync: board 1 started before board 0"

# ---- sync: board 0 first, then board 1 (a new generation first) ----
"$S" init --entries 16 --entry-size 256 >/dev/null 2>&1
bg_smqctl "$T/b0" sync --timeout $((5 * slow))
within 5 announced 0 || no "board 0's sync never showed it announced"
run -b 1 sync --timeout $((5 * slow))
want_rc 0
want_out "board 1: system ready"
bg_wait "$bgpid"
[ "$bgrc" -eq 0 ] || no "board 0 sync exited $bgrc"
grep -q "board 1 announced" "$T/b0" || no "board 0 did not print 'board 1 announced'"
grep -q "system ready" "$T/b0" || no "board 0 did not print 'system ready'"
verdict "sync: board 1 started after board 0"

# ---- sync --json on both boards ----
"$S" init --entries 16 --entry-size 256 >/dev/null 2>&1
bg_smqctl "$T/b0" --json sync --timeout $((5 * slow))
within 5 announced 0 || no "board 0's sync never showed it announced"
run -b 1 --json sync --timeout $((5 * slow))
want_rc 0
jsonl "$T/out" 'd[-1]["event"]=="ready" and d[-1]["board"]==1'
bg_wait "$bgpid"
[ "$bgrc" -eq 0 ] || no "board 0 sync exited $bgrc"
jsonl "$T/b0" 'any(e["event"]=="announced" and e["board"]==1 for e in d) and d[-1]["event"]=="ready" and d[-1]["boards"]==2'
verdict "--json sync on both boards: JSON lines"

# ---- send and recv, both ways ----
run send --queue 1 hello
want_rc 0
want_no_out
want_fill 1 1
verdict "send --queue 1 hello (from an argument)"
run -b 1 recv --timeout "$R"
want_rc 0
want_out_is 'hello\n'
verdict "-b 1 recv (a line of text)"

printf 'ab\n\000z' >"$T/msg"
run send --queue 1 --file "$T/msg"
want_rc 0
want_no_out
want_fill 1 1
verdict "send --queue 1 --file FILE (binary, with a NUL)"
run -b 1 recv --hex --timeout "$R"
want_rc 0
want_out_is 'board 0, 5 bytes: 61 62 0a 00 7a\n'
verdict "-b 1 recv --hex"

printf 'from stdin' >"$T/in"
IN=$T/in run send --queue 1
want_rc 0
want_no_out
want_fill 1 1
verdict "send --queue 1 < stdin"
run -b 1 --json recv --timeout "$R"
want_rc 0
json "$T/out" 'd=={"queue":1,"sender":0,"size":10,"hex":"66726f6d20737464696e"}'
want_out '66726f6d20737464696e'
verdict "-b 1 --json recv"

printf 'dash' >"$T/in"
IN=$T/in run send -q 1 -
want_rc 0
want_no_out
want_fill 1 1
verdict "send -q 1 - (stdin)"
"$S" send -q 1 x1 && "$S" send -q 1 x2 && "$S" send -q 1 last || no "sends failed"
run -b 1 recv --count 3 --timeout 1
want_rc 0
want_out_is 'dash\nx1\nx2\n'
verdict "-b 1 recv --count 3 (in order)"
run -b 1 recv --count 0 --timeout $((300 * slow))ms
want_rc 0
want_out_is 'last\n'
verdict "-b 1 recv --count 0 --timeout 0.3 (drains, then exits 0)"
start=$(date +%s)
run -b 1 recv --count 0 --timeout $((100 * slow))ms
want_rc 0
want_no_out
[ ! -s "$T/err" ] || no "stderr not empty"
# a give-up bound, not a speed: it ends by itself at its timeout
[ $(($(date +%s) - start)) -le $((20 * slow)) ] || no "took more than $((20 * slow)) s"
verdict "-b 1 recv --count 0 --timeout 0.1 on an empty queue"

run -b 1 send world
want_rc 0
want_no_out
want_fill 0 1
want_fill 1 0
verdict "-b 1 send world (to queue 0)"
run recv --hex --timeout 1
want_rc 0
want_out_is 'board 1, 5 bytes: 77 6f 72 6c 64\n'
verdict "recv --hex on board 0 (from board 1)"
printf 'zz' >"$T/in"
IN=$T/in run -b 1 send --queue 0
want_rc 0
run recv --timeout 1
want_rc 0
want_out_is 'zz\n'
verdict "board 1 -> queue 0 from stdin, recv on board 0"

# Receiver waiting in its own process while the sender sends.
bg_smqctl "$T/bgrecv" -b 1 recv --count 3 --timeout $((5 * slow))
waitfor '"$S" dump 2>/dev/null | grep -Eq "^1 +1 (waiting|asleep) "' ||
	no "queue 1's receiver never showed waiting"
for m in one two three; do
	"$S" send -q 1 "$m" || no "send $m failed"
	sleep 0.05  # a pace, not a state: messages that come one by one
done
bg_wait "$bgpid"
[ "$bgrc" -eq 0 ] || no "background recv exited $bgrc"
printf 'one\ntwo\nthree\n' | cmp -s - "$T/bgrecv" || no "background recv got '$(cat "$T/bgrecv")'"
verdict "recv waiting in another process gets 3 messages in order"

# ---- dump: counters match what was sent ----
# queue 1: hello(5) ab..z(5) from stdin(10) dash(4) x1 x2 last one two three
#          = 10 messages, 43 bytes; queue 0: world(5) zz(2) = 2, 7 bytes
run --json dump
want_rc 0
json "$T/out" 'd["generation"]==4 and d["boards"]==2 and d["queues"]==2 and d["entries"]==16 and d["entry_size"]==256 and d["system_state"]=="ready" and len(d["board_table"])==2 and all(b["state"]=="ready" and b["generation"]==4 for b in d["board_table"])'
# every process has exited: the boards are ready and at rest, no handle
# open or left by the dead, nobody announcing; no receiver
json "$T/out" 'all(b["activity"]=="none" and b["handles"]==0 and b["queue_handles"]==0 and b["dead_handles"]==0 and b["announcer_pid"]==0 and b["announces"]>=1 for b in d["board_table"])'
json "$T/out" 'all(q["receiver_state"]=="none" and q["senders"]==[0,1] and q["full_refusals"]==0 and q["receiver_opens"]>=1 and q["receiver_takeovers"]==0 for q in d["queue_table"] if not q["diagnostic"])'
# no queue was cleared alone: every epoch is the generation's, 4 << 32
json "$T/out" 'all(q["epoch"]==4<<32 for q in d["queue_table"])'
json "$T/out" '[(q["queue"],q["receiver"],q["sent"],q["received"],q["bytes_sent"],q["bytes_received"],q["fill"],q["queued"],q["capacity"]) for q in d["queue_table"] if not q["diagnostic"]]==[(0,0,2,2,7,7,0,0,16),(1,1,10,10,43,43,0,0,16)]'
json "$T/out" 'd["diagnostic_queues"]==2 and [(q["queue"],q["receiver"],q["sent"],q["capacity"]) for q in d["queue_table"] if q["diagnostic"]]==[(2,0,0,16),(3,1,0,16)] and d["fault"] is None'
verdict "--json dump: generation, boards (activity, handles), queue counters, receivers, epochs"

run dump
want_rc 0
want_out "generation 4, system ready"
want_out "2 boards, 2 queues (and 2 diagnostic), 16 entries of 256 bytes"
want_out "diagnostic queues (pingpong, bench):"
grep -Eq '^BOARD +STATE +ACTIVITY +HANDLES +PID +HOST +HEARTBEAT +MOVED +DOORBELL$' "$T/out" ||
	no "board heading is not BOARD STATE ACTIVITY HANDLES PID HOST HEARTBEAT MOVED DOORBELL"
[ "$(grep -Ec '^QUEUE +RECEIVER +FILL +QUEUED +SENT +RECEIVED +BYTES +FULL-WAITS +DOORBELLS$' "$T/out")" = 2 ] ||
	no "queue headings are not QUEUE RECEIVER FILL QUEUED SENT RECEIVED BYTES FULL-WAITS DOORBELLS (twice)"
grep -Eq '^0 +0 none +0/16 +0 +2 +2 +7 ' "$T/out" || no "queue 0 row wrong"
grep -Eq '^1 +1 none +0/16 +0 +10 +10 +43 ' "$T/out" || no "queue 1 row wrong"
grep -Eq '^0 +ready +at rest +- +[0-9]+ ' "$T/out" || no "board 0 row wrong"
grep -Eq '^1 +ready +at rest +- +[0-9]+ ' "$T/out" || no "board 1 row wrong"
want_out "ACTIVITY: at rest (no process attached: normal once ready)"
want_out "RECEIVER: waiting, asleep, away (not waiting for one), dead, none"
verdict "dump (text): generation, board and queue rows, headings"

run dump --queue 1
want_rc 0
n=$(grep -Ec '^[0-9]+ +[0-9]+ [a-z]+ +[0-9]+/[0-9]+ ' "$T/out")
[ "$n" = 1 ] || no "$n queue rows, expected 1"
grep -Eq '^1 +1 none +0/16 +0 +10 ' "$T/out" || no "queue 1 row missing"
verdict "dump --queue 1 (text): one queue"
run --json dump --queue 1
want_rc 0
json "$T/out" '[q["queue"] for q in d["queue_table"]]==[1] and d["queue_table"][0]["sent"]==10'
verdict "--json dump --queue 1"

run dump -v
want_rc 0
want_out "lane of board 0"
want_out "lane of board 1"
want_out "receiver pid 0 (none), "
want_out "; epoch $(hex $((4 << 32)))"
want_out "senders: every board"
verdict "dump -v shows lanes, the receiver, senders and epoch"
run --json -v dump
want_rc 0
json "$T/out" 'all(len(q["lanes"])==2 for q in d["queue_table"]) and d["queue_table"][1]["lanes"][0]["messages"]==10 and d["queue_table"][0]["lanes"][1]["messages"]==2'
verdict "--json -v dump has lanes with message counts"

# ---- clear and clear --queue ----
# A clear of every queue is a new generation, and every queue's epoch is
# the new generation's (generation << 32, smq(7) Epochs); a clear of one
# queue gives that queue alone the next epoch: the generation, the boards
# and the other queues go on.
g=$(generation "file:$W")
"$S" send a >/dev/null && "$S" -b 1 send b && "$S" send -q 1 c || no "sends failed"
run clear
want_rc 0
want_out "cleared every queue of file:$W: generation $((g + 1))"
[ "$(generation "file:$W")" = $((g + 1)) ] || no "generation not $((g + 1))"
"$S" --json dump >"$T/d.json"
json "$T/d.json" 'all(q["fill"]==0 and q["top"]==q["bottom"] for q in d["queue_table"])'
json "$T/d.json" 'all(q["epoch"]=='"$(((g + 1) << 32))"' for q in d["queue_table"])'
"$S" dump | grep -Eq '^0 +0 none +0/16 ' || no "queue 0 not empty"
"$S" dump | grep -Eq '^1 +1 none +0/16 ' || no "queue 1 not empty"
"$S" recv --timeout 0 >/dev/null 2>&1 && no "queue 0 still had a message"
"$S" -b 1 recv --timeout 0 >/dev/null 2>&1 && no "queue 1 still had a message"
verdict "clear: generation +1, every queue empty, every epoch the generation's"

g=$(generation "file:$W")
e0=$(epoch 0)
[ "$e0" = "$(hex $((g << 32)))" ] || no "queue 0's epoch is '$e0', not generation $g << 32"
"$S" send keep && "$S" send -q 1 drop || no "sends failed"
"$S" --json dump >"$T/before.json"
run --json clear --queue 1 -T 5s
want_rc 0
json "$T/out" 'd["queue"]==1 and d["generation"]=='"$g"' and d["epoch"]=='"$(((g << 32) + 1))"
[ "$(generation "file:$W")" = "$g" ] || no "generation not $g (it went on to '$(generation "file:$W")')"
[ "$(epoch 1)" = "$(hex $(((g << 32) + 1)))" ] || no "queue 1's epoch is '$(epoch 1)', not $(hex $(((g << 32) + 1)))"
[ "$(epoch 0)" = "$e0" ] || no "queue 0's epoch changed from $e0 to '$(epoch 0)'"
"$S" --json dump >"$T/after.json"
[ "$PY" = 1 ] && ! python3 -c 'import json,sys
b,a=(json.load(open(f)) for f in sys.argv[1:])
k=("board","state","generation","pid","activity","announces")
t=lambda d:[tuple(x[i] for i in k) for x in d["board_table"]]
sys.exit(0 if t(a)==t(b) and a["system_state"]==b["system_state"] else 1)' \
	"$T/before.json" "$T/after.json" && no "the board table or the system state changed"
"$S" dump | grep -Eq '^1 +1 none +0/16 +0 ' || no "queue 1 not empty"
"$S" dump | grep -Eq '^0 +0 none +1/16 +1 ' || no "queue 0 lost its message"
[ "$("$S" recv --timeout 1 2>/dev/null)" = keep ] || no "queue 0's message not received intact"
verdict "--json clear --queue 1 -T 5s: only queue 1 emptied, its epoch the next; generation $g goes on"
run clear --queue 0
want_rc 0
want_out "cleared queue 0 of file:$W: epoch $(hex $(((g << 32) + 2))) (generation $g goes on)"
[ "$(generation "file:$W")" = "$g" ] || no "generation not $g"
[ "$(epoch 0)" = "$(hex $(((g << 32) + 2)))" ] || no "queue 0's epoch is '$(epoch 0)'"
[ "$(epoch 1)" = "$(hex $(((g << 32) + 1)))" ] || no "queue 1's epoch changed to '$(epoch 1)'"
verdict "clear --queue 0 (text): epoch $(hex $(((g << 32) + 2))), generation $g goes on"

# Only the processes at work on the queue cleared are in its way: a
# receiver of queue 0 waits on through a clear of queue 1 and still
# receives; a receiver of queue 1 is named, and told when forced.
bg_smqctl "$T/r0" recv --queue 0 --timeout $((10 * slow))
r0=$bgpid
waitfor '"$S" dump 2>/dev/null | grep -Eq "^0 +0 (waiting|asleep) "' || no "queue 0's receiver never showed waiting"
"$S" send -q 1 drop || no "send failed"
run clear --queue 1
want_rc 0
want_out "cleared queue 1 of file:$W: epoch $(hex $(((g << 32) + 3))) (generation $g goes on)"
"$S" dump | grep -Eq '^1 +1 none +0/16 +0 ' || no "queue 1 not empty"
"$S" dump | grep -Eq '^0 +0 (waiting|asleep) ' || no "queue 0's receiver no longer waits"
"$S" -b 1 send -q 0 ping || no "send to queue 0 failed"
bg_wait "$r0"
[ "$bgrc" -eq 0 ] || no "queue 0's receiver exited $bgrc: $(cat "$T/r0.err")"
[ "$(cat "$T/r0")" = ping ] || no "queue 0's receiver got '$(cat "$T/r0")'"
verdict "clear --queue 1 beside queue 0's receiver (pid $r0): it goes on and receives"

bg_smqctl "$T/r1" -b 1 recv --queue 1 --timeout $((10 * slow))
r1=$bgpid
waitfor '"$S" dump 2>/dev/null | grep -Eq "^1 +1 (waiting|asleep) "' || no "queue 1's receiver never showed waiting"
e1=$(epoch 1)
run clear --queue 1
want_rc 1
want_no_out
want_err "smqctl: clear: processes are at work on queue 1: board 1 pid $r1 on "
want_err " (receiver of queue 1"  # ", in a call" if it is in one just then
want_err ".  clear would empty the queue under it: stop it first, or --force"
[ "$(epoch 1)" = "$e1" ] || no "queue 1's epoch changed from $e1 to '$(epoch 1)'"
run clear
want_rc 1
want_no_out
want_err "smqctl: clear: processes are at work on the window: board 1 pid $r1 on "
want_err " (receiver of queue 1"
want_err ".  clear would empty every queue under it: stop it first, or --force"
[ "$(generation "file:$W")" = "$g" ] || no "generation changed"
"$S" dump | grep -Eq '^1 +1 (waiting|asleep) ' || no "queue 1's receiver no longer waits"
verdict "clear and clear --queue 1 refuse while queue 1's receiver (pid $r1) waits, naming it"
run clear --queue 1 --force
want_rc 0
want_out "cleared queue 1 of file:$W: epoch $(hex $(((g << 32) + 4))) (generation $g goes on)"
bg_wait "$r1"
[ "$bgrc" -eq 1 ] || no "queue 1's receiver exited $bgrc, not 1"
grep -q '^smqctl: recv' "$T/r1.err" || no "queue 1's receiver said nothing of why it ended"
[ "$(generation "file:$W")" = "$g" ] || no "generation changed"
verdict "clear --queue 1 --force: the queue's receiver (pid $r1) is told and ends; generation $g goes on"

# ---- init and boards that only wait in sync, or are at work ----
# A board that waits in sync (as at boot, on a window left from before) is
# not in init's way: it is attached (a handle, no queue open), and starts
# again on the new generation.
bg_smqctl "$T/att" -b 1 sync --timeout $((10 * slow))
att=$bgpid
waitfor '"$S" dump 2>/dev/null | grep -Eq "^1 +initialized +attached +1 +$att "' ||
	no "board 1 never showed as initialized, attached, 1 handle, pid $att"
g=$(generation "file:$W")
run init --entries 16 --entry-size 256
want_rc 0
want_out "generation $((g + 1))"
waitfor '"$S" dump 2>/dev/null | grep -Eq "^1 +initialized +attached +1 +$att "' ||
	no "board 1 did not announce itself again"
"$S" --json dump >"$T/d.json"
json "$T/d.json" 'd["board_table"][1]["generation"]=='"$((g + 1))"' and d["board_table"][1]["announcer_pid"]=='"$att"' and d["board_table"][1]["activity"]=="attached"'
verdict "init goes on while board 1 (pid $att) only waits in sync; it announces itself again"
# board 1 attaches again under the new generation; board 0 completes the sync
run sync --timeout $((5 * slow))
want_rc 0
want_out "board 1 announced (pid $att"
want_out "system ready"
bg_wait "$att"
[ "$bgrc" -eq 0 ] || no "board 1 sync exited $bgrc"
verdict "after init board 1 re-attaches and sync completes"
# A board at work (here a receiver) is: init refuses, unless --force.
bg_smqctl "$T/work" -b 1 recv --timeout $((10 * slow))
work=$bgpid
waitfor '"$S" dump 2>/dev/null | grep -Eq "^1 +ready +at work +[0-9]+ +$work "' ||
	no "board 1 never showed at work (pid $work)"
"$S" dump 2>/dev/null | grep -Eq "^1 +1 (waiting|asleep) " || no "queue 1's receiver not shown waiting"
g=$(generation "file:$W")
run init --entries 16 --entry-size 256
want_rc 1
want_no_out
want_err "smqctl: init: processes are at work on the window: board 1 pid $work on "
want_err " (receiver of queue 1"
want_err ".  init would empty every queue under it: stop it first, or --force"
[ "$(generation "file:$W")" = "$g" ] || no "generation changed"
verdict "init refuses while board 1 (pid $work) is at work"
run init --force --entries 16 --entry-size 256
want_rc 0
want_out "generation $((g + 1))"
[ "$(generation "file:$W")" = $((g + 1)) ] || no "generation not $((g + 1))"
bg_wait "$work"
[ "$bgrc" -eq 1 ] || no "the receiver exited $bgrc, not 1"
grep -q "re-initialised" "$T/work.err" 2>/dev/null || grep -q "re-initialised" "$T/work" ||
	no "the receiver did not say the window was re-initialised"
verdict "init --force formats anyway; the receiver is told"
g=$(generation "file:$W")
run init --entries 16 --entry-size 256
want_rc 0
want_out "generation $((g + 1))"
verdict "init without --force once board 1's process has exited"

# ---- a queue has one receiver ----
bg_smqctl "$T/busy" -b 1 recv --timeout $((5 * slow))
busy=$bgpid
waitfor '"$S" dump 2>/dev/null | grep -Eq "^1 +1 (waiting|asleep) +0/"' || no "receiver never showed waiting in dump"
run -b 1 recv --timeout 0
want_rc 1
want_no_out
want_err "already has a receiver (pid $busy)"
verdict "-b 1 recv while another process receives queue 1"
"$S" send -q 1 wake
bg_wait "$busy"
[ "$bgrc" -eq 0 ] || no "background recv exited $bgrc"
[ "$(cat "$T/busy")" = wake ] || no "background recv got '$(cat "$T/busy")'"
verdict "the first receiver still gets the message"

# ---- help, version, transports ----
run help
want_rc 0
want_out "Commands:"
for c in init clear sync dump send recv; do
	grep -Eq "^  $c " "$T/out" || no "help lacks $c"
done
verdict "smqctl help"
run help init
want_rc 0
want_out "Usage: smqctl init"
want_out "--entries"
want_out "--receiver"
cp "$T/out" "$T/help-init"
verdict "smqctl help init"
run init --help
want_rc 0
want_out "Usage: smqctl init"
want_out "--entries"
cmp -s "$T/out" "$T/help-init" || no "differs from 'smqctl help init'"
verdict "smqctl init --help"
run --version
want_rc 0
grep -Eq '^smqctl [0-9]+\.[0-9]+\.[0-9]+$' "$T/out" || no "not 'smqctl X.Y.Z'"
verdict "smqctl --version"
run --window help
want_rc 0
want_out "shm:NAME"
want_out "file:PATH"
verdict "smqctl --window help"

# ---- a shm window, and SMQ_WINDOW ----
shm_cases=0
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	shm_cases=2
	run -w "shm:$SHM" init --entries 8
	want_rc 0
	want_out "formatted shm:$SHM"
	[ -f "/dev/shm/$SHM" ] || no "/dev/shm/$SHM not created"
	"$S" -w "shm:$SHM" send -q 1 shm-msg || no "send failed"
	run -w "shm:$SHM" -b 1 recv --timeout 1
	want_rc 0
	want_out_is 'shm-msg\n'
	verdict "shm:$SHM window: init, send, recv"
	SMQ_WINDOW="shm:$SHM" run dump
	want_rc 0
	want_out "window shm:$SHM:"
	want_out "8 entries"
	verdict "SMQ_WINDOW=shm:$SHM dump"
else
	note "/dev/shm not writable: shm window cases skipped"
fi

# ---- send to a full queue, and oversized messages (window $W2) ----
W2=$T/small
# no journal: a refused send writes its counter alone (the journal would
# also say the queue was opened, met full and closed)
"$S" -w "file:$W2" init --entries 4 --entry-size 16 --journal 0 >/dev/null || no "init $W2 failed"
for m in m1 m2 m3 m4; do
	"$S" -w "file:$W2" send -q 1 --timeout 0 "$m" || no "send $m failed"
done
want_fill 1 4 "file:$W2"
verdict "fill queue 1 of a 4-entry window"

echo "== sync timeouts"
W3=$T/three
"$S" -w "file:$W3" init --boards 3 >/dev/null
start=$(date +%s)
run -w "file:$W3" sync --timeout $((300 * slow))ms
want_rc 1
want_no_out
want_err "timed out"
want_err "boards 1 and 2"
# a give-up bound, not a speed: it ends by itself at its timeout
[ $(($(date +%s) - start)) -le $((20 * slow)) ] || no "took more than $((20 * slow)) s"
verdict "sync --timeout 0.3 on board 0, 3 boards, none came: names boards 1 and 2"

# a look every 120 s keeps the timeout all the same: board 0 waiting for
# boards, board 1 for board 0 to format, board 1 for board 0 to declare.
# Not a speed: a sync that waited for its next look would take 120 s;
# 30 s is far from both, so no busy machine decides it
iv=$((120 * slow))
for args in "-w file:$W3 sync" "-w file:$T/none -b 1 sync" "-w file:$W3 -b 1 sync"; do
	start=$(date +%s%N)
	# shellcheck disable=SC2086
	run $args --timeout 1 --interval ${iv}s
	took=$((($(date +%s%N) - start) / 1000000))
	want_rc 1
	want_err "timed out"
	[ $took -lt $((30000 * slow)) ] ||
		no "took $took ms, the timeout 1 s, a look every $iv s"
	verdict "$args --timeout 1 --interval ${iv}s: timed out at the timeout, not a look later"
done

bg_smqctl "$T/b1" -w "file:$W3" -b 1 sync --timeout $((2 * slow))
b1=$bgpid
waitfor '"$S" -w "file:$W3" dump 2>/dev/null | grep -Eq "^1 +initialized +attached +1 +$b1 "' ||
	no "board 1 never showed announced (initialized, attached, pid $b1)"
# one process announces a board: a second sync of board 1 is refused
run -w "file:$W3" -b 1 sync --timeout $((300 * slow))ms
want_rc 1
want_no_out
want_err "smqctl: sync: board 1 is being announced by pid $b1 on "
want_err "one process announces a board"
verdict "a second sync of board 1 while pid $b1 announces it: refused, naming pid $b1"
run -w "file:$W3" sync --timeout $((300 * slow))ms
want_rc 1
want_out "board 1 announced (pid $b1"
want_err "board 2 never announced"
grep -q "board 1" "$T/err" && no "stderr names board 1, which came"
bg_wait "$b1"
[ "$bgrc" -eq 1 ] || no "board 1 sync exited $bgrc, expected 1"
grep -q "board 0" "$T/b1.err" || no "board 1's timeout does not name board 0"
verdict "sync --timeout 0.3 on board 0, board 1 came, board 2 never did: names board 2"
# a sync that gave up took its announcement back: board 1 is absent again
"$S" -w "file:$W3" dump >"$T/out" 2>"$T/err"
grep -Eq '^1 +absent +at rest +- ' "$T/out" ||
	no "board 1 not shown absent and at rest: '$(grep -E '^1 ' "$T/out")'"
grep -Eq '^0 +absent +at rest +- ' "$T/out" ||
	no "board 0 not shown absent and at rest: '$(grep -E '^0 ' "$T/out")'"
"$S" -w "file:$W3" --json dump >"$T/d.json"
json "$T/d.json" 'd["board_table"][1]["state"]=="absent" and d["board_table"][1]["announcer_pid"]==0 and d["board_table"][0]["state"]=="absent"'
verdict "the syncs that gave up took their announcements back: boards 0 and 1 absent"

"$S" -w "file:$W3" init --boards 3 >/dev/null
run -w "file:$W3" -b 1 sync --timeout $((300 * slow))ms
want_rc 1
want_no_out
want_err "timed out"
want_err "board 0"
verdict "-b 1 sync --timeout 0.3 with no board 0 (formatted window): names board 0"

run -w "file:$T/nowindow" -b 2 sync --timeout $((300 * slow))ms
want_rc 1
want_no_out
want_err "timed out"
want_err "board 0"
[ -e "$T/nowindow" ] && no "the window was created"
verdict "-b 2 sync --timeout 0.3 with no board 0 (window does not exist yet): names board 0"

echo "== bad invocations"
# row RC SUBSTRING ANTI-SUBSTRING|- WINDOW-FILE ARGS...
# smqctl ARGS must exit RC, print nothing on stdout, start stderr with
# "smqctl", say SUBSTRING (and not ANTI), and leave WINDOW-FILE's bytes as
# they were (or, if it did not exist, not create it).
rows=0
row() {
	r_want=$1 r_pat=$2 r_anti=$3 r_wf=$4
	shift 4
	rows=$((rows + 1))
	if [ -e "$r_wf" ]; then
		cp -p "$r_wf" "$T/before" 2>/dev/null || cat "$r_wf" >"$T/before"
		r_had=1
	else
		r_had=0
	fi
	# bounded: each of them ends at once, or it is wrong
	timeout --foreground -k 5 $((30 * slow)) "${SMQ:-$S}" "$@" </dev/null >"$T/out" 2>"$T/err"
	rc=$?
	want_rc "$r_want"
	want_no_out
	head -n 1 "$T/err" | grep -q '^smqctl' || no "stderr does not start with 'smqctl'"
	want_err "$r_pat"
	[ "$r_anti" = - ] || ! grep -qF -e "$r_anti" "$T/err" || no "stderr says '$r_anti'"
	if [ $r_had = 1 ]; then
		cmp -s "$T/before" "$r_wf" || no "window bytes changed"
	elif [ -e "$r_wf" ]; then
		no "$r_wf was created"
	fi
	verdict "[exit $r_want] smqctl $*"
}

"$S" init >/dev/null 2>&1  # a plain 2-board window
# usage errors: exit 2
row 2 "no command given" - "$W"
row 2 "no command 'nosuchcmd'" - "$W" nosuchcmd
row 2 "no command 'nosuchcmd'" - "$W" help nosuchcmd
row 2 "unrecognized option '--bogus'" - "$W" --bogus dump
row 2 "unrecognized option '--bogus'" - "$W" dump --bogus
row 2 "requires an argument" - "$W" --window
row 2 "requires an argument" - "$W" dump --window
row 2 "requires an argument" - "$W" sync --timeout
row 2 "requires an argument" - "$W" send --queue
row 2 "unexpected argument 'extra-arg'" - "$W" dump extra-arg
row 2 "unexpected argument" - "$W" clear extra-arg
row 2 "one message at a time" - "$W" send a b
row 2 "--board 64 is out of range" - "$W" --board 64 dump
row 2 "--board" - "$W" --board -1 dump
row 2 "--board needs a number" - "$W" --board abc dump
row 2 "--board" - "$W" --board "" dump
row 2 "--queue 4294967296 is out of range" - "$W" send --queue 4294967296 x
row 2 "--queue" - "$W" recv --queue 65535
row 2 "--entry-size 99999999999999999999 is out of range" - "$W" init --entry-size 99999999999999999999
row 2 "--entry-size" - "$W" init --entry-size 16777217
row 2 "--entries 3 is not a power of two" - "$W" init --entries 3
row 2 "--entries 0 is out of range" - "$W" init --entries 0
row 2 "--entries needs a number" - "$W" init --entries 1.5
row 2 "--boards 0 is out of range" - "$W" init --boards 0
row 2 "--boards 65 is out of range" - "$W" init --boards 65
row 2 "--queues 0 is out of range" - "$W" init --queues 0
row 2 "--queues 65536 is out of range" - "$W" init --queues 65536
row 2 "queue 9 does not exist" - "$W" init --receiver 9:0
row 2 "board 9 does not exist" - "$W" init --receiver 0:9
row 2 "--receiver needs QUEUE:BOARD" - "$W" init --receiver x
row 2 "--receiver needs QUEUE:BOARD" - "$W" init --receiver 0:
row 2 "--timeout needs a duration" - "$W" sync --timeout abc
row 2 "unknown unit" - "$W" sync --timeout 5x
row 2 "--interval must be more than 0" - "$W" sync --interval 0
row 2 "--timeout -5 is out of range" - "$W" send --timeout -5 x
# decimal seconds or a number with ms, s or m: no hexadecimal, exponent,
# sign or space that strtod would take
row 2 "--timeout needs a duration" - "$W" recv --timeout 0x1p4
row 2 "--timeout needs a duration" - "$W" recv --timeout 1e1ms
row 2 "--timeout needs a duration" - "$W" recv --timeout " 5"
row 2 "--timeout needs a duration" - "$W" recv --timeout +5
row 2 "--entry-size 0 is out of range: 1 to 16M" - "$W" init --entry-size 0
row 2 "is not a board number" - "$W" init --boards 4 --senders "1:00000000000000000000000000000001"
row 2 "is not a board number" - "$W" init --boards 4 --senders "1:2,0000000000000000000000000000000JUNK"
# octal bits from 1 to 07777, one rule for init, server and broker
row 2 "--mode needs octal permission bits" - "$W" init --keep --mode -0
row 2 "--mode needs octal permission bits" - "$W" init --keep --mode " +0640"
row 2 "--mode needs octal permission bits" - "$W" init --keep --mode 0
row 2 "--mode needs octal permission bits" - "$W" server --socket "$T/s" --mode +600
row 2 "--cpu needs two numbers" - "$W" bench --cpu " 0,+1"
# -T is --timeout in every command that waits, init and clear too
row 2 "--timeout needs a duration" - "$W" init -T abc
row 2 "--timeout needs a duration" - "$W" clear -T abc
# an option's old name, which another command takes with another
# meaning, is refused whatever follows it, naming the new one
row 2 "smqctl pingpong: --queues is a count of queues (init, probe, model); the two queues of a measurement are --queue-pair A,B" - "$W" pingpong --queues 0,1
row 2 "the two queues of a measurement are --queue-pair A,B" - "$W" bench --queues=0,1
row 2 "the two queues of a measurement are --queue-pair A,B" - "$W" pingpong --queues
row 2 "smqctl bench: --mode is the permission bits of a file or socket (init, server, broker); how a measurement's receivers wait is --wait poll|sleep|spin" - "$W" bench --mode spin
row 2 "how a measurement's receivers wait is --wait poll|sleep|spin" - "$W" pingpong --mode=poll
row 2 "how a measurement's receivers wait is --wait poll|sleep|spin" - "$W" bench --mode
row 2 "--wait is poll, sleep or spin, not 'often'" - "$W" pingpong --wait often
row 2 "--queue-pair needs two numbers" - "$W" bench --queue-pair 0
row 2 "--count" - "$W" recv --count -1
row 2 "--count 99999999999 is out of range" - "$W" recv --count 99999999999
row 2 "--count 0 needs a --timeout" - "$W" recv --count 0
# runtime failures: exit 1
row 1 "only the system board" - "$W" init --board 1
row 1 "only the system board" - "$W" clear --board 1
row 1 "queue 99 does not exist" - "$W" clear --queue 99
row 1 "queue 99 does not exist" - "$W" dump --queue 99
row 1 "queue 99 does not exist" - "$W" --json dump --queue 99
row 1 "queue 99 does not exist" - "$W" send --queue 99 x
row 1 "queue 99 does not exist" - "$W" recv --queue 99 --timeout 0
row 1 "board 5 does not exist: the window has 2 boards" - "$W" --board 5 dump
row 1 "board 5 does not exist" - "$W" --board 5 send x
row 1 "queue 1 is received by board 1, not board 0" - "$W" recv --queue 1 --timeout 0
row 1 "queue 0 is received by board 0, not board 1" - "$W" -b 1 recv --queue 0 --timeout 0
row 1 "too large" - "$W" init --entries 1048576 --entry-size 16777216 --queues 65535 --boards 64
row 1 "bad window spec 'shm:../$SHM-x'" - "/dev/$SHM-x" -w "shm:../$SHM-x" init
row 1 "bad window spec 'shm:../x'" - "$W" -w shm:../x dump
row 1 "bad window spec 'shm:a/b'" - "/dev/shm/a" -w shm:a/b init
row 1 "unknown transport in window spec 'nosuch:x'" - "$T/nosuch:x" -w nosuch:x init
row 1 "does not exist" - "$T/missing" -w "file:$T/missing" dump
row 1 "does not exist" - "$T/missing" -w "file:$T/missing" send x
row 1 "Is a directory" - "$W" -w "file:$T" dump
# not a regular file: the message must not talk about shm names
row 1 "/dev/null" "shm name" "$W" -w file:/dev/null dump

# no permission
cp "$W" "$T/noperm"
chmod 000 "$T/noperm"
perm_rows=2
if [ "$(id -u)" != 0 ]; then
	row 1 "permission denied" - "$T/noperm" -w "file:$T/noperm" dump
	row 1 "permission denied" - "$T/noperm" -w "file:$T/noperm" init
elif command -v setpriv >/dev/null 2>&1 && chmod 711 "$T" &&
	setpriv --reuid=65534 --regid=65534 --clear-groups "$S" --version >/dev/null 2>&1; then
	printf '#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups "%s" "$@"\n' \
		"$S" >"$T/asnobody"
	chmod 755 "$T/asnobody"
	note "running as root: the permission rows run smqctl as uid 65534 (setpriv)"
	SMQ=$T/asnobody
	row 1 "permission denied" - "$T/noperm" -w "file:$T/noperm" dump
	row 1 "permission denied" - "$T/noperm" -w "file:$T/noperm" init
	SMQ=
else
	note "running as root without a usable setpriv: permission rows skipped"
	perm_rows=0
fi
chmod 600 "$T/noperm"

# messages too large, and a full queue (queue 1 of $W2 holds m1..m4)
row 1 "larger than the entry size 16" - "$W2" -w "file:$W2" send -q 1 12345678901234567
printf '12345678901234567' >"$T/big"
row 1 "larger than the entry size 16" - "$W2" -w "file:$W2" send -q 1 --file "$T/big"
row 1 "cannot read $T/nosuchfile" - "$W2" -w "file:$W2" send -q 1 --file "$T/nosuchfile"
row 1 "cannot read the message from $T: Is a directory" - "$W2" -w "file:$W2" send -q 1 --file "$T"
# A send refused on a full queue writes one thing: it counts the refusal
# (full_refusals of the queue's lane of board 0; smq(7)), one byte here.
"$S" -w "file:$W2" --json -v dump >"$T/full.before"
cp "$W2" "$T/before"
run -w "file:$W2" send -q 1 --timeout 0 m5
want_rc 1
want_no_out
want_err "smqctl: queue 1 is full: no room after 0 s (no receiver has it open)"
n=$(cmp -l "$T/before" "$W2" | wc -l)
[ "$n" -eq 1 ] || no "$n bytes of the window changed, expected 1 (the refusal counted)"
"$S" -w "file:$W2" --json -v dump >"$T/full.after"
[ "$PY" = 1 ] && ! python3 -c 'import json,sys
b,a=(json.load(open(f)) for f in sys.argv[1:])
qa,qb=a["queue_table"][1],b["queue_table"][1]
ok=qa["full_refusals"]==qb["full_refusals"]+1==1 and qa["lanes"][0]["full_refusals"]==qb["lanes"][0]["full_refusals"]+1
qa["full_refusals"]-=1
qa["lanes"][0]["full_refusals"]-=1
for d in a,b:  # how long each dump saw queues hold still: its own clock
	for q in d["queue_table"]:
		q.pop("stalled_ms", None)
sys.exit(0 if ok and a==b else 1)' "$T/full.before" "$T/full.after" &&
	no "the dump changed otherwise than queue 1's full_refusals (and its lane of board 0's) by 1"
verdict "[exit 1] smqctl -w file:$W2 send -q 1 --timeout 0 m5: full; the refusal counted, nothing else written"
run -w "file:$W2" -b 1 recv --count 4 --timeout 1
want_rc 0
want_out_is 'm1\nm2\nm3\nm4\n'
run -w "file:$W2" -b 1 recv --timeout 0
want_rc 1
want_no_out
verdict "the full queue is intact after the failed sends: m1..m4 in order, nothing more"

# unformatted, truncated and corrupted windows
poke() { # poke FILE OFFSET OCTAL-BYTES
	printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
"$S" -w "file:$T/good" init >/dev/null
cp "$T/good" "$T/c-magic" && poke "$T/c-magic" 0 'X'
# format 3's superblock (smq(7)): version at 8, features_incompat at 16,
# features_compat at 20 (bits a reader ignores, but the checksum covers
# them), boards at 24, checksum at 60
cp "$T/good" "$T/c-version" && poke "$T/c-version" 8 '\007\000\000\000'
cp "$T/good" "$T/c-oldversion" && poke "$T/c-oldversion" 8 '\002\000\000\000'
cp "$T/good" "$T/c-feature" && poke "$T/c-feature" 16 '\016\000\000\000'
cp "$T/good" "$T/c-boards" && poke "$T/c-boards" 24 '\101\000\000\000'
cp "$T/good" "$T/c-checksum" && poke "$T/c-checksum" 20 '\001'
cp "$T/good" "$T/c-trunc100" && truncate -s 100 "$T/c-trunc100"
cp "$T/good" "$T/c-trunc4096" && truncate -s 4096 "$T/c-trunc4096"
head -c 4096 /dev/zero >"$T/c-zero"
for c in magic version oldversion feature boards checksum trunc100 trunc4096 zero; do
	anti=-
	case $c in
	magic) pat="bad magic" anti="expected at most 0" ;;
	version) pat="has format version 7; this smqctl reads version 3 (field version at offset 0x8).  A newer smq formatted it: use that version"
		anti="To upgrade" ;;
	oldversion) pat="has format version 2; this smqctl reads version 3 (field version at offset 0x8).  To upgrade: stop every process attached to it, then run smqctl init --force on board 0"
		anti="A newer smq" ;;
	feature) pat="uses an incompatible feature this smqctl does not know (bit 0x8 of field features_incompat at offset 0x10; it knows 0x7)" ;;
	boards) pat="field boards at offset 0x18 holds 65 (at most 64)" ;;
	checksum) pat="checksum mismatch: field checksum at offset 0x3c holds" ;;
	trunc100) pat="too small" anti="at most 256" ;;
	trunc4096) pat="too small" ;;
	zero) pat="not formatted" ;;
	esac
	f=$T/c-$c
	row 1 "$pat" "$anti" "$f" -w "file:$f" dump
	row 1 "$pat" "$anti" "$f" -w "file:$f" send x
	row 1 "$pat" "$anti" "$f" -w "file:$f" recv --timeout 0
	row 1 "$pat" "$anti" "$f" -w "file:$f" clear
	row 1 "$pat" "$anti" "$f" -w "file:$f" sync --timeout $((200 * slow))ms
done
# --json dump names the fault as a field, its offset, value and limit
for c in boards feature; do
	run -w "file:$T/c-$c" --json dump
	want_rc 1
	case $c in
	boards) json "$T/out" 'd["fault"]["field"]=="boards" and d["fault"]["offset"]==24 and d["fault"]["value"]==65 and d["fault"]["at_most"]==64' ;;
	feature) json "$T/out" 'd["fault"]["field"]=="features_incompat" and d["fault"]["offset"]==16 and d["fault"]["value"]==8 and d["fault"]["known"]==7' ;;
	esac
	verdict "--json dump of c-$c: the fault, its offset, value and limit"
done

echo "$rows bad invocations"
# 170 checks, the shm window's 2 and the 2 permission rows where they run
finish $((173 + shm_cases + perm_rows))
