#!/bin/sh
# The main job on the default window ($SMQ_WINDOW, else shm:smq): two boards
# as two processes.  Board 0 formats the window; board 1 starts first and
# waits for it; both synchronise; messages go both ways; dump shows them.
# Every command is printed as it runs, quoted so that it can be pasted into
# a shell as it stands (from the directory make demo ran in).
set -eu
smqctl=${SMQCTL:-$(dirname "$0")/../build/smqctl}

# quote WORD: the word as a shell reads it back
quote() {
	case $1 in
	"" | *[!A-Za-z0-9_./:=,+@%-]*)
		case $1 in
		*[\"\$\`\\!]*) printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")" ;;
		*) printf '"%s"' "$1" ;;
		esac
		;;
	*) printf '%s' "$1" ;;
	esac
}
# show ARGS...: the command line "$ smqctl ARGS"
show() {
	printf '$ %s' "$(quote "$smqctl")"
	for a in "$@"; do
		printf ' %s' "$(quote "$a")"
	done
}
run() { show "$@"; echo; "$smqctl" "$@"; }

run init --boards 2 --queues 2
show --board 1 sync --timeout 10; echo " &"
"$smqctl" --board 1 sync --timeout 10 &
board1=$!
run sync --timeout 10
wait $board1
run send --queue 1 "hello from board 0"
run --board 1 recv --queue 1
run --board 1 send --queue 0 "hello from board 1"
run recv --queue 0
run dump
