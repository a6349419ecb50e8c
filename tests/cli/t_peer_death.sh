#!/bin/sh
# Peer death.  (a) A board whose receiver is killed shows as dead in dump
# and top, and so does the receiver (dead, not asleep): on this host its
# liveness is its pid, at once; (b) on another host (a board run in a mount
# namespace where the kernel's boot id reads otherwise: to smq, another
# host) only its heartbeat tells: alive while dump and top --once see it
# move, dead once they have not seen it move for SMQ_HEARTBEAT_TIMEOUT_MS
# (5 s), measured on this host's clock alone -- whatever time the other
# host keeps;
# (c) board 0's sync, waiting for boards 1 and 2, reports board 1 dead when
# board 1 is killed after it announced itself, within a few seconds of the
# kill and not only at its timeout.
# Prints "ok"/"FAIL" per check; exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
if command -v jq >/dev/null 2>&1; then
	JSON=jq
elif command -v python3 >/dev/null 2>&1; then
	JSON=python3
else
	skip "neither jq nor python3: cannot read smqctl's JSON"
fi
W=file:$T/w
unset SMQ_WINDOW SMQ_DEBUG 2>/dev/null

# field FILE JQ-PATH: a value of a JSON document, as jq -r prints it
field() {
	if [ "$JSON" = jq ]; then
		jq -r "$2" "$1" 2>/dev/null
	else
		python3 - "$1" "$2" <<'EOF' 2>/dev/null
import json, re, sys
v = json.load(open(sys.argv[1]))
for key, idx in re.findall(r'\.(\w+)(?:\[(\d+)\])?', sys.argv[2]):
    v = v[key]
    if idx:
        v = v[int(idx)]
print(str(v).lower() if isinstance(v, bool) else v)
EOF
	fi
}
# alive_in CMD N: board N's "alive" in `smqctl --json CMD` (dump or top)
alive_in() {
	case $1 in
	dump) "$S" -w "$W" --json dump >"$T/j" 2>"$T/jerr" || return 1 ;;
	top) "$S" -w "$W" --json top --once --interval 0.1 >"$T/j" 2>"$T/jerr" ||
		return 1 ;;
	esac
	field "$T/j" ".board_table[$2].alive"
}
# waitfor SECONDS SHELL-CONDITION: poll it every 0.05 s
waitfor() { within "$1" eval "$2"; }

# ---- (a) a killed board shows dead at once on this host ----
"$S" -w "$W" init --boards 2 >/dev/null 2>&1 || die "init"
bg_start "$S" -w "$W" -b 1 recv --timeout 30 >/dev/null 2>&1
rcv=$pid
# it writes its pid and a heartbeat when it first sleeps; its board is
# alive before that, from its handles' processes
if waitfor 5 '[ "$(alive_in dump 1)" = yes ] &&
	[ "$(field "$T/j" ".board_table[1].pid")" = "$rcv" ]'; then
	ok "dump: board 1 (recv, pid $rcv) alive"
else
	failed "dump: board 1 (recv, pid $rcv) never shown alive: $(cat "$T/jerr")"
fi
pid=$(field "$T/j" '.board_table[1].pid')
[ "$pid" = "$rcv" ] && ok "dump: board 1's pid is recv's ($pid)" ||
	failed "dump: board 1's pid is $pid, recv is $rcv"
# judged: board 1's activity and queue 1's receiver state in "$T/j"
judged() {
	echo "$(field "$T/j" '.board_table[1].activity') $(field "$T/j" '.queue_table[1].receiver_state')"
}
# rx: queue 1's receiver as "$T/j" has it, for a failure's message
rx() {
	echo "(receiver pid $(field "$T/j" '.queue_table[1].receiver_pid'), alive '$(field "$T/j" '.queue_table[1].receiver_alive')')"
}
j=$(judged)
[ "$j" = "working waiting" ] && ok "dump: board 1 at work, queue 1's receiver waiting" ||
	failed "dump: board 1's activity and queue 1's receiver: '$j', expected 'working waiting'"
if [ "$(alive_in top 1)" = yes ]; then
	ok "top --once: board 1 alive"
else
	failed "top --once: board 1 not shown alive: $(cat "$T/jerr")"
fi
j=$(judged)
[ "$j" = "working waiting" ] && ok "top --once: board 1 at work, queue 1's receiver waiting" ||
	failed "top --once: board 1's activity and queue 1's receiver: '$j', expected 'working waiting'"
kill -9 "$rcv"
wait_pid 10 "$rcv" "board 1's receiver, killed"
a=$(alive_in dump 1)
[ "$a" = no ] && ok "dump: board 1 dead right after kill -9" ||
	failed "dump: board 1 after kill -9: alive is '$a'"
j="$(judged) $(field "$T/j" '.queue_table[1].sleeping')"
[ "$j" = "dead dead false" ] && ok "dump: board 1 dead, queue 1's receiver dead (not asleep)" ||
	failed "dump: board 1's activity, queue 1's receiver, sleeping: '$j', expected 'dead dead false' $(rx)"
h="$(field "$T/j" '.board_table[1].handles') $(field "$T/j" '.board_table[1].dead_handles')"
[ "$h" = "0 2" ] && ok "dump: board 1 has no handle open, 2 left by the dead (window, queue 1)" ||
	failed "dump: board 1's handles and dead handles: '$h', expected '0 2'"
if "$S" -w "$W" dump >"$T/text" 2>&1 && grep -Eq '^1 +1 dead ' "$T/text" &&
	grep -Eq "^1 +absent +dead +0\+2 +$rcv " "$T/text"; then
	ok "dump (text): queue 1's RECEIVER '1 dead', board 1 dead with HANDLES 0+2"
else
	failed "dump (text) after kill -9:"
	sed 's/^/    | /' "$T/text"
fi
a=$(alive_in top 1)
[ "$a" = no ] && ok "top --once: board 1 dead right after kill -9" ||
	failed "top --once: board 1 after kill -9: alive is '$a'"
j=$(judged)
[ "$j" = "dead dead" ] && ok "top --once: board 1 dead, queue 1's receiver dead" ||
	failed "top --once: board 1's activity and queue 1's receiver: '$j', expected 'dead dead' $(rx)"
# and while it is dead a zombie does not pass for alive either: its
# parent (a sleep that never waits, not this shell, which reaps its
# children as it goes) leaves it a zombie once killed
bg_start sh -c '"$0" -w "$1" -b 1 recv --timeout 30 >/dev/null 2>&1 &
	echo $! >"$2"; exec sleep 300' "$S" "$W" "$T/rcv.pid"
parent=$pid
wait_for 10 "the second recv's pid" test -s "$T/rcv.pid"
rcv=$(cat "$T/rcv.pid")
# the receiver of queue 1 now (it took over from the dead one)
waitfor 5 '[ "$(alive_in dump 1)" = yes ] &&
	[ "$(field "$T/j" ".queue_table[1].receiver_pid")" = "$rcv" ] &&
	[ "$(field "$T/j" ".queue_table[1].receiver_state")" = waiting ]' ||
	failed "dump: the second recv (pid $rcv) never shown waiting on queue 1 $(rx)"
t=$(field "$T/j" '.queue_table[1].receiver_takeovers')
[ "$t" = 1 ] && ok "dump: the second recv took queue 1 over from the dead one (1 takeover)" ||
	failed "dump: queue 1's receiver_takeovers is '$t', expected 1"
kill -9 "$rcv"
# not reaped: a zombie (waited for: its state in /proc says Z)
zombie() { { read -r _z <"/proc/$1/stat"; } 2>/dev/null && set -- ${_z##*) } && [ "$1" = Z ]; }
wait_for 10 "the killed receiver (pid $rcv) to be a zombie" zombie "$rcv"
a="$(alive_in dump 1) $(judged)"
[ "$a" = "no dead dead" ] && ok "dump: board 1 and its receiver dead while a zombie (not yet reaped)" ||
	failed "dump: board 1 while a zombie: alive, activity, receiver: '$a', expected 'no dead dead' $(rx)"
stop_pid 10 "$parent" "the second receiver's parent" KILL

# ---- (b) a board of another host: its heartbeat tells ----
# The kernel's boot id, read otherwise in a mount namespace, makes board 1
# another host to smq: then no pid of it means anything here.
other=""
echo "0badb007-5eed-4a11-8000-0000000$$" >"$T/boot_id"
if command -v unshare >/dev/null 2>&1 &&
	unshare --mount sh -c 'mount --bind "$0" /proc/sys/kernel/random/boot_id' \
		"$T/boot_id" 2>/dev/null; then
	other=yes
fi
if [ -z "$other" ]; then
	skip_part "(b) a board of another host" "cannot give a process another boot id here (unshare --mount, root)"
else
	"$S" -w "$W" init --boards 2 --force >/dev/null 2>&1 ||
		failed "(b) init"
	unshare --mount sh -c 'mount --bind "$2" /proc/sys/kernel/random/boot_id &&
		exec "$0" -w "$1" -b 1 recv --timeout 30' "$S" "$W" "$T/boot_id" \
		>/dev/null 2>&1 &
	rcv=$!
	track $rcv
	if waitfor 8 '[ "$(alive_in dump 1)" = yes ]' &&
		[ "$(field "$T/j" '.board_table[1].same_host')" = false ]; then
		age=$(field "$T/j" '.board_table[1].heartbeat_age_ms')
		ok "dump: board 1 of another host alive: its heartbeat moved $age ms before this dump looked again"
	else
		failed "dump: board 1 of another host not shown alive" \
			"(alive '$(field "$T/j" '.board_table[1].alive')', same host" \
			"'$(field "$T/j" '.board_table[1].same_host')')"
	fi
	j=$(judged)
	rage=$(field "$T/j" '.queue_table[1].receiver_heartbeat_age_ms')
	[ "$j" = "working waiting" ] && [ "$rage" -ge 0 ] 2>/dev/null &&
		ok "dump: board 1 of another host at work, its receiver waiting (its heartbeat seen to move $rage ms before)" ||
		failed "dump: board 1 of another host: activity and receiver '$j' (expected 'working waiting'), receiver heartbeat age '$rage'"
	# top --once, like dump, watches another host's heartbeat until it
	# moves (up to 5.1 s): it judges, it does not say unknown
	t0=$(now_ms)
	a=$(alive_in top 1)
	t=$(($(now_ms) - t0))
	j=$(judged)
	[ "$a $j" = "yes working waiting" ] &&
		ok "top --once: board 1 of another host alive, at work, its receiver waiting (judged in $t ms)" ||
		failed "top --once: board 1 of another host: alive, activity, receiver '$a $j' (expected 'yes working waiting'), after $t ms"
	kill -9 "$rcv"
	wait_pid 10 "$rcv" "board 1 of another host, killed"
	# dump and top --once look at once, side by side
	t0=$(now_ms)
	( "$S" -w "$W" --json top --once --interval 0.1 >"$T/jt" 2>"$T/jterr"
	  echo $(($(now_ms) - t0)) >"$T/jt.ms" ) &
	topbg=$!
	track $topbg
	a=$(alive_in dump 1)
	t=$(($(now_ms) - t0))
	age=$(field "$T/j" '.board_table[1].heartbeat_age_ms')
	# lower bounds, the heartbeat's watch of 5 s (no busy machine
	# shortens it): never how fast
	if [ "$a" = no ] && [ "$age" -ge 4900 ] 2>/dev/null && [ "$t" -ge 4900 ]; then
		ok "dump: dead once it watched the heartbeat stand still for $age ms ($t ms after the kill)"
	else
		failed "dump: board 1 of another host after kill -9: alive '$a', heartbeat age '$age' ms, after $t ms"
	fi
	j=$(judged)
	[ "$j" = "dead dead" ] && ok "dump: board 1 of another host dead, its receiver dead" ||
		failed "dump: board 1 of another host after kill -9: activity and receiver '$j', expected 'dead dead'"
	wait_pid 30 "$topbg" "top --once, watching the stilled heartbeat"
	cp "$T/jt" "$T/j"
	a=$(field "$T/j" '.board_table[1].alive')
	j=$(judged)
	t=$(cat "$T/jt.ms" 2>/dev/null)
	# a lower bound, as above
	if [ "$a $j" = "no dead dead" ] && [ "$t" -ge 4900 ] 2>/dev/null; then
		ok "top --once: dead, its receiver dead, once it watched the heartbeat stand still ($t ms after the kill)"
	else
		failed "top --once: board 1 of another host after kill -9: alive, activity, receiver '$a $j' (expected 'no dead dead'), after '$t' ms: $(cat "$T/jterr")"
	fi
fi

# ---- (b2) clocks that disagree: a board of another host whose clocks run
# seconds or an hour apart from ours is alive while it beats and dead once
# it stops: smq never compares another host's clock with its own.  Its
# monotonic clock is moved in a time namespace, its wall clock by faketime.
if [ -z "$other" ]; then
	skip_part "(b2) clocks that disagree" "no other host to skew (see b)"
elif ! unshare --time --monotonic 3600 true 2>/dev/null; then
	skip_part "(b2) clocks that disagree" "cannot make a time namespace here (unshare --time)"
else
	floor_b2=4
	for skew in +5s -5s; do
		ft=""
		if command -v faketime >/dev/null 2>&1; then
			ft="env FAKETIME_DONT_FAKE_MONOTONIC=1 faketime -f $skew"
		fi
		mono=3600
		[ "$skew" = -5s ] && mono=0
		"$S" -w "$W" init --boards 2 --force >/dev/null 2>&1 ||
			failed "(b2) init"
		unshare --mount --time --monotonic $mono --boottime $mono sh -c \
			'mount --bind "$2" /proc/sys/kernel/random/boot_id &&
			exec $3 "$0" -w "$1" -b 1 recv --timeout 30' "$S" "$W" \
			"$T/boot_id" "$ft" >/dev/null 2>&1 &
		rcv=$!
		track $rcv
		if [ -n "$ft" ]; then
			what="wall clock $skew"
		else
			what="wall clock as ours (faketime not installed)"
		fi
		what="$what, monotonic clock +$mono s"
		if waitfor 8 '[ "$(alive_in dump 1)" = yes ]'; then
			ok "skew ($what): alive while it beats"
		else
			failed "skew ($what): not shown alive (alive '$(field "$T/j" '.board_table[1].alive')')"
		fi
		# faketime may run the receiver as a child: kill the one that beats
		beater=$(field "$T/j" '.board_table[1].pid')
		# faketime keeps its clock in /dev/shm objects named by its
		# pid, which it removes only at its own exit: a kill leaves them
		ftpid=$(awk '{ print $4 }' "/proc/$beater/stat" 2>/dev/null)
		[ "$(cat "/proc/$ftpid/comm" 2>/dev/null)" = faketime ] || ftpid=""
		kill -9 "$beater" "$rcv" 2>/dev/null
		wait_pid 10 "$rcv" "board 1 of a skewed host, killed"
		[ -z "$ftpid" ] || { kill -9 "$ftpid" 2>/dev/null
			rm -f "/dev/shm/faketime_shm_$ftpid" \
			      "/dev/shm/sem.faketime_sem_$ftpid"; }
		a=$(alive_in dump 1)
		age=$(field "$T/j" '.board_table[1].heartbeat_age_ms')
		# at least the watch of 5 s; at most a minute, far below the
		# hour between the clocks (an age read off the other host's
		# clock would be that hour) and far above what a busy machine
		# adds: a bound on clocks compared, not a speed
		if [ "$a" = no ] && [ "$age" -ge 4900 ] 2>/dev/null && [ "$age" -lt 60000 ]; then
			ok "skew ($what): dead $age ms after its last beat was seen"
		else
			failed "skew ($what): after kill -9: alive '$a', age '$age' ms"
		fi
	done
fi

# ---- (c) sync reports a board that died while synchronising ----
"$S" -w "$W" init --boards 3 --force >/dev/null 2>&1 || failed "(c) init"
# board 0's timeout (120 s) is beyond the wait for it below (60 s): a
# sync that reported at its timeout, not at the death, never ends in time
bg_start "$S" -w "$W" sync --timeout 120 --interval 50ms >"$T/s0.out" 2>"$T/s0.err"
s0=$pid
bg_start "$S" -w "$W" -b 1 sync --timeout 30 >/dev/null 2>&1
s1=$pid
if waitfor 5 'grep -q "board 1 announced" "$T/s0.out"'; then
	ok "sync: board 0 saw board 1 announce itself"
else
	failed "sync: board 0 never printed 'board 1 announced'"
	sed 's/^/    | /' "$T/s0.out" "$T/s0.err"
fi
if running "$s0"; then
	ok "sync: board 0 still waits for board 2"
else
	failed "sync: board 0 ended before board 1 was killed"
fi
kill -9 "$s1"
wait_pid 10 "$s1" "board 1's sync, killed"
wait_pid 60 "$s0" "board 0's sync, waiting for a dead board (its timeout 120 s)"
[ "$rc" -eq 1 ] && ok "sync: board 0 exits 1" ||
	failed "sync: board 0 exit status $rc, expected 1"
if grep -q 'board 1' "$T/s0.err" && grep -q 'died' "$T/s0.err"; then
	ok "sync: board 0 says board 1 died: $(head -n 1 "$T/s0.err")"
else
	failed "sync: board 0's stderr does not name board 1 as dead"
	sed 's/^/    | /' "$T/s0.err"
fi

# (a) and (c) 17, (b) 6 where this host can make another, (b2) 4 where it
# can skew that host's clocks too
floor_b=0
[ -z "$other" ] || floor_b=6
finish $((17 + floor_b + ${floor_b2:-0}))
