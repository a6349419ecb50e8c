# tests/lib/verdict.sh: how a runner (tests/run.sh, tests/valgrind.sh)
# judges a test that ended, sourced by both so that they tell the same.
#
# judge LOG RC SECS TIMEOUT: why (in $why) the test whose output is LOG,
# which exited RC after SECS seconds under timeout(1) of TIMEOUT seconds,
# failed; empty if it passed (RC 0) or was skipped (RC 77).  A failure:
#  - any line of LOG that begins with "FAIL", whatever the exit status
#    (a check that failed is never a pass, nor a skip);
#  - exit 0 without a line "work: WHAT N (floor M)": a test says its work;
#  - a signal that killed it, named; a timeout only when the time was up
#    (timeout(1) exits 124 then, or 128+9 when the test outlived SIGTERM);
#  - any other exit status.
judge() {
	_v_fails=$(grep -c '^FAIL' "$1")
	why=""
	case $2 in
	0)  if [ "$_v_fails" -gt 0 ]; then
		why="exit 0, but it printed $_v_fails line(s) FAIL"
	    elif ! grep -q '^work: .*(floor [0-9]*)' "$1"; then
		why="exit 0, but it did not say its work (no line 'work: WHAT N (floor M)')"
	    fi ;;
	77) [ "$_v_fails" -eq 0 ] ||
		why="exit 77 (a skip), but it printed $_v_fails line(s) FAIL" ;;
	124|137)
	    if [ "$3" -ge "$4" ]; then
		why="timed out after ${4}s"
		[ "$2" = 124 ] || why="$why (and outlived SIGTERM: killed)"
	    elif [ "$2" = 124 ]; then
		why="exit 124"
	    else
		why="killed by SIGKILL after ${3}s"
	    fi ;;
	*)  if [ "$2" -gt 128 ] && [ "$2" -lt 160 ]; then
		why="killed by SIG$(kill -l $(($2 - 128)) 2>/dev/null || echo $(($2 - 128))) after ${3}s"
	    else
		why="exit $2"
	    fi ;;
	esac
}
# shown_under_pass LOG: what a passing test's log says beside its checks,
# indented under its PASS line: its work, the parts it skipped ("skip
# WHAT: WHY") and its notes (what was not tried, and why)
shown_under_pass() {
	grep -E '^(work: |skip |note: )' "$1" | sed 's/^/    /'
}
