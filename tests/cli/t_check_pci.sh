#!/bin/sh
# smqctl check, the PCI path under the window, from recorded config space
# (tests/data/pci-dumps/check-good.txt, check-bad.txt) and recorded sysfs trees
# (tests/data/check/sysfs-good, sysfs-bad; tests/data/check/make-pci.py made all
# four):
#  - good: link, aer, payload, bar and vfio PASS;
#  - bad: each fault a FAIL (or a WARN) that names its cause: the link
#    trained at 2.5GT/s x4 where both ends do 8GT/s x8, 3 correctable
#    errors standing (WARN), the NT function's MPS 512 over the root
#    port's 256, a BAR smaller than the window, a second device of the
#    IOMMU group held by another driver;
#  - an AER count that grows while check watches: a FAIL for a non-fatal
#    count, a WARN for a correctable one (the first read is from a FIFO,
#    the second from the file put in its place);
#  - a window that is not on a PCI device: every PCI check SKIPs, saying
#    why; a legacy PCI device (ivshmem) has no link to judge.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
export SMQ_WINDOW="file:$T/w"
D=tests/data/pci-dumps
run() {
	name=$1
	shift
	"$S" check -T 20s --only pci "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
}

"$S" init --boards 2 --entries 4 --entry-size 256 >/dev/null || die "init"
nt="--device 0000:01:00.0"

run good $nt -F $D/check-good.txt --sysfs tests/data/check/sysfs-good --watch 0
check_exit good 0
check_line good PASS link "1 link on the path, each trained to what both ends support \(0000:01:00.0: 8GT/s x8\)"
check_line good PASS aer "no AER error on the 2 devices of the path"
check_line good PASS payload "MPS 256 bytes, within what every port above accepts.*MRRS 512"
check_line good PASS bar "BAR2 of 0000:01:00.0: 16777216 bytes at 0xe0000000, prefetchable, aligned"
check_line good PASS vfio "0000:01:00.0 bound to vfio-pci in IOMMU group 7"

run bad $nt -F $D/check-bad.txt --sysfs tests/data/check/sysfs-bad --watch 0
check_exit bad 1
check_line bad FAIL link "0000:01:00.0: the link up to 0000:00:01.0 is downgraded: trained 2.5GT/s x4, both ends support 8GT/s x8"
check_line bad WARN aer "0000:01:00.0: 3 correctable errors standing .*BadTLP 3"
check_line bad FAIL payload "0000:01:00.0 sends TLPs of up to 512 bytes \(MPS\), but 0000:00:01.0 above it takes at most 256"
check_line bad FAIL bar "BAR2 of 0000:01:00.0 holds 262144 bytes, the window's layout needs"
check_line bad FAIL vfio "IOMMU group 7 holds 0000:01:00.1 too, bound to e1000e"
grep -q "^      next: reseat or replace" "$T/bad.out" && ok "bad: link says what to do next" ||
	failed "bad: no next step under the link"
tail -n 1 "$T/bad.out" | grep -q "first to fix: link:" && ok "bad: the link first" ||
	failed "bad: the first to fix is not the link: $(tail -n 1 "$T/bad.out")"

# A count that grows while check watches.  check reads every AER file at
# its start and again at its end, --watch later: the first read of the
# chosen file comes from a FIFO, the second from the file put in its
# place.  grow NAME FILE KIND ...
grow() {
	name=$1 file=$2 total=$3
	shift 3
	rm -rf "$T/s"
	cp -a tests/data/check/sysfs-good "$T/s"
	f=$T/s/bus/pci/devices/0000:00:01.0/$file
	rm -f "$f" && mkfifo "$f" || { failed "$name: no FIFO"; return; }
	bg_start "$S" check -T 20s --only aer $nt -F $D/check-good.txt --sysfs "$T/s" \
		--watch 3s "$@" >"$T/$name.out" 2>"$T/$name.err"
	cp=$pid
	# the write into the FIFO waits for check to open it: bounded
	printf 'TLP 0\n%s 0\n' "$total" >"$f" &
	track $!
	wait_pid 20 $! "check $name to read the first AER counts from a FIFO"
	# (no sleep: the writer ends only once check has opened the FIFO,
	# and what it reads stays in the pipe when the name is replaced)
	rm -f "$f"
	printf 'TLP 2\n%s 2\n' "$total" >"$f"
	wait_pid 20 $cp "check $name, watching 3 s"
}
grow growing aer_dev_nonfatal TOTAL_ERR_NONFATAL
check_exit growing 1
check_line growing FAIL aer "0000:00:01.0: non-fatal errors counting up while check ran: 0 to 2"
grow growing-cor aer_dev_correctable TOTAL_ERR_COR
check_exit growing-cor 0
check_line growing-cor WARN aer "0000:00:01.0: correctable errors counting up while check ran: 0 to 2"

# not on a PCI device; a device the dump does not hold; a legacy device
run shm
check_exit shm 0
for c in link aer payload bar vfio; do
	check_line shm SKIP $c "the window is not on a PCI device \(file\); --device names one"
done
run absent --device 0000:09:00.0 -F $D/check-good.txt --watch 0
check_line absent SKIP link "no PCI device 0000:09:00.0 in $D/check-good.txt"
run ivshmem --device 0000:00:04.0 -F $D/ivshmem.txt --sysfs "$T/none" --watch 0
check_line ivshmem SKIP link "a conventional PCI device"
check_line ivshmem SKIP vfio "not under $T/none/bus/pci"

finish 27
