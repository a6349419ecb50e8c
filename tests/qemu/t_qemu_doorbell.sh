#!/bin/sh
# Doorbells end to end: two QEMU guests and this host as the three boards
# of one window, in the memory of `smqctl server` (a file of the test's
# own, 4 MiB, 8 vectors).  Each guest (q35, QEMU's intel-iommu) has an
# ivshmem-doorbell on that server, bound to vfio-pci: boards 1 and 2 over
# pci:BDF/2, rung through the device's doorbell register and woken by
# MSI-X (tests/qemu/guest-init-doorbell).  The host is board 0 over
# ivshmem:SOCKET, rung and woken through eventfds.  Checks:
#  - the host formats the window, all three boards sync;
#  - pingpong --wait sleep guest to guest (boards 1 and 2) and host to
#    guest (boards 0 and 2), COUNT round trips of each size, every echo's
#    size and sequence number checked by pingpong (exit 0), each side
#    naming the doorbell as its notification, not polling;
#  - smqctl check on the host (board 0, coordinating) and check --peer in
#    both guests: nothing fails on any board; the host's checks between
#    boards PASS (map, doorbells, raw link, queues) and print the
#    doorbells' wake-up round trips and the raw link's figures; the checks
#    that need a PCI Express link SKIP in the guests, saying that QEMU's
#    ivshmem is a conventional PCI device, and those of the host, which is
#    on no PCI device;
#  - an idle receiver uses under 2% of a CPU over 5 s (utime + stime from
#    /proc/PID/stat) and wakes on the next message: in guest 2 (the host
#    sends), and on the host (guest 1 sends);
#  - the host's dump shows the three boards' doorbells, three different
#    IDs, each the one the server gave that board's process (a guest's
#    also the one its device reports, IVPosition), and doorbells rung on
#    every path the messages took (guest to guest, host to guest, guest to
#    host);
#  - a receiver killed in guest 2, the guest living on: the host's dump,
#    top --once and metrics say the receiver of queue 2 is dead (judged by
#    its heartbeat, which stopped while it waited), and queue 1's is not;
#  - killing guest 2's QEMU: the server says "peer N left", dump says board
#    2's processes are dead once its heartbeat stood still, board 1's are
#    at work; the host's sync names board 2 dead and exits 1.
# Reports the wake-up times (pingpong's half round trips, and the idle
# receivers' wake-ups as seen from the host) and the idle receivers' CPU.
# Exit 0 pass, 1 fail (with the guests' serial logs), 77 skip (no QEMU,
# kernel package, vfio modules, static busybox or cpio), the reason on
# the last line.
#
# The kernel and its vfio modules come from Debian's linux-image package
# (tests/qemu/fetch-kernel.sh, cached in $B/qemu-cache/), or from
# SMQ_QEMU_KERNEL_DEB=PATH.  SMQ_QEMU_COUNT sets the round trips per size
# (default 200); SMQ_QEMU_VERBOSE=1 prints the logs on success too.
. "$(dirname "$0")/lib.sh"
[ -x "$B/smqctl" ] || die "smqctl is not built ($B/smqctl): run make first"
qemu_need_tools ivshmem-doorbell intel-iommu
count=${SMQ_QEMU_COUNT:-200}
sizes=0,64,1000
M=$T/memory
start=$(now_ms)
elapsed() { echo $((($(now_ms) - start) / 1000)); }

qemu_kernel_modules vfio-pci vfio_iommu_type1
echo "     kernel and modules: $kdir"
qemu_copy "$B/smqctl" "$Q/guest-lib.sh"
S=$T/smqctl
qemu_initramfs "$T/initramfs" "$Q/guest-init-doorbell" "$S" "$T/guest-lib.sh"

serial() { [ ! -f "$T/serial-$1" ] || tr -d '\r' <"$T/serial-$1"; }
said() { serial "$1" | grep -qE "$2"; }
# block B NAME: what guest B printed of its run NAME (stdout, or NAME-err)
block() {
	serial "$1" | sed -n "/^SMQ-GUEST: $2-begin\$/,/^SMQ-GUEST: $2-end\$/p" |
		sed '1d;$d'
}
show_logs() {
	for b in 1 2; do
		echo "---- guest $b serial log ----"
		serial $b | sed 's/^/  | /'
		[ -s "$T/qemu-$b.out" ] && { echo "---- qemu $b ----"; sed 's/^/  | /' "$T/qemu-$b.out"; }
	done
	for f in server.out init.out sync.out pp02.out pp02.err check.out check.err \
		 hrecv.out hrecv.err \
		 dump1.json dump1.err dump2.err; do
		[ -s "$T/$f" ] || continue
		echo "---- host $f ----"
		sed 's/^/  | /' "$T/$f"
	done
}
bail() { # the test cannot go on
	failed "$*"
	show_logs
	exit 1
}

# ---- the server, and the window in its memory ----
sock=$T/ivshmem.sock
if ! qemu_server "$S" "file:$M" "$sock" 4M 8 170; then
	cat "$T/server.out"
	die "smqctl server did not listen on $sock within 10 s"
fi
timeout 30 "$S" --window "ivshmem:$sock" init --boards 3 --queues 3 >"$T/init.out" 2>&1 ||
	bail "host: init --boards 3 --queues 3 on ivshmem:$sock exit $?"

# ---- two guests, booted in parallel ----
qemu_accel
guest() { # guest BOARD: its QEMU in the background, bounded
	timeout 170 qemu-system-x86_64 -accel "$accel" -M "$machine" -nodefaults \
		-no-reboot -m 256 -display none -monitor none \
		-pidfile "$T/qemu-$1.pid" -serial "file:$T/serial-$1" \
		-device intel-iommu \
		-chardev "socket,path=$sock,id=iv" \
		-device ivshmem-doorbell,chardev=iv,vectors=8 \
		-kernel "$kdir/vmlinuz" -initrd "$T/initramfs" \
		-append "console=ttyS0 panic=-1 quiet intel_iommu=on no_timer_check smq_board=$1 smq_count=$count smq_sizes=$sizes" \
		</dev/null >"$T/qemu-$1.out" 2>&1 &
}
guest 1
g1=$!
guest 2
g2=$!
track $g1 $g2

guest_ended() { # guest_ended B: guest B's QEMU has exited, or the guest said "end"
	eval "ended \$g$1" && return 0
	said "$1" '^SMQ-GUEST: end '
}
# await B REGEX SECONDS: until guest B's serial log has a line matching
# REGEX; 1 if the guest ended without, or after SECONDS.
await() {
	await_b=$1 await_re=$2
	within -w "guest $1 to say '$2'" "$3" eval 'said "$await_b" "$await_re" || guest_ended "$await_b"'
	# what an ended QEMU wrote last may be on its way to the file
	said "$1" "$2" || { guest_ended "$1" && sleep 0.5 && said "$1" "$2"; }
}
# host_wait SECONDS PID WHAT B...: waits for host process PID, SECONDS at
# most (its own timeout(1) ends it before); stops it 5 s after one of
# guests B ended.  Its status in rc, and returned.
host_wait() {
	hw_end=$(($(now_ms) + $1 * 1000)) p=$2 what=$3
	shift 3
	gone=0
	while running "$p" && [ "$(now_ms)" -lt "$hw_end" ]; do
		for b in "$@"; do
			if guest_ended "$b"; then
				gone=$((gone + 1))
				break
			fi
		done
		if [ $gone -ge 50 ]; then
			kill "$p" 2>/dev/null
			break
		fi
		sleep 0.1       # a process and the guests' logs: no event
	done
	wait_pid 10 "$p" "$what"
}

# ---- sync: the host waits for both guests' boards ----
bg_start timeout 130 "$S" --window "ivshmem:$sock" sync --timeout 120 >"$T/sync.out" 2>&1
host_wait 140 $pid "the host's sync" 1 2
[ $rc = 0 ] || bail "host sync exit $rc (124: timed out)"
ok "host sync: $(tail -n 1 "$T/sync.out") ($(elapsed) s)"
for b in 1 2; do
	await $b '^SMQ-GUEST: sync rc ' 20
	said $b '^SMQ-GUEST: sync rc 0$' || bail "guest $b: sync failed"
	echo "     guest $b: $(serial $b | sed -n 's/^SMQ-GUEST: \(up .*\)/\1/p')"
done
ok "guests 1 and 2 synced"

# check_pp FILE WHAT: pingpong's table in FILE: in sleep mode, a doorbell
# as the notification, COUNT timed round trips of each size.  Sets note.
check_pp() {
	f=$1 what=$2
	head -n 1 "$f" | grep -q ', mode sleep$' ||
		failed "$what: not in sleep mode: $(head -n 1 "$f")"
	note=$(sed -n 's/^notification: \([^;]*\);.*/\1/p' "$f")
	case $note in
	*polling*|"") failed "$what: notification '$note', not a doorbell" ;;
	*" doorbell ("*) ok "$what: notification: $note" ;;
	*) failed "$what: notification '$note', not a doorbell" ;;
	esac
	for s in $(echo "$sizes" | tr , ' '); do
		n=$(awk -v s="$s" '$1 == s && NF >= 12 { print $2 }' "$f")
		[ "$n" = "$count" ] ||
			failed "$what: $s bytes: '$n' round trips, not $count"
	done
}

# ---- pingpong in sleep mode, guest 1 to guest 2 ----
for b in 1 2; do
	await $b '^SMQ-GUEST: pp12 rc ' 120 || failed "guest $b: pingpong with the other guest did not end"
done
block 1 pp12-out >"$T/pp12.out"
block 2 pp12-err >"$T/pp12-2.err"
if said 1 '^SMQ-GUEST: pp12 rc 0$' && said 2 '^SMQ-GUEST: pp12 rc 0$'; then
	ok "pingpong --wait sleep, boards 1 and 2 (guest to guest): both ended 0 (every echo's size and sequence number as sent)"
else
	failed "pingpong boards 1 and 2: guest 1 $(serial 1 | grep '^SMQ-GUEST: pp12 rc'), guest 2 $(serial 2 | grep '^SMQ-GUEST: pp12 rc')"
fi
check_pp "$T/pp12.out" "guest 1 (driving board 2)"
note1=$note
note2=$(sed -n 's/.*notification: \(.*\))$/\1/p' "$T/pp12-2.err")
case $note2 in
*polling*|"") failed "guest 2 (serving board 1): notification '$note2': $(cat "$T/pp12-2.err")" ;;
*) ok "guest 2 (serving board 1): notification: $note2" ;;
esac
sed -n '3,6s/^/     | /p' "$T/pp12.out"

# ---- pingpong in sleep mode, the host to guest 2 ----
bg_start timeout 100 "$S" --window "ivshmem:$sock" pingpong --peer --peer-board 2 --wait sleep \
	--count "$count" --size "$sizes" >"$T/pp02.out" 2>"$T/pp02.err"
host_wait 110 $pid "the host's pingpong with guest 2" 2
await 2 '^SMQ-GUEST: pp02 rc ' 20
block 2 pp02-err >"$T/pp02-2.err"
if [ $rc = 0 ] && said 2 '^SMQ-GUEST: pp02 rc 0$'; then
	ok "pingpong --wait sleep, boards 0 and 2 (host to guest): both ended 0 (every echo's size and sequence number as sent)"
else
	failed "pingpong boards 0 and 2: host exit $rc, guest 2 $(serial 2 | grep '^SMQ-GUEST: pp02 rc')"
fi
check_pp "$T/pp02.out" "host (driving board 2)"
note0=$note
note2b=$(sed -n 's/.*notification: \(.*\))$/\1/p' "$T/pp02-2.err")
case $note2b in
*polling*|"") failed "guest 2 (serving board 0): notification '$note2b': $(cat "$T/pp02-2.err")" ;;
*) ok "guest 2 (serving board 0): notification: $note2b" ;;
esac
sed -n '3,6s/^/     | /p' "$T/pp02.out"

# ---- smqctl check: the host coordinates, each guest runs check --peer ----
bg_start timeout 200 "$S" --window "ivshmem:$sock" check --timeout 150s >"$T/check.out" 2>"$T/check.err"
host_wait 210 $pid "the host's check" 1 2
# the line of check CHECK in FILE has STATUS and WORDS
check_said() {
	grep -Eq "^$3  $2 +.*$4" "$1" && ok "$5: $3 $2 ($4)" ||
		failed "$5: no '$3  $2 ...$4' in: $(grep -E "^[A-Z]{4}  $2 " "$1")"
}
[ $rc = 0 ] && ok "host: check exit 0 ($(tail -n 1 "$T/check.out"))" ||
	failed "host: check exit $rc: $(tail -n 1 "$T/check.out") $(cat "$T/check.err")"
for c in map doorbells raw-link queues; do
	check_said "$T/check.out" "$c" PASS "" "host"
done
for c in link aer payload bar vfio; do
	check_said "$T/check.out" "$c" SKIP "not on a PCI device \(ivshmem\)" "host"
done
sed -n '/^doorbells:/,/^POLLED/p;/^raw link:/,/^model:/p' "$T/check.out" | sed 's/^/     | /'
for b in 1 2; do
	await $b '^SMQ-GUEST: check rc ' 60 || failed "guest $b: check --peer did not end"
	block $b check-out >"$T/check-$b.out"
	said $b '^SMQ-GUEST: check rc 0$' && ok "guest $b: check --peer exit 0 ($(tail -n 1 "$T/check-$b.out"))" ||
		failed "guest $b: check --peer: $(serial $b | grep '^SMQ-GUEST: check rc') $(cat "$T/check-$b.out")"
	check_said "$T/check-$b.out" link SKIP "a conventional PCI device, as QEMU's ivshmem is" "guest $b"
	check_said "$T/check-$b.out" payload SKIP "no PCI Express registers" "guest $b"
	check_said "$T/check-$b.out" map SKIP "this board took part \(--peer\)" "guest $b"
	grep -E '^(PASS|WARN|SKIP)  (aer|bar|vfio) ' "$T/check-$b.out" | sed "s/^/     | guest $b: /"
done

# ---- idle receivers: guest 2's (its own measure) and the host's ----
ticks() { # utime + stime of PID in clock ticks, or nothing
	set -- $(cat "/proc/$1/stat" 2>/dev/null)
	[ $# -ge 15 ] && echo $((${14} + ${15}))
}
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
bg_start "$S" --window "ivshmem:$sock" recv --queue 0 --timeout 60 >"$T/hrecv.out" 2>"$T/hrecv.err"
hrecv=$pid
# (a stand-in left: the receiver settles into its sleep; a dump to see it
# would join the server as a peer while guest 2 measures its own idle)
sleep 1
ht0=$(now_ms)
hc0=$(ticks $hrecv)
await 2 '^SMQ-GUEST: idle ' 30 || failed "guest 2: no idle receiver"
# on purpose: 5 s of the host's receiver idle, its CPU measured over them
while [ $(($(now_ms) - ht0)) -lt 5000 ]; do sleep 0.1; done
ht1=$(now_ms)
hc1=$(ticks $hrecv)
line=$(serial 2 | sed -n 's/^SMQ-GUEST: idle \([0-9]*\) ticks in \([0-9]*\) cs .*/\1 \2/p')
if [ -n "$line" ]; then
	set -- $line
	gpct=$(awk -v t="$1" -v cs="$2" 'BEGIN { printf "%.2f", (cs > 0 ? 100 * t / cs : 100) }')
	if awk -v p="$gpct" -v cs="$2" 'BEGIN { exit !(p < 2 && cs >= 500) }'; then
		ok "guest 2: idle receiver used $gpct% of a CPU ($1 ticks in $2 cs)"
	else
		failed "guest 2: idle receiver used $gpct% of a CPU ($1 ticks in $2 cs)"
	fi
else
	failed "guest 2: no idle CPU figure: $(serial 2 | grep '^SMQ-GUEST: idle')"
fi
if [ -n "$hc0" ] && [ -n "$hc1" ] && [ ! -s "$T/hrecv.out" ]; then
	hpct=$(awk -v t=$((hc1 - hc0)) -v hz="$hz" -v ms=$((ht1 - ht0)) \
		'BEGIN { printf "%.2f", 100 * t / hz / (ms / 1000) }')
	if awk -v p="$hpct" 'BEGIN { exit !(p < 2) }'; then
		ok "host: idle receiver used $hpct% of a CPU ($((hc1 - hc0)) ticks of 1/$hz s in $((ht1 - ht0)) ms)"
	else
		failed "host: idle receiver used $hpct% of a CPU ($((hc1 - hc0)) ticks of 1/$hz s in $((ht1 - ht0)) ms)"
	fi
else
	failed "host: the idle receiver did not stay waiting: $(cat "$T/hrecv.out" "$T/hrecv.err")"
fi

# ---- the host wakes guest 2's receiver ----
nonce=$$.$(date +%s)
t0=$(now_ms)
printf 'SMQ-WAKE board 2 %s\n' "$nonce" | timeout 20 "$S" --window "ivshmem:$sock" send --queue 2 ||
	failed "host: send to queue 2 exit $?"
t1=$(now_ms)
within 10 said 2 "^SMQ-WAKE board 2 $nonce\$"
t2=$(now_ms)
if said 2 "^SMQ-WAKE board 2 $nonce\$"; then
	ok "guest 2: the idle receiver woke and printed the host's message"
	echo "     guest 2's receiver woke: its line came $((t2 - t0)) ms after the host's send began ($((t2 - t1)) ms after it returned)"
else
	failed "guest 2: the idle receiver did not print the host's message within 10 s"
fi

# ---- guest 1 wakes the host's receiver: the host sends "go" to guest 1,
# which sends it back to queue 0 ----
t0=$(now_ms)
# (no timeout(1) here: the server must see this very process, the last
# of board 0 to announce its doorbell; send gives up after its --timeout)
printf 'SMQ-GO %s\n' "$nonce" | "$S" --window "ivshmem:$sock" send --queue 1 --timeout 5s &
gosend=$!
track $gosend
wait_pid 20 $gosend "the host's send to queue 1" || failed "host: send to queue 1 exit $rc"
host_wait 70 $hrecv "the host's idle receiver" 1
t1=$(now_ms)
if [ $rc = 0 ] && [ "$(cat "$T/hrecv.out")" = "SMQ-GO $nonce" ]; then
	ok "host: the idle receiver woke on guest 1's message"
	echo "     host's receiver woke: $((t1 - t0)) ms from the host's \"go\" to guest 1's answer received (guest 1 starts smqctl twice)"
else
	failed "host: the idle receiver: exit $rc, got '$(cat "$T/hrecv.out")' $(cat "$T/hrecv.err")"
fi

# ---- the host's dump: doorbells and IDs ----
for b in 1 2; do
	await $b '^SMQ-GUEST: holding$' 30 || failed "guest $b: no receiver holding its board"
done
# jv PATH FILE: the value at PATH in json_flat's lines
jv() { awk -v k="$1" 'index($0, k "=") == 1 { print substr($0, length(k) + 2); exit }' "$2"; }
# "holding" is said just before the guest starts its receiver, which may
# take seconds to open its window under emulation: until it does, no
# process of that board beats.  Up to four dumps, each of which watches
# the heartbeats for up to five seconds.
for try in 1 2 3 4; do
	timeout 30 "$S" --window "ivshmem:$sock" dump -v --json >"$T/dump1.json" 2>"$T/dump1.err" ||
		failed "host dump exit $?: $(cat "$T/dump1.err")"
	json_flat <"$T/dump1.json" >"$T/dump1.flat"
	[ "$(jv board_table.1.alive "$T/dump1.flat")" = yes ] &&
		[ "$(jv board_table.2.alive "$T/dump1.flat")" = yes ] && break
done
echo "     dump of the holding boards: look $try"
# the server's ID for process PID (the last time it joined)
server_id() { sed -n "s/^peer \([0-9]*\) joined (pid $1)\$/\1/p" "$T/server.out" | tail -n 1; }
qp1=$(cat "$T/qemu-1.pid" 2>/dev/null)
qp2=$(cat "$T/qemu-2.pid" 2>/dev/null)
sid0=$(server_id "$gosend")
sid1=$(server_id "$qp1")
sid2=$(server_id "$qp2")
for b in 0 1 2; do
	eval "sid=\$sid$b"
	kind=$(jv "board_table.$b.doorbell.kind" "$T/dump1.flat")
	id=$(jv "board_table.$b.doorbell.id" "$T/dump1.flat")
	eval "id$b=\$id"
	case $b in
	0) who="the server's peer for the host's last board-0 process (pid $gosend)" ;;
	*) who="the server's peer for guest $b's QEMU (pid $(eval echo \$qp$b))" ;;
	esac
	if [ "$kind" = ivshmem ] && [ -n "$id" ] && [ "$id" = "$sid" ]; then
		ok "dump: board $b's doorbell is ivshmem $id, $who"
	else
		failed "dump: board $b's doorbell is '$kind' '$id', $who is '$sid'"
	fi
done
if [ -n "$id0$id1$id2" ] && [ "$id0" != "$id1" ] && [ "$id0" != "$id2" ] && [ "$id1" != "$id2" ]; then
	ok "dump: three different doorbell IDs ($id0, $id1, $id2)"
else
	failed "dump: doorbell IDs not three different ones: '$id0' '$id1' '$id2'"
fi
# what each guest says its ID is: its device, and smqctl in it
for b in 1 2; do
	eval "id=\$id$b"
	pos=$(serial $b | sed -n 's/^SMQ-GUEST: ivposition \([0-9]*\)$/\1/p')
	[ -n "$id" ] && [ "$pos" = "$id" ] &&
		ok "guest $b: its device's IVPosition is $pos, its ID in the dump" ||
		failed "guest $b: IVPosition '$pos', ID in the dump '$id'"
done
case "$note1|$note2|$note2b" in
*"(MSI-X, peer $id1)|"*"(MSI-X, peer $id2)|"*"(MSI-X, peer $id2)")
	ok "smqctl in each guest names its own ID in its notification" ;;
*) failed "the guests' notifications do not name their IDs $id1 and $id2: '$note1', '$note2', '$note2b'" ;;
esac
# the host's pingpong: an ID of its own, not a guest's
idh=${note0##*"(eventfd, peer "}
idh=${idh%)}
if grep -q "^peer $idh joined (pid " "$T/server.out" && [ "$idh" != "$id1" ] &&
   [ "$idh" != "$id2" ]; then
	ok "the host's pingpong was peer $idh of the server, rung through eventfds"
else
	failed "the host's notification '$note0' names no peer of its own"
fi
# Doorbells on every path the messages took while the receiver slept:
# QUEUE.SENDER, the pingpongs' queues as they said (the lower board's
# first), then the wake-ups' (host to guest 2 and to guest 1, guest 1 to
# the host).
set -- $(sed -n 's/.*, queues \([0-9]*\) and \([0-9]*\), mode .*/\1 \2/p' "$T/pp12.out") \
       $(sed -n 's/.*, queues \([0-9]*\) and \([0-9]*\), mode .*/\1 \2/p' "$T/pp02.out")
lanes="2.0 1.0 0.1"
if [ $# = 4 ]; then
	lanes="$1.2 $2.1 $3.2 $4.0 $lanes"
else
	failed "the pingpongs did not name their queues"
fi
summary= unrung=
for ql in $lanes; do
	q=${ql%.*} l=${ql#*.}
	n=$(jv "queue_table.$q.lanes.$l.doorbells" "$T/dump1.flat")
	m=$(jv "queue_table.$q.lanes.$l.messages" "$T/dump1.flat")
	if [ -n "$n" ] && [ "$n" -gt 0 ] 2>/dev/null; then
		summary="$summary${summary:+, }$l to $q: $n of $m"
	else
		unrung="$unrung${unrung:+, }$l to $q: '$n' of '$m'"
	fi
done
[ -z "$unrung" ] &&
	ok "dump: doorbells rung on every lane used (board to queue: rung of messages: $summary)" ||
	failed "dump: lanes without doorbells (board to queue: rung of messages): $unrung"
for b in 1 2; do
	a=$(jv "board_table.$b.alive" "$T/dump1.flat")
	[ "$a" = yes ] && ok "dump: board $b alive (its receiver's heartbeat moves)" ||
		failed "dump: board $b alive '$a' while its receiver holds it"
done

# ---- a receiver killed in guest 2: the host sees it dead ----
printf 'SMQ-KILL\n' | timeout 20 "$S" --window "ivshmem:$sock" send --queue 2 ||
	failed "host: send of kill to queue 2 exit $?"
if await 2 '^SMQ-GUEST: receiver killed' 30; then
	vpid=$(serial 2 | sed -n 's/^SMQ-GUEST: receiver killed: pid \([0-9]*\)$/\1/p')
	t0=$(now_ms)
	# dump watches a heartbeat of another host for up to 5 s itself
	timeout 30 "$S" --window "ivshmem:$sock" dump --json >"$T/dump3.json" 2>"$T/dump3.err"
	json_flat <"$T/dump3.json" >"$T/dump3.flat"
	r2=$(jv queue_table.2.receiver_state "$T/dump3.flat")
	p2=$(jv queue_table.2.receiver_pid "$T/dump3.flat")
	r1=$(jv queue_table.1.receiver_state "$T/dump3.flat")
	[ "$r2" = dead ] && [ "$p2" = "$vpid" ] && [ "$r1" != dead ] &&
		ok "dump: queue 2's receiver (pid $vpid in guest 2) dead, queue 1's $r1 ($(($(now_ms) - t0)) ms)" ||
		failed "dump after a receiver was killed in guest 2: queue 2's '$r2' (pid '$p2', killed '$vpid'), queue 1's '$r1'"
	timeout 30 "$S" --window "ivshmem:$sock" --json top --once --interval 0.2 >"$T/top3.json" 2>"$T/top3.err"
	json_flat <"$T/top3.json" >"$T/top3.flat"
	r2=$(jv queue_table.2.receiver_state "$T/top3.flat")
	[ "$r2" = dead ] && ok "top --once: queue 2's receiver dead" ||
		failed "top --once after a receiver was killed in guest 2: queue 2's '$r2' $(cat "$T/top3.err")"
	timeout 30 "$S" --window "ivshmem:$sock" metrics >"$T/metrics3" 2>"$T/metrics3.err"
	grep -q '^smq_queue_receiver_state{.*queue="2".*state="dead"} 1$' "$T/metrics3" &&
	grep -q '^smq_queue_receiver_alive{.*queue="2".*} 0$' "$T/metrics3" &&
		ok "metrics: queue 2's receiver dead (smq_queue_receiver_state, _alive 0)" ||
		failed "metrics after a receiver was killed in guest 2: $(grep 'queue="2"' "$T/metrics3" | grep receiver_)"
else
	failed "guest 2: no receiver killed"
fi

# ---- kill guest 2: the server and dump notice ----
[ -n "$qp2" ] && kill -KILL "$qp2" 2>/dev/null || bail "cannot kill guest 2's QEMU (pid '$qp2')"
wait_line 10 "$T/server.out" "^peer $sid2 left\$"
grep -qx "peer $sid2 left" "$T/server.out" &&
	ok "server: \"peer $sid2 left\" after guest 2's QEMU was killed" ||
	failed "server: no \"peer $sid2 left\" within 10 s of killing guest 2"
t0=$(now_ms)
timeout 30 "$S" --window "ivshmem:$sock" dump --json >"$T/dump2.json" 2>"$T/dump2.err"
drc=$?
t1=$(now_ms)
json_flat <"$T/dump2.json" >"$T/dump2.flat"
a1=$(jv board_table.1.alive "$T/dump2.flat")
a2=$(jv board_table.2.alive "$T/dump2.flat")
w1=$(jv board_table.1.activity "$T/dump2.flat")
w2=$(jv board_table.2.activity "$T/dump2.flat")
age2=$(jv board_table.2.heartbeat_age_ms "$T/dump2.flat")
if [ "$a2" = no ] && [ "$w2" = dead ] && [ "$a1" = yes ] && [ "$w1" = working ]; then
	ok "dump: board 2 dead (heartbeat still for $age2 ms), board 1 at work; dump took $((t1 - t0)) ms (exit $drc)"
else
	failed "dump after the kill: board 2 alive '$a2' activity '$w2' (heartbeat age '$age2' ms), board 1 '$a1' '$w1' (exit $drc)"
	sed 's/^/  | /' "$T/dump2.json" "$T/dump2.err"
fi
# the host's sync does not take a board whose guest died for ready
timeout 30 "$S" --window "ivshmem:$sock" sync --timeout 10 >"$T/sync2.out" 2>"$T/sync2.err"
src=$?
if [ $src = 1 ] && grep -q 'board 2 announced itself and then died' "$T/sync2.err"; then
	ok "host sync after guest 2 died: exit 1, $(cat "$T/sync2.err")"
else
	failed "host sync after guest 2 died: exit $src, $(cat "$T/sync2.out" "$T/sync2.err")"
fi

# ---- guest 1 leaves: "bye" to its receiver ----
printf 'SMQ-BYE\n' | timeout 20 "$S" --window "ivshmem:$sock" send --queue 1 ||
	failed "host: send of bye to queue 1 exit $?"
await 1 '^SMQ-GUEST: end ' 30
wait_pid 10 $g1 "guest 1's QEMU, its guest powering off"
said 1 '^SMQ-GUEST: end 0$' && [ $rc = 0 ] && ok "guest 1 ended 0" ||
	failed "guest 1: QEMU exit $rc (124: timed out), $(serial 1 | grep '^SMQ-GUEST: end' || echo 'no end')"
wait_pid 10 $g2 "guest 2's QEMU, killed"
wait_line 5 "$T/server.out" "^peer $sid1 left\$"
grep -qx "peer $sid1 left" "$T/server.out" || failed "server: no \"peer $sid1 left\" after guest 1 powered off"
echo "     guests done in $(elapsed) s (accel $accel)"

if any_failed || [ -n "${SMQ_QEMU_VERBOSE:-}" ]; then show_logs; fi
echo "done in $(elapsed) s"
finish 48
