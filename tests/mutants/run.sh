#!/bin/sh
# make mutants: bugs planted on purpose.  Each tests/mutants/*.patch is a
# small change to the library or the tool, with a header that says what
# kind of bug it plants and which tests must fail on it:
#
#	Kind: bounds
#	Expect: t_damaged t_notsender.sh
#	(what the bug is, in words)
#	diff --git a/libsmq/... b/libsmq/...
#
# The runner copies the tree (the files git tracks or would, as they are
# in the work tree) to a folder of its own, builds it, and runs every test
# the mutants name on the clean copy: each must pass there, or nothing can
# be judged.  Then, one mutant at a time, it applies the patch, builds,
# runs the tests the mutant names, and takes the patch back out.  A mutant
# that none of its tests fails SURVIVED; one whose patch no longer applies
# is said too (refresh it).  Exit 0 only when every mutant was caught.
#
# sh tests/mutants/run.sh [PATCH...]   (default: every tests/mutants/*.patch)
# MUTANT_DIR: the folder (default a new one under /tmp, removed at the end)
# MUTANT_TIMEOUT: seconds a test may take on a mutant (default 180)
# Minutes of a shared machine's two cores: not in check, nor check-all.
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
if [ $# -eq 0 ]; then
	set -- tests/mutants/*.patch
fi
for p in "$@"; do
	[ -f "$p" ] || { echo "mutants: no patch $p" >&2; exit 2; }
done
dir=${MUTANT_DIR:-}
if [ -z "$dir" ]; then
	dir=$(mktemp -d /tmp/smq-mutants.XXXXXX) || exit 1
	trap 'rm -rf "$dir"' EXIT
	trap 'exit 130' INT TERM HUP
fi
tree=$dir/tree
log=$dir/log
jobs=${MUTANT_JOBS:-2}
export TEST_TIMEOUT=${MUTANT_TIMEOUT:-180}

# field PATCH NAME: the header line "NAME: ..." of a patch
field() { sed -n "/^diff --git /q; s/^$2: *//p" "$1" | head -n 1; }

# where TEST: the path run.sh runs for a test name (a C test is a
# program of the build, a script is found under tests/)
where() {
	case $1 in
	*.sh) for f in tests/*/"$1"; do [ -f "$f" ] && echo "$f" && return; done
	      echo "tests/cli/$1" ;;
	*) echo "build/tests/$1" ;;
	esac
}

# run_tests TEST...: their run.sh lines in $log.run; the names of those
# that failed in $failed
run_tests() {
	paths=""
	for t in "$@"; do paths="$paths $(where "$t")"; done
	# shellcheck disable=SC2086
	(cd "$tree" && B=build sh tests/run.sh $paths) >"$log.run" 2>&1
	failed=$(sed -n 's/^failed: *//p' "$log.run")
}

# build [TEST...]: what those tests run (a C test its program; a script
# may run any, so everything); no test: everything
build() {
	targets=""
	for t in "$@"; do
		case $t in
		*.sh) targets=""; break ;;
		*) targets="$targets build/tests/$t" ;;
		esac
	done
	# shellcheck disable=SC2086
	(cd "$tree" && make -j"$jobs" B=build ${targets:-tests}) \
		>"$log.build" 2>&1
}

# over a copy left by an earlier run with the same MUTANT_DIR, whose build
# then goes on from where it was
echo "mutants: copying the tree to $tree"
mkdir -p "$tree"
git ls-files -z --cached --others --exclude-standard |
	tar --null --ignore-failed-read -T - -cf - 2>/dev/null |
	tar -C "$tree" -xf - || { echo "mutants: cannot copy the tree" >&2; exit 1; }

all=""
for p in "$@"; do
	for t in $(field "$p" Expect); do
		case " $all " in *" $t "*) ;; *) all="$all $t" ;; esac
	done
done
echo "mutants: building the clean copy"
if ! build; then
	tail -n 20 "$log.build"
	echo "mutants: the clean copy does not build" >&2
	exit 1
fi
echo "mutants: the clean copy runs$all"
# shellcheck disable=SC2086
run_tests $all
if [ -n "$failed" ]; then
	cat "$log.run"
	echo "mutants: the clean copy fails$failed: no mutant can be judged" >&2
	exit 1
fi

survived="" broken="" n=0
summary=""
for p in "$@"; do
	n=$((n + 1))
	name=$(basename "$p" .patch)
	kind=$(field "$p" Kind)
	expect=$(field "$p" Expect)
	if ! (cd "$tree" && git apply "$ROOT/$p") >"$log.apply" 2>&1; then
		broken="$broken $name"
		summary="$summary
DOES NOT APPLY  $name ($kind): $(head -n 1 "$log.apply")"
		continue
	fi
	start=$(date +%s)
	# shellcheck disable=SC2086
	if ! build $expect; then
		verdict="caught by the build"
	else
		# shellcheck disable=SC2086
		run_tests $expect
		if [ -n "$failed" ]; then
			verdict="caught by $failed"
		else
			verdict="SURVIVED $expect"
			survived="$survived $name"
		fi
	fi
	(cd "$tree" && git apply -R "$ROOT/$p") >"$log.apply" 2>&1 || {
		echo "mutants: cannot take $name back out of the copy" >&2
		exit 1
	}
	line=$(printf '%-30s %-16s %s (%ss)' "$name" "$kind" "$verdict" \
		"$(($(date +%s) - start))")
	echo "$line"
	summary="$summary
$line"
done
# the copy as it was: the next run's incremental build starts clean
build >/dev/null 2>&1
echo "mutants:$summary"
echo "$n mutants, $(echo $survived | wc -w) survived, $(echo $broken | wc -w) did not apply${survived:+ (survived:$survived)}"
[ -z "$survived$broken" ]
