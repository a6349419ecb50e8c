#!/bin/sh
# smq(7) and smq-format(7) are enough to write a reader from them alone:
# tests/docs/smq7_reader.py, written from the pages, decodes windows
# (superblock, checksum, queue table and sender sets, board table, control
# blocks, lanes, rings, journals), makes the numbered checks and judges boards and receivers, and must agree
# with `smqctl dump -v --json` on every value: a fresh window, one with
# traffic, sender sets, a split window, a window with checksums and a
# message damaged in it, live, dead, away and other hosts' processes, and
# windows with a field damaged for each check it can reach.  It reads
# every board's journal as the pages say a reader does, and must say what
# `smqctl --json events --since all` says of them, entry for entry, key for
# key: after every kind of entry the library writes, on a journal that
# wrapped (the same count lost), with an entry damaged (said damaged, and
# nothing else changed), and with one abandoned by a writer killed in it.
# Exit 0 pass, 1 fail, 77 skip (no smqctl built, no python3).
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
command -v python3 >/dev/null 2>&1 && python3 -c '' 2>/dev/null ||
	skip "no python3: the reader is a Python program"
[ -r /proc/self/stat ] || skip "no /proc: the reader judges tags by it"
READER=$ROOT/tests/docs/smq7_reader.py
cd "$T" || exit 1
unset SMQ_WINDOW SMQ_DEBUG 2>/dev/null

# One Python process serves every Python run of the script (the reader,
# poke, the one-liners), each at once, in a child of its own that starts
# from smq7_reader freshly imported (tests/docs/smq7_serve.py): an
# interpreter started for each took most of the script's time.  It talks
# through two FIFOs of T, on descriptors 7 (requests) and 8 (replies).
mkfifo "$T/serve.req" "$T/serve.rep" || die "mkfifo"
bg_start python3 "$ROOT/tests/docs/smq7_serve.py" "$T/serve.req" \
	"$T/serve.rep" "$T/serve.up" $((60 * ${SMQ_TEST_SLOW:-1}))
SERVER=$pid
serve_up() { [ -e "$T/serve.up" ] || ended "$SERVER"; }
if ! wait_for 10 "the Python server (pid $SERVER) to start" serve_up ||
   [ ! -e "$T/serve.up" ]; then
	die "the Python server (pid $SERVER) did not start"
fi
# (neither open waits: the server holds both FIFOs open, read and write;
# when it ends, nothing writes to serve.rep and a read meets its end)
exec 7<>"$T/serve.req" 8<"$T/serve.rep"
# serve OUT ERR IN reader ARG... | serve OUT ERR IN py CODE ARG...: as
# `python3 "$READER" ARG...` or `python3 -c CODE ARG...`, its standard
# output in the file OUT, its error in ERR ("" for either: the script's)
# and its input from IN ("": /dev/null); its exit status (128 + a signal;
# one that runs past 60 s, times slow, is killed).  If the server has
# ended: a failure, and the script stops.
serve() {
	printf '%s\0' "$#" "$@" >&7
	if ! read -r _serve_rc <&8; then
		wait_pid 10 "$SERVER" "the Python server, gone"
		die "the Python server (pid $SERVER) ended (exit $rc): no answer to $4 ${5%%
*}"
	fi
	return "$_serve_rc"
}

# compare NAME SPEC [FIELD]: dump -v --json of SPEC and the reader agree;
# with FIELD, dump found a fault in that field (exit 1), else none (0).
compare() {
	"$S" dump -v --json -w "$2" >"$T/dump.json" 2>"$T/dump.err"
	rc=$?
	if [ "$rc" -ne "$([ -n "${3:-}" ] && echo 1 || echo 0)" ]; then
		failed "$1: dump exit $rc${3:+, expected a fault in $3}"
		sed 's/^/       /' "$T/dump.err"
	elif serve "$T/cmp" "$T/cmp" "" reader --compare "$T/dump.json" "$2" \
		"${3:-}"; then
		ok "$1: $(tail -n 1 "$T/cmp" | sed 's/^ *//')${3:+ (fault $3)}"
	else
		failed "$1: the reader and dump disagree"
		sed 's/^/     /' "$T/cmp"
	fi
}

# poke FILE 'PYTHON': run PYTHON with the window's layout as the reader
# computes it (L), its superblock (sb) and put(offset, bytes, value) to
# store a little-endian integer into FILE.
POKE='import os, struct, sys
sys.path.insert(0, os.path.dirname(sys.argv[3]))
import smq7_reader as R
path, code = sys.argv[1], sys.argv[2]
L = R.layout_of(path)
sb = open(path, "rb").read(4096)
def put(off, size, value):
    with open(path, "r+b") as f:
        f.seek(off)
        f.write((value & ((1 << 8 * size) - 1)).to_bytes(size, "little"))
def sign():
    R.store_checksum("file:" + path)
exec(code)'
poke() {
	serve "" "" "" py "$POKE" "$1" "$2" "$READER"
}

# events_agree NAME SPEC SINCE TIME [KIND...] [-- READER-OPTION...]: the
# "source": "journal" lines of `smqctl --json events --since SINCE -T TIME
# $EVENTS_MORE` (every key but time_ns and text) are the reader's, in the
# same order; and among them are events of each KIND.  events replays a
# journal whole at its first look, which TIME does not cut short (at most
# 512 entries of a board a look; these journals hold 256 or 16), and no
# process writes to the window while it follows: TIME 0.1 bounds a wait
# that nothing fills.  Only an entry abandoned needs more (said a second
# of events' clock after it found it: 2).
events_agree() {
	_n=$1 _spec=$2 _since=$3 _time=$4
	shift 4
	_kinds=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do _kinds="$_kinds $1"; shift; done
	[ $# -gt 0 ] && shift
	"$S" --json events -w "$_spec" --since "$_since" -T "$_time" \
		${EVENTS_MORE:-} >"$T/ev.json" 2>"$T/ev.err"
	_rc=$?
	if [ $_rc -ne 0 ]; then
		failed "$_n: events exit $_rc"
		sed 's/^/       /' "$T/ev.err"
		return
	fi
	if ! serve "$T/evcmp" "$T/evcmp" "" reader --compare-events \
		"$T/ev.json" --since "$_since" "$@" "$_spec"; then
		failed "$_n: the reader and events disagree on the journals"
		sed 's/^/     /' "$T/evcmp"
		return
	fi
	for _k in $_kinds; do
		grep -q "\"event\": \"$_k\", .*\"source\": \"journal\"" \
			"$T/ev.json" || { failed "$_n: no $_k in the journals"; return; }
	done
	ok "$_n: $(tail -n 1 "$T/evcmp" | sed 's/^ *//')"
}

# ---- a fresh window ----
W=$T/w
"$S" init -w "file:$W" --boards 3 --queues 4 --entries 16 \
	--entry-size 100 >/dev/null || die "init"
compare "fresh window" "file:$W"
events_agree "fresh window: the journals" "file:$W" all 0.1 generation

# ---- traffic: every board sends, receivers take some, a lane full ----
for b in 0 1 2; do
	for q in 0 1 2 3; do
		for n in 1 2 3; do
			"$S" send -w "file:$W" -b $b -q $q "m$b.$q.$n of $n" ||
				failed "send $b $q"
		done
	done
done
"$S" recv -w "file:$W" -b 0 -q 0 -c 4 -T 1s >/dev/null || failed "recv q0"
"$S" recv -w "file:$W" -b 1 -q 1 -c 9 -T 1s >/dev/null || failed "recv q1"
for n in 1 2 3 4 5 6 7 8 9 10 11 12 13; do
	"$S" send -w "file:$W" -b 1 -q 3 "fill $n" || failed "fill"
done
# the lane of board 1 on queue 3 is full: refused at once, twice
"$S" send -w "file:$W" -b 1 -q 3 -T 0 "no room" 2>/dev/null &&
	failed "a send on a full lane succeeded"
"$S" send -w "file:$W" -b 1 -q 3 -T 0 "no room" 2>/dev/null
"$S" send -w "file:$W" -b 2 -q 4 "on a diagnostic queue" ||
	failed "send diag"
compare "traffic" "file:$W"
events_agree "traffic: the journals" "file:$W" all 0.1 sender_attached \
	sender_gone receiver_attached receiver_gone queue_full queue_drained
cp "$W" "$T/base"

# ---- sender sets and receivers ----
"$S" init -w "file:$T/sets" --boards 4 --queues 5 --entries 8 \
	--entry-size 48 --senders 0:1 --senders 1:0,2,3 --senders 3:3 \
	-r 2:3 -r 4:0 >/dev/null || failed "init with sender sets"
"$S" send -w "file:$T/sets" -b 1 -q 0 "one" && "$S" send -w "file:$T/sets" \
	-b 3 -q 1 "two" && "$S" send -w "file:$T/sets" -b 3 -q 3 "three" ||
	failed "send on sender sets"
compare "sender sets" "file:$T/sets"
events_agree "sender sets: the journals" "file:$T/sets" all 0.1 \
	sender_attached

# ---- groups: the group table in tables_extra, each of its checks ----
"$S" init -w "file:$T/groups" --boards 2 --queues 4 --entries 8 \
	--entry-size 48 --group all=0,1,2,3 --group two=3,1 >/dev/null ||
	failed "init with groups"
compare "groups" "file:$T/groups"
events_agree "groups: the journals" "file:$T/groups" all 0.1 generation
gcorrupt() {
	cp "$T/groups" "$T/g"
	poke "$T/g" "G = L.tables_end - L.tables_extra; $3; sign()"
	compare "$1" "file:$T/g" "$2"
}
gcorrupt "21: no group" group_head.groups "put(G, 4, 0)"
gcorrupt "21: 1025 groups" group_head.groups "put(G, 4, 1025)"
gcorrupt "21: members past tables_extra" group_head.members \
	"put(G + 4, 4, 2000)"
gcorrupt "21: a name not of its letters" group.name "put(G + 64, 1, 0x20)"
gcorrupt "21: a name not ended by NULs" group.name \
	"put(G + 64 + 5, 1, ord('x'))"
gcorrupt "21: a name twice" group.name "put(G + 128, 4, 0x6c6c61)"
gcorrupt "21: first" group.first "put(G + 128 + 32, 4, 3)"
gcorrupt "21: a count of 0" group.count "put(G + 64 + 36, 4, 0)"
gcorrupt "21: a count past the members" group.count \
	"put(G + 128 + 36, 4, 3)"
gcorrupt "21: a member that is not an application queue" group.member \
	"put(G + 192 + 4, 4, 4)"
gcorrupt "21: a member twice" group.member "put(G + 192 + 4, 4, 0)"
gcorrupt "21: members not the sum" group_head.members "put(G + 4, 4, 7)"
cp "$T/sets" "$T/g"
poke "$T/g" "put(20, 4, 1); sign()"
compare "21: the feature without a table" "file:$T/g" tables_extra

# ---- checked payloads: a message damaged in a window with checksums ----
# validation does not judge a check, so dump shows no fault; the reader
# sums every queued entry (smq(7) Checked payloads) and names the one its
# receiver will refuse; recv refuses it, and both count it in corrupt
CK=$T/ck
"$S" init -w "file:$CK" --boards 2 --queues 2 --entries 8 --entry-size 64 \
	--checksum >/dev/null || failed "init --checksum"
for m in first second third; do
	"$S" send -w "file:$CK" -b 1 -q 0 "$m" || failed "send $m"
done
"$S" send -w "file:$CK" -b 0 -q 0 "from board 0" || failed "send"
compare "checksums: four messages queued" "file:$CK"
grep -q "damaged:" "$T/cmp" && failed "checksums: the reader calls a whole message damaged"
cp "$CK" "$T/ck-size"
poke "$CK" "
e = L.entry(0, 1, 1)
b = open(path, 'rb').read()[e + 18]
put(e + 18, 1, b ^ 0x10)"
compare "checksums: a payload byte flipped in the ring" "file:$CK"
grep -q "damaged: queue 0, board 1, sequence 1 at " "$T/cmp" &&
	ok "checksums: the reader finds the damaged message (dump does not say)" ||
	failed "checksums: the reader does not find the damaged message"
"$S" recv -w "file:$CK" -b 0 -q 0 -c 3 -T 2s >"$T/got" 2>"$T/err"
rc=$?
if [ $rc -eq 1 ] &&
   [ "$(sort "$T/got" | tr '\n' ,)" = "first,from board 0,third," ] &&
   grep -q "the message from board 1 on queue 0 (6 bytes) failed its checksum" "$T/err"; then
	ok "checksums: recv refuses the damaged message, names it, exits 1"
else
	failed "checksums: recv exit $rc, wrote '$(cat "$T/got")', said '$(cat "$T/err")'"
fi
compare "checksums: after recv refused it" "file:$CK"
events_agree "checksums: the journals, a damaged message refused" \
	"file:$CK" all 0.1 messages_corrupt
serve "$T/ck.json" "" "" reader "file:$CK"
if serve "" "" "$T/ck.json" py 'import json, sys
q = json.load(sys.stdin)["queue_table"][0]
sys.exit((q["corrupt"], q["received"], q["damaged"]) != (1, 3, []))'; then
	ok "checksums: the reader counts corrupt 1 and received 3, and no damage left"
else
	failed "checksums: the reader's corrupt, received or damaged are wrong"
fi
poke "$T/ck-size" "put(L.entry(0, 1, 2), 4, 65)"
compare "checksums: a size past entry_size is still check 26's" \
	"file:$T/ck-size" entry.size

# ---- a split window: a shared memory object per board ----
# (the geometry of smq(7)'s example of mapped_size)
split=0
if [ -d /dev/shm ] && "$S" init -w "split:$SHM" --boards 3 --queues 3 \
	--entries 4 --entry-size 1K --no-scratch --journal 0 >/dev/null 2>&1; then
	split=4
	"$S" send -w "split:$SHM" -b 2 -q 0 "across" ||
		failed "send on the split window"
	compare "split window" "split:$SHM"
	# no journal: events has nothing to replay (and says so), the
	# reader none to read
	if "$S" --json events -w "split:$SHM" --since all -T 0.1 \
		>"$T/ev.json" 2>"$T/ev.err"; then
		failed "split window without journals: events --since all replays"
	elif ! grep -q "journal" "$T/ev.err" ||
	     { serve "$T/rd.out" "" "" reader --events "split:$SHM"
	       [ -n "$(cat "$T/rd.out")" ]; }; then
		failed "split window without journals: events said '$(cat "$T/ev.err")', or the reader read a journal"
	else
		ok "split window without journals: neither events nor the reader replays one"
	fi
	serve "" "" "" py 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit((d["mapped_size"], d["window_size"]) != (114688, 364544))' \
		"$T/dump.json" &&
		ok "split: mapped_size 114688, window_size 364544, as smq(7) says" ||
		failed "split: mapped_size and window_size are not smq(7)'s"
	cp /dev/shm/"$SHM".0 "$T/obj0"
	serve "" "" "" py 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(24)
    f.write(bytes(4))' /dev/shm/"$SHM".0
	compare "split window, 0 boards: only NAME.0 mapped" "split:$SHM" boards
	cp "$T/obj0" /dev/shm/"$SHM".0
else
	note "no split window here (/dev/shm): not compared"
fi

# ---- who is at work: a live receiver, then killed ----
bg_start "$S" recv -w "file:$W" -b 1 -q 1 -c 1 -T 60s >/dev/null 2>&1
RECV=$pid
# waiting_on_1: the dump says queue 1's receiver waits
waiting_on_1() {
	"$S" dump --json -w "file:$W" >"$T/wait.json" 2>/dev/null
	serve "" "" "$T/wait.json" py 'import json, sys
d = json.load(sys.stdin)
sys.exit(d["queue_table"][1]["receiver_state"] != "waiting")'
}
wait_for 10 "the receiver (pid $RECV) to wait on queue 1" waiting_on_1
# the receiver beats while it waits: both read the same copy
cp "$W" "$T/live"
compare "a live receiver, waiting" "file:$T/live"
kill -9 $RECV
wait_pid 10 $RECV "the receiver, killed"
cp "$W" "$T/dead"
compare "a receiver killed" "file:$T/dead"
# the next receiver takes the dead one's claim over, and says so
"$S" recv -w "file:$W" -b 1 -q 1 -T 0.1 >/dev/null 2>&1
events_agree "a receiver's claim taken over: the journals" "file:$W" all 0.1 \
	takeover

# ---- judgement from fields: live and dead tags, away, a lock, a waiter ----
bg_start sleep 300      # a process that lives: its pid a live tag
LIVE=$pid
bg_start sh -c 'exit 0'
GONE=$pid
wait_pid 10 $GONE "a process that ends at once"
cp "$T/base" "$T/judge"
poke "$T/judge" "
boot = R.boot_hash()
live, gone = R.tag_of($LIVE, boot), R.tag_of($GONE, boot) | 5
gen = R.u64(sb, 64)
c0, c2 = R.CTL_OFF, R.CTL_OFF + 2 * R.PAGE
# board 0: a live queue handle and a dead window handle; board 2: dead only
for at, tag, kind in ((c0 + 128, live, 2), (c0 + 192, gone, 1),
                      (c2 + 128 + 64 * 61, gone, 2)):
    put(at, 8, tag); put(at + 8, 8, boot); put(at + 20, 4, kind)
    put(at + 24, 8, gen); put(at + 36, 4, 0); put(at + 40, 4, 1)
put(R.BOARD_TABLE + 56, 8, live)          # board 0's announcer lives
put(R.BOARD_TABLE + 24, 8, boot)
put(R.BOARD_TABLE + 256 + 56, 8, gone)    # board 2's is gone
put(R.BOARD_TABLE + 256 + 24, 8, boot)
# queue 0: a live receiver between calls (away); queue 3: waiting, asleep
for q, waiting in ((0, 0), (3, 1)):
    put(L.rx[q] + 8, 8, live); put(L.rx_info(q) + 16, 8, boot)
    put(L.rx_info(q) + 4, 4, waiting)
put(L.rx[3] + 56, 8, 7)
# a lane lock held; a sender waiting for room past a wrapped space_bell
put(L.lane_out(1, 3) + 8, 8, live)
put(L.lane_wake(1, 3) + 24, 4, 0xffffffff)
put(L.lane_ask(3, 1), 8, 0x100000000)
# a host name of 64 bytes has no NUL; doorbells of each kind
put(R.BOARD_TABLE + 128 + 64, 8, int.from_bytes(b'abcdefgh', 'little'))
for i in range(8):
    put(R.BOARD_TABLE + 128 + 64 + 8 * i, 8,
        int.from_bytes(b'hostname', 'little'))
put(R.BOARD_TABLE + 128 + 40, 2, 2); put(R.BOARD_TABLE + 128 + 44, 4, 7)
put(R.BOARD_TABLE + 256 + 40, 2, 1); put(R.BOARD_TABLE + 256 + 44, 4, 9)
"
compare "live, dead and away processes from their tags" "file:$T/judge"

# ---- another host: judged by heartbeats, watched for 5 s ----
cp "$T/base" "$T/far"
poke "$T/far" "
far, tag = 0x1234, 4242 << 32 | 77
gen = R.u64(sb, 64)
c1 = R.CTL_OFF + R.PAGE
put(c1 + 128, 8, tag); put(c1 + 136, 8, far); put(c1 + 148, 4, 1)
put(c1 + 152, 8, gen)
s1 = R.BOARD_TABLE + 128
put(s1 + 24, 8, far); put(s1 + 32, 8, tag); put(s1 + 56, 8, tag)
put(s1 + 16, 8, 5)
# queue 1 (board 1): a receiver between calls; its diagnostic queue 5:
# one that waits; both of the far host
for q, waiting in ((1, 0), (5, 1)):
    put(L.rx[q] + 8, 8, tag); put(L.rx_info(q) + 16, 8, far)
    put(L.rx_info(q) + 4, 4, waiting); put(L.rx_info(q) + 40, 8, 3)
"
compare "another host's board and receivers" "file:$T/far"

# ---- damage: each check the reader makes, against dump's fault ----
# corrupt NAME FIELD 'PYTHON': a copy of the traffic window, changed
corrupt() {
	cp "$T/base" "$T/c"
	poke "$T/c" "$3"
	compare "$1" "file:$T/c" "$2"
}
head -c 5 "$T/base" >"$T/c"
compare "1: 5 bytes" "file:$T/c" magic
corrupt "2: a zero magic" magic "put(0, 8, 0)"
corrupt "3: a wrong magic" magic "put(0, 1, ord('X'))"
head -c 200 "$T/base" >"$T/c"
compare "4: no superblock page" "file:$T/c" window_size
corrupt "5: version 2" version "put(8, 4, 2)"
corrupt "6: sb_size" sb_size "put(12, 4, 256)"
corrupt "7: an unknown incompatible feature" features_incompat \
	"put(16, 4, 0x80000040)"
corrupt "7: a compatible one is ignored" "" "put(20, 4, 0x10); sign()"
corrupt "7: bits 0 to 2 are known (checksum, journal, membarrier)" "" \
	"put(16, 4, 7); sign()"
corrupt "8: tables_extra" tables_extra "put(192, 8, 100)"
corrupt "8: body_extra" body_extra "put(200, 8, 1 << 41)"
corrupt "8: journal_entries past 65536" journal_entries "put(208, 4, 131072)"
corrupt "8: journal_entries below 16" journal_entries "put(208, 4, 8)"
corrupt "8: journal_entries not a power of two" journal_entries \
	"put(208, 4, 300)"
corrupt "8: journal_entries without the feature" journal_entries \
	"put(16, 4, 0)"
corrupt "8: body_extra short of the journal and the scratch area" body_extra \
	"put(200, 8, 69632)"
corrupt "9: 0 boards" boards "put(24, 4, 0)"
corrupt "9: 65 boards" boards "put(24, 4, 65)"
corrupt "9: diag_queues" diag_queues "put(48, 4, 2)"
corrupt "9: too few queues" queues "put(28, 4, 3)"
corrupt "9: too many queues" queues "put(28, 4, 70000)"
corrupt "9: entries past 2^20" entries "put(32, 4, 1 << 21)"
corrupt "9: entries not a power of two" entries "put(32, 4, 5)"
corrupt "9: 0 entries" entries "put(32, 4, 0)"
corrupt "9: entry_size" entry_size "put(36, 4, (1 << 24) + 1)"
head -c 274440 "$T/base" >"$T/c"
compare "10: no queue table" "file:$T/c" window_size
corrupt "11: the checksum" checksum "put(220, 1, 1)"
corrupt "12: diag_entries" diag_entries "put(52, 4, 8); sign()"
corrupt "13: an index" queue_table.index "put(R.QUEUE_TABLE + 16, 4, 7); sign()"
corrupt "13: a receiver" queue_table.receiver \
	"put(R.QUEUE_TABLE + 4, 2, 3); sign()"
corrupt "13: flags" queue_table.flags "put(R.QUEUE_TABLE + 6, 2, 1); sign()"
corrupt "13: a diagnostic queue's receiver" queue_table.receiver \
	"put(R.QUEUE_TABLE + 16 * 5 + 4, 2, 0); sign()"
corrupt "13: an empty sender set" queue_table.senders \
	"put(R.QUEUE_TABLE + 8, 8, 0); sign()"
corrupt "13: a sender that does not exist" queue_table.senders \
	"put(R.QUEUE_TABLE + 8, 8, 0x11); sign()"
corrupt "13: a diagnostic queue's senders" queue_table.senders \
	"put(R.QUEUE_TABLE + 16 * 4 + 8, 8, 3); sign()"
corrupt "14: a layout past 2^46" window_size \
	"put(32, 4, 1 << 20); put(36, 4, 1 << 24); put(56, 4, 65536); sign()"
corrupt "15: window_size" window_size "put(40, 8, R.u64(sb, 40) + 4096); sign()"
head -c 300000 "$T/base" >"$T/c"
compare "16: a truncated body" "file:$T/c" window_size
corrupt "17: generation 0" generation "put(64, 8, 0)"
corrupt "17: generation past 2^32" generation "put(64, 8, 1 << 32)"
corrupt "17: maint_queue" maint_queue "put(148, 4, 8)"
corrupt "17: system_state" system_state "put(72, 4, 3)"
corrupt "17: maint_phase" maint_phase "put(144, 4, 3)"
corrupt "18: board.state" board.state "put(R.BOARD_TABLE + 128, 4, 3)"
corrupt "18: board.generation" board.generation \
	"put(R.BOARD_TABLE + 256 + 8, 8, 2)"
corrupt "18: board.doorbell" board.doorbell "put(R.BOARD_TABLE + 40, 2, 3)"
corrupt "18: notice.generation" notice.generation \
	"put(R.CTL_OFF + 2 * R.PAGE, 8, 2)"
corrupt "18: notice.check" notice.check "put(R.CTL_OFF + 4096 + 16, 8, 1)"
corrupt "18: notice.system_state" notice.system_state \
	"put(R.CTL_OFF + 8, 4, 3)"
corrupt "18: handle.kind" handle.kind "put(R.CTL_OFF + 128 + 64 * 5 + 20, 4, 3)"
corrupt "18: handle.role" handle.role "put(R.CTL_OFF + 128 + 40, 4, 3)"
corrupt "18: handle.queue" handle.queue "
h = R.CTL_OFF + R.PAGE + 128 + 64 * 3
put(h, 8, 99 << 32 | 1); put(h + 20, 4, 2); put(h + 24, 8, 1)
put(h + 36, 4, 7)"
corrupt "18: a stale handle's queue is not checked" "" "
h = R.CTL_OFF + R.PAGE + 128 + 64 * 3
put(h, 8, 99 << 32 | 1); put(h + 20, 4, 2); put(h + 24, 8, 0)
put(h + 36, 4, 70)"
corrupt "19: queue.index" queue.index "put(L.rx[2], 4, 9)"
corrupt "19: queue.cursor" queue.cursor "put(L.rx[2] + 4, 4, 3)"
corrupt "19: rx_info.waiting" rx_info.waiting "put(L.rx_info(6) + 4, 4, 2)"
# check 20: each board's journal head, in the order of its fields
corrupt "20: journal.magic" journal.magic "put(L.journal(1), 1, ord('X'))"
corrupt "20: journal.board" journal.board "put(L.journal(2) + 8, 4, 1)"
corrupt "20: journal.slots" journal.slots "put(L.journal(0) + 12, 4, 128)"
corrupt "20: journal.check" journal.check "put(L.journal(1) + 24, 8, 5)"
corrupt "20: journal.incarnation" journal.incarnation "
J = L.journal(2)
h = bytearray(open(path, 'rb').read()[J:J + 32])
h[16:24] = bytes(8)
put(J + 16, 8, 0); put(J + 32, 4, R.crc32c(bytes(h)))"
corrupt "20: an incarnation of 0 under its old check: the check first" \
	journal.check "put(L.journal(2) + 16, 8, 0)"
corrupt "20: journal.head" journal.head "put(L.journal(0) + 40, 8, 0)"
corrupt "20: a damaged entry is not the window's fault" "" \
	"put(L.journal_slot(0, 2) + 48, 8, 12345)"
corrupt "22: an epoch of 0" queue.epoch "put(L.rx[1] + 48, 8, 0)"
corrupt "22: an epoch past epoch_last" queue.epoch \
	"put(L.rx[1] + 48, 8, R.u64(sb, 88) + 1)"
corrupt "22: a copy of the epoch" lane.queue_epoch \
	"put(L.lane_wake(2, 1) + 32, 8, 5)"
corrupt "23: lane.flow_bottom" lane.flow_bottom "put(L.lane_fc(0, 0), 8, 3)"
corrupt "24: lane.top" lane.top "put(L.lane_in(2, 1), 8, 40)"
corrupt "24: a bottom more than a ring past top" lane.top \
	"put(L.bottoms(2) + 8, 8, 40)"
corrupt "25: lane.sender_top more than a ring ahead" lane.sender_top \
	"put(L.lane_out(0, 2), 8, 40)"
corrupt "25: a sender past a full ring" lane.sender_top \
	"put(L.lane_out(1, 3), 8, 17)"
corrupt "25: a sender more than two rings past the copy of bottom" \
	lane.sender_top "put(L.bottoms(3) + 8, 8, 17); \
	put(L.lane_in(3, 1), 8, 33); put(L.lane_out(1, 3), 8, 33)"
corrupt "25: lane.rx_polls above 2" lane.rx_polls \
	"put(L.lane_wake(1, 2) + 28, 4, 3)"
corrupt "25: lane.rx_polls of 2 is being taken back" "" \
	"put(L.lane_wake(1, 2) + 28, 4, 2)"
corrupt "26: entry.signature" entry.signature \
	"put(L.entry(2, 1, 1) + 8, 8, 1)"
corrupt "26: entry.size" entry.size "put(L.entry(3, 1, 10), 4, 101)"
corrupt "26: entry.check" entry.check "put(L.entry(3, 1, 10) + 4, 4, 1)"
corrupt "26: a signed entry at top" entry.size "
e = L.entry(1, 0, 3)
put(e + 8, 8, R.signature(R.u64(sb, 88), 1, 0, 3)); put(e, 4, 500)"
corrupt "26: an unsigned entry at top is not checked" "" \
	"put(L.entry(1, 0, 3), 4, 500)"
corrupt "28: system_state 0" system_state "put(72, 4, 0)"
corrupt "29: a notice of generation 0" notice.generation \
	"put(R.CTL_OFF + R.PAGE, 8, 0); put(R.CTL_OFF + R.PAGE + 16, 8, 0)"

# ---- usable: past the open, no call reads maint_phase or the ----
# superblock's system_state; an open of a board reads maint_phase, and
# refuses the window as validation says it (smq(7), GENERATIONS)
cp "$T/base" "$T/c"
poke "$T/c" "put(72, 4, 0)"
if "$S" send -w "file:$T/c" -b 2 -q 1 "still" &&
   "$S" recv -w "file:$T/c" -b 1 -q 1 -T 1s >"$T/got" &&
   [ "$(cat "$T/got")" = still ]; then
	ok "usable: send and recv proceed past put(72, 4, 0)"
else
	failed "usable: send or recv refused after put(72, 4, 0)"
fi
cp "$T/base" "$T/c"
poke "$T/c" "put(144, 4, 1)"
if "$S" send -w "file:$T/c" -b 2 -q 1 "still" 2>"$T/err"; then
	failed "opens: send proceeds past put(144, 4, 1)"
elif grep -q "did not finish" "$T/err"; then
	ok "opens: a board's open refuses put(144, 4, 1) as unfinished"
else
	failed "opens: send refused past put(144, 4, 1), but not as unfinished"
	sed 's/^/       /' "$T/err"
fi

# ---- maintenance: what a fault found during one names ----
# live: the tag of a process of this host that lives; dead: of one gone
LIVE_SB="boot = R.boot_hash(); put(128, 8, R.tag_of($LIVE, boot)); put(136, 8, boot)"
DEAD_SB="boot = R.boot_hash(); put(128, 8, R.tag_of($GONE, boot)); put(136, 8, boot)"
FAR_SB="put(128, 8, R.tag_of($LIVE, R.boot_hash())); put(136, 8, 0x1234)"
corrupt "27: an init left unfinished" maint_phase "$DEAD_SB; put(144, 4, 1)"
corrupt "27: an init running here" maint_phase "$LIVE_SB; put(144, 4, 2)"
corrupt "27: an init running elsewhere" maint_phase "$FAR_SB; put(144, 4, 1)"
corrupt "27: a tag whose start time differs" maint_phase "
boot = R.boot_hash(); put(128, 8, R.tag_of($LIVE, boot) ^ 1)
put(136, 8, boot); put(144, 4, 1)"
corrupt "9 under a dead init: unfinished" maint_phase \
	"$DEAD_SB; put(144, 4, 1); put(24, 4, 0)"
corrupt "9 under a live init: busy" maint_phase \
	"$LIVE_SB; put(144, 4, 1); put(24, 4, 0)"
corrupt "3 under a live init: as found" magic \
	"$LIVE_SB; put(144, 4, 1); put(0, 1, ord('X'))"
corrupt "5 under a live init: as found" version \
	"$LIVE_SB; put(144, 4, 1); put(8, 4, 2)"
corrupt "2 under a dead init: as found" magic \
	"$DEAD_SB; put(144, 4, 1); put(0, 8, 0)"
corrupt "2 under a live init: busy" maint_phase \
	"$LIVE_SB; put(144, 4, 1); put(0, 8, 0)"
cp "$T/base" "$T/c"
poke "$T/c" "$LIVE_SB; put(144, 4, 1)"
head -c 200 "$T/c" >"$T/c2"
compare "4 under a live init: as found" "file:$T/c2" window_size
corrupt "22 in a clear of that queue, dead" maint_phase \
	"$DEAD_SB; put(144, 4, 1); put(148, 4, 2); put(L.rx[1] + 48, 8, 0)"
corrupt "22 in a clear of that queue, live" maint_phase \
	"$LIVE_SB; put(144, 4, 2); put(148, 4, 2); put(L.rx[1] + 48, 8, 0)"

# ---- journals: startup, maintenance, a new boot, a new layout ----
J=$T/j
"$S" init -w "file:$J" --boards 3 --queues 2 --entries 4 --entry-size 64 \
	>/dev/null || failed "init of the journals' window"
# a sync of board 1 alone gives up (boards 0 and 2 never came)
"$S" sync -w "file:$J" -b 1 -T 0.3 >/dev/null 2>&1 &&
	failed "a sync of board 1 alone succeeded"
# sync_all: every board synchronises; board 0 declares the system ready
sync_all() {
	bg_start "$S" sync -w "file:$J" -b 1 -T 20s >/dev/null 2>&1
	_p1=$pid
	bg_start "$S" sync -w "file:$J" -b 2 -T 20s >/dev/null 2>&1
	_p2=$pid
	"$S" sync -w "file:$J" -b 0 -T 20s >/dev/null 2>&1 ||
		failed "sync of board 0 ($1)"
	wait_pid 20 $_p1 "sync of board 1 ($1)"
	[ "$rc" -eq 0 ] || failed "sync of board 1 ($1): exit $rc"
	wait_pid 20 $_p2 "sync of board 2 ($1)"
	[ "$rc" -eq 0 ] || failed "sync of board 2 ($1): exit $rc"
}
sync_all "the first generation"
for m in "1 0 a" "2 0 b" "0 1 c" "2 1 d"; do
	set -- $m
	"$S" send -w "file:$J" -b "$1" -q "$2" "$3" || failed "send $m"
done
"$S" clear -w "file:$J" -q 0 >/dev/null || failed "clear of queue 0"
"$S" clear -w "file:$J" >/dev/null || failed "clear of every queue"
sync_all "after the clear"
"$S" send -w "file:$J" -b 1 -q 1 e || failed "send e"
"$S" init -w "file:$J" --boards 3 --queues 2 --entries 4 --entry-size 64 \
	>/dev/null || failed "init of the same layout"
events_agree "startup and maintenance: the journals" "file:$J" all 0.1 \
	sync_gave_up board_announced system_ready queue_cleared generation \
	queue_emptied
# an init of the same layout kept every journal: board 0's entry 1 is
# still the first init's, then come the clear's and its own (generations
# 1, 2 and 3: a clear of one queue makes none)
serve "$T/j.events" "" "" reader --events "file:$J"
if serve "" "" "$T/j.events" py 'import json, sys
e = [json.loads(l) for l in sys.stdin]
b0 = [x for x in e if x["journal_board"] == 0 and x["event"] == "generation"]
sys.exit(b0[0]["seq"] != 1 or [(x["by"], x["to"]) for x in b0] !=
         [("init", 1), ("clear", 2), ("init", 3)])'; then
	ok "an init of the same layout keeps the journals: the first init's entry 1, the clear's, its own"
else
	failed "an init of the same layout did not keep board 0's journal"
fi
# a new boot of board 2's host: its last_boot is another host's (a boot
# hash that is not this one's); its next entry is a BOOT first
poke "$J" "put(L.journal(2) + 48, 8, 0x1234)"
"$S" send -w "file:$J" -b 2 -q 0 f || failed "send f"
events_agree "a new boot: the journals" "file:$J" all 0.1 board_rebooted
# incarnations IDS...: each board's journal incarnation, on a line
incarnations() {
	serve "$T/inc" "" "" py '
import os, sys
sys.path.insert(0, os.path.dirname(sys.argv[2]))
import smq7_reader as R
r = R.Reader(R.Window("file:" + sys.argv[1]))
r.static()
print(" ".join(str(r.journal_head(r.lay, b)["incarnation"])
               for b in range(r.lay.boards)))' "$1" "$READER" &&
		cat "$T/inc"
}
before=$(incarnations "$J")
# a recorder keeps where it read each journal (events --cursor)
"$S" --json events -w "file:$J" --since all --cursor "$T/cursor" -T 0.3 \
	>/dev/null || failed "events --cursor"
"$S" init -w "file:$J" --boards 3 --queues 2 --entries 8 --entry-size 64 \
	>/dev/null || failed "init of another layout"
after=$(incarnations "$J")
if [ -n "$before" ] && [ -n "$after" ] && serve "" "" "" py 'import sys
a, b = sys.argv[1].split(), sys.argv[2].split()
sys.exit(len(a) != 3 or len(b) != 3 or any(x == y for x in a for y in b))' \
	"$before" "$after"; then
	ok "an init of another layout makes every journal anew: other incarnations"
else
	failed "another layout, incarnations before '$before', after '$after'"
fi
events_agree "another layout: only the new journals" "file:$J" all 0.1 \
	generation
# ...and the recorder, run again, is told that each journal is another
cp "$T/cursor" "$T/cursor-before"
EVENTS_MORE="--cursor $T/cursor"
events_agree "another layout: a recorder told every journal restarted" \
	"file:$J" all 0.1 journal_restarted -- --cursor "$T/cursor-before"
EVENTS_MORE=

# ---- a send that gave up while its receiver slept on, stopped ----
U=$T/u
"$S" init -w "file:$U" --boards 2 --queues 1 --entries 4 --entry-size 64 \
	--journal 16 >/dev/null || failed "init --journal 16"
bg_start "$S" recv -w "file:$U" -b 0 -q 0 -c 1 -T 60s >/dev/null 2>&1
SLEEPER=$pid
asleep() {
	"$S" dump --json -w "file:$U" >"$T/wait.json" 2>/dev/null
	serve "" "" "$T/wait.json" py 'import json, sys
sys.exit(not json.load(sys.stdin)["queue_table"][0]["sleeping"])'
}
wait_for 10 "the receiver (pid $SLEEPER) to sleep on queue 0" asleep
kill -STOP "$SLEEPER"
for n in 1 2 3 4; do
	"$S" send -w "file:$U" -b 1 -q 0 "m$n" || failed "send m$n"
done
"$S" send -w "file:$U" -b 1 -q 0 -T 0.3 late 2>/dev/null &&
	failed "a send to a full lane of a stopped receiver succeeded"
kill -CONT "$SLEEPER"
wait_pid 10 "$SLEEPER" "the receiver, continued"
events_agree "unanswered: the journals" "file:$U" all 0.1 \
	doorbell_unanswered queue_full queue_drained

# ---- a journal that wrapped: what a reader from entry 1 lost ----
# two sends refused at once: 4 entries each, board 1's past 16 in all
for n in 1 2; do
	"$S" send -w "file:$U" -b 1 -q 0 -T 0 "no room" 2>/dev/null
	"$S" send -w "file:$U" -b 1 -q 0 -T 0 "no room" 2>/dev/null
done
"$S" dump --json -w "file:$U" >"$T/u.json"
serve "$T/written" "" "$T/u.json" py 'import json, sys
print(json.load(sys.stdin)["board_table"][1]["journal_written"])'
written=$(cat "$T/written")
[ "${written:-0}" -gt 16 ] || failed "board 1 wrote $written entries, not more than 16"
events_agree "a wrapped journal, from the oldest it holds" "file:$U" all 0.1
events_agree "a wrapped journal, read from entry 1" "file:$U" 1:1 0.1 \
	journal_lost
if serve "" "" "" py 'import json, sys
e = [json.loads(l) for l in open(sys.argv[1])]
lost = [x for x in e if x["event"] == "journal_lost"]
sys.exit(len(lost) != 1 or (lost[0]["seq"], lost[0]["count"]) !=
         (1, int(sys.argv[2]) - 16))' "$T/ev.json" "$written"; then
	ok "a wrapped journal: events says $((written - 16)) lost from entry 1, as its head says"
else
	failed "a wrapped journal: not $((written - 16)) lost from entry 1"
fi

# ---- an entry damaged in the window ----
"$S" --json events -w "file:$U" --since all -T 0.1 >"$T/ev-whole.json"
cp "$U" "$T/ud"
seq=$((written - 5))
poke "$T/ud" "
e = L.journal_slot(1, $seq) + 48
put(e, 1, open(path, 'rb').read()[e] ^ 0x10)"
events_agree "an entry damaged: the journals" "file:$T/ud" all 0.1 \
	journal_damaged
if serve "" "" "" py '
import json, sys
def journal(path):
    out = []
    for l in open(path):
        x = json.loads(l)
        if x.get("source") == "journal":
            x.pop("time_ns"); x.pop("text")
            out.append(x)
    return out
whole, damaged, seq = journal(sys.argv[1]), journal(sys.argv[2]), int(sys.argv[3])
said = [x for x in damaged if x["event"] == "journal_damaged"]
ok = len(said) == 1 and (said[0]["journal_board"], said[0]["seq"]) == (1, seq)
rest = [x for x in damaged if x["event"] != "journal_damaged"]
ok = ok and rest == [x for x in whole
                     if (x["journal_board"], x["seq"]) != (1, seq)]
sys.exit(not ok)' "$T/ev-whole.json" "$T/ev.json" "$seq"
then
	ok "an entry damaged: said damaged, at its sequence, and nothing else changed"
else
	failed "an entry damaged: more changed than that entry"
fi
# a slot's sequence damaged: one that belongs in another slot, one that no
# writer reached: the slot damaged, the entries after it read
for how in "+ 1:one of another slot" "+ 100:one past the head"; do
	cp "$U" "$T/ud"
	poke "$T/ud" "put(L.journal_slot(1, $seq), 8, $seq ${how%%:*})"
	events_agree "a slot's sequence damaged to ${how#*:}" "file:$T/ud" all \
		0.1 journal_damaged
done

# ---- an entry abandoned: its writer killed in it ----
if [ -x "$B/tests/smqctl-hooked" ]; then
	A=$T/a
	"$S" init -w "file:$A" --boards 2 --queues 1 --entries 4 \
		--entry-size 64 --journal 16 >/dev/null || failed "init a"
	SMQ_TEST_HOLD=journal_writing:$T/held bg_start "$B/tests/smqctl-hooked" \
		send -w "file:$A" -b 1 -q 0 x >/dev/null 2>&1
	HELD=$pid
	wait_for 10 "the sender to be held in its journal entry" test -s "$T/held"
	kill -9 "$HELD"
	wait_pid 10 "$HELD" "the sender held, killed"
	"$S" send -w "file:$A" -b 1 -q 0 y || failed "send y"
	# events says it at a look a second after the first: the entries
	# after it come at that look, so the boards' orders are compared
	events_agree "an entry abandoned: the journals, each board's" \
		"file:$A" all 2 journal_abandoned -- --abandoned --per-board
else
	skip_part "an abandoned entry" "no $B/tests/smqctl-hooked"
fi

# 144, and the split window's 4 where /dev/shm holds one
finish $((144 + split))
