"""The JSON keys smqctl(1) describes, and the keys a JSON document holds:
for the scripts that check that every key smqctl prints is described in
its page and every key described is printed (tests/cli/t_measure.sh,
tests/cli/t_events.sh, tests/docs/t_json_docs.sh).  They import it with
PYTHONPATH=tests/lib."""

import glob
import os


def pages(man):
    """MAN and the pages of its commands beside it: for man/smqctl.1,
    man/smqctl-*.1 too, where each command's JSON OUTPUT is."""
    d, f = os.path.split(man)
    stem, dot, sect = f.rpartition(".")
    return [man] + sorted(glob.glob(os.path.join(d, stem + "-*" + dot + sect)))


def blocks(man):
    """{BLOCK: set of keys} of the page MAN and its command pages: a line
    '.\\" json-keys: BLOCK' begins a block, whose keys begin its lines
    (after macros and indented lines are left out) up to .EE."""
    found, cur = {}, None
    for line in (l for p in pages(man) for l in open(p)):
        line = line.rstrip("\n")
        if line.startswith('.\\" json-keys: '):
            cur = line.split(": ", 1)[1]
            found[cur] = set()
        elif cur and line == ".EE":
            cur = None
        elif cur and line and not line.startswith(".") and not line[0].isspace():
            found[cur].add(line.split()[0])
    return found


def paths(v, pre=""):
    """The paths of the keys of a JSON value: KEY, KEY.KEY, and KEY[] for a
    list (KEY[].KEY inside its objects)."""
    if isinstance(v, dict):
        for k, x in v.items():
            p = pre + k + ("[]" if isinstance(x, list) else "")
            yield p
            yield from paths(x, p + ".")
    elif isinstance(v, list):
        for x in v:
            yield from paths(x, pre)
