#!/bin/sh
# init and clear decide once: a dry run is the real command's decision,
# with the same exit status and words, for every refusal; what they empty
# is said and counted; a window object that had its size before smq first
# formatted it keeps it.
#  - each refusal both ways (init and init --dry-run, clear and clear
#    --dry-run): a window too small for the shape (--force changes
#    nothing), a process at work, another format version, another
#    maintenance running, --keep of a window that differs while a receiver
#    works on it;
#  - a truncated 1 MiB file stays 1 MiB through init --fit and a later
#    larger init --force; --grow grows it, and the size it grew to is the
#    one the next init keeps;
#  - init --force over waiting messages and clear -q say how many per
#    queue (the most first, at most 8 named), and the metrics counter
#    smq_window_emptied_messages_total agrees.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
W=file:$T/win
export SMQ_WINDOW=$W
H=$B/tests/smqctl-hooked
RT=$((60 * slow))
row() { "$S" dump 2>/dev/null | grep -E "^$1 "; }
receiver_is() { row "$1" | grep -Eq "^$1 +[0-9]+ $2 "; }
until_ok() { within 10 "$@" >/dev/null 2>&1; }

# both NAME RC ARGS...: smqctl ARGS, then ARGS with --dry-run: both exit
# RC and say the same on stderr; the window is unchanged by both
both() {
	name=$1 want=$2
	shift 2
	cp "$T/win" "$T/before" 2>/dev/null
	"$S" "$@" --dry-run >"$T/dry.out" 2>"$T/dry.err"
	dry=$?
	"$S" "$@" >"$T/real.out" 2>"$T/real.err"
	real=$?
	why=""
	[ $dry = "$want" ] || no "the dry run exited $dry, not $want"
	[ $real = "$want" ] || no "the command exited $real, not $want"
	[ -s "$T/real.err" ] || no "the command said nothing on stderr"
	cmp -s "$T/dry.err" "$T/real.err" ||
		no "their words differ: '$(cat "$T/dry.err")' and '$(cat "$T/real.err")'"
	[ ! -e "$T/before" ] || cmp -s "$T/before" "$T/win" ||
		no "the window changed"
	if [ -z "$why" ]; then
		ok "$name: both ways exit $want, the same words: $(head -n 1 "$T/real.err")"
	else
		failed "$name:$why"
	fi
}

# ---- a window that had its size before smq formatted it ----
truncate -s 1M "$T/win"
"$S" init --fit -n 2 --queues 2 >/dev/null || failed "init --fit"
[ "$(stat -c %s "$T/win")" = 1048576 ] || failed "init --fit changed the size"
both "a larger shape than the 1 MiB the file held, --force" 1 \
	init -n 4 -e 256 --entry-size 4K --force
[ "$(stat -c %s "$T/win")" = 1048576 ] &&
	ok "the file is 1 MiB still" || failed "the file is $(stat -c %s "$T/win") bytes"
grep -q "what fits in 1.0 MiB" "$T/real.err" ||
	failed "the refusal does not say what fits: $(cat "$T/real.err")"
run init -n 4 -e 64 --grow
[ $rc = 0 ] && [ "$(stat -c %s "$T/win")" -gt 1048576 ] &&
	ok "--grow grows it by name, to $(stat -c %s "$T/win") bytes" ||
	failed "--grow: exit $rc, $(stat -c %s "$T/win") bytes: $(cat "$T/err")"
grown=$(stat -c %s "$T/win")
both "a shape larger than the size --grow gave it" 1 \
	init -n 4 -e 128 --force
[ "$(stat -c %s "$T/win")" = "$grown" ] ||
	failed "after the refusal the file is $(stat -c %s "$T/win") bytes, not $grown"

# ---- processes at work ----
rm -f "$T/win"
"$S" init -n 2 --queues 4 >/dev/null || die "init"
bg_start "$S" -b 1 sync -T 10
"$S" sync -T 10 >/dev/null || failed "sync"
wait_pid 10 $pid "board 1's sync"
bg_start "$S" -b 1 recv -q 1 -c 0 -T $RT
RX=$pid
until_ok receiver_is 1 asleep || failed "the receiver never showed asleep"
both "init beside a receiver at work" 1 init -n 2 --queues 4
both "init --keep of a window that differs, a receiver at work" 1 \
	init -n 2 --queues 5 --keep
both "clear beside a receiver at work" 1 clear
both "clear -q 1 beside its receiver" 1 clear -q 1
run clear -q 2 --dry-run
[ $rc = 0 ] && grep -q "clear would empty no message" "$T/out" &&
	ok "clear -q 2 --dry-run of a queue nobody works on: exit 0" ||
	failed "clear -q 2 --dry-run: exit $rc, $(cat "$T/out" "$T/err")"
kill $RX
wait_pid 10 $RX "the receiver"

# ---- another maintenance running ----
if [ -x "$H" ]; then
	SMQ_TEST_HOLD=maint_locked:$T/held SMQ_TEST_HOLD_MAX=60 \
		"$H" clear </dev/null >/dev/null 2>&1 &
	HP=$!
	track $HP
	if within 10 test -s "$T/held"; then
		both "init while a clear holds the lock" 1 init -n 2 --queues 4
		both "clear while a clear holds the lock" 1 clear
	else
		failed "the hooked clear was never held"
	fi
	rm -f "$T/held"
	wait_pid 10 $HP "the held clear"
else
	failed "no $H: make tests builds it"
fi

# ---- another format version ----
cp "$T/win" "$T/v7"
printf '\007\000\000\000' | dd of="$T/v7" bs=1 seek=8 conv=notrunc 2>/dev/null
SMQ_WINDOW=file:$T/v7 both "a window of format version 7" 1 init -n 2

# ---- what they empty, said and counted ----
"$S" init -n 2 --queues 12 --force >/dev/null || die "init 12 queues"
for q in 0 1 2 3 4 5 6 7 8 9; do
	n=$((q + 1))
	while [ $n -gt 0 ]; do
		"$S" send -q $q x >/dev/null || failed "send on queue $q"
		n=$((n - 1))
	done
done
run init -n 2 --queues 12 --force --dry-run
grep -q "init formats it and empties 55 messages in 10 queues: queue 9: 10, queue 8: 9" "$T/out" &&
	ok "init --dry-run says what init would empty" ||
	failed "init --dry-run: $(grep empties "$T/out")"
run init -n 2 --queues 12 --force
want="emptied 55 messages in 10 queues: queue 9: 10, queue 8: 9, queue 7: 8, queue 6: 7, queue 5: 6, queue 4: 5, queue 3: 4, queue 2: 3, and 2 more queues"
[ $rc = 0 ] && grep -qF "$want" "$T/out" &&
	ok "init --force over waiting messages: $want" ||
	failed "init --force: exit $rc, $(cat "$T/out" "$T/err")"
for i in 1 2 3 4 5; do "$S" send -q 3 y >/dev/null; done
run --json clear -q 3
python3 - "$T/out" <<'PY' && ok "clear -q 3 --json: 5 messages, queue 3" || failed "clear -q 3: $(cat "$T/out")"
import json, sys
e = json.load(open(sys.argv[1]))["emptied"]
sys.exit(0 if e == {"messages": 5, "queues": 1,
                    "most": [{"queue": 3, "messages": 5}]} else 1)
PY
"$S" metrics | grep -q '^smq_window_emptied_messages_total{window="file:'"$T"'/win"} 60$' &&
	ok "metrics: smq_window_emptied_messages_total 60 (55 + 5)" ||
	failed "metrics: $(grep emptied_messages "$T/out"; "$S" metrics | grep emptied)"
finish 16
