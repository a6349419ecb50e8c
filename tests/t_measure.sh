#!/bin/sh
# pingpong and bench on small counts: every message arrives (the commands
# fail otherwise) and the figures are consistent: percentiles ordered, rates
# equal to messages over seconds, sizes as asked, in text, JSON and CSV;
# --peer across two processes; Ctrl-C prints what was measured.
# SMQCTL_WRAP: shell words put before every smqctl invocation (valgrind and
# its options: tests/valgrind.sh).  SMQ_MEASURE_SCALE=N divides the message
# counts by N (default 1), for a slow smqctl such as one under valgrind.
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
smqctl="$PWD/$B/smqctl"
[ -x "$smqctl" ] || { echo "no $smqctl (build first)"; exit 77; }
command -v python3 >/dev/null || { echo "python3 not installed: the JSON checks need it"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
scale=${SMQ_MEASURE_SCALE:-1}
case $scale in ''|*[!0-9]*|0*) echo "SMQ_MEASURE_SCALE must be a number from 1"; exit 1 ;; esac
n() { c=$(($1 / scale)); [ $c -ge 1 ] || c=1; echo $c; }
n3000=$(n 3000) n2000=$(n 2000) n5000=$(n 5000) n20000=$(n 20000)
intwait=1.5  # how long pingpong runs before Ctrl-C
if [ -n "${SMQCTL_WRAP:-}" ]; then
	# the wrapper execs, so the pid, stdin and exit status are smqctl's own
	printf '#!/bin/sh\nexec %s "%s" "$@"\n' "$SMQCTL_WRAP" "$smqctl" >"$dir/wrapped" &&
		chmod 755 "$dir/wrapped" || exit 1
	smqctl=$dir/wrapped
	intwait=5  # the wrapped command starts slowly
	echo "note: smqctl runs as: $SMQCTL_WRAP smqctl ARGS"
fi
[ "$scale" = 1 ] || echo "note: counts divided by $scale"
export SMQ_WINDOW="file:$dir/w"
fails=0
ok() { echo "ok   $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }

"$smqctl" init --boards 2 --entries 64 --entry-size 4096 >/dev/null || { echo "init failed"; exit 1; }

# pingpong, JSON: sizes, counts, ordering, rate = messages / seconds
check_json() { # file kind sizes count
	python3 - "$@" <<'PY'
import json, sys
f, kind, sizes, count = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3].split(",")], int(sys.argv[4])
d = json.load(open(f))
r = d["results"]
assert [x["size"] for x in r] == sizes, ("sizes", [x["size"] for x in r])
for x in r:
    assert x["messages"] == count, ("messages", x["messages"])
    assert x["seconds"] > 0
    rate = x["messages"] / x["seconds"]
    assert abs(rate - x["msgs_per_s"]) <= 1e-6 * rate + 0.1, ("rate", rate, x["msgs_per_s"])
    assert abs(x["mb_per_s"] - x["msgs_per_s"] * x["size"] / 1e6) <= 1e-3 + 1e-6 * x["mb_per_s"], "mb/s"
    if kind == "pingpong":
        l = x["half_rtt_ns"]
        assert l["n"] == count
        assert 0 < l["min"] <= l["median"] <= l["p95"] <= l["p99"] <= l["p99.9"] <= l["max"], l
        assert l["min"] <= l["mean"] <= l["max"], l
        # the mean half round trip and the rate describe the same run
        assert l["mean"] * 2 * count / 1e9 <= x["seconds"] * 1.0001 + 1e-6, ("mean vs seconds", l["mean"], x["seconds"])
    a, b = x["cpu_percent"]
    assert 0 <= a <= 110 and (b == -1 or 0 <= b <= 110), ("cpu", a, b)
PY
}
for mode in poll sleep spin; do
	if "$smqctl" pingpong --json --mode $mode --count $n3000 --size 0,10,100,1000 >"$dir/pp.json" 2>"$dir/err" &&
	   check_json "$dir/pp.json" pingpong 0,10,100,1000 $n3000 2>>"$dir/err"; then
		ok "pingpong --mode $mode: 4 sizes, ordered percentiles, rates match counts"
	else bad "pingpong --mode $mode"; sed 's/^/    /' "$dir/err"; fi
done
if "$smqctl" bench --json --count $n20000 --size 0,64,4K >"$dir/b.json" 2>"$dir/err" &&
   check_json "$dir/b.json" bench 0,64,4096 $n20000 2>>"$dir/err"; then
	ok "bench: 3 sizes, every message drained and checked, rates match counts"
else bad "bench --json"; sed 's/^/    /' "$dir/err"; fi

# text and CSV carry the same rows
if "$smqctl" pingpong --count $n2000 --size 0,64 >"$dir/pp.txt" 2>"$dir/err" &&
   grep -q "^pingpong on file:$dir/w: board 0 (cpu [0-9-]*) <-> board 1" "$dir/pp.txt" &&
   [ "$(grep -cE "^ +(0|64) +$n2000 " "$dir/pp.txt")" = 2 ]; then
	ok "pingpong text table: one row per size with its round trips"
else bad "pingpong text"; cat "$dir/pp.txt" "$dir/err" | sed 's/^/    /'; fi
if "$smqctl" bench --csv --count $n5000 --size 8,16 >"$dir/b.csv" 2>"$dir/err" &&
   head -1 "$dir/b.csv" | grep -q '^name,size,messages,seconds,msgs_per_s,mb_per_s,cpu_a_percent,cpu_b_percent$' &&
   [ "$(grep -c "^smq spin,\\(8\\|16\\),$n5000," "$dir/b.csv")" = 2 ]; then
	ok "bench --csv: header and one row per size"
else bad "bench --csv"; cat "$dir/b.csv" "$dir/err" | sed 's/^/    /'; fi
if "$smqctl" pingpong --count $n2000 --size 64 --histogram >"$dir/h.txt" 2>"$dir/err" &&
   grep -q "half round trip histogram ($n2000 samples)" "$dir/h.txt"; then
	total=$(sed -n 's/.* us *\([0-9][0-9]*\).*/\1/p' "$dir/h.txt" | awk '{ s += $1 } END { print s }')
	if [ "$total" = $n2000 ]; then ok "histogram: buckets add up to the $n2000 samples"
	else bad "histogram buckets add up to $total, not $n2000"; fi
else bad "pingpong --histogram"; cat "$dir/h.txt" "$dir/err" | sed 's/^/    /'; fi

# --peer: the two halves as two separate commands, as on two real boards
"$smqctl" --board 1 pingpong --peer >"$dir/peer1.out" 2>&1 &
p1=$!
if "$smqctl" pingpong --peer --json --count $n2000 --size 0,100 >"$dir/peer0.json" 2>"$dir/err" &&
   check_json "$dir/peer0.json" pingpong 0,100 $n2000 2>>"$dir/err"; then
	ok "pingpong --peer: board 0 against board 1 started separately"
else bad "pingpong --peer"; cat "$dir/err" "$dir/peer1.out" | sed 's/^/    /'; fi
wait $p1 && ok "the peer board ends with status 0 when board 0 is done" ||
	{ bad "peer board exit status"; sed 's/^/    /' "$dir/peer1.out"; }

# a size the window cannot carry is refused, naming it
"$smqctl" pingpong --size 5000 >/dev/null 2>"$dir/err"; rc=$?
if [ $rc = 1 ] && grep -q "size 5000 is larger than the entry size 4096" "$dir/err"; then
	ok "a size larger than the entry size: exit 1, named"
else bad "oversized pingpong: exit $rc"; sed 's/^/    /' "$dir/err"; fi

# Ctrl-C: what was measured is printed, and the exit status says interrupted
"$smqctl" pingpong --duration 30 --size 0 >"$dir/int.txt" 2>"$dir/err" &
pid=$!
sleep $intwait
kill -INT $pid
wait $pid; rc=$?
if [ $rc = 1 ] && grep -q "(interrupted)" "$dir/int.txt" && grep -qE '^ +0 +[0-9]+ ' "$dir/int.txt"; then
	ok "Ctrl-C: prints the rows measured so far, exit 1"
else bad "Ctrl-C: exit $rc"; cat "$dir/int.txt" "$dir/err" | sed 's/^/    /'; fi
# nothing left behind: the forked peer is gone, the window is valid
sleep 0.2
if "$smqctl" dump >/dev/null 2>"$dir/err"; then ok "the window is valid afterwards"
else bad "dump after the runs"; sed 's/^/    /' "$dir/err"; fi

[ $fails = 0 ] || { echo "$fails failed"; exit 1; }
