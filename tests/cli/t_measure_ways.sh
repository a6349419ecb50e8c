#!/bin/sh
# pingpong and bench --zero-copy, --burst and --verify, briefly, on windows
# with and without checksums: they complete, count every message (a count
# that is no multiple of the burst included), name how the messages moved
# in the title, the rows and JSON, and check what came; a payload changed
# in the ring after the sender made it fails them (a loan held at its
# submit by tests/smqctl-hooked while one byte is flipped in the window
# file); the options that cannot go together are usage errors.  Speed is
# never looked at.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
need_command python3 "the JSON checks need it"
hooked=$B/tests/smqctl-hooked
ncpu=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
# one CPU: the ping-pongs spin and sleep instead of busy-polling
P=
[ "$ncpu" -ge 2 ] || P="--wait spin"

# check FILE COMMAND SIZES COUNT ZERO_COPY BURST VERIFY NAME
# check_run FILE KIND SIZES COUNT ZC BURST VERIFY SUFFIX: the JSON of a run
check_run() {
	python3 - "$@" <<'PY'
import json, sys
f, kind, sizes, count, zc, burst, verify, suffix = sys.argv[1:9]
sizes, count, burst = [int(x) for x in sizes.split(",")], int(count), int(burst)
d = json.load(open(f))
assert d["command"] == kind and d["interrupted"] is False, d["command"]
assert d["zero_copy"] == (zc == "yes") and d["burst"] == burst and d["verify"] == (verify == "yes"), \
    (d["zero_copy"], d["burst"], d["verify"])
r = d["results"]
assert [x["size"] for x in r] == sizes, [x["size"] for x in r]
for x in r:
    assert x["name"] == "smq " + d["mode"] + suffix, x["name"]
    assert x["messages"] == count, ("messages", x["messages"], count)
    # pingpong: a round trip carries a burst each way
    per = burst if kind == "pingpong" else 1
    rate = per * x["messages"] / x["seconds"]
    assert abs(rate - x["msgs_per_s"]) <= 1e-6 * rate + 0.1, ("rate", rate, x["msgs_per_s"])
PY
}

# measure LABEL WINDOW COMMAND [OPTIONS...]: the command with --json on
# the window, checked; the options say what to expect
measure() {
	label=$1 win=$2 kind=$3
	shift 3
	zc=no burst=1 verify=no suffix=
	for o in "$@"; do
		case $o in
		--zero-copy) zc=yes verify=yes suffix=", zero-copy" ;;
		--verify) verify=yes ;;
		--burst=*) burst=${o#--burst=} ;;
		esac
	done
	[ $burst -gt 1 ] && suffix=", bursts of $burst"
	[ $verify = yes ] && [ $zc = no ] && suffix="$suffix, verified"
	count=1001; [ "$kind" = pingpong ] && count=301
	# shellcheck disable=SC2086
	if "$S" --window "$win" --json $kind $P --count $count --size 0,5,64,1000,4K "$@" \
		>"$T/out.json" 2>"$T/err" &&
	   check_run "$T/out.json" $kind 0,5,64,1000,4096 $count $zc $burst $verify "$suffix" 2>>"$T/err"; then
		ok "$label"
	else failed "$label"; sed 's/^/    /' "$T/err"; fi
}

plain="file:$T/plain" summed="file:$T/summed"
"$S" --window "$plain" init --boards 2 --entries 64 --entry-size 4096 >/dev/null &&
"$S" --window "$summed" init --boards 2 --entries 64 --entry-size 4096 --checksum >/dev/null ||
	die "init"
for w in plain summed; do
	eval spec=\$$w
	measure "bench --zero-copy ($w)" "$spec" bench --zero-copy
	measure "bench --verify ($w)" "$spec" bench --verify
	measure "bench --burst=8 ($w): 1001 messages, the last call short" "$spec" bench --burst=8
	measure "bench --burst=3 --verify ($w)" "$spec" bench --burst=3 --verify
	measure "bench --burst=256 ($w): more than the ring holds" "$spec" bench --burst=256
	measure "pingpong --zero-copy ($w)" "$spec" pingpong --zero-copy
	measure "pingpong --burst=4 ($w): 4 each way a round trip" "$spec" pingpong --burst=4
	measure "pingpong --burst=16 --verify ($w): the diagnostic ring full each way" "$spec" pingpong --burst=16 --verify
done

# the title says how the messages moved
if "$S" --window "$plain" bench --count 100 --size 64 --burst 8 --verify >"$T/t.txt" 2>"$T/err" &&
   grep -q "^bench on $plain: .*, mode spin, bursts of 8, verified$" "$T/t.txt" &&
   "$S" --window "$plain" pingpong $P --count 100 --size 64 --zero-copy >"$T/t.txt" 2>>"$T/err" &&
   grep -q "^pingpong on $plain: .*, mode [a-z]*, zero-copy$" "$T/t.txt"; then
	ok "the title names bursts, verified and zero-copy"
else failed "titles"; cat "$T/t.txt" "$T/err" | sed 's/^/    /'; fi

# options that do not go together, or out of range: exit 2, nothing run
for args in "bench --zero-copy --burst 4" "pingpong --burst 0" "bench --burst 257" "bench --burst x"; do
	# shellcheck disable=SC2086
	"$S" --window "$plain" $args >"$T/out" 2>"$T/err"; rc=$?
	if [ $rc = 2 ] && [ ! -s "$T/out" ] && grep -q -- "--burst" "$T/err"; then
		ok "$args: usage error, exit 2"
	else failed "$args: exit $rc"; sed 's/^/    /' "$T/err"; fi
done

# a bounced burst larger than the diagnostic queues' ring of 16: named, exit 1
if "$S" --window "$plain" pingpong --count 10 --burst 17 >"$T/out" 2>"$T/err"; then
	failed "pingpong --burst 17: succeeded"
else
	rc=$?
	[ $rc = 1 ] && grep -q "the queues hold 16 messages; a burst bounced must fit" "$T/err" &&
		ok "pingpong --burst 17: the ring of 16 named, exit 1" ||
		{ failed "pingpong --burst 17: exit $rc"; sed 's/^/    /' "$T/err"; }
fi

# A payload changed after the sender made it: the sender is held at its
# first loan's submit (the payload written, not yet published), one byte
# of it is flipped in the window file, and the receiver must refuse it.
# The flip lands where the pattern of message 0 is, found by its first 16
# bytes.  Both commands, windows with and without checksums (with them,
# the check is summed as the loan is written, so the entry fails its
# checksum: smq refuses it, which counts as a message that came wrong).
flip() { # FILE AT: flips byte AT of message 0's payload
	python3 - "$1" "$2" <<'PY'
import mmap, struct, sys
mul, step, m = 0x9e3779b97f4a7c15, 0xd1b54a32d192ed03, (1 << 64) - 1
w0 = mul & m
head = struct.pack("<QQ", w0, (w0 + step) & m)
with open(sys.argv[1], "r+b") as f:
    mm = mmap.mmap(f.fileno(), 0)
    at = mm.find(head)
    assert at >= 0, "message 0 is not in the window"
    assert mm.find(head, at + 1) < 0, "message 0 twice"
    mm[at + int(sys.argv[2])] ^= 0x40
    mm.flush()
PY
}
if [ -x "$hooked" ]; then
	for w in plain summed; do
		eval spec=\$$w
		for kind in bench pingpong; do
			hold=$T/held
			rm -f "$hold"
			SMQ_TEST_HOLD="loan_submit:$hold" SMQ_TEST_HOLD_MAX=20 bg_start "$hooked" --window "$spec" \
				$kind $P --zero-copy --count 50 --size 4K >"$T/out" 2>"$T/err"
			within 10 test -e "$hold"
			flipped=no
			# a byte in the first and in the second half of a block
			# of 32 that the check takes at once
			at=100; [ $kind = pingpong ] && at=2071
			[ -e "$hold" ] && flip "${spec#file:}" $at 2>>"$T/err" && flipped=yes
			# the peer of a ping-pong, a process of its own, holds
			# at its first answer too: let it go at once
			let_go() { rm -f "$hold"; ended $pid; }
			wait_for 30 "$kind --zero-copy, let go at its holds, to end" let_go
			wait_pid 5 $pid "$kind --zero-copy"
			if [ $flipped = yes ] && [ $rc = 1 ] &&
			   grep -qE "^smqctl: (bench|pingpong) of 4096 bytes: 1 messages? (of the untimed lap came wrong|came back wrong)$" "$T/err"; then
				ok "$kind --zero-copy ($w): a byte flipped in a loan before its submit fails it, exit 1"
			else failed "$kind --zero-copy ($w) with a flipped byte: flipped $flipped, exit $rc"
				cat "$T/out" "$T/err" | sed 's/^/    /'; fi
		done
	done
else
	note "no $hooked: the flipped-payload runs not tried"
fi

# every JSON key printed here is one smqctl(1) describes for pingpong and
# bench, and the windows are valid afterwards
for w in "$plain" "$summed"; do
	"$S" --window "$w" dump >/dev/null 2>"$T/err" || { failed "dump $w after the runs"; sed 's/^/    /' "$T/err"; }
done
# 21, and the 4 flipped payloads where the hooked smqctl is built
flipped=0
[ -x "$hooked" ] && flipped=4
finish $((22 + flipped))
