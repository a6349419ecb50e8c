#!/bin/sh
# bench-compare.sh REF SMQCTL [SMQ_BENCH]: smq of this tree (SMQCTL, built)
# beside the smqctl of REF (a commit or tag, built apart from git archive),
# each running `bench --baseline --json` in turn, ROUNDS times (default 5,
# at least 5), the order swapped every round (REF first, then this tree
# first) so that a machine's drift falls on both alike.  A build that has
# the benchmark program (smq-bench: this tree's SMQ_BENCH, REF's if its
# Makefile builds one) runs it too, `smq-bench --json`, right after its
# bench: its rows (smq beside UCX and the others) are rows of that build's
# round.  Before smq-bench, bench --baseline had the UCX rows, judged by
# machine state: a row of one build named for the fast state ("zero-copy
# 64 B, fast") is compared with the other's row without a state, and the
# table says so.  For each row of
# the bench, the figure compared is the row's ratio to its baseline
# measured in the same run (as the bench prints it); the script prints
# each build's median of it, their ratio (CHANGE: this tree's / REF's),
# the spread between rounds of one build ((max - min) / median, the larger
# of the two builds': the noise floor) and whether the row moved beyond
# it, better or worse.  Exit 0, or 1 when a row got worse beyond the
# noise (or a build or a bench failed), 2 on a usage error.
#   BENCH_ARGS   options for both builds' benches and benchmark programs
#                (all must take them), e.g. "--count 2000" or "--cpu 2,3"
#   BENCH_DIR    where REF is built and the runs are kept (default
#                /tmp/smq-bench-REFCOMMIT); a REF built there is reused
#   ROUNDS       rounds (default 5)
#   sh tests/bench-compare.sh --compare DIR   compares the runs kept in DIR
#                (ref-N.json, tree-N.json) again, without measuring
# One round is two benches (and their benchmark programs) of a minute or
# two each on an idle machine: five rounds take ten to twenty minutes.
cd "$(dirname "$0")/.." || exit 1
me=bench-compare

usage() { echo "$me: $*" >&2; exit 2; }

compare() {
	python3 - "$@" <<'PY'
import glob, json, math, os, re, statistics, sys

run_dir, ref_name = sys.argv[1], sys.argv[2]
# a row's name carries how many runs of a machine state it was judged
# from, which changes between benches: the row is the same
RUNS = re.compile(r", \d+ runs?$")

def rounds(build):
    files = [f for f in glob.glob(os.path.join(run_dir, build + "-*.json"))
             if re.search(r"-\d+\.json$", f)]
    files.sort(key=lambda f: int(re.search(r"-(\d+)\.json$", f).group(1)))
    out = []
    for f in files:
        rows = {}
        # the round's bench, then its benchmark program's, if it ran one
        for part in (f, f[:-len(".json")] + "-products.json"):
            if part != f and not os.path.exists(part):
                continue
            with open(part) as fh:
                d = json.load(fh)
            for c in d["comparisons"]:
                key = (RUNS.sub("", c["measure"]), c["baseline"])
                if c["ratio"] is not None and c["ratio"] > 0:
                    rows[key] = (c["ratio"], c["better"])
        out.append(rows)
    return out

ref, tree = rounds("ref"), rounds("tree")
if len(ref) < 2 or len(tree) < 2:
    sys.exit("%s: fewer than two rounds of each build in %s" % ("bench-compare", run_dir))

# a row of one build named for the fast state, the other's without a
# state: the same row, as the UCX rows were before they moved to smq-bench
def has(build, k):
    return any(k in r for r in build)
stated = {}
for one, other, who in ((ref, tree, "REF"), (tree, ref, "tree")):
    for r in one:
        for k in list(r):
            what, base = k
            plain = (what[:-len(", fast")], base)
            if what.endswith(", fast") and not has(other, k) and has(other, plain):
                r[plain] = r.pop(k)
                stated[plain] = who
keys = []
for r in tree + ref:
    for k in r:
        if k not in keys:
            keys.append(k)

def spread(v):
    return (max(v) - min(v)) / statistics.median(v)

print("%-40s %-24s %8s %8s %7s %6s  %s" % ("ROW", "BASELINE", "REF", "TREE",
                                          "CHANGE", "NOISE", "MOVED"))
worse, better, few = [], [], []
for k in keys:
    a = [r[k][0] for r in ref if k in r]
    b = [r[k][0] for r in tree if k in r]
    what, base = k
    if len(a) < 2 or len(b) < 2:
        few.append("%s against %s (rounds: REF %d, tree %d)" % (what, base, len(a), len(b)))
        continue
    lower = next(r[k][1] for r in tree + ref if k in r) == "lower"
    ma, mb = statistics.median(a), statistics.median(b)
    change = mb / ma
    noise = max(spread(a), spread(b))
    moved = "-"
    if abs(change - 1) > noise:
        good = change < 1 if lower else change > 1
        moved = "better" if good else "WORSE"
        (better if good else worse).append("%s against %s: %.2fx, noise %.0f%%" %
                                           (what, base, change, 100 * noise))
    n = "" if len(a) == len(ref) and len(b) == len(tree) else \
        "  (rounds: REF %d, tree %d)" % (len(a), len(b))
    if k in stated:
        n += "  (%s: its fast state)" % stated[k]
    print("%-40s %-24s %7.3fx %7.3fx %6.2fx %5.0f%%  %s%s" % (what, base, ma, mb,
          change, 100 * noise, moved, n))
print("figures: each row's ratio to its baseline measured in the same run, "
      "median of %d rounds of each build; CHANGE: this tree's median / REF's; "
      "NOISE: the larger spread between rounds of one build, (max - min) / "
      "median; MOVED: CHANGE beyond the noise (for a latency lower is better, "
      "for a rate higher)" % min(len(ref), len(tree)))
for f in few:
    print("not compared, in fewer than two rounds of a build: " + f)
print("against %s: %d rows moved beyond the noise, %d better, %d WORSE" %
      (ref_name, len(better) + len(worse), len(better), len(worse)))
for w in worse:
    print("WORSE " + w)
for b in better:
    print("better " + b)
sys.exit(1 if worse else 0)
PY
}

if [ "$1" = --compare ]; then
	[ $# -eq 2 ] && [ -d "$2" ] || usage "--compare needs the folder of a run"
	compare "$2" "$(cat "$2/ref" 2>/dev/null || echo REF)"
	exit
fi
[ $# -eq 2 ] || [ $# -eq 3 ] || usage "usage: $0 REF SMQCTL [SMQ_BENCH] (make bench-compare REF=<commit or tag>)"
ref=$1 tree_smqctl=$2 tree_products=${3:-}
rounds=${ROUNDS:-5}
case $rounds in
''|*[!0-9]*) usage "ROUNDS=$rounds: a number of rounds, at least 5" ;;
esac
[ "$rounds" -ge 5 ] || usage "ROUNDS=$rounds: at least 5 rounds, or the spread between rounds of a build says little"
[ -x "$tree_smqctl" ] || usage "$tree_smqctl: not built (make it first)"
[ -z "$tree_products" ] || [ -x "$tree_products" ] || usage "$tree_products: not built (make it first)"
command -v python3 >/dev/null || { echo "$me: python3 is needed to compare the runs" >&2; exit 1; }
commit=$(git rev-parse --verify --quiet "$ref^{commit}") ||
	usage "REF=$ref: not a commit or tag of this repository"
short=$(git rev-parse --short "$commit")
dir=${BENCH_DIR:-/tmp/smq-bench-$short}
src=$dir/src
ref_smqctl=$src/build/smqctl
ref_products=$src/build/smq-bench
# builds_products: REF's Makefile builds the benchmark program
builds_products() { grep -q 'smq-bench' "$src/Makefile" 2>/dev/null; }

# REF from git archive, built with its own Makefile, outside this tree;
# this make's flags and variables are not its
# (again when a build kept from before lacks the benchmark program REF has)
if [ ! -x "$ref_smqctl" ] || [ "$(cat "$dir/commit" 2>/dev/null)" != "$commit" ] ||
	{ [ ! -x "$ref_products" ] && builds_products; }; then
	echo "$me: building $ref ($short) in $src"
	rm -rf "$src" && mkdir -p "$src" &&
		git archive "$commit" | tar -x -C "$src" || { echo "$me: cannot unpack $ref into $src" >&2; exit 1; }
	# and its benchmark program, if its Makefile builds one
	targets=build/smqctl
	builds_products && targets="$targets build/smq-bench"
	# shellcheck disable=SC2086 # targets is a list
	if ! env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS \
		make -C "$src" -j"$(nproc 2>/dev/null || echo 2)" B=build $targets >"$dir/build.log" 2>&1; then
		tail -n 20 "$dir/build.log" >&2
		echo "$me: $ref did not build (all of it in $dir/build.log)" >&2
		exit 1
	fi
	echo "$commit" >"$dir/commit"
fi

run=$dir/run-$(date +%Y%m%d-%H%M%S)
mkdir -p "$run" || exit 1
echo "$ref ($short)" >"$run/ref"
echo "$me: $ref ($short) against this tree ($(git describe --always --dirty)), $rounds rounds of two benches, each bench --baseline --json${BENCH_ARGS:+ $BENCH_ARGS}; runs kept in $run"
[ -x "$ref_products" ] || ref_products=
echo "$me: benchmark programs: REF's ${ref_products:-none}, this tree's ${tree_products:-none}"
bench() {  # bench BUILD SMQCTL ROUND [SMQ_BENCH]
	# shellcheck disable=SC2086 # BENCH_ARGS is a list of options
	if ! "$2" --json bench --baseline $BENCH_ARGS >"$run/$1-$3.json" 2>"$run/$1-$3.err"; then
		cat "$run/$1-$3.err" >&2
		echo "$me: the bench of $1 failed in round $3 (its output in $run)" >&2
		exit 1
	fi
	# shellcheck disable=SC2086 # BENCH_ARGS is a list of options
	if [ -n "$4" ] && ! "$4" --json $BENCH_ARGS >"$run/$1-$3-products.json" 2>"$run/$1-$3-products.err"; then
		cat "$run/$1-$3-products.err" >&2
		echo "$me: the benchmark program of $1 failed in round $3 (its output in $run)" >&2
		exit 1
	fi
	echo "$me: round $3, $1 done"
}
i=1
while [ $i -le "$rounds" ]; do
	if [ $((i % 2)) -eq 1 ]; then
		bench ref "$ref_smqctl" $i "$ref_products"
		bench tree "$tree_smqctl" $i "$tree_products"
	else
		bench tree "$tree_smqctl" $i "$tree_products"
		bench ref "$ref_smqctl" $i "$ref_products"
	fi
	i=$((i + 1))
done
compare "$run" "$ref ($short)"
