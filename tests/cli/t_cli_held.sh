#!/bin/sh
# smqctl against an init or a call held at a known point, on a fresh shm
# window.  The test build tests/smqctl-hooked (the CLI on the library with
# its test hooks, plus tests/lib/hold_hook.c) holds a command at hook POINT
# when run with SMQ_TEST_HOLD=POINT:FILE: it creates FILE, holding its pid,
# and waits until FILE is removed.
#  (a) init while an init holds the maintenance lock, and while it writes:
#      exit 1, naming the other init's pid (-EALREADY); the held one then
#      finishes;
#  (b) clear likewise;
#  (c) while an init writes the new layout (-EBUSY to an open): init is
#      refused naming its pid, clear says "being re-formatted", and so does
#      sync on board 0; sync on board 1 with a short --timeout exits 1,
#      saying an init or clear is under way, and with a long one says it
#      waits (-v) and is ready in the new generation once the init ends;
#  (h) an init killed once it set its phase, before it told any notice:
#      dump says unfinished and board 1 is refused as it says (send, and
#      sync with a short --timeout, exit 1 naming an unfinished init or
#      clear), sync on board 1 with a long one waits, and is ready in the
#      new generation once board 0 runs init again and syncs;
#  (d) a board held in a call (a recv held inside its take, queue 1 open):
#      without --force, init, clear and clear -q 1 are refused before any
#      handshake, naming the worker (board 1, its pid, receiver of queue 1,
#      in a call), while clear -q 2 goes through (a call on queue 1 is not
#      in its way); with --force the handshake is reached, and init, clear
#      and clear -q 1 --timeout 1 exit 1 naming board 1 and its pid: it did
#      not leave its call; the window as it was (same generation and
#      epochs, a message queued before still there); the held message
#      delivered once when let go, and init goes through.
# The refusals are where smqctl reads who held the window through its
# handle (maint_error): the sanitizer build runs this script too.
# Prints "ok"/"FAIL" per check; exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
[ -x "$B/tests/smqctl-hooked" ] ||
	skip "the hooked smqctl is not built ($B/tests/smqctl-hooked): run make first"
[ -d /dev/shm ] || skip "no /dev/shm for a shm window"
# a copy: the build directory may be rebuilt while the test runs
cp "$B/tests/smqctl-hooked" "$T/smqctl-hooked" && chmod 755 "$T/smqctl-hooked" || exit 1
H=$T/smqctl-hooked
W=shm:$SHM
unset SMQ_WINDOW SMQ_DEBUG SMQ_TEST_HOLD 2>/dev/null
cd "$T" || exit 1

# after a FAIL: what the last command said
on_failure() {
	for f in out err; do
		[ -s "$T/$f" ] && sed "s/^/       $f: /" "$T/$f" | head -n 20
	done
	return 0
}
# refused RC WORDS: the last run exited RC and said WORDS on stderr
refused() {
	[ "$rc" -eq "$1" ] && grep -qF -e "$2" "$T/err"
}
# held NAME POINT ARGS...: the hooked smqctl ARGS in the background, held
# at POINT; waits (10 s at most) until it is held there.  Its output goes
# to $T/NAME.out and .err; its pid is in $T/NAME.held while it is held,
# and in $pid.
held() {
	name=$1 point=$2
	shift 2
	rm -f "$T/$name.held"
	SMQ_TEST_HOLD=$point:$T/$name.held SMQ_TEST_HOLD_MAX=60 \
		"$H" "$@" </dev/null >"$T/$name.out" 2>"$T/$name.err" &
	pid=$!
	track $pid
	if within 10 test -s "$T/$name.held" &&
	   [ "$(cat "$T/$name.held")" = "$pid" ]; then
		return 0
	fi
	failed "$name: not held at $point within 10 s"
	sed "s/^/       $name: /" "$T/$name.err"
	return 1
}
# release NAME: lets the one held as NAME ($pid) go; waits (20 s at most)
# for it to end: its exit status in rc
release() {
	rm -f "$T/$1.held"
	wait_pid 20 "$pid" "$1, let go"
}
generation() { # the window's generation, as dump says it
	"$S" -w "$W" dump 2>/dev/null |
		sed -n '1s/.*, generation \([0-9]*\),.*/\1/p'
}
epoch() { # epoch QUEUE: its epoch, as dump -v says it (0x...)
	"$S" -w "$W" dump -v -q "$1" 2>/dev/null |
		sed -n 's/^ *receiver pid .*; epoch \(0x[0-9a-f]*\)$/\1/p'
}
# said WORDS...: the last run's stderr says each of them
said() {
	for words in "$@"; do
		grep -qF -e "$words" "$T/err" || return 1
	done
}

"$S" -w "$W" init --boards 2 >/dev/null || die "init"
g=$(generation)
check "a fresh window: generation $g" [ -n "$g" ]

# ---- (a), (b): another init or clear while one runs ----
for point in maint_locked maint_writing; do
	held init "$point" -w "$W" init --boards 2 || break
	run -w "$W" init --boards 2
	check "init while an init holds at $point: exit 1, naming pid $pid" \
		refused 1 "init: another init or clear runs on $W (pid $pid"
	"$H" -w "$W" clear </dev/null >"$T/out" 2>"$T/err"
	rc=$?
	check "clear (by the hooked smqctl) likewise" \
		refused 1 "clear: another init or clear runs on $W (pid $pid"
	run -w "$W" clear -q 1 --timeout 1
	check "clear of one queue likewise" \
		refused 1 "clear: another init or clear runs on $W (pid $pid"
	release init
	g=$((g + 1))
	check "the held init then finishes: exit 0, generation $g" \
		sh -c '[ "$1" -eq 0 ] && grep -q "formatted .*: generation $2$" "$3"' \
		sh "$rc" "$g" "$T/init.out"
	check "...and the window is whole (dump exits 0)" \
		sh -c '"$1" -w "$2" dump -q 0 >/dev/null' sh "$S" "$W"
done

# ---- (c) sync while an init writes the new layout ----
if held init maint_formatted -w "$W" init --boards 2; then
	run -w "$W" sync --timeout 1
	check "sync on board 0 meeting it: exit 1, being re-formatted" \
		refused 1 "window $W is being re-formatted right now"
	run -w "$W" init --boards 2
	check "init meeting it: exit 1, naming pid $pid" \
		refused 1 "init: another init or clear runs on $W (pid $pid"
	run -w "$W" clear
	check "clear meeting it: exit 1, being re-formatted" \
		refused 1 "window $W is being re-formatted right now"
	run -w "$W" -b 1 sync --timeout 1
	check "sync on board 1, --timeout 1: exit 1, an init under way" \
		refused 1 "has not formatted window $W (busy: an init or clear is under way"
	"$S" -w "$W" -b 1 -v sync --timeout 30 </dev/null >"$T/s1.out" \
		2>"$T/s1.err" &
	s1=$!
	track $s1
	check "sync on board 1 says it waits for board 0" \
		within 10 grep -sqF "board 1: waiting for board 0 to format $W" "$T/s1.err"
	check "...and waits while the init is held" running "$s1"
	release init
	g=$((g + 1))
	check "the held init then finishes: exit 0, generation $g" \
		sh -c '[ "$1" -eq 0 ] && grep -q "formatted .*: generation $2$" "$3"' \
		sh "$rc" "$g" "$T/init.out"
	run -w "$W" sync --timeout 20
	check "board 0 then declares the system ready" \
		sh -c '[ "$1" -eq 0 ] && grep -q "system ready: 2 boards" "$2"' \
		sh "$rc" "$T/out"
	wait_pid 20 "$s1" "board 1's sync"
	check "board 1's sync ends ready in generation $g" \
		sh -c '[ "$1" -eq 0 ] &&
		       grep -q "board 1: system ready (generation $2)" "$3"' \
		sh "$rc" "$g" "$T/s1.out"
fi

# ---- (d) a board that does not leave its call ----
# The held receiver has queue 1 open: init and clear refuse it as a worker
# (SMQ_EATWORK) before any handshake; --force goes past that refusal to the
# handshake, which it does not pass: the call is held (-SMQ_EHELD).
"$S" -w "$W" init --boards 2 --queues 3 >/dev/null || failed "(d) init"
g=$(generation)
"$S" -w "$W" -b 1 send -q 0 "queued before" >/dev/null || failed "(d) send to 0"
"$S" -w "$W" send -q 1 "the held one" >/dev/null || failed "(d) send to 1"
"$S" -w "$W" -b 1 send -q 2 "on queue 2" >/dev/null || failed "(d) send to 2"
if held recv commit -w "$W" -b 1 recv -q 1 --count 1 --timeout 30; then
	e1=$(epoch 1)
	check "queue 1's epoch is generation $g's" \
		[ "$e1" = "$(printf '%#x' $((g << 32)))" ]
	for cmd in init clear; do
		run -w "$W" "$cmd" --timeout 1
		check "$cmd beside a held take: exit 1" [ "$rc" -eq 1 ]
		check "...refused as work on the window (not after a handshake), naming board 1 pid $pid, receiver of queue 1 in a call, and --force" \
			said "smqctl: $cmd: processes are at work on the window: board 1 pid $pid on " \
				" (receiver of queue 1, in a call).  $cmd would empty every queue under it: stop it first, or --force"
	done
	run -w "$W" clear -q 1 --timeout 1
	check "clear -q 1 beside a held take: exit 1" [ "$rc" -eq 1 ]
	check "...refused as work on queue 1, naming board 1 pid $pid, receiver of queue 1 in a call, and --force" \
		said "smqctl: clear: processes are at work on queue 1: board 1 pid $pid on " \
			" (receiver of queue 1, in a call).  clear would empty the queue under it: stop it first, or --force"
	# a clear of another queue waits for the calls on that queue only
	run -w "$W" clear -q 2 --timeout 1
	check "clear -q 2 beside the held take on queue 1: exit 0, epoch $(printf '%#x' $(((g << 32) + 1))), generation $g goes on" \
		sh -c '[ "$1" -eq 0 ] && grep -qxF "$2" "$3"' sh "$rc" \
		"cleared queue 2 of $W: epoch $(printf '%#x' $(((g << 32) + 1))) (generation $g goes on)" "$T/out"
	"$S" -w "$W" --json dump -q 2 >"$T/out" 2>"$T/err"
	check "...queue 2 is empty" grep -q '"queued": 0' "$T/out"
	# --force: past the refusal, into the handshake the held call holds
	for cmd in init clear; do
		run -w "$W" "$cmd" --force --timeout 1
		check "$cmd --force --timeout 1 beside a held take: exit 1, names board 1 pid $pid" \
			refused 1 "$cmd: board 1 (pid $pid on "
		check "...says its call on queue 1 did not let go within 1 s and nothing changed" \
			said "did not leave a call it began on queue 1 within 1 s; nothing was changed"
	done
	run -w "$W" clear -q 1 --force --timeout 1
	check "clear -q 1 --force --timeout 1 beside a held take: exit 1, names board 1 pid $pid" \
		refused 1 "clear: board 1 (pid $pid on "
	check "...says its call on queue 1 did not let go within 1 s and nothing changed" \
		said "did not leave a call it began on queue 1 within 1 s; nothing was changed"
	check "the window as it was: generation $g" [ "$(generation)" = "$g" ]
	check "...queue 1's epoch as it was ($e1)" [ "$(epoch 1)" = "$e1" ]
	"$S" -w "$W" --json dump -q 0 >"$T/out" 2>"$T/err"
	check "...the message queued before still queued" \
		grep -q '"queued": 1' "$T/out"
	release recv
	check "the held take, let go, delivers its message" \
		sh -c '[ "$1" -eq 0 ] && grep -qx "the held one" "$2"' \
		sh "$rc" "$T/recv.out"
	run -w "$W" recv -q 0 --count 1 --timeout 1
	check "the message queued before is received, once" \
		sh -c '[ "$1" -eq 0 ] && [ "$(cat "$2")" = "queued before" ]' \
		sh "$rc" "$T/out"
	run -w "$W" init --boards 2 --timeout 1
	check "init (no --force) then goes through: generation $((g + 1))" \
		sh -c '[ "$1" -eq 0 ] && [ "$2" = "$3" ]' sh "$rc" \
		"$(generation)" "$((g + 1))"
fi

# ---- (e) a clear of every queue killed after telling the boards ----
# The next clear, of one queue, must finish it (every queue, a new
# generation) and say so, not that it cleared that queue alone.
g=$(generation)
if held clear maint_told -w "$W" clear; then
	kill -9 "$pid"
	wait_pid 20 "$pid" "the clear, killed"
	run -w "$W" clear -q 1
	check "clear -q 1 after a clear of every queue was killed: says every queue, generation $((g + 1))" \
		sh -c '[ "$1" -eq 0 ] && grep -q "^cleared every queue of .*: generation $2 " "$3" &&
		       grep -q "left unfinished" "$3" && [ "$4" = "$2" ]' \
		sh "$rc" "$((g + 1))" "$T/out" "$(generation)"
	run -w "$W" --json clear -q 1
	check "...and once finished, clear -q 1 --json says queue 1 again" \
		grep -q '"queue": 1' "$T/out"
fi

# ---- (g) a window with groups, its init held in the handshake ----
# dump shows the groups of the layout it attached to, as it shows its
# boards and queues (it showed none)
W3=shm:$SHM-groups
"$S" -w "$W3" init -n 2 --queues 4 --group alpha=0,1 >/dev/null ||
	failed "init with a group"
if held groups maint_told -w "$W3" init -n 2 --queues 4 --group alpha=0,1; then
	"$S" -w "$W3" --json dump >"$T/out" 2>"$T/err"
	check "dump --json during a held init shows the group alpha (0, 1)" \
		python3 -c 'import json, sys
g = json.load(open(sys.argv[1]))["groups"]
sys.exit(0 if g == [{"name": "alpha", "queues": [0, 1]}] else 1)' "$T/out"
	"$S" -w "$W3" dump >"$T/out" 2>"$T/err"
	check "dump during a held init lists it too" \
		grep -qE '^alpha +0,1$' "$T/out"
	release groups
fi

# ---- (h) an init killed before it told any notice ----
# Every notice still holds the generation, so a board let in would work
# on a window dump calls unfinished: a board is not let in, and waits.
g=$(generation)
if held telling maint_telling -w "$W" init --boards 2; then
	kill -9 "$pid"
	wait_pid 20 "$pid" "the init, killed"
	run -w "$W" dump
	check "dump after an init killed before telling the boards: exit 1, unfinished" \
		sh -c '[ "$1" -ne 0 ] && grep -q "did not finish" "$2"' sh "$rc" "$T/err"
	run -w "$W" -b 1 send -q 0 hello
	check "send on board 1: exit 1, the init did not finish" \
		refused 1 "an init or clear did not finish"
	run -w "$W" -b 1 sync --timeout 1
	check "sync on board 1, --timeout 1: exit 1, the init did not finish" \
		refused 1 "has not formatted window $W (an init or clear did not finish"
	"$S" -w "$W" -b 1 sync --timeout 30 </dev/null >"$T/s1.out" 2>"$T/s1.err" &
	s1=$!
	track $s1
	sleep 1
	check "sync on board 1 with a long --timeout waits" running "$s1"
	run -w "$W" init --boards 2
	check "the next init finishes it: exit 0, generation $((g + 1))" \
		sh -c '[ "$1" -eq 0 ] && grep -q "formatted .*: generation $2$" "$3"' \
		sh "$rc" "$((g + 1))" "$T/out"
	run -w "$W" sync --timeout 20
	wait_pid 20 "$s1" "board 1's sync"
	check "board 1's sync ends ready in generation $((g + 1))" \
		sh -c '[ "$1" -eq 0 ] &&
		       grep -q "board 1: system ready (generation $2)" "$3"' \
		sh "$rc" "$((g + 1))" "$T/s1.out"
fi

# ---- (f) two inits at once on a new window ----
# The first has read the lock word (free) and not yet taken it; the second
# takes it and holds it.  The first must then find it taken, not take it
# over and format beside the second.
W2=shm:$SHM-two
if held first maint_locking -w "$W2" init --boards 2; then
	first=$pid
	if held second maint_locked -w "$W2" init --boards 2; then
		second=$pid
		pid=$first
		release first
		check "two inits on a new window: the one that read the lock free is refused (pid $second holds it)" \
			sh -c '[ "$1" -eq 1 ] && grep -q "another init or clear runs on .* (pid $2" "$3"' \
			sh "$rc" "$second" "$T/first.err"
		pid=$second
		release second
		check "...and the other formats the window: exit 0, dump exits 0" \
			sh -c '[ "$1" -eq 0 ] && "$2" -w "$3" dump >/dev/null' \
			sh "$rc" "$S" "$W2"
	fi
fi

finish 53
