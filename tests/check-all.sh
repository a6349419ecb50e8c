#!/bin/sh
# What CI runs: the tests built with gcc (warnings are errors), with clang,
# with AddressSanitizer+UndefinedBehaviorSanitizer, and the concurrency tests
# with ThreadSanitizer.  Ends with one line "N passed, N failed, N skipped".
cd "$(dirname "$0")/.." || exit 1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
total_p=0 total_f=0 total_s=0
run() {
	echo "== $*"
	"$@" 2>&1 | tee -a "$log.cur"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log.cur" | tail -n 1)
	if [ -z "$line" ]; then
		echo "== build failed: $*"; total_f=$((total_f + 1))
	else
		set -- $line
		total_p=$((total_p + $1)) total_f=$((total_f + $3)) total_s=$((total_s + $5))
	fi
	rm -f "$log.cur"
}
nproc=$(nproc 2>/dev/null || echo 2)
run make -j"$nproc" check WERROR=1 CC=gcc
if command -v clang >/dev/null; then
	run make -j"$nproc" check WERROR=1 CC=clang B=build-clang
	run env SMQ_STREAM_COUNT=100000 make -j"$nproc" check CC=clang SAN=address,undefined
	run env SMQ_STREAM_COUNT=20000 make -j"$nproc" check CC=clang SAN=thread \
		TESTS=t_stream,t_sync,t_ring
else
	echo "== clang not installed: clang and sanitizer runs skipped"
	total_s=$((total_s + 3))
fi
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
