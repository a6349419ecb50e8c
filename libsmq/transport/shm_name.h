/* libsmq internals: the rule for a shm object's name, which the shm and
 * split transports and the ivshmem server must apply alike.  Not
 * installed.  Only system headers, so that the server, which reaches no
 * window internals, can include it. */
#ifndef SMQ_SHM_NAME_H
#define SMQ_SHM_NAME_H

#include <stdbool.h>

/* The shm transport's rule for a name: it stays inside /dev/shm (1 to 200
 * of A-Z a-z 0-9 . _ -, not starting with '.', no "..").  transport/shm.c. */
bool smq_shm_name_ok(const char *name);

#endif
