#!/bin/sh
# smqctl recv: what it writes (a line of text per message, escaped where the
# line would break; --null; --raw; --hex and --json excluding the others),
# and that it receives at least once: a message it could not write (a full
# disk), would not frame (a NUL under --null) or was killed writing (SIGKILL
# while blocked on a full pipe) stays queued for the next recv.
# Prints "ok"/"FAIL" per case; exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
cd "$T" || exit 1
W=$T/w
export SMQ_WINDOW="file:$W"
# every recv waits at most this long for a message (the messages are
# queued before it starts: only a wrong count waits that long)
R=$((10 * slow))

# send1 PRINTF-FORMAT: one message of those bytes on queue 1, as board 0
send1() { printf "$1" | "$S" send --queue 1 || no "send failed"; }

"$S" init --entries 8 --entry-size 64K >/dev/null || die "init"

# ---- text, a line each ----
send1 'hello'
send1 'two lines\n'
run -b 1 recv --count 2 --timeout "$R"
want_rc 0
want_out_is 'hello\ntwo lines\n'
verdict "recv: a line per message; a message's own final newline is not doubled"

# a newline inside, a backslash, CR, a tab, control bytes, bytes that are
# not UTF-8, a C1 control in UTF-8 form, and UTF-8 text
send1 'a\nb\\c\r\td\001\033[31m\377\302\233\303\251\n'
run -b 1 recv --timeout "$R"
want_rc 0
want_out_is 'a\\nb\\\\c\\r\td\\x01\\x1b[31m\\xff\\xc2\\x9b\303\251\n'
verdict "recv: what would break the line or drive the terminal is escaped (\\n \\\\ \\r \\xNN), UTF-8 text is not"

send1 ''
run -b 1 recv --timeout "$R"
want_rc 0
want_out_is '\n'
verdict "recv: an empty message is an empty line"

# ---- --null ----
send1 'one\ntwo'
send1 'three'
run -b 1 recv --null --count 2 --timeout "$R"
want_rc 0
want_out_is 'one\ntwo\000three\000'
verdict "recv --null: each message as it is, then a NUL"

send1 'a\000b'
send1 'after'
run -b 1 recv -0 --count 2 --timeout "$R"
want_rc 1
want_out_is ''
want_err "holds a NUL byte, which --null cannot frame: it stays queued"
run -b 1 recv --hex --count 2 --timeout "$R"
want_rc 0
want_out_is 'board 0, 3 bytes: 61 00 62\nboard 0, 5 bytes: 61 66 74 65 72\n'
verdict "recv -0: a message holding a NUL is refused and stays queued, and the one after it"

# ---- --raw ----
send1 'bin\000ary\n'
run -b 1 recv --raw --timeout "$R"
want_rc 0
want_out_is 'bin\000ary\n'
verdict "recv --raw: the bytes sent, nothing added"

for args in "--raw --count 2" "--raw --count 0 --timeout 0" "--hex --null" \
	"--null --raw" "--json --hex" "--json --raw"; do
	# the bound first: a row's own --timeout comes after it and wins
	# shellcheck disable=SC2086
	run -b 1 recv --timeout "$R" $args
	want_rc 2
	want_out_is ''
	[ -s "$T/err" ] || no "no message"
	verdict "recv $args: a usage error"
done

# ---- a write that fails: the message stays ----
if [ -w /dev/full ]; then
	send1 'kept'
	"$S" -b 1 recv --timeout "$R" >/dev/full 2>"$T/err"
	rc=$?
	want_rc 1
	want_err "cannot write to standard output"
	want_err "the message stays queued"
	[ "$(grep -c . "$T/err")" = 1 ] || no "more than one message on stderr"
	run -b 1 recv --timeout 1
	want_rc 0
	want_out_is 'kept\n'
	verdict "recv >/dev/full: exit 1, and the next recv gets the message"
else
	note "no /dev/full: the failed write is not tested"
fi

# ---- killed while writing: nothing lost ----
# Three messages of 40000 bytes to a pipe nobody reads: the first fits in
# the pipe, the second blocks half written; recv is killed there.  The
# next recv must get the second and the third whole.
for c in A B C; do
	head -c 40000 /dev/zero | tr '\0' "$c" >"$T/m$c"
	"$S" send --queue 1 --file "$T/m$c" || no "send $c failed"
done
mkfifo "$T/fifo" || die "mkfifo"
exec 3<>"$T/fifo"   # a reader that never reads (and never closes)
bg_start "$S" -b 1 recv --null --count 3 --timeout "$R" >"$T/fifo" 2>"$T/kerr"
# blocked in write() on the full pipe: wchan says so where the kernel
# shows it; else give it time
i=0
while [ $i -lt $((100 * slow)) ]; do
	wchan=$(cat "/proc/$pid/wchan" 2>/dev/null)
	case $wchan in *pipe_write*|*pipe_wait*) break ;; esac
	[ -z "$wchan" ] || [ "$wchan" = 0 ] && [ $i -ge $((20 * slow)) ] && break
	# a nap between looks at wchan; where the kernel hides it, 20 naps
	# stand in for 'blocked in write()' (said above: no state to read)
	sleep 0.05
	i=$((i + 1))
done
kill -9 "$pid"
wait_pid 10 "$pid" "recv killed with SIGKILL"
# The pipe holds the messages recv took whole (j of them), then part of
# the one it was writing when killed; the next recv must get that one and
# every one after it, whole: nothing lost, one written twice.
timeout 2 cat <&3 >"$T/got" 2>/dev/null
exec 3>&-
: >"$T/prefix.0"
for j in 0 1 2 3; do
	: >"$T/suffix.$j"
	for k in 0 1 2; do
		c=$(echo ABC | cut -c$((k + 1)))
		if [ $k -lt $j ]; then f=prefix; else f=suffix; fi
		{ cat "$T/m$c"; printf '\000'; } >>"$T/$f.$j"
	done
	[ $j -lt 3 ] && cp "$T/prefix.$j" "$T/prefix.$((j + 1))"
done
run -b 1 recv --null --count 0 --timeout 1
want_rc 0
j=none
for k in 0 1 2 3; do cmp -s "$T/suffix.$k" "$T/out" && j=$k && break; done
got=$(wc -c <"$T/got")
if [ "$j" = none ]; then
	no "the next recv got $(wc -c <"$T/out") bytes, not whole messages up to C"
else
	taken=$(wc -c <"$T/prefix.$j")
	head -c "$taken" "$T/got" | cmp -s - "$T/prefix.$j" ||
		no "the pipe does not hold the $j messages taken"
	[ "$j" -lt 3 ] && [ "$got" -gt "$taken" ] ||
		no "recv was not stopped inside a message ($got bytes in the pipe, $j messages taken)"
fi
verdict "recv killed (SIGKILL) blocked writing to a full pipe: the next recv gets the message it was writing and the rest ($j taken, $got bytes in the pipe)"

# 6 cases, 6 usage errors, the killed recv, and the full disk where there
# is /dev/full
floor=13
[ -w /dev/full ] && floor=14
finish $floor
