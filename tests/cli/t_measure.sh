#!/bin/sh
# pingpong and bench on small counts: every message arrives (the commands
# fail otherwise) and the figures are consistent: percentiles ordered, rates
# equal to messages over seconds, sizes as asked, CPU shares of at most 100%
# even for a single round trip, in text, JSON and CSV; every JSON output
# (bench --baseline's too) parses, and every key it has is described in
# smqctl(1), as every described key is printed; CSV columns are the keys of
# the JSON rows; --histogram in JSON; --cpu checked against the CPUs this
# process may use; both sides polling on one CPU refused without --force;
# a size list checked whole before the first round; --peer across two
# processes; Ctrl-C prints what was measured.
# SMQCTL_WRAP: shell words put before every smqctl invocation (valgrind and
# its options: tests/valgrind.sh).  SMQ_MEASURE_SCALE=N divides the message
# counts by N (default 1), for a slow smqctl such as one under valgrind.
cd "$(dirname "$0")/../.." || exit 1
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
# With one CPU, busy-polling on both sides is refused without --force (as
# tested below), and each round trip would wait for the scheduler: the
# runs that would poll spin instead.
ncpu=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
F=
[ "$ncpu" -ge 2 ] || { F="--wait spin"; echo "note: one CPU: runs in spin mode, not poll"; }

# pingpong, JSON: sizes, counts, ordering, rate = messages / seconds
check_json() { # file kind sizes count
	python3 - "$@" <<'PY'
import json, sys
f, kind, sizes, count = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3].split(",")], int(sys.argv[4])
d = json.load(open(f))
assert d["command"] == kind, ("command", d["command"])
assert d["interrupted"] is False
assert d["mode"] in ("poll", "sleep", "spin")
assert d["cpu_a"] is None or isinstance(d["cpu_a"], int)
r = d["results"]
assert [x["size"] for x in r] == sizes, ("sizes", [x["size"] for x in r])
for x in r:
    assert x["name"] == "smq " + d["mode"], x["name"]
    assert x["messages"] == count, ("messages", x["messages"])
    assert x["seconds"] > 0
    rate = x["messages"] / x["seconds"]
    assert abs(rate - x["msgs_per_s"]) <= 1e-6 * rate + 0.1, ("rate", rate, x["msgs_per_s"])
    assert abs(x["mb_per_s"] - x["msgs_per_s"] * x["size"] / 1e6) <= 1e-3 + 1e-6 * x["mb_per_s"], "mb/s"
    if kind == "pingpong":
        l = {k: x[k + "_ns"] for k in ("min", "mean", "median", "p95", "p99", "p999", "max")}
        assert 0 < l["min"] <= l["median"] <= l["p95"] <= l["p99"] <= l["p999"] <= l["max"], l
        assert l["min"] <= l["mean"] <= l["max"], l
        # the mean half round trip and the rate describe the same run
        assert l["mean"] * 2 * count / 1e9 <= x["seconds"] * 1.0001 + 1e-6, ("mean vs seconds", l["mean"], x["seconds"])
    else:
        assert "median_ns" not in x, "latency in a stream"
    a, b = x["cpu_a_percent"], x["cpu_b_percent"]
    assert 0 <= a <= 100 and (b is None or 0 <= b <= 100), ("cpu", a, b)
PY
}
for mode in poll sleep spin; do
	[ $mode = poll ] && [ "$ncpu" -lt 2 ] && continue
	if "$smqctl" pingpong --json --wait $mode --count $n3000 --size 0,10,100,1000 >"$dir/pp.json" 2>"$dir/err" &&
	   check_json "$dir/pp.json" pingpong 0,10,100,1000 $n3000 2>>"$dir/err"; then
		ok "pingpong --wait $mode: 4 sizes, ordered percentiles, rates match counts"
	else bad "pingpong --wait $mode"; sed 's/^/    /' "$dir/err"; fi
done
if "$smqctl" bench --json --count $n20000 --size 0,64,4K >"$dir/b.json" 2>"$dir/err" &&
   check_json "$dir/b.json" bench 0,64,4096 $n20000 2>>"$dir/err"; then
	ok "bench: 3 sizes, every message drained and checked, rates match counts"
else bad "bench --json"; sed 's/^/    /' "$dir/err"; fi

# text and CSV carry the same rows; the CSV columns are the JSON row keys
if "$smqctl" pingpong $F --count $n2000 --size 0,64 >"$dir/pp.txt" 2>"$dir/err" &&
   grep -q "^pingpong on file:$dir/w: board 0 (cpu [0-9-]*) <-> board 1" "$dir/pp.txt" &&
   grep -q "^notification: .*; prediction: none: " "$dir/pp.txt" &&
   [ "$(grep -cE "^ +(0|64) +$n2000 " "$dir/pp.txt")" = 2 ]; then
	ok "pingpong text table: one row per size with its round trips"
else bad "pingpong text"; cat "$dir/pp.txt" "$dir/err" | sed 's/^/    /'; fi
# csv_vs_json CSV JSON LINES: the header is the keys of the JSON rows (of
# the same command; histogram aside), and LINES lines of values follow
csv_vs_json() {
	python3 - "$1" "$2" "$3" <<'PY'
import csv, json, sys
rows = list(csv.reader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
head, lines = rows[0], rows[1:]
for x in d["results"]:
    keys = [k for k in x if k != "histogram"]
    assert head == keys, ("header", head, keys)
assert len(lines) == int(sys.argv[3]), ("lines", len(lines))
for line in lines:
    assert len(line) == len(head), line
    for k, v in zip(head, line):
        if k == "name":
            assert v.startswith("smq "), v
        elif k in ("cpu_b_percent", "predicted_msgs_per_s") and v == "":
            pass
        else:
            float(v)
PY
}
if "$smqctl" bench --csv --count $n5000 --size 8,16 >"$dir/b.csv" 2>"$dir/err" &&
   head -1 "$dir/b.csv" | grep -q '^name,size,messages,seconds,msgs_per_s,mb_per_s,cpu_a_percent,cpu_b_percent,predicted_msgs_per_s$' &&
   [ "$(grep -c "^smq spin,\\(8\\|16\\),$n5000," "$dir/b.csv")" = 2 ] &&
   csv_vs_json "$dir/b.csv" "$dir/b.json" 2 2>>"$dir/err"; then
	ok "bench --csv: the JSON row keys as header, one line per size"
else bad "bench --csv"; cat "$dir/b.csv" "$dir/err" | sed 's/^/    /'; fi
if "$smqctl" pingpong $F --csv --count $n2000 --size 0,64 >"$dir/pp.csv" 2>"$dir/err" &&
   csv_vs_json "$dir/pp.csv" "$dir/pp.json" 2 2>>"$dir/err"; then
	ok "pingpong --csv: the JSON row keys as header, latencies included"
else bad "pingpong --csv"; cat "$dir/pp.csv" "$dir/err" | sed 's/^/    /'; fi
if "$smqctl" pingpong $F --count $n2000 --size 64 --histogram >"$dir/h.txt" 2>"$dir/err" &&
   grep -q "half round trip histogram ($n2000 samples)" "$dir/h.txt"; then
	total=$(sed -n 's/.* us *\([0-9][0-9]*\).*/\1/p' "$dir/h.txt" | awk '{ s += $1 } END { print s }')
	if [ "$total" = $n2000 ]; then ok "histogram: buckets add up to the $n2000 samples"
	else bad "histogram buckets add up to $total, not $n2000"; fi
else bad "pingpong --histogram"; cat "$dir/h.txt" "$dir/err" | sed 's/^/    /'; fi
# --histogram --json: each row carries its buckets, contiguous powers of
# two, whose counts add up to its round trips
if "$smqctl" pingpong $F --json --count $n2000 --size 0,100 --histogram >"$dir/h.json" 2>"$dir/err" &&
   check_json "$dir/h.json" pingpong 0,100 $n2000 2>>"$dir/err" &&
   python3 - "$dir/h.json" $n2000 2>>"$dir/err" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for x in d["results"]:
    h = x["histogram"]
    assert h and sum(b["count"] for b in h) == int(sys.argv[2]), h
    assert h[0]["count"] > 0 and h[-1]["count"] > 0, "trimmed"
    for b, c in zip(h, h[1:]):
        assert b["high_ns"] == c["low_ns"], (b, c)
    for b in h:
        assert b["high_ns"] == 2 * max(b["low_ns"], 1), b
    # the extremes fall in the first and the last bucket
    assert h[0]["low_ns"] <= x["min_ns"] < h[0]["high_ns"], (x["min_ns"], h[0])
    assert h[-1]["low_ns"] <= x["max_ns"] < h[-1]["high_ns"], (x["max_ns"], h[-1])
PY
then ok "pingpong --histogram --json: buckets in each row, adding up to the round trips"
else bad "pingpong --histogram --json"; sed 's/^/    /' "$dir/err"; fi
"$smqctl" pingpong --csv --histogram >"$dir/out" 2>"$dir/err"; rc=$?
if [ $rc = 2 ] && grep -q "histogram" "$dir/err" && [ ! -s "$dir/out" ]; then
	ok "--csv --histogram: usage error, exit 2"
else bad "--csv --histogram: exit $rc"; sed 's/^/    /' "$dir/err"; fi
"$smqctl" --json bench --csv >"$dir/out" 2>"$dir/err"; rc=$?
if [ $rc = 2 ] && grep -q "^smqctl: --json and --csv exclude each other" "$dir/err" && [ ! -s "$dir/out" ]; then
	ok "--json --csv: usage error, exit 2"
else bad "--json --csv: exit $rc"; sed 's/^/    /' "$dir/err"; fi

# the shortest runs: a CPU share is never above 100% on either side
shares=0
for i in 1 2 3; do
	for c in "pingpong --count 1 --size 0,8" "pingpong --count 3 --wait sleep --size 0" \
		 "bench --count 1 --size 0,64" "bench --count 2 --wait poll --size 0"; do
		# shellcheck disable=SC2086
		"$smqctl" --json $c $F >"$dir/short.json" 2>"$dir/err" &&
		python3 - "$dir/short.json" 2>>"$dir/err" <<'PY' || { shares=1; echo "    $c"; sed 's/^/    /' "$dir/err"; }
import json, sys
for x in json.load(open(sys.argv[1]))["results"]:
    for k in ("cpu_a_percent", "cpu_b_percent"):
        assert x[k] is None or 0 <= x[k] <= 100, (k, x[k])
PY
	done
done
[ $shares = 0 ] && ok "CPU shares at most 100% for runs of 1 to 3 messages" ||
	bad "a CPU share above 100%"

# --peer: the two halves as two separate commands, as on two real boards
"$smqctl" --board 1 pingpong --peer >"$dir/peer1.out" 2>&1 &
p1=$!
if "$smqctl" pingpong --peer --json --count $n2000 --size 0,100 >"$dir/peer0.json" 2>"$dir/err" &&
   check_json "$dir/peer0.json" pingpong 0,100 $n2000 2>>"$dir/err"; then
	ok "pingpong --peer: board 0 against board 1 started separately"
else bad "pingpong --peer"; cat "$dir/err" "$dir/peer1.out" | sed 's/^/    /'; fi
wait $p1 && ok "the peer board ends with status 0 when board 0 is done" ||
	{ bad "peer board exit status"; sed 's/^/    /' "$dir/peer1.out"; }

# a size the window cannot carry is refused, naming it, before anything
# is measured: all sizes or none
"$smqctl" pingpong --size 5000 >"$dir/out" 2>"$dir/err"; rc=$?
if [ $rc = 1 ] && grep -q "size 5000 is larger than the entry size 4096" "$dir/err" && [ ! -s "$dir/out" ]; then
	ok "a size larger than the entry size: exit 1, named"
else bad "oversized pingpong: exit $rc"; sed 's/^/    /' "$dir/err"; fi
for c in "pingpong --count 100" "bench --count 100"; do
	# shellcheck disable=SC2086
	"$smqctl" $c --size 0,1K,1M >"$dir/out" 2>"$dir/err"; rc=$?
	if [ $rc = 1 ] && grep -q "^smqctl: size 1048576 is larger than the entry size 4096 of file:$dir/w: nothing measured" "$dir/err" &&
	   [ ! -s "$dir/out" ]; then
		ok "${c%% *} --size 0,1K,1M: refused before the first size, nothing printed"
	else bad "${c%% *} --size 0,1K,1M: exit $rc"; cat "$dir/out" "$dir/err" | sed 's/^/    /'; fi
done
"$smqctl" --json bench --size 5000,64,8K >"$dir/out" 2>"$dir/err"; rc=$?
if [ $rc = 1 ] && grep -q "sizes 5000, 8192 are larger than the entry size 4096" "$dir/err" && [ ! -s "$dir/out" ]; then
	ok "two sizes too large: both named, nothing measured"
else bad "two oversized sizes: exit $rc"; sed 's/^/    /' "$dir/err"; fi

# --cpu: a CPU this process may not use is a usage error naming it and the
# allowed set; both sides polling on one CPU needs --force
allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
notmine=$(python3 -c 'import os; a = os.sched_getaffinity(0); print(next(c for c in range(1024) if c not in a))')
first=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
"$smqctl" pingpong --cpu "$first,$notmine" --count 10 >"$dir/out" 2>"$dir/err"; rc=$?
if [ $rc = 2 ] && grep -q "CPU $notmine is not one this process may use (allowed: $allowed)" "$dir/err" && [ ! -s "$dir/out" ]; then
	ok "--cpu $first,$notmine: exit 2, CPU $notmine and the allowed set ($allowed) named"
else bad "--cpu $first,$notmine: exit $rc"; cat "$dir/out" "$dir/err" | sed 's/^/    /'; fi
"$smqctl" bench --cpu "$notmine,$first" --count 10 >"$dir/out" 2>"$dir/err"; rc=$?
if [ $rc = 2 ] && grep -q "CPU $notmine is not one" "$dir/err"; then
	ok "bench --cpu $notmine,$first: exit 2"
else bad "bench --cpu $notmine,$first: exit $rc"; sed 's/^/    /' "$dir/err"; fi
"$smqctl" pingpong --cpu "$first,$first" --count 10 --size 0 >"$dir/out" 2>"$dir/err"; rc=$?
if [ $rc = 2 ] && grep -q "^smqctl: both sides would busy-poll on CPU $first.*use --wait spin or sleep.*--force" "$dir/err" && [ ! -s "$dir/out" ]; then
	ok "--cpu $first,$first in poll mode: refused, exit 2"
else bad "--cpu $first,$first poll: exit $rc"; cat "$dir/out" "$dir/err" | sed 's/^/    /'; fi
if "$smqctl" pingpong --cpu "$first,$first" --wait sleep --count 10 --size 0 >"$dir/out" 2>"$dir/err" &&
   [ ! -s "$dir/err" ] && grep -q "(cpu $first) <-> board 1 (cpu $first)" "$dir/out"; then
	ok "--cpu $first,$first in sleep mode: runs, no warning"
else bad "--cpu $first,$first sleep"; cat "$dir/out" "$dir/err" | sed 's/^/    /'; fi
if "$smqctl" pingpong --cpu "$first,$first" --force --json --count 5 --size 0 >"$dir/f.json" 2>"$dir/err" &&
   grep -q "^smqctl: warning: both sides busy-poll on CPU $first" "$dir/err" &&
   check_json "$dir/f.json" pingpong 0 5 2>>"$dir/err"; then
	ok "--cpu $first,$first --force: a warning, then the measurement"
else bad "--cpu $first,$first --force"; sed 's/^/    /' "$dir/err"; fi
if command -v taskset >/dev/null; then
	taskset -c "$first" "$smqctl" pingpong --count 10 --size 0 >"$dir/out" 2>"$dir/err"; rc=$?
	if [ $rc = 2 ] && grep -q "busy-poll on CPU $first, the only one this process may use" "$dir/err"; then
		ok "under taskset -c $first: poll mode refused, exit 2"
	else bad "taskset -c $first pingpong: exit $rc"; sed 's/^/    /' "$dir/err"; fi
	if taskset -c "$first" "$smqctl" bench --count 100 --size 64 >"$dir/out" 2>"$dir/err" && [ ! -s "$dir/err" ]; then
		ok "under taskset -c $first: bench in spin mode runs, no warning"
	else bad "taskset -c $first bench"; sed 's/^/    /' "$dir/err"; fi
	[ "$ncpu" -ge 2 ] && {
	taskset -c "$first" "$smqctl" bench --baseline >"$dir/out" 2>"$dir/err"; rc=$?
	if [ $rc = 2 ] && grep -q "busy-poll on CPU $first" "$dir/err" && [ ! -s "$dir/out" ]; then
		ok "under taskset -c $first: bench --baseline refused, exit 2"
	else bad "taskset -c $first bench --baseline: exit $rc"; sed 's/^/    /' "$dir/err"; fi
	}
else
	echo "note: no taskset: one-CPU runs not tried"
fi

# bench --baseline on small counts: JSON that parses, every comparison a
# ratio of the figures it names, the ring's and smq's streams checked;
# UCX's rows measured when ucx_perftest is installed, else absent with why
if command -v ucx_perftest >/dev/null; then ucx=yes; else ucx=no; fi
if [ "$ncpu" -ge 2 ]; then
	if "$smqctl" --json bench --baseline --count $(n 500) >"$dir/base.json" 2>"$dir/err" &&
	   python3 - "$dir/base.json" $ucx 2>>"$dir/err" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
ucx = sys.argv[2] == "yes"
assert d["command"] == "bench" and d["baseline"] is True and d["interrupted"] is False
assert d["state_ns"] > 0, d["state_ns"]
names = {m["name"] for m in d["measurements"]}
want = ["smq poll", "smq sleep", "smq spin", "smq spin, checksums", "smq spin, bursts of 8",
        "smq spin, verified", "smq spin, zero-copy", "cache line", "futex", "ring", "mqueue",
        "unix seqpacket", "pipe", "memcpy"] + (["UCX tag_bw"] if ucx else [])
for w in want:
    assert w in names, ("no measurement", w)
assert ucx or "UCX tag_bw" not in names
for m in d["measurements"]:
    assert m["messages"] > 0 and m["seconds"] > 0, m
    assert ("median_ns" in m) == (m["name"] in ("smq poll", "smq sleep", "cache line", "futex")), m
rings = [c for c in d["comparisons"] if c["baseline"] == "two-core ring"]
assert [c["measure"] for c in rings] == ["stream 64 B", "stream 64 KiB", "stream 256 KiB", "stream 1024 KiB"], rings
ring16 = [c for c in d["comparisons"] if c["baseline"] == "two-core ring, 16 slots"]
assert [(c["measure"], c["target"]) for c in ring16] == [("16 entries, 64 B, 5 runs", None),
        ("16 entries, bursts of 8, 5 runs", 0.9)], ring16
sizes = ("64 B", "64 KiB", "1 MiB")
zc = [c for c in d["comparisons"] if c["baseline"] == "copies, same work"]
assert [(c["measure"], c["target"]) for c in zc] == [("zero-copy %s, 5 runs" % z, t)
        for z, t in zip(sizes, (None, 1.3, 1.3))], zc
u = [c for c in d["comparisons"] if c["baseline"] == "UCX tag_bw"]
assert [(c["measure"], c["target"]) for c in u] == [(k % z, t) for z in sizes
        for k, t in (("zero-copy %s, 5 runs", 1), ("copies %s, 5 runs", None))], u
for c in d["comparisons"]:
    if c["absent"] is not None:
        # only UCX may be absent, and only when it is not installed
        assert not ucx and c["baseline"] == "UCX tag_bw" and "ucx-utils" in c["absent"], c
        assert c["baseline_value"] is None and c["ratio"] is None and c["holds"] is None, c
        continue
    assert math.isclose(c["ratio"], c["smq"] / c["baseline_value"], rel_tol=2e-3, abs_tol=2e-3), c
    if c["target"] is None:
        # for information: memcpy, the 64-byte poll, the 4 KiB checked
        # stream, single calls through 16 entries, copies against UCX,
        # and loans against copies at 64 B
        assert c["holds"] is None and (c["baseline"] == "memcpy, one core" or
            c["measure"] in ("poll half RTT 64 B", "checked stream 4096 B, 5 runs",
                             "16 entries, 64 B, 5 runs", "zero-copy 64 B, 5 runs") or
            c["measure"].startswith("copies ")), c
    else:
        want = c["ratio"] <= c["target"] if c["better"] == "lower" else c["ratio"] >= c["target"]
        assert c["holds"] == want or abs(c["ratio"] - c["target"]) < 1e-5, c
    if c["baseline"] == "two-core ring":
        assert c["target"] == 0.8 and c["better"] == "higher", c
PY
	then ok "bench --baseline --json: every measurement, ratios and targets consistent (UCX installed: $ucx)"
	else bad "bench --baseline --json"; sed 's/^/    /' "$dir/err"; fi
	if "$smqctl" bench --baseline --csv --count $(n 300) >"$dir/base.csv" 2>"$dir/err" &&
	   python3 - "$dir/base.csv" $ucx 2>>"$dir/err" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows[0] == "measure,unit,smq,baseline,baseline_value,ratio,better,target,holds,absent".split(","), rows[0]
body = [dict(zip(rows[0], r)) for r in rows[1:]]
assert all(len(r) == 10 for r in rows), rows
ring = [r for r in body if r["baseline"] == "two-core ring"]
assert len(ring) == 4 and all(r["target"] == "0.80" and r["holds"] in ("true", "false") for r in ring), ring
mc = [r for r in body if r["baseline"] == "memcpy, one core"]
assert len(mc) == 3 and all(r["target"] == "" and r["holds"] == "" for r in mc), mc
u = [r for r in body if r["baseline"] == "UCX tag_bw"]
assert len(u) == 6, u
if sys.argv[2] == "yes":
    assert all(r["absent"] == "" and float(r["baseline_value"]) > 0 for r in u), u
else:
    assert all("ucx-utils" in r["absent"] and r["baseline_value"] == "" and r["ratio"] == "" for r in u), u
PY
	then ok "bench --baseline --csv: the comparisons, the ring's with a target, memcpy's without, UCX's $( [ $ucx = yes ] && echo measured || echo absent)"
	else bad "bench --baseline --csv"; cat "$dir/base.csv" "$dir/err" | sed 's/^/    /'; fi
	# without ucx_perftest (a PATH without it): UCX's rows absent, saying
	# why, in the text too
	if [ $ucx = yes ]; then
		if env PATH=/nonexistent "$smqctl" bench --baseline --count $(n 200) >"$dir/noucx.txt" 2>"$dir/err" &&
		   grep -q "^UCX rows absent: ucx_perftest is not installed (Debian: ucx-utils)$" "$dir/noucx.txt" &&
		   [ "$(grep -c '  UCX tag_bw  *absent  ' "$dir/noucx.txt")" = 6 ]; then
			ok "bench --baseline without ucx_perftest: its 6 rows absent, and why"
		else bad "bench --baseline without ucx_perftest"; cat "$dir/noucx.txt" "$dir/err" | sed 's/^/    /'; fi
	fi
else
	echo "note: one CPU: bench --baseline not tried"
fi

# Every key of every JSON output above is described in smqctl(1), in the
# block of its output, and every key described there was printed.
if python3 - man/smqctl.1 "$dir" >"$dir/keys" 2>"$dir/err" <<'PY'
import glob, json, os, sys
man, d = sys.argv[1], sys.argv[2]
blocks, cur = {}, None
for line in open(man):
    line = line.rstrip("\n")
    if line.startswith('.\\" json-keys: '):
        cur = line.split(": ", 1)[1]
        blocks[cur] = set()
    elif cur and line == ".EE":
        cur = None
    elif cur and line and not line.startswith(".") and not line[0].isspace():
        blocks[cur].add(line.split()[0])
for need in ("pingpong bench", "row", "bench --baseline"):
    assert blocks.get(need), ("no json-keys block", need)
def paths(v, pre=""):
    if isinstance(v, dict):
        for k, x in v.items():
            p = pre + k + ("[]" if isinstance(x, list) else "")
            yield p
            yield from paths(x, p + ".")
    elif isinstance(v, list):
        for x in v:
            yield from paths(x, pre)
seen = {k: set() for k in blocks}
files = sorted(glob.glob(os.path.join(d, "*.json")))
assert len(files) >= 6, files
for f in files:
    doc = json.load(open(f))
    top = "bench --baseline" if doc.get("baseline") else "pingpong bench"
    for p in paths(doc):
        for arr in ("results[].", "measurements[]."):
            if p.startswith(arr):
                block, key = "row", p[len(arr):]
                break
        else:
            block, key = top, p
        assert key in blocks[block], "%s: key %s is not described in smqctl(1) (%s)" % (os.path.basename(f), key, block)
        seen[block].add(key)
for b in blocks:
    if not seen[b]:
        print("(no output for %s)" % b, end=" ")
        continue
    missing = blocks[b] - seen[b]
    assert not missing, "described in smqctl(1) (%s) but never printed: %s" % (b, sorted(missing))
print(len(files), "JSON outputs,", sum(len(v) for v in blocks.values()), "keys described")
PY
then ok "JSON keys: all described in smqctl(1), all described ones printed ($(cat "$dir/keys"))"
else bad "JSON keys and smqctl(1)"; sed 's/^/    /' "$dir/err"; fi

# Ctrl-C: what was measured is printed, and the exit status says interrupted
"$smqctl" pingpong $F --duration 30 --size 0 >"$dir/int.txt" 2>"$dir/err" &
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
