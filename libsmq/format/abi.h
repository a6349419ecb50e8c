/* libsmq internals: structs across the interface, as smq.h's conventions
 * say (abi.c).  Not installed. */
#ifndef SMQ_ABI_H
#define SMQ_ABI_H

#include <stddef.h>
#include "smq_tools.h"

/* Out: zeroes size bytes of dst and copies what both sides know (-EINVAL
 * for no room at all; the call checked size against its least first).
 * In: fills a whole struct of ours from the caller's of size bytes,
 * refusing one under least, the call's (-EINVAL), and non-zero bytes past
 * what this library knows (-E2BIG). */
int smq_struct_out(void *dst, size_t size, const void *src, size_t have);
int smq_struct_in(void *dst, size_t have, const void *src, size_t size,
		  size_t least);

/* The least size a call takes: its struct as far as the release that
 * brought the call knew it (the fields smq.h marks "since" a later one
 * are past it).  A size under it is no header's: an input cut short would
 * be read as defaults the caller never chose, so each call refuses it
 * (-EINVAL) before it reads, writes, moves or takes anything. */
#define SMQ_END(type, member) \
	(offsetof(type, member) + sizeof(((type *)0)->member))
/* 1.0's calls */
#define SMQ_LEAST_GEOMETRY SMQ_END(struct smq_geometry, receivers)
#define SMQ_LEAST_HOLDOUT SMQ_END(struct smq_holdout, host)
#define SMQ_LEAST_WINDOW_INFO SMQ_END(struct smq_window_info, first_bytes)
#define SMQ_LEAST_BOARD_INFO SMQ_END(struct smq_board_info, host)
#define SMQ_LEAST_QUEUE_INFO SMQ_END(struct smq_queue_info, wakeups)
#define SMQ_LEAST_LANE_INFO SMQ_END(struct smq_lane_info, sender_waiting)
#define SMQ_LEAST_FAULT SMQ_END(struct smq_fault, board)
#define SMQ_LEAST_SERVER_CONFIG SMQ_END(struct smq_server_config, mode)
#define SMQ_LEAST_SERVER_EVENT SMQ_END(struct smq_server_event, error)
#define SMQ_LEAST_SERVER_INFO SMQ_END(struct smq_server_info, peers)
/* 1.1's: smq_init_shape(), smq_shape_size(), smq_shape_parts() take the
 * shape as 1.1 ended it (its padding after ngroups is 1.2's reserved) */
#define SMQ_LEAST_SHAPE SMQ_END(struct smq_shape, ngroups)
#define SMQ_LEAST_SHAPE_PARTS SMQ_END(struct smq_shape_parts, region)
#define SMQ_LEAST_WORKER SMQ_END(struct smq_worker, host)
#define SMQ_LEAST_GROUP_INFO SMQ_END(struct smq_group_info, queues)
#define SMQ_LEAST_MAP_RESULT SMQ_END(struct smq_map_result, what)
#define SMQ_LEAST_BROKER_CONFIG SMQ_END(struct smq_broker_config, mode)
#define SMQ_LEAST_BROKER_EVENT SMQ_END(struct smq_broker_event, error)
#define SMQ_LEAST_BROKER_INFO SMQ_END(struct smq_broker_info, clients)
/* 1.2's: smq_init_dry_run() takes 1.2's shape */
#define SMQ_LEAST_SHAPE_1_2 SMQ_END(struct smq_shape, journal)
#define SMQ_LEAST_EMPTIED SMQ_END(struct smq_emptied, most)
#define SMQ_LEAST_JOURNAL_ENTRY SMQ_END(struct smq_journal_entry, incarnation)

/* Our own codes end here (smq.h's enum smq_error). */
#define SMQ_ERRNO_END (SMQ_EHOLDING + 1)

#endif
