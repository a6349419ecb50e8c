#!/bin/sh
# The CLI tests with every smqctl invocation under valgrind memcheck: any
# memory error, or a definite leak, fails the script that ran it.
#   sh tests/valgrind.sh [SCRIPT...]
# (default: t_cli, t_recv, t_security, t_server, t_metrics,
# t_ivshmem_conform, and t_peer_death if present; not t_measure, whose
# measurements ASan runs, and which under valgrind took CI two minutes)
# Uses the plain build (B, default build: run make first).  Each script
# runs with SMQCTL_WRAP set to a wrapper that execs valgrind (pid, stdin and
# exit status stay smqctl's) and logs each process, forked children too, to
# its own file; a script fails if it fails, or if any log holds an error,
# which catches errors in invocations whose exit status the script ignores.
# The scripts run VALGRIND_JOBS at a time (default: the CPUs, at least 2);
# VALGRIND_TIMEOUT (seconds, default 1200) bounds each.  Prints PASS, FAIL or
# SKIP per script and "N passed, N failed, N skipped"; exit 0, 1 if any
# failed, 77 (and no summary) without valgrind.
# Unloaded, 2 CPUs: about 2.5 minutes, t_cli the longest.
cd "$(dirname "$0")/.." || exit 1
. tests/lib/verdict.sh
B=${B:-build}
export B
timeout=${VALGRIND_TIMEOUT:-1200}
if [ $# -eq 0 ]; then
	set -- tests/cli/t_cli.sh tests/cli/t_recv.sh \
		tests/cli/t_security.sh tests/cli/t_server.sh tests/cli/t_metrics.sh \
		tests/cli/t_ivshmem_conform.sh
	[ -f tests/cli/t_peer_death.sh ] && set -- "$@" tests/cli/t_peer_death.sh
fi
if ! command -v valgrind >/dev/null 2>&1 || ! valgrind --version >/dev/null 2>&1; then
	# no summary line: a caller counts the exit status 77 as one skip
	echo "valgrind not installed: skipped"
	exit 77
fi
[ -x "$B/smqctl" ] || { echo "$B/smqctl not built: run make first"; exit 1; }
# by its full path: a script may run smqctl with a PATH of its own
vg=$(command -v valgrind)

top=$(mktemp -d) || exit 1
trap 'rm -rf "$top"' EXIT
trap 'exit 1' INT TERM HUP
# Memory errors and definite leaks are errors.  Possible and reachable
# leaks are not (a pointer into a block, or memory held at exit, is not a
# lost block), and are not shown, so that a log holds errors only.
# Nothing is suppressed.  No gdbserver: its pipes in /tmp, named by pid,
# outlive a process the tests kill, and a later process of another user
# with that pid could not create its own (valgrind then fails it).
VG_OPTS="--quiet --error-exitcode=86 --leak-check=full \
--show-leak-kinds=definite --errors-for-leak-kinds=definite \
--track-fds=no --num-callers=30 --vgdb=no"

# start SCRIPT: runs it in the background, its files in $top/N/
n=0
start() {
	n=$((n + 1))
	d=$top/$n
	mkdir -p "$d/vg" || exit 1
	# t_cli runs some invocations as uid 65534: they log here too
	chmod 1777 "$d/vg"
	chmod 755 "$top" "$d"
	cat >"$d/wrap" <<EOF
#!/bin/sh
printf '%s\n' "\$*" >"$d/vg/cmd.\$\$"
exec '$vg' $VG_OPTS --log-file="$d/vg/log.%p" "\$@"
EOF
	chmod 755 "$d/wrap"
	echo "$1" >"$d/name"
	(
		s=$(date +%s)
		SMQCTL_WRAP="$d/wrap" SMQ_MEASURE_SCALE=${SMQ_MEASURE_SCALE:-20} \
			timeout -k 5 "$timeout" sh "$1" >"$d/out" 2>&1
		echo $? >"$d/rc.tmp"
		echo $(($(date +%s) - s)) >"$d/secs"
		mv "$d/rc.tmp" "$d/rc"
	) &
}

pass=0 fail=0 skip=0 failed=""
# report N: the verdict on script N
report() {
	d=$top/$1
	name=$(cat "$d/name")
	name=${name##*/}
	rc=$(cat "$d/rc")
	secs=$(cat "$d/secs")
	runs=0
	for log in "$d"/vg/log.*; do [ -e "$log" ] && runs=$((runs + 1)); done
	errs=""
	for log in "$d"/vg/log.*; do
		[ -s "$log" ] || continue
		# valgrind's own warnings (an unhandled ioctl, a large mapping)
		# are shown, not counted
		if grep -v '^==[0-9]*== *$' "$log" | grep -qv '^==[0-9]*== Warning:'; then
			errs="$errs $log"
		fi
	done
	# run.sh's verdict (tests/lib/verdict.sh), then valgrind's
	judge "$d/out" "$rc" "$secs" "$timeout"
	if [ -z "$why" ] && [ "$rc" = 77 ]; then
		skip=$((skip + 1))
		echo "SKIP $name: $(tail -n 1 "$d/out")"
		return
	fi
	if [ -z "$why" ] && [ -z "$errs" ] && [ "$runs" -gt 0 ]; then
		pass=$((pass + 1))
		echo "PASS $name (${secs}s, $runs processes under valgrind)"
		shown_under_pass "$d/out"
	else
		fail=$((fail + 1))
		failed="$failed $name"
		if [ -n "$why" ]; then echo "FAIL $name: $why"
		elif [ -n "$errs" ]; then echo "FAIL $name (${secs}s): valgrind errors"
		else echo "FAIL $name (${secs}s)"; fi
		[ "$runs" -gt 0 ] || echo "    no smqctl invocation ran under valgrind: does the script honour SMQCTL_WRAP?"
		[ -z "$why" ] || grep -v '^ok ' "$d/out" | sed 's/^/    /'
	fi
	for log in "$d"/vg/log.*; do
		[ -s "$log" ] || continue
		pid=${log##*.}
		if [ -f "$d/vg/cmd.$pid" ]; then
			echo "    valgrind: smqctl $(sed 's|^[^ ]*/smqctl ||; s|^[^ ]*/wrapped ||' "$d/vg/cmd.$pid")"
		else
			echo "    valgrind: process $pid (forked by an smqctl)"
		fi
		sed 's/^/      /' "$log"
	done
}

# VALGRIND_JOBS at a time, reported in the order given
jobs=${VALGRIND_JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$jobs" -ge 2 ] 2>/dev/null || jobs=2
running() { # scripts started and not finished
	r=0
	k=1
	while [ $k -le $n ]; do
		[ -f "$top/$k/rc" ] || r=$((r + 1))
		k=$((k + 1))
	done
	echo $r
}
for t in "$@"; do
	# a slot free: a job's rc file, looked at each second (sh has no wait -n)
	while [ "$(running)" -ge "$jobs" ]; do sleep 1; done
	start "$t"
done
wait
k=1
while [ $k -le $n ]; do
	report $k
	k=$((k + 1))
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
