#!/usr/bin/env python3
"""Checks of tests/qemu/t_qemu.sh on smqctl's JSON output.

  check.py pingpong FILE COUNT SIZE,...   every size ran COUNT round trips
  check.py dump HOST_DUMP [GUEST_DUMP] MIN board 1 ready and its lanes sent
                                          at least MIN messages; the guest's
                                          view of the window agrees
  check.py probe FILE                     1af4:1110 with a 1 MiB 64-bit
                                          prefetchable BAR 2 fit for a window

Prints a line per finding; exit 0 when all hold, 1 otherwise.
"""
import json
import sys

failed = False


def ok(msg):
    print("ok   " + msg)


def fail(msg):
    global failed
    print("FAIL " + msg)
    failed = True


def load(path, what):
    """The first JSON document of the file (text before it is skipped)."""
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        fail("%s: %s" % (what, e))
        return None
    start = min([i for i in (text.find("{"), text.find("[")) if i >= 0],
                default=-1)
    if start < 0:
        fail("%s: no JSON in %s" % (what, path))
        return None
    try:
        doc, _ = json.JSONDecoder().raw_decode(text[start:])
        return doc
    except ValueError as e:
        fail("%s: bad JSON (%s)" % (what, e))
        return None


def pingpong(path, count, sizes):
    doc = load(path, "host pingpong")
    if doc is None:
        return
    results = doc.get("results", []) if isinstance(doc, dict) else []
    by_size = {}
    for r in results:
        by_size[r.get("size")] = r
    for size in sizes:
        r = by_size.get(size)
        if r is None:
            fail("host pingpong: no result for %d bytes" % size)
        elif r.get("messages") != count:
            fail("host pingpong: %d bytes: %s round trips, not %d"
                 % (size, r.get("messages"), count))
        else:
            ok("host pingpong: %d bytes: %d round trips, %.0f msgs/s per "
               "direction, median half round trip %.1f us"
               % (size, count, r.get("msgs_per_s", 0),
                  r.get("half_rtt_ns", {}).get("median", 0) / 1e3))


def lanes_from(doc, sender):
    """{queue: messages} of sender's lanes; total."""
    out = {}
    for q in doc.get("queue_table", []):
        for lane in q.get("lanes", []):
            if lane.get("sender") == sender:
                out[q.get("queue")] = lane.get("messages", 0)
    return out, sum(out.values())


def dump(host_path, guest_path, least):
    host = load(host_path, "host dump")
    if host is None:
        return
    boards = {b.get("board"): b for b in host.get("board_table", [])}
    for b in (0, 1):
        st = boards.get(b, {}).get("state")
        if st == "ready":
            ok("host dump: board %d ready" % b)
        else:
            fail("host dump: board %d is %s, not ready" % (b, st))
    h1 = boards.get(1, {}).get("host")
    if h1 == "smq-guest":
        ok("host dump: board 1 runs on host 'smq-guest' (the QEMU guest)")
    else:
        fail("host dump: board 1's host is %r, not 'smq-guest'" % h1)
    lanes, total = lanes_from(host, 1)
    if not lanes:
        fail("host dump: no lanes of board 1 (dump -v lists them)")
    elif total >= least:
        ok("host dump: board 1 sent %d messages (%s)" % (total, ", ".join(
            "queue %s: %s" % kv for kv in sorted(lanes.items()))))
    else:
        fail("host dump: board 1 sent %d messages, fewer than %d"
             % (total, least))
    if not guest_path:
        return
    guest = load(guest_path, "guest dump")
    if guest is None:
        return
    for key in ("generation", "boards", "queues", "entries", "entry_size",
                "window_size"):
        if host.get(key) != guest.get(key):
            fail("guest and host dumps differ in %s: %r and %r"
                 % (key, guest.get(key), host.get(key)))
    gboards = {b.get("board"): b for b in guest.get("board_table", [])}
    for b in (0, 1):
        for key in ("state", "generation", "host", "pid"):
            if boards.get(b, {}).get(key) != gboards.get(b, {}).get(key):
                fail("board %d: the guest sees %s %r, the host %r"
                     % (b, key, gboards.get(b, {}).get(key),
                        boards.get(b, {}).get(key)))
    diffs = 0
    hq = {q.get("queue"): q for q in host.get("queue_table", [])}
    for q in guest.get("queue_table", []):
        h = hq.get(q.get("queue"), {})
        for key in ("receiver", "top", "bottom", "sent", "bytes_sent",
                    "received", "bytes_received"):
            if q.get(key) != h.get(key):
                diffs += 1
                fail("queue %s: the guest sees %s %r, the host %r"
                     % (q.get("queue"), key, q.get(key), h.get(key)))
        hl = {l.get("sender"): l for l in h.get("lanes", [])}
        for lane in q.get("lanes", []):
            other = hl.get(lane.get("sender"), {})
            for key in ("top", "bottom", "messages", "bytes"):
                if lane.get(key) != other.get(key):
                    diffs += 1
                    fail("queue %s, lane of board %s: the guest sees %s %r, "
                         "the host %r" % (q.get("queue"), lane.get("sender"),
                                          key, lane.get(key), other.get(key)))
    if not diffs and len(guest.get("queue_table", [])) == len(hq):
        ok("guest dump: the guest sees the same boards, queues and lane "
           "counters as the host")


def as_int(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        try:
            return int(v, 16) if v.lower().startswith("0x") else int(v, 0)
        except ValueError:
            try:
                return int(v, 16)
            except ValueError:
                return None
    return None


def is_id(v, want):
    """v names the 16-bit id want: 0x1af4, "1af4", "0x1af4" or 6900."""
    if isinstance(v, str):
        try:
            return int(v, 16) == want
        except ValueError:
            return False
    return as_int(v) == want


def walk(doc):
    if isinstance(doc, dict):
        yield doc
        for v in doc.values():
            yield from walk(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from walk(v)


def truthy(d, *keys):
    for k in keys:
        if k in d:
            return d[k] is True or d[k] in ("yes", "true", 1)
    return None


def probe(path):
    doc = load(path, "guest probe")
    if doc is None:
        return
    devs = [d for d in walk(doc)
            if is_id(d.get("vendor", d.get("vendor_id")), 0x1af4)
            and is_id(d.get("device", d.get("device_id")), 0x1110)]
    if not devs:
        fail("guest probe: no device 1af4:1110 in its output")
        return
    ok("guest probe: found 1af4:1110 at %s" % ", ".join(
        str(d.get("slot", d.get("bdf", d.get("address", "?")))) for d in devs))
    bars = []
    for d in devs:
        for b in d.get("bars", d.get("resources", [])):
            if isinstance(b, dict) and as_int(b.get("index", b.get("bar"))) == 2:
                bars.append(b)
    if not bars:
        fail("guest probe: the device has no BAR 2 in its output")
        return
    b = bars[0]
    size = as_int(b.get("size", b.get("size_bytes")))
    if size == 1 << 20:
        ok("guest probe: BAR 2 is 1 MiB")
    else:
        fail("guest probe: BAR 2's size is %r, not 1 MiB" % size)
    is64 = truthy(b, "is64", "64bit", "64_bit", "mem64")
    if is64 is None and "bits" in b:
        is64 = as_int(b["bits"]) == 64
    if is64 is None and "type" in b:
        is64 = "64" in str(b["type"])
    for what, val in (("64-bit", is64),
                      ("prefetchable", truthy(b, "prefetch", "prefetchable")),
                      ("fit for a window", truthy(b, "window_ok"))):
        if val:
            ok("guest probe: BAR 2 is %s" % what)
        else:
            fail("guest probe: BAR 2 is not %s: %s" % (what, json.dumps(b)))


def main(argv):
    if len(argv) >= 5 and argv[1] == "pingpong":
        pingpong(argv[2], int(argv[3]), [int(s) for s in argv[4].split(",")])
    elif len(argv) in (4, 5) and argv[1] == "dump":
        dump(argv[2], argv[3] if len(argv) == 5 else None, int(argv[-1]))
    elif len(argv) == 3 and argv[1] == "probe":
        probe(argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
