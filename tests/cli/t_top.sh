#!/bin/sh
# smqctl top: the live view driven in detached tmux sessions of a fixed size
# on a private server (keys, resize, quitting, SIGTERM, a removed window, a
# re-initialised one, a window of 1024 queues), and --once in text and JSON
# (the columns, the words for boards and receivers, a receiver waiting and
# then killed).
# Prints "ok"/"FAIL" per check; exit 0 pass, 1 fail, 77 skip (no tmux, or
# no pseudo-terminal for the live view).
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
command -v tmux >/dev/null 2>&1 ||
	skip "tmux not found: the live view of top is not tested"
SOCK=$SHM-tmux
# tmux's server is no child of ours: stopped by name, with its socket
at_cleanup 'tmux -L "$SOCK" kill-server; rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$SOCK"'
W=$T/w
unset TMUX SMQ_WINDOW SMQ_DEBUG 2>/dev/null

# A private server: panes stay after their process ends (to read what is
# left on the screen), no status line (the pane is the whole window), a
# terminal type that every terminfo has.
cat >"$T/tmux.conf" <<'EOF'
set -g remain-on-exit on
set -g status off
set -g default-terminal screen
EOF
tm() { tmux -L "$SOCK" -f "$T/tmux.conf" "$@"; }

# after a FAIL: the screen last captured
on_failure() {
	[ -s "$T/screen" ] && sed 's/^/       | /' "$T/screen" | head -n 45
	return 0
}
# cap SESSION: the screen of its pane into $T/screen
cap() { tm capture-pane -p -t "$1" >"$T/screen" 2>/dev/null; }
# capall SESSION: the same with the lines scrolled off the top (a pane made
# smaller after its start pushes its first lines there)
capall() { tm capture-pane -p -S - -t "$1" >"$T/screen" 2>/dev/null; }
fmt() { tm display-message -p -t "$1" "$2" 2>/dev/null; }
# waitfor SECONDS SHELL-CONDITION: poll it every 0.05 s
waitfor() { within "$1" eval "$2"; }
# shows SESSION FIXED-STRING: its screen holds it now
shows() { cap "$1" && grep -qF -e "$2" "$T/screen"; }
# row SESSION QUEUE: the queue's row of the table, on $T/row
row() {
	cap "$1" && sed -n '/^QUEUE /,$p' "$T/screen" |
		grep -E "^ *$2 [0-9]+ " >"$T/row"
}
# col SESSION QUEUE N: the Nth column after the fill bar in the queue's
# row (1 FILL, 2 MSGS/S, 3 RECV/S, 4 MB/S, 5 BELLS/S, 6 FULL/S, 7 SENT,
# 8 RECEIVED),
# counted from the bar: the rate history after them, where the terminal
# has room for it, is levels and blanks, not one field
col() {
	row "$1" "$2" && sed 's/^[^]]*\]//' "$T/row" | awk -v c="$3" '{ print $c }'
}
# sent_is SESSION QUEUE N: the SENT column of the queue's row is N
sent_is() { [ "$(col "$1" "$2" 7)" = "$3" ]; }
# first_row SESSION: the queue of the first row of the table
first_row() {
	cap "$1"
	sed -n '/^QUEUE /{n;p;q;}' "$T/screen" | awk '{ print $1 }'
}
# start SESSION COLS ROWS ARGS...: smqctl ARGS in a new session of that
# size; a shell in the pane writes its exit status to $T/rc.SESSION (tmux
# 3.3 may take seconds to report #{pane_dead_status}, or miss it)
start() {
	s=$1 x=$2 y=$3
	shift 3
	rm -f "$T/rc.$s"
	tm new-session -d -s "$s" -x "$x" -y "$y" \
		"'$S' $*; echo \$? >'$T/rc.$s'" || die "tmux"
}
session_ended() { [ -s "$T/rc.$1" ]; }
# top_pid SESSION: the smqctl top that the session's shell runs
top_pid() { pgrep -P "$(tm display -p -t "$1" '#{pane_pid}')" | head -n 1; }
# napped PID N: PID has napped N times (lib.sh's naps: a look each)
napped() { [ "$(naps "$1")" -ge "$2" ] 2>/dev/null; }
status_is() { [ "$(cat "$T/rc.$1" 2>/dev/null)" = "$2" ]; }
smq() { "$S" -w "file:$W" "$@"; }

# ---- a window of 4 queues with a few messages; only board 0 sends on 2 ----
smq init --boards 2 --queues 4 --senders 2:0 >/dev/null &&
	smq send -q 0 a && smq send -q 1 bb && smq send -q 2 ccc ||
	die "cannot set up the window"

# ---- --once: text and JSON, and top writes nothing ----
cp "$W" "$T/w.before"
smq -b 5 top --once --interval 0.1 >"$T/once" 2>"$T/once.err"
rc=$?
check "top -b 5 on a window of 2 boards: exit 1, board 5 does not exist" \
	sh -c '[ "$1" -eq 1 ] && grep -q "board 5 does not exist: the window has 2 boards" "$2"' \
	sh "$rc" "$T/once.err"
smq top --once --interval 0.1 >"$T/once" 2>"$T/once.err"
rc=$?
cp "$T/once" "$T/screen"
check "top --once: exit 0" [ "$rc" -eq 0 ]
rows=$(sed -n '/^QUEUE /,/^$/p' "$T/once" | grep -cE '^ *[0-3] [0-9]+ ')
check "top --once: a row for each of the 4 queues" [ "$rows" -eq 4 ]
drows=$(sed -n '/^QUEUE /,/^$/p' "$T/once" | grep -cE '^ *[45] [01] d +none +\[')
check "top --once: the 2 diagnostic queues, marked" [ "$drows" -eq 2 ]
nrows=$(sed -n '/^QUEUE /,/^$/p' "$T/once" | grep -cE '^ *[0-3] [01] +none +\[')
check "top --once: no receiver on queues 0 to 3 (RECEIVER none)" [ "$nrows" -eq 4 ]
check "top --once: the queue heading (QUEUE RCVR RECEIVER FILL ...)" \
	grep -qE '^QUEUE RCVR RECEIVER FILL +MSGS/S +RECV/S +MB/S +BELLS/S +FULL/S +SENT +RECEIVED$' "$T/once"
check "top --once: the board heading (BOARD STATE ACTIVITY PID HOST MOVED DOORBELL)" \
	grep -qE '^BOARD STATE +ACTIVITY +PID +HOST +MOVED +DOORBELL$' "$T/once"
# board 0's sends have exited (its pid is the last one's); board 1 never ran
check "top --once: boards absent and at rest" \
	sh -c 'grep -qE "^ +0 absent +at rest +[0-9]+ " "$1" &&
	       grep -qE "^ +1 absent +at rest +- +- " "$1"' sh "$T/once"
check "top --once: the totals count no receiver" \
	grep -q '; 0 receivers, 0 asleep$' "$T/once"
check "top --once: the window name, rates over the interval" \
	grep -q "file:$W .*generation 1" "$T/once"
check "top --once: plain text (no escape sequences)" \
	sh -c '! grep -q "$(printf "\033")" "$1"' sh "$T/once"
check "top --once: the window is not written" cmp -s "$W" "$T/w.before"
if command -v python3 >/dev/null 2>&1 && python3 -c '' 2>/dev/null; then
	smq --json top --once -i 0.1 >"$T/json" 2>"$T/json.err"
	check "top --once --json: one object with every queue and rate" \
		python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
q=d["queue_table"]
assert d["queues"]==4 and len(q)==6 and len(d["board_table"])==2
assert [x["queue"] for x in q]==[0,1,2,3,4,5]
assert [x["diagnostic"] for x in q]==[False]*4+[True]*2
assert [x["sent"] for x in q]==[1,1,1,0,0,0]
assert [x["senders"] for x in q]==[[0,1]]*2+[[0]]+[[0,1]]*3, [x["senders"] for x in q]
for x in q:
    for k in ("receiver","fill","capacity","msgs_per_s","mb_per_s",
              "doorbells_per_s","full_waits_per_s","sleeping","received"):
        assert k in x, k
assert [x["receiver_state"] for x in q]==["none"]*6
assert [b["activity"] for b in d["board_table"]]==["none"]*2
assert "msgs" in d["totals"] and d["elapsed_s"] > 0' "$T/json"
else
	note "python3 not found: the JSON sub-check is skipped"
fi
smq top >/dev/null 2>"$T/err" </dev/null
rc=$?
check "top without a terminal: exit 1 and says so" \
	sh -c '[ "$1" -eq 1 ] && grep -q terminal "$2"' sh "$rc" "$T/err"

# ---- --once: a receiver waiting, then killed (a window of its own) ----
# It sleeps in its wait: asleep, its board at work; killed, it is dead and
# so is its board, not asleep (what top shows is true after a SIGKILL).
RW=file:$T/rw
"$S" -w "$RW" init --boards 2 --queues 4 >/dev/null ||
	die "cannot set up the receiver's window"
bg_start "$S" -w "$RW" -b 1 recv -q 3 --timeout 30 >/dev/null 2>&1
rcv=$pid
# once: top --once of $RW into $T/screen
once() { "$S" -w "$RW" top --once -i 0.1 >"$T/screen" 2>&1; }
check "receiver: queue 3 asleep, board 1 at work (pid $rcv)" \
	waitfor 3 'once && grep -qE "^ +3 1 +asleep +\[" "$T/screen" &&
	           grep -qE "^ +1 absent +at work +$rcv " "$T/screen"'
check "receiver: the totals count 1 receiver, 1 asleep" \
	grep -q '; 1 receivers, 1 asleep$' "$T/screen"
kill -9 "$rcv"
wait_pid 10 "$rcv" "the receiver, killed"
killed=$rcv
once
check "receiver killed: queue 3's receiver dead, board 1 dead, at once" \
	sh -c 'grep -qE "^ +3 1 +dead +\[" "$1" &&
	       grep -qE "^ +1 absent +dead +$2 " "$1"' sh "$T/screen" "$killed"
check "receiver killed: the totals count 0 receivers, 1 dead" \
	grep -q '; 0 receivers, 0 asleep, 1 dead$' "$T/screen"
# a monitor writes nothing: a dead receiver of the board top names (0, by
# default) stays dead to its next look, and the window is left as it was
bg_start "$S" -w "$RW" recv -q 2 --timeout 30 >/dev/null 2>&1
rcv0=$pid
check "board 0's receiver: queue 2 asleep (pid $rcv0)" \
	waitfor 3 'once && grep -qE "^ +2 0 +asleep +\[" "$T/screen"'
kill -9 "$rcv0"
wait_pid 10 "$rcv0" "board 0's receiver, killed"
cp "$T/rw" "$T/rw.before"
once
once
check "top of board 0 twice: its dead receiver still dead, the window unwritten" \
	sh -c 'grep -qE "^ +2 0 +dead +\[" "$1" &&
	       grep -qE "^ +0 absent +dead +$2 " "$1" && cmp -s "$3" "$4"' \
	sh "$T/screen" "$rcv0" "$T/rw" "$T/rw.before"

# ---- --once --json while another host's receiver is judged ----
# Board 1 is another host (its processes read another boot id): top --once
# looks again each interval until its idle receiver's heartbeat is known.
# The totals must be of the interval the rates and elapsed_s are of, not
# of every interval it waited.
other_check=0
echo "0badb007-5eed-4a11-8000-0000001$$" >"$T/boot_id"
if command -v python3 >/dev/null 2>&1 && command -v unshare >/dev/null 2>&1 &&
	unshare --mount sh -c 'mount --bind "$0" /proc/sys/kernel/random/boot_id' \
		"$T/boot_id" 2>/dev/null; then
	OW=file:$T/ow
	"$S" -w "$OW" init --boards 2 --queues 2 --entries 64 >/dev/null ||
		die "cannot set up the other host's window"
	unshare --mount sh -c 'mount --bind "$2" /proc/sys/kernel/random/boot_id &&
		exec "$0" -w "$1" -b 1 recv -q 1 --timeout 30' "$S" "$OW" "$T/boot_id" \
		>/dev/null 2>&1 &
	orcv=$!
	track $orcv
	bg_start "$S" -w "$OW" recv -q 0 --count 100000 --timeout 30 >/dev/null 2>&1
	r0=$pid
	# (a pace, not a state: a message every 0.02 s)
	bg_start sh -c 'while :; do "$0" -w "$1" send -q 0 m || exit; sleep 0.02; done' \
		"$S" "$OW" >/dev/null 2>&1
	snd=$pid
	# going: queue 0's receiver has taken messages, and the other
	# host's has opened queue 1 (dump's columns: QUEUE, RECEIVER board
	# and state, FILL, QUEUED, SENT, RECEIVED)
	going() {
		"$S" -w "$OW" dump 2>/dev/null | awk '$1 == 0 && $2 == 0 && $7 > 0 { a = 1 }
			$1 == 1 && $2 == 1 && $3 != "none" { b = 1 }
			END { exit !(a && b) }'
	}
	wait_for 10 "the other host's receiver, and messages moving on queue 0" going
	# three times: one whose first interval saw the heartbeat move did
	# not wait
	for k in 1 2 3; do
		"$S" -w "$OW" --json top --once -i 0.1 >"$T/other$k.json" 2>&1
	done
	check "top --once --json beside another host's receiver (3 runs): the totals are of the interval reported" \
		python3 -c 'import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    t = d["totals"]
    assert abs(t["msgs"] - t["msgs_per_s"] * d["elapsed_s"]) <= 1, (f, t, d["elapsed_s"])' \
		"$T/other1.json" "$T/other2.json" "$T/other3.json"
	kill "$snd" "$r0" "$orcv" 2>/dev/null
	other_check=1
else
	note "the totals beside another host's receiver: not tested (cannot give a process another boot id here: unshare --mount, root)"
fi

# ---- the live view needs a terminal ----
# tmux gives each pane a pseudo-terminal.  Where none can be opened (no
# /dev/ptmx, /dev/pts not mounted, as in some containers), the live view is
# skipped, and said so, after the checks above.
nopty() {
	any_failed && die "top --once (above); and $1: the live view is not tested"
	skip "$1: the live view of top is not tested (--once passed)"
}
if command -v python3 >/dev/null 2>&1 &&
	! python3 -c 'import os; os.openpty()' 2>"$T/pty.err"; then
	nopty "no pseudo-terminal can be opened ($(tail -n 1 "$T/pty.err"))"
fi
# (sleep 30: a program for the pane, which the test only opens)
tm new-session -d -s ptycheck -x 40 -y 10 "sleep 30" 2>"$T/pty.err" ||
	nopty "tmux cannot open a terminal for a session ($(head -n 1 "$T/pty.err"))"
# (left to its sleep: killed, the server's last session, it would take
# the server down while the next session's client connects to it:
# "server exited unexpectedly")

# ---- the live view: draws, counts, keys, resize, quit ----
start live 140 40 -w "file:$W" top --interval 0.2
waitfor 3 'shows live "all queues:"'
check "live: header with the window name and the queue heading" \
	sh -c 'grep -q "file:$1 " "$2" && grep -q "^QUEUE " "$2"' sh "$W" "$T/screen"
n=0
for q in 0 1 2 3; do row live $q && n=$((n + 1)); done
check "live: rows for queues 0 to 3" [ "$n" -eq 4 ]
check "live: in the alternate screen while it runs" \
	[ "$(fmt live '#{alternate_on}')" = 1 ]
check "live: queue 3 has sent 0" sent_is live 3 0
smq send -q 3 dddd
check "live: a message sent meanwhile shows (queue 3 sent 1)" \
	waitfor 2 'sent_is live 3 1'
check "live: the totals count it" waitfor 2 'shows live ": 1 msgs,"'
# msgs_rate SESSION QUEUE: the MSGS/S column of its row is above 0
msgs_rate() { awk -v r="$(col "$1" "$2" 2)" 'BEGIN { exit !(r > 0) }'; }
# msgs_none SESSION QUEUE: its MSGS/S column is 0.0
msgs_none() { [ "$(col "$1" "$2" 2)" = 0.0 ]; }
# history SESSION QUEUE: the levels of its rate history, blanks removed
history() {
	row "$1" "$2" && sed 's/^[^]]*\]//' "$T/row" |
		awk '{ for (i = 9; i <= NF; i++) printf "%s", $i }'
}
check "live: queue 3 at 0 msgs/s" waitfor 2 'msgs_none live 3'
for i in 1 2 3 4 5 6 7 8; do smq send -q 3 x; done
check "live: a burst of messages shows as msgs/s on queue 3" \
	waitfor 2 'msgs_rate live 3'
check "live: the rate comes back to 0" waitfor 2 'msgs_none live 3'
check "live: the burst stays in queue 3's rate history, not in queue 2's" \
	sh -c '[ -n "$1" ] && [ -z "$2" ]' sh "$(history live 3)" "$(history live 2)"

check "live: the sort is by queue" shows live "sort: queue"
tm send-keys -t live s
check "live: s sorts by msgs/s" waitfor 2 'shows live "sort: msgs/s"'
smq send -q 1 e && smq send -q 1 f
tm send-keys -t live s s
check "live: s s sorts by fill, queue 3 (9 waiting) first" \
	waitfor 2 'shows live "sort: fill" && [ "$(first_row live)" = 3 ]'
tm send-keys -t live s
check "live: s again sorts by queue" \
	waitfor 2 'shows live "sort: queue" && [ "$(first_row live)" = 0 ]'

tm send-keys -t live p
check "live: p shows PAUSED" waitfor 2 'shows live PAUSED'
smq send -q 0 g
# three of its looks, counted by its naps: a top not paused would have
# drawn queue 0's sent 2 by then
tp=$(top_pid live)
wait_for 10 "the paused top to look 3 times" napped "$tp" $(($(naps "$tp") + 3))
check "live: paused, the frame stays (queue 0 sent still 1)" sent_is live 0 1
tm send-keys -t live p
check "live: p again resumes (no PAUSED, queue 0 sent 2)" \
	waitfor 2 '! shows live PAUSED && sent_is live 0 2'

check "live: totals before r are not 0" sh -c '! grep -q ": 0 msgs," "$1"' sh "$T/screen"
tm send-keys -t live r
check "live: r resets the totals" waitfor 2 'shows live ": 0 msgs,"'

# the latest events: a receiver comes and goes, as smqctl events says it
# (its opening from board 1's journal, its death seen)
bg_start "$S" -w "file:$W" -b 1 recv -q 3 -c 1000 -T $((60 * slow)) >/dev/null
ev_rcv=$pid
check "live: the latest events show a receiver attached, from the journal" \
	waitfor 3 'shows live "latest events:" && shows live "queue 3: board 1'"'"'s receiver opened it (pid $ev_rcv)"'
kill -9 $ev_rcv
wait_pid 10 $ev_rcv "the receiver of the latest events, killed"
check "live: ...and the same receiver killed" \
	waitfor 3 'shows live "queue 3: receiver died with the queue open (pid $ev_rcv"'

smq init --boards 2 --queues 4 --force >/dev/null
check "live: a re-initialised window is attached again, and it says so" \
	waitfor 3 'shows live "re-attached" && shows live "generation 2" && sent_is live 3 0'

tm resize-window -t live -x 60 -y 15
check "live: resized to 60x15, the pane is 60x15" \
	waitfor 2 '[ "$(fmt live "#{pane_width}x#{pane_height}")" = 60x15 ]'
waitfor 2 'shows live "all queues:"'
cap live
check "live: after the resize, header, heading and totals once, no garbage" \
	sh -c 'grep -qE "^[0-9]{2}:[0-9]{2}:[0-9]{2}  file:" "$1" &&
	       [ "$(grep -c "^QUEUE " "$1")" = 1 ] &&
	       [ "$(grep -c "^every " "$1")" = 1 ] &&
	       [ "$(grep -c "^all queues:" "$1")" = 1 ] &&
	       [ "$(grep -c "^since " "$1")" = 1 ] &&
	       [ "$(wc -l <"$1")" -le 15 ] &&
	       awk "length > 60 { bad = 1 } END { exit bad }" "$1"' sh "$T/screen"
tm resize-window -t live -x 120 -y 9
check "live: at 120x9 no queue fits, and it says so where they would be" \
	waitfor 2 'shows live "terminal too small to show the 6 queues (120x9)"'
tm resize-window -t live -x 120 -y 40
check "live: at 120x40 the queues again" waitfor 2 '! shows live "terminal too small" && row live 3'

tm send-keys -t live q
check "live: q ends top" waitfor 2 'session_ended live'
check "live: exit status 0" status_is live 0
check "live: the alternate screen is left" [ "$(fmt live '#{alternate_on}')" = 0 ]
capall live
check "live: no frame is left on the terminal" \
	sh -c '! grep -q "^QUEUE " "$1"' sh "$T/screen"

# ---- SIGTERM: the terminal is restored, the status tells the signal ----
# A shell in the pane runs top (on the pane's terminal, fd 3) and, after
# it, reports its status and the terminal modes (then sleep 30 keeps the
# pane for the test to read).
tm new-session -d -s term -x 100 -y 30 "exec 3<&0; '$S' -w 'file:$W' top \
-i 0.2 <&3 & echo \$! >'$T/pid'; wait \$!; echo top-exit=\$?; \
stty -a | tr ' ;' '\n\n' | grep -xE -e '-?(icanon|echo)' | tr '\n' ' '; \
echo; exec sleep 30"
waitfor 3 'shows term "all queues:"'
check "SIGTERM: top runs (alternate screen)" \
	[ "$(fmt term '#{alternate_on}')" = 1 ]
kill -TERM "$(cat "$T/pid")"
check "SIGTERM: top ends, status 143" waitfor 2 'shows term top-exit=143'
check "SIGTERM: the alternate screen is left" \
	[ "$(fmt term '#{alternate_on}')" = 0 ]
check "SIGTERM: the terminal is out of raw mode (icanon echo)" \
	waitfor 2 'capall term && grep -qE "^icanon echo *\$" "$T/screen"'
check "SIGTERM: no frame is left on the terminal" \
	sh -c '! grep -q "^QUEUE " "$1"' sh "$T/screen"
tm kill-session -t term

# ---- a window of 1024 queues: quick to draw, scrolls, quits at once ----
BIG=$T/big
"$S" -w "file:$BIG" init --boards 2 --queues 1024 --entries 16 >/dev/null ||
	die "cannot make a window of 1024 queues"
start big 120 40 -w "file:$BIG" top -i 0.2
check "1024 queues: the first rows within 2 s" \
	waitfor 2 'shows big "queues 1-" && [ "$(first_row big)" = 0 ]'
tm send-keys -t big End
check "1024 queues: End shows queue 1023" waitfor 2 'row big 1023'
tm send-keys -t big Home
check "1024 queues: Home goes back to queue 0" \
	waitfor 2 '[ "$(first_row big)" = 0 ]'
tm send-keys -t big NPage
check "1024 queues: PgDn scrolls a page" \
	waitfor 2 '[ "$(first_row big)" -gt 20 ]'
p=$(first_row big)
tm send-keys -t big Down
check "1024 queues: Down scrolls a row" \
	waitfor 2 '[ "$(first_row big)" = $((p + 1)) ]'
tm send-keys -t big Up
check "1024 queues: Up scrolls back" waitfor 2 '[ "$(first_row big)" = "$p" ]'
tm send-keys -t big q
check "1024 queues: q ends top within 1 s" waitfor 1 'session_ended big'
check "1024 queues: exit status 0" status_is big 0

# ---- the window is removed: top ends cleanly and says why ----
start gone 120 40 -w "file:$W" top -i 0.2
waitfor 3 'shows gone "all queues:"'
rm -f "$W"
check "removed window: top ends within 5 s" waitfor 5 'session_ended gone'
check "removed window: exit status 1" status_is gone 1
capall gone
check "removed window: the error is on the restored terminal" \
	sh -c 'grep -q "smqctl: window file:.* does not exist" "$1" &&
	       ! grep -q "^QUEUE " "$1"' sh "$T/screen"
check "removed window: the alternate screen is left" \
	[ "$(fmt gone '#{alternate_on}')" = 0 ]

# 63, and the JSON check where there is python3
json_check=0
command -v python3 >/dev/null 2>&1 && python3 -c '' 2>/dev/null && json_check=1
finish $((65 + json_check + other_check))
