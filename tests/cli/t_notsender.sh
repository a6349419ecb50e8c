#!/bin/sh
# Sender sets through smqctl: a board outside a queue's sender set (init
# --senders) that sends on the queue, or on a group with such a queue, is
# refused: exit 1, nothing on stdout, a message naming the board, the queue
# and who may send, and the window's bytes as they were.  The boards of
# the set send, and their messages arrive.
# Prints "ok"/"FAIL" per case; exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
W=$T/w
export SMQ_WINDOW="file:$W"

# queue 0: only board 1 sends; queue 1: boards 0 and 2; queue 2: every
# board.  Group "mixed": queues 2 and 0.
"$S" init --boards 3 --queues 3 --entries 8 --entry-size 64 \
	--senders 0:1 --senders 1:0,2 --group mixed=2,0 >/dev/null ||
	die "init with sender sets"

# refused BOARD ARGS...: smqctl -b BOARD ARGS exits 1, says nothing on
# stdout, and leaves every byte of the window as it was
refused() {
	cp "$W" "$T/before"
	b=$1
	shift
	run -b "$b" "$@"
	want_rc 1
	want_no_out
	want_smqctl
	cmp -s "$T/before" "$W" ||
		no "$(cmp -l "$T/before" "$W" | wc -l) bytes of the window changed"
}

refused 0 send -q 0 --timeout 0 from-0
want_err "board 0 is not among the senders of queue 0 (board 1)"
verdict "board 0 sends on queue 0 (board 1's alone): refused, nothing written"

refused 2 send -q 0 --timeout 0 from-2
want_err "board 2 is not among the senders of queue 0 (board 1)"
verdict "board 2 sends on queue 0 (board 1's alone): refused, nothing written"

refused 1 send -q 1 --timeout 0 from-1
want_err "board 1 is not among the senders of queue 1 (boards 0 and 2)"
verdict "board 1 sends on queue 1 (boards 0 and 2): refused, nothing written"

refused 0 send --group mixed --timeout 0 to-mixed
want_err "board 0 is not among the senders of every queue of group mixed"
verdict "board 0 sends on group mixed (queue 0 among it): refused, nothing written"

refused 2 send --group mixed --timeout 0 to-mixed
want_err "board 2 is not among the senders of every queue of group mixed"
verdict "board 2 sends on group mixed: refused, nothing written"

# the senders of each set send; every message arrives once, from them
run -b 1 send -q 0 --timeout 0 one-to-0
want_rc 0
run -b 2 send -q 1 --timeout 0 two-to-1
want_rc 0
run -b 1 send --group mixed --timeout 0 one-to-mixed
want_rc 0
verdict "the boards of each set send: queue 0 from board 1, queue 1 from board 2, group mixed from board 1"

run -b 0 recv -q 0 --count 2 --timeout 5
want_rc 0
want_out_is 'one-to-0\none-to-mixed\n'
verdict "queue 0's receiver gets board 1's messages, once each"
run -b 1 recv -q 1 --count 1 --timeout 5
want_rc 0
want_out_is 'two-to-1\n'
verdict "queue 1's receiver gets board 2's message"
run -b 2 recv -q 2 --count 1 --timeout 5
want_rc 0
want_out_is 'one-to-mixed\n'
verdict "queue 2's receiver gets the group's message"
run dump
want_rc 0
verdict "dump finds the window valid"

finish 10
