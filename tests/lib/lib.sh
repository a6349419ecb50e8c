# tests/lib/lib.sh: what every test script of tests/cli, tests/docs,
# tests/build and tests/qemu shares (POSIX sh).  A script begins
#
#	. "$(dirname "$0")/../lib/lib.sh"
#
# and ends with `finish FLOOR`.  Sourcing it:
#  - goes to the top of the repository (ROOT) and makes B, the build
#    folder (default build), absolute;
#  - makes T, a scratch folder of the script's own, and SHM, a prefix of
#    the names of its /dev/shm objects, unique to the script and its pid
#    (a window of the script is shm:$SHM or shm:$SHM-WHAT);
#  - sets a cleanup for EXIT, INT, TERM, HUP and PIPE: it kills every
#    background process the script started (bg_start, track) with its
#    children and, for a process that leads a group of its own, that
#    group; waits for them; and removes the script's /dev/shm objects and
#    T.  A signal is a failure that says what the script was waiting for.
# The checks: ok and failed print "ok   WHAT" and "FAIL WHAT" and count,
# in files of T, so that a check in a subshell or a pipeline counts too;
# finish FLOOR prints "N passed, N failed" and last "work: checks N (floor
# FLOOR)", N the checks passed, FLOOR the checks the script must make, and
# exits 0 only when nothing failed and N reaches FLOOR (never with N 0).
# skip REASON exits 77, the reason last, unless a check failed before
# (then it is a failure); skip_part WHAT WHY prints "skip WHAT: WHY" (a
# part of the checks cannot run here), which run.sh shows under the
# script's PASS line, as it shows "note: ..." lines.  A helper that needs
# a tool the machine lacks fails loudly.  Every wait is bounded and says
# what it waited for:
# wait_for, wait_line, within, wait_pid, stop_pid; a command that waits
# (smqctl recv, sync, events, check) has its own --timeout.  A watcher's
# looks are told by napping PID (it has looked) and counted by naps PID.

# ---- where the script runs ----
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
B=${B:-build}
case $B in
/*) ;;
*) B=$ROOT/$B ;;
esac
export B
TEST=${0##*/}
TEST=${TEST%.sh}
export LC_ALL=C
# no __pycache__ left in the tree by a helper a script imports
export PYTHONDONTWRITEBYTECODE=1

# SMQCTL_WRAP (tests/valgrind.sh): shell words put before every smqctl
# the script runs; it then runs slow times slower, and the bounds of the
# waits below are slow times longer.
slow=1
[ -z "${SMQCTL_WRAP:-}" ] || slow=6
export SMQ_TEST_SLOW=$slow  # for the scripts' Python helpers

# ---- what a script made: the scratch folder, shm names, processes ----
# (in /tmp, not TMPDIR: the path of a socket in T must stay short)
T=$(mktemp -d "/tmp/smq-$TEST.XXXXXX" 2>/dev/null || mktemp -d) || exit 1
# t_check_cross -> smq-t-check-cross-PID: no other script's prefix
SHM=smq-t-$(echo "${TEST#t_}" | tr _ -)-$$
BG=""                 # the background processes to stop
_lib_done="" _lib_waiting="" _lib_hooks=""
# the checks passed and failed: a line each in these files (a subshell's
# or a pipeline's too), read by _lib_passed and _lib_failed
_lib_okf=$T/.lib-passed _lib_failf=$T/.lib-failed
: >"$_lib_okf" && : >"$_lib_failf" || exit 1
_lib_lines() {
	_lib_l=0
	[ ! -f "$1" ] || _lib_l=$(wc -l <"$1")
	echo $((_lib_l))
}
_lib_passed() { _lib_lines "$_lib_okf"; }
_lib_failed() { _lib_lines "$_lib_failf"; }
# _lib_count FILE N: N more checks in FILE
_lib_count() {
	_lib_k=$2
	while [ "$_lib_k" -gt 0 ]; do
		echo x >>"$1"
		_lib_k=$((_lib_k - 1))
	done
}

# track PID...: background processes of the script, stopped at its end
track() { BG="$BG $*"; }
# untrack PID: a process waited for is no longer ours to stop
untrack() {
	_lib_rest=""
	for _lib_p in $BG; do [ "$_lib_p" = "$1" ] || _lib_rest="$_lib_rest $_lib_p"; done
	BG=$_lib_rest
}
# bg_start COMMAND...: COMMAND in the background (its standard input
# /dev/null, as for any &, unless redirected inside COMMAND), tracked; its
# pid in $! and in pid
bg_start() {
	"$@" &
	pid=$!
	track "$pid"
}
# at_cleanup COMMAND-STRING: run (eval) first at cleanup (tmux's server,
# files outside T)
at_cleanup() {
	_lib_hooks="$_lib_hooks
$1"
}

# kill_tree PID...: SIGKILL to those of the processes that are children
# of this shell (a pid of ours that ended and was reaped may be another's
# now), to their descendants, and to the groups they lead (a timeout(1),
# setsid: children that may have left the tree)
kill_tree() {
	[ $# -gt 0 ] || return 0
	# without ps nothing past the roots is found: a loud failure (a
	# script would wait for a child it believes killed), and the roots
	# killed all the same
	if ! ps -e -o pid= >/dev/null 2>&1; then
		failed "kill_tree: ps does not run here (Debian's procps): the children of $* were not killed"
		kill -s KILL -- "$@" 2>/dev/null
		return 0
	fi
	_lib_kill=$(ps -e -o pid= -o ppid= -o pgid= 2>/dev/null | awk -v me="$$" -v roots="$*" '
		BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) asked[r[i]] = 1 }
		{ parent[$1] = $2; group[$1] = $3 }
		END {
			for (p in asked)
				if (parent[p] == me) {
					in_tree[p] = 1
					if (group[p] == p) print "-" p
				}
			do {
				more = 0
				for (p in parent)
					if (!(p in in_tree) && (parent[p] in in_tree)) {
						in_tree[p] = 1
						more = 1
					}
			} while (more)
			for (p in in_tree) print p
		}')
	# shellcheck disable=SC2086
	[ -z "$_lib_kill" ] || kill -s KILL -- $_lib_kill 2>/dev/null
	return 0
}
# cleanup: at_cleanup's commands, every tracked process and its children
# killed and waited for, the script's /dev/shm objects and T removed.
# Once; it prints nothing (the last line is the summary, or a skip's
# reason).
cleanup() {
	[ -z "$_lib_done" ] || return 0
	_lib_done=1
	_lib_stop
	_lib_remove
}
_lib_stop() {
	eval "$_lib_hooks" >/dev/null 2>&1
	# twice: a child forked between the look and the kill
	kill_tree $BG
	kill_tree $BG
	for _lib_p in $BG; do wait "$_lib_p" 2>/dev/null; done
	BG=""
}
_lib_remove() {
	cd / || :
	rm -rf "/dev/shm/$SHM" "/dev/shm/$SHM"[!0-9]* 2>/dev/null
	rm -rf "$T"
}
_lib_exit() {
	_lib_rc=$?
	trap - EXIT
	if [ -z "$_lib_done" ] && [ "$_lib_rc" != 77 ]; then
		# an exit before finish: never a pass
		[ "$_lib_rc" != 0 ] || { say "FAIL the script ended without its summary (finish)"; _lib_rc=1; }
		say "$(_lib_passed) passed, $(_lib_failed) failed"
		say "work: checks $(_lib_passed) (the script stopped before its end, exit $_lib_rc)"
	fi
	cleanup
	exit "$_lib_rc"
}
_lib_signal() {
	trap - INT TERM HUP PIPE
	echo x >>"$_lib_failf"
	say "FAIL stopped by SIG$1${_lib_waiting:+ while waiting for $_lib_waiting}"
	exit 1
}
trap _lib_exit EXIT
trap '_lib_signal INT' INT
trap '_lib_signal TERM' TERM
trap '_lib_signal HUP' HUP
trap '_lib_signal PIPE' PIPE

# ---- checks ----
# say TEXT: a line of the log; T shown as $T
say() { printf '%s\n' "$*" | sed "s|$T|\$T|g"; }
ok() { echo x >>"$_lib_okf"; say "ok   $*"; }
failed() { echo x >>"$_lib_failf"; say "FAIL $*"; on_failure; }
# on_failure: what a script shows after each FAIL (it may define its own)
on_failure() { :; }
# note TEXT: neither a check nor a failure (what was not tried, and why)
note() { say "note: $*"; }
# check WHAT COMMAND...: ok WHAT when COMMAND succeeds, else failed WHAT
# (the library's own functions are _lib_*: a script may define a check,
# a within or an ended of its own)
check() {
	_lib_what=$1
	shift
	if "$@"; then ok "$_lib_what"; else failed "$_lib_what"; fi
}
# case_begin; conditions that each fail at once (failed); case_end WHAT:
# ok WHAT if none of them failed since case_begin
case_begin() { _lib_case=$(_lib_failed); }
case_end() { [ "$(_lib_failed)" -gt "${_lib_case:-0}" ] || ok "$1"; }
# tally COMMAND...: COMMAND (a checker of its own) prints "ok ..." and
# "FAIL ..." lines: shown, and counted as checks; its exit status
tally() {
	"$@" >"$T/.tally" 2>&1
	_lib_rc=$?
	sed "s|$T|\$T|g" "$T/.tally"
	_lib_count "$_lib_okf" "$(grep -c '^ok ' "$T/.tally")"
	_lib_n=$(grep -c '^FAIL' "$T/.tally")
	_lib_count "$_lib_failf" "$_lib_n"
	[ "$_lib_rc" = 0 ] || [ "$_lib_n" -gt 0 ] || echo x >>"$_lib_failf"
	return "$_lib_rc"
}
# any_failed: a check has failed so far (to show more before finish)
any_failed() { [ "$(_lib_failed)" -gt 0 ]; }
# skip REASON: the whole script is skipped: exit 77, the reason last;
# after a failed check, a failure instead (a skip never hides one)
skip() {
	if any_failed; then
		say "FAIL skipped ($*) after $(_lib_failed) failed checks: a failure, not a skip"
		say "$(_lib_passed) passed, $(($(_lib_failed) + 1)) failed"
		exit 1
	fi
	say "$*"
	exit 77
}
# skip_part WHAT WHY: a part of the script's checks cannot run here; the
# others run.  "skip WHAT: WHY", which run.sh shows under the script's
# PASS line (and check-all in its list of what was skipped).
skip_part() {
	say "skip $1: $2"
}
# die WHAT: a failure after which the script cannot go on
die() {
	failed "$*"
	exit 1
}
# finish FLOOR: the summary, and the exit status: 0 when no check failed
# and at least FLOOR (and at least one) passed, else 1; 77 instead of 0
# when a part was skipped (skip_part), that part and why the last line
finish() {
	_lib_floor=${1:-1}
	[ "$_lib_floor" -ge 1 ] 2>/dev/null || _lib_floor=1
	# what the cleanup's stop finds wrong counts too
	_lib_done=1
	_lib_stop
	_lib_p=$(_lib_passed) _lib_f=$(_lib_failed)
	if [ "$_lib_p" -lt "$_lib_floor" ] && [ "$_lib_f" = 0 ]; then
		_lib_f=1
		say "FAIL only $_lib_p checks passed, fewer than the $_lib_floor this script makes: some did not run"
	fi
	_lib_remove
	say "$_lib_p passed, $_lib_f failed"
	say "work: checks $_lib_p (floor $_lib_floor)"
	[ "$_lib_f" = 0 ] || exit 1
	exit 0
}

# ---- the verdict of a case of several conditions ----
# no WHY: a condition of the case failed; verdict WHAT: ok WHAT if none
# did, else FAIL WHAT with the reasons and what the last run printed
why=""
no() { why="$why $*;"; }
verdict() {
	if [ -z "$why" ]; then
		ok "$1"
	else
		failed "$1 --$why"
		show_run
	fi
	why=""
}
# run ARGS...: $S ARGS, its standard input $IN (default /dev/null), its
# output in $T/out and $T/err, its exit status in rc
run() {
	_lib_waiting="smqctl $*"
	"$S" "$@" <"${IN:-/dev/null}" >"$T/out" 2>"$T/err"
	rc=$?
	_lib_waiting=""
}
# show_run: what the last run printed, after a failed verdict (a script
# may define its own)
show_run() {
	for _lib_f in "$T/out" "$T/err"; do
		[ -s "$_lib_f" ] && head -n 8 "$_lib_f" |
			sed "s|$T|\$T|g; s/^/       ${_lib_f##*/}: /"
	done
	return 0
}
want_rc() { [ "$rc" -eq "$1" ] || no "exit $rc, expected $1"; }
want_out() { grep -qF -e "$1" "$T/out" || no "stdout lacks '$1'"; }
want_err() { grep -qF -e "$1" "$T/err" || no "stderr lacks '$1'"; }
want_no_out() { [ ! -s "$T/out" ] || no "stdout not empty"; }
# want_out_is PRINTF-FORMAT: stdout is exactly those bytes
want_out_is() {
	# shellcheck disable=SC2059
	printf "$1" >"$T/expect"
	cmp -s "$T/expect" "$T/out" ||
		no "stdout is $(od -An -c "$T/out" | tr -s ' ' | head -c 160), not '$1'"
}
want_smqctl() {
	head -n 1 "$T/err" | grep -q '^smqctl' || no "stderr does not start with 'smqctl'"
}
# jnum KEY FILE: the first number of "KEY": in a JSON file
jnum() { sed -n "s/^ *\"$1\": \([0-9][0-9]*\).*/\1/p" "$2" | head -n 1; }

# ---- fifos and windows ----
# hold_fifo FD FIFO: FIFO open, read and write, on the script's descriptor
# FD (5 to 9): a process reading it meets no end of file until
# release_fifo FD closes it, and the open does not wait for the reader
hold_fifo() { eval "exec $1<>\"\$2\""; }
release_fifo() { eval "exec $1>&-"; }
# flip_bits FILE MARKER OFFSET MASK: the byte OFFSET bytes into the one
# place of FILE that holds MARKER, XORed with MASK (a message damaged in
# a window's ring)
flip_bits() {
	python3 - "$@" <<'PY'
import sys
path, marker = sys.argv[1], sys.argv[2].encode()
off, mask = int(sys.argv[3]), int(sys.argv[4], 0)
with open(path, "r+b") as f:
    data = f.read()
    at = data.find(marker)
    assert at > 0 and data.find(marker, at + 1) < 0, "%s is not in %s once" % (marker, path)
    f.seek(at + off)
    f.write(bytes([data[at + off] ^ mask]))
PY
}

# ---- smqctl check's report ----
# check_line NAME STATUS CHECK WORDS: $T/NAME.out has the line "STATUS
# CHECK ..." saying WORDS (an extended regular expression)
check_line() {
	if grep -E "^$2  $3 +.*$4" "$T/$1.out" >/dev/null; then
		ok "$1: $2 $3 ($4)"
	else
		failed "$1: no line '$2  $3 ...$4'; got:"
		sed 's/^/    /' "$T/$1.out" "$T/$1.err" 2>/dev/null
	fi
}
# check_exit NAME WANT: the exit status in rc is WANT
check_exit() {
	if [ "$rc" = "$2" ]; then
		ok "$1: exit $2"
	else
		failed "$1: exit $rc, not $2"
		sed 's/^/    /' "$T/$1.out" "$T/$1.err" 2>/dev/null
	fi
}

# ---- bounded waits ----
# now_ms: milliseconds of this host's clock (for durations only)
now_ms() {
	_lib_t=$(date +%s%N 2>/dev/null)
	case $_lib_t in
	*N*|'') echo $(($(date +%s) * 1000)) ;;
	*) echo $((_lib_t / 1000000)) ;;
	esac
}
# within [-w WHAT] SECONDS COMMAND...: COMMAND, again every 0.05 s until it
# succeeds (0) or SECONDS (whole, times slow) have passed (1; it ran once
# more at the end).  For a condition that is itself the check.  WHAT (else
# COMMAND) is what a signal meanwhile says was waited for.
within() {
	[ "$1" = -w ] || { _lib_within "$@"; return; }
	_lib_waiting=$2
	shift 2
	_lib_within "$@"
	_lib_rc=$?
	_lib_waiting=""
	return $_lib_rc
}
_lib_within() {
	_lib_end=$(($(now_ms) + $1 * slow * 1000))
	shift
	# what a signal meanwhile says was waited for, unless a caller said
	_lib_w0=$_lib_waiting
	_lib_waiting=${_lib_waiting:-$*}
	while ! "$@"; do
		# (now_ms is empty when a signal stops its date)
		_lib_now=$(now_ms)
		if [ "${_lib_now:-0}" -ge "$_lib_end" ]; then
			"$@"
			_lib_rc=$?
			_lib_waiting=$_lib_w0
			return $_lib_rc
		fi
		sleep 0.05  # the caller's condition: a state no event tells of
	done
	_lib_waiting=$_lib_w0
}
# wait_for SECONDS WHAT COMMAND...: within SECONDS COMMAND; on a timeout
# a failed check "timed out after N s waiting for WHAT", and 1
wait_for() {
	_lib_secs=$1 _lib_waiting=$2
	shift 2
	if _lib_within "$_lib_secs" "$@"; then
		_lib_waiting=""
		return 0
	fi
	failed "timed out after $((_lib_secs * slow)) s waiting for $_lib_waiting"
	_lib_waiting=""
	return 1
}
# wait_line SECONDS FILE PATTERN: within SECONDS a line of FILE matches
# PATTERN (grep's); 1 if none did
wait_line() {
	_lib_secs=$1
	shift
	_lib_waiting="a line '$2' in ${1##*/}"
	_lib_within "$_lib_secs" grep -q -e "$2" "$1" 2>/dev/null
	_lib_rc=$?
	_lib_waiting=""
	return $_lib_rc
}
# running PID: a child of ours that has not ended (one that ended is a
# zombie until waited for, or gone; its pid may be another's since)
running() { _lib_running "$1"; }
ended() { ! _lib_running "$1"; }
_lib_ended() { ! _lib_running "$1"; }
_lib_running() {
	{ read -r _lib_s <"/proc/$1/stat"; } 2>/dev/null || return 1
	# after the name: the state, then the parent
	set -- ${_lib_s##*) }
	case $1 in
	Z*|X*) return 1 ;;
	esac
	[ "$2" = "$$" ]
}
# wait_pid SECONDS PID WHAT: waits for the background process PID (a
# child) to end, SECONDS at most (times slow); its exit status in rc and
# returned.  If it did not end: killed with its children, a failed check
# "WHAT (pid PID) did not end within N s: killed", and rc 124.  Either way
# no longer tracked.
wait_pid() {
	_lib_secs=$1 _lib_waiting="$3 (pid $2) to end"
	if _lib_within "$_lib_secs" _lib_ended "$2"; then
		wait "$2"
		rc=$?
	else
		kill_tree "$2"
		wait "$2" 2>/dev/null
		failed "$3 (pid $2) did not end within $((_lib_secs * slow)) s: killed"
		rc=124
	fi
	_lib_waiting=""
	untrack "$2"
	return $rc
}
# napping PID: PID, a watcher that looks and then naps in nanosleep until
# its next look (smqctl events, top), naps now: it has made its first
# look, and what the script does next falls between two looks
napping() {
	case $(cat "/proc/$1/wchan" 2>/dev/null) in
	*nanosleep*) return 0 ;;
	esac
	case $(cut -d' ' -f1 "/proc/$1/syscall" 2>/dev/null) in
	230|35|101|115) return 0 ;;  # (clock_)nanosleep: x86-64, arm64
	esac
	return 1
}
# naps PID: how many times PID gave the CPU up of its own (its voluntary
# context switches; empty once it is gone): each look of such a watcher
# ends in one, so looks are counted, not timed
naps() {
	sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "/proc/$1/status" \
		2>/dev/null
}
# stop_pid SECONDS PID WHAT [SIGNAL]: SIGNAL (default TERM) to PID, then
# wait_pid SECONDS PID WHAT
stop_pid() {
	kill -"${4:-TERM}" "$2" 2>/dev/null
	wait_pid "$1" "$2" "$3"
}

# ---- the smqctl under test ----
# need_smqctl: S, a copy of $B/smqctl in T (the build folder may be
# rebuilt while the script runs), run through SMQCTL_WRAP when that is
# set; SMQCTL the copy itself.  Skips the script if smqctl is not built.
need_smqctl() {
	[ -x "$B/smqctl" ] || skip "smqctl not built ($B/smqctl): run make first"
	cp "$B/smqctl" "$T/smqctl" && chmod 755 "$T/smqctl" || exit 1
	SMQCTL=$T/smqctl
	S=$SMQCTL
	if [ -n "${SMQCTL_WRAP:-}" ]; then
		# the wrapper execs: pid, stdin and exit status are smqctl's
		printf '#!/bin/sh\nexec %s "%s" "$@"\n' "$SMQCTL_WRAP" "$SMQCTL" >"$T/wrapped" &&
			chmod 755 "$T/wrapped" || exit 1
		S=$T/wrapped
		# (said, not a note: nothing is left untried)
		say "smqctl runs as: $SMQCTL_WRAP smqctl ARGS"
	fi
}
# need_command COMMAND WHY: skips the script without COMMAND
need_command() {
	command -v "$1" >/dev/null 2>&1 || skip "$1 not found: $2"
}
