#!/usr/bin/env python3
"""One Python process for tests/docs/t_smq7_reader.sh: it runs the
script's Python requests (the reader, poke, its one-liners) without
starting an interpreter and importing smq7_reader.py for each.

  smq7_serve.py REQUESTS REPLIES READY SECONDS

REQUESTS and REPLIES are FIFOs.  The server opens both (read and write:
neither open waits), then makes the file READY.  A request is its count
of words, then the words, each ended by a NUL (printf '%s\\0' "$#" "$@"):

  OUT ERR IN reader ARG...   as `smq7_reader.py ARG...`
  OUT ERR IN py CODE ARG...  as `python3 -c CODE ARG...`

OUT and ERR are the files of its standard output and error ("": the
server's own, the script's), IN of its standard input ("": /dev/null).
Each request runs at once, in a child forked for it from a server that
has only imported smq7_reader: nothing a request does (the windows it
read, the reader's module state, an exception, an exit) stays for the
next.  A child still running after SECONDS is killed by its alarm.  The
reply is a line, the request's exit status as the shell gives it (128 +
the signal that ended it).  The server ends when its parent does; when
it ends, REPLIES has no writer left: the script reads an end of file.
"""
import os
import select
import signal
import sys
import traceback

import smq7_reader  # imported once: each child has it as imported


def run(kind, args):
    """What the request exits with, as Python would."""
    if kind == "reader":
        sys.argv = [smq7_reader.__file__] + args
        return smq7_reader.main(args)
    if kind == "py" and args:
        sys.argv = ["-c"] + args[1:]
        exec(compile(args[0], "<string>", "exec"), {"__name__": "__main__"})
        return 0
    sys.stderr.write("smq7_serve: no request %r\n" % kind)
    return 2


def child(fds, timeout, out, err, inp, kind, args):
    for fd in fds:
        os.close(fd)
    signal.alarm(timeout)
    os.dup2(os.open(inp or os.devnull, os.O_RDONLY), 0)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    if out:
        os.dup2(os.open(out, flags, 0o644), 1)
    if err == out and out:
        os.dup2(1, 2)
    elif err:
        os.dup2(os.open(err, flags, 0o644), 2)
    try:
        rc = run(kind, args)
    except SystemExit as e:
        rc = e.code
    except BaseException:
        traceback.print_exc()
        rc = 1
    if rc is None:
        rc = 0
    elif not isinstance(rc, int):
        print(rc, file=sys.stderr)
        rc = 1
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass
    os._exit(rc & 0xff)


def serve(req_path, rep_path, ready, timeout):
    req = os.open(req_path, os.O_RDWR)
    rep = os.open(rep_path, os.O_RDWR)
    parent = os.getppid()
    open(ready, "w").close()
    buf = b""
    while True:
        words = buf.split(b"\0")
        n = int(words[0]) if len(words) > 1 else -1
        if 0 <= n < len(words) - 1:     # its count and n words, all ended
            req_words = [os.fsdecode(w) for w in words[1:n + 1]]
            buf = b"\0".join(words[n + 1:])
        else:
            # a request, or the parent gone (then no more come)
            if not select.select([req], [], [], 1.0)[0]:
                if os.getppid() != parent:
                    return 0
                continue
            data = os.read(req, 65536)
            if not data:
                return 0
            buf += data
            continue
        out, err, inp, kind = (req_words + [""] * 4)[:4]
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            child((req, rep), timeout, out, err, inp, kind, req_words[4:])
        status = os.waitpid(pid, 0)[1]
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            said = "ran past %d s: killed" % timeout \
                if sig == signal.SIGALRM else "ended by signal %d" % sig
            said = "smq7_serve: the request %s %s %s\n" % (
                kind, (req_words[4:5] or [""])[0][:60], said)
            if err:
                with open(err, "a") as f:
                    f.write(said)
            else:
                sys.stderr.write(said)
                sys.stderr.flush()
            rc = 128 + sig
        else:
            rc = os.WEXITSTATUS(status)
        os.write(rep, b"%d\n" % rc)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    sys.exit(serve(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])))
