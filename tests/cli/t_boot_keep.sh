#!/bin/sh
# Boot from a description: board 0 "boots again" while boards 1 and 2 run.
# The window was formatted from a description file and the three boards
# synchronised; boards 1 and 2 have messages queued, and board 1 a
# receiver waiting.  Then board 0 runs what smq-init.service runs,
# `init --from FILE --keep` and `sync`: it keeps the window (the same
# generation, nothing written), rejoins, and every message queued before
# is received, once, as is every message sent after.  A plain init is
# refused there (processes at work), and so is --keep with a description
# that differs (it would format, and says why it did not keep).
# Prints "ok"/"FAIL" per case; exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
cd "$T" || exit 1
export SMQ_WINDOW="file:$T/w"

die() { failed "$*"; [ -s "$T/err" ] && sed 's/^/       stderr: /' "$T/err"; exit 1; }
generation() {
	"$S" --json dump 2>/dev/null |
		sed -n 's/^ *"generation": \([0-9]*\).*/\1/p' | head -n 1
}
# has_lines FILE N: FILE has N lines or more
has_lines() { [ "$(wc -l <"$1")" -ge "$2" ]; }
N=12    # messages each sender queues

# Three boards; board 2 receives queue 2, board 1 queue 1.
cat >"$T/window.conf" <<'EOF'
# the shape of the window, as /etc/smq/window.conf holds it
boards 3
queues 3
entries 16
entry-size 256
senders 2:0,1      # only boards 0 and 1 send to board 2
EOF

"$S" init --from "$T/window.conf" --keep >"$T/out" 2>"$T/err" ||
	die "first boot: init --from --keep"
grep -q "^formatted " "$T/out" || die "first boot did not format: $(cat "$T/out")"
bg_start "$S" -b 1 sync -T 20 -i 10ms >/dev/null 2>&1
s1=$pid
bg_start "$S" -b 2 sync -T 20 -i 10ms >/dev/null 2>&1
s2=$pid
"$S" sync -T 20 -i 10ms >/dev/null 2>"$T/err" || die "first boot: sync"
wait_pid 30 "$s1" "board 1's first sync" || die "first boot: board 1's sync exit $rc"
wait_pid 30 "$s2" "board 2's first sync" || die "first boot: board 2's sync exit $rc"
G=$(generation)
[ -n "$G" ] || die "no generation in dump --json"

# Traffic before board 0 goes down: queued for board 2 (nobody receives
# queue 2 yet), and a receiver of board 1 waiting on queue 1.
i=1
while [ $i -le $N ]; do
	"$S" -b 1 send -q 2 "from-1-$i" || die "board 1 send $i"
	"$S" send -q 2 "from-0-$i" || die "board 0 send $i"
	i=$((i + 1))
done
# its first message comes after board 0's reboot below
bg_start "$S" -b 1 recv -q 1 -c $N -T $((60 * slow)) >"$T/got1" 2>"$T/got1.err"
RX1=$pid
# receiving queue 1: the dump says so
receiving() { "$S" dump -q 1 2>/dev/null | grep -q "waiting\|asleep"; }
wait_for 10 "board 1's receiver to wait on queue 1" receiving || die "board 1's receiver never waited"

# ---- board 0 boots again ----
run init --from "$T/window.conf"
want_rc 1
want_err "at work"
[ "$(generation)" = "$G" ] || no "the refused init changed the generation"
verdict "a plain init is refused while boards 1 and 2 are at work"

# differs EDIT WORDS: a description edited so is not kept
differs() {
	sed "$1" "$T/window.conf" >"$T/other.conf"
	cmp -s "$T/window.conf" "$T/other.conf" && no "the edit '$1' changed nothing"
	run init --from "$T/other.conf" --keep
	want_rc 1
	want_err "--keep did not keep it: "
	want_err "$2"
	[ "$(generation)" = "$G" ] || no "init --keep of another shape changed the generation"
}
differs 's/^entries 16/entries 32/' "it has 16 entries a ring, not 32"
differs 's/^senders 2:0,1 .*/senders 2:0,2/' "its queue 2 is sent on by boards 0 and 1, not boards 0 and 2"
differs '$a receiver 1:0' "its queue 1 is received by board 1, not 0"
differs '$a checksum yes' "checksums on"
differs 's/^entry-size 256/entry-size 512/' "its entries hold 256 bytes, not 512"
verdict "init --keep with a description that differs formats (and is refused at work), saying why"

run init --from "$T/window.conf" --keep --dry-run
want_rc 0
want_out "--keep: the window holds this shape: init keeps generation $G"
verdict "init --keep --dry-run says it would keep generation $G"

run init --from "$T/window.conf" --keep
want_rc 0
want_out "kept file:$T/w: generation $G (it holds this shape; nothing was written)"
[ "$(generation)" = "$G" ] || no "the generation moved from $G to $(generation)"
verdict "init --from FILE --keep keeps the window: generation $G"

run init --from "$T/window.conf" --keep --mode 0640
want_rc 0
want_out "kept file:$T/w: generation $G (it holds this shape; only its mode was set)"
[ "$(stat -c %a "$T/w")" = 640 ] || no "the window's mode is $(stat -c %a "$T/w"), not 640"
[ "$(generation)" = "$G" ] || no "the generation moved from $G to $(generation)"
verdict "init --keep --mode 0640 keeps the window and sets its mode"

run sync -T 20 -i 10ms
want_rc 0
verdict "board 0 rejoins: sync"

# ---- nothing queued is lost ----
i=1
while [ $i -le $N ]; do
	"$S" -b 2 send -q 1 "to-1-$i" || no "board 2 send $i after the reboot"
	i=$((i + 1))
done
within 10 has_lines "$T/got1" $N || no "board 1's receiver got $(wc -l <"$T/got1") of $N"
wait_pid 10 $RX1 "board 1's receiver" || no "board 1's receiver ended $rc"
i=1
while [ $i -le $N ]; do echo "to-1-$i"; i=$((i + 1)); done >"$T/want1"
cmp -s "$T/want1" "$T/got1" || no "board 1 received $(tr '\n' ' ' <"$T/got1")"
verdict "board 1's receiver, waiting across the reboot, receives what board 2 sends after"

run -b 2 recv -q 2 -c $((2 * N)) -T 5
want_rc 0
i=1
while [ $i -le $N ]; do echo "from-0-$i"; echo "from-1-$i"; i=$((i + 1)); done |
	sort >"$T/want2"
sort "$T/out" >"$T/got2"
cmp -s "$T/want2" "$T/got2" ||
	no "board 2 received $(wc -l <"$T/got2") of $((2 * N)): $(tr '\n' ' ' <"$T/got2" | head -c 200)"
run -b 2 recv -q 2 -T 0.2
[ "$rc" -ne 0 ] || no "board 2 received one more: $(cat "$T/out")"
[ "$(generation)" = "$G" ] || no "the generation moved"
verdict "every message queued before board 0 booted again is received, once"

# ---- an upgrade: a window formatted without scratch areas (as before
# init made them) is kept by an init that would make them ----
U=file:$T/u
"$S" -w "$U" init --boards 2 --no-scratch >/dev/null || no "init --no-scratch"
"$S" -w "$U" send -q 1 "queued before the upgrade" || no "send before the upgrade"
run -w "$U" init --boards 2 --keep
want_rc 0
want_out "kept $U: generation 1 (it holds this shape; nothing was written)"
[ "$("$S" -w "$U" -b 1 recv -q 1 -T 0)" = "queued before the upgrade" ] ||
	no "the message queued before the upgrade is gone"
verdict "init --keep keeps a window without scratch areas, and what it holds"

finish 9
