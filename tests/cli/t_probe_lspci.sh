#!/bin/sh
# smqctl probe -F beside lspci -F on recorded dumps, field by field
# (tests/cli/lspci_compare.py: the devices, IDs, classes, subsystems, every BAR,
# bridge bus numbers and windows, CardBus windows, the PCI Express link,
# MaxPayload and MaxReadReq, and the tree: the bridge above each device).
#
# It compares our own dumps (tests/data/pci-dumps/, those lspci reads), and then
# every dump in the directory SMQ_PCI_DUMPS names, if set: pciutils keeps
# dumps of real machines in its tests/ folder (lspci -vvvxxx text), which
# are not part of this repository.  Point SMQ_PCI_DUMPS at a copy of them
# (or any directory of dumps) to check our reading of PCI against lspci's.
# Without it the test passes on our own dumps, with a note that the others
# were not given; without lspci or python3 it skips.  B is the build
# directory.
. "$(dirname "$0")/../lib/lib.sh"
command -v lspci >/dev/null 2>&1 || skip "skip: no lspci (pciutils)"
command -v python3 >/dev/null 2>&1 || skip "skip: no python3"
[ -x "$B/smqctl" ] || skip "skip: no $B/smqctl: build it first (make)"
need_smqctl
tmp=$T
files=0 devices=0

compare() {
	rm -f "$tmp"/probe.json "$tmp"/vv "$tmp"/n "$tmp"/x "$tmp"/t
	if ! "$S" probe -F "$1" --json >"$tmp/probe.json" 2>"$tmp/err"; then
		failed "$1: smqctl probe -F: $(cat "$tmp/err")"
		return
	fi
	# -vvv: lspci shows closed windows too; errors about libkmod on
	# stderr are not ours
	lspci -F "$1" -D -vvv -nn >"$tmp/vv" 2>/dev/null &&
	lspci -F "$1" -D -n >"$tmp/n" 2>/dev/null &&
	lspci -F "$1" -D -x >"$tmp/x" 2>/dev/null &&
	lspci -F "$1" -t >"$tmp/t" 2>/dev/null ||
		{ failed "$1: lspci -F failed"; return; }
	if out=$(python3 tests/cli/lspci_compare.py --quiet "$tmp"); then
		ok "$1: ${out##*over }"
	else
		failed "$1:"
		echo "$out" | sed 's/^/    /'
	fi
	files=$((files + 1))
	n=$(echo "$out" | sed -n 's/^[0-9]* mismatches over \([0-9]*\) device.*/\1/p')
	devices=$((devices + ${n:-0}))
}

# is_dump FILE: its first line names a device as lspci -x does, and lspci
# reads it (our malformed.txt is there to be refused)
is_dump() {
	head -n 1 "$1" | grep -Eq '^([0-9a-f]{4,}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7] ' &&
		lspci -F "$1" >/dev/null 2>&1
}

# each of our dumps is a check
floor=0
for f in tests/data/pci-dumps/*.txt; do
	is_dump "$f" && floor=$((floor + 1))
done
for f in tests/data/pci-dumps/*.txt; do
	is_dump "$f" && compare "$f"
done
own=$files

if [ -n "$SMQ_PCI_DUMPS" ]; then
	[ -d "$SMQ_PCI_DUMPS" ] ||
		die "SMQ_PCI_DUMPS=$SMQ_PCI_DUMPS is not a directory"
	for f in "$SMQ_PCI_DUMPS"/*; do
		[ -f "$f" ] && is_dump "$f" && compare "$f"
	done
	[ "$files" -gt "$own" ] ||
		die "no dump in SMQ_PCI_DUMPS=$SMQ_PCI_DUMPS"
fi

[ "$own" -gt 0 ] || die "no dump of tests/data/pci-dumps/ was compared"
[ -n "$SMQ_PCI_DUMPS" ] ||
	note "SMQ_PCI_DUMPS is not set: only our $own dumps were compared; set SMQ_PCI_DUMPS=DIR (a directory of lspci -x dumps, such as pciutils' tests/) to compare those too"
echo "$files dumps, $devices devices compared"
finish $floor
