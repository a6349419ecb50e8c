/* smqctl check between boards: doorbells, the raw link and the queues,
 * pair by pair.  A pair whose views of each other read wrong (the map)
 * is left out: nothing is sent through a wrong view.  The figures go in
 * the tables after the checks; a verdict fails only for what does not
 * work (a doorbell not delivered, messages that come wrong), never for a
 * figure being low. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "cross.h"
#include "model.h"

static bool both_ways(const struct cross *x, unsigned a, unsigned b)
{
	return cross_view_ok(x, a, b) && cross_view_ok(x, b, a);
}

/* Board b serves board a (in mode) while a measures op: the figures in
 * m.  Where the coordinator is one of them, it does its part here. */
static int served(struct cross *x, unsigned a, unsigned b, int mode, int op,
		  int reply, struct wire_msg *m)
{
	int err;

	if (b == x->self) {
		if ((err = agent_mode(&x->me, mode)))
			return err;
		wire_init(&x->me, m, op);
		m->a = b;
		if ((err = agent_send(&x->me, a, m, STEP_TIMEOUT_MS)) ||
		    (err = agent_serve_pair(&x->me, a, mode, x->self)))
			return err;
		return agent_wait(&x->me, reply, (int)a, m, STEP_TIMEOUT_MS);
	}
	wire_init(&x->me, m, OP_SERVE);
	m->a = a;
	m->b = (uint32_t)mode;
	if ((err = cross_ask(x, b, m, OP_READY, b)) || (err = m->status))
		return err;
	wire_init(&x->me, m, op);
	m->a = b;
	if (a == x->self) {
		if (op == OP_RING)
			measure_bells(&x->me, b, &m->u.bell);
		else
			measure_queue(&x->me, b, &m->u.queue);
	} else if ((err = cross_ask(x, a, m, reply, a))) {
		return err;
	}
	struct wire_msg done;
	err = agent_wait(&x->me, OP_DONE, (int)b, &done, STEP_TIMEOUT_MS);
	return err ? err : done.status;
}

struct bell_tally {
	unsigned pairs, undelivered, late, none, awake;
	int fa, fb;                     /* the first pair not delivered */
	struct bell_fig first;
	double low, high, wake;
};

static void tally_bells(struct bell_tally *t, struct pair_figures *p,
			const struct bell_fig *f)
{
	p->bell_measured = true;
	p->bell_delivered = f->delivered * 2 > f->pings;
	if (f->why == -ENOTSUP || f->why == -EAGAIN) {
		p->bell_measured = false;
		snprintf(p->bell_why, sizeof(p->bell_why), "%s", f->why == -ENOTSUP
			 ? "no doorbell: the board polls"
			 : "the board never slept on its doorbell");
		*(f->why == -ENOTSUP ? &t->none : &t->awake) += 1;
		return;
	}
	t->pairs++;
	if (!p->bell_delivered) {
		snprintf(p->bell_why, sizeof(p->bell_why), "%u of %u pings woke "
			 "it only by itself, its sleep slice later",
			 f->pings - f->delivered, f->pings);
		if (!t->undelivered++) {
			t->fa = (int)p->from;
			t->fb = (int)p->to;
			t->first = *f;
		}
		return;
	}
	t->late += f->late;
	p->wake_median_ns = f->median_ns;
	p->wake_p99_ns = f->p99_ns;
	p->wake_max_ns = f->max_ns;
	p->polled_median_ns = f->polled_median_ns;
	t->low = isnan(t->low) || f->median_ns < t->low ? f->median_ns : t->low;
	t->high = isnan(t->high) || f->median_ns > t->high ? f->median_ns
							    : t->high;
	if (isfinite(f->polled_median_ns))
		t->wake = f->median_ns - f->polled_median_ns;
}

static void bells_verdict(struct check_run *cr, const struct bell_tally *t)
{
	if (t->undelivered) {
		check_set(cr, CK_DOORBELLS, CHECK_FAIL, "board %d's doorbell, "
			  "rung by board %d, was not delivered: %u of %u pings "
			  "woke it only by itself, a sleep slice (1 s) later%s",
			  t->fb, t->fa, t->first.pings - t->first.delivered,
			  t->first.pings, t->undelivered > 1 ? "; and other "
			  "pairs" : "");
		check_next(cr, CK_DOORBELLS, "see how board %d is woken "
			   "(smqctl --board %d dump: its doorbell): over "
			   "ivshmem, that the server gave its vectors; over "
			   "vfio, its MSI-X vectors", t->fb, t->fb);
	} else if (!t->pairs && t->none) {
		check_set(cr, CK_DOORBELLS, CHECK_SKIP, "no board has a doorbell "
			  "to ring: their receivers poll");
	} else if (t->awake || t->late) {
		check_set(cr, CK_DOORBELLS, CHECK_WARN, "%u ping%s late (the "
			  "board woke by itself), %u pair%s whose board never "
			  "slept", t->late, t->late == 1 ? "" : "s", t->awake,
			  t->awake == 1 ? "" : "s");
		check_next(cr, CK_DOORBELLS, "run check again: a loaded host "
			   "can delay a wake-up; one that stays late loses its "
			   "doorbells");
	} else if (t->pairs) {
		check_set(cr, CK_DOORBELLS, CHECK_PASS, "%u pair%s: every ring "
			  "woke the board asleep, round trips %.1f to %.1f us "
			  "(medians; the table below)", t->pairs,
			  t->pairs == 1 ? "" : "s", t->low / 1e3, t->high / 1e3);
	}
}

void cross_bells(struct cross *x)
{
	struct check_run *cr = x->cr;
	struct bell_tally t = { .low = NAN, .high = NAN, .fa = -1, .fb = -1 };
	struct wire_msg m;

	if (!check_wanted(cr, CK_DOORBELLS))
		return;
	for (unsigned a = 0; a < x->boards; a++)
		for (unsigned b = 0; b < x->boards; b++) {
			if (a == b || !both_ways(x, a, b))
				continue;
			int err = served(x, a, b, SERVE_SLEEP, OP_RING, OP_BELLS,
					 &m);
			struct pair_figures *p = cross_pair(x, a, b);
			if (err || !p) {
				check_set(cr, CK_DOORBELLS, CHECK_FAIL, "the "
					  "doorbells of board %u from board %u "
					  "could not be tested: %s", b, a,
					  smq_strerror(err));
				return;
			}
			tally_bells(&t, p, &m.u.bell);
		}
	bells_verdict(cr, &t);
}

void cross_raw(struct cross *x)
{
	struct check_run *cr = x->cr;
	struct pcie_link_params link = { cr->gen, cr->width, cr->mps, cr->mrrs };
	struct wire_msg m;
	unsigned pairs = 0;
	double best = NAN, read = NAN;

	if (!check_wanted(cr, CK_RAW))
		return;
	if (!x->me.scratch) {
		check_set(cr, CK_RAW, CHECK_SKIP, "the window has no scratch "
			  "areas to write into (smqctl init --no-scratch, or an "
			  "smq without the feature)");
		return;
	}
	for (unsigned a = 0; a < x->boards; a++)
		for (unsigned b = 0; b < x->boards; b++) {
			if (a == b || !cross_view_ok(x, a, b))
				continue;
			wire_init(&x->me, &m, OP_RAW);
			m.a = b;
			int err = 0;
			if (a == x->self)
				measure_raw(&x->me, b, &m.u.raw);
			else
				err = cross_ask(x, a, &m, OP_RAWFIG, a);
			struct pair_figures *p = cross_pair(x, a, b);
			if (err || !p || isnan(m.u.raw.mb_per_s[0])) {
				check_set(cr, CK_RAW, CHECK_FAIL, "board %u's raw "
					  "writes into board %u's scratch data "
					  "failed: %s", a, b, smq_strerror(err));
				return;
			}
			p->raw_measured = true;
			for (int k = 0; k < CHECK_RAW_SIZES; k++) {
				p->write_mb_per_s[k] = m.u.raw.mb_per_s[k];
				if (cr->model && a == x->self)
					p->model_mb_per_s[k] = pcie_write_bandwidth(
						&link, check_raw_sizes[k]) / 1e6;
			}
			p->read_median_ns = m.u.raw.read_median_ns;
			p->read_p99_ns = m.u.raw.read_p99_ns;
			best = fmax(best, m.u.raw.mb_per_s[CHECK_RAW_SIZES - 1]);
			read = fmax(read, m.u.raw.read_median_ns);
			pairs++;
		}
	if (pairs)
		check_set(cr, CK_RAW, CHECK_PASS, "%u pair%s: posted writes up "
			  "to %.0f MB/s in 64 KiB units, single reads %.2f us "
			  "at the slowest median (the table below)", pairs,
			  pairs == 1 ? "" : "s", best, read / 1e3);
}

/* The queue's figures set beside the raw link's of the same pair. */
static void queue_figures(struct cross *x, struct pair_figures *p,
			  const struct queue_fig *f)
{
	p->queue_measured = true;
	p->half_rtt_ns = f->half_rtt_ns;
	p->pingpong_msgs_per_s = f->msgs_per_s;
	p->stream_size = f->stream_size;
	p->stream_mb_per_s = f->stream_mb_per_s;
	int k = CHECK_RAW_SIZES - 1;
	while (k > 0 && check_raw_sizes[k] > f->stream_size)
		k--;
	if (p->raw_measured && p->write_mb_per_s[k] > 0)
		p->stream_fraction = f->stream_mb_per_s / p->write_mb_per_s[k];
	if (p->raw_measured && p->read_median_ns > 0)
		p->rtt_over_read = 2 * f->half_rtt_ns / p->read_median_ns;
	(void)x;
}

void cross_queues(struct cross *x)
{
	struct check_run *cr = x->cr;
	struct wire_msg m;
	unsigned pairs = 0;
	double low = NAN, high = NAN;

	if (!check_wanted(cr, CK_QUEUES))
		return;
	for (unsigned a = 0; a < x->boards; a++)
		for (unsigned b = a + 1; b < x->boards; b++) {
			if (!both_ways(x, a, b))
				continue;
			int err = served(x, a, b, SERVE_SPIN, OP_QUEUE,
					 OP_QUEUEFIG, &m);
			struct pair_figures *p = cross_pair(x, a, b);
			const struct queue_fig *f = &m.u.queue;
			if (err || !p || f->errors) {
				check_set(cr, CK_QUEUES, CHECK_FAIL, "the queues "
					  "between boards %u and %u: %s", a, b,
					  err ? smq_strerror(err)
					  : "messages were lost or came wrong");
				check_next(cr, CK_QUEUES, "smqctl --board %u "
					   "pingpong --peer-board %u says more",
					   a, b);
				return;
			}
			queue_figures(x, p, f);
			low = fmin(low, f->half_rtt_ns);
			high = fmax(high, f->half_rtt_ns);
			pairs++;
		}
	if (pairs)
		check_set(cr, CK_QUEUES, CHECK_PASS, "%u pair%s: a ping-pong of "
			  "64 bytes and a stream came back whole, half round "
			  "trips %.2f to %.2f us (the table below)", pairs,
			  pairs == 1 ? "" : "s", low / 1e3, high / 1e3);
}
