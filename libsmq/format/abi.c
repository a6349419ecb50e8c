/* Structs across the interface, as smq.h's conventions say: each comes
 * with the size the caller's header gave it, so that a struct can grow at
 * its end without breaking a program built against an older header. */
#include <string.h>
#include <errno.h>
#include "abi.h"

int smq_struct_out(void *dst, size_t size, const void *src, size_t have)
{
	if (!dst || !size)
		return -EINVAL;
	memset(dst, 0, size);
	memcpy(dst, src, size < have ? size : have);
	return 0;
}

int smq_struct_in(void *dst, size_t have, const void *src, size_t size,
		  size_t least)
{
	const unsigned char *extra = src;

	if (!src || !size || size < least)
		return -EINVAL;
	memset(dst, 0, have);
	memcpy(dst, src, size < have ? size : have);
	/* a newer caller's fields this library does not know: only zero,
	 * their default, may be ignored */
	for (size_t i = have; i < size; i++)
		if (extra[i])
			return -E2BIG;
	return 0;
}
