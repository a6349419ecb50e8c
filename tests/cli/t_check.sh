#!/bin/sh
# smqctl check, the window's checks and the frame around every check:
#  - a sound window whose boards synchronised: every window check PASSes,
#    exit 0, the last line counts them and says there is nothing to fix;
#  - faults, each a FAIL (exit 1) that names its cause: a window never
#    formatted, a field damaged (named with its offset), boards that never
#    announced, a dead board (its process killed attached), a receiver
#    killed with its queue then filled (receivers and full-queues);
#  - a diagnostic queue holding a message is a WARN: exit 0, and 1 with
#    --strict; the summary's first thing to fix is the first FAIL, else the
#    first WARN;
#  - --only and --skip take names and groups; an unknown one, an operand,
#    a bad --timeout are usage errors (exit 2);
#  - --json: one object whose checks, statuses and summary match the text;
#  - check writes nothing: the window's bytes are the same after it.
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
S=$PWD/$B/smqctl
[ -x "$S" ] || { echo "no $S: build first"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed: the JSON checks need it"; exit 77; }
T=$(mktemp -d) || exit 1
pids=
trap 'for p in $pids; do kill -9 $p 2>/dev/null; done; rm -rf "$T"' EXIT
trap 'exit 1' HUP INT TERM
export LC_ALL=C
export SMQ_WINDOW="file:$T/w"
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

# run NAME ARGS...: smqctl check ARGS into $T/NAME.out, exit status in rc
run() {
	name=$1
	shift
	"$S" check "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
}
# line NAME STATUS CHECK WORDS: the output has "STATUS  CHECK ..." with WORDS
line() {
	if grep -E "^$2  $3 +.*$4" "$T/$1.out" >/dev/null; then
		ok "$1: $2 $3 ($4)"
	else
		bad "$1: no line '$2  $3 ...$4'; got:"
		sed 's/^/    /' "$T/$1.out" "$T/$1.err"
	fi
}
status() { # NAME WANT
	[ "$rc" = "$2" ] && ok "$1: exit $2" || { bad "$1: exit $rc, not $2"; sed 's/^/    /' "$T/$1.out" "$T/$1.err"; }
}
last() { # NAME REGEX: the last line matches
	if tail -n 1 "$T/$1.out" | grep -E "$2" >/dev/null; then
		ok "$1: last line: $2"
	else
		bad "$1: last line is not '$2': $(tail -n 1 "$T/$1.out")"
	fi
}

# ---- never formatted ----
: >"$T/w"
run unformatted --skip pci,cross
status unformatted 1
line unformatted FAIL format "not formatted|never formatted"
line unformatted SKIP generation "not valid"

# ---- a sound window ----
"$S" init --boards 3 --entries 4 --entry-size 256 >/dev/null || { echo "init failed"; exit 1; }
run unsynced --skip pci,cross
status unsynced 1
line unsynced WARN generation "not declared it ready"
line unsynced FAIL boards "3 of 3 boards never announced.*board 0 first"
last unsynced "first to fix: boards: start board 0"
"$S" -b 1 sync -T 10s >/dev/null 2>&1 & p1=$!
"$S" -b 2 sync -T 10s >/dev/null 2>&1 & p2=$!
"$S" sync -T 10s >/dev/null 2>&1 || bad "sync of board 0"
wait $p1 $p2
cp "$T/w" "$T/before"
run sound --skip pci,cross
status sound 0
for c in format generation boards receivers full-queues diag-queues; do
	line sound PASS "$c" ""
done
last sound "^6 passed, 0 warned, 0 failed, 0 skipped: nothing to fix$"
cmp -s "$T/w" "$T/before" && ok "check wrote nothing to the window" ||
	bad "the window changed under check"

# --json: the same verdicts
"$S" --json check --skip pci,cross >"$T/sound.json"; rc=$?
status sound.json 0
python3 - "$T/sound.json" <<'PY' && ok "--json: six checks, all pass, summary and exit" || bad "--json of a sound window"
import json, sys
d = json.load(open(sys.argv[1]))
names = [c["name"] for c in d["checks"]]
assert names == ["format", "generation", "boards", "receivers", "full-queues", "diag-queues"], names
assert all(c["status"] == "pass" and c["group"] == "window" and c["next"] is None for c in d["checks"])
assert d["summary"] == {"pass": 6, "warn": 0, "fail": 0, "skip": 0, "first": None, "first_next": None}, d["summary"]
assert d["exit"] == 0 and d["boards"] == 3 and d["strict"] is False
PY

# ---- selection ----
run only --only receivers,pci
status only 0
n=$(grep -cE '^(PASS|WARN|FAIL|SKIP)  ' "$T/only.out")
[ "$n" = 6 ] && ok "--only receivers,pci: 6 checks" || bad "--only receivers,pci printed $n checks"
line only PASS receivers ""
line only SKIP bar "not on a PCI device"
grep -q "^PASS  format" "$T/only.out" && bad "--only receivers ran format" || ok "--only: format not run"
run skip --skip window,cross
grep -qE '^(PASS|WARN|FAIL|SKIP)  (format|map) ' "$T/skip.out" &&
	bad "--skip window,cross ran one of them" || ok "--skip window,cross"
for bad_args in "--only nosuch" "--skip format,nosuch" "--timeout 0" "--timeout inf" "operand"; do
	run usage $bad_args
	status "check $bad_args" 2
done
grep -q "no check or group 'nosuch'" "$T/usage.out" "$T/usage.err" 2>/dev/null ||
	{ run usage --only nosuch; grep -q "no check or group 'nosuch'" "$T/usage.err" &&
		ok "an unknown name is named" || bad "an unknown name is not named"; }

# ---- a diagnostic queue holding a message: a warning ----
"$S" send --queue 4 "left over" || bad "send to diagnostic queue 4"
run diag --skip pci,cross
status diag 0
line diag WARN diag-queues "diagnostic queue 4 holds 1 message"
last diag "first to fix: diag-queues: left by an interrupted"
run strict --skip pci,cross --strict
status "strict" 1
"$S" -b 1 recv --queue 4 -T 0 >/dev/null || bad "recv of the diagnostic message"

# ---- a dead board, and a receiver killed with its queue then filled ----
"$S" -b 1 recv --queue 1 -T 60s >/dev/null 2>&1 & rp=$!
pids="$rp"
i=0
until "$S" --json dump 2>/dev/null | grep -q '"receiver_pid": *[1-9]'; do
	i=$((i + 1)); [ $i -lt 100 ] || { bad "the receiver did not open"; break; }
	sleep 0.05
done
kill -9 $rp; wait $rp 2>/dev/null
for i in 1 2 3 4; do "$S" send --queue 1 -T 0 "m$i" || bad "send $i"; done
run dead --skip pci,cross
status dead 1
line dead FAIL boards "board 1 is dead: its processes died attached \(pid $rp"
line dead FAIL receivers "queue 1's receiver \(board 1, pid $rp\) died with the queue open"
line dead FAIL full-queues "queue 1 is full \(4 of 4 in a lane, 4 queued\) and its receiver is dead"
last dead "first to fix: boards: restart board 1"

# ---- a damaged field: named, with its offset ----
cp "$T/w" "$T/bad"
python3 - "$T/bad" <<'PY' || bad "cannot damage the window"
import struct, sys
f = open(sys.argv[1], "r+b")
f.seek(4096 + 8)                 # board 0's notice: system_state
f.write(struct.pack("<I", 7))
PY
SMQ_WINDOW="file:$T/bad" run damaged --skip pci,cross
status damaged 1
line damaged FAIL format "field notice.system_state at offset 0x1008 holds 7 \(at most 2\)"

[ $fails = 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
