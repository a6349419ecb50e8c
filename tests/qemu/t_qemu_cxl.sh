#!/bin/sh
# CXL memory shared by two QEMU guests and this host, with Linux's own CXL
# drivers: each guest (TCG, -cpu max, q35 with cxl=on) has a pxb-cxl host
# bridge, two cxl-rp root ports (with one, the region commits but reads
# give 0 and writes vanish) and a cxl-type3 device on the same
# memory-backend-file (share=on), as two hosts of a multi-headed device
# are, and a label area (LSA) file of its own (a copied one fails with
# ENOSPC).  Each guest's init makes the region and a device-DAX namespace
# (tests/qemu/guest-init-cxl) and is board 1 or 2 over dax:/dev/dax0.0;
# the host is board 0 over the backing file where the DAX range begins,
# file@2M:.  Checks:
#  - each guest makes its region with the command smqctl probe --ntb
#    advises there, naming the memory device and root decoder as Linux's
#    CXL bus calls them (mem0, decoder0.0);
#  - each guest's /dev/dax0.0: alignment 2 MiB, its range 2 MiB into the
#    region, so 2 MiB into the backing file, where the host's window is;
#  - dax@4K: is refused in words naming the device's alignment (the device
#    maps whole 2 MiB pages only), file: on the device in words too; a
#    window of 1.2 MiB is mapped as one whole page of 2 MiB;
#  - the host formats the window, all three boards sync;
#  - the host's message to each guest arrives, each guest's answer carries
#    it back; pingpong between the guests over dax: checks every echo
#    (its size and sequence number); a bench between them drains and
#    checks every message;
#  - guest 2 killed: the host's dump and guest 1's say board 2 is dead;
#    once the host freed what it left, check passes on the host and in
#    guest 1.
# Prints pingpong's and bench's figures (emulated CXL memory under TCG:
# no target).  Exit 0 pass, 1 fail (with the guests' serial logs), 77
# skip where QEMU or the kernel cannot be had, the reason on the last line.
#
# The kernel and its CXL, nvdimm and dax modules come from Debian's
# linux-image package (tests/qemu/fetch-kernel.sh, cached in
# $B/qemu-cache/), or SMQ_QEMU_KERNEL_DEB=PATH; cxl and ndctl are
# Debian's ndctl package (make deps).  SMQ_QEMU_COUNT sets the pingpong's
# round trips per size (default 100), SMQ_QEMU_BENCH the bench's messages
# (default 500, 0: none); SMQ_QEMU_VERBOSE=1 prints the logs on success.
. "$(dirname "$0")/lib.sh"
[ -x "$B/smqctl" ] || die "smqctl is not built ($B/smqctl): run make first"
qemu_need_tools pxb-cxl cxl-rp cxl-type3
for t in cxl ndctl; do
	command -v $t >/dev/null 2>&1 ||
		die "$t not found: install ndctl (make deps); the guests make their CXL region with it"
done
[ -d /dev/shm ] && [ -w /dev/shm ] || skip "/dev/shm is not writable"
count=${SMQ_QEMU_COUNT:-100}
nbench=${SMQ_QEMU_BENCH:-500}
M=/dev/shm/$SHM-cxl
start=$(now_ms)
elapsed() { echo $((($(now_ms) - start) / 1000)); }
MiB=1048576

qemu_kernel_modules cxl_acpi cxl_pci cxl_mem cxl_pmem nd_pmem dax_pmem device_dax
qemu_copy "$B/smqctl" "$Q/guest-lib.sh"
S=$T/smqctl
qemu_initramfs "$T/initramfs" "$Q/guest-init-cxl" "$S" "$T/guest-lib.sh" \
	"$(command -v cxl)" "$(command -v ndctl)"
sm() { timeout 60 "$S" --window "file@2M:$M" "$@"; }

serial() { [ ! -f "$T/serial-$1" ] || tr -d '\r' <"$T/serial-$1"; }
said() { serial "$1" | grep -qE "$2"; }
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
	for f in init.out sync.out recv.out dump.json check.out; do
		[ -s "$T/$f" ] || continue
		echo "---- host $f ----"
		sed 's/^/  | /' "$T/$f"
	done
}
bail() {
	failed "$*"
	show_logs
	exit 1
}

# ---- the shared memory (256 MiB: a CXL decoder's granule) and two guests ----
size=$((256 * MiB))
truncate -s $size "$M" || exit 1
guest() { # guest BOARD
	truncate -s $MiB "$T/lsa-$1" || exit 1
	timeout 400 qemu-system-x86_64 -accel tcg -cpu max -M q35,cxl=on \
		-nodefaults -no-reboot -m 512 -display none -monitor none \
		-pidfile "$T/qemu-$1.pid" -serial "file:$T/serial-$1" \
		-object "memory-backend-file,id=cxl-mem,share=on,mem-path=$M,size=$size" \
		-object "memory-backend-file,id=cxl-lsa,share=on,mem-path=$T/lsa-$1,size=$MiB" \
		-device pxb-cxl,bus_nr=12,bus=pcie.0,id=cxl.1 \
		-device cxl-rp,port=0,bus=cxl.1,id=rp0,chassis=0,slot=2 \
		-device cxl-rp,port=1,bus=cxl.1,id=rp1,chassis=0,slot=3 \
		-device cxl-type3,bus=rp0,memdev=cxl-mem,lsa=cxl-lsa,id=cxl-pmem0 \
		-M cxl-fmw.0.targets.0=cxl.1,cxl-fmw.0.size=4G \
		-kernel "$kdir/vmlinuz" -initrd "$T/initramfs" \
		-append "console=ttyS0 panic=-1 quiet no_timer_check smq_board=$1 smq_count=$count smq_bench=$nbench" \
		</dev/null >"$T/qemu-$1.out" 2>&1 &
}
guest 1
g1=$!
guest 2
g2=$!
track $g1 $g2

guest_ended() { eval "ended \$g$1" && return 0; said "$1" '^SMQ-GUEST: end '; }
await() { # await B REGEX SECONDS
	await_b=$1 await_re=$2
	within -w "guest $1 to say '$2'" "$3" eval 'said "$await_b" "$await_re" || guest_ended "$await_b"'
	# what an ended QEMU wrote last may be on its way to the file
	said "$1" "$2" || { guest_ended "$1" && sleep 0.5 && said "$1" "$2"; }
}
# host_run SECONDS OUT CMD...: CMD in the background, bounded, stopped 5 s
# after a guest ended; its status in rc
host_run() {
	hr_s=$1 hr_o=$2
	shift 2
	bg_start timeout "$hr_s" "$@" >"$hr_o" 2>&1
	p=$pid gone=0
	while running "$p"; do
		if guest_ended 1 || guest_ended 2; then
			gone=$((gone + 1))
			[ $gone -ge 50 ] && { kill "$p" 2>/dev/null; break; }
		fi
		sleep 0.1       # a process and the guests' logs: no event
	done
	wait_pid 10 "$p" "smqctl $3 on the host"
}

# ---- each guest's device-DAX device ----
for b in 1 2; do
	await $b '^SMQ-GUEST: (ready|end )' 240 || bail "guest $b: no device-DAX device within 240 s"
	said $b '^SMQ-GUEST: probe advises: cxl create-region -m -t pmem -d decoder0\.0 -w 1 -g 256 mem0$' &&
		ok "guest $b: probe --ntb advised the region with Linux's names: $(serial $b | sed -n 's/^SMQ-GUEST: probe advises: //p')" ||
		failed "guest $b: probe --ntb advised '$(serial $b | sed -n 's/^SMQ-GUEST: probe advises: //p')': $(block $b probe-out | grep -A3 'CXL memory') $(block $b probe-err)"
	said $b '^SMQ-GUEST: ready$' || bail "guest $b ended before its device was ready"
	set -- $(serial $b | sed -n 's/^SMQ-GUEST: dax dax0.0 align \([0-9]*\) size \([0-9]*\) offset \([0-9]*\)$/\1 \2 \3/p')
	if [ "${1:-}" = $((2 * MiB)) ] && [ "${3:-}" = $((2 * MiB)) ] &&
	   [ "${2:-0}" = $((size - 2 * MiB)) ]; then
		ok "guest $b: /dev/dax0.0 aligned to 2 MiB, its $(($2 / MiB)) MiB begin 2 MiB into the region ($(elapsed) s)"
	else
		failed "guest $b: /dev/dax0.0 align '${1:-}' size '${2:-}' offset '${3:-}'"
	fi
done
dsize=$((size - 2 * MiB))
for b in 1 2; do
	said $b '^SMQ-GUEST: refuse rc 1$' &&
		block $b refuse-err | grep -q "the offset, 4 KiB, is not a multiple of the device's alignment, 2 MiB" &&
		ok "guest $b: dax@4K: refused: $(block $b refuse-err)" ||
		failed "guest $b: dax@4K: $(serial $b | grep 'refuse rc') $(block $b refuse-err)"
	said $b '^SMQ-GUEST: asfile rc 1$' && block $b asfile-err | grep -q 'it is a device' &&
		ok "guest $b: file: on the device refused: $(block $b asfile-err)" ||
		failed "guest $b: file:/dev/dax0.0: $(serial $b | grep 'asfile rc') $(block $b asfile-err)"
done

# ---- the host formats the window at 2 MiB into the file; all sync ----
sm init --boards 3 --queues 3 --entries 64 --entry-size 1024 >"$T/init.out" 2>&1 ||
	bail "host: init of file@2M:$M exit $?"
host_run 150 "$T/sync.out" "$S" --window "file@2M:$M" sync --timeout 120
[ $rc = 0 ] && ok "host sync: $(tail -n 1 "$T/sync.out") ($(elapsed) s)" ||
	bail "host sync exit $rc"
for b in 1 2; do
	await $b '^SMQ-GUEST: sync rc ' 30
	said $b '^SMQ-GUEST: sync rc 0$' || bail "guest $b: sync failed: $(block $b sync-err)"
	await $b '^SMQ-GUEST: dump rc ' 30
	mapped=$(block $b dump-out | sed -n 's/^ *"mapped_size": \([0-9]*\),*$/\1/p')
	wsize=$(block $b dump-out | sed -n 's/^ *"window_size": \([0-9]*\),*$/\1/p')
	[ "$mapped" = $((2 * MiB)) ] && [ "${wsize:-0}" -lt $((2 * MiB)) ] &&
		ok "guest $b: synced; its window of $wsize bytes is mapped as one whole page of 2 MiB" ||
		failed "guest $b: window_size '$wsize', mapped_size '$mapped'"
done

# ---- messages each way between the host and each guest ----
nonce=$$.$(date +%s)
for b in 1 2; do
	printf 'SMQ-HOST to %s %s\n' $b "$nonce" | sm send --queue $b --timeout 30s ||
		failed "host: send to queue $b exit $?"
done
host_run 120 "$T/recv.out" "$S" --window "file@2M:$M" recv --queue 0 --count 2 --timeout 100s
for b in 1 2; do
	grep -qx "SMQ-CXL board $b got: SMQ-HOST to $b $nonce" "$T/recv.out" &&
		ok "guest $b received the host's message and the host its answer" ||
		failed "host: no answer of guest $b carrying '$nonce' (recv exit $rc): $(cat "$T/recv.out")"
done

# ---- pingpong and bench between the guests over dax: ----
for b in 1 2; do
	await $b '^SMQ-GUEST: pingpong rc ' 200 || failed "guest $b: pingpong did not end"
done
block 1 pingpong-out >"$T/pingpong.out"
if said 1 '^SMQ-GUEST: pingpong rc 0$' && said 2 '^SMQ-GUEST: pingpong rc 0$'; then
	ok "pingpong between guests 1 and 2 over dax:: both ended 0 (every echo's size and sequence number as sent)"
else
	failed "pingpong: guest 1 $(serial 1 | grep 'pingpong rc'): $(block 1 pingpong-err); guest 2 $(serial 2 | grep 'pingpong rc'): $(block 2 pingpong-err)"
fi
for s in 0 64 1000; do
	n=$(awk -v s=$s '$1 == s && NF >= 12 { print $2 }' "$T/pingpong.out")
	[ "$n" = "$count" ] || failed "pingpong: $s bytes: '$n' round trips, not $count"
done
sed 's/^/     | /' "$T/pingpong.out"
if [ "$nbench" -gt 0 ]; then
	for b in 1 2; do
		await $b '^SMQ-GUEST: bench rc ' 200 || failed "guest $b: bench did not end"
	done
	said 1 '^SMQ-GUEST: bench rc 0$' && said 2 '^SMQ-GUEST: bench rc 0$' &&
		ok "bench between guests 1 and 2 over dax:: both ended 0 (every message drained and checked)" ||
		failed "bench: guest 1 $(serial 1 | grep 'bench rc'): $(block 1 bench-err); guest 2 $(serial 2 | grep 'bench rc'): $(block 2 bench-err)"
	block 1 bench-out | sed 's/^/     | /'
fi

# ---- guest 2 killed: seen dead by the host and by guest 1 ----
for b in 1 2; do
	await $b '^SMQ-GUEST: holding$' 60 || bail "guest $b: not holding its board"
done
# the receivers open their queues (seconds under TCG): dump names their
# pids once they have
opened() { sm --json dump 2>/dev/null | json_flat | grep -q "^queue_table\.$1\.receiver_pid=[1-9]"; }
wait_for 60 "guests 1 and 2 to open their queues 1 and 2" eval 'opened 1 && opened 2'
qp2=$(cat "$T/qemu-2.pid" 2>/dev/null)
[ -n "$qp2" ] && kill -KILL "$qp2" 2>/dev/null || bail "cannot kill guest 2's QEMU (pid '$qp2')"
wait_pid 10 $g2 "guest 2's QEMU, killed"
# dump watches a heartbeat of another host for up to 5 s itself
sm --json dump >"$T/dump.json" 2>&1
json_flat <"$T/dump.json" >"$T/dump.flat"
jv() { awk -v k="$1" 'index($0, k "=") == 1 { print substr($0, length(k) + 2); exit }' "$2"; }
a2=$(jv board_table.2.activity "$T/dump.flat")
a1=$(jv board_table.1.activity "$T/dump.flat")
[ "$a2" = dead ] && [ "$a1" = working ] &&
	ok "host dump: board 2 dead once its guest was killed, board 1 at work" ||
	failed "host dump after the kill: board 2 '$a2', board 1 '$a1'"
printf 'SMQ-KILLED\n' | sm send --queue 1 --timeout 30s || failed "host: send to queue 1 exit $?"
await 1 '^SMQ-GUEST: deaddump rc ' 60
block 1 deaddump-out | json_flat >"$T/gdump.flat"
a2=$(jv board_table.2.activity "$T/gdump.flat")
[ "$a2" = dead ] && ok "guest 1's dump: board 2 dead" ||
	failed "guest 1's dump after the kill: board 2 '$a2' $(block 1 deaddump-err)"

# ---- the survivors free what board 2 left; check passes on them ----
sm --board 2 dump >/dev/null 2>&1 || failed "host: dump as board 2 (freeing its dead handles) exit $?"
sm --board 2 recv --queue 2 --count 0 --timeout 100ms >/dev/null 2>"$T/take.err"
[ $? -le 1 ] || failed "host: taking over queue 2's dead receiver: $(cat "$T/take.err")"
sm check --only window >"$T/check.out" 2>&1 &&
	ok "host: check --only window passes: $(tail -n 1 "$T/check.out")" ||
	failed "host: check --only window exit $?: $(grep -v '^PASS' "$T/check.out")"
printf 'SMQ-FREED\n' | sm send --queue 1 --timeout 30s || failed "host: send to queue 1 exit $?"
await 1 '^SMQ-GUEST: end ' 120
said 1 '^SMQ-GUEST: check rc 0$' &&
	ok "guest 1: check --only window passes: $(block 1 check-out | tail -n 1)" ||
	failed "guest 1: check: $(serial 1 | grep 'check rc') $(block 1 check-out | grep -v '^PASS') $(block 1 check-err)"
wait_pid 30 $g1 "guest 1's QEMU, its guest powering off"
said 1 '^SMQ-GUEST: end 0$' || failed "guest 1 did not end 0"

if any_failed || [ -n "${SMQ_QEMU_VERBOSE:-}" ]; then show_logs; fi
echo "done in $(elapsed) s (TCG)"
# probe's advice 2, the devices' 2, refusals' 4, syncs' 3, messages' 2, pingpong's 1 (and
# bench's), dead boards' 2, checks' 2
floor=18
[ "$nbench" -gt 0 ] && floor=19
finish $floor
