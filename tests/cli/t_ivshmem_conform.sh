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
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
case $B in
/*) ;;
*) B=$PWD/$B ;;
esac
S=$B/smqctl
C=$B/tests/ivshmem_conform
[ -x "$S" ] || { echo "smqctl not built ($S): run make first"; exit 77; }
[ -x "$C" ] || { echo "ivshmem_conform not built ($C): run make first"; exit 77; }
cycles=${CYCLES:-1000}

T=$(mktemp -d /tmp/smq-t-conform-XXXXXX) || exit 1
if [ -n "${SMQCTL_WRAP:-}" ]; then
	printf '#!/bin/sh\nexec %s "%s" "$@"\n' "$SMQCTL_WRAP" "$S" >"$T/wrapped" &&
		chmod 755 "$T/wrapped" || exit 1
	S=$T/wrapped
	echo "note: smqctl runs as: $SMQCTL_WRAP smqctl ARGS"
fi
M=smq-t-conform-$$
pids=""
cleanup() {
	for p in $pids; do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
	rm -rf "$T"
	rm -f "/dev/shm/$M"*
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE
unset SMQ_WINDOW NOTIFY_SOCKET 2>/dev/null
export LC_ALL=C

pass=0 fail=0 why=""
ok() { pass=$((pass + 1)); echo "ok   $*"; }
verdict() {
	if [ -z "$why" ]; then
		ok "$1"
	else
		fail=$((fail + 1))
		echo "FAIL $1 --$why"
		for f in "$T"/*.err "$T/out"; do
			[ -s "$f" ] && sed "s|$T|\$T|g; s/^/       ${f##*/}: /" "$f" | tail -n 5
		done
	fi
	why=""
}
no() { why="$why $*;"; }

# wait_for FILE PATTERN [TENTHS]: until a line of FILE matches (default 20 s)
wait_for() {
	i=0
	while ! grep -q -- "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt "${3:-400}" ] && return 1
		sleep 0.05
	done
}
sock=$T/ivshmem.sock
# serve VECTORS: smqctl server in the background, $srv its pid
serve() {
	: >"$T/out"
	: >"$T/server.err"
	"$S" -w "shm:$M" server --socket "$sock" --vectors "$1" --shm-size 1M \
		</dev/null >"$T/out" 2>"$T/server.err" &
	srv=$!
	pids="$pids $srv"
	wait_for "$T/out" listening || no "the server did not listen"
}
stop_server() {
	kill -TERM "$srv"
	wait "$srv" || no "the server exited $?"
	[ ! -s "$T/server.err" ] || no "the server wrote to stderr"
}
# watcher NAME: a strict client whose stdin is the fifo $T/NAME.in, held
# open on descriptor 5 (a), 6 (b) or 7 (c); its pid in $pid_NAME
watcher() {
	mkfifo "$T/$1.in"
	"$C" watch "$sock" "$2" <"$T/$1.in" >"$T/$1.out" 2>"$T/$1.err" \
		5>&- 6>&- 7>&- &
	eval "pid_$1=$!"
	pids="$pids $!"
	case $1 in
	a) exec 5>"$T/a.in" ;;
	b) exec 6>"$T/b.in" ;;
	c) exec 7>"$T/c.in" ;;
	esac
}
# done_watching NAME: closes its stdin; it must say it was conformant
# throughout (then it stays until end_watcher)
done_watching() {
	case $1 in
	a) exec 5>&- ;;
	b) exec 6>&- ;;
	c) exec 7>&- ;;
	esac
	eval "w=\$pid_$1"
	while kill -0 "$w" 2>/dev/null && ! grep -q conformant "$T/$1.out"; do
		sleep 0.05
	done
	grep -q conformant "$T/$1.out" ||
		no "watcher $1 broke off: $(tail -n 1 "$T/$1.err")"
}
end_watcher() {
	eval "w=\$pid_$1"
	kill -TERM "$w"
	wait "$w" || no "watcher $1 exited $?"
}
# the IDs the server reports joined and not left, but for $1
live_but() {
	awk -v me="$1" '/^peer [0-9]+ joined/ { live[$2] = 1 }
		/^peer [0-9]+ left/ { delete live[$2] }
		END { for (id in live) if (id != me) print id }' "$T/out" |
		sort -n | tr '\n' ' ' | sed 's/ $//'
}

echo "== a departure and an arrival in one round of the server"
for order in "leave-first" "join-first"; do
	rm -f "$T"/*.in "$T"/*.out "$T"/*.err
	serve 2
	watcher a 2
	wait_for "$T/a.out" "^id 0" || no "watcher a got no ID"
	kill -STOP "$srv"
	if [ $order = leave-first ]; then
		kill -KILL "$pid_a"
		wait "$pid_a" 2>/dev/null
		exec 5>&-
		watcher b 2
	else
		watcher b 2
		sleep 0.2   # its connect is queued on the stopped server
		kill -KILL "$pid_a"
		wait "$pid_a" 2>/dev/null
		exec 5>&-
	fi
	sleep 0.2
	kill -CONT "$srv"
	wait_for "$T/b.out" "^id 1" || no "watcher b got no ID"
	wait_for "$T/out" "peer 0 left" || no "peer 0's leaving not reported"
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
pids="$pids $pid_wake"
exec 8>"$T/wake.in"
wait_for "$T/wake.out" "^ready" || no "the sleeping receiver did not start"
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
	pids="$pids $qpid"
	wait_for "$T/out" "joined (pid $qpid)" || no "QEMU's device did not join ($(head -n 2 "$T/qemu.err"))"
else
	echo "note: no $QEMU: the churn runs without QEMU's ivshmem-doorbell device"
fi
watcher a 2
watcher b 2
wait_for "$T/a.out" "^id" && wait_for "$T/b.out" "^id" || no "the watchers got no ID"
id_a=$(sed -n 's/^id //p' "$T/a.out")
id_b=$(sed -n 's/^id //p' "$T/b.out")
# a: reads nothing the whole time; b: stopped and let go at random
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
		sleep 0.02
	done
) &
sampler=$!
"$C" churn "$sock" 2 "$cycles" "$$" >"$T/churn.out" 2>"$T/churn.err" 5>&- 6>&- 7>&- 8>&-
rc=$?
rm -f "$T/churning"
wait "$stopper" "$sampler"
kill -CONT "$pid_a"
[ $rc -eq 0 ] || no "churn exit $rc: $(tail -n 1 "$T/churn.err")"
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
exec 8>&-
wait "$pid_wake"
rc=$?
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
	kill "$qpid"
	wait "$qpid"
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
pids="$pids $rpid"
wait_for "$T/out" "peer 1 joined" || no "the receiver did not join"
sleep 0.3   # asleep by now, or soon: either way it must notice
stop_server
wait "$rpid"
rc=$?
[ $rc -eq 1 ] || no "recv exit $rc, expected 1"
grep -q "the ivshmem server closed the connection" "$T/recv.err" ||
	no "recv said '$(cat "$T/recv.err")'"
grep -q "timed out" "$T/recv.err" && no "recv slept until its timeout"
verdict "[exit 1] a receiver asleep when the server stops says so at once, not at its timeout"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
