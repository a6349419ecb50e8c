/* Measurement sessions (see session.h): what tells a control message
 * from a measured one, and what a measured message carries when it
 * carries nothing but its number.  Under session.c and ways.c, which
 * both take messages apart: session.c moves a round through ways.c,
 * and ways.c stops at the round's control message. */
#include <string.h>
#include "session.h"

void session_fill(uint8_t *buf, size_t size, uint64_t seq)
{
	if (size >= sizeof(seq))
		memcpy(buf, &seq, sizeof(seq));
}

bool is_ctl(const uint8_t *buf, size_t len, uint64_t id, uint32_t op)
{
	struct session_msg m;

	if (len != sizeof(m))
		return false;
	memcpy(&m, buf, sizeof(m));
	return m.magic == SESSION_MAGIC && (!id || m.id == id) &&
	       (!op || m.op == op);
}

bool session_is_stop(const struct session *s, const void *data, size_t len)
{
	return is_ctl(data, len, s->id, OP_STOP);
}
