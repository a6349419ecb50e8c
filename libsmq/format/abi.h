/* libsmq internals: structs across the interface, as smq.h's conventions
 * say (abi.c).  Not installed. */
#ifndef SMQ_ABI_H
#define SMQ_ABI_H

#include <stddef.h>
#include "smq.h"

/* Out: zeroes size bytes of dst and copies what both sides know (-EINVAL
 * for no room at all).  In: fills a whole struct of ours from the
 * caller's, and refuses non-zero bytes past what this library knows
 * (-E2BIG). */
int smq_struct_out(void *dst, size_t size, const void *src, size_t have);
int smq_struct_in(void *dst, size_t have, const void *src, size_t size);

/* Our own codes end here (smq.h's enum smq_error). */
#define SMQ_ERRNO_END (SMQ_EHOLDING + 1)

#endif
