#!/bin/sh
# Doorbells over a real PCI device: QEMU's ivshmem-doorbell (1af4:1110 with
# MSI-X) in two q35 guests behind QEMU's emulated IOMMU, bound to vfio-pci
# and driven from user space by libsmq's VFIO and doorbell modules
# (tests/qemu/vfio_check), against `smqctl server` on the host.
#  - each guest: VFIO refuses the device before it is bound (EUNATCH);
#    after binding it opens, a second open is refused (EBUSY), BAR0 and
#    BAR2 map, the doorbell ID is IVPosition, MSI-X vectors come as
#    eventfds, teardown leaves the device free to open again;
#  - guest A also has an ivshmem-plain: known, no MSI-X, no doorbell;
#  - guest A passes the doorbell device's file and an MSI-X eventfd to a
#    second process (as a broker would): it maps BAR2, reads the doorbell
#    ID, rings, and takes the interrupt; then the opener ends, and what
#    still works is reported (not asserted);
#  - guest A rings guest B on vector 1 and B answers on vector 2, ROUNDS
#    times, each interrupt checked to come on its vector alone;
#  - the host, a peer through libsmq's ivshmem client (tests/qemu/ivshmem_host), rings
#    each guest on vector 3 and is answered on its vector 0;
#  - a third guest, whose IOMMU does not remap interrupts, gets EPERM.
# Reports the wake-up times.  Exit 0 pass, 1 fail, 77 skip (no QEMU, kernel
# package, vfio modules, or ivshmem server), the reason on the last line.
#
# The kernel and its vfio modules come from Debian's linux-image package
# (tests/qemu/fetch-kernel.sh, cached in $B/qemu-cache/), or from
# SMQ_QEMU_KERNEL_DEB=PATH.  SMQ_QEMU_VERBOSE=1 prints the guests' logs on
# success too; SMQ_QEMU_ROUNDS sets the rounds (default 20).
. "$(dirname "$0")/lib.sh"
S=$B/smqctl
[ -x "$S" ] || skip "smqctl not built ($S): run make first"
[ -x "$B/tests/qemu/vfio_check" ] && [ -x "$B/tests/qemu/ivshmem_host" ] ||
	skip "vfio_check or ivshmem_host not built in $B/tests/qemu: run make first"
qemu_need_tools ivshmem-doorbell intel-iommu
[ -d /dev/shm ] && [ -w /dev/shm ] || skip "/dev/shm is not writable"
"$S" help server >/dev/null 2>&1 ||
	skip "the ivshmem server is not built (smqctl help server fails)"
rounds=${SMQ_QEMU_ROUNDS:-20}
X=/dev/shm/$SHM
M=/dev/shm/$SHM-server
start=$(date +%s)
elapsed() { echo $(($(date +%s) - start)); }

# ---- the kernel and its vfio modules, from one package ----
qemu_kernel_modules vfio-pci vfio_iommu_type1
echo "     kernel and modules: $kdir"

qemu_copy "$B/tests/qemu/vfio_check" "$B/tests/qemu/ivshmem_host" "$S" "$Q/guest-lib.sh"
qemu_initramfs "$T/initramfs" "$Q/guest-init-vfio" "$T/vfio_check" "$T/guest-lib.sh"

# ---- the server ----
sock=$T/ivshmem.sock
# its memory a file of our own, not the default window
if ! qemu_server "$T/smqctl" "file:$M" "$sock" 1M 4 150; then
	cat "$T/server.out"
	skip "the ivshmem server did not start (smqctl server --socket $sock)"
fi

# ---- two guests in parallel, then the host as a third client ----
qemu_accel
truncate -s 1M "$X" || exit 1
guest() { # guest ROLE DEVICE-ARGS..., run in the background: exec makes its
	# job QEMU's timeout, which passes a kill on to QEMU
	r=$1
	shift
	exec timeout 110 qemu-system-x86_64 -accel "$accel" -M "$machine" -nodefaults \
		-no-reboot -m 256 -display none -monitor none \
		-serial "file:$T/serial-$r" "$@" \
		-kernel "$kdir/vmlinuz" -initrd "$T/initramfs" \
		-append "console=ttyS0 panic=-1 quiet intel_iommu=on no_timer_check smq_role=$r smq_rounds=$rounds" \
		</dev/null >"$T/qemu-$r.out" 2>&1
}
doorbell="-chardev socket,path=$sock,id=iv -device ivshmem-doorbell,chardev=iv,vectors=4"
plain="-object memory-backend-file,id=plain,size=1M,share=on,mem-path=$X -device ivshmem-plain,memdev=plain"
# (the IOMMU comes first: QEMU wants it before the devices it translates for)
guest a -device intel-iommu $doorbell $plain &
apid=$!
guest b -device intel-iommu $doorbell &
bpid=$!
# C: an IOMMU that does not remap interrupts, which VFIO must refuse
guest c -device intel-iommu,intremap=off $plain &
cpid=$!
track $apid $bpid $cpid
bg_start timeout 120 "$T/ivshmem_host" "$sock" 100 >"$T/host.out" 2>&1
hpid=$pid

# A guest that ends without "end 0" (a panic, a failed step) leaves the
# others waiting for it: stop them soon after.
serial() { tr -d '\r' <"$T/serial-$1" 2>/dev/null; }
early=
# all_done: every guest and the host client ended, or a guest ended early
# 3 s ago (then the others are stopped)
all_done() {
	ended "$apid" && ended "$bpid" && ended "$cpid" && ended "$hpid" && return 0
	for r in a b; do
		eval p=\$${r}pid
		if ended "$p" && ! serial $r | grep -qx 'SMQ-GUEST: end 0'; then
			early=${early:-$(date +%s)}
		fi
	done
	if [ -n "$early" ] && [ $(($(date +%s) - early)) -ge 3 ]; then
		echo "     a guest ended early: stopping the others"
		kill "$apid" "$bpid" "$cpid" "$hpid" 2>/dev/null
		return 0
	fi
	return 1
}
# their timeouts (110 and 120 s) end them; this bound is the last resort
wait_for 130 "the guests and the host client to end" all_done
wait_pid 10 "$apid" "guest a's QEMU"
arc=$rc
wait_pid 10 "$bpid" "guest b's QEMU"
brc=$rc
wait_pid 10 "$cpid" "guest c's QEMU"
crc=$rc
wait_pid 10 "$hpid" "the host client"
hrc=$rc
echo "     guests and host done in $(elapsed) s (accel $accel)"

said() { serial "$1" | grep -qxF "$2"; }
show_logs() {
	for r in a b c; do
		echo "---- guest $r serial log ----"
		serial $r | sed 's/^/  | /'
		[ -s "$T/qemu-$r.out" ] && { echo "---- qemu $r ----"; sed 's/^/  | /' "$T/qemu-$r.out"; }
	done
	echo "---- host ----"
	sed 's/^/  | /' "$T/host.out"
	echo "---- server ----"
	sed 's/^/  | /' "$T/server.out"
}

for r in a b; do
	eval rc=\$${r}rc
	[ "$rc" = 0 ] || failed "guest $r: QEMU exit $rc (124: timed out)"
	said $r "SMQ-GUEST: end 0" && ok "guest $r ended 0" ||
		failed "guest $r did not end 0"
	n=$(serial $r | grep -c '^VFIO: FAIL')
	[ "$n" = 0 ] || failed "guest $r: $n failed checks: $(serial $r | grep '^VFIO: FAIL' | head -n 3)"
	# every check the guest must have made, each seen
	for c in "ok a held group refuses a second open with EBUSY" \
		 "ok the doorbell ID is IVPosition" \
		 "ok ivshmem-doorbell has an MSI-X capability" \
		 "ok BAR2 (the shared memory) maps" \
		 "ok MSI-X vectors 0-3 routed to eventfds" \
		 "ok the host's ring came on vector 3" \
		 "ok answered the host on vector 0" \
		 "ok MSI-X routing torn down" \
		 "ok closing left no descriptor and no mapping behind"; do
		said $r "VFIO: $c" || failed "guest $r: no \"$c\""
	done
	serial $r | grep -q '^VFIO: open rc -49 EUNATCH' &&
		ok "guest $r: VFIO refuses the device before binding (EUNATCH)" ||
		failed "guest $r: no EUNATCH before binding"
done
said a "VFIO: ok every ring of B was answered on vector 2" &&
	ok "guest A: $rounds rings of B answered, each on vector 2 alone" ||
	failed "guest A: not every ring of B was answered on vector 2"
said b "VFIO: ok every ring from A came on vector 1 and was answered" &&
	ok "guest B: $rounds rings from A, each on vector 1 alone, answered" ||
	failed "guest B: not every ring from A came on vector 1"
for c in "ok ivshmem-plain offers no MSI-X vector" \
	 "ok ivshmem-plain is known but has no doorbell" \
	 "ok a word written through the mapping reads back through pread after reopening"; do
	said a "VFIO: $c" || failed "guest A's ivshmem-plain: no \"$c\""
done
# the device passed to another process: what a broker needs
for c in "ok share: a device file passed on is adopted" \
	 "ok share: the adopter cannot take over the owner's MSI-X" \
	 "ok share: the adopter reads the doorbell ID" \
	 "ok share: BAR2 maps in the adopter, the owner's word in it" \
	 "ok share: the adopter rings, the interrupt comes on the owner's eventfd it was handed" \
	 "ok share: once the adopter closed, the device opens again"; do
	said a "VFIO: $c" || failed "guest A's shared device: no \"$c\""
done
said a "SMQ-GUEST: share rc 0" &&
	ok "guest A: a second process maps, rings and takes interrupts through the device file and an eventfd passed to it" ||
	failed "guest A: the shared device check failed"
serial a | sed -n 's/^VFIO: share: \(after the owner ended: .*\|a new owner .*\)/     guest A, the opener gone: \1/p'
said a "SMQ-GUEST: plain rc 0" &&
	ok "guest A: ivshmem-plain opens and maps, no MSI-X, no doorbell" ||
	failed "guest A: the ivshmem-plain check failed"

[ "$crc" = 0 ] || failed "guest c: QEMU exit $crc (124: timed out)"
said c "SMQ-GUEST: end 0" || failed "guest c did not end 0"
serial c | grep -q '^VFIO: open rc -1 EPERM: the IOMMU cannot remap interrupts' &&
	ok "guest C: an IOMMU without interrupt remapping is refused (EPERM), and said so" ||
	failed "guest C: without interrupt remapping: $(serial c | grep '^VFIO: open' || echo 'no open')"

# the IDs: three clients of one server, three IDs
ida=$(serial a | sed -n 's/^VFIO: doorbell ivshmem-doorbell id \([0-9]*\) .*/\1/p')
idb=$(serial b | sed -n 's/^VFIO: doorbell ivshmem-doorbell id \([0-9]*\) .*/\1/p')
idh=$(sed -n 's/^HOST: id \([0-9]*\),.*/\1/p' "$T/host.out")
if [ -n "$ida" ] && [ -n "$idb" ] && [ -n "$idh" ] &&
   [ "$ida" != "$idb" ] && [ "$ida" != "$idh" ] && [ "$idb" != "$idh" ]; then
	ok "doorbell IDs: guest A $ida, guest B $idb, host $idh"
else
	failed "doorbell IDs not three distinct ones: A '$ida' B '$idb' host '$idh'"
fi

[ "$hrc" = 0 ] || failed "host client exit $hrc (124: timed out)"
for r in A B; do
	grep -q "^HOST: ok guest $r answered on vector 0 alone" "$T/host.out" &&
		ok "host rang guest $r on vector 3, answered on vector 0" ||
		failed "host: no answer on vector 0 from guest $r"
done

# the wake-up times
serial a | sed -n 's/^VFIO: round trip \(.*\)/     guest A to B and back, \1/p'
sed -n 's/^HOST: ok guest \(.\) answered on vector 0 alone in \(.*\)/     host to guest \1 and back: \2/p' "$T/host.out"
echo "     $(serial a | sed -n 's/^VFIO: \(sysfs resource2 mmap .*\)/guest: \1/p')"
echo "     BAR0 mapped through VFIO: $(serial a | sed -n 's/^VFIO: bar0 mmap rc //p')"

if any_failed || [ -n "${SMQ_QEMU_VERBOSE:-}" ]; then show_logs; fi
echo "done in $(elapsed) s"
finish 12
