#!/bin/sh
# smq-bench, the project's benchmark program (bench/, never installed):
# smq beside other products on small counts.  Its JSON parses and names
# itself; smq's 64-byte stream is compared with a POSIX message queue, a
# Unix socket and a pipe, each row's figures those of the measurements it
# names and its ratio their quotient;
# smq's copies and loans at 64 B, 64 KiB and 1 MiB with UCX's tag_bw when
# ucx_perftest is installed, and without it the six UCX rows are absent,
# saying why, in JSON, CSV and text; the text ends with the targets.  Bad
# options are refused (exit 2, the option named, nothing on stdout).
# smqctl bench --baseline measures none of these (t_measure.sh).
. "$(dirname "$0")/../lib/lib.sh"
need_command python3 "the JSON checks need it"
P=$B/smq-bench
[ -x "$P" ] || die "$P is not built (make tests builds it)"
ncpu=$(python3 -c 'import os; print(len(os.sched_getaffinity(0)))')
if command -v ucx_perftest >/dev/null; then ucx=yes; else ucx=no; fi
some=0

# bad input: refused before anything is measured
for bad in "--count 0" "--count x" "--cpu 0" "--cpu 0,x" "--json --csv" "extra"; do
	"$P" $bad >"$T/out" 2>"$T/err"; rc=$?
	opt=${bad%% *}
	if [ $rc = 2 ] && [ ! -s "$T/out" ] && grep -q -- "$opt" "$T/err"; then
		ok "smq-bench $bad: refused, exit 2, said"
	else failed "smq-bench $bad: exit $rc"; cat "$T/out" "$T/err" | sed 's/^/    /'; fi
done

if [ "$ncpu" -ge 2 ]; then
	some=3
	if "$P" --json --count 300 >"$T/p.json" 2>"$T/err" &&
	   python3 - "$T/p.json" $ucx 2>>"$T/err" <<'PY'
import json, math, re, sys
d = json.load(open(sys.argv[1]))
ucx = sys.argv[2] == "yes"
assert d["command"] == "smq-bench" and d["interrupted"] is False, d["command"]
names = {m["name"] for m in d["measurements"]}
for w in ["smq spin", "mqueue", "unix seqpacket", "pipe", "smq poll, verified",
          "smq poll, zero-copy"] + (["UCX tag_bw"] if ucx else []):
    assert w in names, ("no measurement", w)
for m in d["measurements"]:
    assert m["messages"] > 0 and m["seconds"] > 0, m
c = d["comparisons"]
streams = [(r["measure"], r["baseline"], r["target"]) for r in c[:3]]
assert streams == [("stream 64 B", "POSIX mqueue", 10), ("stream 64 B", "Unix socket", 5),
                   ("stream 64 B", "pipe", 1)], streams
# each row's figures are those of the measurements it names
by = {m["name"]: m for m in d["measurements"]}
for r, name in zip(c[:3], ("mqueue", "unix seqpacket", "pipe")):
    assert math.isclose(r["baseline_value"], by[name]["msgs_per_s"], rel_tol=1e-3), (r, by[name])
    assert math.isclose(r["smq"], by["smq spin"]["msgs_per_s"], rel_tol=1e-3), (r, by["smq spin"])
want = [("%s %s, 5 runs" % (k, z), t) for z in ("64 B", "64 KiB", "1 MiB")
        for k, t in (("zero-copy", 1), ("copies", None))]
assert [(r["measure"], r["target"]) for r in c[3:]] == want, c[3:]
for r in c:
    # a spread between runs in the rows of 5 runs beside UCX, none in the
    # streams', measured once
    assert (r["spread"] is not None) == (r["absent"] is None and r["measure"].endswith(" runs")), r
    if r["absent"] is not None:
        assert not ucx and r["baseline"] == "UCX tag_bw" and "ucx-utils" in r["absent"], r
        assert r["ratio"] is None and r["holds"] is None, r
        continue
    assert r["smq"] > 0 and r["baseline_value"] > 0, r
    assert math.isclose(r["ratio"], r["smq"] / r["baseline_value"], rel_tol=2e-3, abs_tol=2e-3), r
    if r["target"] is None:
        assert r["holds"] is None, r
    else:
        assert r["holds"] == (r["ratio"] >= r["target"]) or abs(r["ratio"] - r["target"]) < 1e-5, r
PY
	then ok "smq-bench --json: every measurement, ratios and targets consistent (UCX installed: $ucx)"
	else failed "smq-bench --json"; sed 's/^/    /' "$T/err"; fi
	# without ucx_perftest (a PATH without it): UCX's rows absent and why
	if env PATH=/nonexistent "$P" --csv --count 200 >"$T/p.csv" 2>"$T/err" &&
	   python3 - "$T/p.csv" 2>>"$T/err" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
assert rows[0] == "measure,unit,smq,baseline,baseline_value,ratio,better,target,holds,absent,spread".split(","), rows[0]
body = [dict(zip(rows[0], r)) for r in rows[1:]]
assert [r["baseline"] for r in body[:3]] == ["POSIX mqueue", "Unix socket", "pipe"], body[:3]
u = body[3:]
assert len(u) == 6 and all(r["baseline"] == "UCX tag_bw" and "ucx-utils" in r["absent"]
                           and r["ratio"] == "" and r["spread"] == "" for r in u), u
PY
	then ok "smq-bench --csv without ucx_perftest: the streams' rows, UCX's 6 absent"
	else failed "smq-bench --csv without ucx_perftest"; cat "$T/p.csv" "$T/err" | sed 's/^/    /'; fi
	if env PATH=/nonexistent "$P" --count 200 >"$T/p.txt" 2>"$T/err" &&
	   grep -q "^UCX rows absent: ucx_perftest is not installed (Debian: ucx-utils)$" "$T/p.txt" &&
	   [ "$(grep -c '  UCX tag_bw  *absent  ' "$T/p.txt")" = 6 ] &&
	   grep -q "^smq-bench .*, the smq project's benchmark, " "$T/p.txt" &&
	   tail -n 1 "$T/p.txt" | grep -Eq '^(targets: all 3 held|MISSED .*)$'; then
		ok "smq-bench (text) without ucx_perftest: its 6 rows absent and why, the targets last"
	else failed "smq-bench (text) without ucx_perftest"; cat "$T/p.txt" "$T/err" | sed 's/^/    /'; fi
else
	skip_part "the measurements" "one CPU: smq-bench busy-polls on two"
fi

finish $((6 + some))
