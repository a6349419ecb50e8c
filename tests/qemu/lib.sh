# Shell shared by the QEMU tests (tests/qemu/t_*.sh), what is theirs
# alone: a test begins
#
#	. "$(dirname "$0")/lib.sh"
#
# which sources tests/lib/lib.sh (the root, B, T, the cleanup, the checks
# and the bounded waits) and sets Q, this folder.  What cannot be had
# skips the test (skip): exit 77, the reason on the last line.
. "$(dirname "$0")/../lib/lib.sh"
Q=$ROOT/tests/qemu
unset SMQ_WINDOW SMQ_DEBUG 2>/dev/null

# qemu_need_tools [DEVICE...]: qemu-system-x86_64 with each DEVICE, cpio,
# timeout and a static busybox (for the initramfs).
qemu_need_tools() {
	command -v qemu-system-x86_64 >/dev/null 2>&1 ||
		skip "qemu-system-x86_64 not found (install qemu-system-x86)"
	if [ $# -gt 0 ]; then
		qemu_devs=$(qemu-system-x86_64 -device help 2>/dev/null)
		for d in "$@"; do
			echo "$qemu_devs" | grep -q "\"$d\"" ||
				skip "this QEMU has no $d device"
		done
	fi
	command -v cpio >/dev/null 2>&1 || skip "cpio not found"
	command -v timeout >/dev/null 2>&1 || skip "timeout not found"
	qemu_bb=$(command -v busybox 2>/dev/null) ||
		skip "busybox not found (install busybox-static)"
	if ldd "$qemu_bb" >/dev/null 2>&1; then
		skip "$qemu_bb is dynamically linked (install busybox-static)"
	fi
}

# qemu_accel: sets accel (kvm where this host can run a KVM guest, else
# tcg) and machine (q35; under KVM with a split irqchip, for QEMU's IOMMU
# to remap interrupts: under TCG the irqchip is QEMU's own).
qemu_accel() {
	accel=tcg
	if [ -w /dev/kvm ] && { [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }; then
		accel=kvm
	fi
	machine=q35
	[ $accel = kvm ] && machine=q35,kernel-irqchip=split
	return 0
}

# qemu_kernel_modules MODULE...: sets kdir, a directory of Debian's kernel
# and those modules with what they depend on (tests/qemu/fetch-kernel.sh,
# cached in $B/qemu-cache).
qemu_kernel_modules() {
	sh "$Q/fetch-kernel.sh" "$B/qemu-cache" "$@" >"$T/kernel" 2>&1
	case $? in
	0) kdir=$(tail -n 1 "$T/kernel") ;;
	77) skip "$(tail -n 1 "$T/kernel")" ;;
	*) echo "FAIL getting the kernel and its modules:"; cat "$T/kernel"; exit 1 ;;
	esac
}

# qemu_copy FILE...: copies of the programs the guest and the host run,
# in T (the build folder may be rebuilt while the test runs)
qemu_copy() {
	for qemu_f in "$@"; do
		cp "$qemu_f" "$T/${qemu_f##*/}" && chmod 755 "$T/${qemu_f##*/}" || exit 1
	done
}

# qemu_initramfs OUT INIT [PROGRAM...]: tests/qemu/build-initramfs.sh with
# the modules of $kdir.
qemu_initramfs() {
	KMODS=$kdir sh "$Q/build-initramfs.sh" "$@" >"$T/mkinitrd" 2>&1
	case $? in
	0) ;;
	77) skip "initramfs: $(tail -n 1 "$T/mkinitrd")" ;;
	*) echo "FAIL building the initramfs:"; cat "$T/mkinitrd"; exit 1 ;;
	esac
}

# qemu_server SMQCTL MEMORY SOCKET SIZE VECTORS SECONDS: `smqctl server` in
# the background for at most SECONDS, its output in $T/server.out, its pid
# in spid (tracked).  Returns 0 once it listens, 1 if it did not within
# 10 s.
qemu_server() {
	bg_start timeout "$6" "$1" --window "$2" server --socket "$3" --shm-size "$4" \
		--vectors "$5" >"$T/server.out" 2>&1
	spid=$pid
	qemu_sock=$3
	within 10 eval '[ -S "$qemu_sock" ] || ended "$spid"'
	[ -S "$3" ]
}

# json_flat <JSON: smqctl's JSON (one key per line, as its writer puts it)
# as lines PATH=VALUE, e.g. board_table.2.doorbell.id=3, strings unquoted.
json_flat() {
	awk '
	{
		line = $0
		sub(/^[ \t]+/, "", line)
		sub(/,$/, "", line)
		if (line == "") next
		if (line == "}" || line == "]") { depth--; next }
		key = ""
		if (match(line, /^"[^"]*": /)) {
			key = substr(line, 2, RLENGTH - 4)
			line = substr(line, RLENGTH + 1)
		} else if (depth > 0 && type[depth] == "[") {
			key = idx[depth]++
		}
		path = depth && prefix[depth] != "" ? prefix[depth] "." key : key
		if (line == "{" || line == "[") {
			depth++
			prefix[depth] = path
			type[depth] = line
			idx[depth] = 0
			next
		}
		if (line ~ /^".*"$/)
			line = substr(line, 2, length(line) - 2)
		print path "=" line
	}'
}
