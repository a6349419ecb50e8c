/* Words for every code the library returns, and its version. */
#include <errno.h>
#include <string.h>
#include "format/abi.h"

static const char *const messages[] = {
	[SMQ_EUNFORMATTED - SMQ_EUNFORMATTED] =
		"window is not formatted (run init on board 0)",
	[SMQ_EMAGIC - SMQ_EUNFORMATTED] = "not an smq window (bad magic)",
	[SMQ_EVERSION - SMQ_EUNFORMATTED] =
		"window format version is not the one this library reads",
	[SMQ_ECHECKSUM - SMQ_EUNFORMATTED] = "window geometry checksum mismatch",
	[SMQ_EGEOMETRY - SMQ_EUNFORMATTED] = "window geometry out of range",
	[SMQ_ETOOSMALL - SMQ_EUNFORMATTED] = "window too small for its geometry",
	[SMQ_ECORRUPT - SMQ_EUNFORMATTED] = "window field out of bounds (corrupted)",
	[SMQ_ESIGNATURE - SMQ_EUNFORMATTED] =
		"entry signature mismatch (corrupted or stale entry)",
	[SMQ_EINCOMPLETE - SMQ_EUNFORMATTED] =
		"an init or clear did not finish (run clear or init on board 0)",
	[SMQ_EHELD - SMQ_EUNFORMATTED] =
		"a board did not leave a call begun under the old generation",
	[SMQ_ENOTWINDOW - SMQ_EUNFORMATTED] =
		"the target holds data that is not an smq window",
	[SMQ_EFOREIGN - SMQ_EUNFORMATTED] =
		"the window belongs to another user or others may write it",
	[SMQ_EFEATURE - SMQ_EUNFORMATTED] =
		"the window uses a feature this library does not know",
	[SMQ_ENOTSENDER - SMQ_EUNFORMATTED] =
		"this board is not among the queue's senders",
	[SMQ_EATWORK - SMQ_EUNFORMATTED] =
		"processes are at work on what this would empty",
	[SMQ_EPAYLOAD - SMQ_EUNFORMATTED] =
		("a message failed its checksum (corrupted in the window or "
		 "on the bus): taken off the queue, not delivered"),
	[SMQ_EHOLDING - SMQ_EUNFORMATTED] =
		("this process already holds the queue's receiver, by another "
		 "of its handles (one receiver handle per queue)"),
};

/* What an errno value means when this library returns it: libc's words
 * are for sockets and System V IPC ("Connection timed out", "Too many
 * users"), not for a window. */
static const struct {
	int err;
	const char *words;
} errno_words[] = {
	{ ESTALE, "window was re-initialised, or the queue cleared, since "
		  "this handle attached (stale): open it again" },
	{ ETIMEDOUT, "timed out" },
	{ EINTR, "interrupted: a signal handler ran while the call waited" },
	{ EAGAIN, "nothing to do without waiting (queue empty, or full)" },
	{ EUSERS, "too many handles on this board's window (62 at most per "
		  "board)" },
	{ ENOMSG, "no message" },
	{ EMSGSIZE, "message larger than the buffer or the queue's entry "
		    "size" },
	{ EALREADY, "another init or clear is under way" },
	{ EBUSY, "busy: an init or clear is under way, the resource is held "
		 "by another process, or (closing a window) queue handles are "
		 "still open on it" },
	{ EIDRM, "window was removed" },
	{ EROFS, "handle is read-only (a monitor): it does not write" },
	{ EPROTONOSUPPORT, "unknown transport in window spec, or a server "
			   "that speaks a protocol version this library "
			   "does not" },
	{ ENOTCONN, "the window's server (ivshmem) closed the connection: "
		    "peers that join from now on cannot ring this process" },
	{ EPERM, "not permitted (only board 0 formats and clears; a queue is "
		 "received only by its receiving board)" },
	{ ENOENT, "window does not exist (yet)" },
	{ ESRCH, "no group of that name in the window (smq_group_info() "
		 "lists them)" },
	{ EINPROGRESS, "a loan is held on this handle: submit or abort it "
		       "first" },
	{ ELOOP, "window is a symbolic link" },
	{ EBADF, "handle belongs to another process: opened before fork(), "
		 "it serves only the process that opened it (a child opens "
		 "the window anew)" },
	{ E2BIG, "struct has fields this library does not know (built "
		 "against a newer smq.h?)" },
	{ EINVAL, "invalid argument" },
};

const char *smq_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err >= SMQ_EUNFORMATTED && err < SMQ_ERRNO_END)
		return messages[err - SMQ_EUNFORMATTED];
	for (size_t i = 0; i < sizeof(errno_words) / sizeof(errno_words[0]); i++)
		if (errno_words[i].err == err)
			return errno_words[i].words;
	return strerror(err);
}

int smq_transient(int err)
{
	switch (err < 0 ? -err : err) {
	case ENOENT:            /* board 0 creates it */
	case SMQ_EUNFORMATTED:  /* board 0 formats it */
	case EBUSY:             /* an init or clear under way */
	case EALREADY:
	case ESTALE:            /* formatted anew: open again */
	case SMQ_EINCOMPLETE:   /* board 0's next init or clear finishes it */
	case EAGAIN:
	case ETIMEDOUT:
		return 1;
	default:
		return 0;
	}
}

const char *smq_version(void)
{
	return SMQ_VERSION;
}

int smq_version_major(void)
{
	return SMQ_VERSION_MAJOR;
}

int smq_version_minor(void)
{
	return SMQ_VERSION_MINOR;
}

int smq_version_check(int major, int minor)
{
	return major == SMQ_VERSION_MAJOR && minor <= SMQ_VERSION_MINOR;
}
