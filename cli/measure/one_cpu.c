/* bench --baseline: smq's software alone, with no second CPU to wait for
 * (compare.h).  Across two CPUs a message costs the slower side's calls
 * and the cache lines it waits for; here each line is in this CPU's cache,
 * so what is left is what the calls themselves do: their instructions and
 * their barriers: what a stream split over two CPUs cannot beat, and a
 * figure that moves less than theirs on a shared machine (58 to 114 ns
 * over fifteen runs on the 2-CPU VM of 2026-11-29, the ring's message 28
 * to 111). */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include "baseline_proc.h"
#include "compare.h"

/* Messages sent before they are received: a few, so that the entries
 * stay in this CPU's cache as they would in a stream's. */
#define ONE_BATCH 16u

struct one {
	struct smq_window *w0, *w1;
	struct smq_queue *rx, *tx;
};

static void one_close(struct one *o)
{
	if (o->rx)
		smq_queue_close(o->rx);
	if (o->tx)
		smq_queue_close(o->tx);
	if (o->w0)
		smq_close(o->w0);
	if (o->w1)
		smq_close(o->w1);
}

/* n messages from seq: each sent, then each received and checked.  0, or
 * the exit status (said). */
static int one_round(struct one *o, uint8_t *msg, uint8_t *got, size_t size,
		     uint64_t seq, unsigned n)
{
	size_t len;
	unsigned from;
	int err;

	for (unsigned i = 0; i < n; i++) {
		uint64_t k = seq + i;
		memcpy(msg, &k, size < sizeof(k) ? size : sizeof(k));
		if ((err = smq_send(o->tx, msg, size, 0)))
			return say_error("one CPU: send: %s", smq_strerror(err));
	}
	for (unsigned i = 0; i < n; i++) {
		uint64_t k = 0, want = seq + i;
		if ((err = smq_receive(o->rx, got, SMALL_ENTRY_SIZE, &len, &from,
				       0)))
			return say_error("one CPU: receive: %s",
					 smq_strerror(err));
		memcpy(&k, got, len < sizeof(k) ? len : sizeof(k));
		if (len != size || from != 1 ||
		    memcmp(&k, &want, size < sizeof(k) ? size : sizeof(k)))
			return say_error("one CPU: message %llu came back wrong",
					 (unsigned long long)want);
	}
	return 0;
}

static int one_measure(struct one *o, size_t size, uint32_t entries,
		       uint64_t count, struct result *r)
{
	uint8_t msg[SMALL_ENTRY_SIZE] = { 0 }, got[SMALL_ENTRY_SIZE];
	uint64_t seq = 0, t0, t1;
	struct cpu_window win;
	int rc;

	/* one untimed lap of twice the entries, as the ring's */
	for (; seq < 2ull * entries; seq += ONE_BATCH)
		if ((rc = one_round(o, msg, got, size, seq, ONE_BATCH)))
			return rc;
	cpu_window_start(&win);
	t0 = now_ns();
	uint64_t end = seq + count;
	while (seq < end && !measure_interrupted) {
		unsigned n = end - seq < ONE_BATCH ? (unsigned)(end - seq)
						   : ONE_BATCH;
		if ((rc = one_round(o, msg, got, size, seq, n)))
			return rc;
		seq += n;
	}
	t1 = now_ns();
	cpu_window_stop(&win, &r->cpu_a, &r->wall_a);
	uint64_t done = seq - 2ull * entries;
	if (!done || t1 == t0)
		return say_error("one CPU: %s", done ? "too short to time"
						     : "interrupted");
	result_rates(r, done, t1 - t0);
	return 0;
}

int one_cpu_calls(size_t size, uint32_t entries, uint64_t count, int cpu,
		  struct result *r)
{
	char path[128], spec[160];
	struct one o = { 0 };
	cpu_set_t before;
	bool saved;
	int err, rc;

	result_init(r, "smq, one CPU", size);
	if (size > SMALL_ENTRY_SIZE || entries < ONE_BATCH)
		return say_error("one CPU: %zu-byte messages through %u entries",
				 size, entries);
	if ((rc = scratch_make(entries, SMALL_ENTRY_SIZE, 0, spec, sizeof(spec),
			       path, sizeof(path))))
		return rc;
	saved = sched_getaffinity(0, sizeof(before), &before) == 0;
	if (cpu >= 0 && (err = cpu_pin(cpu)) < 0) {
		rc = say_error("one CPU: cannot run on CPU %d: %s", cpu,
			       strerror(err == -1 ? errno : -err));
	} else if ((err = smq_open(spec, 0, 0, &o.w0)) ||
		   (err = smq_open(spec, 1, 0, &o.w1)) ||
		   (err = smq_queue_open(o.w0, 0, SMQ_RECEIVER, SMQ_POLL,
					 &o.rx)) ||
		   (err = smq_queue_open(o.w1, 0, SMQ_SENDER, 0, &o.tx))) {
		rc = say_error("one CPU: %s: %s", spec, smq_strerror(err));
	} else {
		rc = one_measure(&o, size, entries, count, r);
	}
	one_close(&o);
	if (saved)
		sched_setaffinity(0, sizeof(before), &before);
	unlink(path);
	return rc;
}
