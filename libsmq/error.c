#include <string.h>
#include "handle.h"

static const char *const messages[] = {
	[SMQ_EUNFORMATTED - SMQ_EUNFORMATTED] =
		"window is not formatted (run init on board 0)",
	[SMQ_EMAGIC - SMQ_EUNFORMATTED] = "not an smq window (bad magic)",
	[SMQ_EVERSION - SMQ_EUNFORMATTED] = "unsupported window format version",
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
};

const char *smq_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err >= SMQ_EUNFORMATTED && err < SMQ_ERRNO_END)
		return messages[err - SMQ_EUNFORMATTED];
	if (err == ESTALE)
		return "window was re-initialised since this board attached "
		       "(stale)";
	return strerror(err);
}

const char *smq_version(void)
{
	return SMQ_VERSION;
}
