#!/bin/sh
# Runs each test with a timeout; exit 77 means skipped.  The last line is
# "N passed, N failed, N skipped"; the exit status is 1 if any failed.
# TEST_TIMEOUT (seconds, default 300) bounds each test.
#  - PASS NAME (Ns): exit 0, no line of its output begins with "FAIL", and
#    it said its work; under it, indented, its lines "work: WHAT N (floor
#    M)" (what it did against the least it must do), "skip WHAT: WHY" (a
#    part that could not run here) and "note: ..." (what was not tried);
#  - SKIP NAME: REASON: exit 77 and no line "FAIL"; the reason its last line;
#  - FAIL NAME: WHY, then its whole output: why as tests/lib/verdict.sh
#    tells it (a line FAIL, no work said, the signal that killed it, the
#    timeout when the time was up, or its exit status).
. "$(dirname "$0")/lib/verdict.sh"
timeout=${TEST_TIMEOUT:-300}
pass=0 fail=0 skip=0 failed=""
for t in "$@"; do
	name=${t##*/}
	log=$(mktemp)
	start=$(date +%s)
	timeout -k 5 "$timeout" "$t" >"$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	judge "$log" "$rc" "$secs" "$timeout"
	if [ -n "$why" ]; then
		fail=$((fail + 1)); failed="$failed $name"
		echo "FAIL $name: $why"; sed 's/^/    /' "$log"
	elif [ "$rc" = 77 ]; then
		skip=$((skip + 1)); echo "SKIP $name: $(tail -n 1 "$log")"
	else
		pass=$((pass + 1)); echo "PASS $name (${secs}s)"
		shown_under_pass "$log"
	fi
	rm -f "$log"
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
