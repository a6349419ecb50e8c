#!/bin/sh
# Maintenance as an operator meets it, through smqctl:
#  (a) init never destroys what is not a window: a text file, a symlink
#      to one, a window object others may write or another user owns are
#      refused (exit 1, saying what was found), their bytes unchanged;
#      --force formats (and makes the object ours, 0600);
#  (b) dump is honest: after an init or clear that did not finish, dump
#      exits 1 and says so (and --json has the fault), other commands
#      refuse, and a plain clear finishes it;
#  (c) boot: sync --new-generation waits for board 0 to format anew,
#      while plain sync joins the generation that runs;
#  (d) diagnostics never cost the application a message: pingpong and
#      bench run on the diagnostic queues while application queues hold
#      messages and have a receiver -- nothing taken, nothing injected --
#      and refuse an application queue without --force, and a queue that
#      holds messages or has a receiver even with it.
# Prints "ok"/"FAIL" per check; exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
need_command python3 "it reads JSON"
unset SMQ_WINDOW SMQ_DEBUG 2>/dev/null
json() { # json FILE PYTHON-EXPR (d is the document)
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2"
}
queued() { # queued SPEC QUEUE: messages waiting in it
	"$S" -w "$1" --json dump -q "$2" >"$T/q.json" 2>/dev/null
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["queue_table"][0]["queued"])' "$T/q.json"
}
waiting() { # waiting SPEC QUEUE PID: PID is the queue's receiver, waiting
	"$S" -w "$1" --json dump -q "$2" >"$T/w.json" 2>/dev/null &&
		json "$T/w.json" 'd["queue_table"][0]["receiver_pid"] == '"$3"' and d["queue_table"][0]["receiver_state"] == "waiting"'
}

# ---- (a) init never destroys what is not a window ----
seq 1 100 | sed 's/^/a line of text /' >"$T/precious.txt"
sum=$(cksum <"$T/precious.txt")
"$S" -w "file:$T/precious.txt" init >"$T/out" 2>"$T/err"
rc=$?
check "init on a text file: exit 1" [ $rc -eq 1 ]
check "init on a text file: says what it found" grep -q 'holds .* not an smq window (it begins "a line of text 1' "$T/err"
check "init on a text file: its bytes unchanged" [ "$(cksum <"$T/precious.txt")" = "$sum" ]
"$S" -w "file:$T/precious.txt" init --dry-run >"$T/out" 2>"$T/err"
rc=$?
cp "$T/err" "$T/dry-text.err"
check "init --dry-run on a text file: exit 1, says init would refuse it" \
	sh -c '[ $0 -eq 1 ] && grep -q "holds .* not an smq window (it begins \"a line of text 1" "$1" &&
		grep -q "init would refuse it" "$1" && ! grep -q "grows" "$1"' $rc "$T/out"
"$S" -w "file:$T/precious.txt" init >"$T/out" 2>"$T/err"
check "init on a text file and its dry run: the same words" cmp -s "$T/err" "$T/dry-text.err"
"$S" -w "file:$T/precious.txt" --json init --dry-run >"$T/out" 2>"$T/err"
rc=$?
check "init --dry-run --json on a text file: exit 1, not_window true, refused" \
	sh -c '[ $0 -eq 1 ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d[\"not_window\"] is True and d[\"refused\"] is True))" "$1"' $rc "$T/out"
"$S" -w "file:$T/precious.txt" init --dry-run --force >"$T/out" 2>"$T/err"
rc=$?
check "init --dry-run --force on a text file: exit 0, init formats it" \
	sh -c '[ $0 -eq 0 ] && grep -q "init formats it" "$1"' $rc "$T/out"
check "init --dry-run on a text file: its bytes unchanged" [ "$(cksum <"$T/precious.txt")" = "$sum" ]
"$S" -w "file:$T/precious.txt" init --dry-run --keep >"$T/out" 2>"$T/err"
check "init --dry-run --keep on a text file: no word of keeping or formatting it" \
	sh -c '! grep -q "^--keep" "$0" && grep -q "init would refuse it" "$0"' "$T/out"
# a window of a format version this smqctl does not read: the dry run
# refuses it as init does, and says why
"$S" -w "file:$T/v7" init >/dev/null 2>&1 &&
	printf '\007\000\000\000' | dd of="$T/v7" bs=1 seek=8 conv=notrunc 2>/dev/null
"$S" -w "file:$T/v7" init --dry-run >"$T/out" 2>"$T/err"
rc=$?
check "init --dry-run on a window of format version 7: exit 1, refused, and why" \
	sh -c '[ $0 -eq 1 ] && grep -q "init would refuse it" "$1" &&
		grep -q "has format version 7; this smqctl reads version" "$2"' $rc "$T/out" "$T/err"
"$S" -w "file:$T/v7" init >/dev/null 2>&1
check "init on it: refused too (exit 1)" [ $? -eq 1 ]
"$S" -w "file:$T/v7" init --dry-run --force >"$T/out" 2>"$T/err"
check "init --dry-run --force on it: exit 0" [ $? -eq 0 ]
# what init cannot open, the dry run cannot either: exit 1
ln -s "$T/precious.txt" "$T/dry-link"
"$S" -w "file:$T/dry-link" init --dry-run >"$T/out" 2>"$T/err"
rc=$?
cp "$T/err" "$T/dry-link.err"
check "init --dry-run through a symlink: exit 1, named a symbolic link" \
	sh -c '[ $0 -eq 1 ] && grep -q "symbolic link" "$1"' $rc "$T/err"
"$S" -w "file:$T/dry-link" init >"$T/out" 2>"$T/err"
rc=$?
check "init through a symlink: exit 1, named a symbolic link" \
	sh -c '[ $0 -eq 1 ] && grep -q "symbolic link" "$1"' $rc "$T/err"
check "init and its dry run through a symlink: the same words" \
	cmp -s "$T/err" "$T/dry-link.err"
"$S" -w "$T/dry-link" init >/dev/null 2>&1 && failed "init through a bare symlink path formatted"
check "init through symlinks: the text unchanged" [ "$(cksum <"$T/precious.txt")" = "$sum" ]
: >"$T/open"
chmod 0666 "$T/open"
"$S" -w "file:$T/open" init >"$T/out" 2>"$T/err"
rc=$?
check "init on a window others may write: exit 1, says the mode" \
	sh -c '[ $0 -eq 1 ] && grep -q "others may write it (mode 0666)" "$1"' $rc "$T/err"
check "init --force on it: formatted, now 0600" \
	sh -c '"$0" -w "file:$1" init --force >/dev/null && [ "$(stat -c %a "$1")" = 600 ]' "$S" "$T/open"
theirs=0
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	theirs=2
	: >"$T/theirs"
	chown nobody "$T/theirs"
	"$S" -w "file:$T/theirs" init >"$T/out" 2>"$T/err"
	rc=$?
	check "init on another user's window: exit 1, names the owner" \
		sh -c '[ $0 -eq 1 ] && grep -q "belongs to nobody" "$1"' $rc "$T/err"
	check "init --force on it: ours, 0600" \
		sh -c '"$0" -w "file:$1" init --force >/dev/null &&
		       [ "$(stat -c %u:%a "$1")" = "$(id -u):600" ]' "$S" "$T/theirs"
else
	skip_part "(a) another user's window" "needs root and the user nobody"
fi
"$S" -w "file:$T/precious.txt" init --force >/dev/null 2>&1
check "init --force formats even the text file" \
	"$S" -w "file:$T/precious.txt" dump >/dev/null

# ---- (b) dump is honest after an init or clear that did not finish ----
W=file:$T/w
"$S" -w "$W" init --boards 2 >/dev/null || failed "(b) init"
"$S" -w "$W" send hello >/dev/null || failed "(b) send"
# As a killed clear leaves it: its lock of a process gone, phase
# "writing", every notice told to wait.
python3 - "$T/w" <<'EOF'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(128); f.write(struct.pack("<QQI", (0x3ffffff0 << 32) | 7, 1, 2))
    for b in range(2):
        f.seek(4096 + b * 4096); f.write(struct.pack("<QIIQ", 0, 0, 0, 0))
EOF
"$S" -w "$W" dump >"$T/out" 2>"$T/err"
rc=$?
check "dump of a window a killed clear left: exit 1" [ $rc -eq 1 ]
check "dump says an init or clear did not finish, and what to run" \
	grep -q "an init or clear did not finish.*run smqctl clear or init on board 0" "$T/err"
"$S" -w "$W" --json dump >"$T/d.json" 2>/dev/null
check "dump --json: a fault object names the field" \
	json "$T/d.json" 'd["fault"] is not None and d["fault"]["field"]=="maint_phase" and d["fault"]["expected"]==0'
"$S" -w "$W" -b 1 send x >/dev/null 2>"$T/err" && failed "send succeeded on an unfinished window"
check "send refuses it too, as dump says it" \
	grep -q "an init or clear did not finish.*run smqctl clear or init on board 0" "$T/err"
check "a plain clear finishes it" "$S" -w "$W" clear >/dev/null
check "dump exits 0 again" "$S" -w "$W" dump >/dev/null

# ---- (c) boot: sync and generations ----
"$S" -w "$W" init --boards 2 >/dev/null
g=$("$S" -w "$W" dump | sed -n '1s/.*generation \([0-9]*\),.*/\1/p')
bg_start "$S" -w "$W" -b 1 sync --timeout 10 >"$T/s1" 2>&1
"$S" -w "$W" sync --timeout 10 >/dev/null
wait_pid 20 $pid "board 1's sync"
"$S" -w "$W" -b 1 sync --timeout 2 >"$T/s1" 2>&1
check "a board that reboots alone joins the generation that runs ($g)" \
	grep -q "board 1: system ready (generation $g)" "$T/s1"
bg_start "$S" -w "$W" -b 1 sync --new-generation --timeout 20 >"$T/s1" 2>"$T/s1.err"
p=$pid
wait_line 20 "$T/s1.err" "waiting for board 0 to format .* anew" ||
	failed "--new-generation never said it waits for board 0"
check "--new-generation waits while the window has the old one" running $p
check "...and says so" grep -q "waiting for board 0 to format .* anew (it has generation $g)" "$T/s1.err"
"$S" -w "$W" init --boards 2 >/dev/null
"$S" -w "$W" sync --timeout 10 >/dev/null || failed "(c) board 0 sync"
wait_pid 30 $p "board 1's sync --new-generation"
check "--new-generation: ready in the new generation ($((g + 1)))" \
	grep -q "board 1: system ready (generation $((g + 1)))" "$T/s1"

# ---- (d) diagnostics never cost the application a message ----
"$S" -w "$W" init --boards 2 --queues 2 >/dev/null
for i in 1 2 3; do "$S" -w "$W" -b 1 send -q 0 "app $i" >/dev/null; done
bg_start "$S" -w "$W" -b 1 recv -q 1 --count 1 --timeout 60 >"$T/app" 2>"$T/app.err"
rcv=$pid
# attached and waiting before the diagnostics run (else they would pass
# beside no application at all)
wait_for 30 "the application's receiver (pid $rcv) waiting on queue 1" \
	waiting "$W" 1 "$rcv"
"$S" -w "$W" pingpong --count 200 --size 0,64 >"$T/pp" 2>&1
check "pingpong beside a live application: exit 0 on the diagnostic queues" \
	sh -c '[ $0 -eq 0 ] && grep -q "queues 2 and 3" "$1"' $? "$T/pp"
"$S" -w "$W" bench --count 2000 --size 64 >"$T/bench" 2>&1
check "bench beside it: exit 0" [ $? -eq 0 ]
check "the application's messages are all still queued (3)" [ "$(queued "$W" 0)" = 3 ]
check "the application's receiver got nothing of theirs" [ ! -s "$T/app" ]
"$S" -w "$W" pingpong --queue-pair 0,1 --count 10 >"$T/out" 2>"$T/err"
rc=$?
check "pingpong on application queues: refused without --force" \
	sh -c '[ $0 -eq 1 ] && grep -q "queue 0 is an application queue" "$1"' $rc "$T/err"
"$S" -w "$W" pingpong --queue-pair 0,1 --force --count 10 >"$T/out" 2>"$T/err"
rc=$?
check "with --force: still refused, queue 0 holds messages" \
	sh -c '[ $0 -eq 1 ] && grep -q "queue 0 holds 3 messages" "$1"' $rc "$T/err"
"$S" -w "$W" recv -q 0 --count 3 --timeout 10 >/dev/null
"$S" -w "$W" pingpong --queue-pair 0,1 --force --count 10 >"$T/out" 2>"$T/err"
rc=$?
check "with --force: still refused, queue 1 has a receiver" \
	sh -c '[ $0 -eq 1 ] && grep -q "queue 1 already has a receiver (pid '$rcv')" "$1"' $rc "$T/err"
"$S" -w "$W" send -q 1 "for the app" >/dev/null
wait_pid 30 $rcv "the application's receiver"
check "the application's receiver got only its own message" \
	sh -c 'grep -q "for the app" "$0" && [ "$(grep -c . "$0")" = 1 ]' "$T/app"
"$S" -w "$W" -b 1 send -q 3 leftover >/dev/null
"$S" -w "$W" pingpong --count 10 >"$T/out" 2>"$T/err"
rc=$?
check "a message left in a diagnostic queue: refused, --drain offered" \
	sh -c '[ $0 -eq 1 ] && grep -q "queue 3 holds 1 message.*--drain" "$1"' $rc "$T/err"
bg_start "$S" -w "$W" -b 1 pingpong --peer --drain --count 10 >"$T/p1" 2>&1
p=$pid
"$S" -w "$W" pingpong --peer --count 10 >"$T/p0" 2>&1
p0rc=$?
wait_pid 30 $p "board 1's pingpong --peer --drain"
rc=$p0rc
check "--drain: the leftover dropped and said, the run done" \
	sh -c '[ $0 -eq 0 ] && grep -q "dropped 1 message left in diagnostic queue 3" "$1"' $rc "$T/p1"

any_failed && for f in p0 p1 out err; do echo "--- $f"; cat "$T/$f"; done
# 28, and 2 of another user's window where root can make one
finish $((28 + theirs))
