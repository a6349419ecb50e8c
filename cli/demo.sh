#!/bin/sh
# The main job on the default window ($SMQ_WINDOW, else shm:smq): two boards
# as two processes.  Board 0 formats the window; board 1 starts first and
# waits for it; both synchronise; messages go both ways; dump shows them.
set -eu
smqctl=${SMQCTL:-$(dirname "$0")/../build/smqctl}
run() { echo "\$ smqctl $*"; "$smqctl" "$@"; }

run init --boards 2 --queues 2
echo "\$ smqctl --board 1 sync &"
"$smqctl" --board 1 sync --timeout 10 &
board1=$!
run sync --timeout 10
wait $board1
run send --queue 1 "hello from board 0"
run --board 1 recv --queue 1 --hex
run --board 1 send --queue 0 "hello from board 1"
run recv --queue 0 --hex
run dump
