/* What init and clear emptied, or would: the messages and the queues that
 * held most (smq_emptied()), in words and in JSON, the same for both. */
#include <inttypes.h>
#include <string.h>
#include "../smqctl.h"

const char *emptied_text(const struct smq_emptied *e, char *buf, size_t n)
{
	size_t len;

	if (!e->known) {
		snprintf(buf, n, "no message (it held no window to count)");
		return buf;
	}
	if (!e->messages) {
		snprintf(buf, n, "no message (every queue was empty)");
		return buf;
	}
	snprintf(buf, n, "%" PRIu64 " message%s in %u queue%s:", e->messages,
		 e->messages == 1 ? "" : "s", e->queues,
		 e->queues == 1 ? "" : "s");
	for (uint32_t i = 0; i < e->listed && (len = strlen(buf)) < n; i++)
		snprintf(buf + len, n - len, "%s queue %u: %" PRIu64,
			 i ? "," : "", e->most[i].queue, e->most[i].messages);
	if (e->queues > e->listed && (len = strlen(buf)) < n)
		snprintf(buf + len, n - len, ", and %u more queue%s",
			 e->queues - e->listed,
			 e->queues - e->listed == 1 ? "" : "s");
	return buf;
}

void json_emptied(struct json *j, const struct smq_emptied *e)
{
	if (!e->known) {
		json_null(j, "emptied");
		return;
	}
	json_begin(j, "emptied", '{');
	json_u64(j, "messages", e->messages);
	json_u64(j, "queues", e->queues);
	json_begin(j, "most", '[');
	for (uint32_t i = 0; i < e->listed; i++) {
		json_begin(j, NULL, '{');
		json_u64(j, "queue", e->most[i].queue);
		json_u64(j, "messages", e->most[i].messages);
		json_end(j, '}');
	}
	json_end(j, ']');
	json_end(j, '}');
}
