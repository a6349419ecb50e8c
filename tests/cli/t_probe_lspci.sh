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
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
command -v lspci >/dev/null 2>&1 || { echo "skip: no lspci (pciutils)"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "skip: no python3"; exit 77; }
[ -x "$B/smqctl" ] || { echo "skip: no $B/smqctl: build it first (make)"; exit 77; }
export LC_ALL=C

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
fails=0 files=0 devices=0

# compare FILE: one dump, smqctl against lspci; says ok or what differs.
compare() {
	rm -f "$tmp"/probe.json "$tmp"/vv "$tmp"/n "$tmp"/x "$tmp"/t
	if ! "$B/smqctl" probe -F "$1" --json >"$tmp/probe.json" 2>"$tmp/err"; then
		echo "FAIL $1: smqctl probe -F: $(cat "$tmp/err")"
		fails=$((fails + 1))
		return
	fi
	# -vvv: lspci shows closed windows too; errors about libkmod on
	# stderr are not ours
	lspci -F "$1" -D -vvv -nn >"$tmp/vv" 2>/dev/null &&
	lspci -F "$1" -D -n >"$tmp/n" 2>/dev/null &&
	lspci -F "$1" -D -x >"$tmp/x" 2>/dev/null &&
	lspci -F "$1" -t >"$tmp/t" 2>/dev/null ||
		{ echo "FAIL $1: lspci -F failed"; fails=$((fails + 1)); return; }
	if out=$(python3 tests/cli/lspci_compare.py --quiet "$tmp"); then
		echo "ok   $1: ${out##*over }"
	else
		echo "FAIL $1:"
		echo "$out" | sed 's/^/    /'
		fails=$((fails + 1))
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

for f in tests/data/pci-dumps/*.txt; do
	is_dump "$f" && compare "$f"
done
own=$files

if [ -n "$SMQ_PCI_DUMPS" ]; then
	[ -d "$SMQ_PCI_DUMPS" ] ||
		{ echo "FAIL: SMQ_PCI_DUMPS=$SMQ_PCI_DUMPS is not a directory"; exit 1; }
	for f in "$SMQ_PCI_DUMPS"/*; do
		[ -f "$f" ] && is_dump "$f" && compare "$f"
	done
	[ "$files" -gt "$own" ] ||
		{ echo "FAIL: no dump in SMQ_PCI_DUMPS=$SMQ_PCI_DUMPS"; exit 1; }
fi

[ "$own" -gt 0 ] || { echo "FAIL: no dump of tests/data/pci-dumps/ was compared"; exit 1; }
[ -n "$SMQ_PCI_DUMPS" ] ||
	echo "note: SMQ_PCI_DUMPS is not set: only our $own dumps were compared; set SMQ_PCI_DUMPS=DIR (a directory of lspci -x dumps, such as pciutils' tests/) to compare those too"
echo "$files dumps, $devices devices compared, $fails differ"
[ "$fails" -eq 0 ]
