#!/bin/sh
# events --json across a format it did not see happen: each look compares
# what the window holds with the one before, and after a new format with
# the empty tables and the formatted system that format left, so that
# whatever happened since, between two looks, is said once:
#  (a) init, both boards synchronised and a receiver opened, all within
#      one interval: the generation, both announcements, system_ready and
#      receiver_attached;
#  (b) the window removed and made again (generation 1 again), a message
#      sent and taken: another window (a generation event), and no count
#      that is the old window's subtracted from the new one's.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
need_command python3 "it reads the events' JSON"
W=shm:$SHM
smq() { "$S" -w "$W" "$@"; }
# (napping PID, of tests/lib/lib.sh: the watcher has made its first look
# and naps until the next)
smq init -n 2 --queues 2 --entries 4 >/dev/null || die "init"

# (a)
bg_start "$S" -w "$W" --json events -i 3s -T $((30 * slow))s >"$T/a.json"
ev=$pid
wait_for $((30 * slow)) "the watcher's first look" napping "$ev"
smq init -n 2 --queues 2 --entries 4 >/dev/null || die "init again"
bg_start "$S" -w "$W" -b 1 sync --timeout 5 >/dev/null
smq sync --timeout 5 >/dev/null || die "sync of board 0"
bg_start "$S" -w "$W" -b 1 recv -q 1 --timeout $((30 * slow)) >/dev/null
rcv=$pid
wait_line 10 "$T/a.json" '"event": "receiver_attached"' || true
python3 - "$T/a.json" <<'PY' && ok "(a) a format, two syncs and a receiver between two looks: all said" ||
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
names = [e["event"] for e in ev]
for want in ("generation", "board_announced", "system_ready", "receiver_attached"):
    assert want in names, (want, names)
assert names.index("generation") < names.index("system_ready"), names
PY
	failed "(a) events: $(cat "$T/a.json")"
kill "$rcv" "$ev" 2>/dev/null

# (b): a window of generation 1, a receiver opened on it
rm -f "/dev/shm/$SHM"
smq init -n 2 --queues 2 --entries 4 >/dev/null || die "init of (b)"
smq send -q 0 one >/dev/null && smq send -q 0 two >/dev/null &&
	smq recv -q 0 --count 2 --timeout 1 >/dev/null || die "traffic"
bg_start "$S" -w "$W" --json events -i 2s -T $((30 * slow))s >"$T/b.json"
ev=$pid
wait_for $((30 * slow)) "the watcher's first look" napping "$ev"
rm -f "/dev/shm/$SHM"
smq init -n 2 --queues 2 --entries 4 >/dev/null || die "init anew"
# a receiver opened once on the new window, as once on the old one: the
# watcher must count one opening, not the new count less the old
smq send -q 0 three >/dev/null || die "send on the new window"
smq recv -q 0 --count 1 --timeout 5 >/dev/null || die "recv on the new window"
wait_line $((30 * slow)) "$T/b.json" '"event": "receiver_attached"' ||
	failed "(b) no receiver_attached event for the new window's receiver"
python3 - "$T/b.json" <<'PY' && ok "(b) a window made again at generation 1: another window, its receiver counted once, no count from the old one" ||
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
names = [e["event"] for e in ev]
assert "generation" in names, names
assert names.index("generation") < names.index("receiver_attached"), names
att = [e for e in ev if e["event"] == "receiver_attached"]
assert len(att) == 1 and att[0]["queue"] == 0 and att[0]["count"] == 1, att
assert all(e.get("count", 1) < 1000 for e in ev), ev
PY
	failed "(b) events: $(cat "$T/b.json")"
kill "$ev" 2>/dev/null
finish 2
