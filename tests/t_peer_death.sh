#!/bin/sh
# Peer death.  (a) A board that is killed shows as dead in dump and top: on
# this host its liveness is its pid, at once; (b) on another host (a board
# run in a UTS namespace of another name, where we may make one) only its
# heartbeat tells, once it has aged past SMQ_HEARTBEAT_TIMEOUT_MS (5 s);
# (c) board 0's sync, waiting for boards 1 and 2, reports board 1 dead when
# board 1 is killed after it announced itself, within a few seconds of the
# kill and not only at its timeout.
# Prints "ok"/"FAIL" per check; exit 0 pass, 1 fail, 77 skip.
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
case $B in
/*) S=$B/smqctl ;;
*) S=$PWD/$B/smqctl ;;
esac
[ -x "$S" ] || { echo "smqctl not built ($S): run make first"; exit 77; }
if command -v jq >/dev/null 2>&1; then
	JSON=jq
elif command -v python3 >/dev/null 2>&1; then
	JSON=python3
else
	echo "neither jq nor python3: cannot read smqctl's JSON"
	exit 77
fi

T=$(mktemp -d) || exit 1
# Run a copy: the build directory may be rebuilt while the test runs.
cp "$S" "$T/smqctl" && chmod 755 "$T/smqctl" || exit 1
S=$T/smqctl
# SMQCTL_WRAP: shell words put before every smqctl invocation (valgrind,
# tests/valgrind.sh); the wrapper execs, so pids stay smqctl's own.
if [ -n "${SMQCTL_WRAP:-}" ]; then
	printf '#!/bin/sh\nexec %s "%s" "$@"\n' "$SMQCTL_WRAP" "$S" >"$T/wrapped" &&
		chmod 755 "$T/wrapped" || exit 1
	S=$T/wrapped
	echo "note: smqctl runs as: $SMQCTL_WRAP smqctl ARGS"
fi
W=file:$T/w
BG=""
cleanup() {
	for p in $BG; do kill -9 "$p" 2>/dev/null; done
	for p in $BG; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
unset SMQ_WINDOW SMQ_DEBUG 2>/dev/null
export LC_ALL=C

fail=0
ok() { echo "ok   $*"; }
failed() { echo "FAIL $*"; fail=1; }

# field FILE JQ-PATH: a value of a JSON document, as jq -r prints it
field() {
	if [ "$JSON" = jq ]; then
		jq -r "$2" "$1" 2>/dev/null
	else
		python3 - "$1" "$2" <<'EOF' 2>/dev/null
import json, re, sys
v = json.load(open(sys.argv[1]))
for key, idx in re.findall(r'\.(\w+)(?:\[(\d+)\])?', sys.argv[2]):
    v = v[key]
    if idx:
        v = v[int(idx)]
print(str(v).lower() if isinstance(v, bool) else v)
EOF
	fi
}
# alive_in CMD N: board N's "alive" in `smqctl --json CMD` (dump or top)
alive_in() {
	case $1 in
	dump) "$S" -w "$W" --json dump >"$T/j" 2>"$T/jerr" || return 1 ;;
	top) "$S" -w "$W" --json top --once --interval 0.1 >"$T/j" 2>"$T/jerr" ||
		return 1 ;;
	esac
	field "$T/j" ".board_table[$2].alive"
}
# waitfor SECONDS SHELL-CONDITION: poll it every 0.05 s
waitfor() {
	n=$(($1 * 20))
	while [ "$n" -gt 0 ]; do
		eval "$2" && return 0
		sleep 0.05
		n=$((n - 1))
	done
	eval "$2"
}
# now_ms: milliseconds of the clock (whole seconds where date has no %N)
now_ms() {
	t=$(date +%s%N 2>/dev/null)
	case $t in
	*N*|'') echo $(($(date +%s) * 1000)) ;;
	*) echo $((t / 1000000)) ;;
	esac
}

# ---- (a) a killed board shows dead at once on this host ----
"$S" -w "$W" init --boards 2 >/dev/null 2>&1 || { echo "init failed"; exit 1; }
"$S" -w "$W" -b 1 recv --timeout 30 >/dev/null 2>&1 &
rcv=$!
BG="$BG $rcv"
# it writes its pid and a heartbeat when it first sleeps
if waitfor 5 '[ "$(alive_in dump 1)" = true ]'; then
	ok "dump: board 1 (recv, pid $rcv) alive"
else
	failed "dump: board 1 (recv, pid $rcv) never shown alive: $(cat "$T/jerr")"
fi
pid=$(field "$T/j" '.board_table[1].pid')
[ "$pid" = "$rcv" ] && ok "dump: board 1's pid is recv's ($pid)" ||
	failed "dump: board 1's pid is $pid, recv is $rcv"
if [ "$(alive_in top 1)" = true ]; then
	ok "top --once: board 1 alive"
else
	failed "top --once: board 1 not shown alive: $(cat "$T/jerr")"
fi
kill -9 "$rcv"
wait "$rcv" 2>/dev/null
a=$(alive_in dump 1)
[ "$a" = false ] && ok "dump: board 1 dead right after kill -9" ||
	failed "dump: board 1 after kill -9: alive is '$a'"
a=$(alive_in top 1)
[ "$a" = false ] && ok "top --once: board 1 dead right after kill -9" ||
	failed "top --once: board 1 after kill -9: alive is '$a'"
# and while it is dead a zombie does not pass for alive either
"$S" -w "$W" -b 1 recv --timeout 30 >/dev/null 2>&1 &
rcv=$!
BG="$BG $rcv"
waitfor 5 '[ "$(alive_in dump 1)" = true ]'
kill -9 "$rcv"
# not reaped yet: a zombie
sleep 0.2
a=$(alive_in dump 1)
[ "$a" = false ] && ok "dump: board 1 dead while a zombie (not yet reaped)" ||
	failed "dump: board 1 while a zombie: alive is '$a'"
wait "$rcv" 2>/dev/null

# ---- (b) a board of another host: its heartbeat ages out ----
# A UTS namespace gives board 1 another host name: then only its heartbeat
# (every second while it waits) says it lives.
other=""
if command -v unshare >/dev/null 2>&1 &&
	unshare --uts sh -c 'hostname smq-other-host' 2>/dev/null; then
	other=yes
fi
if [ -z "$other" ]; then
	echo "skip (b): cannot make a UTS namespace here (unshare --uts)"
else
	"$S" -w "$W" init --boards 2 --force >/dev/null 2>&1 ||
		failed "(b) init"
	unshare --uts sh -c 'hostname smq-other-host &&
		exec "$0" -w "$1" -b 1 recv --timeout 30' "$S" "$W" \
		>/dev/null 2>&1 &
	rcv=$!
	BG="$BG $rcv"
	if waitfor 5 '[ "$(alive_in dump 1)" = true ]' &&
		[ "$(field "$T/j" '.board_table[1].host')" = smq-other-host ]; then
		ok "dump: board 1 on another host alive by its heartbeat"
	else
		failed "dump: board 1 on another host not shown alive" \
			"(host '$(field "$T/j" '.board_table[1].host')')"
	fi
	kill -9 "$rcv"
	wait "$rcv" 2>/dev/null
	t0=$(now_ms)
	a=$(alive_in dump 1)
	[ "$a" = true ] && ok "dump: just killed, its heartbeat is still young" ||
		failed "dump: board 1 on another host, just killed: alive '$a'"
	if waitfor 8 '[ "$(alive_in dump 1)" = false ]'; then
		t=$(($(now_ms) - t0))
		age=$(field "$T/j" '.board_table[1].heartbeat_age_ms')
		if [ "$age" -ge 4900 ] 2>/dev/null; then
			ok "dump: dead once its heartbeat aged out ($t ms after the kill, heartbeat age $age ms)"
		else
			failed "dump: dead with a heartbeat of only $age ms"
		fi
	else
		failed "dump: board 1 on another host still alive 8 s after kill -9"
	fi
	a=$(alive_in top 1)
	[ "$a" = false ] && ok "top --once: board 1 on another host dead" ||
		failed "top --once: board 1 on another host: alive '$a'"
fi

# ---- (c) sync reports a board that died while synchronising ----
"$S" -w "$W" init --boards 3 --force >/dev/null 2>&1 || failed "(c) init"
"$S" -w "$W" sync --timeout 10 --interval 50ms >"$T/s0.out" 2>"$T/s0.err" &
s0=$!
BG="$BG $s0"
"$S" -w "$W" -b 1 sync --timeout 30 >/dev/null 2>&1 &
s1=$!
BG="$BG $s1"
if waitfor 5 'grep -q "board 1 announced" "$T/s0.out"'; then
	ok "sync: board 0 saw board 1 announce itself"
else
	failed "sync: board 0 never printed 'board 1 announced'"
	sed 's/^/    | /' "$T/s0.out" "$T/s0.err"
fi
sleep 0.3
if kill -0 "$s0" 2>/dev/null; then
	ok "sync: board 0 still waits for board 2"
else
	failed "sync: board 0 ended before board 1 was killed"
fi
kill -9 "$s1"
wait "$s1" 2>/dev/null
t0=$(now_ms)
wait "$s0"
rc=$?
t=$(($(now_ms) - t0))
[ "$rc" -eq 1 ] && ok "sync: board 0 exits 1" ||
	failed "sync: board 0 exit status $rc, expected 1"
if grep -q 'board 1' "$T/s0.err" && grep -q 'died' "$T/s0.err"; then
	ok "sync: board 0 says board 1 died: $(head -n 1 "$T/s0.err")"
else
	failed "sync: board 0's stderr does not name board 1 as dead"
	sed 's/^/    | /' "$T/s0.err"
fi
if [ "$t" -le 3000 ]; then
	ok "sync: reported $t ms after the kill (not at the 10 s timeout)"
else
	failed "sync: reported only $t ms after the kill (more than 3 s)"
fi

[ "$fail" -eq 0 ] && echo "all passed"
exit "$fail"
