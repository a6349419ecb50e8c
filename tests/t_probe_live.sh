#!/bin/sh
# smqctl probe on this machine's live bus, cross-checked field by field with
# lspci by tests/lspci_compare.py: `smqctl probe --json` against `lspci -D
# -vv -nn` (classes, IDs, subsystems, every BAR's address, size and flags,
# bridge buses and windows, the PCI Express capability: LnkCap, LnkSta and
# (downgraded), DevCap MaxPayload, DevCtl MaxPayload and MaxReadReq; NUMA
# node; "Kernel driver in use:"), `lspci -D -n` (the set of devices,
# vendor:device, class, revision), `lspci -D -x` (the raw header: IDs,
# class, header type, subsystem, every BAR register's type bits, bridge bus
# numbers) and `lspci -t` (the bridge above each device).
# Prints ok or FAIL per device and field; exit 1 on any mismatch, 77 when
# lspci or /sys/bus/pci is missing.  Without python3 only the devices and
# their IDs are compared.  B is the build directory (default build);
# PROBE_JSON=FILE compares FILE instead of running smqctl (to see that a
# wrong field is caught).
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
command -v lspci >/dev/null 2>&1 || { echo "skip: no lspci (pciutils)"; exit 77; }
[ -d /sys/bus/pci/devices ] || { echo "skip: no /sys/bus/pci on this machine"; exit 77; }
[ -n "$PROBE_JSON" ] || [ -x "$B/smqctl" ] ||
	{ echo "skip: no $B/smqctl: build it first (make)"; exit 77; }
[ -n "$(ls /sys/bus/pci/devices)" ] || { echo "skip: no PCI device on this machine"; exit 77; }
export LC_ALL=C

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

if [ -n "$PROBE_JSON" ]; then
	cp "$PROBE_JSON" "$tmp/probe.json" || exit 1
else
	"$B/smqctl" probe --json >"$tmp/probe.json" ||
		{ echo "FAIL: smqctl probe --json exited $?"; exit 1; }
fi
# lspci complains on stderr about libkmod in containers: not our business
lspci -D -vv -nn >"$tmp/vv" 2>/dev/null || { echo "FAIL: lspci -vv failed"; exit 1; }
lspci -D -n >"$tmp/n" 2>/dev/null || { echo "FAIL: lspci -n failed"; exit 1; }
lspci -D -x >"$tmp/x" 2>/dev/null || { echo "FAIL: lspci -x failed"; exit 1; }
lspci -t >"$tmp/t" 2>/dev/null || { echo "FAIL: lspci -t failed"; exit 1; }

if ! command -v python3 >/dev/null 2>&1; then
	echo "note: no python3: comparing the devices and their IDs only"
	# "0000:00:01.0 ffff: 1af4:1045 (rev 01)" -> "0000:00:01.0 1af4 1045 ffff"
	sed -n 's/^\([0-9a-f:.]*\) \([0-9a-f]\{4\}\): \([0-9a-f]\{4\}\):\([0-9a-f]\{4\}\).*/\1 \3 \4 \2/p' \
		"$tmp/n" | sort >"$tmp/want"
	awk -F'"' '
		/"slot":/ { s = $4 } /"vendor":/ { v = $4 } /"device":/ { d = $4 }
		/"class":/ { print s, v, d, substr($4, 1, 4) }' "$tmp/probe.json" |
		sort >"$tmp/got"
	if cmp -s "$tmp/want" "$tmp/got"; then
		sed 's/^\([^ ]*\) .*/ok \1 ids/' "$tmp/got"
		exit 0
	fi
	echo "FAIL: devices and IDs differ (lspci -n, then smqctl):"
	diff "$tmp/want" "$tmp/got" | sed 's/^/    /'
	exit 1
fi

python3 tests/lspci_compare.py "$tmp"
