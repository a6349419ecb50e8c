#!/usr/bin/env python3
"""Helpers of tests/cli/t_metrics.sh: a parser of the Prometheus text format,
the comparison with `smqctl --json dump`, HTTP requests, the hostile
clients of the endpoint, and a reader that watches a textfile being
replaced.  Each subcommand prints what is wrong and exits 1, or exits 0.

  port                          a free TCP port on 127.0.0.1
  get PORT PATH [TIMEOUT]       GET http://127.0.0.1:PORT/PATH, the body on
                                stdout (exit 1 unless 200)
  parse FILE                    the text parses; every family has HELP and
                                TYPE before its samples
  compare DUMP.json FILE        the counters and states equal dump's
  value FILE NAME [K=V...]      the value of the one sample that matches
  only-up FILE VALUE            smq_up is VALUE and no other smq_ sample
  abuse PORT                    hostile clients, then a good scrape
  watch FILE SECONDS TYPES      read FILE again and again: always whole
                                (TYPES TYPE lines), replaced by rename
  prom-query PORT QUERY         a Prometheus server's instant query: the
                                value of its one result, or exit 1
"""
import json
import os
import re
import resource
import select
import socket
import sys
import time
import urllib.request

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)')


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


# Under valgrind (lib.sh's slow factor) the endpoint answers several times
# slower: the bounds below stop a hang, they time nothing.
SLOW = float(os.environ.get("SMQ_TEST_SLOW", "1"))


def unescape(v):
    return re.sub(r'\\(.)', lambda m: '\n' if m.group(1) == 'n'
                  else m.group(1), v)


def parse_labels(text, line):
    labels, pos = {}, 0
    while pos < len(text):
        m = LABEL.match(text, pos)
        if not m:
            fail("bad labels in: " + line)
        labels[m.group(1)] = unescape(m.group(2))
        pos = m.end()
    return labels


def parse(text):
    """[(name, labels, value)], checking HELP and TYPE of each family."""
    samples, helped, typed = [], set(), {}
    if text and not text.endswith('\n'):
        fail("the text does not end with a newline")
    for line in text.splitlines():
        if line.startswith('# HELP '):
            helped.add(line.split()[2])
            continue
        if line.startswith('# TYPE '):
            parts = line.split()
            if len(parts) != 4:
                fail("bad TYPE line: " + line)
            typed[parts[2]] = parts[3]
            continue
        if not line or line.startswith('#'):
            continue
        m = SAMPLE.match(line)
        if not m:
            fail("not a sample: " + line)
        name = m.group(1)
        base = re.sub(r'_(sum|count|bucket)$', '', name)
        if typed.get(base) in ('summary', 'histogram'):
            name = base  # a summary's or a histogram's series
        if name not in helped or name not in typed:
            fail("%s has no HELP or no TYPE before its samples" % name)
        if typed[name] == 'counter' and not name.endswith('_total'):
            fail("counter %s does not end in _total" % name)
        samples.append((m.group(1), parse_labels(m.group(2) or '', line),
                        float(m.group(3))))
    return samples


def find(samples, name, **want):
    got = [s for s in samples if s[0] == name and
           all(s[1].get(k) == v for k, v in want.items())]
    return got


def one(samples, name, **want):
    got = find(samples, name, **want)
    if len(got) != 1:
        fail("%d samples of %s%s, expected 1" % (len(got), name, want))
    return got[0][2]


QUEUE_FIELDS = [
    ("sent", "smq_queue_sent_messages_total"),
    ("bytes_sent", "smq_queue_sent_bytes_total"),
    ("received", "smq_queue_received_messages_total"),
    ("bytes_received", "smq_queue_received_bytes_total"),
    ("doorbells", "smq_queue_doorbells_total"),
    ("full_waits", "smq_queue_full_waits_total"),
    ("sleeps", "smq_queue_receiver_sleeps_total"),
    ("wakeups", "smq_queue_receiver_wakeups_total"),
    ("fill", "smq_queue_fill_messages"),
    ("queued", "smq_queue_queued_messages"),
    ("capacity", "smq_queue_capacity_messages"),
]


def compare(dump, samples):
    bad = []

    def same(what, want, got):
        if float(want) != got:
            bad.append("%s: dump says %s, metrics %s" % (what, want, got))
    same("smq_up", 1, one(samples, "smq_up"))
    same("generation", dump["generation"],
         one(samples, "smq_window_generation"))
    same("format version", dump["version"],
         one(samples, "smq_window_format_version"))
    same("system state " + dump["system_state"], 1,
         one(samples, "smq_window_system_state", state=dump["system_state"]))
    for b in dump["board_table"]:
        n = str(b["board"])
        same("board %s state %s" % (n, b["state"]), 1,
             one(samples, "smq_board_state", board=n, state=b["state"]))
        same("board %s generation" % n, b["generation"],
             one(samples, "smq_board_generation", board=n))
        same("board %s heartbeats" % n, b["heartbeat"],
             one(samples, "smq_board_heartbeats_total", board=n))
        if b["alive"] != "unknown":
            same("board %s alive" % n, 1 if b["alive"] == "yes" else 0,
                 one(samples, "smq_board_alive", board=n))
    for q in dump["queue_table"]:
        n = str(q["queue"])
        kind = "diagnostic" if q["diagnostic"] else "application"
        for field, name in QUEUE_FIELDS:
            same("queue %s %s" % (n, field), q[field],
                 one(samples, name, queue=n, receiver=str(q["receiver"]),
                     kind=kind))
    nq = len(dump["queue_table"])
    got = len(find(samples, "smq_queue_sent_messages_total"))
    if got != nq:
        bad.append("%d queues in metrics, %d in dump" % (got, nq))
    if bad:
        fail("metrics and dump disagree:\n    " + "\n    ".join(bad))


def http(port, path, timeout=5.0 * SLOW):
    url = "http://127.0.0.1:%d%s" % (port, path)
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode()


def raw(port, data, timeout=5.0 * SLOW):
    """Sends data, returns what came back until the server closed."""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except OSError as e:
        fail("cannot connect to port %d: %s" % (port, e))
    try:
        s.sendall(data)
    except OSError:
        pass  # the server may close while a large request is sent
    out = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
            if b"\r\n\r\n" in out and not data.startswith(b"GET"):
                break
    except OSError:
        pass
    s.close()
    return out


def status_of(reply):
    m = re.match(rb'HTTP/1\.[01] (\d{3})', reply)
    return int(m.group(1)) if m else None


def flood(port, n, deadline):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, n + 64) if hard != resource.RLIM_INFINITY else n + 64
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            continue
        socks.append(s)
    req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
    pending = list(socks)
    while pending and time.monotonic() < deadline:
        _, w, _ = select.select([], pending[:500], [], 0.5)
        for s in w:
            try:
                s.send(req)
            except OSError:
                pass
            pending.remove(s)
    answered = 0
    for s in socks:
        try:
            s.setblocking(True)
            s.settimeout(max(0.01, min(0.05, deadline - time.monotonic())))
            if s.recv(16).startswith(b"HTTP/1.1 200"):
                answered += 1
        except OSError:
            pass
        s.close()
    return len(socks), answered


def abuse(port):
    t0 = time.monotonic()
    # a client that sends half a request line and stalls, kept open
    stall = socket.create_connection(("127.0.0.1", port), timeout=5 * SLOW)
    stall.sendall(b"GET /metr")
    # a header of 100 KiB
    big = (b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 102400 +
           b"\r\n\r\n")
    st = status_of(raw(port, big))
    if st is not None and st < 400:
        fail("a request with a 100 KiB header was answered %s" % st)
    print("ok   100 KiB header: %s" % (st or "connection closed"))
    for method in ("POST", "PUT", "DELETE", "PATCH", "BREW"):
        body = b"x=1" if method in ("POST", "PUT", "PATCH") else b""
        req = (b"%s /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n"
               b"Connection: close\r\n\r\n%s" % (method.encode(), len(body),
                                                 body))
        st = status_of(raw(port, req))
        if st not in (400, 405):
            fail("%s /metrics was answered %s, not 405 or 400" % (method, st))
    print("ok   POST, PUT, DELETE, PATCH, BREW: 405 or 400")
    st = status_of(raw(port, b"\x16\x03\x01garbage\r\n\r\n"))
    print("ok   garbage: %s" % (st or "connection closed"))
    n, answered = flood(port, 1000, time.monotonic() + 15 * SLOW)
    print("ok   %d connections at once (%d answered 200)" % (n, answered))
    # the stalled client is still there; the next scrape is served
    status, body = http(port, "/metrics", 10 * SLOW)
    if status != 200 or "smq_up" not in body:
        fail("the scrape after the abuse: status %s" % status)
    stall.close()
    print("ok   a scrape after them: 200 (%.1fs in all)" %
          (time.monotonic() - t0))
    sys.stdout.write(body)


def watch(path, seconds, types):
    """Reads path until seconds pass: each read is a whole exposition."""
    deadline = time.monotonic() + seconds
    reads, inodes = 0, set()
    while time.monotonic() < deadline:
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            continue
        inodes.add(os.fstat(fd).st_ino)
        data = b""
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
        os.close(fd)
        text = data.decode()
        n = sum(1 for ln in text.splitlines() if ln.startswith("# TYPE "))
        if n != types or not text.endswith("\n"):
            fail("read %d: a partial file (%d TYPE lines of %d, %d bytes)"
                 % (reads + 1, n, types, len(data)))
        parse(text)
        reads += 1
    if len(inodes) < 2:
        fail("the file kept its inode over %d reads: rewritten in place, "
             "not replaced" % reads)
    print("ok   %d reads, each whole; %d files renamed in turn"
          % (reads, len(inodes)))


def prom_query(port, query):
    url = "/api/v1/query?query=" + urllib.request.quote(query)
    try:
        status, body = http(port, url, 3)
    except OSError:
        sys.exit(1)
    res = json.loads(body)
    if res.get("status") != "success" or len(res["data"]["result"]) != 1:
        sys.exit(1)
    print(res["data"]["result"][0]["value"][1])


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "port":
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        print(s.getsockname()[1])
        s.close()
    elif cmd == "get":
        timeout = float(args[2]) if len(args) > 2 else 5.0
        try:
            status, body = http(int(args[0]), args[1], timeout)
        except OSError as e:
            fail("GET %s: %s" % (args[1], e))
        sys.stdout.write(body)
        sys.exit(0 if status == 200 else 1)
    elif cmd == "parse":
        parse(open(args[0]).read())
    elif cmd == "compare":
        compare(json.load(open(args[0])), parse(open(args[1]).read()))
    elif cmd == "value":
        want = dict(a.split("=", 1) for a in args[2:])
        print("%g" % one(parse(open(args[0]).read()), args[1], **want))
    elif cmd == "only-up":
        samples = parse(open(args[0]).read())
        if one(samples, "smq_up") != float(args[1]):
            fail("smq_up is not %s" % args[1])
        other = [s[0] for s in samples if s[0] != "smq_up"]
        if float(args[1]) == 0 and other:
            fail("smq_up 0, and yet: %s" % ", ".join(sorted(set(other))))
    elif cmd == "abuse":
        abuse(int(args[0]))
    elif cmd == "watch":
        watch(args[0], float(args[1]), int(args[2]))
    elif cmd == "prom-query":
        prom_query(int(args[0]), args[1])
    else:
        fail("no subcommand " + cmd)


if __name__ == "__main__":
    main()
