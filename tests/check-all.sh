#!/bin/sh
# What CI runs: the tests built with gcc (warnings are errors), the
# maintenance tests again over file: windows, the tests built with clang
# and AddressSanitizer+UndefinedBehaviorSanitizer (warnings are errors
# there too: clang's warnings; the smqctl scripts run too),
# the concurrency tests with ThreadSanitizer, the smqctl tests under
# valgrind, and a short libFuzzer run.  Ends with one line
# "N passed, N failed, N skipped", followed, when anything was skipped, by
# the skipped tests and why, and the parts of passing tests that were
# skipped or not tried (their "skip WHAT: WHY" and "note: ..." lines under
# PASS): " (t_qemu.sh: no KVM [gcc, asan+ubsan]; t_metrics.sh, a part: (4)
# skipped: no prometheus [gcc]; ...)".
#   sh tests/check-all.sh -- COMMAND...   runs COMMAND as its one step
# (the runner's own test, tests/build/t_runner.sh).
cd "$(dirname "$0")/.." || exit 1
total_p=0 total_f=0 total_s=0
skips=$(mktemp) || exit 1
trap 'rm -f "$skips"' EXIT
# skipped LABEL NAME REASON: one skip, for the last line
skipped() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$skips"; }
# run LABEL COMMAND...: a step that prints a summary line counts by it (and
# its "SKIP name: reason" lines say what it skipped); one that does not
# counts as one test by its exit status (77: skipped, its last line why).
run() {
	label=$1
	shift
	echo "== $label: $*"
	out=$(mktemp)
	"$@" >"$out" 2>&1
	rc=$?
	cat "$out"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$out" | tail -n 1)
	if [ -n "$line" ]; then
		# shellcheck disable=SC2086
		set -- $line
		total_p=$((total_p + $1)) total_f=$((total_f + $3)) total_s=$((total_s + $5))
		[ "$3" -gt 0 ] || [ $rc -eq 0 ] || total_f=$((total_f + 1))
		# the tests skipped, and the parts skipped under a PASS line
		awk '/^SKIP [^:]*: / { n = $2; sub(/:$/, "", n); w = $0
				sub(/^SKIP [^:]*: /, "", w); print n "\t" w; next }
			/^PASS / { name = $2; next }
			/^[^ ]/ { name = ""; next }
			/^    skip [^:]*: / && name != "" { w = $0; sub(/^    skip /, "", w)
				what = w; sub(/: .*/, "", what); sub(/^[^:]*: /, "", w)
				print name ", " what "\t" w; next }
			/^    note: / && name != "" { w = $0; sub(/^    note: /, "", w)
				print name ", a part\t" w }' "$out" |
		while IFS='	' read -r n why; do
			skipped "$label" "$n" "$why"
		done
	elif [ $rc -eq 0 ]; then
		total_p=$((total_p + 1))
	elif [ $rc -eq 77 ]; then
		total_s=$((total_s + 1))
		why=$(grep . "$out" | tail -n 1)
		skipped "$label" "$label" "${why#"$label: "}"
	else
		echo "== failed (exit $rc): $*"; total_f=$((total_f + 1))
	fi
	rm -f "$out"
}
if [ "${1:-}" = -- ]; then
	shift
	run given "$@"
	set -- end
fi
nproc=$(nproc 2>/dev/null || echo 2)
[ "${1:-}" = end ] || {
run gcc make -j"$nproc" check WERROR=1 CC=gcc
# the maintenance tests again over file: (marks with a full barrier; the
# others run over shm:, where marks are light)
run file env SMQ_TEST_TRANSPORT=file make -j"$nproc" check \
	TESTS=t_reinit,t_stall,t_maint_kill,t_crash
if command -v clang >/dev/null; then
	# clang's warnings are errors in the sanitizer build, which compiles
	# every file a plain clang build does with the same -O2 (a build of
	# its own for the warnings cost CI a minute)
	run asan+ubsan env SMQ_STREAM_COUNT=100000 make -j"$nproc" check CC=clang SAN=address,undefined WERROR=1
	run tsan env SMQ_STREAM_COUNT=20000 make -j"$nproc" check CC=clang SAN=thread \
		TESTS=t_stream,t_sync,t_ring,t_reinit
	run fuzz sh tests/fuzz/run.sh build-fuzz/fuzz_window 30
else
	echo "== clang not installed: sanitizer and fuzz runs skipped"
	total_s=$((total_s + 3))
	for l in asan+ubsan tsan fuzz; do
		skipped "$l" "$l" "clang is not installed"
	done
fi
[ -f tests/valgrind.sh ] && run valgrind env B=build sh tests/valgrind.sh
}
# The skips, each once with the runs that skipped it: "t_x: why [gcc, file]"
why=$(awk -F '\t' '{ k = $2 ": " $3; if (!(k in runs)) { order[++n] = k; runs[k] = $1 }
		else runs[k] = runs[k] ", " $1 }
	END { for (i = 1; i <= n; i++) {
		k = order[i]; printf "%s%s [%s]", (i > 1 ? "; " : ""), k, runs[k] } }' "$skips")
echo "$total_p passed, $total_f failed, $total_s skipped${why:+ ($why)}"
[ "$total_f" -eq 0 ]
