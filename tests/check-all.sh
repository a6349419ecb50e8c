#!/bin/sh
# What CI runs: the tests built with gcc (warnings are errors), with clang,
# with AddressSanitizer+UndefinedBehaviorSanitizer (the smqctl scripts too),
# the concurrency tests with ThreadSanitizer, the smqctl tests under
# valgrind, and a short libFuzzer run.  Ends with one line
# "N passed, N failed, N skipped".
cd "$(dirname "$0")/.." || exit 1
total_p=0 total_f=0 total_s=0
# A step that prints a summary line counts by it; one that does not counts
# as one test by its exit status (77: skipped).
run() {
	echo "== $*"
	out=$(mktemp)
	"$@" >"$out" 2>&1
	rc=$?
	cat "$out"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$out" | tail -n 1)
	rm -f "$out"
	if [ -n "$line" ]; then
		set -- $line
		total_p=$((total_p + $1)) total_f=$((total_f + $3)) total_s=$((total_s + $5))
		[ "$3" -gt 0 ] || [ $rc -eq 0 ] || total_f=$((total_f + 1))
	elif [ $rc -eq 0 ]; then
		total_p=$((total_p + 1))
	elif [ $rc -eq 77 ]; then
		total_s=$((total_s + 1))
	else
		echo "== failed (exit $rc): $*"; total_f=$((total_f + 1))
	fi
}
nproc=$(nproc 2>/dev/null || echo 2)
run make -j"$nproc" check WERROR=1 CC=gcc
if command -v clang >/dev/null; then
	run make -j"$nproc" check WERROR=1 CC=clang B=build-clang
	run env SMQ_STREAM_COUNT=100000 make -j"$nproc" check CC=clang SAN=address,undefined
	run env SMQ_STREAM_COUNT=20000 make -j"$nproc" check CC=clang SAN=thread \
		TESTS=t_stream,t_sync,t_ring,t_reinit
	run sh tests/fuzz/run.sh build-fuzz/fuzz_window 30
else
	echo "== clang not installed: clang, sanitizer and fuzz runs skipped"
	total_s=$((total_s + 4))
fi
[ -f tests/valgrind.sh ] && run env B=build sh tests/valgrind.sh
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
