#!/bin/sh
# recv and send write nothing into a window that dump calls invalid.  A
# lane damaged as a stray write leaves it (one field of smq-format(7)'s dynamic
# checks at a time): dump names the field and exits 1; recv and send on
# that queue exit 1 naming the same field, deliver nothing, and leave
# every byte of the window as it was, so that dump still finds it; the
# reader written from smq(7) and smq-format(7) alone (smq7_reader.py --open)
# says the same of each open.  The case seen: the receiver's bottom
# lowered by one, where recv delivered a message already taken a second
# time, exited 0 and wrote over the evidence.  What a receiver that died
# between its two bottom writes leaves is no damage: recv takes it.
# Prints "ok"/"FAIL" per case; exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
command -v python3 >/dev/null 2>&1 && python3 -c '' 2>/dev/null ||
	skip "no python3: the reader of smq(7) is a Python program"
READER=$ROOT/tests/docs/smq7_reader.py
W=$T/w
export SMQ_WINDOW="file:$W"

# poke 'PYTHON': run PYTHON with the window's layout as the reader
# computes it from smq(7) (L), and get(offset) and put(offset, value) of
# 8-byte little-endian words of the window's file
poke() {
	python3 - "$W" "$1" "$READER" <<'EOF'
import os, sys
sys.path.insert(0, os.path.dirname(sys.argv[3]))
import smq7_reader as R
path, code = sys.argv[1], sys.argv[2]
L = R.layout_of(path)
def get(off):
    with open(path, "rb") as f:
        f.seek(off)
        return int.from_bytes(f.read(8), "little")
def put(off, value):
    with open(path, "r+b") as f:
        f.seek(off)
        f.write((value & ((1 << 64) - 1)).to_bytes(8, "little"))
exec(code)
EOF
}

# the reader's verdict on opening queue 1 as ROLE on BOARD: its fault's
# field, or ok
reader_open() {
	python3 "$READER" --open "file:$W" 1 "$1" "$2" 2>"$T/reader.err" |
		awk '{ print $1 == "ok" ? "ok" : $2 }'
}

# refused FIELD WHAT: dump, recv (board 1) and send (board 0) on queue 1
# all name FIELD, and the window is byte for byte as it was; the reader
# predicts both refusals
refused() {
	# the handle slots both boards' opens claim first freed naming
	# another queue: an open that claimed one before it refused changes it
	"$S" -b 0 send -q 0 --timeout 0 other >/dev/null 2>&1
	"$S" -b 1 send -q 0 --timeout 0 other >/dev/null 2>&1
	cp "$W" "$T/before"
	run dump -q 1
	want_rc 1
	want_err "$1"
	run -b 1 recv -q 1 --timeout 0
	want_rc 1
	want_no_out
	want_smqctl
	want_err "field $1"
	cmp -s "$T/before" "$W" ||
		no "recv changed $(cmp -l "$T/before" "$W" | wc -l) bytes"
	run -b 0 send -q 1 --timeout 0 more
	want_rc 1
	want_smqctl
	want_err "field $1"
	cmp -s "$T/before" "$W" ||
		no "send changed $(cmp -l "$T/before" "$W" | wc -l) bytes"
	for who in "receiver 1" "sender 0"; do
		# shellcheck disable=SC2086
		v=$(reader_open $who)
		[ "$v" = "$1" ] ||
			no "the reader says opening as $who meets '$v' $(cat "$T/reader.err")"
	done
	verdict "$2: dump, recv and send name $1, the reader too; nothing written"
}

"$S" init --boards 2 --queues 2 --entries 8 --entry-size 64 >/dev/null ||
	die "init"
"$S" send -q 1 one >/dev/null && "$S" send -q 1 two >/dev/null ||
	die "send"
run -b 1 recv -q 1 --count 1 --timeout 5
[ "$rc" = 0 ] && [ "$(cat "$T/out")" = one ] || die "recv of the first"
cp "$W" "$T/good"
for who in "receiver 1" "sender 0"; do
	# shellcheck disable=SC2086
	v=$(reader_open $who)
	[ "$v" = ok ] || no "the reader says opening as $who meets '$v' $(cat "$T/reader.err")"
done
verdict "the window as traffic left it: the reader opens queue 1 both ways"

# the case seen: the receiver's bottom one below the sender's copy
poke 'k = L.lane(1, 0); put(L.bottoms(1) + 8 * k, get(L.bottoms(1) + 8 * k) - 1)'
refused lane.flow_bottom "bottom[k] lowered by one"
run dump -q 1
want_rc 1
want_err "field lane.flow_bottom at offset"
want_err "holds 1 (at most 0)"
verdict "dump still says lane.flow_bottom holds 1 (at most 0)"

cp "$T/good" "$W"
poke 'put(L.lane_out(0, 1), get(L.lane_in(1, 0)) - 1)'
refused lane.sender_top "lane_out.top below lane_in.top"

cp "$T/good" "$W"
poke 'put(L.lane_in(1, 0), get(L.bottoms(1) + 8 * L.lane(1, 0)) + 9)'
refused lane.top "lane_in.top more than a ring past bottom[k]"

cp "$T/good" "$W"
poke 'put(L.lane_wake(0, 1) + 32, get(L.lane_wake(0, 1) + 32) + 1)'
refused lane.queue_epoch "a sender's copy of the epoch that disagrees"

cp "$T/good" "$W"
poke 'last = get(88)
for s in L.lane_boards(1):
    put(L.lane_wake(s, 1) + 32, last + 1)
put(L.rx[1] + 48, last + 1)'
refused queue.epoch "the queue's epoch past the last one handed out"

# a receiver that died between its two bottom writes: no damage, recv
# takes the next message and finishes the copy
cp "$T/good" "$W"
poke 'put(L.lane_fc(0, 1), get(L.lane_fc(0, 1)) - 1)'
for who in "receiver 1" "sender 0"; do
	# shellcheck disable=SC2086
	v=$(reader_open $who)
	[ "$v" = ok ] || no "the reader says opening as $who meets '$v'"
done
run -b 1 recv -q 1 --timeout 5
want_rc 0
want_out_is 'two\n'
run dump -q 1
want_rc 0
verdict "a receiver died between its bottom writes: recv takes 'two', the reader agrees, dump finds the copy finished"

finish 8
