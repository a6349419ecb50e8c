#!/bin/sh
# The demo (cli/demo.sh, make demo) on a window of its own: it succeeds,
# received text shows as text, and its transcript runs as printed: every
# "$ " line pasted into a shell, in order, on a fresh window, succeeds and
# prints what the demo printed for it (the messages received).
# Prints "ok"/"FAIL" per check; exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
[ -x "$B/smqctl" ] || skip "smqctl not built ($B/smqctl): run make first"
[ -d /dev/shm ] && [ -w /dev/shm ] ||
	skip "no writable /dev/shm: the demo's default transport is shm"
win=$SHM
unset SMQ_DEBUG 2>/dev/null
# the demo, and each line of its transcript, end within this (a recv of
# the demo has no --timeout: a message that is not there would hang it)
bound=$((60 * slow))

# ---- the demo itself ----
SMQ_WINDOW=shm:$win SMQCTL=$B/smqctl timeout --foreground -k 5 $bound \
	sh cli/demo.sh >"$T/demo" 2>"$T/demo.err"
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
n=0 replayed=0 bg=""
while IFS= read -r line; do
	case $line in
	'$ '*) ;;
	*) continue ;;
	esac
	n=$((n + 1))
	cmd=${line#\$ }
	# what the demo printed after this line
	awk -v n="$n" '/^\$ /{ k++; next } k == n' "$T/demo" >"$T/want.$n"
	case $cmd in
	*" &")
		# a line the demo runs in the background: ours, waited for below
		bg_start env SMQ_WINDOW=shm:$win timeout -k 5 $bound sh -c "${cmd% &}" \
			>"$T/got.$n" 2>"$T/err.$n"
		bg="$bg $pid:$n"
		replayed=$((replayed + 1))
		continue
		;;
	esac
	SMQ_WINDOW=shm:$win timeout --foreground -k 5 $bound sh -c "$cmd" \
		>"$T/got.$n" 2>"$T/err.$n" </dev/null
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
for b in $bg; do
	k=${b#*:}
	wait_pid 30 "${b%:*}" "line $k of the transcript, run in the background"
	if [ $rc != 0 ]; then
		failed "as printed, line $k in the background exits $rc: $(head -n 1 "$T/err.$k")"
		replayed=$((replayed - 1))
	fi
done
[ "$n" -ge 8 ] && [ "$replayed" = "$n" ] && ok "all $n command lines of the transcript run as printed" ||
	failed "$replayed of $n command lines ran as printed"
# the demo, its messages as text, the two recvs replayed, the transcript
finish 5
