#!/usr/bin/env python3
"""The errors smq.h's comments give each call, against the ERRORS section
of that call's page (tests/docs/t_errors.sh).

A comment of smq.h covers the prototypes that follow it up to the next
comment.  An error it names (-EXXX, -SMQ_EXXX) is the call's that the
sentence names before it; else the one it names after it; else the one an
earlier sentence of the comment named last; else the first call the
comment covers.  An error that is what other calls meet ("monitors see
-EIDRM") is no call's.  The call's page (man/NAME.3, or the page its .so
line names) must list it under ERRORS, in an entry for every call of the
page or one that names the call ("smq_group_info():").

Prints a line "FAIL ..." per disagreement and a last line
"compared N disagree M"; exit 0.
"""
import re, sys, os
hdr = open("include/smq.h").read()
lines = hdr.split('\n')
# 1. comment blocks and the prototypes each covers
blocks = []   # (comment text, [calls])
i = 0
cur = None
proto_re = re.compile(r'^[a-z].*?\b(smq_[a-z0-9_]+)\(')
while i < len(lines):
    l = lines[i]
    if l.startswith('/*'):
        text = [l]
        while '*/' not in lines[i]:
            i += 1; text.append(lines[i])
        cur = (' '.join(t.strip(' */') for t in text), [])
        blocks.append(cur)
    else:
        m = proto_re.match(l)
        if m and cur is not None and not l.startswith('struct') and not l.startswith('enum'):
            cur[1].append(m.group(1))
        elif m and cur is None:
            pass
    i += 1
# smq_transient() names the codes it judges; it returns none of them
SKIP = {'smq_transient'}
err_re = re.compile(r'-((?:SMQ_)?E[A-Z0-9]+)\b')
claims = {}  # call -> set(errors)
# Words before an error that make it what other calls meet, not what the
# call the comment is about returns ("boards attached under the old
# generation get -ESTALE", "monitors see -EIDRM", "every call on it ...
# is -EBADF", "other sends on the handle return -EINPROGRESS";
# smq_holdout's "After -SMQ_EHELD ...").
OTHERS = re.compile(r'\b(get|see|told|every call|other sends)\b|^After\b')
for text, calls in blocks:
    if not calls or calls[0] in SKIP: continue
    last = calls[0]   # the block's subject until it names another
    for sent in re.split(r'(?<=[.;])\s+', text):
        named = [c for c in re.findall(r'\b(smq_[a-z0-9_]+)\(\)', sent) if c in calls]
        for m in err_re.finditer(sent):
            if OTHERS.search(sent[:m.start()]):
                continue
            before = [c for c in re.findall(r'\b(smq_[a-z0-9_]+)\(\)', sent[:m.start()]) if c in calls]
            targets = before[-1:] if before else (named or [last])
            for c in targets:
                claims.setdefault(c, set()).add(m.group(1))
        if named:
            last = named[-1]
# 2. the pages' ERRORS entries
def page_of(c):
    p = 'man/%s.3' % c
    if not os.path.exists(p): return None
    s = open(p).read()
    m = re.match(r'\.so man3/(\S+)\n?$', s)
    return 'man/' + m.group(1) if m else p
def errors_section(p):
    s = open(p).read()
    m = re.search(r'^\.SH ERRORS\n(.*?)(?=^\.SH )', s, re.S | re.M)
    if not m: return None
    entries = {}
    for ent in re.split(r'^\.TP\n', m.group(1), flags=re.M)[1:]:
        head, _, body = ent.partition('\n')
        names = re.findall(r'\b((?:SMQ_)?E[A-Z0-9]+)\b', head)
        first = body.lstrip().split('\n', 1)[0] if body.strip() else ''
        if re.match(r'\.B[R]? smq_[a-z0-9_]+ \(\)', first):
            scope = set(re.findall(r'\.B[RI]? (smq_[a-z0-9_]+) \(\)', body))
        else:
            scope = None   # every call of the page
        for n in names:
            prev = entries.get(n, set())
            entries[n] = None if (scope is None or prev is None) else prev | scope
    return entries
bad = 0; n = 0
for c in sorted(claims):
    p = page_of(c)
    if p is None:
        print('FAIL %s: no page' % c); bad += 1; continue
    ents = errors_section(p)
    if ents is None:
        print('FAIL %s: %s has no ERRORS section' % (c, p)); bad += 1; continue
    for e in sorted(claims[c]):
        n += 1
        if e not in ents:
            print('FAIL smq.h says %s returns -%s; %s ERRORS does not list %s' % (c, e, p, e)); bad += 1
        elif ents[e] is not None and c not in ents[e]:
            print('FAIL smq.h says %s returns -%s; %s ERRORS gives %s only for %s' % (c, e, p, e, ', '.join(sorted(ents[e])))); bad += 1
print('compared %d disagree %d' % (n, bad))
