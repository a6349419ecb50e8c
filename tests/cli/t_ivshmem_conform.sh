#!/bin/sh
# smqctl server against strict clients of the ivshmem protocol
# (tests/cli/ivshmem_strict.h: as strict as QEMU's client and device, and more):
#  - a peer that leaves while a newcomer connects, in one round of the
#    server's loop, in either order: the newcomer is told of it before its
#    removal, or not at all (QEMU's client drops the connection on a
#    removal of a peer it was never told of);
#  - churn: CYCLES (default 1000) clients come and go, a third of them
#    inside their setup, some stopped at random moments and killed while
#    stopped; every one of them conformant.  Meanwhile one strict client is
#    stopped throughout (it reads nothing), another is stopped and let go
#    at random moments, and a receiver of libsmq sleeps on the ivshmem
#    doorbell:
#      the server's descriptors stay within a bound set by the peers
#      connected (a socket and an eventfd per vector each, and as many again
#      for one announcement begun), not by what the stopped client left
#      unread; nobody is dropped; the two then know exactly the peers
#      still there; and a send from a board that sat between calls all
#      along wakes the receiver by its doorbell, not its 1 s sleep slice;
#  - a receiver (smqctl recv) asleep when the server stops fails at once,
#    naming the cause, rather than sleep on with a doorbell new peers
#    cannot ring.
# SMQCTL_WRAP: shell words put before every smqctl invocation (valgrind).
# Prints "ok"/"FAIL" per check and a summary; exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
C=$B/tests/ivshmem_conform
[ -x "$C" ] || skip "ivshmem_conform not built ($C): run make first"
cycles=${CYCLES:-1000}
M=$SHM
unset SMQ_WINDOW NOTIFY_SOCKET 2>/dev/null

# after a failed verdict: the last lines of what each process said
show_run() {
	for f in "$T"/*.err "$T/out"; do
		[ -s "$f" ] && sed "s|$T|\$T|g; s/^/       ${f##*/}: /" "$f" | tail -n 5
	done
	return 0
}

sock=$T/ivshmem.sock
# serve VECTORS: smqctl server in the background, $srv its pid
serve() {
	: >"$T/out"
	: >"$T/server.err"
	"$S" -w "shm:$M" server --socket "$sock" --vectors "$1" --shm-size 1M \
		</dev/null >"$T/out" 2>"$T/server.err" &
	srv=$!
	track $srv
	wait_line 20 "$T/out" listening || no "the server did not listen"
}
stop_server() {
	stop_pid 20 "$srv" "the server, sent SIGTERM" || no "the server exited $rc"
	[ ! -s "$T/server.err" ] || no "the server wrote to stderr"
}
# watcher NAME: a strict client whose stdin is the fifo $T/NAME.in, held
# open on descriptor 5 (a), 6 (b) or 7 (c); its pid in $pid_NAME
watcher() {
	mkfifo "$T/$1.in"
	"$C" watch "$sock" "$2" <"$T/$1.in" >"$T/$1.out" 2>"$T/$1.err" \
		5>&- 6>&- 7>&- &
	eval "pid_$1=$!"
	track $!
	hold_fifo $(fd_of $1) "$T/$1.in"
}
fd_of() { case $1 in a) echo 5 ;; b) echo 6 ;; c) echo 7 ;; esac; }
# done_watching NAME: closes its stdin; it must say it was conformant
# throughout (then it stays until end_watcher)
done_watching() {
	release_fifo $(fd_of $1)
	eval "w=\$pid_$1"
	wout=$T/$1.out
	within 20 eval 'ended "$w" || grep -q conformant "$wout"'
	grep -q conformant "$T/$1.out" ||
		no "watcher $1 broke off: $(tail -n 1 "$T/$1.err")"
}
end_watcher() {
	eval "w=\$pid_$1"
	stop_pid 10 "$w" "watcher $1, sent SIGTERM" || no "watcher $1 exited $rc"
}
# the IDs the server reports joined and not left, but for $1
live_but() {
	awk -v me="$1" '/^peer [0-9]+ joined/ { live[$2] = 1 }
		/^peer [0-9]+ left/ { delete live[$2] }
		END { for (id in live) if (id != me) print id }' "$T/out" |
		sort -n | tr '\n' ' ' | sed 's/ $//'
}

echo "== a departure and an arrival in one round of the server"
# state PID: its state letter (R, S, D, T, Z)
state() { { read -r _s <"/proc/$1/stat"; } 2>/dev/null && set -- ${_s##*) } && echo "$1"; }
# connected_waiting PID: it has a socket and sleeps (its connect queued
# on the stopped server, it waits to read)
connected_waiting() {
	[ "$(state "$1")" = S ] && ls -l "/proc/$1/fd" 2>/dev/null | grep -q 'socket:'
}
# asleep_on QUEUE: the window (the server's memory, read as it is) says
# the queue's receiver waits, asleep
asleep_on() {
	"$S" -w "shm:$M" --json dump -q "$1" >"$T/dq.json" 2>/dev/null &&
		grep -q '"receiver_state": "waiting"' "$T/dq.json" &&
		grep -q '"sleeping": true' "$T/dq.json"
}
for order in "leave-first" "join-first"; do
	rm -f "$T"/*.in "$T"/*.out "$T"/*.err
	serve 2
	watcher a 2
	wait_line 20 "$T/a.out" "^id 0" || no "watcher a got no ID"
	kill -STOP "$srv"
	if [ $order = leave-first ]; then
		kill -KILL "$pid_a"
		wait_pid 10 "$pid_a" "watcher a, killed"
		release_fifo 5
		watcher b 2
	else
		watcher b 2
		# its connect queued on the stopped server
		wait_for 20 "watcher b to connect and wait" connected_waiting "$pid_b"
		kill -KILL "$pid_a"
		wait_pid 10 "$pid_a" "watcher a, killed"
		release_fifo 5
	fi
	# (watcher a is reaped: its socket is closed)
	kill -CONT "$srv"
	wait_line 20 "$T/b.out" "^id 1" || no "watcher b got no ID"
	wait_line 20 "$T/out" "peer 0 left" || no "peer 0's leaving not reported"
	done_watching b
	grep -qx "peers:" "$T/b.out" || no "watcher b ends knowing peers '$(grep peers: "$T/b.out")', expected none"
	end_watcher b
	stop_server
	verdict "$order: the newcomer is told of the peer before its removal, or not at all"
done

echo "== churn: $cycles clients come and go"
rm -f "$T"/*.in "$T"/*.out "$T"/*.err
serve 2
base=$(ls "/proc/$srv/fd" | wc -l)
mkfifo "$T/wake.in"
"$C" wake "$sock" <"$T/wake.in" >"$T/wake.out" 2>"$T/wake.err" 5>&- 6>&- 7>&- 8>&- &
pid_wake=$!
track $pid_wake
hold_fifo 8 "$T/wake.in"
wait_line 20 "$T/wake.out" "^ready" || no "the sleeping receiver did not start"
# QEMU's own device, as strict: it refuses a removal of a peer it does
# not know, or of itself, and more vectors than it has; its guest never
# starts (-S), its device serves the socket all the same
QEMU=qemu-system-x86_64
qpid=
if command -v $QEMU >/dev/null 2>&1; then
	$QEMU -S -machine accel=tcg -nodefaults -display none -monitor none \
		-serial none -m 64 -chardev "socket,path=$sock,id=smq" \
		-device ivshmem-doorbell,chardev=smq,vectors=2 \
		</dev/null >"$T/qemu.err" 2>&1 5>&- 6>&- 7>&- 8>&- &
	qpid=$!
	track $qpid
	wait_line 20 "$T/out" "joined (pid $qpid)" || no "QEMU's device did not join ($(head -n 2 "$T/qemu.err"))"
else
	note "no $QEMU: the churn runs without QEMU's ivshmem-doorbell device"
fi
watcher a 2
watcher b 2
wait_line 20 "$T/a.out" "^id" && wait_line 20 "$T/b.out" "^id" || no "the watchers got no ID"
id_a=$(sed -n 's/^id //p' "$T/a.out")
id_b=$(sed -n 's/^id //p' "$T/b.out")
# a: reads nothing the whole time; b: stopped and let go at random (the
# naps below are that randomness, on purpose)
kill -STOP "$pid_a"
: >"$T/churning"
(
	while [ -e "$T/churning" ]; do
		kill -STOP "$pid_b"
		sleep "0.0$(( $(od -An -N1 -tu1 /dev/urandom) % 9 + 1 ))"
		kill -CONT "$pid_b"
		sleep "0.0$(( $(od -An -N1 -tu1 /dev/urandom) % 9 + 1 ))"
	done
	kill -CONT "$pid_b"
) &
stopper=$!
track $stopper
# the server's descriptors, as often as a look takes: its eventfds against
# its sockets (the listening one, and one per peer connected).  Each peer
# has 2 eventfds, and at most 1 duplicate for an announcement begun; a
# peer's socket is made before its eventfds and closed after them, and
# one more peer's worth covers a look that reads a peer half made.
(
	max=0
	while [ -e "$T/churning" ]; do
		ls -l "/proc/$srv/fd" 2>/dev/null >"$T/fds"
		n=$(grep -c . "$T/fds")
		sockets=$(grep -c 'socket:' "$T/fds")
		efds=$(grep -c 'eventfd' "$T/fds")
		[ "$n" -gt "$max" ] && max=$n && echo "$max" >"$T/fdmax"
		[ "$efds" -gt $((3 * (sockets - 1) + 3)) ] &&
			echo "$efds eventfds for $((sockets - 1)) peers" >>"$T/fdover"
		sleep 0.02  # a nap between samples, not a stand-in
	done
) &
sampler=$!
track $sampler
"$C" churn "$sock" 2 "$cycles" "$$" >"$T/churn.out" 2>"$T/churn.err" 5>&- 6>&- 7>&- 8>&- &
churn=$!
track $churn
wait_pid 200 "$churn" "the churn of $cycles clients"
churn_rc=$rc
rm -f "$T/churning"
wait_pid 10 "$stopper" "the loop that stops and lets go watcher b"
wait_pid 10 "$sampler" "the loop that samples the server's descriptors"
kill -CONT "$pid_a"
[ $churn_rc -eq 0 ] || no "churn exit $churn_rc: $(tail -n 1 "$T/churn.err")"
cat "$T/churn.out"
fdmax=$(cat "$T/fdmax" 2>/dev/null || echo 0)
echo "     server descriptors: $base with no peer, at most $fdmax under churn"
[ -s "$T/fdover" ] && no "the server held more eventfds than its peers account for: $(sort -n "$T/fdover" | tail -n 1)"
# 4 churning clients, 2 watchers, the receiver's 2 boards, and as many
# churning ones again whose leaving the server has yet to see: a bound of
# the same order, far below one descriptor per unread message
[ "$fdmax" -le $((base + 16 * 4)) ] || no "the server held $fdmax descriptors"
grep -q "dropped" "$T/out" && no "the server dropped a client: $(grep dropped "$T/out" | head -n 1)"
if [ -n "$qpid" ]; then
	kill -0 "$qpid" 2>/dev/null || no "QEMU's device died under the churn: $(head -n 2 "$T/qemu.err")"
	grep -q . "$T/qemu.err" && no "QEMU complained: $(head -n 2 "$T/qemu.err")"
fi
verdict "$cycles clients came and went, each conformant (QEMU's device too, where there is QEMU); the server's descriptors stay bounded by the peers connected; nobody dropped"

echo go >&8 2>/dev/null
release_fifo 8
wait_pid 30 "$pid_wake" "the sleeping receiver, told to go"
sed 's/^/     /' "$T/wake.out"
[ $rc -eq 0 ] || no "wake exit $rc: $(tail -n 1 "$T/wake.err")"
verdict "a receiver asleep through it all is woken by its doorbell, not its sleep slice"

done_watching a
done_watching b
[ "$(sed -n 's/^peers: *//p' "$T/a.out")" = "$(live_but "$id_a")" ] ||
	no "watcher a (stopped throughout) knows '$(sed -n 's/^peers: *//p' "$T/a.out")', the server '$(live_but "$id_a")'"
[ "$(sed -n 's/^peers: *//p' "$T/b.out")" = "$(live_but "$id_b")" ] ||
	no "watcher b knows '$(sed -n 's/^peers: *//p' "$T/b.out")', the server '$(live_but "$id_b")'"
end_watcher a
end_watcher b
if [ -n "$qpid" ]; then
	stop_pid 10 "$qpid" "QEMU"
	grep -v 'terminating on signal' "$T/qemu.err" | grep -q . &&
		no "QEMU complained: $(head -n 2 "$T/qemu.err")"
fi
stop_server
verdict "the stopped clients, let go, read it all conformantly and know exactly the peers still there"

echo "== the server stops under a sleeping receiver"
rm -f "$T"/*.in "$T"/*.out "$T"/*.err
serve 2
"$S" -w "ivshmem:$sock" init >/dev/null 2>"$T/init.err" || no "init failed: $(cat "$T/init.err")"
"$S" -w "ivshmem:$sock" -b 1 recv -T 60s >"$T/recv.out" 2>"$T/recv.err" &
rpid=$!
track $rpid
wait_line 20 "$T/out" "peer 1 joined" || no "the receiver did not join"
wait_for 20 "the receiver (pid $rpid) asleep on its doorbell" asleep_on 1
stop_server
wait_pid 70 "$rpid" "the receiver, its server stopped"
[ $rc -eq 1 ] || no "recv exit $rc, expected 1"
grep -q "the ivshmem server closed the connection" "$T/recv.err" ||
	no "recv said '$(cat "$T/recv.err")'"
grep -q "timed out" "$T/recv.err" && no "recv slept until its timeout"
verdict "[exit 1] a receiver asleep when the server stops says so at once, not at its timeout"

finish 6
