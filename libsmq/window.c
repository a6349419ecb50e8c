/* Windows: attach, format (init, clear), board startup, snapshots. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

static struct smq_sb *sb_of(const struct smq_window *w)
{
	return w->map.base;
}

static struct smq_board_slot *slot_of(const struct smq_window *w, unsigned b)
{
	return at(w, w->lay.board_table + (uint64_t)b * SMQ_LINE);
}

static struct smq_notice *notice_of(const struct smq_window *w, unsigned b)
{
	return at(w, lay_notice(&w->lay, b));
}

/* Every call that writes starts here: attached, and not outdated. */
static int usable(const struct smq_window *w)
{
	if (!w)
		return -EINVAL;
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	return smq_stale(w);
}

int smq_open(struct smq_window **wp, const char *spec, unsigned board,
	     unsigned flags)
{
	struct smq_window *w;
	int err;

	if (!wp)
		return -EINVAL;
	*wp = NULL;
	if (board >= SMQ_MAX_BOARDS ||
	    (flags & ~(unsigned)(SMQ_OPEN_CREATE | SMQ_OPEN_RAW)))
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->board = board;
	w->pid = (uint32_t)getpid();
	gethostname(w->host, sizeof(w->host) - 1);
	err = smq_transport_open(&w->map, spec, flags);
	if (err) {
		free(w);
		return err;
	}
	/* The generation before the layout: if a re-init slips in between,
	 * the notice shows a newer generation and the handle reads stale. */
	uint64_t gen = w->map.size >= SMQ_SB_SIZE
		       ? LOAD_ACQ(&sb_of(w)->generation) : 0;
	err = smq_check_static(w->map.base, w->map.size, &w->lay, NULL);
	if (!err && board >= w->lay.boards) {
		smq_layout_free(&w->lay);
		err = -EINVAL;
	}
	if (err && !(flags & SMQ_OPEN_RAW)) {
		w->map.tp->close(&w->map);
		free(w);
		return err;
	}
	if (!err) {
		w->valid = true;
		/* The notice, not the superblock, is what stale checks read:
		 * a board attaching mid-format must see itself stale. */
		w->generation = gen;
		w->check = smq_notice_check(w->generation, board);
	}
	*wp = w;
	return 0;
}

int smq_set_mode(struct smq_window *w, unsigned mode)
{
	if (!w || (mode & ~07777u))
		return -EINVAL;
	if (!w->map.tp->chmod)
		return -EOPNOTSUPP;
	return w->map.tp->chmod(&w->map, mode);
}

int smq_close(struct smq_window *w)
{
	if (!w)
		return -EINVAL;
	smq_layout_free(&w->lay);
	w->map.tp->close(&w->map);
	free(w);
	return 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Before board 0 rewrites a window others may be using: tell every board
 * it is stale (a local read for each of them), wake every sleeper so it
 * sees that at once, then give a call caught between its stale check and
 * its writes time to finish.  A board may use queues without ever having
 * announced itself, so the grace is always given. */
static void invalidate(struct smq_window *w, const struct smq_layout *old)
{
	STORE(&sb_of(w)->system_state, SMQ_SYS_FORMATTING);
	for (unsigned b = 0; b < old->boards; b++) {
		struct smq_notice *n = at(w, lay_notice(old, b));
		STORE_REL(&n->generation, 0);
		STORE(&n->check, 0);
	}
	FENCE();
	if (w->map.tp->ring)
		for (unsigned q = 0; q < old->queues; q++) {
			w->map.tp->ring(&w->map, at(w, lay_bell(old, q)));
			for (unsigned s = 0; s < old->boards; s++) {
				struct smq_lane_wake *k =
					at(w, lay_lane_wake(old, s, q));
				w->map.tp->ring(&w->map, &k->space_bell);
			}
		}
	sleep_ms(SMQ_GRACE_MS);
}

/* Publish a generation: board table emptied, every notice told. */
static void publish(struct smq_window *w, uint64_t gen)
{
	struct smq_sb *sb = sb_of(w);

	memset(at(w, w->lay.board_table), 0,
	       (size_t)w->lay.boards * SMQ_LINE);
	for (unsigned b = 0; b < w->lay.boards; b++) {
		struct smq_notice *n = notice_of(w, b);
		STORE(&n->system_state, SMQ_SYS_FORMATTED);
		STORE(&n->check, smq_notice_check(gen, b));
		STORE_REL(&n->generation, gen);
	}
	STORE(&sb->format_time_ns, smq_realtime_ns());
	STORE(&sb->system_state, SMQ_SYS_FORMATTED);
	STORE_REL(&sb->generation, gen);
	w->generation = gen;
	w->check = smq_notice_check(gen, w->board);
}

int smq_init(struct smq_window *w, const struct smq_geometry *g)
{
	struct smq_layout old, lay;
	uint64_t gen = 1;
	int err;

	if (!w || !g)
		return -EINVAL;
	if (w->board != 0)
		return -EPERM;
	err = smq_layout_compute(&lay, g);
	if (err)
		return err == -SMQ_EGEOMETRY ? -EINVAL : err;

	/* Read the window as it is now, not as we attached to it. */
	if (smq_check_static(w->map.base, w->map.size, &old, NULL) == 0) {
		gen = LOAD(&sb_of(w)->generation) + 1;
		invalidate(w, &old);
		smq_layout_free(&old);
	} else if (w->map.size >= SMQ_SB_SIZE &&
		   !memcmp(sb_of(w)->magic, SMQ_MAGIC, 8)) {
		gen = LOAD(&sb_of(w)->generation) + 1;
	}
	if (gen == 0)
		gen = 1;

	err = w->map.tp->resize(&w->map, lay.size);
	if (err) {
		smq_layout_free(&lay);
		return err;
	}
	smq_layout_free(&w->lay);
	w->lay = lay;
	w->valid = false;

	struct smq_sb *sb = sb_of(w);
	STORE(&sb->magic_word, 0);
	FENCE();
	memset(w->map.base, 0, (size_t)lay.size);
	sb->version = SMQ_FORMAT_VERSION;
	sb->sb_size = SMQ_SB_SIZE;
	sb->boards = lay.boards;
	sb->queues = lay.queues;
	sb->entries = lay.entries;
	sb->entry_size = lay.entry_size;
	sb->window_size = lay.size;
	sb->line_size = SMQ_LINE;
	struct smq_qdesc *qt = at(w, lay.queue_table);
	for (unsigned q = 0; q < lay.queues; q++) {
		struct smq_rx *rx = at(w, lay.rx[q]);
		qt[q].index = q;
		qt[q].receiver = lay.receiver[q];
		rx->index = q;
		rx->epoch = gen;
	}
	sb->checksum = smq_geometry_checksum(w->map.base, &lay);
	publish(w, gen);
	uint64_t magic;
	memcpy(&magic, SMQ_MAGIC, sizeof(magic));
	STORE_REL(&sb->magic_word, magic);
	FENCE();
	w->valid = true;
	return 0;
}

static void clear_queue(struct smq_window *w, unsigned q, uint64_t gen)
{
	const struct smq_layout *l = &w->lay;
	struct smq_rx *rx = at(w, l->rx[q]);

	for (unsigned s = 0; s < l->boards; s++) {
		memset(at(w, lay_lane_out(l, s, q)), 0, SMQ_LANE_LINES * SMQ_LINE);
		memset(at(w, lay_lane_in(l, q, s)), 0, SMQ_LINE);
		memset(at(w, lay_lane_ask(l, q, s)), 0, SMQ_LINE);
	}
	memset(at(w, lay_bottoms(l, q)), 0, (size_t)l->bottoms_size);
	memset(at(w, lay_bell(l, q)), 0, SMQ_LINE);
	memset(rx, 0, sizeof(*rx));
	rx->index = q;
	rx->epoch = gen;  /* entries left from before can never verify */
}

int smq_clear(struct smq_window *w, int queue)
{
	if (w && w->board != 0)
		return -EPERM;
	int err = usable(w);

	if (err)
		return err;
	if (queue >= (int)w->lay.queues)
		return -EINVAL;
	uint64_t gen = w->generation + 1;
	if (gen == 0)
		gen = 1;
	invalidate(w, &w->lay);
	/* Every handle is stale now, so no receiver claim survives, even on
	 * the queues whose messages are kept. */
	for (unsigned q = 0; q < w->lay.queues; q++)
		if (queue < 0 || (unsigned)queue == q)
			clear_queue(w, q, gen);
		else
			STORE(&((struct smq_rx *)at(w, w->lay.rx[q]))->owner, 0);
	FENCE();
	publish(w, gen);
	return 0;
}

void smq_beat(struct smq_window *w)
{
	/* a stale handle's idea of the board table is the old layout's */
	if (smq_stale(w))
		return;
	struct smq_board_slot *s = slot_of(w, w->board);

	/* counted in the handle: the slot is in board 0's memory, write only */
	uint64_t n = __atomic_add_fetch(&w->beats, 1, __ATOMIC_RELAXED);
	/* once per generation; threads sharing the handle race for it */
	if (__atomic_exchange_n(&w->host_written, w->generation,
				__ATOMIC_ACQ_REL) != w->generation)
		memcpy(s->host, w->host, sizeof(s->host));
	STORE(&s->pid, w->pid);
	STORE(&s->heartbeat_ns, smq_realtime_ns());
	STORE(&s->heartbeat_count, n);
}

bool smq_must_poll(struct smq_window *w)
{
	if (!w->map.tp->wait)
		return true;
	for (unsigned b = 0; b < w->lay.boards; b++) {
		const struct smq_board_slot *s = slot_of(w, b);
		if (LOAD(&s->pid) && s->host[0] &&
		    strncmp(s->host, w->host, sizeof(s->host)))
			return true;
	}
	return false;
}

int smq_heartbeat(struct smq_window *w)
{
	int err = usable(w);

	if (!err)
		smq_beat(w);
	return err;
}

int smq_announce(struct smq_window *w)
{
	int err = usable(w);

	if (err)
		return err;
	struct smq_board_slot *s = slot_of(w, w->board);
	if (LOAD(&s->generation) == w->generation &&
	    LOAD(&s->state) != SMQ_BOARD_ABSENT) {
		smq_beat(w);
		return 0;
	}
	STORE(&s->generation, w->generation);
	smq_beat(w);  /* host and pid too */
	STORE_REL(&s->state, SMQ_BOARD_INITIALIZED);
	return 0;
}

/* Boards that have not announced themselves under this generation. */
static uint64_t missing_boards(struct smq_window *w)
{
	uint64_t pending = 0;

	for (unsigned b = 0; b < w->lay.boards; b++) {
		struct smq_board_slot *s = slot_of(w, b);
		if (LOAD_ACQ(&s->state) == SMQ_BOARD_ABSENT ||
		    LOAD(&s->generation) != w->generation)
			pending |= 1ull << b;
	}
	return pending;
}

/* The superblock first: a board that sees its notice ready sees it too. */
static void declare_ready(struct smq_window *w)
{
	STORE_REL(&sb_of(w)->system_state, SMQ_SYS_READY);
	for (unsigned b = 0; b < w->lay.boards; b++)
		STORE_REL(&notice_of(w, b)->system_state, SMQ_SYS_READY);
}

int smq_synchronize(struct smq_window *w, int timeout_ms, int poll_ms,
		    uint64_t *pending)
{
	struct timespec deadline;
	uint64_t missing = 0;
	int err = smq_announce(w);

	if (pending)
		*pending = 0;
	if (err)
		return err;
	if (poll_ms <= 0)
		poll_ms = 10;
	if (timeout_ms >= 0)
		smq_deadline(&deadline, timeout_ms);
	struct smq_board_slot *self = slot_of(w, w->board);
	for (;;) {
		if ((err = smq_stale(w)))
			return err;
		if (w->board == 0) {
			missing = missing_boards(w);
			if (!missing)
				declare_ready(w);
		} else {
			/* Only our own notice is polled: a local read. */
			missing = LOAD_ACQ(&notice_of(w, w->board)->system_state)
				== SMQ_SYS_READY ? 0 : 1;
		}
		if (!missing) {
			STORE_REL(&self->state, SMQ_BOARD_READY);
			return 0;
		}
		if (timeout_ms >= 0 && smq_past(&deadline))
			break;
		smq_beat(w);
		sleep_ms(poll_ms);
	}
	if (pending) {
		*pending = w->board == 0 ? missing : missing_boards(w);
		if (!*pending)
			*pending = 1;  /* all announced: board 0 has not declared */
	}
	return -ETIMEDOUT;
}

int smq_window_info(struct smq_window *w, struct smq_window_info *info)
{
	if (!w || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	snprintf(info->transport, sizeof(info->transport), "%s",
		 w->map.tp->name);
	snprintf(info->name, sizeof(info->name), "%s", w->map.name);
	info->board = w->board;
	info->mapped_size = w->map.size;
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	const struct smq_sb *sb = sb_of(w);
	info->version = LOAD(&sb->version);
	info->geometry.boards = w->lay.boards;
	info->geometry.queues = w->lay.queues;
	info->geometry.entries = w->lay.entries;
	info->geometry.entry_size = w->lay.entry_size;
	info->window_size = w->lay.size;
	info->generation = LOAD(&sb->generation);
	info->system_state = LOAD(&sb->system_state);
	info->format_time_ns = LOAD(&sb->format_time_ns);
	snprintf(info->notify, sizeof(info->notify), "%s",
		 !w->map.tp->wait ? "polling: no doorbell"
		 : smq_must_poll(w) ? "polling: a board on another host"
		 : "futex doorbell");
	return smq_stale(w);
}

int smq_board_info(struct smq_window *w, unsigned board,
		   struct smq_board_info *info)
{
	if (!w || !info)
		return -EINVAL;
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	if (board >= w->lay.boards)
		return -EINVAL;
	const struct smq_board_slot *s = slot_of(w, board);
	info->state = LOAD(&s->state);
	info->pid = LOAD(&s->pid);
	info->generation = LOAD(&s->generation);
	info->heartbeat_ns = LOAD(&s->heartbeat_ns);
	info->heartbeat_count = LOAD(&s->heartbeat_count);
	memcpy(info->host, s->host, sizeof(info->host));
	info->host[sizeof(info->host) - 1] = 0;
	/* The board table is emptied by every init and clear, so whatever is
	 * in a slot is this generation's.  On this host, the process that last
	 * announced the board or beat for it tells exactly; for another host
	 * only the heartbeat's age can. */
	info->alive = 0;
	if (info->pid && info->heartbeat_ns) {
		char host[sizeof(info->host)] = "";
		gethostname(host, sizeof(host) - 1);
		uint64_t now = smq_realtime_ns();
		if (!strcmp(host, info->host))
			info->alive = smq_pid_alive(info->pid);
		else
			info->alive = now >= info->heartbeat_ns &&
				      now - info->heartbeat_ns <
				      SMQ_HEARTBEAT_TIMEOUT_MS * 1000000ull;
	}
	return smq_stale(w);
}

int smq_lane_info(struct smq_window *w, unsigned queue, unsigned sender,
		  struct smq_lane_info *info)
{
	if (!w || !info)
		return -EINVAL;
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	const struct smq_layout *l = &w->lay;
	if (queue >= l->queues || sender >= l->boards)
		return -EINVAL;
	const uint64_t *bottoms = at(w, lay_bottoms(l, queue));
	const struct smq_lane_in *in = at(w, lay_lane_in(l, queue, sender));
	const struct smq_lane_out *out = at(w, lay_lane_out(l, sender, queue));
	const struct smq_lane_wake *wake = at(w, lay_lane_wake(l, sender, queue));
	const struct smq_lane_ask *ask = at(w, lay_lane_ask(l, queue, sender));
	info->bottom = LOAD(&bottoms[sender]);
	info->top = LOAD(&in->top);
	info->messages = LOAD(&out->messages);
	info->bytes = LOAD(&out->bytes);
	info->full_waits = LOAD(&out->full_waits);
	info->doorbells = LOAD(&out->doorbells);
	info->sender_waiting = LOAD(&ask->space_wait) ==
			       LOAD(&wake->space_bell) + 1ull;
	return smq_stale(w);
}

int smq_queue_info(struct smq_window *w, unsigned queue,
		   struct smq_queue_info *info)
{
	if (!w || !info)
		return -EINVAL;
	if (!w->valid)
		return -SMQ_EUNFORMATTED;
	const struct smq_layout *l = &w->lay;
	if (queue >= l->queues)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	const struct smq_rx *rx = at(w, l->rx[queue]);
	info->index = queue;
	info->receiver = l->receiver[queue];
	info->receiver_pid = LOAD(&rx->owner);
	info->sleeping = LOAD(&rx->sleep_epoch) & 1;
	info->capacity = (uint64_t)l->entries * l->boards;
	info->received = LOAD(&rx->messages);
	info->bytes_received = LOAD(&rx->bytes);
	info->sleeps = LOAD(&rx->sleeps);
	info->wakeups = LOAD(&rx->wakeups);
	for (unsigned s = 0; s < l->boards; s++) {
		struct smq_lane_info li;
		smq_lane_info(w, queue, s, &li);
		info->top += li.top;
		info->bottom += li.bottom;
		info->fill += li.top >= li.bottom ? li.top - li.bottom : 0;
		info->sent += li.messages;
		info->bytes_sent += li.bytes;
		info->full_waits += li.full_waits;
		info->doorbells += li.doorbells;
	}
	return smq_stale(w);
}

int smq_validate(struct smq_window *w, struct smq_fault *f)
{
	struct smq_layout l;
	int err;

	if (!w)
		return -EINVAL;
	if (f)
		memset(f, 0, sizeof(*f));
	err = smq_check_static(w->map.base, w->map.size, &l, f);
	if (err)
		return err;
	err = smq_check_dynamic(w->map.base, &l, f);
	smq_layout_free(&l);
	return err;
}
