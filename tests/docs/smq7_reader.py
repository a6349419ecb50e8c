#!/usr/bin/env python3
"""A reader of an smq window, format version 3, written from smq(7) and
smq-format(7) alone.

It decodes a window the way the pages describe it (superblock, geometry
checksum, features, queue table and sender sets, board table, control
blocks, lanes and rings, journals), makes the numbered checks of
VALIDATION with the bounds the pages give, judges boards and receivers as
"Who is at work" says, and prints what `smqctl dump -v --json` would.
tests/docs/t_smq7_reader.sh compares the two: where they differ, the pages
(or this reader) are wrong.

On a window with the feature checksum it also sums every queued entry
(Checked payloads) and lists, under each queue's "damaged", those whose
receiver would refuse them: validation does not judge a check, so dump
says nothing of them, and the comparison leaves that key out.

On a window with the feature journal it reads every board's journal as
smq-format(7) and smq(7) say a reader does (Journal, Reading a journal), and says each
entry as `smqctl --json events --since all` says it at its first look:
the boards' entries merged by generation, then board, each board's in
its order, with the keys of events' JSON (smqctl-events(1); all but time_ns and
text, which are the writer's clock and words for people).  events reads
at most 512 entries of a board at a look: on larger journals it merges
them in steps of that many, and this reader does not.

  smq7_reader.py WINDOW                 print the reader's JSON
  smq7_reader.py --compare DUMP WINDOW [FIELD]
                                        compare with dump's JSON (a file):
                                        exit 0 same, 1 different (or dump's
                                        fault not in FIELD, "" for none)
  smq7_reader.py --open WINDOW QUEUE sender|receiver BOARD
                                        what opening the queue meets before
                                        it writes (Opening a queue): "ok",
                                        or "refused FIELD ERROR VALUE LIMIT"
  smq7_reader.py --events [OPTION...] WINDOW
                                        print the journals' entries as
                                        events, one JSON object a line
  smq7_reader.py --compare-events EVENTS [OPTION...] WINDOW
                                        compare with the "source":
                                        "journal" lines of events --json
                                        (a file): exit 0 same, 1 different
  smq7_reader.py --boot-hash            this host's boot hash
  smq7_reader.py --tag PID              the tag of a process of this host
  smq7_reader.py --checksum WINDOW      store the right geometry checksum
                                        (for a test that changes geometry)

OPTIONs of the journals: --since all (the default), --since B:SEQ[,B:SEQ]
(board B from its entry SEQ, the others from their head: as events
--since); --cursor FILE (the boards a file of events --cursor names from
where it says, in the journal it names); --abandoned (say an entry found
unfinished abandoned at once, as a reader that has watched it for
SMQ_JOURNAL_ABANDON_MS does); --per-board (--compare-events: compare
each board's entries in their order, not the order of the merge, for
events that read them over several looks).

WINDOW is file:PATH or split:NAME (the objects /dev/shm/NAME.B).
"""
import json
import os
import struct
import sys
import time

# ---- smq-format(7): Conventions, LAYOUT, Fixed places ----
LINE = 64
PAGE = 4096
CTL_OFF = 4096                  # control block of b: 4096 + 4096 * b
BOARD_TABLE = 266240            # slot of b: 266240 + 128 * b
QUEUE_TABLE = 274432            # 16 bytes per queue
MAX_BOARDS = 64
SLOTS = 62                      # handle slots per control block
MAGIC = b"SMQWINDW"
VERSION = 3
M64 = (1 << 64) - 1
WINDOW_MAX = 1 << 46
GENERATION_MAX = 0xffffffff
TIMEOUT_MS = 5000               # SMQ_HEARTBEAT_TIMEOUT_MS
LOOK_MS = TIMEOUT_MS + 100      # how long dump watches what is unknown

# smq-format(7) Features: the bits this reader knows, by name
FEATURE_CHECKSUM = 0x1          # features_incompat bit 0
FEATURE_JOURNAL = 0x2           # features_incompat bit 1: Journal
FEATURE_MEMBARRIER = 0x4        # features_incompat bit 2: rx_polls
INCOMPAT_KNOWN = FEATURE_CHECKSUM | FEATURE_JOURNAL | FEATURE_MEMBARRIER
INCOMPAT_NAMES = {0: "checksum", 1: "journal", 2: "membarrier"}
FEATURE_GROUPS = 0x1            # features_compat bit 0
FEATURE_SCRATCH = 0x2           # features_compat bit 1: Scratch areas
COMPAT_NAMES = {0: "groups", 1: "scratch"}
NAME_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"
SCRATCH_SIZE = 69632            # the last bytes of body_extra
# smq-format(7) Journal
JOURNAL_MIN, JOURNAL_MAX = 16, 65536
JOURNAL_MAGIC = b"SMQJOURN"
WRITING = 1 << 63               # seq: being written
ABANDON_MS = 1000               # SMQ_JOURNAL_ABANDON_MS
NO_QUEUE = 0xffffffff


def journal_bytes(n):
    return round_up(64 + 64 * n, PAGE) if n else 0


# enum values, as the page numbers them
ACTIVITY = {0: "unknown", 1: "none", 2: "attached", 3: "working", 4: "dead"}
RECEIVER = {0: "unknown", 1: "none", 2: "waiting", 3: "away", 4: "dead"}
SYSTEM_STATE = {0: "formatting", 1: "formatted", 2: "ready"}
BOARD_STATE = {0: "absent", 1: "initialized", 2: "ready"}
BELL_KIND = {0: "none", 1: "futex", 2: "ivshmem"}
# the kinds of limit (smq-format(7) VALIDATION), as dump's JSON keys them
EXPECTED, AT_MOST, AT_LEAST, KNOWN, SUBSET, PAGES = range(6)
KIND_KEY = ["expected", "at_most", "at_least", "known", "subset_of",
            "pages_at_most"]


def u16(b, o):
    return struct.unpack_from("<H", b, o)[0]


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def u64(b, o):
    return struct.unpack_from("<Q", b, o)[0]


def round_up(x, a):
    return (x + a - 1) // a * a


def popcount(m):
    return bin(m).count("1")


# ---- smq-format(7): Checksum, Signature; smq(7): Checked payloads, Boot hashes and tags
def _crc_byte(c):
    """The register after one byte c, from c alone: the page's eight
    steps, made once per value so that a payload costs a lookup a byte."""
    for _ in range(8):
        c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c


CRC_TABLE = [_crc_byte(c) for c in range(256)]


def crc32c(data, crc=0):
    """CRC-32C of data, continued from crc (a finished CRC; 0 to begin):
    a concatenation sums as its pieces in order."""
    crc ^= 0xffffffff
    for c in data:
        crc = (crc >> 8) ^ CRC_TABLE[(crc ^ c) & 0xff]
    return crc ^ 0xffffffff


def entry_check(size, sig, payload):
    """An entry's check: its size, its signature, then its payload."""
    return crc32c(payload, crc32c(struct.pack("<IQ", size, sig)))


# the page's own examples, which this reader holds itself to
CRC_VECTORS = [
    ("123456789", crc32c(b"123456789"), 0xE3069283),
    ("hello, sequence 0 of board 1 on queue 0 under epoch 1 << 32",
     entry_check(5, 0x620202d4f1ac4610, b"hello"), 0x97a49188),
]


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return z ^ (z >> 31)


def signature(epoch, q, s, n):
    z = (n + epoch * 0x9e3779b97f4a7c15
         + ((q << 8 | s) * 0xd1b54a32d192ed03)) & M64
    return mix64(z)


def notice_check(generation, b):
    return ~signature(generation, 0xffff, b, 0x4e4f54494345) & M64


def boot_hash():
    h = 0x736d71626f6f74
    try:
        with open("/proc/sys/kernel/random/boot_id", "rb") as f:
            data = f.read()
    except OSError:
        data = b""
    if data:
        for c in data:
            if c in (0, 10):
                break
            h = mix64(h ^ c)
    else:
        real = time.clock_gettime_ns(time.CLOCK_REALTIME)
        mono = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        h = mix64(h ^ (((real - mono) & M64) // 1000000000))
    return h or 1


def proc_stat(ident):
    """(state, starttime) of /proc/ID/stat, or None if it cannot be read."""
    try:
        with open("/proc/%d/stat" % ident, "rb") as f:
            text = f.read()
    except OSError:
        return None
    rest = text[text.rfind(b")") + 2:].split(b" ")
    # after the name: the state is field 3, starttime field 22
    return rest[0].decode(), int(rest[22 - 3])


def make_tag(ident, start, boot):
    h = mix64(boot ^ mix64((start + 1) & M64))
    return ident << 32 | ((h & 0xffffffff) if h else 1)


def tag_of(pid, boot):
    st = proc_stat(pid)
    return make_tag(pid, st[1] if st else 0, boot)


def tag_alive(tag, boot):
    """smq(7) Boot hashes and tags: only for a tag of this host."""
    ident = tag >> 32
    if ident < 1 or ident > 0x3fffffff:
        return 0
    st = proc_stat(ident)
    if st is None:
        if os.path.exists("/proc/self/stat"):
            return 0
        try:
            os.kill(ident, 0)
        except ProcessLookupError:
            return 0
        except OSError:
            pass
        return 1
    if st[0] in ("Z", "X"):
        return 0
    return int(make_tag(ident, st[1], boot) == tag)


# ---- the memory: canonical ranges mapped as segments (smq(7) Regions) ----
class Window:
    def __init__(self, spec):
        self.spec = spec
        kind, _, arg = spec.partition(":")
        self.transport = kind
        if kind == "file":
            with open(arg, "rb") as f:
                self.objects = {0: f.read()}
            self.segments = [(0, len(self.objects[0]), 0, 0)]
            self.mapped_size = len(self.objects[0])
        elif kind == "split":
            self.name = arg
            self.objects = {}
            for b in range(MAX_BOARDS):
                try:
                    with open("/dev/shm/%s.%d" % (arg, b), "rb") as f:
                        self.objects[b] = f.read()
                except FileNotFoundError:
                    pass
            if 0 not in self.objects:
                raise SystemExit("no /dev/shm/%s.0" % arg)
            # until the layout is known: object 0 holds the superblock
            # page, board 0's control block, then the tables
            n0 = len(self.objects[0])
            self.segments = []
            self._add(0, 0, PAGE, 0)
            self._add(0, CTL_OFF, PAGE, PAGE)
            if n0 > 2 * PAGE:
                self._add(0, BOARD_TABLE, n0 - 2 * PAGE, 2 * PAGE)
            self.mapped_size = n0
        else:
            raise SystemExit("window spec: file:PATH or split:NAME")

    def _add(self, b, start, length, at):
        size = len(self.objects[b])
        if length and at < size and length <= size - at:
            self.segments.append((start, length, b, at))

    def map_layout(self, lay):
        """smq-format(7) Ranges of a region: every board's ranges, in order."""
        if self.transport != "split":
            return
        self.segments = []
        self.mapped_size = 0
        for b in range(MAX_BOARDS):
            if b not in self.objects:
                continue
            at = 0
            for start, length in lay.ranges(b):
                self._add(b, start, length, at)
                at += length
            self.mapped_size += len(self.objects[b])

    def view_size(self):
        return sum(s[1] for s in self.segments)

    def read(self, off, n):
        for start, length, b, at in self.segments:
            if start <= off and n <= length and off - start <= length - n:
                o = at + off - start
                return self.objects[b][o:o + n]
        return None


class Fault(Exception):
    def __init__(self, err, field, offset, value, limit, kind):
        super().__init__(err)
        self.err, self.field, self.offset = err, field, offset
        self.value, self.limit, self.kind = value, limit, kind

    def json(self):
        return {"error": self.err, "field": self.field,
                "offset": self.offset, "value": self.value,
                KIND_KEY[self.kind]: self.limit}


# ---- smq-format(7) LAYOUT ----
class Layout:
    def __init__(self, boards, queues, entries, entry_size, receivers,
                 senders, tables_extra, body_extra, journal_entries=0):
        self.boards, self.queues = boards, queues
        self.journal_entries = journal_entries
        self.diag_queues = boards
        self.app = queues - boards
        self.entries, self.entry_size = entries, entry_size
        self.stride = round_up(16 + entry_size, 64)
        self.diag_entries = min(entries, 16)
        self.diag_entry_size = min(entry_size, 65536)
        self.diag_stride = round_up(16 + self.diag_entry_size, 64)
        self.receiver, self.senders = receivers, senders
        self.tables_extra, self.body_extra = tables_extra, body_extra
        self.tables_end = round_up(QUEUE_TABLE + 16 * queues, PAGE) + \
            tables_extra
        self.body, self.body_size, self.rx = [], [], [0] * queues
        self.slot = {}                  # (b, q): slot(b, q)
        off = self.tables_end
        self.too_large = False
        for b in range(boards):
            self.body.append(off)
            sends = 0
            for q in range(queues):
                if senders[q] >> b & 1:
                    self.slot[b, q] = sends
                    sends += 1
            off += 192 * sends
            for q in range(queues):
                if receivers[q] != b:
                    continue
                self.rx[q] = off
                off += self.rx_bytes(q)
                if off > WINDOW_MAX:
                    self.too_large = True
            off = round_up(off, PAGE) + body_extra
            if off > WINDOW_MAX:
                self.too_large = True
            self.body_size.append(off - self.body[b])
        self.size = off

    def diag(self, q):
        return q >= self.app

    def q_entries(self, q):
        return self.diag_entries if self.diag(q) else self.entries

    def q_entry_size(self, q):
        return self.diag_entry_size if self.diag(q) else self.entry_size

    def q_stride(self, q):
        return self.diag_stride if self.diag(q) else self.stride

    def lanes(self, q):
        return popcount(self.senders[q])

    def lane(self, q, s):
        return popcount(self.senders[q] & ((1 << s) - 1))

    def lane_boards(self, q):
        return [s for s in range(64) if self.senders[q] >> s & 1]

    def bottoms_size(self, q):
        return round_up(8 * self.lanes(q), 64)

    def rx_bytes(self, q):
        n = self.lanes(q)
        return 128 + self.bottoms_size(q) + 64 + 128 * n + \
            n * self.q_entries(q) * self.q_stride(q)

    # the lines of sending board s for queue q, in s's body
    def lane_out(self, s, q):
        return self.body[s] + 192 * self.slot[s, q]

    def lane_fc(self, s, q):
        return self.lane_out(s, q) + 64

    def lane_wake(self, s, q):
        return self.lane_out(s, q) + 128

    # the receive area of queue q
    def rx_info(self, q):
        return self.rx[q] + 64

    def bottoms(self, q):
        return self.rx[q] + 128

    def bell(self, q):
        return self.bottoms(q) + self.bottoms_size(q)

    def lane_in(self, q, s):
        return self.bell(q) + 64 + 64 * self.lane(q, s)

    def lane_ask(self, q, s):
        return self.bell(q) + 64 + 64 * self.lanes(q) + 64 * self.lane(q, s)

    def ring(self, q, s):
        return self.bell(q) + 64 + 128 * self.lanes(q) + \
            self.lane(q, s) * self.q_entries(q) * self.q_stride(q)

    def entry(self, q, s, n):
        return self.ring(q, s) + (n % self.q_entries(q)) * self.q_stride(q)

    # smq-format(7) Journal: the start of each board's body_extra
    def journal(self, b):
        return self.body[b] + self.body_size[b] - self.body_extra

    def journal_slot(self, b, s):
        return self.journal(b) + 64 + 64 * (s % self.journal_entries)

    def ranges(self, b):
        r = []
        if b == 0:
            r.append((0, PAGE))
        r.append((CTL_OFF + PAGE * b, PAGE))
        if b == 0:
            r.append((BOARD_TABLE, self.tables_end - BOARD_TABLE))
        if b < self.boards:
            r.append((self.body[b], self.body_size[b]))
        return r


# ---- smq-format(7) VALIDATION ----
class Reader:
    def __init__(self, window):
        self.w = window
        self.lay = None
        self.groups = []
        self.boot = boot_hash()

    def rd(self, off, n):
        data = self.w.read(off, n)
        assert data is not None, "read of an unmapped range at %d" % off
        return data

    def sb(self):
        return self.rd(0, PAGE)

    def maint_alive(self, sb):
        """1 live, 0 not, -1 of another boot: cannot tell."""
        if u64(sb, 136) != self.boot:
            return -1
        return tag_alive(u64(sb, 128), self.boot)

    def confirm(self, f, generation):
        """A failing check is the window's only if no maintenance ran
        (smq-format(7) VALIDATION, before the static checks)."""
        sb = self.w.read(0, PAGE)
        if sb is None or f.err in ("SMQ_EMAGIC", "SMQ_EVERSION"):
            return f
        phase = u32(sb, 144)
        under_way = phase in (1, 2)
        if under_way and self.maint_alive(sb) == 1:
            return Fault("EBUSY", "maint_phase", 144, phase, 0, EXPECTED)
        if u64(sb, 64) != generation:
            return Fault("ESTALE", "generation", 64, u64(sb, 64),
                         generation, EXPECTED)
        if under_way and f.err != "SMQ_EUNFORMATTED":
            return Fault("SMQ_EINCOMPLETE", "maint_phase", 144, phase, 0,
                         EXPECTED)
        return f

    def validate(self, full=True):
        """The static checks, then (full) the dynamic and usable ones;
        the first fault, confirmed, or None."""
        sb = self.w.read(0, PAGE)
        generation = u64(sb, 64) if sb is not None else 0
        try:
            self.static()
            if full:
                self.dynamic()
        except Fault as f:
            return self.confirm(f, generation)
        if full:
            try:
                self.usable()
            except Fault as f:
                return f
        return None

    # checks 1 to 21
    def static(self):
        w = self.w
        self.groups = []
        want = int.from_bytes(MAGIC, "little")
        head = w.read(0, 8)
        if head is None:                                        # 1
            raise Fault("SMQ_EUNFORMATTED", "magic", 0, 0, want, EXPECTED)
        m = u64(head, 0)
        if m == 0:                                              # 2
            raise Fault("SMQ_EUNFORMATTED", "magic", 0, 0, want, EXPECTED)
        if m != want:                                           # 3
            raise Fault("SMQ_EMAGIC", "magic", 0, m, want, EXPECTED)
        sb = w.read(0, PAGE)
        if sb is None:                                          # 4
            raise Fault("SMQ_ETOOSMALL", "window_size", 40, w.view_size(),
                        PAGE, AT_LEAST)
        if u32(sb, 8) != VERSION:                               # 5
            raise Fault("SMQ_EVERSION", "version", 8, u32(sb, 8), VERSION,
                        EXPECTED)
        if u32(sb, 12) != PAGE:                                 # 6
            raise Fault("SMQ_ECORRUPT", "sb_size", 12, u32(sb, 12), PAGE,
                        EXPECTED)
        unknown = u32(sb, 16) & ~INCOMPAT_KNOWN
        if unknown:                                             # 7
            raise Fault("SMQ_EFEATURE", "features_incompat", 16,
                        unknown & -unknown, INCOMPAT_KNOWN, KNOWN)
        te, be = u64(sb, 192), u64(sb, 200)
        if te % PAGE or te > 1 << 46:                           # 8
            raise Fault("SMQ_EGEOMETRY", "tables_extra", 192, te, 1 << 46,
                        PAGES)
        if be % PAGE or be > 1 << 40:
            raise Fault("SMQ_EGEOMETRY", "body_extra", 200, be, 1 << 40,
                        PAGES)
        je = u32(sb, 208)
        journal = u32(sb, 16) & FEATURE_JOURNAL
        if journal and je > JOURNAL_MAX:
            raise Fault("SMQ_EGEOMETRY", "journal_entries", 208, je,
                        JOURNAL_MAX, AT_MOST)
        if journal and je < JOURNAL_MIN:
            raise Fault("SMQ_EGEOMETRY", "journal_entries", 208, je,
                        JOURNAL_MIN, AT_LEAST)
        if journal and je & (je - 1):
            p = JOURNAL_MIN
            while p < je:
                p <<= 1
            raise Fault("SMQ_EGEOMETRY", "journal_entries", 208, je, p,
                        EXPECTED)
        if not journal and je:
            raise Fault("SMQ_EGEOMETRY", "journal_entries", 208, je, 0,
                        EXPECTED)
        need = journal_bytes(je if journal else 0) + \
            (SCRATCH_SIZE if u32(sb, 20) & FEATURE_SCRATCH else 0)
        if be < need:
            raise Fault("SMQ_EGEOMETRY", "body_extra", 200, be, need,
                        AT_LEAST)
        boards, queues = u32(sb, 24), u32(sb, 28)               # 9
        entries, entry_size = u32(sb, 32), u32(sb, 36)
        diag = u32(sb, 48)
        geo = "SMQ_EGEOMETRY"
        if boards < 1:
            raise Fault(geo, "boards", 24, boards, 1, AT_LEAST)
        if boards > 64:
            raise Fault(geo, "boards", 24, boards, 64, AT_MOST)
        if diag != boards:
            raise Fault(geo, "diag_queues", 48, diag, boards, EXPECTED)
        if queues <= diag:
            raise Fault(geo, "queues", 28, queues, diag + 1, AT_LEAST)
        if queues > 65535:
            raise Fault(geo, "queues", 28, queues, 65535, AT_MOST)
        if entries > 1 << 20:
            raise Fault(geo, "entries", 32, entries, 1 << 20, AT_MOST)
        if entries & (entries - 1) or not entries:
            p = 1
            while p < entries:
                p <<= 1
            raise Fault(geo, "entries", 32, entries, p, EXPECTED)
        if entry_size > 1 << 24:
            raise Fault(geo, "entry_size", 36, entry_size, 1 << 24, AT_MOST)
        qt = w.read(QUEUE_TABLE, 16 * queues)
        extra = w.read(round_up(QUEUE_TABLE + 16 * queues, PAGE), te) \
            if te else b""
        if qt is None or extra is None:                         # 10
            raise Fault("SMQ_ETOOSMALL", "window_size", 40, w.view_size(),
                        u64(sb, 40), AT_LEAST)
        crc = crc32c(sb[8:60] + sb[192:256] + qt + extra)
        if crc != u32(sb, 60):                                  # 11
            raise Fault("SMQ_ECHECKSUM", "checksum", 60, u32(sb, 60), crc,
                        EXPECTED)
        if u32(sb, 52) != min(entries, 16):                     # 12
            raise Fault(geo, "diag_entries", 52, u32(sb, 52),
                        min(entries, 16), EXPECTED)
        if u32(sb, 56) != min(entry_size, 65536):
            raise Fault(geo, "diag_entry_size", 56, u32(sb, 56),
                        min(entry_size, 65536), EXPECTED)
        every = (1 << boards) - 1
        app = queues - diag
        receivers, senders = [], []
        for q in range(queues):                                 # 13
            off = QUEUE_TABLE + 16 * q
            r, fl, m = u16(qt, 16 * q + 4), u16(qt, 16 * q + 6), \
                u64(qt, 16 * q + 8)
            cor = "SMQ_ECORRUPT"
            if u32(qt, 16 * q) != q:
                raise Fault(cor, "queue_table.index", off, u32(qt, 16 * q),
                            q, EXPECTED)
            if r >= boards:
                raise Fault(cor, "queue_table.receiver", off + 4, r,
                            boards - 1, AT_MOST)
            if fl != (0 if q < app else 1):
                raise Fault(cor, "queue_table.flags", off + 6, fl,
                            0 if q < app else 1, EXPECTED)
            if q >= app and r != q - app:
                raise Fault(cor, "queue_table.receiver", off + 4, r,
                            q - app, EXPECTED)
            if q < app and (m == 0 or m & ~every):
                raise Fault(cor, "queue_table.senders", off + 8, m, every,
                            SUBSET)
            if q >= app and m != every:
                raise Fault(cor, "queue_table.senders", off + 8, m, every,
                            EXPECTED)
            receivers.append(r)
            senders.append(m)
        lay = Layout(boards, queues, entries, entry_size, receivers,
                     senders, te, be, je if journal else 0)
        if lay.too_large:                                       # 14
            raise Fault(geo, "window_size", 40, u64(sb, 40), WINDOW_MAX,
                        AT_MOST)
        if u64(sb, 40) != lay.size:                             # 15
            raise Fault("SMQ_ECORRUPT", "window_size", 40, u64(sb, 40),
                        lay.size, EXPECTED)
        fixed = u64(self.sb(), 96)
        if fixed and fixed < lay.size:
            raise Fault("SMQ_ECORRUPT", "size_fixed", 96, fixed, lay.size,
                        AT_LEAST)
        self.lay = lay
        w.map_layout(lay)
        for b in range(boards):                                 # 16
            for start, length in lay.ranges(b):
                if w.read(start, length) is None:
                    raise Fault("SMQ_ETOOSMALL", "window_size", 40,
                                w.view_size(), lay.size, AT_LEAST)
        self.state_checks(self.sb(), lay)
        if lay.journal_entries:                                 # 20
            for b in range(boards):
                self.journal_head(lay, b)
        if u32(sb, 20) & FEATURE_GROUPS:                        # 21
            self.groups = self.group_checks(lay)

    def journal_head(self, lay, b):
        """Board b's journal head line, checked (smq-format(7) VALIDATION, check
        20): its fields, as a dict."""
        cor = "SMQ_ECORRUPT"
        at = lay.journal(b)
        h = self.rd(at, 64)
        want = int.from_bytes(JOURNAL_MAGIC, "little")
        if u64(h, 0) != want:
            raise Fault(cor, "journal.magic", at, u64(h, 0), want, EXPECTED)
        if u32(h, 8) != b:
            raise Fault(cor, "journal.board", at + 8, u32(h, 8), b, EXPECTED)
        if u32(h, 12) != lay.journal_entries:
            raise Fault(cor, "journal.slots", at + 12, u32(h, 12),
                        lay.journal_entries, EXPECTED)
        if u32(h, 32) != crc32c(h[0:32]):
            raise Fault(cor, "journal.check", at + 32, u32(h, 32),
                        crc32c(h[0:32]), EXPECTED)
        if u64(h, 16) == 0:
            raise Fault(cor, "journal.incarnation", at + 16, 0, 1, AT_LEAST)
        if u64(h, 40) == 0:
            raise Fault(cor, "journal.head", at + 40, 0, 1, AT_LEAST)
        return {"incarnation": u64(h, 16), "head": u64(h, 40),
                "last_boot": u64(h, 48)}

    def group_checks(self, lay):
        """The group table (smq-format(7) GROUP TABLE): [(name, [queues])]."""
        cor = "SMQ_ECORRUPT"
        te = lay.tables_extra
        if te < PAGE:
            raise Fault(cor, "tables_extra", 192, te, PAGE, AT_LEAST)
        at = lay.tables_end - te
        t = self.rd(at, te)
        groups, members = u32(t, 0), u32(t, 4)
        if groups < 1:
            raise Fault(cor, "group_head.groups", at, groups, 1, AT_LEAST)
        if groups > 1024:
            raise Fault(cor, "group_head.groups", at, groups, 1024, AT_MOST)
        if round_up(64 + 64 * groups + 4 * members, PAGE) > te or \
                members > 64 * groups:
            raise Fault(cor, "group_head.members", at + 4, members,
                        (te - 64 - 64 * groups) // 4, AT_MOST)
        base = 64 + 64 * groups
        first, out, names = 0, [], []
        for i in range(groups):
            d = 64 + 64 * i
            raw = t[d:d + 32]
            name = raw.split(b"\0")[0]
            ok = 1 <= len(name) <= 31 and b"\0" in raw and \
                raw[len(name):] == b"\0" * (32 - len(name)) and \
                all(c in NAME_CHARS for c in name)
            if not ok:
                raise Fault(cor, "group.name", at + d, raw[0], 0, EXPECTED)
            if name in names:
                raise Fault(cor, "group.name", at + d, i, names.index(name),
                            EXPECTED)
            names.append(name)
            count = u32(t, d + 36)
            if u32(t, d + 32) != first:
                raise Fault(cor, "group.first", at + d + 32, u32(t, d + 32),
                            first, EXPECTED)
            if count < 1 or count > 64 or count > members - first:
                raise Fault(cor, "group.count", at + d + 36, count,
                            min(members - first, 64), AT_MOST)
            qs = []
            for k in range(first, first + count):
                mo = base + 4 * k
                m = u32(t, mo)
                if m >= lay.app:
                    raise Fault(cor, "group.member", at + mo, m,
                                lay.app - 1, AT_MOST)
                if m in qs:
                    raise Fault(cor, "group.member", at + mo, m,
                                qs.index(m), EXPECTED)
                qs.append(m)
            out.append({"name": name.decode(), "queues": qs})
            first += count
        if first != members:
            raise Fault(cor, "group_head.members", at + 4, members, first,
                        EXPECTED)
        return out

    def state_checks(self, sb, lay):
        cor = "SMQ_ECORRUPT"
        gen = u64(sb, 64)                                       # 17
        if gen == 0:
            raise Fault(cor, "generation", 64, 0, 1, AT_LEAST)
        if gen > GENERATION_MAX:
            raise Fault(cor, "generation", 64, gen, GENERATION_MAX, AT_MOST)
        if u32(sb, 148) > lay.queues:
            raise Fault(cor, "maint_queue", 148, u32(sb, 148), lay.queues,
                        AT_MOST)
        if u32(sb, 72) > 2:
            raise Fault(cor, "system_state", 72, u32(sb, 72), 2, AT_MOST)
        if u32(sb, 144) > 2:
            raise Fault(cor, "maint_phase", 144, u32(sb, 144), 2, AT_MOST)
        for b in range(lay.boards):                             # 18
            so = BOARD_TABLE + 128 * b
            co = CTL_OFF + PAGE * b
            s, c = self.rd(so, 128), self.rd(co, PAGE)
            if u32(s, 0) > 2:
                raise Fault(cor, "board.state", so, u32(s, 0), 2, AT_MOST)
            if u64(s, 8) > gen:
                raise Fault(cor, "board.generation", so + 8, u64(s, 8), gen,
                            AT_MOST)
            if u16(s, 40) > 2:
                raise Fault(cor, "board.doorbell", so + 40, u16(s, 40), 2,
                            AT_MOST)
            ngen = u64(c, 0)
            if ngen > gen:
                raise Fault(cor, "notice.generation", co, ngen, gen,
                            AT_MOST)
            if ngen and u64(c, 16) != notice_check(ngen, b):
                raise Fault(cor, "notice.check", co + 16, u64(c, 16),
                            notice_check(ngen, b), EXPECTED)
            if u32(c, 8) > 2:
                raise Fault(cor, "notice.system_state", co + 8, u32(c, 8), 2,
                            AT_MOST)
            for i in range(SLOTS):
                h = 128 + 64 * i
                kind, role = u32(c, h + 20), u32(c, h + 40)
                if kind > 2:
                    raise Fault(cor, "handle.kind", co + h + 20, kind, 2,
                                AT_MOST)
                if role > 2:
                    raise Fault(cor, "handle.role", co + h + 40, role, 2,
                                AT_MOST)
                if kind == 2 and u64(c, h + 24) == gen and \
                        u32(c, h + 36) >= lay.queues:
                    raise Fault(cor, "handle.queue", co + h + 36,
                                u32(c, h + 36), lay.queues - 1, AT_MOST)
        for q in range(lay.queues):                             # 19
            self.rx_checks(q)

    def rx_checks(self, q):
        lay, cor = self.lay, "SMQ_ECORRUPT"
        rx, ri = self.rd(lay.rx[q], 64), self.rd(lay.rx_info(q), 64)
        if u32(rx, 0) != q:
            raise Fault(cor, "queue.index", lay.rx[q], u32(rx, 0), q,
                        EXPECTED)
        if u32(rx, 4) >= lay.lanes(q):
            raise Fault(cor, "queue.cursor", lay.rx[q] + 4, u32(rx, 4),
                        lay.lanes(q) - 1, AT_MOST)
        if u32(ri, 4) > 1:
            raise Fault(cor, "rx_info.waiting", lay.rx_info(q) + 4,
                        u32(ri, 4), 1, AT_MOST)

    # checks 22 to 26, lane by lane
    def dynamic(self):
        lay, sb = self.lay, self.sb()
        cor = "SMQ_ECORRUPT"
        for q in range(lay.queues):
            for s in lay.lane_boards(q):
                epoch, bottom, top = self.lane_checks(q, s)
                # 25, last: lane_wake.rx_polls, 0 to 2 (feature membarrier)
                polls = u32(self.rd(lay.lane_wake(s, q), 64), 28)
                if polls > 2:
                    raise Fault("SMQ_ECORRUPT", "lane.rx_polls",
                                lay.lane_wake(s, q) + 28, polls, 2, AT_MOST)
                end = top                                       # 26
                if bottom >= top:
                    e = self.rd(lay.entry(q, s, bottom), 16)
                    if u64(e, 8) == signature(epoch, q, s, bottom):
                        end = bottom + 1
                for n in range(bottom, end):
                    off = lay.entry(q, s, n)
                    e = self.rd(off, 16)
                    want = signature(epoch, q, s, n)
                    if n < top and u64(e, 8) != want:
                        raise Fault("SMQ_ESIGNATURE", "entry.signature",
                                    off + 8, u64(e, 8), want, EXPECTED)
                    if u32(e, 0) > lay.q_entry_size(q):
                        raise Fault(cor, "entry.size", off, u32(e, 0),
                                    lay.q_entry_size(q), AT_MOST)
                    # with checksum a check is the message's to fail
                    if not u32(sb, 16) & FEATURE_CHECKSUM and u32(e, 4):
                        raise Fault(cor, "entry.check", off + 4, u32(e, 4),
                                    0, EXPECTED)

    def lane_checks(self, q, s):
        """Checks 22 to 25 on board s's lane of queue q; its epoch,
        bottom and top."""
        lay, sb = self.lay, self.sb()
        cor = "SMQ_ECORRUPT"
        entries = lay.q_entries(q)
        k = lay.lane(q, s)
        epoch = u64(self.rd(lay.rx[q], 64), 48)
        bottom = u64(self.rd(lay.bottoms(q), 8 * (k + 1)), 8 * k)
        fcb = u64(self.rd(lay.lane_fc(s, q), 8), 0)
        top = u64(self.rd(lay.lane_in(q, s), 8), 0)
        shadow = u64(self.rd(lay.lane_out(s, q), 8), 0)
        qe = u64(self.rd(lay.lane_wake(s, q), 64), 32)
        if epoch == 0:                                          # 22
            raise Fault(cor, "queue.epoch", lay.rx[q] + 48, 0, 1, AT_LEAST)
        if epoch > u64(sb, 88):
            raise Fault(cor, "queue.epoch", lay.rx[q] + 48, epoch,
                        u64(sb, 88), AT_MOST)
        if qe != epoch:
            raise Fault(cor, "lane.queue_epoch", lay.lane_wake(s, q) + 32,
                        qe, epoch, EXPECTED)
        if fcb > bottom:                                        # 23
            raise Fault(cor, "lane.flow_bottom", lay.lane_fc(s, q), fcb,
                        bottom, AT_MOST)
        if (bottom > top and bottom - top > entries) or \
                (top > bottom and top - bottom > entries):      # 24
            raise Fault(cor, "lane.top", lay.lane_in(q, s), top,
                        (bottom + entries) & M64, AT_MOST)
        if shadow < top:                                        # 25
            raise Fault(cor, "lane.sender_top", lay.lane_out(s, q), shadow,
                        top, AT_LEAST)
        if shadow - top > entries:
            raise Fault(cor, "lane.sender_top", lay.lane_out(s, q), shadow,
                        (top + entries) & M64, AT_MOST)
        if shadow > bottom and shadow - bottom > entries:
            raise Fault(cor, "lane.sender_top", lay.lane_out(s, q), shadow,
                        (bottom + entries) & M64, AT_MOST)
        if shadow > fcb and shadow - fcb > 2 * entries:
            raise Fault(cor, "lane.sender_top", lay.lane_out(s, q), shadow,
                        (fcb + 2 * entries) & M64, AT_MOST)
        return epoch, bottom, top

    # smq(7) Opening a queue: what an open meets before it writes
    def open_fault(self, q, role, board):
        """The fault that refuses an open of queue q as role ("sender"
        or "receiver") on board, or None: attaching (the static checks),
        the board's right to the role, then checks 22 to 25 on the lanes
        the open uses (a sender's own, a receiver's every one) and, for a
        receiver, check 19 on its receive area; a fault there is the
        maintenance's while one is under way."""
        try:
            self.static()
        except Fault as f:
            return f
        lay = self.lay
        if q >= lay.queues:
            return Fault("EINVAL", "queue", 0, q, lay.queues - 1, AT_MOST)
        if role == "receiver" and lay.receiver[q] != board:
            return Fault("EPERM", "queue_table.receiver", QUEUE_TABLE +
                         16 * q + 4, lay.receiver[q], board, EXPECTED)
        if role == "sender" and not lay.senders[q] >> board & 1:
            return Fault("SMQ_ENOTSENDER", "queue_table.senders",
                         QUEUE_TABLE + 16 * q + 8, lay.senders[q],
                         1 << board, SUBSET)
        try:
            for s in [board] if role == "sender" else lay.lane_boards(q):
                self.lane_checks(q, s)
            if role == "receiver":
                self.rx_checks(q)
        except Fault as f:
            sb = self.sb()
            phase = u32(sb, 144)
            if phase:
                err = "EBUSY" if self.maint_alive(sb) == 1 \
                    else "SMQ_EINCOMPLETE"
                return Fault(err, "maint_phase", 144, phase, 0, EXPECTED)
            return f
        return None

    # checks 27 to 29
    def usable(self):
        sb = self.sb()
        phase = u32(sb, 144)
        if phase:                                               # 27
            err = "EBUSY" if self.maint_alive(sb) == 1 else "SMQ_EINCOMPLETE"
            raise Fault(err, "maint_phase", 144, phase, 0, EXPECTED)
        if u32(sb, 72) == 0:                                    # 28
            raise Fault("SMQ_EINCOMPLETE", "system_state", 72, 0, 1,
                        EXPECTED)
        gen = u64(sb, 64)
        for b in range(self.lay.boards):                        # 29
            ngen = u64(self.rd(CTL_OFF + PAGE * b, 8), 0)
            if ngen != gen:
                raise Fault("SMQ_EINCOMPLETE", "notice.generation",
                            CTL_OFF + PAGE * b, ngen, gen, EXPECTED)


# ---- smq(7) Liveness and Who is at work ----
class Observer:
    """What this reader has seen of each count, on its own clock."""

    def __init__(self):
        self.seen = {}

    def look(self, what, count, key, now_ms):
        """(alive 1/0/-1, age in ms or -1)"""
        o = self.seen.get(what)
        if o is None or o["key"] != key:
            self.seen[what] = dict(count=count, looked=now_ms, since=now_ms,
                                   key=key, moving=False)
            return -1, -1
        if o["count"] != count:
            recent = now_ms - o["looked"] <= TIMEOUT_MS
            age = int(now_ms - o["looked"]) if recent else -1
            self.seen[what] = dict(count=count, looked=now_ms, since=now_ms,
                                   key=key, moving=recent)
            return (1 if recent else -1), age
        o["looked"] = now_ms
        still = now_ms - o["since"]
        if still >= TIMEOUT_MS:
            return 0, int(still)
        if o["moving"]:
            return 1, int(still)
        return -1, -1


class Judge:
    def __init__(self, reader):
        self.r = reader
        self.obs = Observer()
        self.held = {}

    def stall(self, q):
        """smq(7) What a monitor shows: ms this reader has seen queue q
        hold messages with its bottom (the sum of its lanes') unmoved, 0
        at the look that first finds them, or finds it empty or moved."""
        lay = self.r.lay
        bottom = queued = 0
        for s in lay.lane_boards(q):
            top = u64(self.r.rd(lay.lane_in(q, s), 8), 0)
            b = u64(self.r.rd(lay.bottoms(q) + 8 * lay.lane(q, s), 8), 0)
            bottom = (bottom + b) & M64
            queued += min(top - b, lay.q_entries(q)) if top > b else 0
        epoch = u64(self.r.rd(lay.rx[q], 64), 48)
        now, o = self.now(), self.held.get(q)
        if not queued:
            self.held[q] = (bottom, epoch, 0)
            return 0
        if o is None or not o[2] or o[0] != bottom or o[1] != epoch:
            self.held[q] = (bottom, epoch, now)
            return 0
        return int(now - o[2])

    def now(self):
        return time.clock_gettime_ns(time.CLOCK_MONOTONIC) / 1e6

    def heartbeat(self, b):
        s = self.r.rd(BOARD_TABLE + 128 * b, 128)
        gen = u64(self.r.sb(), 64)
        return self.obs.look(("board", b), u64(s, 16), gen, self.now())

    def process(self, tag, boot, hb):
        if not tag:
            return 0
        if boot == self.r.boot:
            return tag_alive(tag, self.r.boot)
        return hb

    def board(self, b):
        c = self.r.rd(CTL_OFF + PAGE * b, PAGE)
        hb, age = self.heartbeat(b)
        here = False
        handles = queue_handles = dead = 0
        for i in range(SLOTS):
            h = 128 + 64 * i
            tag, boot = u64(c, h), u64(c, h + 8)
            if not tag:
                continue
            a = self.process(tag, boot, hb)
            if a == 0:
                dead += 1
                continue
            here |= a > 0 and boot == self.r.boot
            handles += 1
            queue_handles += u32(c, h + 20) == 2
        alive = 1 if here else (hb if handles else 0)
        if handles and alive:
            activity = 0 if alive < 0 else 3 if queue_handles else 2
        else:
            activity = 4 if dead else 1
        return dict(alive=alive, age=age, activity=activity,
                    handles=handles, queue_handles=queue_handles, dead=dead)

    def receiver(self, q):
        lay = self.r.lay
        rx, ri = self.r.rd(lay.rx[q], 64), self.r.rd(lay.rx_info(q), 64)
        owner, waiting = u64(rx, 8), u32(ri, 4)
        alive, age = self.obs.look(("rx", q), u64(ri, 40), u64(rx, 48),
                                   self.now())
        if not owner:
            state = 1
        else:
            if u64(ri, 16) == self.r.boot:
                alive = tag_alive(owner, self.r.boot)
            elif alive == 0 and not waiting:
                alive = self.board(lay.receiver[q])["alive"]
            elif alive < 0:
                alive = 0 if self.board(lay.receiver[q])["activity"] == 4 \
                    else -1
            state = 4 if alive == 0 else 0 if alive < 0 else \
                2 if waiting else 3
        stopped = tag_stopped(owner, self.r.boot) \
            if owner and alive > 0 and u64(ri, 16) == self.r.boot else -1
        return dict(state=state, alive=alive if owner else 0, age=age,
                    owner=owner, stopped=stopped)


def tag_stopped(tag, boot):
    """smq(7) What a monitor shows: a receiver of this host stopped by a
    signal or a debugger (1), running (0), or not to be told (-1)."""
    ident = tag >> 32
    if ident < 1 or ident > 0x3fffffff:
        return -1
    st = proc_stat(ident)
    if st is None or make_tag(ident, st[1], boot) != tag:
        return -1
    return 1 if st[0] in ("T", "t") else 0


def alive_word(a):
    return "yes" if a > 0 else "no" if a == 0 else "unknown"


def feature_names(incompat, compat):
    """dump's features: the incompatible bits from bit 0, then the
    compatible ones (smq(7) What a monitor shows)."""
    return [INCOMPAT_NAMES.get(i, "incompat_bit_%d" % i)
            for i in range(32) if incompat >> i & 1] + \
        [COMPAT_NAMES.get(i, "compat_bit_%d" % i)
         for i in range(32) if compat >> i & 1]


def damaged(r, q):
    """The queued entries of queue q that fail their check (smq(7) Checked
    payloads): what its receiver would refuse.  Entries as check 26 takes
    them, those that carry their signature; a lane whose top and bottom
    check 24 refuses is not read."""
    lay = r.lay
    epoch = u64(r.rd(lay.rx[q], 64), 48)
    limit = lay.q_entry_size(q)
    out = []
    for s in lay.lane_boards(q):
        k = lay.lane(q, s)
        top = u64(r.rd(lay.lane_in(q, s), 8), 0)
        bottom = u64(r.rd(lay.bottoms(q) + 8 * k, 8), 0)
        if (bottom > top and bottom - top > lay.q_entries(q)) or \
                (top > bottom and top - bottom > lay.q_entries(q)):
            continue
        for n in range(bottom, max(top, bottom + 1)):
            off = lay.entry(q, s, n)
            e = r.rd(off, 16)
            size, check, sig = u32(e, 0), u32(e, 4), u64(e, 8)
            if sig != signature(epoch, q, s, n):
                continue                # not a message: check 26's
            bad = {"sender": s, "sequence": n, "offset": off,
                   "size": size, "check": check}
            if size > limit:
                bad["why"] = "size above %d" % limit
            else:
                got = entry_check(size, sig, r.rd(off + 16, size))
                if got == check:
                    continue
                bad["why"] = "sum 0x%08x" % got
            out.append(bad)
    return out


# ---- what dump -v --json shows ----
def dump(spec):
    w = Window(spec)
    r = Reader(w)
    fault = r.validate(full=False)
    if fault:
        # a window that fails its static checks: what there is, and why
        return {"window": spec, "transport": w.transport,
                "mapped_size": w.mapped_size, "fault": fault.json()}
    lay, judge = r.lay, Judge(r)
    start = judge.now()
    while True:
        boards = [judge.board(b) for b in range(lay.boards)]
        rcv = [judge.receiver(q) for q in range(lay.queues)]
        for q in range(lay.queues):
            judge.stall(q)
        unknown = any(b["activity"] == 0 for b in boards) or \
            any(x["state"] == 0 for x in rcv)
        if not unknown or judge.now() - start >= LOOK_MS:
            break
        # a judgement waits for time to pass (a heartbeat that moves or
        # not): no event tells of it, so the reader looks again
        time.sleep(0.1)
    fault = r.validate(full=True)
    sb = r.sb()
    phase = u32(sb, 144)
    out = {
        "window": spec, "transport": w.transport, "version": u32(sb, 8),
        "features": feature_names(u32(sb, 16), u32(sb, 20)),
        "generation": u64(sb, 64),
        "system_state": SYSTEM_STATE[u32(sb, 72)],
        "maintenance_phase": phase,
        "maintenance_pid": u64(sb, 128) >> 32 if phase else 0,
        "format_time_ns": u64(sb, 80), "boards": lay.boards,
        "queues": lay.app, "diagnostic_queues": lay.diag_queues,
        "entries": lay.entries, "entry_size": lay.entry_size,
        "window_size": lay.size, "mapped_size": w.mapped_size,
        "journal_slots": lay.journal_entries,
        # smqctl(1): the incarnation of board 0's journal, 0 without one
        "incarnation": u64(r.rd(lay.journal(0), 64), 16)
        if lay.journal_entries else 0,
        "fault": fault.json() if fault else None,
        "board_table": [], "queue_table": [],
        "groups": r.groups,
    }
    for b in range(lay.boards):
        s = r.rd(BOARD_TABLE + 128 * b, 128)
        j = boards[b]
        boot, ann = u64(s, 24), u64(s, 56)
        host = s[64:128].split(b"\0")[0][:63]
        out["board_table"].append({
            "board": b, "state": BOARD_STATE[u32(s, 0)],
            "activity": ACTIVITY[j["activity"]], "generation": u64(s, 8),
            "pid": u64(s, 32) >> 32, "host": host.decode("latin-1"),
            "same_host": bool(boot) and boot == r.boot,
            "heartbeat": u64(s, 16), "heartbeat_age_ms": j["age"],
            "alive": alive_word(j["alive"]), "handles": j["handles"],
            "queue_handles": j["queue_handles"],
            "dead_handles": j["dead"],
            "announcer_pid": ann >> 32
            if judge.process(ann, boot, j["alive"]) != 0 else 0,
            "announces": u32(s, 4),
            "journal_written": journal_written(r, b),
            "doorbell": {"kind": BELL_KIND[u16(s, 40)], "id": u32(s, 44)},
        })
    for q in range(lay.queues):
        out["queue_table"].append(queue(r, judge, q))
    return out


def journal_written(r, b):
    """smq(7) What a monitor shows: the entries begun, head - 1."""
    if not r.lay.journal_entries:
        return 0
    head = u64(r.rd(r.lay.journal(b) + 40, 8), 0)
    return head - 1 if head else 0


def queue(r, judge, q):
    lay = r.lay
    rx, ri = r.rd(lay.rx[q], 64), r.rd(lay.rx_info(q), 64)
    j = judge.receiver(q)
    lanes = []
    for s in lay.lane_boards(q):
        k = lay.lane(q, s)
        out = r.rd(lay.lane_out(s, q), 64)
        wake = r.rd(lay.lane_wake(s, q), 64)
        ask = r.rd(lay.lane_ask(q, s), 64)
        top = u64(r.rd(lay.lane_in(q, s), 8), 0)
        bottom = u64(r.rd(lay.bottoms(q) + 8 * k, 8), 0)
        space_wait = u64(ask, 0)
        lanes.append({
            "sender": s, "top": top, "bottom": bottom,
            "fill": top - bottom if top > bottom else 0,
            "messages": u64(out, 16), "bytes": u64(out, 24),
            "full_waits": u64(out, 32), "full_refusals": u32(out, 52),
            "doorbells": u64(out, 40), "lock_pid": u64(out, 8) >> 32,
            "sender_waiting": space_wait != 0 and
            space_wait == u32(wake, 24) + 1,
        })

    def total(key):
        return sum(x[key] for x in lanes) & M64
    out = {
        "queue": q, "diagnostic": lay.diag(q), "receiver": lay.receiver[q],
        "receiver_pid": j["owner"] >> 32,
        "receiver_state": RECEIVER[j["state"]],
        "receiver_alive": alive_word(j["alive"]) if j["owner"] >> 32
        else "no",
        "receiver_heartbeat_age_ms": j["age"],
        "receiver_beats": u64(ri, 40), "receiver_opens": u64(ri, 24),
        "receiver_takeovers": u64(ri, 32),
        "sleeping": bool(u64(rx, 56) & 1) and j["state"] in (2, 0),
        "receiver_stopped": j["stopped"],
        # dump judges no stall without --stall: how long it saw the queue
        # held, all the same
        "stalled": False, "stalled_ms": judge.stall(q),
        "senders": lay.lane_boards(q), "epoch": u64(rx, 48),
        "top": total("top"), "bottom": total("bottom"),
        "fill": max(x["fill"] for x in lanes),
        "capacity": lay.q_entries(q), "queued": total("fill"),
        "sent": total("messages"), "bytes_sent": total("bytes"),
        "received": u64(rx, 16), "bytes_received": u64(rx, 24),
        "full_waits": total("full_waits"),
        "full_refusals": total("full_refusals"),
        "corrupt": u64(ri, 48),
        "doorbells": total("doorbells"), "sleeps": u64(rx, 32),
        "wakeups": u64(rx, 40), "lanes": lanes,
    }
    if u32(r.sb(), 16) & FEATURE_CHECKSUM:
        out["damaged"] = damaged(r, q)
    return out


# ---- smq-format(7) Journal, smq(7) Reading a journal ----
LOST, ABANDONED, BROKEN, RESTARTED = 100, 101, 102, 103
KIND_NAMES = {1: "FORMAT", 2: "CLEAR", 3: "CLEAR_QUEUE", 4: "EMPTIED",
              5: "ANNOUNCE", 6: "READY", 7: "GAVE_UP", 8: "BOOT", 9: "OPEN",
              10: "CLOSE", 11: "TAKEOVER", 12: "FULL", 13: "ROOM",
              14: "DAMAGED", 15: "UNANSWERED", LOST: "LOST",
              ABANDONED: "ABANDONED", BROKEN: "BROKEN",
              RESTARTED: "RESTARTED"}
ROLE_SENDER = 1                 # enum smq_role; 2 is the receiver


class Cursor:
    """Where a reader is in one board's journal: the incarnation it read
    (0: none yet) and the sequence it reads next (0: the oldest)."""

    def __init__(self, board, next_seq=0, incarnation=0):
        self.board, self.next, self.incarnation = board, next_seq, incarnation


def note(c, kind, seq, a):
    """What a reader says of a ring: an entry of its own, written by
    nobody, of generation 0."""
    return {"board": c.board, "kind": kind, "seq": seq, "time_ns": 0,
            "generation": 0, "epoch": 0, "queue": NO_QUEUE, "role": 0,
            "pid": 0, "a": a, "b": 0, "incarnation": c.incarnation}


def journal_step(r, c, abandoned=False):
    """One step of cursor c, as smq(7) Reading a journal says: an entry,
    what the reader says of the ring, or None (nothing more now).  A
    journal whose head fails check 20 raises its Fault (step 1)."""
    lay = r.lay
    n = lay.journal_entries
    head_line = r.journal_head(lay, c.board)                    # 1
    inc = head_line["incarnation"]
    if c.incarnation and c.incarnation != inc:                  # 2
        was = c.incarnation
        c.incarnation, c.next = inc, 0
        return note(c, RESTARTED, 0, was)
    c.incarnation = inc
    for _ in range(4):
        head = u64(r.rd(lay.journal(c.board) + 40, 8), 0)       # 3
        oldest = head - n if head > n else 1
        if not c.next:
            c.next = oldest
        if c.next >= head:
            return None
        if c.next < oldest:
            lost = c.next
            c.next = oldest
            return note(c, LOST, lost, oldest - lost)
        e = r.rd(lay.journal_slot(c.board, c.next), 64)        # 4
        v = u64(e, 0)
        w = v & ~WRITING
        if v == c.next:
            # this reader's window is one copy, read once: the seq found
            # after the copy is the seq found before it
            s = c.next
            c.next += 1
            # kinds from 100 on are a reader's words, never written
            if u32(e, 44) != crc32c(e[:44] + bytes(4) + e[48:]) or \
                    u16(e, 32) >= LOST:
                return note(c, BROKEN, s, 0)
            return {"board": c.board, "kind": u16(e, 32), "seq": s,
                    "time_ns": u64(e, 8), "generation": u64(e, 16),
                    "epoch": u64(e, 24), "queue": u32(e, 36),
                    "role": u16(e, 34), "pid": u32(e, 40), "a": u64(e, 48),
                    "b": u64(e, 56), "incarnation": inc}
        if w > c.next:
            if w < head and (w - c.next) % n == 0:
                continue                # lapped: step 3 finds it lost
            s = c.next
            c.next += 1
            return note(c, BROKEN, s, 0)
        # reserved, not finished: never waited for
        if not abandoned:
            return None
        s = c.next
        c.next += 1
        return note(c, ABANDONED, s, 0)
    return None


def journals(spec, since="all", abandoned=False, cursor_file=None):
    """Every board's journal read at one look, from where --since says
    (and, for the boards it names, a cursor file of events --cursor:
    "board B incarnation I next N" lines), merged as smqctl events merges
    them (smq(7) Reading a journal): a list of entries and notes; None
    when the window fails its static checks (events then says it cannot
    be read)."""
    r = Reader(Window(spec))
    if r.validate(full=False):
        return None, r
    lay = r.lay
    if not lay.journal_entries:
        return [], r
    cursors = [Cursor(b) for b in range(lay.boards)]
    gen_from = 0
    if since.startswith("gen:"):
        gen_from = int(since[4:])
    elif since != "all":
        named = dict((int(b), int(q)) for b, q in
                     (x.split(":") for x in since.split(",")))
        for c in cursors:
            h = r.journal_head(lay, c.board)
            c.incarnation = h["incarnation"]
            c.next = named.get(c.board, h["head"])
    if cursor_file:
        with open(cursor_file) as f:
            words = f.read().split()
        for i in range(0, len(words) - 5, 6):
            b, inc, nxt = int(words[i + 1]), int(words[i + 3]), \
                int(words[i + 5])
            if b < lay.boards and inc and nxt:
                cursors[b].incarnation, cursors[b].next = inc, nxt
    read = []
    for c in cursors:
        mine = []
        while True:
            e = journal_step(r, c, abandoned)
            if e is None:
                break
            mine.append(e)
        read.append(mine)
    out, at = [], [0] * len(read)
    while True:
        pick = None
        for b, mine in enumerate(read):
            if at[b] == len(mine):
                continue
            if pick is None or \
                    mine[at[b]]["generation"] < read[pick][at[pick]]["generation"]:
                pick = b
        if pick is None:
            break
        e = read[pick][at[pick]]
        at[pick] += 1
        if e["kind"] < LOST and e["generation"] < gen_from:
            continue
        out.append(e)
    return out, r


def journal_event(e, lay):
    """An entry as events --json says it (smqctl(1), events): its keys but
    time_ns and text; None for a kind events does not know."""
    kind, q, b = e["kind"], e["queue"], e["board"]
    ev = {"source": "journal", "journal_board": b, "seq": e["seq"],
          "count": 1}
    names = {LOST: "journal_lost", ABANDONED: "journal_abandoned",
             BROKEN: "journal_damaged", RESTARTED: "journal_restarted"}
    if kind in names:
        ev["event"] = names[kind]
        ev["board"] = b
        if kind == LOST:
            ev["count"] = e["a"]
        return ev
    if kind not in range(1, 16):
        return None
    ev["event"] = {
        1: "generation", 2: "generation", 3: "queue_cleared",
        4: "queue_emptied", 5: "board_announced", 6: "system_ready",
        7: "sync_gave_up", 8: "board_rebooted", 9: "receiver_attached",
        10: "receiver_gone", 11: "takeover", 12: "queue_full",
        13: "queue_drained", 14: "messages_corrupt",
        15: "doorbell_unanswered"}[kind]
    if kind == 9 and e["role"] == ROLE_SENDER:
        ev["event"] = "sender_attached"
    if kind == 10 and e["role"] == ROLE_SENDER:
        ev["event"] = "sender_gone"
    # events keeps the queue as a signed int: none for 0xffffffff
    queue = q if q < 1 << 31 else q - (1 << 32)
    if kind in (1, 2, 6):
        board = None            # the window's, or the system's
    elif queue >= 0:
        board = lay.receiver[queue] if queue < lay.queues else None
    else:
        board = b
    if board is not None:
        ev["board"] = board
    if queue >= 0:
        ev["queue"] = queue
    if e["pid"]:
        ev["pid"] = e["pid"]
    a, bb = e["a"], e["b"]
    if kind == 11 and a & 0xffffffff:
        ev["old_pid"] = a & 0xffffffff
    if kind in (1, 2):
        ev["from"], ev["to"] = e["epoch"], e["generation"]
    elif kind == 3:
        ev["from"], ev["to"] = bb, e["epoch"]
    elif kind == 12:
        ev["fill"] = ev["capacity"] = a
    elif ev["event"] == "receiver_attached":
        ev["takeovers"] = 0
    elif kind == 14:
        ev["corrupt"] = 0
    elif kind == 15:
        ev["asleep_ms"], ev["queued"] = a, 0
    ev["generation"] = e["generation"]
    if queue >= 0 and e["role"]:
        ev["role"] = "sender" if e["role"] == ROLE_SENDER else "receiver"
    if kind in (1, 2):
        ev["by"] = "clear" if kind == 2 else "init"
        ev["emptied"], ev["queues"] = a, bb
    elif kind in (3, 4):
        ev["emptied"] = a
    elif kind == 5:
        ev["announces"] = a
    elif kind == 6:
        ev["boards"] = a
    elif kind == 7:
        ev["missing"] = [i for i in range(64) if a >> i & 1]
        ev["withdrew"] = bool(bb)
    elif kind == 13:
        ev["refusals"], ev["waits"] = a, bb
    elif kind == 14:
        ev["sender"], ev["sequence"] = a, bb
    elif kind == 15:
        ev["waited_ms"] = a
    return ev


def journal_events(spec, since="all", abandoned=False, cursor_file=None):
    entries, r = journals(spec, since, abandoned, cursor_file)
    if entries is None:
        return None
    return [ev for ev in (journal_event(e, r.lay) for e in entries) if ev]


def events_of(path):
    """The "source": "journal" lines of events --json, without the keys
    of the writer's clock and words."""
    out = []
    with open(path, "rb") as f:
        for line in f:
            ev = json.loads(line.decode("utf-8", "replace"))
            if ev.get("source") != "journal":
                continue
            ev.pop("time_ns", None)
            ev.pop("text", None)
            out.append(ev)
    return out


def line(ev):
    return json.dumps(ev, sort_keys=True)


def compare_events(path, spec, since, abandoned, per_board, cursor_file):
    theirs = events_of(path)
    mine = journal_events(spec, since, abandoned, cursor_file)
    if mine is None:
        print("  the window fails its static checks: no journal read")
        return 1
    if per_board:
        key = lambda x: x["journal_board"]      # noqa: E731
        theirs = sorted(theirs, key=key)        # a stable sort: in order
        mine = sorted(mine, key=key)
    a, b = [line(x) for x in mine], [line(x) for x in theirs]
    if a == b:
        kinds = sorted(set(x["event"] for x in mine))
        print("  %d journal entries agree (%s)" %
              (len(mine), ", ".join(kinds) or "none"))
        return 0
    import difflib
    for d in difflib.unified_diff(b, a, "events", "reader", lineterm="",
                                  n=1):
        print("  " + d)
    return 1


# ---- comparing with dump ----
# dump says an error in smq_strerror()'s words: the reader names it
ERROR_WORDS = {
    "SMQ_EUNFORMATTED": "window is not formatted",
    "SMQ_EMAGIC": "not an smq window",
    "SMQ_EVERSION": "window format version",
    "SMQ_ECHECKSUM": "window geometry checksum",
    "SMQ_EGEOMETRY": "window geometry out of range",
    "SMQ_ETOOSMALL": "window too small",
    "SMQ_ECORRUPT": "window field out of bounds",
    "SMQ_ESIGNATURE": "entry signature mismatch",
    "SMQ_EINCOMPLETE": "an init or clear did not finish",
    "SMQ_EFEATURE": "the window uses a feature",
    "EBUSY": "busy:",
    "ESTALE": "window was re-initialised",
}
# what the reader cannot know: how dump's own transport wakes it; and the
# limit of a fault of kind known, the feature bits each reader knows;
# what dump does not show: the queued entries that fail their check
SKIP = {"notify", "known", "damaged"}
AGE_SLACK_MS = 1500


def differences(mine, theirs, path=""):
    out = []
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for k in sorted(set(mine) | set(theirs)):
            if k in SKIP:
                continue
            p = path + "." + k if path else k
            if k not in mine:
                out.append("%s: only dump has it (%r)" % (p, theirs[k]))
            elif k not in theirs:
                out.append("%s: only the reader has it (%r)" % (p, mine[k]))
            elif k == "error":
                if not theirs[k].startswith(ERROR_WORDS.get(mine[k], "?")):
                    out.append("%s: reader %s, dump %r" %
                               (p, mine[k], theirs[k]))
            elif k.endswith("age_ms") or k == "stalled_ms":
                a, b = mine[k], theirs[k]
                if (a < 0) != (b < 0) or abs(a - b) > AGE_SLACK_MS:
                    out.append("%s: reader %r, dump %r" % (p, a, b))
            else:
                out += differences(mine[k], theirs[k], p)
    elif isinstance(mine, list) and isinstance(theirs, list):
        if len(mine) != len(theirs):
            out.append("%s: reader %d items, dump %d" %
                       (path, len(mine), len(theirs)))
        for i, (a, b) in enumerate(zip(mine, theirs)):
            out += differences(a, b, "%s[%d]" % (path, i))
    elif mine != theirs or type(mine) is not type(theirs):
        out.append("%s: reader %r, dump %r" % (path, mine, theirs))
    return out


def count_values(x):
    if isinstance(x, dict):
        return sum(count_values(v) for k, v in x.items() if k not in SKIP)
    if isinstance(x, list):
        return sum(count_values(v) for v in x)
    return 1


def layout_of(path):
    """The layout of the window in the file at path, as far as its static
    part reads: what the tests that damage a window poke into."""
    r = Reader(Window("file:" + path))
    try:
        r.static()
    except Fault:
        pass
    return r.lay


def store_checksum(spec):
    """Sign the geometry as it is now (smq-format(7) Checksum)."""
    kind, _, path = spec.partition(":")
    if kind == "split":
        path = "/dev/shm/%s.0" % path
        qt_at = 2 * PAGE + QUEUE_TABLE - BOARD_TABLE
    elif kind == "file":
        qt_at = QUEUE_TABLE
    else:
        raise SystemExit("window spec: file:PATH or split:NAME")
    with open(path, "r+b") as f:
        sb = f.read(PAGE)
        f.seek(qt_at)
        qt = f.read(16 * u32(sb, 28))
        # tables_extra, from the page after the queue table
        f.seek(round_up(qt_at + 16 * u32(sb, 28), PAGE))
        extra = f.read(u64(sb, 192))
        f.seek(60)
        f.write(struct.pack("<I", crc32c(sb[8:60] + sb[192:256] + qt +
                                         extra)))


def main(argv):
    if argv[:1] == ["--boot-hash"]:
        print(boot_hash())
    elif argv[:1] == ["--tag"] and len(argv) == 2:
        print(tag_of(int(argv[1]), boot_hash()))
    elif argv[:1] == ["--checksum"] and len(argv) == 2:
        store_checksum(argv[1])
    elif argv[:1] == ["--compare"] and len(argv) in (3, 4):
        with open(argv[1], "rb") as f:
            theirs = json.loads(f.read().decode("utf-8", "replace"))
        if len(argv) == 4:
            field = (theirs["fault"] or {}).get("field", "")
            if field != argv[3]:
                print("  dump's fault is in %r, not %r" % (field, argv[3]))
                return 1
        for what, got, want in CRC_VECTORS:
            if got != want:
                print("  the page's CRC-32C of %s is 0x%08x, the reader's "
                      "0x%08x" % (what, want, got))
                return 1
        mine = dump(argv[2])
        diff = differences(mine, theirs)
        for d in diff:
            print("  differs: " + d)
        if diff:
            return 1
        for x in mine.get("queue_table", []):
            for d in x.get("damaged", []):
                print("  damaged: queue %d, board %d, sequence %d at %d: "
                      "%d bytes, check 0x%08x, %s" %
                      (x["queue"], d["sender"], d["sequence"], d["offset"],
                       d["size"], d["check"], d["why"]))
        print("  %d values agree" % count_values(mine))
    elif argv[:1] == ["--open"] and len(argv) == 5 and \
            argv[3] in ("sender", "receiver"):
        r = Reader(Window(argv[1]))
        f = r.open_fault(int(argv[2]), argv[3], int(argv[4]))
        if f is None:
            print("ok")
        else:
            print("refused %s %s %d %d" % (f.field, f.err, f.value,
                                           f.limit))
    elif argv[:1] in (["--events"], ["--compare-events"]) and len(argv) >= 2:
        compare = argv[0] == "--compare-events"
        rest = argv[2:] if compare else argv[1:]
        since, abandoned, per_board, cursor = "all", False, False, None
        while len(rest) > 1:
            if rest[0] == "--since" and len(rest) > 2:
                since, rest = rest[1], rest[2:]
            elif rest[0] == "--cursor" and len(rest) > 2:
                cursor, rest = rest[1], rest[2:]
            elif rest[0] == "--abandoned":
                abandoned, rest = True, rest[1:]
            elif rest[0] == "--per-board":
                per_board, rest = True, rest[1:]
            else:
                break
        if len(rest) != 1:
            sys.stderr.write(__doc__)
            return 2
        if compare:
            return compare_events(argv[1], rest[0], since, abandoned,
                                  per_board, cursor)
        for ev in journal_events(rest[0], since, abandoned, cursor) or []:
            print(line(ev))
    elif len(argv) == 1:
        json.dump(dump(argv[0]), sys.stdout, indent=2)
        print()
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
