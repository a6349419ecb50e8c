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
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
H=$B/tests/smqctl-hooked
[ -x "$H" ] || skip "no $H: build first"
need_command python3 "the JSON checks need it"
[ -d /dev/shm ] && [ -w /dev/shm ] || skip "no writable /dev/shm: no shm: window"
NAME=$SHM
PCI="--device 0000:01:00.0 -F tests/data/pci-dumps/check-good.txt --sysfs tests/data/check/sysfs-good --watch 0"

# fresh SPEC [INIT OPTIONS]: formatted for $boards boards (2 or 3) and
# synchronised
boards=3
fresh() {
	spec=$1
	shift
	"$S" -w "$spec" init --force --boards $boards "$@" >/dev/null || failed "init $spec"
	bg_start "$S" -w "$spec" -b 1 sync -T 20s >/dev/null 2>&1; f1=$pid
	[ $boards = 2 ] || { bg_start "$S" -w "$spec" -b 2 sync -T 20s >/dev/null 2>&1; f2=$pid; }
	"$S" -w "$spec" sync -T 20s >/dev/null 2>&1 || failed "sync $spec"
	wait_pid 30 $f1 "board 1's sync of $spec"
	[ $boards = 2 ] || wait_pid 30 $f2 "board 2's sync of $spec"
}
# every check PASSes but stalled, which warns of the application's
# message that waits, with no receiver, on queue 1
all_pass() {
	check_exit "$1" 0
	n=$(grep -cE '^PASS  ' "$T/$1.out")
	[ "$n" = 15 ] && ok "$1: 15 checks PASS" ||
		{ failed "$1: $n of 15 checks PASS"; sed 's/^/    /' "$T/$1.out"; }
	check_line "$1" WARN stalled "queue 1: 1 message waits, .* for a receiver that is not there"
	tail -n 1 "$T/$1.out" | grep -q "^15 passed, 1 warned, 0 failed, 0 skipped; first to fix: stalled: start a receiver of queue 1 on board 1$" ||
		failed "$1: last line: $(tail -n 1 "$T/$1.out")"
	for t in "^doorbells: " "^raw link: " "^queues: " "^model: the PCIe model .* for 0000:01:00.0: Gen3 x8"; do
		grep -q "$t" "$T/$1.out" || failed "$1: no '$t' in the figures"
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
	"$S" -w "$spec" -b 2 send --queue 1 "an application's message" || failed "send"
	app_queues "$spec" >"$T/apps.before"
	"$S" -w "$spec" check -T 60s $PCI >"$T/all.out" 2>"$T/all.err"; rc=$?
	all_pass all
	cp "$T/all.out" "$T/all-${spec%%:*}.out"
	app_queues "$spec" >"$T/apps.after"
	cmp -s "$T/apps.before" "$T/apps.after" && [ -s "$T/apps.after" ] &&
		ok "$spec: the application queues as they were ($(tr '\n' ';' <"$T/apps.after"))" ||
		failed "$spec: the application queues changed: $(cat "$T/apps.before") -> $(cat "$T/apps.after")"
	[ "$("$S" -w "$spec" -b 1 recv --queue 1 -T 0)" = "an application's message" ] &&
		ok "$spec: the application's message still there, whole" ||
		failed "$spec: the application's message is gone"
done

# --json: six ordered pairs, each with its figures
spec=shm:$NAME
"$S" -w "$spec" --json check -T 60s $PCI --only cross >"$T/cross.json"; rc=$?
check_exit cross.json 0
python3 - "$T/cross.json" <<'PY' && ok "--json: 6 pairs, figures of each" || failed "--json pairs"
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
	bg_start "$S" -w "$spec" -b $b check --peer -T 60s --only window,cross \
		>"$T/peer$b.out" 2>"$T/peer$b.err"
	eval "p$b=\$pid"
done
# receivers N: N diagnostic queues or more have a receiver
receivers() { [ "$("$S" -w "$spec" --json dump | grep -c '"receiver_pid": [1-9]')" -ge "$1" ]; }
wait_for 10 "the peers of boards 1 and 2 to receive" receivers 2
"$S" -w "$spec" check -T 60s --only window,cross >"$T/coord.out" 2>"$T/coord.err"; rc=$?
check_exit "coordinator of --peer boards" 0
check_line coord PASS map "6 views"
check_line coord PASS queues "3 pairs"
for b in 1 2; do
	eval "wait_pid 70 \$p$b \"board $b's check --peer\""
	check_exit "peer $b" 0
	check_line peer$b SKIP map "this board took part \(--peer\)"
	grep -q "board $b waiting for the board that runs 'smqctl check'" "$T/peer$b.err" ||
		failed "peer $b did not say it waits"
done

# without scratch areas
fresh "$spec" --no-scratch
"$S" -w "$spec" check -T 60s --only cross >"$T/noscratch.out" 2>"$T/noscratch.err"; rc=$?
check_exit noscratch 0
check_line noscratch SKIP map "the window has no scratch areas .* no writes are tested"
check_line noscratch SKIP raw-link "no scratch areas"
check_line noscratch PASS doorbells "6 pairs"
check_line noscratch PASS queues "3 pairs"

# faults; boards 1 and 2 have bodies of 120 KiB (8 entries of 560 bytes,
# a journal of 256): a view that wraps every 64 KiB shows, at the scratch
# head near the body's end, the data area's first words, which say their
# offsets
geo="--entries 8 --entry-size 560"
fault() { # NAME VIEW|-: smqctl-hooked check --only cross, SMQ_TEST_VIEW set
	fresh "$spec" $geo
	SMQ_TEST_VIEW=$2 "$H" -w "$spec" check -T 60s --only cross >"$T/$1.out" 2>"$T/$1.err"
	rc=$?
	check_exit "$1" 1
}
fault shifted 0:2:shift:-4096
check_line shifted FAIL map "board 0's view of board 2's region is shifted by -4096 bytes: offset 0x3010 \(its notice's check\) shows what belongs at 0x2010 \(a translation offset\)"
grep -q "next: check the window of the bridge from board 0 to board 2 .*nothing was sent through that view" "$T/shifted.out" &&
	ok "shifted: says nothing was sent through it" || failed "shifted: no next step"
check_line shifted PASS queues "1 pair:"
fault aliased 0:2:wrap:65536
check_line aliased FAIL map "board 0's view of board 2's region wraps every 65536 bytes: offset 0x[0-9a-f]+ \(its scratch head's magic\) shows what lies 65536 bytes lower"
fault writes-shifted 0:1:shift:64:write
check_line writes-shifted FAIL map "board 1's scratch area: board 0's writes land \+64 bytes from where they were aimed"
fault stuck 0:1:ones:16:write
check_line stuck FAIL map "board 1's scratch area: board 0's writes arrive with bits 0x10 stuck at one and 0 at zero"
fault lost 2:0:drop:0:write
check_line lost FAIL map "board 0's scratch area: nothing of board 2's writes arrived"
# board 2's own view of board 0's region is off: it does not answer (an
# answer is a write into board 0's region), and says why
fresh "$spec" $geo
SMQ_TEST_VIEW=2:0:shift:-4096 "$H" -w "$spec" check --only cross -T 3s \
	>"$T/silent.out" 2>"$T/silent.err"
rc=$?
check_exit silent 1
check_line silent FAIL map "board 2 did not answer within 3000 ms"
grep -q "board 2's view of board 0's region reads wrong (offset 0, the superblock's magic): it does not answer" "$T/silent.err" &&
	ok "silent: board 2 says why it does not answer" ||
	failed "silent: board 2 does not say why: $(cat "$T/silent.err")"

# (two boards: each pair whose doorbell is never delivered waits out the
# sleep slices of its pings, three seconds a pair)
boards=2
fresh "$spec" $geo
SMQ_TEST_SKIP=ring "$H" -w "$spec" check -T 60s --only doorbells >"$T/ring.out" 2>"$T/ring.err"; rc=$?
check_exit ring 1
check_line ring FAIL doorbells "board 1's doorbell, rung by board 0, was not delivered: [0-9] of [0-9] pings woke it only by itself, a sleep slice .* later; and other pairs"
grep -Eq "^ +1 +0  not delivered: " "$T/ring.out" && ok "ring: the pair 1 -> 0 in the table" ||
	failed "ring: no 'not delivered' row for 1 -> 0"
# the same, with each receiver slow between arming its sleep (it shows as
# sleeping) and its last look at its lanes: a ping sent in between would
# wake it without its doorbell, and a doorbell never delivered would pass
fresh "$spec" $geo
SMQ_TEST_SKIP=ring SMQ_TEST_ARMED_MS=50 "$H" -w "$spec" check -T 60s --only doorbells \
	>"$T/armed.out" 2>"$T/armed.err"; rc=$?
check_exit armed 1
check_line armed FAIL doorbells "board 1's doorbell, rung by board 0, was not delivered: [0-9] of [0-9] pings woke it only by itself"
boards=3

# a board whose diagnostic queue another program holds: taken for a
# board that waits with --peer, which never answers
fresh "$spec" $geo
bg_start "$S" -w "$spec" -b 2 pingpong --peer >/dev/null 2>&1
pp=$pid
wait_for 10 "board 2's pingpong --peer to receive" receivers 1
"$S" -w "$spec" check --only cross -T 2s >"$T/absent.out" 2>"$T/absent.err"; rc=$?
check_exit absent 1
check_line absent FAIL map "board 2 did not answer within 2000 ms"
grep -q "next: run 'smqctl --board 2 check --peer' on its host" "$T/absent.out" &&
	ok "absent: says what to run" || failed "absent: no next step"
stop_pid 10 $pp "board 2's pingpong --peer"

# a file: window whose board 1 ran on another host (a mount namespace
# gives its processes another boot id): the file may be memory both hosts
# share (CXL), so board 1 answers from its own host, not from an agent
# this host forks for it
echo "0badb007-5eed-4a11-8000-0000000$$" >"$T/boot_id"
other() {
	unshare --mount sh -c 'mount --bind "$0" /proc/sys/kernel/random/boot_id && exec "$@"' \
		"$T/boot_id" "$@"
}
if ! command -v unshare >/dev/null 2>&1 || ! other true 2>/dev/null; then
	skip_part "a file: board of another host" "cannot give a process another boot id here (unshare --mount, root)"
else
	F=file:$T/other.win
	"$S" -w "$F" init --force --boards 2 >/dev/null || failed "init $F"
	other "$S" -w "$F" -b 1 sync -T 20s >/dev/null 2>&1 &
	o1=$!
	track $o1
	"$S" -w "$F" sync -T 20s >/dev/null 2>&1 || failed "sync $F"
	wait_pid 30 $o1 "board 1's sync from another host"
	"$S" -w "$F" check --only cross -T 2s >"$T/otherhost.out" 2>"$T/otherhost.err"; rc=$?
	check_exit otherhost 1
	check_line otherhost FAIL map "board 1 did not answer within 2000 ms"
	other "$S" -w "$F" -b 1 check --peer -T 30s >"$T/otherpeer.out" 2>&1 &
	o1=$!
	track $o1
	"$S" -w "$F" check --only cross -T 20s >"$T/otherboth.out" 2>"$T/otherboth.err"; rc=$?
	check_exit otherboth 0
	wait_pid 30 $o1 "board 1's check --peer from another host"
fi

echo "figures of the shm: run (printed, never asserted):"
sed -n '/^doorbells:/,$p' "$T/all-shm.out" | sed 's/^/    /'
finish 46
