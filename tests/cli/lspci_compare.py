#!/usr/bin/env python3
# Compares `smqctl probe --json` with what lspci says of the same devices,
# field by field.  Used by t_probe_live.sh (the live bus) and t_probe_lspci.sh
# (recorded dumps, lspci -F).  DIR holds:
#   probe.json  smqctl probe --json [-F FILE]
#   vv          lspci -D -vv -nn (or -vvv: closed windows are shown too)
#   n           lspci -D -n
#   x           lspci -D -x
#   t           lspci -D -t (optional: the tree)
# Prints "ok"/"FAIL" per device and field (only the FAILs with --quiet) and
# a count; exits 1 on any mismatch.
import json, re, sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
quiet = "--quiet" in sys.argv
tmp = args[0]
fails = 0


def check(slot, field, got, want):
    global fails
    if got == want:
        if not quiet:
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

# ---- lspci -x: config space as far as it goes (64 bytes, 128 on CardBus) ----
raw = {}
slot = None
for line in open(tmp + "/x"):
    m = re.match(r"^([0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) ", line)
    if m:
        slot = m.group(1)
        raw[slot] = bytearray(64)
        continue
    m = re.match(r"^([0-9a-f]{2,3}): ((?:[0-9a-f]{2} ?)+)$", line.rstrip("\n"))
    if m and slot:
        off = int(m.group(1), 16)
        for i, b in enumerate(m.group(2).split()):
            if off + i >= len(raw[slot]):
                raw[slot].extend(bytearray(off + i + 1 - len(raw[slot])))
            raw[slot][off + i] = int(b, 16)


def u8(c, o): return c[o]
def u16(c, o): return c[o] | c[o + 1] << 8
def u32(c, o): return u16(c, o) | u16(c, o + 2) << 16


def upper_half(c, i):
    """BAR register i is the upper half of a 64-bit memory BAR i-1."""
    if c is None or i == 0:
        return False
    lo = u32(c, 0x10 + 4 * (i - 1))
    return not lo & 1 and (lo >> 1) & 3 == 2


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


def parse_region(cur, line):
    m = re.match(r"^\tRegion (\d): (Memory|I/O ports) at (\S+)"
                 r"(?: \((\S+), (non-)?prefetchable\))?(.*)$", line)
    if not m:
        return
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


def parse_windows(cur, line):
    m = re.match(r"^\t(Memory|Prefetchable memory) behind bridge: (.*)$", line)
    if m:
        # -vvv shows a closed window's registers too, marked [disabled]
        r = re.match(r"([0-9a-f]+)-([0-9a-f]+)", m.group(2))
        closed = not r or "[disabled]" in m.group(2)
        cur["mem" if m.group(1) == "Memory" else "pref"] = \
            None if closed else (int(r.group(1), 16), int(r.group(2), 16))
    # a CardBus bridge's: "Memory window 0: c0000000-c3ffffff (prefetchable)"
    m = re.match(r"^\t(Memory|I/O) window (\d): ([0-9a-f]+)-([0-9a-f]+)(.*)$", line)
    if m:
        w = {"base": int(m.group(3), 16), "limit": int(m.group(4), 16),
             "disabled": "[disabled]" in m.group(5)}
        if m.group(1) == "Memory":
            w["prefetchable"] = "(prefetchable)" in m.group(5)
        cur["cb_mem" if m.group(1) == "Memory" else "cb_io"][int(m.group(2))] = w


def parse_express(cur, line):
    m = re.match(r"^\tCapabilities: \[[0-9a-f]+\] Express \(v\d\) (.*?)(?: \(Slot[+-]\))?, MSI", line)
    if m:
        t = m.group(1)
        cur["exp"] = {"port_type": PORT.get(t, t)}
    e = cur["exp"]
    if e is None:
        return
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


# The CXL DVSECs (vendor 1e98) as lspci -vv decodes them: a device's
# CXLCap and CXLCtl, a Flex Bus port's FBCap and FBSta; the flags as
# True/False in the order lspci prints them.
def flags(text, names):
    got = []
    for n in names:
        m = re.search(re.escape(n) + r"([+-])", text)
        got.append(m.group(1) == "+" if m else None)
    return got


def parse_cxl(cur, line):
    m = re.match(r"^\tCapabilities: \[[0-9a-f]+ v\d\] Designated Vendor-Specific: "
                 r"Vendor=1e98 ID=([0-9a-f]{4})", line)
    if m:
        cur.setdefault("cxl", set()).add(int(m.group(1), 16))
    m = re.match(r"^\t\tCXLCap:\t(.*)$", line)
    if m:
        cur["cxlcap"] = flags(m.group(1), ["Cache", "IO", "Mem", "Mem HW Init"])
        h = re.search(r"HDMCount (\d+)", m.group(1))
        cur["hdm"] = int(h.group(1)) if h else None
    m = re.match(r"^\t\tCXLCtl:\t(.*)$", line)
    if m:
        cur["cxlctl"] = flags(m.group(1), ["Cache", "IO", "Mem"])
    for reg in ("FBCap", "FBSta"):
        m = re.match(r"^\t\t" + reg + r":\t(.*)$", line)
        if m:
            cur[reg] = flags(m.group(1), ["Cache", "IO", "Mem", "68BFlit", "MltLogDev"])


vv = {}
cur = None
for line in open(tmp + "/vv"):
    line = line.rstrip("\n")
    m = re.match(r"^([0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) ", line)
    if m:
        cur = {"title": line, "bars": {}, "exp": None, "cb_mem": {}, "cb_io": {}}
        vv[m.group(1)] = cur
        continue
    if cur is None:
        continue
    m = re.match(r"^\tSubsystem: .*\[([0-9a-f]{4}):([0-9a-f]{4})\]$", line)
    if m:
        cur["subsys"] = (m.group(1), m.group(2))
    parse_region(cur, line)
    m = re.match(r"^\tBus: primary=(\w+), secondary=(\w+), subordinate=(\w+)", line)
    if m:
        cur["bus"] = tuple(int(x, 16) for x in m.groups())
    parse_windows(cur, line)
    if re.match(r"^\tCapabilities: <access denied>", line):
        cur["denied"] = True
    parse_express(cur, line)
    parse_cxl(cur, line)
    m = re.match(r"^\tNUMA node: (-?\d+)", line)
    if m:
        cur["numa"] = int(m.group(1))
    m = re.match(r"^\tKernel driver in use: (\S+)", line)
    if m:
        cur["driver"] = m.group(1)
    m = re.match(r"^\tIOMMU group: (\S+)", line)
    if m:
        cur["iommu_group"] = m.group(1)


# ---- lspci -t: each device's bridge ----
def tree_parents(lines):
    """{slot: parent slot or None} from lspci -t's drawing: a device hangs
    from the bus label its connector leads back to; a label follows its
    bridge on the same line, or names a root bus ([dddd:bb])."""
    grid = [l.rstrip("\n") for l in lines]
    at = lambda r, c: grid[r][c] if 0 <= r < len(grid) and 0 <= c < len(grid[r]) else " "
    memo = {}

    def label_left_of(r, c):
        """The bus label whose ']' ends at or left of column c on row r."""
        while at(r, c) == "-":
            c -= 1
        if at(r, c) in "+\\":
            k = c
            while at(r, k - 1) != "-":   # up the vertical line to its start
                r -= 1
            c = k - 1
            while at(r, c) == "-":
                c -= 1
        if at(r, c) != "]":
            raise ValueError("tree: no bus label at line %d col %d" % (r + 1, c + 1))
        start = grid[r].rindex("[", 0, c)
        return r, start, grid[r][start + 1:c]

    def slot_of(r, c):
        """The full slot of the device token starting at (r, c)."""
        if (r, c) in memo:
            return memo[(r, c)]
        lr, lc, label = label_left_of(r, c - 1)
        dev = grid[r][c:c + 4]
        if ":" in label:              # a root bus: dddd:bb
            dom, bus = label.split(":")
            res = ("%s:%s:%s" % (dom, bus, dev), None)
        else:                         # [bb] or [bb-cc], after its bridge
            bc = lc - 1
            while at(lr, bc) == "-":
                bc -= 1
            bridge = slot_of(lr, bc - 3)[0]
            res = ("%s:%s:%s" % (bridge[:4], label[:2], dev), bridge)
        memo[(r, c)] = res
        return res

    out = {}
    for r, l in enumerate(grid):
        for m in re.finditer(r"(?<=-)[0-9a-f]{2}\.[0-7]", l):
            s, p = slot_of(r, m.start())
            out[s] = p
    return out


try:
    tree = tree_parents(open(tmp + "/t"))
except FileNotFoundError:
    tree = None

if tree is not None:
    check("all", "devices in the tree", sorted(ours), sorted(tree))


def compare_raw(slot, d, c):
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


def compare_bars(slot, d, v, c):
    bars = {b["index"]: b for b in d["bars"]}
    # lspci reads a dump's upper half of a 64-bit BAR as a BAR of its own
    # ("Memory at <unassigned> (32-bit, ...)"): libpci's dump method gives
    # it no I/O flags to skip it by.  It is no BAR.
    want = {i: w for i, w in v["bars"].items()
            if not (w["address"] == "<unassigned>" and upper_half(c, i))}
    check(slot, "BARs", sorted(bars), sorted(want))
    for i in sorted(set(bars) & set(want)):
        b, w = bars[i], want[i]
        f = "BAR%d " % i
        if re.match(r"^[0-9a-f]+$", w["address"]):
            check(slot, f + "address", b["address"], int(w["address"], 16))
        elif w["address"] == "<unassigned>":
            check(slot, f + "address", b["address"], 0)
        check(slot, f + "size", b["size"], w["size"])
        check(slot, f + "io", b["io"], w["io"])
        if not w["io"]:
            check(slot, f + "is64", b["is64"], w["is64"])
            check(slot, f + "prefetchable", b["prefetchable"], w["prefetchable"])
        check(slot, f + "disabled", b["disabled"], w["disabled"])
        check(slot, f + "virtual", b["virtual"], w["virtual"])


def compare_bridge(slot, d, v):
    br = d.get("bridge")
    if "bus" in v:
        check(slot, "bus numbers", (br["primary"], br["secondary"],
              br["subordinate"]) if br else None, v["bus"])
    for key, name in (("mem", "memory"), ("pref", "prefetchable")):
        if key not in v:
            continue
        w = br.get(name) if br else None
        got = (w["base"], w["limit"]) if w and w["open"] else None
        check(slot, name + " window", got, v[key])
    if d["header_type"] != 2:
        return
    # lspci -vv shows a CardBus window only when open; -vvv shows all
    for key, name in (("cb_mem", "cardbus_memory"), ("cb_io", "cardbus_io")):
        for i, w in enumerate(br.get(name, [None, None]) if br else [None, None]):
            want = v[key].get(i)
            f = "%s window %d" % ("memory" if key == "cb_mem" else "I/O", i)
            if want is None:
                check(slot, f + " open", w["open"] if w else None, False)
                continue
            if w is None:
                check(slot, f, None, want)
                continue
            check(slot, f + " open", w["open"], want["base"] <= want["limit"])
            check(slot, f + " range", (w["base"], w["limit"]),
                  (want["base"], want["limit"]))
            check(slot, f + " disabled", w["disabled"], want["disabled"])
            if "prefetchable" in want:
                check(slot, f + " prefetchable", w["prefetchable"],
                      want["prefetchable"])


def compare_express(slot, d, v):
    e, p = v["exp"], d.get("pcie")
    if v.get("denied"):
        check(slot, "config_limited", d["config_limited"], True)
    check(slot, "PCIe capability", p is not None, e is not None)
    if e is None or p is None:
        return
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


def compare_cxl(slot, d, v):
    ids, x = v.get("cxl", set()), d.get("cxl")
    check(slot, "CXL DVSEC", x is not None, bool(ids))
    if not ids or x is None:
        return
    check(slot, "CXL device DVSEC", x["device"], 0 in ids)
    check(slot, "CXL port DVSEC", x["port"], 3 in ids)
    check(slot, "CXL Flex Bus DVSEC", x["flexbus"], 7 in ids)
    if "cxlcap" in v and x["device"]:
        check(slot, "CXLCap", [x["cap_cache"], x["cap_io"], x["cap_mem"],
                               x["mem_hwinit"]], v["cxlcap"])
        check(slot, "CXLCap HDMCount", x["hdm_count"], v["hdm"])
    if "cxlctl" in v and x["device"]:
        check(slot, "CXLCtl", [x["ctl_cache"], x["ctl_io"], x["ctl_mem"]], v["cxlctl"])
    for reg, key in (("FBCap", "fb_cap"), ("FBSta", "fb_sta")):
        if reg in v and x["flexbus"]:
            check(slot, reg, [x[key + "_cache"], x[key + "_io"], x[key + "_mem"],
                              x[key + "_68b_flit"], x[key + "_mld"]], v[reg])


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
        compare_raw(slot, d, c)

    if tree is not None and slot in tree:
        check(slot, "bridge above (tree)", d.get("parent"), tree[slot])

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
    compare_bars(slot, d, v, c)
    compare_bridge(slot, d, v)
    compare_express(slot, d, v)
    compare_cxl(slot, d, v)
    check(slot, "NUMA node", d["numa_node"], v.get("numa", -1))
    check(slot, "driver", d["driver"], v.get("driver", ""))
    check(slot, "IOMMU group", d.get("iommu_group"), v.get("iommu_group", ""))

print("%d mismatches over %d device%s" % (fails, len(ours),
                                         "" if len(ours) == 1 else "s"))
sys.exit(1 if fails else 0)
