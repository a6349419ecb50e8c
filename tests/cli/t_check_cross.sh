#!/bin/sh
# smqctl check across boards:
#  - 3 boards over shm: and over split:, synchronised, with the recorded
#    PCI path of tests/data/pci-dumps/check-good.txt: every check PASSes, exit
#    0, the figures between boards printed (never judged: speed is not
#    asserted), and the application queues are as they were (a message
#    waiting there stays, counters unchanged); --json has every pair's
#    figures;
#  - --peer: boards 1 and 2 run 'check --peer', board 0 'check': the same
#    verdicts, and the peers report the checks between boards as skipped;
#  - a window without scratch areas: map and raw-link SKIP, saying why;
#  - faults, each a FAIL that names its cause, injected into the test
#    build of smqctl (tests/smqctl-hooked, tests/lib/fault_hook.c): board 0's
#    view of board 2's region shifted by a page, or wrapping every 64 KiB
#    (its body is 128 KiB); board 0's writes into board 1's area landing
#    64 bytes off, with a bit stuck at one, or never arriving; doorbells
#    never delivered; board 2's view of board 0's region shifted, so that
#    it never answers (an answer is a write there) and says why;
#  - a board whose diagnostic queue another program holds never answers:
#    every check between boards FAILs, naming it and what to run.
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
S=$PWD/$B/smqctl
H=$PWD/$B/tests/smqctl-hooked
[ -x "$S" ] && [ -x "$H" ] || { echo "no $S or $H: build first"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed: the JSON checks need it"; exit 77; }
[ -d /dev/shm ] && [ -w /dev/shm ] || { echo "no writable /dev/shm: no shm: window"; exit 77; }
T=$(mktemp -d) || exit 1
NAME=smq-t-check-$$
pids=
trap 'for p in $pids; do kill -9 $p 2>/dev/null; done; rm -rf "$T" /dev/shm/$NAME /dev/shm/$NAME-split.* /dev/shm/$NAME-f' EXIT
trap 'exit 1' HUP INT TERM
export LC_ALL=C
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
PCI="--device 0000:01:00.0 -F tests/data/pci-dumps/check-good.txt --sysfs tests/data/check/sysfs-good --watch 0"

line() {
	if grep -E "^$2  $3 +.*$4" "$T/$1.out" >/dev/null; then
		ok "$1: $2 $3 ($4)"
	else
		bad "$1: no line '$2  $3 ...$4'; got:"
		sed 's/^/    /' "$T/$1.out" "$T/$1.err"
	fi
}
status() {
	[ "$rc" = "$2" ] && ok "$1: exit $2" || { bad "$1: exit $rc, not $2"; sed 's/^/    /' "$T/$1.out" "$T/$1.err"; }
}
# fresh SPEC [INIT OPTIONS]: formatted for 3 boards and synchronised
fresh() {
	spec=$1
	shift
	"$S" -w "$spec" init --force --boards 3 "$@" >/dev/null || bad "init $spec"
	for b in 1 2; do "$S" -w "$spec" -b $b sync -T 20s >/dev/null 2>&1 & done
	"$S" -w "$spec" sync -T 20s >/dev/null 2>&1 || bad "sync $spec"
	wait
}
# every check PASSes
all_pass() {
	status "$1" 0
	n=$(grep -cE '^PASS  ' "$T/$1.out")
	[ "$n" = 15 ] && ok "$1: all 15 checks PASS" ||
		{ bad "$1: $n of 15 checks PASS"; sed 's/^/    /' "$T/$1.out"; }
	tail -n 1 "$T/$1.out" | grep -q "^15 passed, 0 warned, 0 failed, 0 skipped: nothing to fix$" ||
		bad "$1: last line: $(tail -n 1 "$T/$1.out")"
	for t in "^doorbells: " "^raw link: " "^queues: " "^model: the PCIe model .* for 0000:01:00.0: Gen3 x8"; do
		grep -q "$t" "$T/$1.out" || bad "$1: no '$t' in the figures"
	done
}

# the application queues' state: senders' and receivers' counts, messages
# waiting (check must leave them as they are)
app_queues() {
	"$S" -w "$1" --json dump | python3 -c 'import json, sys
d = json.load(sys.stdin)
for q in d["queue_table"]:
    if not q["diagnostic"]:
        print(q["queue"], q["sent"], q["received"], q["queued"])'
}
for spec in shm:$NAME split:$NAME-split; do
	fresh "$spec" --entry-size 4K
	"$S" -w "$spec" -b 2 send --queue 1 "an application's message" || bad "send"
	app_queues "$spec" >"$T/apps.before"
	"$S" -w "$spec" check $PCI >"$T/all.out" 2>"$T/all.err"; rc=$?
	all_pass all
	cp "$T/all.out" "$T/all-${spec%%:*}.out"
	app_queues "$spec" >"$T/apps.after"
	cmp -s "$T/apps.before" "$T/apps.after" && [ -s "$T/apps.after" ] &&
		ok "$spec: the application queues as they were ($(tr '\n' ';' <"$T/apps.after"))" ||
		bad "$spec: the application queues changed: $(cat "$T/apps.before") -> $(cat "$T/apps.after")"
	[ "$("$S" -w "$spec" -b 1 recv --queue 1 -T 0)" = "an application's message" ] &&
		ok "$spec: the application's message still there, whole" ||
		bad "$spec: the application's message is gone"
done

# --json: six ordered pairs, each with its figures
spec=shm:$NAME
"$S" -w "$spec" --json check $PCI --only cross >"$T/cross.json"; rc=$?
status cross.json 0
python3 - "$T/cross.json" <<'PY' && ok "--json: 6 pairs, figures of each" || bad "--json pairs"
import json, sys
d = json.load(open(sys.argv[1]))
assert [c["status"] for c in d["checks"]] == ["pass"] * 4, d["checks"]
pairs = {(p["from"], p["to"]): p for p in d["pairs"]}
assert sorted(pairs) == [(a, b) for a in range(3) for b in range(3) if a != b], sorted(pairs)
for (a, b), p in pairs.items():
    assert p["doorbell_delivered"] is True and p["wake_median_ns"] > 0, p
    assert [w["size"] for w in p["raw_writes"]] == [64, 256, 1024, 4096, 16384, 65536]
    assert all(w["mb_per_s"] > 0 for w in p["raw_writes"])
    # the model only beside this board's writes
    assert all((w["model_mb_per_s"] is not None) == (a == 0) for w in p["raw_writes"]), p
    assert p["read_median_ns"] > 0 and p["read_p99_ns"] >= p["read_median_ns"]
    if a < b:
        assert p["half_rtt_ns"] > 0 and p["stream_size"] == 4096, p
        assert p["stream_mb_per_s"] > 0 and p["stream_fraction"] > 0, p
    else:
        assert p["half_rtt_ns"] is None and p["stream_size"] == 0, p
PY

# --peer: boards 1 and 2 on their own, board 0 coordinates
for b in 1 2; do
	"$S" -w "$spec" -b $b check --peer -T 60s --only window,cross \
		>"$T/peer$b.out" 2>"$T/peer$b.err" &
	eval "p$b=\$!"
done
pids="$p1 $p2"
i=0
until [ "$("$S" -w "$spec" --json dump | grep -c '"receiver_pid": [1-9]')" -ge 2 ]; do
	i=$((i + 1)); [ $i -lt 200 ] || { bad "the peers did not start"; break; }
	sleep 0.05
done
"$S" -w "$spec" check --only window,cross >"$T/coord.out" 2>"$T/coord.err"; rc=$?
status "coordinator of --peer boards" 0
line coord PASS map "6 views"
line coord PASS queues "3 pairs"
for b in 1 2; do
	eval "wait \$p$b"; rc=$?
	status "peer $b" 0
	line peer$b SKIP map "this board took part \(--peer\)"
	grep -q "board $b waiting for the board that runs 'smqctl check'" "$T/peer$b.err" ||
		bad "peer $b did not say it waits"
done
pids=

# without scratch areas
fresh "$spec" --no-scratch
"$S" -w "$spec" check --only cross >"$T/noscratch.out" 2>"$T/noscratch.err"; rc=$?
status noscratch 0
line noscratch SKIP map "the window has no scratch areas .* no writes are tested"
line noscratch SKIP raw-link "no scratch areas"
line noscratch PASS doorbells "6 pairs"
line noscratch PASS queues "3 pairs"

# faults; boards 1 and 2 have 128 KiB bodies (16 entries of 560 bytes)
geo="--entries 16 --entry-size 560"
fault() { # NAME VIEW|-: smqctl-hooked check --only cross, SMQ_TEST_VIEW set
	fresh "$spec" $geo
	SMQ_TEST_VIEW=$2 "$H" -w "$spec" check --only cross >"$T/$1.out" 2>"$T/$1.err"
	rc=$?
	status "$1" 1
}
fault shifted 0:2:shift:-4096
line shifted FAIL map "board 0's view of board 2's region is shifted by -4096 bytes: offset 0x3010 \(its notice's check\) shows what belongs at 0x2010 \(a translation offset\)"
grep -q "next: check the window of the bridge from board 0 to board 2 .*nothing was sent through that view" "$T/shifted.out" &&
	ok "shifted: says nothing was sent through it" || bad "shifted: no next step"
line shifted PASS queues "1 pair:"
fault aliased 0:2:wrap:65536
line aliased FAIL map "board 0's view of board 2's region wraps every 65536 bytes: offset 0x[0-9a-f]+ \(its scratch head's magic\) shows what lies 65536 bytes lower"
fault writes-shifted 0:1:shift:64:write
line writes-shifted FAIL map "board 1's scratch area: board 0's writes land \+64 bytes from where they were aimed"
fault stuck 0:1:ones:16:write
line stuck FAIL map "board 1's scratch area: board 0's writes arrive with bits 0x10 stuck at one and 0 at zero"
fault lost 2:0:drop:0:write
line lost FAIL map "board 0's scratch area: nothing of board 2's writes arrived"
# board 2's own view of board 0's region is off: it does not answer (an
# answer is a write into board 0's region), and says why
fresh "$spec" $geo
SMQ_TEST_VIEW=2:0:shift:-4096 "$H" -w "$spec" check --only cross -T 3s \
	>"$T/silent.out" 2>"$T/silent.err"
rc=$?
status silent 1
line silent FAIL map "board 2 did not answer within 3000 ms"
grep -q "board 2's view of board 0's region reads wrong (offset 0, the superblock's magic): it does not answer" "$T/silent.err" &&
	ok "silent: board 2 says why it does not answer" ||
	bad "silent: board 2 does not say why: $(cat "$T/silent.err")"

fresh "$spec" $geo
SMQ_TEST_SKIP=ring "$H" -w "$spec" check --only doorbells >"$T/ring.out" 2>"$T/ring.err"; rc=$?
status ring 1
line ring FAIL doorbells "board 1's doorbell, rung by board 0, was not delivered: [0-9] of [0-9] pings woke it only by itself"
grep -Eq "^ +2 +0  not delivered: " "$T/ring.out" && ok "ring: the pair 2 -> 0 in the table" ||
	bad "ring: no 'not delivered' row for 2 -> 0"

# a board whose diagnostic queue another program holds: taken for a
# board that waits with --peer, which never answers
"$S" -w "$spec" -b 2 pingpong --peer >/dev/null 2>&1 &
pids=$!
i=0
until "$S" -w "$spec" --json dump | grep -q '"receiver_pid": [1-9]'; do
	i=$((i + 1)); [ $i -lt 200 ] || { bad "pingpong did not start"; break; }
	sleep 0.05
done
"$S" -w "$spec" check --only cross -T 2s >"$T/absent.out" 2>"$T/absent.err"; rc=$?
status absent 1
line absent FAIL map "board 2 did not answer within 2000 ms"
grep -q "next: run 'smqctl --board 2 check --peer' on its host" "$T/absent.out" &&
	ok "absent: says what to run" || bad "absent: no next step"
kill $pids 2>/dev/null

echo "figures of the shm: run (printed, never asserted):"
sed -n '/^doorbells:/,$p' "$T/all-shm.out" | sed 's/^/    /'
[ $fails = 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
