#!/bin/sh
# A vfio broker in a QEMU guest (q35, QEMU's intel-iommu): QEMU's
# ivshmem-doorbell, in the memory of this host's `smqctl server`, bound to
# vfio-pci and held by `smqctl broker`; every smqctl of the guest attaches
# through it (--window broker:SOCKET; tests/qemu/guest-init-broker).
# Checks:
#  - while the broker holds the device, a tool that opens it directly is
#    refused (its VFIO group is held);
#  - init formats the window through the broker; an application receives
#    on queue 1 (board 1) while dump, top --once and pingpong --mode sleep
#    (boards 0 and 1, the diagnostic queues) run beside it, each through
#    the broker, pingpong woken by the doorbell, not polling; a send then
#    wakes the application;
#  - a receiver asleep when the broker is killed exits 1 and says that the
#    broker stopped;
#  - a watcher (events) says the window cannot be read when the broker is
#    killed, and lets the device go (else a broker started again could not
#    open it);
#  - a broker started again serves the board (dump through it), and the
#    watcher reads the window through it again.
# Exit 0 pass, 1 fail (with the guest's serial log), 77 skip (no QEMU,
# kernel package, vfio modules, static busybox or cpio), the reason on the
# last line.  SMQ_QEMU_VERBOSE=1 prints the log on success too.
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
case $B in
/*) ;;
*) B=$PWD/$B ;;
esac
Q=$PWD/tests/qemu
. "$Q/lib.sh"
[ -x "$B/smqctl" ] || skip "smqctl not built ($B/smqctl): run make first"
qemu_need_tools ivshmem-doorbell intel-iommu
[ -d /dev/shm ] && [ -w /dev/shm ] || skip "/dev/shm is not writable"
unset SMQ_WINDOW SMQ_DEBUG 2>/dev/null
export LC_ALL=C

T=$(mktemp -d) || exit 1
M=/dev/shm/smq-qemu-broker-$$
pids=''
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	rm -f "$M"
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
start=$(now_ms)

qemu_kernel_modules vfio-pci vfio_iommu_type1
echo "     kernel and modules: $kdir"
cp "$B/smqctl" "$T/smqctl" && chmod 755 "$T/smqctl" || exit 1
cp "$Q/guest-lib.sh" "$T/guest-lib.sh" && chmod 755 "$T/guest-lib.sh" || exit 1
qemu_initramfs "$T/initramfs" "$Q/guest-init-broker" "$T/smqctl" "$T/guest-lib.sh"

sock=$T/ivshmem.sock
if ! qemu_server "$T/smqctl" "file:$M" "$sock" 1M 4 200; then
	cat "$T/server.out"
	skip "the ivshmem server did not start (smqctl server --socket $sock)"
fi
pids="$pids $spid"

qemu_accel
timeout 180 qemu-system-x86_64 -accel "$accel" -M "$machine" -nodefaults \
	-no-reboot -m 256 -display none -monitor none \
	-serial "file:$T/serial" -device intel-iommu \
	-chardev "socket,path=$sock,id=iv" \
	-device ivshmem-doorbell,chardev=iv,vectors=4 \
	-kernel "$kdir/vmlinuz" -initrd "$T/initramfs" \
	-append "console=ttyS0 panic=-1 quiet intel_iommu=on no_timer_check" \
	</dev/null >"$T/qemu.out" 2>&1
grc=$?
echo "     guest done in $((($(now_ms) - start) / 1000)) s (accel $accel)"

fail=0
ok() { echo "ok   $*"; }
failed() { echo "FAIL $*"; fail=1; }
serial() { tr -d '\r' <"$T/serial" 2>/dev/null; }
said() { serial | grep -qxF "$1"; }
# out NAME: the stdout (or with err, the stderr) of the guest's command NAME
out() { serial | sed -n "/^SMQ-GUEST: $1-${2:-out}-begin\$/,/^SMQ-GUEST: $1-${2:-out}-end\$/p" | sed '1d;$d'; }

[ $grc = 0 ] || failed "QEMU exit $grc (124: timed out)"
said "SMQ-GUEST: end 0" && ok "the guest ended 0" || failed "the guest did not end 0"
serial | grep -q '^SMQ-GUEST: broker: listening on /tmp/smq-broker.sock: device .*, BAR 2 of 1.0 MiB, 4 vectors$' &&
	ok "the broker holds the device: BAR 2 of 1.0 MiB, 4 vectors" ||
	failed "the broker did not say it listens with BAR 2 and 4 vectors"
said "SMQ-GUEST: direct rc 1" && out direct err | grep -q "held by another open" &&
	ok "[exit 1] a tool that opens the device directly meanwhile: its VFIO group is held" ||
	failed "a direct open beside the broker: $(out direct err | head -n 1) (rc $(serial | sed -n 's/^SMQ-GUEST: direct rc //p'))"
said "SMQ-GUEST: init rc 0" && ok "init through the broker" ||
	failed "init through the broker: $(out init err | head -n 2)"
said "SMQ-GUEST: dump rc 0" && out dump | grep -q "doorbell (MSI-X, broker, peer [0-9]*)" &&
	ok "dump through the broker, beside the application: the doorbell is the broker's MSI-X" ||
	failed "dump through the broker: $(out dump err | head -n 2)"
out dump | grep -q '^1 *1 asleep' &&
	ok "dump shows the application's receiver asleep on queue 1" ||
	failed "dump does not show the application asleep on queue 1"
said "SMQ-GUEST: top rc 0" && ok "top --once through the broker" ||
	failed "top --once through the broker: $(out top err | head -n 2)"
if said "SMQ-GUEST: pingpong rc 0"; then
	out pingpong | grep -qi "polling" &&
		failed "pingpong polled: $(out pingpong | grep -i polling | head -n 1)" ||
		ok "pingpong --mode sleep between boards 0 and 1, both through the broker"
	out pingpong | grep -i "doorbell\|msg/s\|median" | head -n 4 | sed 's/^/     /'
else
	failed "pingpong through the broker: $(out pingpong err | head -n 3)"
fi
said "SMQ-GUEST: the application still waits" &&
	said "SMQ-GUEST: app rc 0: hello" &&
	ok "the application, waiting through all of it, got the send" ||
	failed "the application: $(serial | grep '^SMQ-GUEST: app rc')"
serial | grep -q '^SMQ-GUEST: receiver after the broker died rc 1: .*the vfio broker stopped' &&
	ok "[exit 1] a receiver asleep when the broker is killed says the broker stopped" ||
	failed "a receiver when the broker died: $(serial | grep '^SMQ-GUEST: receiver after')"
said "SMQ-GUEST: dump2 rc 0" && ok "a broker started again serves the board" ||
	failed "a broker started again: $(serial | grep 'broker2') $(out dump2 err | head -n 2)"
out events | grep -q "window cannot be read: window broker:/tmp/smq-broker.sock: the vfio broker stopped" &&
	out events | grep -q "window can be read again" &&
	ok "a watcher (events) says the broker is gone, lets the device go, and reads the window again through the broker started again" ||
	failed "the watcher: $(out events | head -n 5)"

if [ $fail != 0 ] || [ -n "${SMQ_QEMU_VERBOSE:-}" ]; then
	echo "---- guest serial log ----"
	serial | sed 's/^/  | /'
	[ -s "$T/qemu.out" ] && { echo "---- qemu ----"; sed 's/^/  | /' "$T/qemu.out"; }
	echo "---- server ----"
	sed 's/^/  | /' "$T/server.out"
fi
[ $fail = 0 ] && echo "all passed"
exit $fail
