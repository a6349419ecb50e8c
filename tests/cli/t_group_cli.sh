#!/bin/sh
# Groups as an operator meets them: init --group (and a description
# file's group lines) defines them, dump and its JSON show the same
# membership to every board; send --group reaches every queue and, with
# one queue full, names it and those that took the message; recv --group
# writes each message with its queue, the queues taking turns; the
# mistakes are refused with words that name them.
# Exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
need_command python3 "it reads the JSON"
W=file:$T/window
smq() { "$S" -w "$W" "$@"; }
# every recv is bounded: a wrong count fails, it does not hang
recv() { smq recv -T 2s "$@"; }

# queues 0 to 3 received by board 0, 4 by board 1
smq init -n 2 --queues 5 --entries 2 --entry-size 64 -r 1:0 -r 3:0 -r 4:1 \
	--group all=0,1,2,3 --group odd=3,1 --group far=0,4 >/dev/null ||
	die "init --group"
smq dump >"$T/dump.txt"
grep -Eq "features: ([a-z]+, )*groups" "$T/dump.txt" && grep -q "^all  *0,1,2,3$" "$T/dump.txt" &&
	grep -q "^odd  *3,1$" "$T/dump.txt" && ok "dump: the groups, in their order" ||
	failed "dump does not show the groups: $(sed -n '/groups:/,$p' "$T/dump.txt")"
smq -b 1 --json dump >"$T/dump.json"
python3 - "$T/dump.json" <<'EOF' && ok "dump --json of board 1: the same groups" || failed "dump --json groups"
import json, sys
d = json.load(open(sys.argv[1]))
assert "groups" in d["features"], d["features"]
assert d["groups"] == [{"name": "all", "queues": [0, 1, 2, 3]},
                       {"name": "odd", "queues": [3, 1]},
                       {"name": "far", "queues": [0, 4]}], d["groups"]
EOF

# one message to every queue of the group
smq send --group odd "to odd" || failed "send --group odd exit $?"
recv --group odd -c 2 >"$T/odd.txt" || failed "recv --group odd exit $?"
printf 'queue 3: to odd\nqueue 1: to odd\n' | cmp -s - "$T/odd.txt" &&
	ok "recv --group: each message with its queue, in the group's turn" ||
	failed "recv --group odd wrote: $(cat "$T/odd.txt")"

# queue 2 full (2 entries): the others take it, the call names queue 2
smq send -q 2 a && smq send -q 2 b || failed "fill queue 2"
smq send --group all -T 0.2 "to all" 2>"$T/err"
rc=$?
[ $rc = 1 ] && grep -q "group all: queue 2 stayed full: no room after 200 ms; queues 0, 1 and 3 took it" "$T/err" &&
	ok "send --group with a queue full: exit 1, names it and those that took it" ||
	failed "send --group with queue 2 full: exit $rc: $(cat "$T/err")"
# what each queue holds: one copy each, nothing twice
recv --group all -c 5 --json >"$T/all.json" || failed "recv --group all exit $?"
python3 - "$T/all.json" <<'EOF' && ok "recv --group --json: queues 0 1 2 3 2 in turn, one copy each" || failed "recv --group --json: $(cat "$T/all.json")"
import json, sys
got = [json.loads(l) for l in open(sys.argv[1])]
qs = [m["queue"] for m in got]
text = [bytes.fromhex(m["hex"]).decode() for m in got]
assert qs == [0, 1, 2, 3, 2], qs
assert text == ["to all", "to all", "a", "to all", "b"], text
EOF
recv --group all -T 0.1 -c 1 2>"$T/err"
rc=$?
[ $rc = 1 ] && grep -q "no message on group all after 100 ms" "$T/err" &&
	ok "recv --group on empty queues: exit 1, names the group" ||
	failed "recv --group empty: exit $rc: $(cat "$T/err")"

# mistakes
check_fail() { # WANT-RC WORDS COMMAND...
	want=$1 words=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc = "$want" ] && grep -q "$words" "$T/err" && ok "$* -> exit $rc: $words" ||
		failed "$*: exit $rc (want $want): $(cat "$T/err")"
}
check_fail 1 "board 0 does not receive" recv --group far
check_fail 1 "no group none in" smq send --group none x
check_fail 2 "exclude each other" smq send --group all -q 1 x
check_fail 2 "exclude each other" recv --group all -q 1
check_fail 2 "with --group use" recv --group all --null
check_fail 2 "queue 9 does not exist: 5 queues" smq init -n 2 --queues 5 --group x=1,9
check_fail 2 "queue 1 is in group x twice" smq init -n 2 --queues 5 --group x=1,1
check_fail 2 "is not a group name" smq init -n 2 --queues 5 --group "a b=1"
check_fail 2 "group x is given once already" smq init -n 2 --queues 5 --group x=1 --group x=2
check_fail 2 "'x=1,' is not a list of queue numbers" smq init -n 2 --queues 5 --group x=1,
check_fail 2 "is not a list of queue numbers" smq init -n 2 --queues 5 \
	--group x=000000000000000000000000000000004
# a long way of writing a number is that number, not its first digits
"$S" -w "file:$T/w4" init -n 2 --queues 5 --group x=0000000000000003 >/dev/null &&
	"$S" -w "file:$T/w4" dump >"$T/dump4.txt" && grep -q "^x  *3$" "$T/dump4.txt" &&
	ok "init --group x=0000000000000003: queue 3" ||
	failed "init --group x=0000000000000003: $(sed -n '/groups:/,$p' "$T/dump4.txt")"

# a description file's group lines, and --keep holding the groups to it
cat >"$T/shape.conf" <<EOF
boards 2
queues 5
entries 2
entry-size 64
receiver 1:0
receiver 3:0
receiver 4:1
group all=0,1,2,3
group odd=3,1
group far=0,4
EOF
"$S" -w "file:$T/w2" init --from "$T/shape.conf" >/dev/null || failed "init --from with groups"
"$S" -w "file:$T/w2" init --from "$T/shape.conf" --keep >"$T/keep.txt" &&
	grep -q "^kept" "$T/keep.txt" && ok "init --from --keep: the same groups kept" ||
	failed "init --keep: $(cat "$T/keep.txt")"
sed 's/group odd=3,1/group odd=1,3/' "$T/shape.conf" >"$T/shape2.conf"
"$S" -w "file:$T/w2" init --from "$T/shape2.conf" --keep >"$T/keep.txt"
grep -q "its group 1 is odd=3,1, not odd=1,3" "$T/keep.txt" &&
	ok "init --keep: other members, formatted, and why" ||
	failed "init --keep with other members: $(cat "$T/keep.txt")"
printf 'boards 2\nqueues 5\ngroup a=1\ngroup a=2\n' >"$T/bad.conf"
check_fail 1 "bad.conf:4: group: group a is given on an earlier line" \
	"$S" -w "file:$T/w3" init --from "$T/bad.conf"

finish 21
