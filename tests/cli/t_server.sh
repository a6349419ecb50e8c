#!/bin/sh
# smqctl server: it listens and says so (text, JSON, systemd's READY=1);
# reports peers joining (with their pid) and leaving, in text and JSON;
# gives a freed ID again only after every other (QEMU's device cannot take
# an ID back at once); stops on SIGTERM, SIGINT and SIGHUP with
# exit 0 and no socket left; refuses a socket a live server holds and
# anything that is not a socket, replaces a stale one; owns its memory
# (created 0600 at a power of two, an existing one kept and never shrunk)
# and refuses a symbolic link or another user's object; bad options exit 2
# naming the option (--size, the old name of --shm-size, names the new
# one).  The peers are small python3 clients of the protocol,
# and, where qemu-system-x86_64 is installed, a real ivshmem-doorbell
# device (its guest never started).
# SMQCTL_WRAP: shell words put before every smqctl invocation (valgrind).
# Prints "ok"/"FAIL" per check and a summary; exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
need_command python3 "no client to drive the server with"
python3 -c 'import socket; socket.recv_fds' 2>/dev/null ||
	skip "python3 without socket.recv_fds (3.9 or later needed)"
M=$SHM          # shm objects of this test: shm:$M, shm:$M-WHAT
unset SMQ_WINDOW NOTIFY_SOCKET 2>/dev/null

# A peer: connects, reads the setup (version, ID, memory, the peers, its N
# vectors), prints its ID, and stays until its standard input closes.
cat >"$T/peer.py" <<'EOF'
import socket, struct, sys
path, n = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(path)
def msg():
    data, fds, _, _ = socket.recv_fds(s, 8, 4)
    if len(data) != 8:
        sys.exit("short message")
    return struct.unpack('<q', data)[0], fds
v, f = msg()
assert v == 0 and not f, "version"
me, f = msg()
assert 0 <= me <= 65535 and not f, "ID"
v, f = msg()
assert v == -1 and len(f) == 1, "memory"
own, peers = 0, {}
while own < n:
    v, f = msg()
    assert len(f) == 1, "a vector without its eventfd"
    if v == me:
        own += 1
    else:
        peers[v] = peers.get(v, 0) + 1
if len(sys.argv) > 3:
    with open(sys.argv[3], "w") as out:
        print(" ".join("%d:%d" % p for p in sorted(peers.items())), file=out)
print(me, flush=True)
sys.stdin.read()
EOF

# start ARGS...: smqctl ARGS in the background, output in $T/out and
# $T/err; $srv is its pid; waits for its listening line
start() {
	# emptied here: the background shell opens them when it gets to it
	: >"$T/out"
	: >"$T/err"
	"$S" "$@" </dev/null >"$T/out" 2>"$T/err" 5>&- 6>&- 7>&- &
	srv=$!
	track $srv
	wait_line 10 "$T/out" listening || no "no listening line"
}
# stop SIGNAL: the server exits 0 on it
stop() {
	stop_pid 10 "$srv" "the server, sent SIG$1" "$1"
	[ "$rc" -eq 0 ] || no "exit $rc after SIG$1, expected 0"
}
# peer NAME VECTORS: a peer in the background; its ID in $T/NAME.id, the
# peers it was told of as ID:VECTORS in $T/NAME.peers, its stdin the fifo
# $T/NAME.in (closed by leave NAME)
peer() {
	rm -f "$T/$1.in" "$T/$1.id"
	mkfifo "$T/$1.in"
	# (without the other peers' fifos: their leaving is their EOF)
	python3 "$T/peer.py" "$sock" "$2" "$T/$1.peers" <"$T/$1.in" >"$T/$1.id" 2>"$T/$1.err" \
		5>&- 6>&- 7>&- &
	eval "pid_$1=$!"
	track $!
	# the fifo held open on a descriptor of ours: a 5, b 6, c 7
	hold_fifo $(fd_of $1) "$T/$1.in"
	wait_line 10 "$T/$1.id" . || no "peer $1 got no ID ($(cat "$T/$1.err"))"
}
fd_of() { case $1 in a) echo 5 ;; b) echo 6 ;; c) echo 7 ;; esac; }
leave() {
	release_fifo $(fd_of $1)
	eval "wait_pid 10 \$pid_$1 \"peer $1, its standard input closed\""
}
# want_line LINE: stdout has that line
want_line() { grep -qxF -- "$1" "$T/out" || no "no line '$1'"; }
want_no_socket() { [ ! -e "$sock" ] || no "$sock is still there"; }

sock=$T/ivshmem.sock

echo "== peers"
start -w "shm:$M" server --socket "$sock" --vectors 3
[ -S "$sock" ] || no "no socket $sock"
[ "$(stat -c %a "$sock" 2>/dev/null)" = 600 ] || no "socket mode $(stat -c %a "$sock"), expected 600"
want_line "listening on $sock: memory shm:$M, 4.0 MiB, 3 vectors"
[ "$(stat -c '%a %s' "/dev/shm/$M" 2>/dev/null)" = "600 4194304" ] ||
	no "memory: $(stat -c '%a %s' "/dev/shm/$M" 2>&1), expected 600 4194304"
verdict "server listens: socket 0600, memory shm:$M created 0600 of 4 MiB"
peer a 3
peer b 3
[ "$(cat "$T/a.id")" = 0 ] && [ "$(cat "$T/b.id")" = 1 ] || no "IDs $(cat "$T/a.id") and $(cat "$T/b.id"), expected 0 and 1"
[ "$(cat "$T/b.peers")" = "0:3" ] || no "peer 1 was told of '$(cat "$T/b.peers")', expected 0:3 (peer 0, 3 vectors)"
wait_line 10 "$T/out" "peer 1 joined" || no "peer 1 not reported"
want_line "peer 0 joined (pid $pid_a)"
want_line "peer 1 joined (pid $pid_b)"
verdict "two peers get IDs 0 and 1 and are reported with their pids"
leave a
wait_line 10 "$T/out" "peer 0 left" || no "peer 0's leaving not reported"
want_line "peer 0 left"
peer c 3
[ "$(cat "$T/c.id")" = 2 ] || no "the third peer got ID $(cat "$T/c.id"), expected 2 (not the freed 0)"
wait_line 10 "$T/out" "peer 2 joined (pid $pid_c)" || no "the third peer not reported"
verdict "a peer leaves and is reported; the next one gets the next ID, not the freed one"
leave b
leave c
wait_line 10 "$T/out" "peer 2 left" || no "peer 2's leaving not reported"
stop TERM
want_no_socket
[ ! -s "$T/err" ] || no "stderr not empty"
[ -e "/dev/shm/$M" ] || no "the memory was removed"
verdict "SIGTERM: exit 0, socket removed, memory kept"

echo "== QEMU"
QEMU=qemu-system-x86_64
qemu_rows=0
if command -v $QEMU >/dev/null 2>&1; then
	qemu_rows=1
	start -w "shm:$M-q" server --socket "$sock" --vectors 4 --shm-size 1M
	# a real ivshmem-doorbell device, its guest never started (-S)
	$QEMU -S -machine accel=tcg -nodefaults -display none -monitor none \
		-serial none -m 64 -chardev "socket,path=$sock,id=smq" \
		-device ivshmem-doorbell,chardev=smq,vectors=4 \
		</dev/null >"$T/qemu.out" 2>&1 5>&- 6>&- 7>&- &
	qpid=$!
	track $qpid
	wait_line 10 "$T/out" "peer 0 joined" || no "QEMU's device did not join ($(head -n 2 "$T/qemu.out"))"
	want_line "peer 0 joined (pid $qpid)"
	peer a 4
	[ "$(cat "$T/a.id")" = 1 ] || no "the peer after QEMU got ID $(cat "$T/a.id"), expected 1"
	[ "$(cat "$T/a.peers")" = "0:4" ] || no "the peer was told of '$(cat "$T/a.peers")', expected 0:4 (QEMU, 4 vectors)"
	# Peers that come and go: QEMU's device frees a leaving peer's
	# eventfds and writes into them if its ID joins again, which
	# corrupts its heap (glibc then aborts it).
	leave a
	peer b 4
	leave b
	peer c 4
	[ "$(cat "$T/b.id") $(cat "$T/c.id")" = "2 3" ] ||
		no "peers after one left got IDs $(cat "$T/b.id") and $(cat "$T/c.id"), expected 2 and 3"
	wait_line 10 "$T/out" "peer 3 joined" || no "peer 3 not reported"
	# on purpose: QEMU reads peer 3's announcement in its own time and
	# no state of it says it did; 0.2 s gives it time to, and a QEMU
	# that wrote into freed eventfds time to abort
	sleep 0.2
	kill -0 "$qpid" 2>/dev/null || no "QEMU died when peers came and went"
	leave c
	stop_pid 10 "$qpid" "QEMU"
	wait_line 10 "$T/out" "peer 0 left" || no "QEMU's leaving not reported"
	stop TERM
	grep -v 'terminating on signal' "$T/qemu.out" | grep -q . &&
		no "QEMU complained: $(head -n 2 "$T/qemu.out")"
	verdict "QEMU's ivshmem-doorbell device joins (its pid reported), outlives peers that come and go, and leaves; a peer is told of its 4 vectors"
else
	note "no $QEMU: the row with QEMU's ivshmem-doorbell device is skipped"
fi

echo "== JSON"
start --json -w "shm:$M" server --socket "$sock" --vectors 2
want_line "{\"event\": \"listening\", \"socket\": \"$sock\", \"memory\": \"shm:$M\", \"size\": 4194304, \"vectors\": 2}"
peer a 2
leave a
wait_line 10 "$T/out" '"left"' || no "no left event"
want_line "{\"event\": \"joined\", \"peer\": 0, \"pid\": $pid_a}"
want_line "{\"event\": \"left\", \"peer\": 0, \"pid\": $pid_a}"
python3 -c 'import json, sys
for line in open(sys.argv[1]): json.loads(line)' "$T/out" 2>"$T/json.err" ||
	no "not JSON lines: $(head -n 1 "$T/json.err")"
stop INT
want_no_socket
verdict "--json: one object a line; SIGINT: exit 0, socket removed"
# a socket path that is not UTF-8: JSON text all the same (U+FFFD)
bsock=$(printf '%s/s\377' "$T")
start --json -w "shm:$M" server --socket "$bsock" --vectors 2
python3 -c 'import json, sys
for line in open(sys.argv[1], "rb").read().decode("utf-8").splitlines():
    json.loads(line)' "$T/out" 2>"$T/json.err" ||
	no "not UTF-8 JSON lines: $(tail -n 1 "$T/json.err")"
grep -q 's\\ufffd' "$T/out" || no "the byte 0xff is not U+FFFD: $(head -n 1 "$T/out")"
stop INT
verdict "--json: a socket path that is not UTF-8 is shown with U+FFFD"

echo "== systemd"
cat >"$T/notify.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(10)
print(s.recv(256).decode(), flush=True)
EOF
bg_start python3 "$T/notify.py" "$T/notify" >"$T/notified"
npid=$pid
wait_for 10 "the socket of systemd's stand-in ($T/notify)" test -S "$T/notify"
NOTIFY_SOCKET=$T/notify start -w "shm:$M" server --socket "$sock"
wait_pid 15 "$npid" "systemd's stand-in, told READY=1"
[ "$(cat "$T/notified")" = "READY=1" ] || no "systemd was told '$(cat "$T/notified")', expected READY=1"
stop HUP
want_no_socket
verdict "NOTIFY_SOCKET gets READY=1 once the socket listens; SIGHUP: exit 0"

echo "== the socket"
start -w "shm:$M" server --socket "$sock" --mode 0660
[ "$(stat -c %a "$sock" 2>/dev/null)" = 660 ] || no "socket mode $(stat -c %a "$sock"), expected 660"
verdict "--mode 0660 gives the socket 0660"
run -w "shm:$M-2" server --socket "$sock"
want_rc 1
want_smqctl
want_err "another server is listening on $sock"
[ -S "$sock" ] || no "the live server's socket was removed"
[ ! -e "/dev/shm/$M-2" ] || no "the refused server created its memory"
verdict "[exit 1] a socket a live server holds is refused, and left alone"
stop TERM
# a live socket of another kind (a vfio broker's is SOCK_SEQPACKET), held
# by a listener that answers nothing (its 60 s only bound it: stopped
# below)
bg_start python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(sys.argv[1]); s.listen(4); time.sleep(60)' "$sock"
lpid=$pid
wait_for 10 "a SOCK_SEQPACKET listener on $sock" test -S "$sock"
ino=$(stat -c %i "$sock")
bg_start "$S" -w "shm:$M-2" server --socket "$sock" >"$T/out" 2>"$T/err" </dev/null
wait_pid 10 "$pid" "the server beside a live SOCK_SEQPACKET listener"
want_rc 1
want_err "another server is listening on $sock"
[ "$(stat -c %i "$sock" 2>/dev/null)" = "$ino" ] || no "the live listener's socket was replaced"
kill "$lpid" 2>/dev/null; wait_pid 10 "$lpid" "the SOCK_SEQPACKET listener"
rm -f "$sock"
verdict "[exit 1] a socket a live server of another kind holds is refused, and left alone"
python3 -c 'import socket, sys
socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$sock"
[ -S "$sock" ] || no "could not make a stale socket"
start -w "shm:$M" server --socket "$sock"
peer a 8
leave a
stop TERM
want_no_socket
verdict "a stale socket (nobody listens) is replaced"
echo keep >"$T/notsock"
run -w "shm:$M" server --socket "$T/notsock"
want_rc 1
want_smqctl
want_err "$T/notsock exists and is not a socket"
[ "$(cat "$T/notsock")" = keep ] || no "the file was changed"
verdict "[exit 1] a path that is not a socket is refused, and left alone"
run -w "shm:$M" server --socket "$T/no/such/dir/sock"
want_rc 1
want_smqctl
want_err "no directory $T/no/such/dir"
verdict "[exit 1] a socket in a directory that does not exist"

echo "== the memory"
start -w "file:$T/mem" server --socket "$sock" --shm-size 64K
[ "$(stat -c '%a %s' "$T/mem" 2>/dev/null)" = "600 65536" ] ||
	no "memory: $(stat -c '%a %s' "$T/mem" 2>&1), expected 600 65536"
stop TERM
verdict "--window file:PATH --shm-size 64K: a 0600 file of 65536 bytes"
printf 'kept' | dd of="$T/mem" bs=1 seek=100 conv=notrunc 2>/dev/null
truncate -s 100000 "$T/mem"
start -w "file:$T/mem" server --socket "$sock" --shm-size 4K
[ "$(stat -c %s "$T/mem")" = 131072 ] || no "size $(stat -c %s "$T/mem"), expected 131072"
want_line "listening on $sock: memory file:$T/mem, 128.0 KiB, 8 vectors"
stop TERM
[ "$(dd if="$T/mem" bs=1 skip=100 count=4 2>/dev/null)" = kept ] || no "the memory's bytes changed"
verdict "an existing memory is never shrunk, grows to a power of two, keeps its bytes"
ln -s "$T/mem" "$T/link"
run -w "file:$T/link" server --socket "$sock"
want_rc 1
want_smqctl
want_err "memory file:$T/link is a symbolic link: refused"
want_no_socket
verdict "[exit 1] a memory that is a symbolic link is refused"
ln -s "$T/mem" "/dev/shm/$M-link"
run -w "shm:$M-link" server --socket "$sock"
want_rc 1
want_err "memory shm:$M-link is a symbolic link: refused"
verdict "[exit 1] a shm object that is a symbolic link is refused"
root_rows=0
if [ "$(id -u)" = 0 ]; then
	root_rows=1
	cp "$T/mem" "$T/theirs" && chown 65534:65534 "$T/theirs"
	run -w "file:$T/theirs" server --socket "$sock"
	want_rc 1
	want_smqctl
	want_err "memory file:$T/theirs belongs to another user: refused"
	want_no_socket
	cmp -s "$T/mem" "$T/theirs" || no "the other user's memory changed"
	verdict "[exit 1] a memory another user owns is refused"
else
	note "not root: the row of another user's memory is skipped"
fi
run -w "pci:00:01.0" server --socket "$sock"
want_rc 1
want_err "the server's memory (--window) is shm:NAME or file:PATH, not 'pci:00:01.0'"
verdict "[exit 1] a --window the server cannot own"

echo "== usage"
usage() { # usage WHAT-STDERR-SAYS ARGS...
	w=$1
	shift
	run -w "shm:$M-u" "$@"
	want_rc 2
	want_smqctl
	want_err "$w"
	[ ! -s "$T/out" ] || no "stdout not empty"
	[ ! -e "/dev/shm/$M-u" ] || no "memory created"
	verdict "[exit 2] smqctl $(printf '%s ' "$@" | sed "s|$T|\$T|g" | cut -c1-70)"
}
usage "--socket PATH is required" server
usage "--shm-size 3M is not a power of two" server --socket "$sock" --shm-size 3M
usage "--shm-size 1K is out of range" server --socket "$sock" --shm-size 1K
usage "--shm-size 128G is out of range" server --socket "$sock" --shm-size 128G
usage "--shm-size: unknown unit" server --socket "$sock" --shm-size 4T
usage "--shm-size needs a size" server --socket "$sock" --shm-size -4M
# the old name of --shm-size, a list of message sizes elsewhere: refused
# whatever follows it, naming the new one
usage "--size is a list of message sizes (-z: pingpong, bench, model); the size of the shared memory is --shm-size SIZE" server --socket "$sock" --size 4M
usage "is --shm-size SIZE" server --socket "$sock" --size=4M
usage "is --shm-size SIZE" server --socket "$sock" --size
usage "--vectors 0 is out of range" server --socket "$sock" --vectors 0
usage "--vectors 65 is out of range" server --socket "$sock" --vectors 65
usage "--vectors needs a number" server --socket "$sock" --vectors x
usage "--mode needs octal" server --socket "$sock" --mode 0999
usage "--mode needs octal" server --socket "$sock" --mode 0
usage "--socket $T/$(printf '%0120d' 0) is too long" server --socket "$T/$(printf '%0120d' 0)"
usage "unexpected argument" server --socket "$sock" extra
usage "--board has no meaning" -b 1 server --socket "$sock"
want_no_socket

# 33, the row of QEMU's device where there is QEMU, the row of another
# user's memory for root
finish $((33 + qemu_rows + root_rows))
