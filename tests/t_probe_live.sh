#!/bin/sh
# smqctl probe on this machine's live bus, cross-checked field by field with
# lspci: `smqctl probe --json` against `lspci -D -vv -nn` (classes, IDs,
# subsystems, every BAR's address, size and flags, bridge buses and windows,
# the PCI Express capability: LnkCap, LnkSta and (downgraded), DevCap
# MaxPayload, DevCtl MaxPayload and MaxReadReq; NUMA node; "Kernel driver in
# use:"), `lspci -D -n` (the set of devices, vendor:device, class, revision)
# and `lspci -D -x` (the raw header: IDs, class, header type, subsystem,
# every BAR register's type bits, bridge bus numbers).  Prints ok or FAIL per
# device and field; exit 1 on any mismatch, 77 when lspci or /sys/bus/pci is
# missing.  Without python3 only the devices and their IDs are compared.
# B is the build directory (default build); PROBE_JSON=FILE compares FILE
# instead of running smqctl (to see that a wrong field is caught).
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

python3 - "$tmp" <<'EOF'
import json, re, sys

tmp = sys.argv[1]
fails = 0
def check(slot, field, got, want):
    global fails
    if got == want:
        print("ok   %s %s %s" % (slot, field, want))
    else:
        fails += 1
        print("FAIL %s %s: smqctl says %r, lspci %r" % (slot, field, got, want))

probe = json.load(open(tmp + "/probe.json"))
ours = {d["slot"]: d for d in probe["devices"]}

# ---- lspci -n: the devices, IDs, class, revision ----
n = {}
for line in open(tmp + "/n"):
    m = re.match(r"^(\S+) ([0-9a-f]{4}): ([0-9a-f]{4}):([0-9a-f]{4})"
                 r"(?: \(rev ([0-9a-f]{2})\))?(?: \(prog-if ([0-9a-f]{2}))?", line)
    if m:
        n[m.group(1)] = m.groups()
check("all", "devices", sorted(ours), sorted(n))

# ---- lspci -x: the first 64 bytes of config space ----
raw = {}
slot = None
for line in open(tmp + "/x"):
    m = re.match(r"^([0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) ", line)
    if m:
        slot = m.group(1)
        raw[slot] = bytearray(64)
        continue
    m = re.match(r"^([0-9a-f]{2}): ((?:[0-9a-f]{2} ?)+)$", line.rstrip("\n"))
    if m and slot:
        off = int(m.group(1), 16)
        for i, b in enumerate(m.group(2).split()):
            raw[slot][off + i] = int(b, 16)
def u8(c, o): return c[o]
def u16(c, o): return c[o] | c[o + 1] << 8
def u32(c, o): return u16(c, o) | u16(c, o + 2) << 16

# ---- lspci -vv -nn: one block per device ----
SIZE = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
PORT = {"Endpoint": 0, "Legacy Endpoint": 1, "Root Port": 4,
         "Upstream Port": 5, "Downstream Port": 6,
         "PCI-Express to PCI/PCI-X Bridge": 7,
         "PCI/PCI-X to PCI-Express Bridge": 8,
         "Root Complex Integrated Endpoint": 9,
         "Root Complex Event Collector": 10}
def size_of(s):
    m = re.match(r"(\d+)([KMGT]?)$", s)
    return int(m.group(1)) * SIZE[m.group(2)]

vv = {}
cur = None
for line in open(tmp + "/vv"):
    line = line.rstrip("\n")
    m = re.match(r"^([0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) ", line)
    if m:
        cur = {"title": line, "bars": {}, "exp": None}
        vv[m.group(1)] = cur
        continue
    if cur is None:
        continue
    m = re.match(r"^\tSubsystem: .*\[([0-9a-f]{4}):([0-9a-f]{4})\]$", line)
    if m:
        cur["subsys"] = (m.group(1), m.group(2))
    m = re.match(r"^\tRegion (\d): (Memory|I/O ports) at (\S+)"
                 r"(?: \((\S+), (non-)?prefetchable\))?(.*)$", line)
    if m:
        rest = m.group(6)
        sz = re.search(r"\[size=(\w+)\]", rest)
        cur["bars"][int(m.group(1))] = {
            "io": m.group(2) == "I/O ports",
            "address": m.group(3),
            "is64": m.group(4) == "64-bit",
            "prefetchable": m.group(4) is not None and m.group(5) is None,
            "disabled": "[disabled]" in rest,
            "virtual": "[virtual]" in rest,
            "size": size_of(sz.group(1)) if sz else 0}
    m = re.match(r"^\tBus: primary=(\w+), secondary=(\w+), subordinate=(\w+)", line)
    if m:
        cur["bus"] = tuple(int(x, 16) for x in m.groups())
    m = re.match(r"^\t(Memory|Prefetchable memory) behind bridge: (.*)$", line)
    if m:
        r = re.match(r"([0-9a-f]+)-([0-9a-f]+)", m.group(2))
        cur["mem" if m.group(1) == "Memory" else "pref"] = \
            (int(r.group(1), 16), int(r.group(2), 16)) if r else None
    if re.match(r"^\tCapabilities: <access denied>", line):
        cur["denied"] = True
    m = re.match(r"^\tCapabilities: \[[0-9a-f]+\] Express \(v\d\) (.*?)(?: \(Slot[+-]\))?, MSI", line)
    if m:
        t = m.group(1)
        cur["exp"] = {"port_type": PORT.get(t, t)}
    if cur["exp"] is not None:
        e = cur["exp"]
        m = re.match(r"^\t\tDevCap:\tMaxPayload (\d+) bytes", line)
        if m and "mps_supported" not in e:
            e["mps_supported"] = int(m.group(1))
        m = re.match(r"^\t\t\tMaxPayload (\d+) bytes, MaxReadReq (\d+) bytes", line)
        if m and "mps" not in e:
            e["mps"], e["mrrs"] = int(m.group(1)), int(m.group(2))
        m = re.match(r"^\t\tLnkCap:\tPort #\d+, Speed (\S+), Width x(\d+)", line)
        if m and "cap" not in e:
            e["cap"] = (m.group(1), int(m.group(2)))
        m = re.match(r"^\t\tLnkSta:\tSpeed (\S+)(?: \(\w+\))?, Width x(\d+)", line)
        if m and "sta" not in e:
            e["sta"] = (m.group(1), int(m.group(2)))
            e["downgraded"] = "(downgraded)" in line
    m = re.match(r"^\tNUMA node: (-?\d+)", line)
    if m:
        cur["numa"] = int(m.group(1))
    m = re.match(r"^\tKernel driver in use: (\S+)", line)
    if m:
        cur["driver"] = m.group(1)

for slot in sorted(set(ours) & set(n)):
    d = ours[slot]
    _, cls, ven, dev, rev, progif = n[slot]
    check(slot, "vendor", d["vendor"], ven)
    check(slot, "device", d["device"], dev)
    check(slot, "class", d["class"][:4], cls)
    check(slot, "revision", d["revision"], int(rev, 16) if rev else 0)

    c = raw.get(slot)
    if c is None:
        check(slot, "lspci -x", "a header", None)
    else:
        ht = u8(c, 0x0e) & 0x7f
        check(slot, "raw vendor", d["vendor"], "%04x" % u16(c, 0))
        check(slot, "raw device", d["device"], "%04x" % u16(c, 2))
        check(slot, "raw class", d["class"], "%06x" % (u32(c, 8) >> 8))
        check(slot, "raw header_type", d["header_type"], ht)
        if ht == 0:
            check(slot, "raw subsystem", (d["subvendor"], d["subdevice"]),
                  ("%04x" % u16(c, 0x2c), "%04x" % u16(c, 0x2e)))
        if ht in (1, 2):
            check(slot, "raw bus numbers",
                  (d["bridge"]["primary"], d["bridge"]["secondary"],
                   d["bridge"]["subordinate"]),
                  (c[0x18], c[0x19], c[0x1a]))
        for b in d["bars"]:
            reg = u32(c, 0x10 + 4 * b["index"])
            if b["virtual"] or not reg:
                continue
            f = "raw BAR%d " % b["index"]
            check(slot, f + "io", b["io"], bool(reg & 1))
            if not reg & 1:
                check(slot, f + "is64", b["is64"], (reg >> 1) & 3 == 2)
                check(slot, f + "prefetchable", b["prefetchable"], bool(reg & 8))

    v = vv.get(slot)
    if v is None:
        check(slot, "lspci -vv", "a block", None)
        continue
    m = re.search(r"\[([0-9a-f]{4})\]: ", v["title"])
    check(slot, "class (-nn)", d["class"][:4], m.group(1) if m else None)
    m = re.search(r" \[([0-9a-f]{4}):([0-9a-f]{4})\](?: \(rev|$| \(prog)", v["title"])
    if m or "..." not in v["title"]:   # lspci cuts long names, IDs too
        check(slot, "ids (-nn)", (d["vendor"], d["device"]), m.groups() if m else None)
    if "subsys" in v:
        check(slot, "subsystem", (d["subvendor"], d["subdevice"]), v["subsys"])

    bars = {b["index"]: b for b in d["bars"]}
    check(slot, "BARs", sorted(bars), sorted(v["bars"]))
    for i in sorted(set(bars) & set(v["bars"])):
        b, w = bars[i], v["bars"][i]
        f = "BAR%d " % i
        if re.match(r"^[0-9a-f]+$", w["address"]):
            check(slot, f + "address", "%x" % b["address"], w["address"])
        elif w["address"] == "<unassigned>":
            check(slot, f + "address", b["address"], 0)
        check(slot, f + "size", b["size"], w["size"])
        check(slot, f + "io", b["io"], w["io"])
        if not w["io"]:
            check(slot, f + "is64", b["is64"], w["is64"])
            check(slot, f + "prefetchable", b["prefetchable"], w["prefetchable"])
        check(slot, f + "disabled", b["disabled"], w["disabled"])
        check(slot, f + "virtual", b["virtual"], w["virtual"])

    br = d.get("bridge")
    if "bus" in v:
        check(slot, "bus numbers", (br["primary"], br["secondary"],
               br["subordinate"]) if br else None, v["bus"])
    for key, name in (("mem", "memory"), ("pref", "prefetchable")):
        if key not in v:
            continue
        w = br[name] if br else None
        got = (w["base"], w["limit"]) if w and w["open"] else None
        check(slot, name + " window", got, v[key])

    e, p = v["exp"], d.get("pcie")
    if v.get("denied"):
        check(slot, "config_limited", d["config_limited"], True)
    check(slot, "PCIe capability", p is not None, e is not None)
    if e is not None and p is not None:
        check(slot, "port type", p["port_type"], e["port_type"])
        if "mps_supported" in e:
            check(slot, "DevCap MaxPayload", p["mps_supported"], e["mps_supported"])
        if "mps" in e:
            check(slot, "DevCtl MaxPayload", p["mps"], e["mps"])
            check(slot, "DevCtl MaxReadReq", p["mrrs"], e["mrrs"])
        check(slot, "has link", p["has_link"], "cap" in e)
        if "cap" in e and p["has_link"]:
            check(slot, "LnkCap", (p["cap_speed_name"], p["cap_width"]), e["cap"])
        if "sta" in e and p["has_link"]:
            check(slot, "LnkSta", (p["sta_speed_name"], p["sta_width"]), e["sta"])
            check(slot, "downgraded", p["downgraded"], e["downgraded"])
    check(slot, "NUMA node", d["numa_node"], v.get("numa", -1))
    check(slot, "driver", d["driver"], v.get("driver", ""))

print("%d mismatches over %d devices" % (fails, len(ours)))
sys.exit(1 if fails else 0)
EOF
