#!/bin/sh
# Runs the window fuzzer (tests/fuzz/fuzz_window.c) for SECONDS.
#   sh tests/fuzz/run.sh FUZZER [SECONDS]      (make fuzz FUZZ_TIME=SECONDS)
# Builds FUZZER with clang -fsanitize=fuzzer,address,undefined if it is
# missing or older than its sources (exit 77 if clang cannot), builds a seed
# corpus of valid windows and structure-aware inputs (tests/fuzz/make-corpus.c)
# in a temporary directory, with the inputs that once found a fault
# (tests/data/fuzz), runs the fuzzer, and ends with
# "fuzz: N runs, 0 crashes".  On a crash, timeout or leak it prints the
# report, the path of the input that did it (kept in build-fuzz/artifacts/)
# and its first bytes, and exits 1.
# FUZZ_CORPUS=DIR keeps the corpus the fuzzer grows in DIR across runs.
# FUZZ_STRICT=0, FUZZ_SKIP_LIVE_LOCK=1 and FUZZ_SAVE=PATH reach the fuzzer
# (see tests/fuzz/fuzz_window.c).
cd "$(dirname "$0")/../.." || exit 1
fuzzer=${1:-build-fuzz/fuzz_window}
secs=${2:-600}
case $secs in
''|*[!0-9]*) echo "fuzz: SECONDS must be a number, not '$secs'"; exit 2 ;;
esac

# compile COMPILER OUTPUT SOURCES...: with the library's sources
compile() {
	c=$1 out=$2
	shift 2
	"$c" -D_GNU_SOURCE '-DSMQ_VERSION="fuzz"' -Iinclude -Ilibsmq -Itests/lib -std=c11 \
		-o "$out" "$@" $(ls libsmq/*/*.c | grep -v ^libsmq/examples/)
}
sanitize="-fsanitize=fuzzer,address,undefined"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/smq-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

if ! command -v clang >/dev/null 2>&1; then
	echo "fuzz: clang is not installed: no libFuzzer"
	exit 77
fi
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' \
	>"$tmp/probe.c"
if ! clang "$sanitize" -o "$tmp/probe" "$tmp/probe.c" >"$tmp/probe.log" 2>&1; then
	echo "fuzz: clang cannot build with -fsanitize=fuzzer:"
	sed 's/^/    /' "$tmp/probe.log" | tail -n 5
	exit 77
fi
stale=
if [ -x "$fuzzer" ]; then
	stale=$(find tests/fuzz/fuzz_window.c include libsmq -newer "$fuzzer" \
		\( -name '*.c' -o -name '*.h' \) 2>/dev/null | head -n 1)
fi
if [ ! -x "$fuzzer" ] || [ -n "$stale" ]; then
	echo "fuzz: building $fuzzer"
	mkdir -p "$(dirname "$fuzzer")"
	compile clang "$fuzzer" -g -O1 "$sanitize" -fno-sanitize-recover=all \
		tests/fuzz/fuzz_window.c ||
		{ echo "fuzz: building $fuzzer failed"; exit 1; }
fi

# The seed corpus: valid windows made by the library itself.
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || cc=clang
if ! compile "$cc" "$tmp/make-corpus" -O1 -pthread tests/fuzz/make-corpus.c \
		>"$tmp/cc.log" 2>&1; then
	cat "$tmp/cc.log"
	echo "fuzz: building the seed corpus failed"
	exit 1
fi
"$tmp/make-corpus" "$tmp/seeds" || { echo "fuzz: no seed corpus"; exit 1; }
# and every input that once found a fault (tests/data/fuzz), run again first
cp tests/data/fuzz/* "$tmp/seeds/" 2>/dev/null

corpus=${FUZZ_CORPUS:-$tmp/corpus}
mkdir -p "$corpus" build-fuzz/artifacts || exit 1
artifacts=$(cd build-fuzz/artifacts && pwd)
log=$tmp/fuzz.log
echo "fuzz: $fuzzer for ${secs}s, corpus $corpus, seeds $(find "$tmp/seeds" -type f | wc -l)"
# -max_total_time counts from the start; the seeds are read first.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
"$fuzzer" -max_total_time="$secs" -max_len=1048576 -rss_limit_mb=2048 \
	-timeout=25 -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
	-artifact_prefix="$artifacts/" "$corpus" "$tmp/seeds" >"$log" 2>&1
rc=$?

runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
[ -n "$runs" ] || runs=$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$log" | tail -n 1)
[ -n "$runs" ] || runs=0
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)' "$log" | sed 's/^/    /'
crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
if [ "$rc" -ne 0 ] || [ -n "$crash" ]; then
	echo "---- fuzzer output (last 60 lines)"
	tail -n 60 "$log"
	echo "----"
	if [ -n "$crash" ] && [ -f "$crash" ]; then
		echo "fuzz: crashing input: $crash ($(wc -c <"$crash") bytes)"
		echo "fuzz: first bytes: $(od -An -tx1 -N64 "$crash" | tr -d ' \n')"
		echo "fuzz: reproduce with: $fuzzer $crash"
	fi
	echo "fuzz: $runs runs, 1 crash (exit $rc)"
	exit 1
fi
echo "fuzz: $runs runs, 0 crashes"
exit 0
