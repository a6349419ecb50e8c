#!/bin/sh
# The demo (cli/demo.sh, make demo) on a window of its own: it succeeds,
# received text shows as text, and its transcript runs as printed: every
# "$ " line pasted into a shell, in order, on a fresh window, succeeds and
# prints what the demo printed for it (the messages received).
# Prints "ok"/"FAIL" per check; exit 0 pass, 1 fail, 77 skip.
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
[ -x "$B/smqctl" ] || { echo "smqctl not built ($B/smqctl): run make first"; exit 77; }
[ -d /dev/shm ] && [ -w /dev/shm ] ||
	{ echo "no writable /dev/shm: the demo's default transport is shm"; exit 77; }

T=$(mktemp -d) || exit 1
win=smq-t-demo-$$
trap 'rm -rf "$T"; rm -f "/dev/shm/$win"' EXIT
trap 'exit 1' INT TERM HUP
unset SMQ_DEBUG 2>/dev/null
export LC_ALL=C
fail=0
ok() { printf 'ok   %s\n' "$*"; }
failed() { printf 'FAIL %s\n' "$*"; fail=1; }

# ---- the demo itself ----
SMQ_WINDOW=shm:$win SMQCTL=$B/smqctl sh cli/demo.sh >"$T/demo" 2>"$T/demo.err"
rc=$?
[ $rc = 0 ] && ok "the demo exits 0" ||
	{ failed "the demo exits $rc"; sed 's/^/    /' "$T/demo.err"; }
grep -qx 'hello from board 0' "$T/demo" && grep -qx 'hello from board 1' "$T/demo" &&
	ok "the demo shows the received messages as text" ||
	failed "the demo does not show 'hello from board 0' and 'hello from board 1' as lines"
grep -q -- '--hex' "$T/demo" && failed "the demo still receives with --hex"

# ---- its transcript, replayed ----
# Each "$ COMMAND" line and the lines after it up to the next: what it
# printed.  Only the recv lines' output is compared (the others print pids
# and times).
rm -f "/dev/shm/$win"
n=0 replayed=0
while IFS= read -r line; do
	case $line in
	'$ '*) ;;
	*) continue ;;
	esac
	n=$((n + 1))
	cmd=${line#\$ }
	# what the demo printed after this line
	awk -v n="$n" '/^\$ /{ k++; next } k == n' "$T/demo" >"$T/want.$n"
	SMQ_WINDOW=shm:$win sh -c "$cmd" >"$T/got.$n" 2>"$T/err.$n" </dev/null
	rc=$?
	if [ $rc != 0 ]; then
		failed "as printed, '$cmd' exits $rc: $(head -n 1 "$T/err.$n")"
		continue
	fi
	replayed=$((replayed + 1))
	case $cmd in
	*" recv "*|*" recv")
		cmp -s "$T/want.$n" "$T/got.$n" && ok "as printed: $cmd -> $(cat "$T/got.$n")" ||
			failed "as printed, '$cmd' prints '$(cat "$T/got.$n")', the demo '$(cat "$T/want.$n")'"
		;;
	esac
done <"$T/demo"
# a background sync of board 1 may still be finishing
wait
[ "$n" -ge 8 ] && [ "$replayed" = "$n" ] && ok "all $n command lines of the transcript run as printed" ||
	failed "$replayed of $n command lines ran as printed"
[ $fail = 0 ]
