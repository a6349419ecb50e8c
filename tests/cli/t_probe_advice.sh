#!/bin/sh
# smqctl probe's words on our recorded dumps (tests/data/pci-dumps/):
#  - a CardBus bridge shows its own windows (memory 0 and 1, prefetchable or
#    not; I/O 0 and 1), open or closed, in the list, the tree and JSON;
#  - a candidate (ivshmem here) says what each BAR holds, whether it has
#    MSI-X (doorbell) or not (plain), that its driver is unknown from a
#    dump, and the commands that make it usable;
#  - a device that is no candidate (a disk, a NIC, bridges) says what it is
#    and why not (-v, --ntb, JSON), and never gets a command.
# Exit 1 on any mismatch.  B is the build directory (default build).
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
D=tests/data/pci-dumps
tmp=$T

has() {
	f=$1
	shift
	for want in "$@"; do
		line=$(printf '%b' "$want")
		if grep -Fxq -- "$line" "$f"; then
			ok "$f: $want"
		else
			failed "$f: no line '$want'; got:"
			sed 's/^/    /' "$f"
		fi
	done
}
# lacks FILE REGEX: no line of FILE matches
lacks() {
	if grep -Eq -- "$2" "$1"; then
		failed "$1: a line matches '$2':"
		grep -E -- "$2" "$1" | sed 's/^/    /'
	else
		ok "$1: nothing matches '$2'"
	fi
}
# block FILE SLOT: the lines of one device in FILE (-v output)
block() {
	awk -v s="$2" '/^[0-9a-f]/ { on = index($0, s " ") == 1 } on' "$1"
}
commands='unbind|driver_override|drivers_probe|modprobe'

# ---- CardBus ----
"$S" probe -F $D/cardbus.txt -s 02:06 >"$tmp/cb" || failed "probe -F cardbus.txt"
has "$tmp/cb" \
	'\tMemory window 0: e4000000-e7ffffff [size=64M] (prefetchable)' \
	'\tMemory window 1: e2400000-e27fffff [size=4M]' \
	'\tI/O window 0: 00004000-000040ff [size=256] [32-bit]' \
	'\tI/O window 1: 00004800-000048ff [size=256]'
[ "$(grep -c 'window [01]: \[closed\]' "$tmp/cb")" -eq 4 ] &&
	ok "02:06.1: its four windows closed" || failed "02:06.1: not four closed windows"
lacks "$tmp/cb" 'behind bridge'
"$S" probe -F $D/cardbus.txt -t >"$tmp/cbt" || failed "probe -F cardbus.txt -t"
grep -q '06.0 .* \[bus 03-06\] mem0 e4000000-e7ffffff (64M, pref) mem1 e2400000-e27fffff (4M) ' \
	"$tmp/cbt" && ok "tree: the CardBus windows" ||
	{ failed "tree: no CardBus windows:"; cat "$tmp/cbt"; }
"$S" probe -F $D/cardbus.txt -s 02:06.0 --json >"$tmp/cb.json" || failed "--json"
if command -v python3 >/dev/null 2>&1; then
	tally python3 - "$tmp/cb.json" <<'EOF' && ok "JSON: the CardBus windows"
import json, sys
b = json.load(open(sys.argv[1]))["devices"][0]["bridge"]
want = ([(0xe4000000, 0xe7ffffff, True, True), (0xe2400000, 0xe27fffff, True, False)],
        [(0x4000, 0x40ff, True, True), (0x4800, 0x48ff, True, False)])
got = ([(w["base"], w["limit"], w["open"], w["prefetchable"]) for w in b["cardbus_memory"]],
       [(w["base"], w["limit"], w["open"], w["io32"]) for w in b["cardbus_io"]])
if got != want or "memory" in b or "prefetchable" in b:
    print("FAIL JSON: %r, expected %r (and no memory/prefetchable)" % (got, want))
    sys.exit(1)
EOF
fi

# ---- candidates: ivshmem-doorbell, ivshmem-plain ----
"$S" probe -F $D/ivshmem.txt -s 00:04.0 >"$tmp/bell" || failed "probe -s 00:04.0"
has "$tmp/bell" \
	'\tsmq: ivshmem-doorbell: BAR0 registers (IVPosition at +8, Doorbell at +12), BAR1 MSI-X table and PBA, BAR2 shared memory; MSI-X: doorbells through vfio-pci' \
	'\tsmq: driver unknown (from a dump); smq would map pci:0000:00:04.0/2 when no driver holds it (receivers poll), or with doorbells once it is bound to vfio-pci' \
	'\t\tmodprobe vfio-pci' \
	'\t\techo vfio-pci > /sys/bus/pci/devices/0000:00:04.0/driver_override' \
	'\t\techo 0000:00:04.0 > /sys/bus/pci/devices/0000:00:04.0/driver/unbind' \
	'\t\techo 0000:00:04.0 > /sys/bus/pci/drivers_probe' \
	'\tsmq: vfio-pci needs the device in an IOMMU group (/sys/bus/pci/devices/0000:00:04.0/iommu_group)'
"$S" probe -F $D/ivshmem.txt -s 00:03.0 >"$tmp/plain" || failed "probe -s 00:03.0"
has "$tmp/plain" \
	'\tsmq: ivshmem-plain: BAR0 registers (IVPosition at +8, Doorbell at +12), BAR2 shared memory; no MSI-X: no doorbell, receivers poll' \
	'\tsmq: driver unknown (from a dump); smq would map pci:0000:00:03.0/2 when no driver holds it (receivers poll)' \
	'\t\techo 0000:00:03.0 > /sys/bus/pci/devices/0000:00:03.0/driver/unbind'
lacks "$tmp/plain" 'vfio|modprobe|driver_override'

# ---- not candidates: a host bridge, a disk, a NIC ----
"$S" probe -F $D/ivshmem.txt -v >"$tmp/v" || failed "probe -v"
for s in 00:00.0 00:05.0 00:06.0; do
	block "$tmp/v" $s >"$tmp/v.$s"
	lacks "$tmp/v.$s" "$commands"
	lacks "$tmp/v.$s" 'window: (yes|usable)'
done
has "$tmp/v.00:05.0" "\tsmq: not a candidate: a storage controller's BARs are its registers, and the system's disks may hang on it"
has "$tmp/v.00:06.0" "\tsmq: not a candidate: a network controller's BARs are its registers, and the system may be using it"
has "$tmp/v.00:00.0" "\tsmq: not a candidate: a host bridge joins the processors to the bus and holds no shared memory"
"$S" probe -F $D/ivshmem.txt >"$tmp/plain-list" || failed "probe"
lacks "$tmp/plain-list" 'not a candidate'

"$S" probe -F $D/ivshmem.txt --ntb >"$tmp/ntb"; rc=$?
[ $rc -eq 0 ] && ok "--ntb with candidates: exit 0" || failed "--ntb: exit $rc"
has "$tmp/ntb" \
	'Not candidates (smq uses non-transparent bridges, ivshmem and CXL memory):' \
	"\t\ta storage controller's BARs are its registers, and the system's disks may hang on it" \
	"\t\ta network controller's BARs are its registers, and the system may be using it"
sed -n '/^Not candidates/,$p' "$tmp/ntb" >"$tmp/ntb.not"
lacks "$tmp/ntb.not" "$commands"
grep -q '^	00:05.0 Non-Volatile memory controller \[0108\]: ' "$tmp/ntb.not" &&
	ok "--ntb: the disk is listed by class" || failed "--ntb: no 00:05.0 line"
[ "$(grep -c '^00:0[34].0 ' "$tmp/ntb")" -eq 2 ] &&
	ok "--ntb: both ivshmem shown" || failed "--ntb: not both ivshmem"

"$S" probe -F $D/ivshmem.txt --ntb --json >"$tmp/ntb.json" || failed "--ntb --json"
"$S" probe -F $D/ivshmem.txt --json >"$tmp/all.json" || failed "--json"
if command -v python3 >/dev/null 2>&1; then
	tally python3 - "$tmp/ntb.json" "$tmp/all.json" <<'EOF' && ok "JSON: candidates and not"
import json, sys
ntb, full = (json.load(open(f)) for f in sys.argv[1:3])
fails = []
if [d["slot"] for d in ntb["devices"]] != ["0000:00:03.0", "0000:00:04.0"]:
    fails.append("--ntb devices %r" % [d["slot"] for d in ntb["devices"]])
nc = {d["slot"]: d["what"] for d in ntb["not_candidates"]}
if nc != {"0000:00:00.0": "host bridge", "0000:00:05.0": "storage controller",
          "0000:00:06.0": "network controller"}:
    fails.append("not_candidates %r" % nc)
for d in full["devices"]:
    u = d["smq"]
    if not u["candidate"] and (u["commands"] or not u["why"]):
        fails.append("%s: %r" % (d["slot"], u))
    if u["candidate"] and (u["access"] != "unknown" or not u["commands"]):
        fails.append("%s: %r" % (d["slot"], u))
roles = [b["role"] for b in full["devices"][2]["bars"]]
if roles != ["registers (IVPosition at +8, Doorbell at +12)",
             "MSI-X table and PBA", "shared memory"]:
    fails.append("roles %r" % roles)
for f in fails:
    print("FAIL JSON:", f)
sys.exit(1 if fails else 0)
EOF
fi

# --ntb where nothing is a candidate: the others and why, then exit 1
"$S" probe -F $D/cardbus.txt --ntb >"$tmp/none" 2>"$tmp/none.err"; rc=$?
[ $rc -eq 1 ] && ok "--ntb without candidates: exit 1" || failed "--ntb without candidates: exit $rc"
has "$tmp/none.err" 'smqctl: no PCI device matches --ntb: no non-transparent bridge among the 5 devices scanned'
[ "$(grep -c '^	[0-9a-f][0-9a-f]:' "$tmp/none")" -eq 5 ] &&
	ok "--ntb without candidates: the 5 listed" || { failed "--ntb: not 5 listed"; cat "$tmp/none"; }
lacks "$tmp/none" "$commands"
# CXL memory (a QEMU cxl-type3 behind a cxl-rp): a candidate of --ntb,
# with the commands that make a device-DAX device of it on every host
"$S" probe -F $D/cxl-qemu.txt --ntb >"$tmp/cxl" 2>&1 || failed "probe --ntb of cxl-qemu.txt exit $?"
has "$tmp/cxl" '0d:00.0 CXL [0502]: Intel Corporation Device 0d93 [8086:0d93] (rev 01)' \
	'\tCXL device: CXLCap: Cache- IO+ Mem+ Mem HW Init+ HDMCount 1; CXLCtl: Cache- IO+ Mem+' \
	'\tsmq: CXL memory: a window on it is dax:/dev/daxN.0, a device-DAX device made of it on every host that shares it, the same way on each: one device, no interleave (-w 1); --map=mem (--map=dev would put each host'"'"'s page structures into the shared memory); the same alignment everywhere (-a 2M):' \
	'\t\tcxl create-region -m -t pmem -d DECODER -w 1 -g 256 MEMDEV' \
	'\t\tndctl create-namespace -m devdax --map=mem -a 2M'
lacks "$tmp/cxl" '0d:00.0 .*Region 0: .*window: yes'
# with a sysfs tree of that machine (Linux 6.1's CXL bus: mem0 under the
# PCI device, root decoders with cap_pmem), the commands name what Linux
# named; with two root decoders of persistent memory, the decoder stays
# for the operator to pick, and the note says why
X=$(dirname "$0")/../data/cxl-sysfs
"$S" probe -F $D/cxl-qemu.txt --sysfs "$X/one" --ntb >"$tmp/cxl1" 2>&1 ||
	failed "probe --sysfs one exit $?"
has "$tmp/cxl1" '\t\tcxl create-region -m -t pmem -d decoder0.0 -w 1 -g 256 mem0' \
	'\tsmq: (mem0 is this device on Linux'"'"'s CXL bus, decoder0.0 the root decoder of persistent memory; -t ram for volatile capacity, then daxctl makes the device; the hosts must be coherent with the memory: smq writes no cache back)'
"$S" probe -F $D/cxl-qemu.txt --sysfs "$X/two" --ntb >"$tmp/cxl2" 2>&1 ||
	failed "probe --sysfs two exit $?"
has "$tmp/cxl2" '\t\tcxl create-region -m -t pmem -d DECODER -w 1 -g 256 mem0'
grep -q '2 root decoders map persistent memory: DECODER is the one whose targets reach this device' "$tmp/cxl2" &&
	ok "two root decoders: DECODER left, the note says why" ||
	failed "two root decoders: no note: $(grep 'smq: (' "$tmp/cxl2")"
"$S" --json probe -F $D/cxl-qemu.txt --sysfs "$X/one" --ntb >"$tmp/cxl1.json" 2>&1 ||
	failed "probe --json --sysfs one exit $?"
tr -d ' \n' <"$tmp/cxl1.json" | grep -q '"memdev":"mem0","root_decoder":"decoder0.0","root_decoders":1' &&
	ok "probe --json: memdev mem0, root_decoder decoder0.0" ||
	failed "probe --json: no memdev/root_decoder: $(grep -A3 memdev "$tmp/cxl1.json")"
# 50, and the 2 JSON checks where there is python3
json_checks=0
command -v python3 >/dev/null 2>&1 && json_checks=2
finish $((50 + json_checks))
