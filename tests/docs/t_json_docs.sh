#!/bin/sh
# Every key that `smqctl dump --json` (with and without -v, on a sound
# window and on windows with a faulty entry), `smqctl top --once --json`
# and `smqctl check --json` (every check, on a recorded PCI path, and the
# figures between two boards) print is described in its command's page
# (smqctl-dump(1), smqctl-top(1), smqctl-check(1): the json-keys blocks under
# JSON OUTPUT, which tests/lib/json_keys.py reads beside man/smqctl.1),
# and every key described there is printed, as tests/cli/t_measure.sh checks
# for pingpong and bench.  Exit 0 pass, 1 fail, 77 skip (no python3).
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
command -v python3 >/dev/null 2>&1 && python3 -c '' 2>/dev/null ||
	skip "no python3: the JSON keys are not checked"
man=${JSON_DOCS_MAN:-man/smqctl.1}
unset SMQ_DEBUG 2>/dev/null
W=$T/w
smq() { "$S" -w "file:$W" "$@"; }

smq init --boards 2 --queues 2 --entries 8 --entry-size 256 --group both=0,1 >/dev/null || die "init"
smq send --queue 1 "json-docs-marker-0123456789" || die "send"
smq send --queue 0 "another" || die "send"
smq --json dump >"$T/dump.json" || die "dump --json exits $?"
smq --json -v dump >"$T/dump-v.json" || die "dump -v --json exits $?"
smq --json top --once --interval 0.1 >"$T/top.json" || die "top --once --json exits $?"
# every check: the boards never synchronised (a FAIL and what to do next),
# the PCI path recorded, the figures between the two boards
smq --json check -T 10s --device 0000:01:00.0 -F tests/data/pci-dumps/check-good.txt \
	--sysfs tests/data/check/sysfs-good --watch 0 >"$T/verdict.json"
[ $? = 1 ] || die "check --json of a window whose boards never announced does not exit 1"

# The same window with the waiting message's entry made faulty: its size
# beyond the entry size (a bound: at_most), its reserved check word not 0
# (a value: expected).  Open succeeds; the validation after it reports
# these.  The entry's header is the 16 bytes before the payload: size
# (u32), check (u32), signature (smq(7)).
off=$(python3 -c 'import sys
d=open(sys.argv[1],"rb").read()
print(d.index(b"json-docs-marker-0123456789") - 16)' "$W") || die "marker not found"
corrupt() { # corrupt NAME OFFSET PACK-FORMAT VALUE
	cp "$W" "$T/$1"
	python3 -c 'import struct,sys
f=open(sys.argv[1],"r+b"); f.seek(int(sys.argv[2])); f.write(struct.pack(sys.argv[3],int(sys.argv[4])))' \
		"$T/$1" "$2" "$3" "$4" || die "cannot corrupt $1"
	"$S" -w "file:$T/$1" --json dump >"$T/$1.json" 2>"$T/$1.err"
	rc=$?
	[ $rc = 1 ] || die "dump --json of a window with a faulty entry ($1) exits $rc, not 1"
}
corrupt size "$off" '<I' 99999
corrupt check "$((off + 4))" '<I' 1
# Faults of the superblock and the queue table (smq(7)): an unknown
# incompatible feature (its lowest bit, against the known ones), a part
# features add that is not whole pages, and a queue's senders that name a
# board the window does not have, its checksum made right again (CRC-32C
# of bytes 8..59, 192..255, the queue table and tables_extra).
corrupt feature 16 '<I' 8
corrupt extra 192 '<Q' 100
cp "$W" "$T/senders"
python3 - "$T/senders" <<'PY' || die "cannot corrupt senders"
import struct, sys
def crc32c(crc, data):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 & -(crc & 1))
    return crc ^ 0xffffffff
f = open(sys.argv[1], "r+b")
qt = 4096 + 64 * 4096 + 64 * 128
f.seek(0); sb = bytearray(f.read(4096))
queues = struct.unpack_from("<I", sb, 28)[0]
f.seek(qt + 8); f.write(struct.pack("<Q", 1 << 40))
f.seek(qt); table = f.read(queues * 16)
te = struct.unpack_from("<Q", sb, 192)[0]
f.seek((qt + queues * 16 + 4095) // 4096 * 4096); extra = f.read(te)
sum_ = crc32c(crc32c(crc32c(crc32c(0, sb[8:60]), sb[192:256]), table), extra)
f.seek(60); f.write(struct.pack("<I", sum_))
PY
"$S" -w "file:$T/senders" --json dump >"$T/senders.json" 2>"$T/senders.err"
[ $? = 1 ] || die "dump --json of a window with a queue's senders out of range does not exit 1"

PYTHONPATH=$ROOT/tests/lib python3 - "$man" "$T" <<'PY' >"$T/keys" 2>"$T/err"
import json, os, sys
from json_keys import blocks, paths
man, d = sys.argv[1], sys.argv[2]
blocks = blocks(man)
for need in ("dump", "top", "check"):
    assert blocks.get(need), ("no json-keys block in %s" % man, need)
outputs = {"dump": ["dump.json", "dump-v.json", "size.json", "check.json",
                    "feature.json", "extra.json", "senders.json"],
           "top": ["top.json"], "check": ["verdict.json"]}
seen = {b: set() for b in outputs}
for b, files in outputs.items():
    for f in files:
        doc = json.load(open(os.path.join(d, f)))
        for p in paths(doc):
            assert p in blocks[b], "%s: key %s is not described in %s (json-keys: %s)" % (f, p, man, b)
            seen[b].add(p)
# the faults seen are the two asked for
for f, field, kind in (("size.json", "entry.size", "at_most"),
                       ("check.json", "entry.check", "expected"),
                       ("feature.json", "features_incompat", "known"),
                       ("extra.json", "tables_extra", "pages_at_most"),
                       ("senders.json", "queue_table.senders", "subset_of")):
    fault = json.load(open(os.path.join(d, f)))["fault"]
    assert fault and fault["field"] == field and kind in fault, (f, fault)
# A fault with a lower bound (at_least: a window too small, a generation
# of 0) is found by every open, which dump cannot then print as JSON: it
# is described, and never printed.
unreachable = {"dump": {"fault.at_least"}, "top": set(), "check": set()}
for b in outputs:
    missing = blocks[b] - seen[b] - unreachable[b]
    assert not missing, "described in %s (json-keys: %s) but never printed: %s" % (man, b, sorted(missing))
    for k in unreachable[b]:
        assert k in blocks[b], "%s is no longer described (json-keys: %s)" % (k, b)
print(", ".join("%s: %d keys" % (b, len(blocks[b])) for b in outputs))
PY
if [ $? = 0 ]; then
	ok "JSON keys of dump, top --once and check: all described in smqctl(1), all described ones printed ($(cat "$T/keys"))"
else
	failed "JSON keys of dump, top --once, check and smqctl(1)"
	sed 's/^/    /' "$T/err"
fi

# JSON is UTF-8, a window holds any bytes: a board's host name (its slot,
# smq(7): the board table at 266240, 128 bytes a slot, the name at +64)
# of "caf" and a byte 0xe9 that starts no UTF-8 sequence, then "\u00e9"
# written right
python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(266240 + 128 + 64); f.write(b"caf\xe9-h\xc3\xa9\0")' "$W" ||
	die "cannot write the host name"
smq --json dump >"$T/host.json"
smq --json top --once --interval 0.1 >"$T/host-top.json"
if python3 -c 'import json, sys
for f in sys.argv[1:]:
    d = json.loads(open(f, "rb").read())
    hosts = [b["host"] for b in d["board_table"]]
    assert "caf\ufffd-h\u00e9" in hosts, (f, hosts)' "$T/host.json" "$T/host-top.json" 2>"$T/err"; then
	ok "dump and top --json of a host name that is not UTF-8: valid JSON, U+FFFD for the byte"
else
	failed "a host name that is not UTF-8"
	sed 's/^/    /' "$T/err"
fi
finish 2
