#!/bin/sh
# No call loop between the files of cli/measure/: each file's calls reach
# only files below it.  A file's calls are read from its object (nm: the
# names it needs, and which object defines each) and from its text for the
# inline functions of the module's headers; a header and its .c are one
# file.  Every loop found is named, with the calls that make it.
. "$(dirname "$0")/../lib/lib.sh"
need_command python3 "the call graph is read with it"
need_command nm "the calls are read from the objects"
set -- "$B"/cli/measure/*.o
[ -e "$1" ] || skip "no objects of cli/measure in $B: make first"

if python3 - cli/measure "$B/cli/measure" >"$T/out" 2>&1 <<'PY'
import glob, os, re, subprocess, sys
src, obj = sys.argv[1], sys.argv[2]
room = lambda p: os.path.splitext(os.path.basename(p))[0]
defs, needs = {}, {}
for o in sorted(glob.glob(os.path.join(obj, "*.o"))):
    r = room(o)
    out = subprocess.run(["nm", o], capture_output=True, text=True,
                         check=True).stdout
    needs[r] = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            needs[r].add(f[1])
        elif len(f) == 3 and f[1] in "TDRB":
            defs[f[2]] = r
calls = {r: {} for r in needs}
for r, names in needs.items():
    for n in names:
        if n in defs and defs[n] != r:
            calls[r].setdefault(defs[n], set()).add(n)
# the inline functions of the headers, by the header's room
inl = {}
for h in glob.glob(os.path.join(src, "*.h")):
    for m in re.finditer(r"static inline [^;{(]*?\b(\w+)\(", open(h).read()):
        inl[m.group(1)] = room(h)
for c in glob.glob(os.path.join(src, "*.c")):
    r, text = room(c), open(c).read()
    for n, h in inl.items():
        if h != r and re.search(r"\b%s\(" % n, text):
            calls.setdefault(r, {}).setdefault(h, set()).add(n)
loops, seen = [], set()
def walk(r, path):
    for t in sorted(calls.get(r, {})):
        if t in path:
            cyc = path[path.index(t):]
            key = frozenset(cyc)
            if key not in seen:
                seen.add(key)
                loops.append(cyc + [t])
        else:
            walk(t, path + [t])
for r in sorted(calls):
    walk(r, [r])
for cyc in loops:
    print("loop: " + " -> ".join(
        "%s (%s)" % (a, ", ".join(sorted(calls[a][b])))
        for a, b in zip(cyc, cyc[1:])) + " -> " + cyc[-1])
print("%d files, %d calls between them" %
      (len(calls), sum(len(v) for v in calls.values())))
sys.exit(1 if loops else 0)
PY
then ok "cli/measure: no call loop ($(tail -n 1 "$T/out"))"
else failed "cli/measure: call loops"; sed 's/^/    /' "$T/out"; fi
finish 1
