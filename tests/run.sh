#!/bin/sh
# Runs each test with a timeout; exit 77 means skipped.  The last line is
# "N passed, N failed, N skipped"; the exit status is 1 if any failed.
# TEST_TIMEOUT (seconds, default 300) bounds each test.  A passing test's
# "work: WHAT N (floor M)" lines (what it did against the least it must
# do) are shown indented under its PASS line.
timeout=${TEST_TIMEOUT:-300}
pass=0 fail=0 skip=0 failed=""
for t in "$@"; do
	name=${t##*/}
	log=$(mktemp)
	start=$(date +%s)
	timeout -k 5 "$timeout" "$t" >"$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	case $rc in
	0)  pass=$((pass + 1)); echo "PASS $name (${secs}s)"
	    grep '^work: ' "$log" | sed 's/^/    /' ;;
	77) skip=$((skip + 1)); echo "SKIP $name: $(tail -n 1 "$log")" ;;
	124|137) fail=$((fail + 1)); failed="$failed $name"
	    echo "FAIL $name: timed out after ${timeout}s"; sed 's/^/    /' "$log" ;;
	*)  fail=$((fail + 1)); failed="$failed $name"
	    echo "FAIL $name (exit $rc)"; sed 's/^/    /' "$log" ;;
	esac
	rm -f "$log"
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
