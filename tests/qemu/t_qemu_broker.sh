#!/bin/sh
# A vfio broker in a QEMU guest (q35, QEMU's intel-iommu): QEMU's
# ivshmem-doorbell, in the memory of this host's `smqctl server`, bound to
# vfio-pci and held by `smqctl broker`; every smqctl of the guest, board 1,
# attaches through it (--window broker:SOCKET;
# tests/qemu/guest-init-broker).  The host is board 0 over ivshmem:SOCKET.
# Checks:
#  - while the broker holds the device, a tool that opens it directly is
#    refused (its VFIO group is held);
#  - the board's application receives on queue 1 while dump, top --once
#    and pingpong --wait sleep with the host (on the diagnostic queues)
#    run beside it in the guest, each through the broker, pingpong woken
#    by the doorbell both ways; the host's send then wakes the application
#    (an MSI-X vector the broker handed to it);
#  - a receiver asleep when the broker is killed exits 1 and says that the
#    broker stopped;
#  - a watcher (events) says the window cannot be read when the broker is
#    killed, and lets the device go (else a broker started again could not
#    open it);
#  - a broker started again serves the board (dump through it), and the
#    watcher reads the window through it again;
#  - the socket's mode decides who may attach: another user (nobody) is
#    refused by the first broker (mode 0600) and attaches to the second
#    (0666).
# Exit 0 pass, 1 fail (with the guest's serial log), 77 skip (no QEMU,
# kernel package, vfio modules, static busybox or cpio), the reason on the
# last line.  SMQ_QEMU_VERBOSE=1 prints the log on success too.
. "$(dirname "$0")/lib.sh"
[ -x "$B/smqctl" ] || skip "smqctl not built ($B/smqctl): run make first"
qemu_need_tools ivshmem-doorbell intel-iommu
[ -d /dev/shm ] && [ -w /dev/shm ] || skip "/dev/shm is not writable"
M=/dev/shm/$SHM
start=$(now_ms)

qemu_kernel_modules vfio-pci vfio_iommu_type1
echo "     kernel and modules: $kdir"
qemu_copy "$B/smqctl" "$Q/guest-lib.sh"
qemu_initramfs "$T/initramfs" "$Q/guest-init-broker" "$T/smqctl" "$T/guest-lib.sh"

sock=$T/ivshmem.sock
if ! qemu_server "$T/smqctl" "file:$M" "$sock" 1M 4 200; then
	cat "$T/server.out"
	skip "the ivshmem server did not start (smqctl server --socket $sock)"
fi

timeout 30 "$T/smqctl" --window "ivshmem:$sock" init >"$T/init.out" 2>&1 ||
	{ cat "$T/init.out"; die "the host could not format the window"; }

qemu_accel
timeout 200 qemu-system-x86_64 -accel "$accel" -M "$machine" -nodefaults \
	-no-reboot -m 256 -display none -monitor none \
	-serial "file:$T/serial" -device intel-iommu \
	-chardev "socket,path=$sock,id=iv" \
	-device ivshmem-doorbell,chardev=iv,vectors=4 \
	-kernel "$kdir/vmlinuz" -initrd "$T/initramfs" \
	-append "console=ttyS0 panic=-1 quiet intel_iommu=on no_timer_check" \
	</dev/null >"$T/qemu.out" 2>&1 &
qpid=$!
track $qpid
serial() { tr -d '\r' <"$T/serial" 2>/dev/null; }
said() { serial | grep -qxF "$1"; }
# await LINE SECONDS: until the guest says LINE (0), or it ended, or
# SECONDS passed (1)
await() {
	await_line=$1
	within -w "the guest to say '$1'" "$2" eval 'said "$await_line" || ended "$qpid"'
	said "$1"
}
# the host drives the pingpong: it waits for the guest's side to come
timeout 150 "$T/smqctl" --window "ivshmem:$sock" pingpong --peer --peer-board 1 \
	--wait sleep --count 50 --size 0,64 >"$T/pp.out" 2>"$T/pp.err"
pprc=$?
if await "SMQ-GUEST: send-ready" 60; then
	echo hello | timeout 20 "$T/smqctl" --window "ivshmem:$sock" send --queue 1 \
		>"$T/send.out" 2>&1
	sendrc=$?
else
	sendrc=none
fi
wait_pid 210 "$qpid" "QEMU, its guest powering off"
grc=$rc
echo "     guest done in $((($(now_ms) - start) / 1000)) s (accel $accel)"

# out NAME: the stdout (or with err, the stderr) of the guest's command NAME
out() { serial | sed -n "/^SMQ-GUEST: $1-${2:-out}-begin\$/,/^SMQ-GUEST: $1-${2:-out}-end\$/p" | sed '1d;$d'; }

[ $grc = 0 ] || failed "QEMU exit $grc (124: timed out)"
[ "$sendrc" = 0 ] || failed "the host's send to queue 1: $sendrc $(cat "$T/send.out" 2>/dev/null)"
said "SMQ-GUEST: end 0" && ok "the guest ended 0" || failed "the guest did not end 0"
serial | grep -q '^SMQ-GUEST: broker: listening on /tmp/smq-broker.sock: device .*, BAR 2 of 1.0 MiB, 4 vectors$' &&
	ok "the broker holds the device: BAR 2 of 1.0 MiB, 4 vectors" ||
	failed "the broker did not say it listens with BAR 2 and 4 vectors"
said "SMQ-GUEST: direct rc 1" && out direct err | grep -q "held by another open" &&
	ok "[exit 1] a tool that opens the device directly meanwhile: its VFIO group is held" ||
	failed "a direct open beside the broker: $(out direct err | head -n 1) (rc $(serial | sed -n 's/^SMQ-GUEST: direct rc //p'))"
said "SMQ-GUEST: dump rc 0" && out dump | grep -q "doorbell (MSI-X, broker, peer [0-9]*)" &&
	ok "dump through the broker, beside the application: the doorbell is the broker's MSI-X" ||
	failed "dump through the broker: $(out dump err | head -n 2)"
out dump | grep -q '^1 *1 asleep' &&
	ok "dump shows the application's receiver asleep on queue 1" ||
	failed "dump does not show the application asleep on queue 1"
said "SMQ-GUEST: top rc 0" && ok "top --once through the broker" ||
	failed "top --once through the broker: $(out top err | head -n 2)"
if [ $pprc = 0 ] && said "SMQ-GUEST: pingpong rc 0"; then
	note=$(sed -n 's/^notification: \([^;]*\);.*/\1/p' "$T/pp.out")
	case $note in
	*" doorbell ("*) ok "pingpong --wait sleep, the host driving board 1 through the broker: both ended 0; the host's notification: $note" ;;
	*) failed "pingpong: the host's notification '$note', not a doorbell" ;;
	esac
	out pingpong err | grep -qi polling &&
		failed "pingpong: the guest polled: $(out pingpong err | head -n 2)"
	sed -n '3,5s/^/     | /p' "$T/pp.out"
else
	failed "pingpong: host exit $pprc ($(head -n 2 "$T/pp.err")), guest $(serial | grep '^SMQ-GUEST: pingpong rc') $(out pingpong err | head -n 2)"
fi
said "SMQ-GUEST: the application still waits" &&
	said "SMQ-GUEST: app rc 0: hello" &&
	ok "the application, waiting through all of it, got the host's send" ||
	failed "the application: $(serial | grep '^SMQ-GUEST: app rc')"
serial | grep -q '^SMQ-GUEST: receiver after the broker died rc 1: .*the vfio broker stopped' &&
	ok "[exit 1] a receiver asleep when the broker is killed says the broker stopped" ||
	failed "a receiver when the broker died: $(serial | grep '^SMQ-GUEST: receiver after')"
# rung through the device: the host's send woke queue 1's application,
# and pingpong's echoes to board 1 (queue 3) rang its waiter's vector
q1=$(out dump2 | awk '$1 == 1 && $2 == 1 && NF >= 9 { print $NF }')
q3=$(out dump2 | awk '$1 == 3 && $2 == 1 && NF >= 9 { print $NF }')
[ "${q1:-0}" -ge 1 ] && [ "${q3:-0}" -ge 1 ] &&
	ok "doorbells rung to board 1 through the broker's vectors: queue 1 $q1, queue 3 $q3" ||
	failed "no doorbell rung to board 1: queue 1 '$q1', queue 3 '$q3'"
said "SMQ-GUEST: dump2 rc 0" && ok "a broker started again serves the board" ||
	failed "a broker started again: $(serial | grep 'broker2') $(out dump2 err | head -n 2)"
out events | grep -q "window cannot be read: window broker:/tmp/smq-broker.sock: the vfio broker stopped" &&
	out events | grep -q "window can be read again" &&
	ok "a watcher (events) says the broker is gone, lets the device go, and reads the window again through the broker started again" ||
	failed "the watcher: $(out events | head -n 5)"

said "SMQ-GUEST: denied rc 1" && out denied err | grep -q "permission denied on the broker's socket" &&
	ok "[exit 1] another user, whom the socket's mode (0600) leaves out, is refused" ||
	failed "another user and a 0600 broker: $(serial | grep '^SMQ-GUEST: denied rc') $(out denied err | head -n 2)"
said "SMQ-GUEST: allowed rc 0" &&
	ok "another user attaches to a broker of mode 0666" ||
	failed "another user and a 0666 broker: $(serial | grep '^SMQ-GUEST: allowed rc') $(out allowed err | head -n 2)"

if any_failed || [ -n "${SMQ_QEMU_VERBOSE:-}" ]; then
	echo "---- guest serial log ----"
	serial | sed 's/^/  | /'
	[ -s "$T/qemu.out" ] && { echo "---- qemu ----"; sed 's/^/  | /' "$T/qemu.out"; }
	echo "---- server ----"
	sed 's/^/  | /' "$T/server.out"
fi
finish 14
