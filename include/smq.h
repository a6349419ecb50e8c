/*
 * libsmq: single-reader message queues in a memory window shared by boards
 * on a PCI/PCIe hierarchy (or, by default, by processes of one host).
 *
 * Every function returns 0 or a negative errno (or one of the SMQ_E* codes
 * below, also negated); none prints and none exits.  smq_strerror() turns a
 * code into words.  The window format is described in smq(7), the API in
 * libsmq(3).
 */
#ifndef SMQ_H
#define SMQ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version.  A program built against one version runs with
 * a library of the same major version and the same or a later minor one:
 * smq_version_check() says so at run time, SMQ_VERSION_AT_LEAST() at
 * compile time. */
#define SMQ_VERSION_MAJOR 2
#define SMQ_VERSION_MINOR 0
#define SMQ_VERSION_PATCH 0
#define SMQ_VERSION_AT_LEAST(major, minor) \
	(SMQ_VERSION_MAJOR > (major) || \
	 (SMQ_VERSION_MAJOR == (major) && SMQ_VERSION_MINOR >= (minor)))

/* The conventions of every call (libsmq(3), CONVENTIONS):
 * - it returns 0 (or a count, where its page says so) or a negative errno
 *   value, or a negated SMQ_E* code; it never prints and never exits;
 * - the handle it acts on comes first, output parameters come last, and
 *   a call that waits for a message or for room takes timeout_ms after
 *   them, as its last parameter (smq_receive(), smq_group_peek());
 * - a queue number is unsigned in a call and uint32_t in a struct; every
 *   queue is SMQ_ALL_QUEUES where a call takes it, none SMQ_NO_QUEUE;
 * - a struct crosses the interface with its size beside it: the caller
 *   passes sizeof() of the struct it was built with.  An output struct is
 *   zeroed to that size and filled as far as both sides know it; in an
 *   input struct, bytes past what the library knows must be zero
 *   (-E2BIG otherwise).  Structs only ever grow at their end; a size
 *   under the struct as it was when the call came (its fields marked
 *   "since" a later version left out) is -EINVAL;
 * - a handle serves the process that opened it: in a child of fork(),
 *   every call on one it inherited is -EBADF and does nothing;
 * - a call that waits returns -EINTR once a signal handler ran while it
 *   slept (libsmq(3), Signals). */

#define SMQ_FORMAT_VERSION 3
#define SMQ_MAX_BOARDS 64
#define SMQ_MAX_QUEUES 65535
#define SMQ_MAX_ENTRIES (1u << 20)
#define SMQ_MAX_ENTRY_SIZE (16u << 20)
#define SMQ_DEFAULT_WINDOW "shm:smq"
#define SMQ_WAIT_FOREVER (-1)
/* A queue number: every queue, where a call takes that (smq_clear());
 * none, in a struct (struct smq_holdout, smq_worker, smq_journal_entry) */
#define SMQ_ALL_QUEUES 0xffffffffu
#define SMQ_NO_QUEUE 0xffffffffu

/* Codes of our own, returned negated like errno values; smq_strerror()
 * words them and every errno value the library returns. */
enum smq_error {
	SMQ_EUNFORMATTED = 2000, /* the window was never formatted (all zero) */
	SMQ_EMAGIC = 2001,       /* the window does not start with the magic */
	SMQ_EVERSION = 2002,     /* a format version this library does not
				    read (it reads SMQ_FORMAT_VERSION) */
	SMQ_ECHECKSUM = 2003,    /* the geometry checksum does not match */
	SMQ_EGEOMETRY = 2004,    /* a geometry field is out of range */
	SMQ_ETOOSMALL = 2005,    /* the geometry does not fit in the window */
	SMQ_ECORRUPT = 2006,     /* a table, queue or entry field is out of
				    bounds */
	SMQ_ESIGNATURE = 2007,   /* an entry's sequence signature is wrong */
	SMQ_EINCOMPLETE = 2008,  /* an init or clear did not finish: run
				    clear or init on board 0 */
	SMQ_EHELD = 2009,        /* init, clear: a board did not leave a call
				    begun under the old generation
				    (smq_holdout() says which) */
	SMQ_ENOTWINDOW = 2010,   /* init, smq_remove: the target holds data
				    that is not an smq window
				    (SMQ_OPEN_FORCE lets init overwrite it) */
	SMQ_EFOREIGN = 2011,     /* smq_open with SMQ_OPEN_CREATE, init: the
				    window's object belongs to another user
				    or others may write it (SMQ_OPEN_FORCE
				    makes it ours, 0600) */
	SMQ_EFEATURE = 2012,     /* the window uses an incompatible feature
				    this library does not know (smq(7),
				    features_incompat) */
	SMQ_ENOTSENDER = 2013,   /* smq_queue_open as a sender: this board is
				    not among the queue's senders
				    (smq_queue_info().senders) */
	SMQ_EATWORK = 2014,      /* init, clear: processes are at work on what
				    it would empty (smq_workers() names them;
				    SMQ_OPEN_FORCE lets it go ahead) */
	SMQ_EPAYLOAD = 2015,     /* smq_peek, smq_receive: the next message
				    is damaged (a window formatted with
				    SMQ_SHAPE_CHECKSUM): it failed its check,
				    or its size is past the entry size (*len
				    0).  It was taken off the ring, never
				    handed over; *len and *sender say whose */
	SMQ_EHOLDING = 2016      /* since 1.2: smq_queue_open as a receiver,
				    smq_group_open to receive: this process
				    holds the queue's receiver already, by
				    another of its handles (one receiver
				    handle per queue) */
};

struct smq_window;
struct smq_queue;

/* The shape of a window.  receivers[q] is the board that receives queue q;
 * NULL means q % boards (queue 0 is the system board's, as in the
 * SimpleMessageQueue paper).  Besides these queues, init reserves one
 * diagnostic queue for each board (smq_window_info().diag_queues), on
 * which every board may send.  This struct never grows (struct
 * smq_window_info holds one): what a window has beyond it is in struct
 * smq_shape. */
struct smq_geometry {
	uint32_t boards;     /* 1 to SMQ_MAX_BOARDS */
	uint32_t queues;     /* 1 to SMQ_MAX_QUEUES - boards */
	uint32_t entries;    /* per sending board and queue; a power of two,
				1 to SMQ_MAX_ENTRIES */
	uint32_t entry_size; /* largest payload in bytes, at most
				SMQ_MAX_ENTRY_SIZE; smq_init refuses 0 (a
				window of empty messages only), which
				smq_layout_size and a reader accept */
	const uint16_t *receivers;
};

/* Since 1.1: a group, a name for a set of application queues that every
 * board sees alike (smq_group_open()).  This struct never grows. */
#define SMQ_MAX_GROUPS 1024
#define SMQ_GROUP_MAX_MEMBERS 64
#define SMQ_GROUP_NAME_MAX 31    /* of A-Z a-z 0-9 . _ - */
struct smq_group_def {
	const char *name;
	const uint32_t *queues;  /* distinct application queues */
	uint32_t count;          /* 1 to SMQ_GROUP_MAX_MEMBERS */
};

/* Since 1.1: a window's whole shape, for smq_init_shape() and
 * smq_shape_size().  senders[q] has bit b set for each board b that may
 * send on application queue q: only those get a lane (memory) in it; NULL,
 * or a mask of 0, means every board. */
struct smq_shape {
	struct smq_geometry geometry;
	const uint64_t *senders;
	uint32_t flags;          /* SMQ_SHAPE_* */
	const struct smq_group_def *groups; /* ngroups of them (feature
				    "groups"): names for sets of queues */
	uint32_t ngroups;        /* 0 to SMQ_MAX_GROUPS */
	/* since 1.2 */
	uint32_t reserved;       /* ignored: where 1.1's struct ended in
				    padding */
	uint32_t journal;        /* entries of each board's journal (feature
				    "journal"), SMQ_JOURNAL_MIN to
				    SMQ_JOURNAL_MAX, a power of two; 0:
				    SMQ_JOURNAL_DEFAULT; none with
				    SMQ_SHAPE_NO_JOURNAL */
};
/* Every entry carries a CRC-32C of its header and payload, which the
 * sender computes from its own buffer and the receiver checks before it
 * hands the message over (smq(7), feature "checksum"). */
#define SMQ_SHAPE_CHECKSUM 0x1u
/* Since 1.2: init may grow a window object past the size it had before
 * smq first formatted it (a QEMU memory-backend file, an object made with
 * truncate -s): without it such a window keeps its size (-ENOSPC). */
#define SMQ_SHAPE_GROW 0x4u
/* Since 1.2: no journal (smq_shape.journal) */
#define SMQ_SHAPE_NO_JOURNAL 0x8u
/* Entries of each board's journal: a power of two */
#define SMQ_JOURNAL_MIN 16
#define SMQ_JOURNAL_MAX 65536
#define SMQ_JOURNAL_DEFAULT 256
/* Format features (smq_window_info().features_incompat): a window's bit
 * that a reader does not know makes it refuse the window. */
#define SMQ_FEATURE_CHECKSUM 0x1u  /* entries carry a CRC-32C */
/* Since 1.2: every board's region holds its journal: what the board's
 * processes did, which any board can read (smq_journal_next()) */
#define SMQ_FEATURE_JOURNAL 0x2u
/* Since 2.0: a sender may leave out its full barrier after a message
 * where the other side of both pairs it serves pays with membarrier(2)
 * instead (smq(7), Barriers left to the other side); init sets it */
#define SMQ_FEATURE_MEMBARRIER 0x4u
/* ...and compatible ones (features_compat), which a reader that does not
 * know them may ignore. */
#define SMQ_FEATURE_GROUPS 0x1u    /* the window names groups of queues */
/* Since 1.1: every board's region ends in a scratch area that only
 * tests of the window's map and of the raw link write (smqctl check;
 * smq(7), feature "scratch"); nothing of the
 * message path reads or writes it.  smqctl init reserves one unless told
 * not to; smq_init_shape() only with this flag. */
#define SMQ_SHAPE_SCRATCH 0x2u
/* features_compat: a reader ignores a bit it does not know */
#define SMQ_FEATURE_SCRATCH 0x2u   /* scratch areas (SMQ_SHAPE_SCRATCH) */

/* Since 1.1: where a shape's bytes go (smq_shape_parts()).  The parts add
 * up to total. */
struct smq_shape_parts {
	uint64_t total;          /* smq_shape_size() */
	uint64_t superblock;     /* its page */
	uint64_t control;        /* one page per possible board
				    (SMQ_MAX_BOARDS): fixed places */
	uint64_t tables;         /* board table and queue table, to a page */
	uint64_t app_lanes;      /* application queues: senders' lane lines */
	uint64_t app_rings;      /* ...their receive areas and rings */
	uint64_t diag_lanes;     /* diagnostic queues: senders' lane lines */
	uint64_t diag_rings;     /* ...their receive areas and rings */
	uint64_t padding;        /* each board's body rounded up to a page */
	uint64_t features;       /* what the shape's features add */
	uint64_t region[SMQ_MAX_BOARDS]; /* board b's region: its control
				    page and body; board 0's also the
				    superblock and the tables */
};

/* smq_open() flags */
#define SMQ_OPEN_CREATE 0x1 /* create the window if it does not exist */
#define SMQ_OPEN_RAW 0x2    /* attach even if the window fails validation:
			       then smq_init (board 0), smq_validate,
			       smq_window_info (what is known) and
			       smq_close; the other calls return the fault
			       (-SMQ_EUNFORMATTED on an unformatted window) */
#define SMQ_OPEN_FORCE 0x4  /* with CREATE: take a window object that is
			       owned by another user or writable by others
			       (made ours, 0600); let smq_init overwrite data
			       that is not an smq window; let smq_init and
			       smq_clear go ahead while processes are at work
			       (SMQ_EATWORK) */
#define SMQ_OPEN_READONLY 0x8 /* a monitor: maps the window read-only (where
			       the transport can), claims no board and no
			       handle slot (board is ignored), never writes;
			       the snapshots and smq_validate follow every
			       init and clear, and return -EIDRM once the
			       window was removed.  Calls that write return
			       -EROFS. */
#define SMQ_NO_BOARD 0xffffffffu /* smq_window_info().board of a monitor */

/* Attach to the window named by spec ("shm:NAME", "file:PATH",
 * "split:NAME", "pci:BDF/BAR", "ivshmem:SOCKET"; NULL: smq_default_window())
 * as board.  A handle may be used by many threads of one process; it does
 * not survive fork() (in the child every call on it, closing included,
 * is -EBADF: the child opens its own) nor exec().  Errors that
 * go away by themselves (the window not created or not formatted yet,
 * being formatted now) are those smq_transient() accepts. */
int smq_open(const char *spec, unsigned board, unsigned flags,
	     struct smq_window **w);
/* Permission bits of the window's object (shm, file); -EOPNOTSUPP on a
 * transport without them (pci).  Windows are created 0600. */
int smq_set_mode(struct smq_window *w, unsigned mode);
/* -EBUSY while queue or group handles are open on w: they reach the
 * window through it (close them first; w stays as it was). */
int smq_close(struct smq_window *w);
/* Remove the window's objects (the shm object, the file, every region of
 * a split window).  Handles open on it keep their memory until closed;
 * monitors see -EIDRM.  -SMQ_ENOTWINDOW: the object holds data that is
 * not an smq window (left alone); -EOPNOTSUPP: a device (pci, ivshmem). */
int smq_remove(const char *spec);

/* How long init and clear wait for every board to leave the calls it
 * began under the old generation (default 5000 ms; SMQ_WAIT_FOREVER). */
#define SMQ_TIMEOUT_HANDSHAKE 1
/* Since 1.2: how long a queue may hold messages with its bottom unmoved,
 * as this handle sees it, before smq_queue_info() calls it stalled
 * (default SMQ_STALL_DEFAULT_MS). */
#define SMQ_TIMEOUT_STALL 2
#define SMQ_STALL_DEFAULT_MS 5000
int smq_set_timeout(struct smq_window *w, unsigned what, int timeout_ms);

/* The system board (board 0) formats the window: every queue empty, a new
 * generation.  It first tells every board its handle is stale and waits
 * until each has left the calls it began before (a handshake, not a
 * timer): no write of a stale call lands in the new layout.  Boards
 * attached under the old generation get -ESTALE.  A board that does not
 * let go within the handshake timeout makes it fail with -SMQ_EHELD and
 * leave the window as it was; another init or clear in progress gives
 * -EALREADY.  An init or clear that was killed is finished by the next. */
int smq_init(struct smq_window *w, const struct smq_geometry *g,
	     size_t size);
/* smq_init with a whole shape (since 1.1: sender sets). */
int smq_init_shape(struct smq_window *w, const struct smq_shape *s,
		   size_t size);
/* Empty every queue (SMQ_ALL_QUEUES): a new generation, every board attaches
 * and announces itself again.  Or empty queue alone: only the handles of
 * that queue are told (-ESTALE: open the queue again); the generation, the
 * boards and the other queues go on.  Either is refused with
 * -SMQ_EATWORK while processes of others are at work on what it would
 * empty, unless the handle was opened with SMQ_OPEN_FORCE. */
int smq_clear(struct smq_window *w, unsigned queue);
/* Bytes of window a geometry needs; a whole shape's (since 1.1). */
int smq_layout_size(const struct smq_geometry *g, size_t size,
		    uint64_t *bytes);
int smq_shape_size(const struct smq_shape *s, size_t size, uint64_t *bytes);
/* Since 1.1: the same, part by part (-EINVAL: no such window). */
int smq_shape_parts(const struct smq_shape *s, size_t size,
		    struct smq_shape_parts *parts, size_t psize);

/* After -SMQ_EHELD, -EALREADY or -SMQ_EATWORK (init, clear), or -EBUSY
 * from smq_synchronize (another process announces the board): who held
 * on. */
struct smq_holdout {
	unsigned board;
	uint32_t pid;
	int same_host;           /* pid is of this host */
	char host[64];           /* the board's host name, if known; always
				    NUL-terminated */
	/* since 1.1 */
	uint32_t queue;          /* -SMQ_EHELD: the queue of the call that
				    held on, SMQ_NO_QUEUE a window handle's
				    (on any queue); else SMQ_NO_QUEUE (2.0:
				    an int, -1, before) */
};
int smq_holdout(struct smq_window *w, struct smq_holdout *h, size_t size);

/* Since 1.2: what the last smq_init_shape(), smq_clear() or dry run of
 * either through w emptied (or would empty): the messages waiting in each
 * queue at the moment it was emptied, counted after the handshake, when
 * no call was in flight any more.  known is 0 when the window held nothing
 * that could be counted (a new window, data that is not one, another
 * format).  This struct never grows. */
#define SMQ_EMPTIED_MOST 8
struct smq_emptied_queue {
	uint32_t queue;
	uint32_t pad;
	uint64_t messages;
};
struct smq_emptied {
	int known;
	uint32_t queues;         /* queues that held messages */
	uint64_t messages;       /* in all */
	uint32_t listed;         /* entries of most[] filled */
	uint32_t pad;
	struct smq_emptied_queue most[SMQ_EMPTIED_MOST]; /* the queues that
				    held most, most first (ties: lower queue) */
};
int smq_emptied(struct smq_window *w, struct smq_emptied *e, size_t size);
/* Since 1.2: the decision of smq_init_shape() and smq_clear(), made by the
 * same code, with nothing written: 0 if it would go ahead (smq_emptied()
 * then says what it would empty now), else the error it would return
 * (smq_holdout() names who holds on).  What no look can tell in advance,
 * whether every board leaves its calls within the handshake
 * (-SMQ_EHELD), is not part of it. */
int smq_init_dry_run(struct smq_window *w, const struct smq_shape *s,
		     size_t size);
int smq_clear_dry_run(struct smq_window *w, unsigned queue);

/* Startup: a board announces itself (the SimpleMessageQueue paper's
 * boardInitialized); every board then synchronises.  On board 0 this
 * waits for all boards and then declares the system ready; on another
 * board it waits for that.  poll_ms is the paper's "nice".  When
 * smq_synchronize() returns -ETIMEDOUT, *pending (if not NULL) has bit b
 * set for each board that was still missing.  With SMQ_SYNC_NEW_GENERATION the generation this
 * handle attached under is taken as an earlier start's, even if board 0
 * made it a moment before (open before board 0 may format, as at boot):
 * it first waits for board 0 to format the window anew, then attaches to
 * the new generation (the handle must have no queue open: -EBUSY),
 * announces and waits as above.  A board's process that restarts opens, and
 * synchronises again (a cheap no-op on a ready window). */
#define SMQ_SYNC_NEW_GENERATION 0x1
/* On smq_synchronize()'s -ETIMEDOUT the board takes its announcement
 * back (it is absent again: board 0 does not count a board nobody is
 * starting), unless board 0 declared the system ready meanwhile (then the
 * call returns 0).  With SMQ_SYNC_STAY (since 1.1) it stays announced: the
 * caller calls again. */
#define SMQ_SYNC_STAY 0x2
int smq_announce(struct smq_window *w);
int smq_synchronize(struct smq_window *w, unsigned flags, int timeout_ms,
		    int poll_ms, uint64_t *pending);
/* A board is alive while its heartbeat moves: waits beat by themselves;
 * an application that does not wait or send for a while should call this
 * at least once a second. */
int smq_heartbeat(struct smq_window *w);

/* Queues */
enum smq_role { SMQ_SENDER = 1, SMQ_RECEIVER = 2 };
#define SMQ_POLL 0x1  /* receiver: busy-poll, never sleep (lowest latency) */
#define SMQ_SLEEP 0x2 /* receiver: sleep at once, do not spin first */

int smq_queue_open(struct smq_window *w, unsigned queue, enum smq_role role,
		   unsigned flags, struct smq_queue **q);
int smq_queue_close(struct smq_queue *q);
/* Spin this long before sleeping (receiver; default 20 us). */
int smq_queue_set_spin(struct smq_queue *q, unsigned spin_ns);
/* How this handle waits, in words for a person: the doorbell it sleeps on
 * (a futex, an ivshmem or MSI-X vector and its peer ID), or that it polls
 * and why.  The words are not an interface: do not parse them. */
int smq_queue_notify(struct smq_queue *q, char *buf, size_t len);

/* timeout_ms: 0 returns -EAGAIN at once, SMQ_WAIT_FOREVER waits forever. */
int smq_send(struct smq_queue *q, const void *data, size_t len, int timeout_ms);
/* On -EMSGSIZE the message stays queued and *len says how big it is. */
int smq_receive(struct smq_queue *q, void *buf, size_t cap, size_t *len,
		unsigned *sender, int timeout_ms);
/* At-least-once receive: smq_peek() returns the next message in place
 * (*data points into the ring, valid until smq_commit() or the next
 * smq_peek()); it stays queued until smq_commit() takes it.  A receiver
 * that dies between the two leaves it for the next receiver. */
int smq_peek(struct smq_queue *q, const void **data, size_t *len,
	     unsigned *sender, int timeout_ms);
int smq_commit(struct smq_queue *q);

/* Since 1.1: bursts, many messages per call with one fence and one update
 * of top (send) or bottom (receive) for them all.  smq_send_burst() sends
 * msgs[0], msgs[1]... in order, as many as the ring has room for: it waits
 * up to timeout_ms for room for the first, not for the others, and returns
 * how many it sent (at least 1), or an error with none sent.  Every
 * message is checked before any is written (-EMSGSIZE, -EINVAL).
 * smq_receive_burst() takes up to n messages of one sending board (the one
 * whose turn it is): the first waited for as smq_receive() waits, the
 * others only if they are there and fit their buffers (bufs[i].iov_len
 * bytes); lens[i] and senders[i] (NULL: not wanted) say each one's size
 * and board; it returns how many it took, or an error as smq_receive()
 * (for the first message: -EMSGSIZE leaves it queued with lens[0] its
 * size, -SMQ_EPAYLOAD takes it off). */
int smq_send_burst(struct smq_queue *q, const struct iovec *msgs, unsigned n,
		   int timeout_ms);
int smq_receive_burst(struct smq_queue *q, struct iovec *bufs, unsigned n,
		      size_t *lens, unsigned *senders, int timeout_ms);

/* Since 1.1: loans, a send written in place.  smq_loan() reserves the
 * next entry of the ring for a message of at most len bytes, waiting for
 * room as smq_send() does, and stores in *data where its payload goes: in
 * the receiver's memory, across the bus on PCI, so write it and never read
 * it.  smq_loan_submit() publishes its first len bytes as one message;
 * smq_loan_abort() gives the entry back unsent.  From the loan to its
 * submit or abort the handle is in a call: init and clear wait for it
 * (smq_init(3)), and other sends on the handle return -EINPROGRESS;
 * smq_queue_close() gives it back unsent.  A process
 * that dies holding a loan publishes nothing.  smq_loan_write() copies n
 * bytes from src to offset of the loan; on a window with checksums
 * (SMQ_FEATURE_CHECKSUM) it is the only way to fill one: it sums the bytes
 * as it copies them, in order from offset 0 (-EINVAL otherwise), and
 * smq_loan_submit() takes exactly the bytes summed, since the window is
 * never read back to sum it. */
int smq_loan(struct smq_queue *q, size_t len, void **data, int timeout_ms);
int smq_loan_write(struct smq_queue *q, size_t offset, const void *src,
		   size_t n);
int smq_loan_submit(struct smq_queue *q, size_t len);
int smq_loan_abort(struct smq_queue *q);

/* Since 1.1: groups.  A group handle opens every member queue in one
 * role: by the name init gave the set (smq_group_def; -ESRCH: no such
 * group), or by a list of queues.  Members are numbered in the group's
 * order; smq_group_member() says a member's queue.
 * smq_group_send() sends the message to each member whose bit is set in
 * *pending (member i: bit i; SMQ_GROUP_ALL, or pending NULL: every one):
 * first to each without waiting, then to those that were full with what
 * is left of timeout_ms, so that a stopped receiver costs the others
 * nothing.  It clears the bit of each member that took the message and
 * returns 0 when all did; else the first error (-ETIMEDOUT: some were
 * full until the end), *pending naming those that did not: called again
 * with it, it sends to those only, never twice to one.
 * smq_group_receive() returns the next message of any member, the members
 * taking turns (after a member's message the turn passes to the next, so
 * each backlogged member gets one within a round of the set); *queue says
 * whose.  It waits as smq_receive() does, sleeping on one doorbell for the
 * whole set (flags as smq_queue_open(): SMQ_POLL, SMQ_SLEEP).  Every
 * member must be received by this board (-EPERM).  smq_group_peek() and
 * smq_group_commit() are its at-least-once form, as smq_peek() and
 * smq_commit() are smq_receive()'s. */
struct smq_group;
#define SMQ_GROUP_ALL (~(uint64_t)0)
struct smq_group_info {
	char name[32];           /* NUL-terminated */
	uint32_t index;          /* 0 to smq_window_info().groups - 1 */
	uint32_t count;          /* members */
	uint32_t queues[SMQ_GROUP_MAX_MEMBERS];
};
int smq_group_open(struct smq_window *w, const char *name, enum smq_role role,
		   unsigned flags, struct smq_group **g);
int smq_group_open_queues(struct smq_window *w, const unsigned *queues,
			  unsigned n, enum smq_role role, unsigned flags,
			  struct smq_group **g);
int smq_group_close(struct smq_group *g);
int smq_group_member(struct smq_group *g, unsigned member);
int smq_group_send(struct smq_group *g, const void *data, size_t len,
		   uint64_t *pending, int timeout_ms);
int smq_group_receive(struct smq_group *g, void *buf, size_t cap,
		      size_t *len, unsigned *sender, unsigned *queue,
		      int timeout_ms);
int smq_group_peek(struct smq_group *g, const void **data, size_t *len,
		   unsigned *sender, unsigned *queue, int timeout_ms);
int smq_group_commit(struct smq_group *g);
/* The group index of the window (-ENOENT past the last one). */
int smq_group_info(struct smq_window *w, unsigned index,
		   struct smq_group_info *info, size_t size);

/* Snapshots for dump and top.  They read the whole window, across the bus:
 * use them for diagnostics, not in a message path. */
enum smq_system_state { SMQ_SYS_FORMATTING = 0, SMQ_SYS_FORMATTED = 1,
			SMQ_SYS_READY = 2 };
enum smq_board_state { SMQ_BOARD_ABSENT = 0, SMQ_BOARD_INITIALIZED = 1,
		       SMQ_BOARD_READY = 2 };
/* How a board's waiters are woken. */
enum smq_bell_kind {
	SMQ_BELL_NONE = 0,       /* no doorbell: the waiter naps and looks */
	SMQ_BELL_FUTEX = 1,      /* a futex on a word: one host's kernel */
	SMQ_BELL_IVSHMEM = 2     /* an ivshmem peer's interrupt vector */
};

struct smq_window_info {
	char transport[16];      /* NUL-terminated, as every string here */
	char name[256];
	unsigned board;          /* the board this handle is; SMQ_NO_BOARD
				    for a monitor */
	uint32_t version;
	struct smq_geometry geometry; /* application queues; receivers NULL */
	uint32_t diag_queues;    /* diagnostic queues, after the application
				    ones: board b receives queues + b */
	uint32_t diag_entries, diag_entry_size; /* their shape: at most 16
				    entries of at most 64 KiB */
	uint64_t window_size;    /* bytes the layout uses */
	uint64_t mapped_size;    /* bytes mapped */
	uint64_t generation;
	uint32_t system_state;   /* enum smq_system_state */
	uint32_t maint_phase;    /* 0, or an init or clear under way (1:
				    waiting for boards, 2: writing) */
	uint32_t maint_pid;      /* its process */
	int maint_alive;         /* 1 it runs, 0 it died, -1 another host */
	uint64_t format_time_ns; /* CLOCK_REALTIME of the last init or clear */
	char notify[64];         /* how this handle's waits are woken */
	unsigned char first_bytes[16]; /* the window's first bytes, as found */
	/* since 1.1 */
	uint32_t features_incompat; /* the window's format features (smq(7)):
				    SMQ_FEATURE_* */
	uint32_t features_compat;
	uint64_t fixed_size;     /* bytes the window holds, which init cannot
				    grow: a BAR, an ivshmem region, an object
				    another program sized; 0: init grows the
				    object to what the layout needs */
	uint32_t groups;         /* groups the window names (feature groups):
				    smq_group_info() 0 to groups - 1 */
	uint32_t not_window;     /* 1: the object holds data that is not an
				    smq window, which smq_init() refuses
				    (-SMQ_ENOTWINDOW) unless forced */
	/* since 1.2 */
	uint32_t pad;
	uint64_t emptied;        /* messages init and clear emptied, in all,
				    since smq first formatted the window */
	/* since 2.0 */
	uint64_t incarnation;    /* which making of the window this is, for
				    a monitor to compare: chosen at random
				    when its journal was made (board 0's,
				    smq(7) Journal), kept by the inits and
				    clears that keep the journal; another one
				    is the window made again, or formatted
				    with a journal of another size; 0: no
				    journal */
};

struct smq_bell_info {
	unsigned kind;           /* enum smq_bell_kind */
	unsigned peer, vector;   /* SMQ_BELL_IVSHMEM: the doorbell's peer ID
				    and vector; 0 otherwise */
};

/* What a board's processes are doing (smq_board_info().activity), judged
 * by liveness: on this host by their pids, on another by the board's
 * heartbeat, which moves while any of them is inside a call. */
enum smq_activity {
	SMQ_ACTIVITY_UNKNOWN = 0,  /* another host, not seen long enough */
	SMQ_ACTIVITY_NONE = 1,     /* no process attached: at rest (once the
				      board is ready, nothing is wrong) */
	SMQ_ACTIVITY_ATTACHED = 2, /* processes attached, no queue open */
	SMQ_ACTIVITY_WORKING = 3,  /* a queue open: a receiver or a sender */
	SMQ_ACTIVITY_DEAD = 4      /* attached processes that died without
				      closing (killed; on another host: its
				      heartbeat stopped) */
};

struct smq_board_info {
	uint32_t state;          /* enum smq_board_state */
	uint32_t pid;            /* the process that last announced or beat */
	uint64_t generation;     /* the generation it joined under */
	uint64_t heartbeat;      /* heartbeat count: moves while it lives */
	int64_t heartbeat_age_ms; /* since this handle last saw it move, on
				     this host's own clock; -1 unknown */
	int same_host;           /* on this host (pid means something here) */
	int alive;               /* 1 a process of it lives, 0 none does, -1
				    not known yet (seen once, another host) */
	struct smq_bell_info doorbell;
	char host[64];
	/* since 1.1 */
	int activity;            /* enum smq_activity */
	uint32_t announcer_pid;  /* announcing it now (in sync), 0 none */
	uint32_t announces;      /* times it announced this generation */
	uint32_t handles;        /* handles open by processes not known dead */
	uint32_t queue_handles;  /* ...of which queue handles */
	uint32_t dead_handles;   /* handles left by processes that died */
	uint64_t boot;           /* its host's boot hash: a reboot changes it */
	/* since 1.2 */
	uint32_t journal_slots;  /* entries of its journal; 0: none */
	uint32_t pad;
	uint64_t journal_head;   /* the next sequence it writes: entries
				    written so far + 1 */
	uint64_t journal_incarnation;
};
#define SMQ_HEARTBEAT_TIMEOUT_MS 5000

struct smq_lane_info {          /* one sending board's lane of a queue */
	uint64_t top, bottom;
	uint64_t fill;           /* messages waiting in this lane */
	uint64_t messages, bytes;
	uint64_t full_waits, doorbells;
	uint32_t lock_pid;       /* sender in a send right now, 0 none */
	int sender_waiting;
	/* since 1.1 */
	uint64_t full_refusals;  /* sends that found the lane full and were
				    not to wait (a timeout of 0): 32 bits in
				    the window, which wrap */
};

#define SMQ_QUEUE_DIAGNOSTIC 0x1 /* reserved for pingpong and bench */
/* A queue's receiver (smq_queue_info().receiver_state), judged by
 * liveness: on this host by its pid; on another by its own heartbeat,
 * which moves at least once a second while it waits in a call. */
enum smq_receiver_state {
	SMQ_RECEIVER_UNKNOWN = 0,  /* another host, not seen long enough */
	SMQ_RECEIVER_NONE = 1,     /* no receiver has the queue open */
	SMQ_RECEIVER_WAITING = 2,  /* in a receive call, waiting */
	SMQ_RECEIVER_AWAY = 3,     /* open and alive, not waiting for a
				      message (between calls, or taking one) */
	SMQ_RECEIVER_DEAD = 4      /* its process died with the queue open */
};
struct smq_queue_info {
	uint32_t index, receiver;
	uint32_t flags;          /* SMQ_QUEUE_DIAGNOSTIC */
	uint32_t receiver_pid;   /* 0 when no receiver is open */
	int receiver_alive;      /* 1, 0, or -1 on another host */
	int sleeping;
	uint64_t fill;           /* the fullest lane: what a sender meets */
	uint64_t capacity;       /* entries of one lane */
	uint32_t entry_size;     /* largest message */
	uint64_t queued;         /* messages waiting, all lanes */
	uint64_t top, bottom;    /* sums over all lanes */
	uint64_t sent, bytes_sent, full_waits, doorbells;   /* all senders */
	uint64_t received, bytes_received, sleeps, wakeups; /* the receiver */
	/* since 1.1 */
	uint64_t senders;        /* bit b: board b may send (has a lane) */
	int receiver_state;      /* enum smq_receiver_state */
	int64_t receiver_age_ms; /* since this handle saw its heartbeat move;
				    -1 unknown */
	uint64_t receiver_beats; /* its heartbeat count */
	uint64_t receiver_opens; /* receivers that opened the queue */
	uint64_t receiver_takeovers; /* ...taking a dead receiver's claim */
	uint64_t epoch;          /* the queue's epoch: a clear changes it */
	uint64_t full_refusals;  /* all lanes' (smq_lane_info()) */
	uint64_t corrupt;        /* messages that failed their check, taken
				    off the ring (SMQ_EPAYLOAD); wraps */
	/* since 1.2 */
	int64_t stalled_ms;      /* how long this handle has seen the queue
				    hold messages with its bottom unmoved, on
				    this host's clock; 0 while it is empty or
				    its receiver takes messages, and at the
				    first look */
	int stalled;             /* stalled_ms reached the handle's stall
				    time (SMQ_TIMEOUT_STALL), whatever the
				    receiver's state says */
	int receiver_stopped;    /* 1: the receiver's process (of this host)
				    is stopped, by a signal or a debugger; 0:
				    it runs; -1: cannot be told (another host,
				    or no receiver) */
};

/* Who is at work on the window: each handle open by a process not known
 * to be dead, on every board (smq_workers()). */
struct smq_worker {
	uint32_t board;
	uint32_t pid;
	uint32_t queue;          /* a queue handle's queue, or SMQ_NO_QUEUE */
	uint32_t role;           /* a queue handle's enum smq_role, else 0 */
	int alive;               /* 1 yes, -1 not known (another host) */
	int in_call;             /* inside a call now */
	int same_host;
	char host[64];           /* the board's host name, if known */
};

/* Each returns 0, -ESTALE with the snapshot filled (the window was formatted
 * anew since this handle attached; a monitor's handle attaches to the new
 * layout at its next snapshot, and says -ESTALE only while an init or
 * clear is under way), -EIDRM (a monitor's window was removed), or another
 * error (a monitor's: the fault it found attaching again); on an error
 * the struct is zeroed but for what was known.  Threads may share a
 * handle: a monitor's snapshots take turns while it attaches again. */
int smq_window_info(struct smq_window *w, struct smq_window_info *info,
		    size_t size);
int smq_board_info(struct smq_window *w, unsigned board,
		   struct smq_board_info *info, size_t size);
int smq_queue_info(struct smq_window *w, unsigned queue,
		   struct smq_queue_info *info, size_t size);
/* -ENOENT: the board is not among the queue's senders (it has no lane) */
int smq_lane_info(struct smq_window *w, unsigned queue, unsigned sender,
		  struct smq_lane_info *info, size_t size);
/* Stores up to max workers in list (each size bytes: the caller's
 * sizeof(struct smq_worker)) and returns how many there are, board by
 * board. */
int smq_workers(struct smq_window *w, struct smq_worker *list, unsigned max,
		size_t size);

/* Since 1.2: the journal (feature journal, smq(7) Journal): each board's
 * processes write down what they did in a ring in their board's region,
 * which any board reads.  Kinds written: */
enum smq_journal_kind {
	SMQ_JOURNAL_FORMAT = 1,       /* init formatted the window: a the
					 messages it emptied, b the queues
					 that held them; epoch the generation
					 before */
	SMQ_JOURNAL_CLEAR = 2,        /* a clear of every queue: as FORMAT */
	SMQ_JOURNAL_CLEAR_QUEUE = 3,  /* a clear of queue: a the messages it
					 emptied, b the epoch before; epoch the
					 new one */
	SMQ_JOURNAL_EMPTIED = 4,      /* after FORMAT or CLEAR: queue held a
					 (the SMQ_EMPTIED_MOST that held most) */
	SMQ_JOURNAL_ANNOUNCE = 5,     /* the board announced itself: a its
					 announcements this generation */
	SMQ_JOURNAL_READY = 6,        /* board 0 declared the system ready: a
					 the boards */
	SMQ_JOURNAL_GAVE_UP = 7,      /* a sync gave up: a the boards still
					 missing (bit b), b 1 if it took its
					 announcement back */
	SMQ_JOURNAL_BOOT = 8,         /* the first entry of a new boot of the
					 board's host: a the boot hash before,
					 b now */
	SMQ_JOURNAL_OPEN = 9,         /* a queue opened, as role */
	SMQ_JOURNAL_CLOSE = 10,       /* ...closed */
	SMQ_JOURNAL_TAKEOVER = 11,    /* a claim taken from a holder that
					 died: a receiver's claim, or a lane's
					 lock (role sender); a its pid, b 1 if
					 it was of this host */
	SMQ_JOURNAL_FULL = 12,        /* a send met the lane full */
	SMQ_JOURNAL_ROOM = 13,        /* ...and later ones have room again, a
					 second on: a sends refused, b sends
					 that waited, meanwhile */
	SMQ_JOURNAL_DAMAGED = 14,     /* a message that failed its check was
					 refused: a its sending board, b its
					 sequence */
	SMQ_JOURNAL_UNANSWERED = 15,  /* a send gave up waiting for room while
					 its receiver slept on: a ms waited */
	/* ...and what a reader says of the ring, written by nobody: */
	SMQ_JOURNAL_LOST = 100,       /* a entries from seq were overwritten
					 before they were read */
	SMQ_JOURNAL_ABANDONED = 101,  /* entry seq was begun and not finished
					 within SMQ_JOURNAL_ABANDON_MS: its
					 writer died, or stopped, mid-entry */
	SMQ_JOURNAL_BROKEN = 102,     /* entry seq failed its check: damaged,
					 not an event */
	SMQ_JOURNAL_RESTARTED = 103   /* the journal was made anew (a format
					 of another layout): a the one before */
};
#define SMQ_JOURNAL_ABANDON_MS 1000
struct smq_journal_entry {
	uint32_t board;          /* whose journal */
	uint32_t kind;           /* enum smq_journal_kind */
	uint64_t seq;            /* its sequence in that journal, from 1 */
	uint64_t time_ns;        /* the writer's CLOCK_REALTIME: for people;
				    never compared with another board's */
	uint64_t generation;     /* the window's, as the writer saw it */
	uint64_t epoch;
	uint32_t queue;          /* SMQ_NO_QUEUE: none */
	uint32_t role;           /* enum smq_role, or 0 */
	uint32_t pid;            /* the writer */
	uint32_t pad;
	uint64_t a, b;
	uint64_t incarnation;    /* of the journal */
};
/* Where a reader is in one board's journal: zeroed, at the oldest entry it
 * holds; next set, at that sequence.  The caller keeps it; it never
 * grows. */
struct smq_journal_cursor {
	uint32_t board;
	uint32_t pad;
	uint64_t next;           /* the sequence to read next; 0: the oldest */
	uint64_t incarnation;    /* of the journal read (0: not yet) */
	uint64_t pending_ns;     /* the library's: since when next was seen
				    unfinished, on this host's clock */
};
/* Reads the entry at the cursor and moves it on: 1 (e filled: an entry, or
 * what the reader says of the ring), 0 (nothing more now), -ENOENT (the
 * window has no journal), or another error.  It only reads, and never
 * waits for an entry being written. */
int smq_journal_next(struct smq_window *w, struct smq_journal_cursor *c,
		     struct smq_journal_entry *e, size_t size);

/* Since 1.2: looks at the window again and again, a tenth of a second
 * apart, until this handle can judge what flags ask for: SMQ_WATCH_BOARDS,
 * every board and receiver of another host (its heartbeat seen to move,
 * or to stand still for SMQ_HEARTBEAT_TIMEOUT_MS); SMQ_WATCH_QUEUES, every
 * queue that holds messages (seen to drain, or stalled).  The snapshots
 * that follow say what it saw.  0 once everything asked is judged,
 * -ETIMEDOUT when timeout_ms passed first (SMQ_WAIT_FOREVER: a little
 * longer than the longest judgement asked for). */
#define SMQ_WATCH_BOARDS 0x1
#define SMQ_WATCH_QUEUES 0x2
int smq_watch(struct smq_window *w, unsigned flags, int timeout_ms);

/* Full validation: the format, the dynamic fields, and whether the window
 * is usable (an init or clear left unfinished, notices that disagree with
 * the superblock).  On failure *fault names the field, its byte offset in
 * the window, the value found and the value expected (or the bound, as
 * fault->kind says). */
enum smq_fault_kind { SMQ_FAULT_EXPECTED = 0, SMQ_FAULT_AT_MOST = 1,
		      SMQ_FAULT_AT_LEAST = 2,
		      SMQ_FAULT_KNOWN = 3,  /* value is a bit not in limit, the
					       bits this library knows */
		      SMQ_FAULT_SUBSET = 4, /* value must have at least one
					       bit, all of them in limit */
		      SMQ_FAULT_PAGES = 5   /* value must be a multiple of 4096,
					       at most limit */
};
struct smq_fault {
	char field[64];
	uint64_t offset;
	uint64_t value;
	uint64_t limit;
	int kind;               /* enum smq_fault_kind: what limit is */
	int board;              /* the board whose region holds the field
				   (board 0's holds the superblock and the
				   tables too); -1 not known */
};
int smq_validate(struct smq_window *w, struct smq_fault *fault, size_t size);

/* Words for any code a call of this library returned (negative or not). */
const char *smq_strerror(int err);
/* Words for err as it came from opening or using the window spec names:
 * the transport says its cause where it knows it (a VFIO group another
 * process holds, a directory that does not exist, an object of another
 * user), else smq_strerror()'s words.  Returns buf. */
const char *smq_explain(const char *spec, int err, char *buf, size_t len);
/* 1 if err may go away with no change on the caller's side, so that the
 * same call is worth trying again after a pause: the window not created
 * or not formatted yet (-ENOENT, -SMQ_EUNFORMATTED), an init or clear
 * under way or left for board 0 to finish (-EBUSY, -EALREADY,
 * -SMQ_EINCOMPLETE), a handle made stale by one (-ESTALE: open again), a
 * queue empty or full for now (-EAGAIN, -ETIMEDOUT); 0 otherwise. */
int smq_transient(int err);

/* Transports, for "--window help": NULL past the last one. */
const char *smq_transport_name(unsigned i);
const char *smq_transport_help(unsigned i);
const char *smq_default_window(void); /* $SMQ_WINDOW or SMQ_DEFAULT_WINDOW */
/* The windows of this host that a transport can list (shm and split
 * objects that begin with the magic of smq(7)): fn is called with each
 * spec; a non-zero return of fn stops the walk and is returned. */
int smq_list_windows(int (*fn)(const char *spec, void *arg), void *arg);

/* The running library's version ("1.1.0"), and its parts. */
const char *smq_version(void);
int smq_version_major(void);
int smq_version_minor(void);
/* 1 if the running library serves a program built against major.minor
 * (the same major version, the same or a later minor one), else 0. */
int smq_version_check(int major, int minor);

#ifdef __cplusplus
}
#endif
#endif
