#!/bin/sh
# smqctl events under a scripted scenario: init, three boards announce and
# synchronise, traffic, a receiver killed with its board, the board back
# with a new process, a queue filled behind a stopped receiver, a clear of
# one queue, a receiver ended by Ctrl-C, a clear of every queue, a watcher
# stopped long enough to fall behind; on a window with checksums, a
# message damaged in the window, refused by its receiver.  Two watchers run through it, one in
# text and one in JSON lines; each must print exactly the events of each
# step, the steps in order (within a step, events the boards race to make
# may come in either order: three boards becoming ready at once).  Every
# wait is bounded and says what it waited for.  The windows keep no
# journal (init --journal 0): these are the events watchers see from their
# own looks; what the boards' journals say is t_journal.sh's.  Exit 0
# pass, 1 fail.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
need_command python3 "it reads the events' JSON"
SPEC=shm:$SHM
export SMQ_WINDOW=$SPEC
die() {
	failed "$*"
	for f in "$T"/ev.txt "$T"/ev.json; do [ -s "$f" ] && sed 's/^/    | /' "$f"; done
	exit 1
}
bg() { bg_start "$@"; }
# the watchers end by themselves after this, should the test not stop them
EVT=$((240 * slow))s
# a receiver's wait for each message
RT=$((60 * slow))

# wait_event FILE PATTERN WHAT: until a line of FILE matches (10 s at most)
wait_event() {
	wait_line 10 "$1" "$2" || die "no '$3' in $(basename "$1") after $((10 * slow)) s"
}
# both watchers saw it
seen() { wait_event "$T/ev.json" "\"event\": \"$1\".*${2#, }" "$1"; wait_event "$T/ev.txt" "$3" "$1"; }
# a step ends when both watchers have looked 3 times more (each look ends
# in a nap: counted, not timed), so that what a step made is said in it
looked() { [ "$(naps $EV_TXT)" -ge "$1" ] && [ "$(naps $EV_JSON)" -ge "$2" ]; }
settle() {
	wait_for 10 "both watchers to look 3 times more" \
		looked $(($(naps $EV_TXT) + 3)) $(($(naps $EV_JSON) + 3))
}
# asleep Q: queue Q's receiver sleeps on its doorbell, as dump says
asleep() { "$S" dump 2>/dev/null | grep -Eq "^$1 +[0-9]+ asleep "; }
step() { echo "== $*" >>"$T/steps"; settle; }

"$S" init -n 3 --queues 3 --entries 4 --journal 0 >/dev/null || die "init"
: >"$T/steps"
bg "$S" events -i 50ms --stall 3s -T $EVT >"$T/ev.txt"
EV_TXT=$!
bg "$S" --json events -i 50ms --stall 3s -T $EVT >"$T/ev.json"
EV_JSON=$!
wait_for 10 "the text watcher's first look" napping $EV_TXT
wait_for 10 "the JSON watcher's first look" napping $EV_JSON

step "boards announce one by one, then are ready and at rest"
bg "$S" -b 1 sync -T 20 -i 10ms >/dev/null
seen board_announced ', "board": 1' 'board 1 announced itself'
bg "$S" -b 2 sync -T 20 -i 10ms >/dev/null
seen board_announced ', "board": 2' 'board 2 announced itself'
"$S" sync -T 20 -i 10ms >/dev/null || die "sync on board 0"
seen system_ready '' 'system ready'
for b in 1 2; do
	seen board_gone ", \"board\": $b" "board $b at rest"
done

step "traffic: a receiver on queue 1, messages from board 2"
bg "$S" -b 1 recv -q 1 -c 1000 -T $RT >"$T/got"
RX=$!
seen receiver_attached ', "queue": 1' 'queue 1: receiver attached'
for m in one two three; do "$S" -b 2 send -q 1 "$m" || die "send $m"; done
got3() { [ "$(wc -l <"$T/got")" = 3 ]; }
wait_for 10 "recv to get 3 messages" got3 || die "recv did not get 3 messages"

step "the receiver killed: it and its board dead"
kill -9 $RX
seen receiver_dead ', "queue": 1' 'queue 1: receiver died'
seen board_dead ', "board": 1' 'board 1 dead'

step "the board back with a new process"
bg "$S" -b 1 recv -q 1 -c 1000 -T $RT >/dev/null
RX2=$!
seen board_restarted ', "board": 1' 'board 1 back'
seen receiver_attached '.*"takeovers": 1' 'in the place of one that died'

step "the receiver stopped asleep, the queue filled behind it"
wait_for 10 "queue 1's receiver asleep on its doorbell" asleep 1
kill -STOP $RX2
for m in 1 2 3 4; do "$S" -b 2 send -q 1 -T 0 "m$m" || die "send m$m"; done
"$S" -b 2 send -q 1 -T 0 refused >/dev/null 2>&1 && die "a send to a full queue went through"
seen queue_full ', "queue": 1' 'queue 1 full'
seen doorbell_unanswered ', "queue": 1' 'queue 1: doorbell not answered'

step "its messages held for the stall time (3 s): stalled"
seen queue_stalled ', "queue": 1' 'queue 1 stalled'

step "the receiver goes on: room again, moving, running"
kill -CONT $RX2
seen queue_drained ', "queue": 1' 'queue 1 has room again'
seen queue_resumed ', "queue": 1' 'queue 1 moves again'
seen receiver_continued ', "queue": 1' 'queue 1: receiver runs again'

step "a clear of queue 0 alone"
"$S" clear -q 0 >/dev/null || die "clear -q 0"
seen queue_cleared ', "queue": 0' 'queue 0 cleared'

step "the receiver ended by Ctrl-C: closed, its board at rest"
kill -INT $RX2
seen receiver_gone ', "queue": 1' 'queue 1: receiver closed'
seen board_gone ', "board": 1' 'board 1 at rest'

step "a clear of every queue"
"$S" clear >/dev/null || die "clear"
seen generation '' 'formatted anew: generation 1 -> 2'

step "the window removed"
rm -f "/dev/shm/$SHM"
seen window_unreadable '' 'window cannot be read'

step "the window made again"
"$S" init -n 3 --queues 3 --entries 4 --journal 0 >/dev/null || die "init again"
seen window_readable '' 'window can be read again'
seen generation '.*"from": 2, "to": 1' 'generation 2 -> 1'

step "a window with checksums"
"$S" init --checksum -n 3 --queues 3 --entries 4 --journal 0 >/dev/null || die "init --checksum"
seen generation '.*"from": 1, "to": 2' 'generation 1 -> 2'

step "a receiver waits on it"
bg "$S" -b 1 recv --queue 1 --count 1 --timeout 20s >"$T/recv.out" 2>"$T/recv.err"
RECV=$!
seen receiver_attached ', "board": 1, "queue": 1' 'queue 1: receiver attached'

step "a message damaged in the window: its receiver refuses it"
kill -STOP $RECV
# both watchers see it stopped (the second time a receiver of queue 1
# is): a look that falls after the CONT would see it running throughout
stopped_again() {
	[ "$(grep -c '"event": "receiver_stopped"' "$T/ev.json")" -ge 2 ] &&
	[ "$(grep -c 'receiver stopped by a signal' "$T/ev.txt")" -ge 2 ]
}
wait_for 10 "both watchers to see the receiver stopped" stopped_again
printf 'SMQ-DAMAGE-ME\n' | "$S" -b 0 send --queue 1 || die "send"
flip_bits "/dev/shm/$SHM" SMQ-DAMAGE-ME 4 0x08 || die "flip"
kill -CONT $RECV
seen messages_corrupt ', "board": 1, "queue": 1.*"count": 1, "corrupt": 1' 'queue 1: 1 message failed its checksum'

step "the next message is delivered and the receiver ends"
printf 'SMQ-WHOLE\n' | "$S" -b 0 send --queue 1 || die "send"
wait_pid 30 $RECV "the receiver of a damaged message"; rr=$rc
[ $rr = 1 ] || die "recv after a refused message exited $rr, not 1"
[ "$(cat "$T/recv.out")" = SMQ-WHOLE ] || die "recv wrote '$(cat "$T/recv.out")', not the whole message alone"
grep -q "the message from board 0 on queue 1 (14 bytes) failed its checksum: refused, not delivered" "$T/recv.err" ||
	die "recv did not say which message it refused: $(cat "$T/recv.err")"
seen receiver_gone ', "board": 1, "queue": 1' 'queue 1: receiver closed the queue'

step "the watchers stopped and let go on: they say they fell behind"
kill -STOP $EV_TXT $EV_JSON
sleep 1.5  # on purpose: the boards go on while the watchers cannot look
kill -CONT $EV_TXT $EV_JSON
seen lagged '' 'events fell behind'
settle
kill -INT $EV_TXT $EV_JSON
wait_pid 10 $EV_TXT "the text watcher, sent SIGINT"; rt=$rc
wait_pid 10 $EV_JSON "the JSON watcher, sent SIGINT"; rj=$rc
[ $rt = 0 ] && [ $rj = 0 ] || die "events exited $rt (text) and $rj (JSON) on SIGINT, not 0"

# Each step's events, exactly; the steps in this order.
"$S" --json events --until window_readable -T 10 >"$T/holds.json" ||
	die "events --until window_readable: exit $?"
PYTHONPATH=$ROOT/tests/lib tally python3 - "$T/ev.json" "$T/ev.txt" "$T/holds.json" <<'PY' || die "the events, step by step"
import json, re, sys
steps = [
    [("board_announced", 1, None)],
    [("board_announced", 2, None)],
    # board 0 announces, the system is ready, every board is ready, and
    # their syncs end: three boards race here
    [("board_announced", 0, None), ("system_ready", None, None),
     ("board_ready", 0, None), ("board_ready", 1, None),
     ("board_ready", 2, None), ("board_gone", 1, None),
     ("board_gone", 2, None)],
    [("receiver_attached", 1, 1)],
    [("receiver_dead", 1, 1), ("board_dead", 1, None)],
    [("board_restarted", 1, None), ("receiver_attached", 1, 1)],
    [("receiver_stopped", 1, 1), ("queue_full", 1, 1),
     ("doorbell_unanswered", 1, 1)],
    [("queue_stalled", 1, 1)],
    [("queue_drained", 1, 1), ("queue_resumed", 1, 1),
     ("receiver_continued", 1, 1)],
    [("queue_cleared", 0, 0)],
    [("receiver_gone", 1, 1), ("board_gone", 1, None)],
    [("generation", None, None)],
    [("window_unreadable", None, None)],
    # a window of that name again: readable, and of another generation
    [("window_readable", None, None), ("generation", None, None)],
    [("generation", None, None)],
    [("receiver_attached", 1, 1)],
    [("receiver_stopped", 1, 1), ("receiver_continued", 1, 1),
     ("messages_corrupt", 1, 1)],
    [("receiver_gone", 1, 1), ("board_gone", 1, None)],
    [("lagged", None, None)],
]
def key(e):
    return (e["event"], e.get("board"), e.get("queue"))
def check(name, got):
    # board 0's sync, the sends of board 2 and the clears of board 0 are
    # short commands: a look may catch one at work, and its board at rest
    # again, or not (board 2's sync, seen waiting, is the first of board
    # 2's)
    # an init or clear is said as it begins only when a look falls
    # inside it (the generation or the epoch says it happened in any
    # case)
    # the receiver of the damaged message, stopped asleep while it is
    # sent and damaged, is said unanswered when that took a second
    gone2, stopped, corrupt, kept = 0, 0, False, []
    for e in got:
        stopped += e[0] == "receiver_stopped"
        corrupt |= e[0] == "messages_corrupt"
        if e[0] == "doorbell_unanswered" and stopped == 2 and not corrupt:
            continue
        if e[0] == "maintenance":
            continue
        if e[0] == "board_gone" and e[1] == 0:
            continue
        if e[0] == "board_gone" and e[1] == 2:
            gone2 += 1
            if gone2 > 1:
                continue
        kept.append(e)
    got = kept
    i = 0
    for n, want in enumerate(steps):
        want = sorted(want, key=str)
        part = got[i:i + len(want)]
        if sorted(part, key=str) != want:
            print("FAIL %s: step %d: expected %s, got %s (all: %s)" %
                  (name, n, want, part, got))
            return False
        i += len(want)
    if i != len(got):
        print("FAIL %s: events past the scenario: %s" % (name, got[i:]))
        return False
    return True
events = [json.loads(l) for l in open(sys.argv[1])]
ok = check("JSON", [key(e) for e in events])
# every JSON object has its always-there keys, and the text of the event
for e in events:
    for k in ("time_ns", "event", "count", "text"):
        if k not in e:
            print("FAIL JSON: %s lacks %s" % (e, k)); ok = False
got = [e for e in events if e["event"] == "receiver_attached"]
if len(got) != 3 or got[1].get("takeovers") != 1 or got[2].get("takeovers") != 0:
    print("FAIL JSON: the second receiver is not said to take a dead one's place: %s" % got); ok = False
gen = [e for e in events if e["event"] == "generation"]
if gen and (gen[0]["from"], gen[0]["to"]) != (1, 2):
    print("FAIL JSON: generation %s -> %s, not 1 -> 2" % (gen[0]["from"], gen[0]["to"])); ok = False
# the text watcher: the same sentences, told apart by their words
words = [("board_announced", r"board (\d+) announced itself"),
         ("system_ready", r"system ready"), ("board_ready", r"board (\d+) ready"),
         ("board_gone", r"board (\d+) at rest"), ("board_dead", r"board (\d+) dead"),
         ("board_restarted", r"board (\d+) back"),
         ("receiver_attached", r"queue (\d+): receiver attached"),
         ("receiver_dead", r"queue (\d+): receiver died"),
         ("receiver_gone", r"queue (\d+): receiver closed"),
         ("queue_full", r"queue (\d+) full"), ("queue_drained", r"queue (\d+) has room"),
         ("doorbell_unanswered", r"queue (\d+): doorbell not answered"),
         ("messages_corrupt", r"queue (\d+): \d+ messages? failed"),
         ("queue_cleared", r"queue (\d+) cleared"),
         ("generation", r"window formatted anew"), ("lagged", r"events fell behind"),
         ("maintenance", r"an init or clear began"),
         ("window_unreadable", r"window cannot be read"),
         ("window_readable", r"window can be read again"),
         ("receiver_stopped", r"queue (\d+): receiver stopped"),
         ("receiver_continued", r"queue (\d+): receiver runs"),
         ("queue_stalled", r"queue (\d+) stalled"),
         ("queue_resumed", r"queue (\d+) (moves again|not stalled)")]
text = []
for line in open(sys.argv[2]):
    m = re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}  (.*)", line.rstrip("\n"))
    if not m:
        print("FAIL text: a line without its time: %r" % line); ok = False; continue
    for name, rx in words:
        w = re.match(rx, m.group(1))
        if w:
            n = int(w.group(1)) if w.groups() else None
            board = n if name.startswith("board_") else None
            queue = n if name.startswith(("queue", "receiver", "doorbell", "messages")) else None
            if name.startswith(("receiver", "queue_full", "queue_drained", "doorbell", "messages", "queue_stalled", "queue_resumed")):
                board = 1  # the receiving board of queue 1
            if name == "queue_cleared":
                board = 0
            text.append((name, board, queue))
            break
    else:
        print("FAIL text: a line of no known event: %r" % line); ok = False
ok = check("text", text) and ok
# every key printed is in smqctl(1)'s events block, and every key there
# was printed
from json_keys import blocks
keys = blocks("man/smqctl.1").get("events", set())
# a wait for a state that holds says so (the key holds)
printed = set(k for e in events for k in e)
printed |= set(k for l in open(sys.argv[3]) for k in json.loads(l))
if not keys:
    print("FAIL no events block of JSON keys in smqctl(1)"); ok = False
elif printed - keys or keys - printed:
    print("FAIL JSON keys: printed but not in smqctl(1): %s; in smqctl(1) but "
          "never printed: %s" % (sorted(printed - keys), sorted(keys - printed)))
    ok = False
if ok:
    print("ok   %d events in %d steps, the same in text and JSON" % (len(events), len(steps)))
sys.exit(0 if ok else 1)
PY
finish 1
