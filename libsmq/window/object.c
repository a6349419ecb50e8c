/* What the window's object holds, judged before any format is trusted:
 * another program's data, a superblock of ours (of this version or the
 * last), and the size the object is fixed at.  The infos tell them and
 * init decides by them. */
#include <string.h>
#include "window.h"

/* Data that is not a window: neither our magic, nor a superblock of ours
 * whose magic was zeroed (by an init that was stopped) or damaged, nor a
 * first page all zero. */
bool smq_foreign_data(struct smq_window *w)
{
	const uint8_t *p = smq_map_at(&w->map, 0, 8);
	const struct smq_sb *sb = smq_map_at(&w->map, 0, SMQ_SB_SIZE);

	if (!w->map.size)
		return false;
	if (p && !memcmp(p, SMQ_MAGIC, 8))
		return false;
	/* a superblock of ours, of any version so far, whose magic init had
	 * zeroed: versions 1 and 2 kept the line size at byte 40 */
	uint32_t version = sb ? LOAD(&sb->version) : 0;
	uint32_t sb_size = sb ? LOAD(&sb->sb_size) : 0;
	const uint32_t *v2_line = smq_map_at(&w->map, 40, 4);
	if (version >= 1 && version <= 2 && v2_line && *v2_line == SMQ_LINE &&
	    (sb_size == SMQ_SB_SIZE || sb_size == 256))
		return false;
	if (version == SMQ_FORMAT_VERSION && sb_size == SMQ_SB_SIZE)
		return false;
	uint64_t n = w->map.size < SMQ_PAGE ? w->map.size : SMQ_PAGE;
	const uint8_t *all = smq_map_at(&w->map, 0, n);
	for (uint64_t i = 0; all && i < n; i++)
		if (all[i])
			return true;
	return !all;
}

/* An smq window of our version or of version 2 (whose control blocks,
 * notices and marks are where and what ours are), or an init of one that
 * was stopped: its control area may hold marks of live handles. */
bool smq_window_ours(struct smq_window *w)
{
	const struct smq_sb *sb = smq_map_at(&w->map, 0, SMQ_SB_SIZE);
	uint32_t version = sb ? LOAD(&sb->version) : 0;
	return (version == 2 || version == SMQ_FORMAT_VERSION) &&
	       LOAD(&sb->sb_size) == SMQ_SB_SIZE;
}

uint64_t smq_fixed_size(struct smq_window *w)
{
	const struct smq_sb *sb = smq_map_at(&w->map, 0, SMQ_SB_SIZE);

	if (w->map.fixed_size)
		return w->map.fixed_size;
	return sb && smq_window_ours(w) && LOAD(&sb->version) == SMQ_FORMAT_VERSION
	       ? LOAD(&sb->size_fixed) : 0;
}
