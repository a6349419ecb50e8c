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
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
need_command python3 "the JSON checks need it"
export SMQ_WINDOW="file:$T/w"

# run NAME ARGS...: smqctl check ARGS into $T/NAME.out, exit status in rc
# (bounded: a --timeout among ARGS comes after this one and wins)
run() {
	name=$1
	shift
	"$S" check -T 20s "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
}
last() { # NAME REGEX: the last line matches
	if tail -n 1 "$T/$1.out" | grep -E "$2" >/dev/null; then
		ok "$1: last line: $2"
	else
		failed "$1: last line is not '$2': $(tail -n 1 "$T/$1.out")"
	fi
}

# ---- never formatted ----
: >"$T/w"
run unformatted --skip pci,cross
check_exit unformatted 1
check_line unformatted FAIL format "not formatted|never formatted"
check_line unformatted SKIP generation "not valid"

# ---- a sound window ----
"$S" init --boards 3 --entries 4 --entry-size 256 >/dev/null || die "init"
run unsynced --skip pci,cross
check_exit unsynced 1
check_line unsynced WARN generation "not declared it ready"
check_line unsynced FAIL boards "3 of 3 boards never announced.*board 0 first"
last unsynced "first to fix: boards: start board 0"
bg_start "$S" -b 1 sync -T 10s >/dev/null 2>&1; p1=$pid
bg_start "$S" -b 2 sync -T 10s >/dev/null 2>&1; p2=$pid
"$S" sync -T 10s >/dev/null 2>&1 || failed "sync of board 0"
wait_pid 20 $p1 "board 1's sync"
wait_pid 20 $p2 "board 2's sync"
cp "$T/w" "$T/before"
run sound --skip pci,cross
check_exit sound 0
for c in format generation boards receivers full-queues stalled diag-queues; do
	check_line sound PASS "$c" ""
done
last sound "^7 passed, 0 warned, 0 failed, 0 skipped: nothing to fix$"
cmp -s "$T/w" "$T/before" && ok "check wrote nothing to the window" ||
	failed "the window changed under check"

# --json: the same verdicts
"$S" --json check -T 20s --skip pci,cross >"$T/sound.json"; rc=$?
check_exit sound.json 0
python3 - "$T/sound.json" <<'PY' && ok "--json: seven checks, all pass, summary and exit" || failed "--json of a sound window"
import json, sys
d = json.load(open(sys.argv[1]))
names = [c["name"] for c in d["checks"]]
assert names == ["format", "generation", "boards", "receivers", "full-queues", "stalled", "diag-queues"], names
assert all(c["status"] == "pass" and c["group"] == "window" and c["next"] is None for c in d["checks"])
assert d["summary"] == {"pass": 7, "warn": 0, "fail": 0, "skip": 0, "first": None, "first_next": None}, d["summary"]
assert d["exit"] == 0 and d["boards"] == 3 and d["strict"] is False
PY

# ---- selection ----
run only --only receivers,pci
check_exit only 0
n=$(grep -cE '^(PASS|WARN|FAIL|SKIP)  ' "$T/only.out")
[ "$n" = 6 ] && ok "--only receivers,pci: 6 checks" || failed "--only receivers,pci printed $n checks"
check_line only PASS receivers ""
check_line only SKIP bar "not on a PCI device"
grep -q "^PASS  format" "$T/only.out" && failed "--only receivers ran format" || ok "--only: format not run"
run skip --skip window,cross
grep -qE '^(PASS|WARN|FAIL|SKIP)  (format|map) ' "$T/skip.out" &&
	failed "--skip window,cross ran one of them" || ok "--skip window,cross"
for bad_args in "--only nosuch" "--skip format,nosuch" "--timeout 0" "--timeout inf" "operand" \
	"--only format --skip format" "--only pci --device garbage" "--only pci --device 00:03.0/9"; do
	run usage $bad_args
	check_exit "check $bad_args" 2
done
grep -q "no check or group 'nosuch'" "$T/usage.out" "$T/usage.err" 2>/dev/null ||
	{ run usage --only nosuch; grep -q "no check or group 'nosuch'" "$T/usage.err" &&
		ok "an unknown name is named" || failed "an unknown name is not named"; }

# ---- a diagnostic queue holding a message: a warning ----
"$S" send --queue 4 "left over" || failed "send to diagnostic queue 4"
run diag --skip pci,cross
check_exit diag 0
check_line diag WARN diag-queues "diagnostic queue 4 holds 1 message"
last diag "first to fix: diag-queues: left by an interrupted"
run strict --skip pci,cross --strict
check_exit "strict" 1
"$S" -b 1 recv --queue 4 -T 0 >/dev/null || failed "recv of the diagnostic message"

# ---- check's agents leave no handle dead, even when its own part cannot
# open (a message left in board 0's diagnostic queue): they are stopped,
# not killed; a board the window does not have is a bad option ----
"$S" send --queue 3 "left over" || failed "send to diagnostic queue 3"
run leftover --skip pci
"$S" --json dump >"$T/leftover.json" 2>/dev/null
if python3 - "$T/leftover.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
dead = [b for b in d["board_table"] if b["activity"] == "dead"]
sys.exit(1 if dead else 0)
EOF
then ok "check with its own part refused: no board left with dead handles"
else failed "check left dead handles: $(grep -c '"activity": *"dead"' "$T/leftover.json") boards dead"
fi
"$S" recv --queue 3 -T 0 >/dev/null || failed "recv of the message left in queue 3"
run noboard -b 5 --skip pci
check_exit noboard 1
grep -q "board 5 does not exist: the window has 3 boards" "$T/noboard.err" &&
	ok "check -b 5: board 5 does not exist, said" ||
	failed "check -b 5 did not say board 5 does not exist: $(cat "$T/noboard.err")"

# ---- a dead board, and a receiver killed with its queue then filled ----
bg_start "$S" -b 1 recv --queue 1 -T 60s >/dev/null 2>&1; rp=$pid
# has_receiver: queue 1's receiver has opened it
has_receiver() { "$S" --json dump 2>/dev/null | grep -q '"receiver_pid": *[1-9]'; }
wait_for 10 "the receiver (pid $rp) to open queue 1" has_receiver
kill -9 $rp; wait_pid 10 $rp "the receiver, killed"
for i in 1 2 3 4; do "$S" send --queue 1 -T 0 "m$i" || failed "send $i"; done
run dead --skip pci,cross
check_exit dead 1
check_line dead FAIL boards "board 1 is dead: its processes died attached \(pid $rp"
check_line dead FAIL receivers "queue 1's receiver \(board 1, pid $rp\) died with the queue open"
check_line dead FAIL full-queues "queue 1 is full \(4 of 4 in a lane, 4 queued\) and its receiver is dead"
last dead "first to fix: boards: restart board 1"

# ---- a damaged field: named, with its offset ----
cp "$T/w" "$T/bad"
python3 - "$T/bad" <<'PY' || failed "cannot damage the window"
import struct, sys
f = open(sys.argv[1], "r+b")
f.seek(4096 + 8)                 # board 0's notice: system_state
f.write(struct.pack("<I", 7))
PY
SMQ_WINDOW="file:$T/bad" run damaged --skip pci,cross
check_exit damaged 1
check_line damaged FAIL format "field notice.system_state at offset 0x1008 holds 7 \(at most 2\)"

# ---- not a window: its first bytes as text, and no advice to init ----
seq 1 50 | sed 's/^/a line of text /' >"$T/text"
SMQ_WINDOW="file:$T/text" run text --skip pci,cross
check_exit text 1
check_line text FAIL format 'not an smq window: it holds .* of other data, beginning "a line of text 1"'
grep -q "next: name the window meant (--window); smqctl init refuses" "$T/text.out" &&
	ok "text: the advice is the window meant, not init" ||
	failed "text: $(grep next "$T/text.out")"

# ---- a window cut short ----
cp "$T/w" "$T/short"
truncate -s 200K "$T/short"
SMQ_WINDOW="file:$T/short" run short --skip pci,cross
check_exit short 1
check_line short FAIL format "the window was cut short: it maps 200.0 KiB \(204800 bytes\), its layout needs"
grep -q "next: give it back its size (a file: truncate -s [0-9]* keeps" "$T/short.out" &&
	ok "short: the advice gives back the size" ||
	failed "short: $(grep next "$T/short.out")"

# ---- a failed boot: board 2 never started, 0 and 1 gave up ----
SMQ_WINDOW="file:$T/boot"
"$S" -w "$SMQ_WINDOW" init -n 3 >/dev/null || failed "init boot"
bg_start "$S" -w "$SMQ_WINDOW" -b 1 sync -T 1
"$S" -w "$SMQ_WINDOW" sync -T 1 >/dev/null 2>&1
wait_pid 10 $pid "board 1's sync"
SMQ_WINDOW="file:$T/boot" run boot --skip pci,cross
check_exit boot 1
check_line boot FAIL boards "1 of 3 boards never announced themselves under this generation \(board 2 first\); boards 0 and 1 announced and gave up waiting"
last boot "first to fix: boards: start board 2: smqctl --board 2 sync on its host; then sync again the boards that gave up"

finish 57
