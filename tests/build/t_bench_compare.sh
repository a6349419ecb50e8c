#!/bin/sh
# make bench-compare (tests/bench-compare.sh) and make bench, on stand-ins
# for smqctl whose benches print rows of known figures.  bench-compare:
# the two builds alternate, the first swapped every round; each row's
# medians are compared beside the spread between rounds of one build; a
# row that moved beyond it is said, better or WORSE, and one that moved
# within it is not; a row named with its count of runs is one row
# whatever the count; a row of one build only is named, not compared; a
# WORSE row makes the exit 1; the runs kept are compared again alike by
# --compare.  A build's benchmark program (smq-bench) runs after its bench
# and its rows are compared too; REF's row of the fast state from before
# smq-bench is compared with the tree's without a state, said so.  Bad input (a REF that is no commit, fewer than 5 rounds) is
# refused with exit 2 before anything is built or run.  make bench prints
# the table and fails when a target was missed (its last lines), or when
# the bench failed.
. "$(dirname "$0")/../lib/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"
commit=$(git rev-parse --verify --quiet HEAD) || skip "not in a git repository"

# fake BUILD: a stand-in smqctl whose Nth bench prints the Nth of each
# row's figures (ratios to their baselines)
fake() {
	cat <<EOF
#!/bin/sh
echo "$1 \$*" >>"$T/order"
n=\$(( \$(cat "$T/n.$1" 2>/dev/null || echo 0) + 1 ))
echo \$n >"$T/n.$1"
pick() { echo "\$@" | cut -d' ' -f\$n; }
row() {  # MEASURE BASELINE RATIO BETTER
	printf '{"measure": "%s", "unit": "ns", "smq": %s, "baseline": "%s", "baseline_value": 1, "ratio": %s, "better": "%s", "target": null, "holds": null, "absent": null},\n' "\$1" "\$3" "\$2" "\$3" "\$4"
}
echo '{"command": "bench", "baseline": true, "comparisons": ['
EOF
	if [ "$1" = ref ]; then
		cat <<'EOF'
row "sleep half RTT, 0 B" "futex ping-pong" $(pick 1.00 1.02 0.98 1.01 0.99) lower
row "16 entries, bursts of 8, fast, $(pick 3 4 5 6 3) runs" "two-core ring, 16 slots" $(pick 1.00 1.01 0.99 1.02 1.00) higher
row "stream 64 B" "two-core ring" $(pick 1.0 3.0 2.0 1.5 2.5) higher
row "zero-copy 64 B, fast, $(pick 5 4 5 6 5) runs" "UCX tag_bw" $(pick 1.10 1.12 1.08 1.11 1.09) higher
row "zero-copy 64 B, slow, 1 run" "UCX tag_bw" 1.2 higher
EOF
	else
		cat <<'EOF'
row "sleep half RTT, 0 B" "futex ping-pong" $(pick 2.00 2.04 1.97 2.02 1.99) lower
row "16 entries, bursts of 8, fast, $(pick 5 5 4 6 7) runs" "two-core ring, 16 slots" $(pick 1.30 1.31 1.29 1.32 1.30) higher
row "stream 64 B" "two-core ring" $(pick 2.6 1.4 3.2 2.0 2.4) higher
row "zero-copy 1 MiB, slow, 2 runs" "copies, same work" 1.5 higher
EOF
	fi
	cat <<'EOF'
echo '{"measure": "poll half RTT 0 B, 5 runs", "unit": "ns", "smq": 1, "baseline": "cache-line ping-pong", "baseline_value": null, "ratio": null, "better": "lower", "target": 1.3, "holds": null, "absent": "none"}]}'
EOF
}

# the tree's benchmark program (smq-bench) has the UCX row that REF's
# bench had, judged by machine state: REF is from before smq-bench
products() {
	cat <<EOF
#!/bin/sh
echo "products \$*" >>"$T/order"
n=\$(( \$(cat "$T/n.products" 2>/dev/null || echo 0) + 1 ))
echo \$n >"$T/n.products"
r=\$(echo 1.09 1.11 1.10 1.12 1.08 | cut -d' ' -f\$n)
echo '{"command": "smq-bench", "comparisons": ['
printf '{"measure": "zero-copy 64 B, 5 runs", "unit": "msgs/s", "smq": %s, "baseline": "UCX tag_bw", "baseline_value": 1, "ratio": %s, "better": "higher", "target": 1, "holds": true, "absent": null}]}\\n' \$r \$r
EOF
}

ref_dir=$T/ref
mkdir -p "$ref_dir/src/build"
fake ref >"$ref_dir/src/build/smqctl"
fake tree >"$T/smqctl"
products >"$T/smq-bench"
chmod +x "$ref_dir/src/build/smqctl" "$T/smqctl" "$T/smq-bench"
# REF built already: the script takes the build it finds for the commit
echo "$commit" >"$ref_dir/commit"

BENCH_DIR=$ref_dir BENCH_ARGS="--count 7" ROUNDS=5 sh tests/bench-compare.sh HEAD "$T/smqctl" "$T/smq-bench" >"$T/out" 2>"$T/err"
rc=$?
show() { sed 's/^/    | /' "$T/out" "$T/err"; }
[ $rc = 1 ] && ok "a row WORSE beyond the noise: exit 1" || { failed "exit $rc, expected 1"; show; }
order=$(cut -d' ' -f1 "$T/order" | tr '\n' ' ')
[ "$order" = "ref tree products tree products ref ref tree products tree products ref ref tree products " ] &&
	ok "5 rounds, the two builds in turn, the first swapped every round; the tree's benchmark program after its bench, REF without one" ||
	failed "the order of the benches: $order"
[ "$(grep -c -- ' --json bench --baseline --count 7$' "$T/order")" = 10 ] &&
	[ "$(grep -c -- '^products --json --count 7$' "$T/order")" = 5 ] &&
	ok "every bench: --json bench --baseline and BENCH_ARGS; the benchmark program: --json and BENCH_ARGS" ||
	{ failed "the benches' arguments"; sed 's/^/    | /' "$T/order"; }

# row NAME: its line of the table, spaces squeezed
row() { grep "^$1 " "$T/out" | tr -s ' '; }
case $(row "sleep half RTT, 0 B") in
"sleep half RTT, 0 B futex ping-pong 1.000x 2.000x 2.00x 4% WORSE")
	ok "a latency twice the other build's, beyond a 4% spread: WORSE" ;;
*)	failed "the sleep row: $(row "sleep half RTT, 0 B")"; show ;;
esac
case $(row "16 entries, bursts of 8, fast") in
"16 entries, bursts of 8, fast two-core ring, 16 slots 1.000x 1.300x 1.30x 3% better")
	ok "a row named with its count of runs is one row; a rate 1.3x: better" ;;
*)	failed "the bursts row: $(row "16 entries, bursts of 8, fast")"; show ;;
esac
case $(row "stream 64 B") in
"stream 64 B two-core ring 2.000x 2.400x 1.20x 100% -")
	ok "a row 1.2x, its rounds spread 100%: not moved" ;;
*)	failed "the stream row: $(row "stream 64 B")"; show ;;
esac
case $(row "zero-copy 64 B") in
"zero-copy 64 B UCX tag_bw 1.100x 1.100x 1.00x 4% - (REF: its fast state)")
	ok "REF's row of the fast state beside the tree's benchmark program's row without one, said so" ;;
*)	failed "the UCX row: $(row "zero-copy 64 B")"; show ;;
esac
grep -q '^not compared, in fewer than two rounds of a build: zero-copy 64 B, slow against UCX tag_bw (rounds: REF 5, tree 0)$' "$T/out" &&
	ok "REF's row of the slow state: named, not compared" || { failed "the slow UCX row"; show; }
grep -q '^not compared, in fewer than two rounds of a build: zero-copy 1 MiB, slow against copies, same work (rounds: REF 0, tree 5)$' "$T/out" &&
	ok "a row of one build only: named, not compared" || { failed "the row of one build"; show; }
! grep -q 'poll half RTT' "$T/out" && ok "a row without a ratio (baseline absent): left out" ||
	{ failed "a row without a ratio"; show; }
last=$(grep -A2 '^against HEAD' "$T/out")
[ "$last" = "against HEAD ($(git rev-parse --short HEAD)): 2 rows moved beyond the noise, 1 better, 1 WORSE
WORSE sleep half RTT, 0 B against futex ping-pong: 2.00x, noise 4%
better 16 entries, bursts of 8, fast against two-core ring, 16 slots: 1.30x, noise 3%" ] &&
	ok "the summary last: the rows moved, WORSE named first" || { failed "the summary"; show; }

# the runs are kept, and compared again alike
run=$(ls -d "$ref_dir"/run-* 2>/dev/null | head -n 1)
[ "$(ls "$run"/ref-*.json "$run"/tree-*.json 2>/dev/null | wc -l)" = 15 ] &&
	[ "$(ls "$run"/tree-*-products.json 2>/dev/null | wc -l)" = 5 ] &&
	ok "the ten benches and five benchmark programs' runs kept in the run's folder" ||
	failed "the run's folder: $(ls "$run" 2>&1)"
sh tests/bench-compare.sh --compare "$run" >"$T/again" 2>&1
rc=$?
grep -v '^bench-compare: ' "$T/out" >"$T/table"
[ $rc = 1 ] && diff "$T/table" "$T/again" >/dev/null &&
	ok "--compare on the kept runs: the same table and verdict" ||
	{ failed "--compare: exit $rc"; diff "$T/table" "$T/again" | sed 's/^/    | /'; }

# bad input: refused, exit 2, said, nothing built or run
: >"$T/order"
sh tests/bench-compare.sh no-such-ref-smq "$T/smqctl" >"$T/out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q '^bench-compare: REF=no-such-ref-smq: not a commit or tag of this repository$' "$T/out" &&
	ok "a REF that is no commit: refused, exit 2" || { failed "a bad REF: exit $rc"; show; }
ROUNDS=4 sh tests/bench-compare.sh HEAD "$T/smqctl" >"$T/out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q '^bench-compare: ROUNDS=4: at least 5 rounds' "$T/out" &&
	ok "ROUNDS=4: refused, exit 2" || { failed "ROUNDS=4: exit $rc"; show; }
ROUNDS=five sh tests/bench-compare.sh HEAD "$T/smqctl" >"$T/out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q '^bench-compare: ROUNDS=five: a number of rounds, at least 5$' "$T/out" &&
	ok "ROUNDS=five: refused, exit 2" || { failed "ROUNDS=five: exit $rc"; show; }
[ ! -s "$T/order" ] && ok "nothing run on bad input" || failed "a bench ran on bad input"

# make bench: smqctl bench --baseline's table, then the benchmark
# program's (smq beside other products), and a failure when a target of
# either was missed (both exit 0 either way); on stand-ins printing the
# last lines they print
bench() {  # LAST-LINE EXIT [PROGRAM'S-LAST-LINE EXIT]: make bench's exit status
	printf '#!/bin/sh\necho "MEASURE ..."\necho "%s"\nexit %s\n' "$1" "$2" >"$T/bench"
	printf '#!/bin/sh\necho "MEASURE products"\necho "%s"\nexit %s\n' \
		"${3:-targets: all 7 held}" "${4:-0}" >"$T/products"
	chmod +x "$T/bench" "$T/products"
	# -o: the stand-ins are not rebuilt from the objects
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -o "$T/bench" \
		-o "$T/products" bench SMQCTL="$T/bench" SMQ_BENCH="$T/products" \
		B="$T" >"$T/out" 2>"$T/err"
}
bench "targets: 2 of 17 MISSED" 0
rc=$?
[ $rc != 0 ] && grep -q '^targets: 2 of 17 MISSED$' "$T/out" &&
	grep -q '^make bench: a target was missed (MISSED above)$' "$T/err" &&
	ok "make bench: a target missed fails it, after the table" ||
	{ failed "make bench, a target missed: exit $rc"; show; }
bench "targets: all 17 held" 0
rc=$?
[ $rc = 0 ] && grep -q '^targets: all 17 held$' "$T/out" &&
	ok "make bench: every target held, exit 0" || { failed "make bench, all held: exit $rc"; show; }
bench "baseline futex: not supported" 1
rc=$?
[ $rc != 0 ] && grep -q '^baseline futex: not supported$' "$T/out" &&
	ok "make bench: a bench that failed fails it" || { failed "make bench, a failed bench: exit $rc"; show; }
bench "targets: all 17 held" 0 "targets: all 7 held" 0
rc=$?
[ $rc = 0 ] && [ "$(grep '^targets: ' "$T/out" | tr '\n' ';')" = "targets: all 17 held;targets: all 7 held;" ] &&
	grep -q '^MEASURE products$' "$T/out" &&
	ok "make bench: the benchmark program's table after smqctl's" ||
	{ failed "make bench: the benchmark program's table: exit $rc"; show; }
bench "targets: all 17 held" 0 "targets: 1 of 7 MISSED" 0
rc=$?
[ $rc != 0 ] && grep -q '^targets: 1 of 7 MISSED$' "$T/out" &&
	grep -q '^make bench: a target was missed (MISSED above)$' "$T/err" &&
	ok "make bench: a target the benchmark program missed fails it" ||
	{ failed "make bench, the program's target missed: exit $rc"; show; }
bench "targets: all 17 held" 0 "POSIX message queue: not supported" 1
rc=$?
[ $rc != 0 ] && grep -q '^POSIX message queue: not supported$' "$T/out" &&
	ok "make bench: the benchmark program failing fails it" ||
	{ failed "make bench, the program failed: exit $rc"; show; }
finish 23
