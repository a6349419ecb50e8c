#!/bin/sh
# An AER count that grows while smqctl check watches, in a QEMU guest: the
# window on QEMU's ivshmem-plain, a conventional PCI device, behind a
# pcie-pci-bridge under a pcie-root-port (tests/qemu/guest-init-aer).
# While the guest's check --only pci watches the AER counts (--watch), the
# host injects an error into the root port through QEMU's monitor
# (pcie_aer_inject_error): an uncorrectable non-fatal one, and the aer
# check FAILs (exit 1) naming the root port and the counts before and
# after.  The link checked is the bridge's to the root port (ivshmem, a
# conventional PCI device, has none).  (A correctable one, -c, QEMU 7.2
# accepts but this guest's kernel never hears of: recorded sysfs trees
# test that path, tests/t_check_pci.sh.)
# Exit 0 pass, 1 fail (with the guest's serial log), 77 skip (no QEMU with
# those devices, no kernel, busybox-static or cpio; a guest kernel that
# reports no AER counts), the reason on the last line.
. "$(dirname "$0")/lib.sh"
[ -x "$B/smqctl" ] || die "smqctl is not built ($B/smqctl)"
qemu_need_tools ivshmem-plain pcie-root-port pcie-pci-bridge
command -v python3 >/dev/null 2>&1 || skip "python3 not found: it speaks to QEMU's monitor"
watch=8

qemu_kernel_modules vfio-pci
qemu_copy "$B/smqctl" "$Q/guest-lib.sh"
qemu_initramfs "$T/initramfs" "$Q/guest-init-aer" "$T/smqctl" "$T/guest-lib.sh"
qemu_accel
truncate -s 2M "$T/memory" || exit 1
mon=$T/monitor
timeout 170 qemu-system-x86_64 -accel "$accel" -M "$machine" -nodefaults \
	-no-reboot -m 256 -display none -serial "file:$T/serial" \
	-monitor "unix:$mon,server=on,wait=off" \
	-object "memory-backend-file,id=hm,size=2M,share=on,mem-path=$T/memory" \
	-device pcie-root-port,id=rp1,chassis=1,bus=pcie.0,hotplug=off \
	-device pcie-pci-bridge,id=br1,bus=rp1 \
	-device ivshmem-plain,memdev=hm,bus=br1,addr=1 \
	-kernel "$kdir/vmlinuz" -initrd "$T/initramfs" \
	-append "console=ttyS0 panic=-1 quiet no_timer_check pcie_ports=native pcie_port_pm=off smq_watch=$watch" \
	</dev/null >"$T/qemu.out" 2>&1 &
qpid=$!
track $qpid

serial() { [ ! -f "$T/serial" ] || tr -d '\r' <"$T/serial"; }
said() { serial | grep -qE "$1"; }
# await REGEX SECONDS: until the guest says it (0), or QEMU ended, or
# SECONDS passed (1)
await() {
	await_re=$1
	within -w "the guest to say '$1'" "$2" eval 'said "$await_re" || ended "$qpid"'
	# what an ended QEMU wrote last may be on its way to the file
	said "$1" || { ended "$qpid" && sleep 0.5 && said "$1"; }
}
block() { serial | sed -n "/^SMQ-GUEST: $1-out-begin\$/,/^SMQ-GUEST: $1-out-end\$/p" | sed '1d;$d'; }
show_log() {
	echo "---- guest serial log ----"
	serial | sed 's/^/  | /'
	echo "---- qemu ----"
	sed 's/^/  | /' "$T/qemu.out"
}
# monitor COMMAND: one line to QEMU's human monitor; its answer
monitor() {
	python3 - "$mon" "$1" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(5)
def until_prompt():
    out = b""
    while not out.rstrip().endswith(b"(qemu)"):
        out += s.recv(4096)
    return out
until_prompt()
s.sendall(sys.argv[2].encode() + b"\n")
print(until_prompt().decode(errors="replace").replace("\r", ""))
PY
}

await '^SMQ-GUEST: check1 begins' 120 || { failed "the guest did not start its first check"; show_log; exit 1; }
if ! said '^SMQ-GUEST: aer counts: '; then
	show_log | tail -n 20
	skip "the guest kernel reports no AER counts for the root port (no AER driver): nothing to watch"
fi
rp=$(serial | sed -n 's|^SMQ-GUEST: aer counts: /sys/bus/pci/devices/||p' | head -n 1)
echo "     the guest's AER counts: $rp ($(serial | grep -c '^SMQ-GUEST: aer counts: ') device(s))"
# inject ERROR [-c]: once the guest's check has read the counts a first time
inject() {
	# (a stand-in left: nothing the guest says tells when its check has
	# read the counts; 3 s into a watch of $watch s, under TCG)
	sleep 3
	monitor "pcie_aer_inject_error $1" >"$T/mon.out" 2>&1
	# the monitor echoes the line as typed, then answers
	said=$(grep -o 'OK id: .*' "$T/mon.out")
	[ -n "$said" ] && echo "     monitor: pcie_aer_inject_error $1: $said" ||
		failed "monitor: pcie_aer_inject_error $1: $(tr -cd '[:print:]\n' <"$T/mon.out")"
}
inject "rp1 POISON_TLP"
await '^SMQ-GUEST: check1 rc ' 60 || failed "the check did not end"
block check1 >"$T/check1"
if grep -Eq "^FAIL  aer +$rp: non-fatal errors counting up while check ran: 0 to [1-9]" "$T/check1" &&
   said '^SMQ-GUEST: check1 rc 1$'; then
	ok "a non-fatal error injected into the root port: $(grep '^FAIL  aer' "$T/check1")"
else
	failed "after a non-fatal error: $(cat "$T/check1")"
fi
grep -q "^PASS  link .*(0000:01:00.0: 2.5GT/s x1)" "$T/check1" &&
	ok "link: the bridge's link to the root port PASSes (ivshmem itself has none)" ||
	failed "link: $(grep '  link ' "$T/check1")"
await '^SMQ-GUEST: end ' 30
if any_failed || [ -n "${SMQ_QEMU_VERBOSE:-}" ]; then show_log; fi
echo "accel $accel"
finish 2
