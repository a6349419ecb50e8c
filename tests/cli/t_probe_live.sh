#!/bin/sh
# smqctl probe on this machine's live bus, cross-checked field by field with
# lspci by tests/cli/lspci_compare.py: `smqctl probe --json` against `lspci -D
# -vv -nn` (classes, IDs, subsystems, every BAR's address, size and flags,
# bridge buses and windows, the PCI Express capability: LnkCap, LnkSta and
# (downgraded), DevCap MaxPayload, DevCtl MaxPayload and MaxReadReq; NUMA
# node; "Kernel driver in use:"; IOMMU group), `lspci -D -n` (the set of
# devices, vendor:device, class, revision), `lspci -D -x` (the raw header:
# IDs, class, header type, subsystem, every BAR register's type bits, bridge
# bus numbers) and `lspci -t` (the bridge above each device).
# Then the advice rule: a device that is not a candidate (not an NTB or
# ivshmem: the disks, NICs and bridges of this machine) says what it is and
# why not (-v, --ntb, JSON), has no BAR fit for a window, and never gets a
# command (unbind, driver_override, ...); a candidate gets an unbind only
# when a driver other than vfio-pci holds it.
# Prints ok or FAIL per device and field; exit 1 on any mismatch, 77 when
# lspci or /sys/bus/pci is missing.  Without python3 only the devices and
# their IDs are compared.  B is the build directory (default build);
# PROBE_JSON=FILE compares FILE instead of running smqctl (to see that a
# wrong field is caught).
. "$(dirname "$0")/../lib/lib.sh"
command -v lspci >/dev/null 2>&1 || skip "skip: no lspci (pciutils)"
[ -d /sys/bus/pci/devices ] || skip "skip: no /sys/bus/pci on this machine"
[ -n "$PROBE_JSON" ] || [ -x "$B/smqctl" ] ||
	skip "skip: no $B/smqctl: build it first (make)"
[ -n "$(ls /sys/bus/pci/devices)" ] || skip "skip: no PCI device on this machine"
tmp=$T
# every device gets a check at least
devices=$(ls /sys/bus/pci/devices | wc -l)

[ -n "$PROBE_JSON" ] || need_smqctl
if [ -n "$PROBE_JSON" ]; then
	cp "$PROBE_JSON" "$tmp/probe.json" || exit 1
else
	"$S" probe --json >"$tmp/probe.json" ||
		die "smqctl probe --json exited $?"
fi
# lspci complains on stderr about libkmod in containers: not our business
lspci -D -vv -nn >"$tmp/vv" 2>/dev/null || die "lspci -vv failed"
lspci -D -n >"$tmp/n" 2>/dev/null || die "lspci -n failed"
lspci -D -x >"$tmp/x" 2>/dev/null || die "lspci -x failed"
lspci -t >"$tmp/t" 2>/dev/null || die "lspci -t failed"

if ! command -v python3 >/dev/null 2>&1; then
	note "no python3: comparing the devices and their IDs only"
	# "0000:00:01.0 ffff: 1af4:1045 (rev 01)" -> "0000:00:01.0 1af4 1045 ffff"
	sed -n 's/^\([0-9a-f:.]*\) \([0-9a-f]\{4\}\): \([0-9a-f]\{4\}\):\([0-9a-f]\{4\}\).*/\1 \3 \4 \2/p' \
		"$tmp/n" | sort >"$tmp/want"
	awk -F'"' '
		/"slot":/ { s = $4 } /"vendor":/ { v = $4 } /"device":/ { d = $4 }
		/"class":/ { print s, v, d, substr($4, 1, 4) }' "$tmp/probe.json" |
		sort >"$tmp/got"
	if cmp -s "$tmp/want" "$tmp/got"; then
		tally sed 's/^\([^ ]*\) .*/ok   \1 ids/' "$tmp/got"
		finish "$devices"
	fi
	failed "devices and IDs differ (lspci -n, then smqctl):"
	diff "$tmp/want" "$tmp/got" | sed 's/^/    /'
	finish "$devices"
fi

tally python3 tests/cli/lspci_compare.py "$tmp"

# ---- advice: never for a device the system uses ----
# Every device that is not a non-transparent bridge or ivshmem is no
# candidate: with -v it says what it is and why, under --ntb it is listed
# with its reason, and no command (unbind, driver_override, drivers_probe)
# is ever printed for it, in text or JSON.
"$S" probe -v >"$tmp/v" || die "smqctl probe -v exited $?"
"$S" probe --ntb >"$tmp/ntb" 2>"$tmp/ntb.err"
echo $? >"$tmp/ntb.rc"
tally python3 - "$tmp" <<'EOF'
import json, re, sys

tmp = sys.argv[1]
fails = 0
def check(slot, field, ok, say):
    global fails
    if ok:
        print("ok   %s %s" % (slot, field))
    else:
        fails += 1
        print("FAIL %s %s: %s" % (slot, field, say))

devs = json.load(open(tmp + "/probe.json"))["devices"]
blocks = {}
cur = None
for line in open(tmp + "/v"):
    m = re.match(r"^((?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) ", line)
    if m:
        cur = m.group(1)
        blocks[cur] = []
    elif cur:
        blocks[cur].append(line.rstrip("\n"))
ntb = open(tmp + "/ntb").read()
ntb_rc = int(open(tmp + "/ntb.rc").read())
advice = re.compile(r"unbind|driver_override|drivers_probe|modprobe")
domains = any(not d["slot"].startswith("0000:") for d in devs)
candidates = 0

for d in devs:
    slot, u = d["slot"], d["smq"]
    short = slot if domains else slot[5:]
    candidates += u["candidate"]
    check(slot, "candidate iff an NTB or ivshmem",
          u["candidate"] == (d["kind"] == "ntb"),
          "candidate=%s kind=%s" % (u["candidate"], d["kind"]))
    block = blocks.get(short, [])
    if u["candidate"]:
        check(slot, "a candidate names its BAR", u.get("bar", -1) < 0 or
              u.get("spec") == "pci:%s/%d" % (slot, u["bar"]), u)
        held = d["driver"] not in ("", "vfio-pci")
        unbind = any("driver/unbind" in c for c in u["commands"])
        check(slot, "unbind only when a driver holds it",
              unbind == (held and u.get("fits")),
              "%s: %s" % (d["driver"], u["commands"]))
        continue
    check(slot, "no commands (JSON)", u["commands"] == [], u["commands"])
    check(slot, "says what and why not (JSON)", u["what"] and u["why"], u)
    text = [l for l in block if advice.search(l)]
    check(slot, "no commands (-v)", not text, text)
    check(slot, "says why not (-v)", any(
        l.startswith("\tsmq: not a candidate: " + u["why"]) for l in block),
        block)
    check(slot, "no window on its BARs",
          not any(b["window_ok"] for b in d["bars"]), d["bars"])
    listed = re.search(r"^\t%s .*\n\t\t%s$" % (re.escape(short),
                                               re.escape(u["why"])), ntb, re.M)
    check(slot, "listed with its reason (--ntb)", listed, ntb)

if not candidates:
    check("all", "--ntb with no candidate exits 1", ntb_rc == 1, ntb_rc)
    check("all", "no command at all (--ntb)", not advice.search(ntb), ntb)
print("%d mismatches" % fails)
sys.exit(1 if fails else 0)
EOF
# lspci_compare.py checks each device, and so does the advice rule
finish $((2 * devices))
