/* smqctl check: the table of checks, verdicts as they are set, and the
 * report: a line per check (and what to do next under a WARN or FAIL),
 * the measurements between boards, and the summary line; or one JSON
 * object.  The exit status: 1 when a check failed (or, with --strict,
 * warned). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "check.h"

/* The checks' names and groups: here, with the verdicts that a group is
 * skipped by and the report that names them, under the command and every
 * part that sets a verdict. */
const struct check_def check_defs[CK_COUNT] = {
	[CK_FORMAT] = { "format", "window" },
	[CK_GENERATION] = { "generation", "window" },
	[CK_BOARDS] = { "boards", "window" },
	[CK_RECEIVERS] = { "receivers", "window" },
	[CK_FULL] = { "full-queues", "window" },
	[CK_STALLED] = { "stalled", "window" },
	[CK_DIAG] = { "diag-queues", "window" },
	[CK_LINK] = { "link", "pci" },
	[CK_AER] = { "aer", "pci" },
	[CK_PAYLOAD] = { "payload", "pci" },
	[CK_BAR] = { "bar", "pci" },
	[CK_VFIO] = { "vfio", "pci" },
	[CK_MAP] = { "map", "cross" },
	[CK_DOORBELLS] = { "doorbells", "cross" },
	[CK_RAW] = { "raw-link", "cross" },
	[CK_QUEUES] = { "queues", "cross" },
};

const size_t check_raw_sizes[CHECK_RAW_SIZES] = {
	64, 256, 1024, 4096, 16384, 65536
};

static const char *const status_words[] = { "PASS", "WARN", "FAIL", "SKIP" };
static const char *const status_keys[] = { "pass", "warn", "fail", "skip" };

void check_set(struct check_run *cr, enum check_id id,
	       enum check_status status, const char *fmt, ...)
{
	struct check_result *r = &cr->r[id];
	va_list ap;

	if (r->done || !check_wanted(cr, id))
		return;
	r->done = true;
	r->status = status;
	va_start(ap, fmt);
	vsnprintf(r->evidence, sizeof(r->evidence), fmt, ap);
	va_end(ap);
}

void check_next(struct check_run *cr, enum check_id id, const char *fmt, ...)
{
	struct check_result *r = &cr->r[id];
	va_list ap;

	if (!check_wanted(cr, id) || r->next[0])
		return;
	va_start(ap, fmt);
	vsnprintf(r->next, sizeof(r->next), fmt, ap);
	va_end(ap);
}

void check_skip_group(struct check_run *cr, const char *group,
		      const char *fmt, ...)
{
	char why[sizeof(cr->r[0].evidence)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	for (int i = 0; i < CK_COUNT; i++)
		if (!strcmp(check_defs[i].group, group))
			check_set(cr, (enum check_id)i, CHECK_SKIP, "%s", why);
}

/* The first thing to fix: the first FAIL in the order of the checks,
 * else the first WARN; -1 when there is none. */
static int first_to_fix(const struct check_run *cr)
{
	for (int want = CHECK_FAIL; want >= CHECK_WARN; want--)
		for (int i = 0; i < CK_COUNT; i++)
			if (cr->r[i].done && (int)cr->r[i].status == want)
				return i;
	return -1;
}

static double us(double ns)
{
	return ns / 1000;
}

/* A number, or "-" when it is not known, in width columns. */
static void cell(double v, int width, int decimals)
{
	if (isfinite(v))
		printf(" %*.*f", width, decimals, v);
	else
		printf(" %*s", width, "-");
}

static void print_bells(const struct check_run *cr)
{
	bool any = false;

	for (int i = 0; i < cr->npairs; i++)
		any |= cr->pairs[i].bell_measured;
	if (!any)
		return;
	printf("\ndoorbells: a round trip to a board asleep on its "
	       "doorbell, in us\n  FROM  TO   MEDIAN      P99      MAX   "
	       "POLLED\n");
	for (int i = 0; i < cr->npairs; i++) {
		const struct pair_figures *p = &cr->pairs[i];
		if (!p->bell_measured)
			continue;
		printf("  %4u %3u", p->from, p->to);
		if (!p->bell_delivered) {
			printf("  not delivered: %s\n", p->bell_why);
			continue;
		}
		cell(us(p->wake_median_ns), 8, 1);
		cell(us(p->wake_p99_ns), 8, 1);
		cell(us(p->wake_max_ns), 8, 1);
		cell(us(p->polled_median_ns), 8, 1);
		printf("\n");
	}
	printf("POLLED: the median round trip with the board polling; the "
	       "difference is the wake-up\n");
}

static void print_raw(const struct check_run *cr)
{
	bool any = false, model = false;

	for (int i = 0; i < cr->npairs; i++) {
		any |= cr->pairs[i].raw_measured;
		model |= cr->pairs[i].raw_measured &&
			 isfinite(cr->pairs[i].model_mb_per_s[0]);
	}
	if (!any)
		return;
	printf("\nraw link: posted writes into the board's scratch area in "
	       "MB/s, by unit; single reads in us\n  FROM  TO");
	for (int k = 0; k < CHECK_RAW_SIZES; k++) {
		char size[32];
		printf(" %9s", size_words(check_raw_sizes[k], size));
	}
	printf(" READ-MED READ-P99\n");
	for (int i = 0; i < cr->npairs; i++) {
		const struct pair_figures *p = &cr->pairs[i];
		if (!p->raw_measured)
			continue;
		printf("  %4u %3u", p->from, p->to);
		for (int k = 0; k < CHECK_RAW_SIZES; k++)
			cell(p->write_mb_per_s[k], 9, 1);
		cell(us(p->read_median_ns), 8, 2);
		cell(us(p->read_p99_ns), 8, 2);
		printf("\n");
		if (!model || !isfinite(p->model_mb_per_s[0]))
			continue;
		printf("   model  ");
		for (int k = 0; k < CHECK_RAW_SIZES; k++)
			cell(p->model_mb_per_s[k], 9, 1);
		printf("\n");
	}
	printf("model: %s\n", cr->model_note);
}

static void print_queues(const struct check_run *cr)
{
	bool any = false;

	for (int i = 0; i < cr->npairs; i++)
		any |= cr->pairs[i].queue_measured;
	if (!any)
		return;
	printf("\nqueues: a short ping-pong of 64 bytes and a stream, on the "
	       "diagnostic queues\n  FROM  TO  HALF-RTT-US     MSGS/S  "
	       "RTT/READ  STREAM  STREAM-MB/S  OF-RAW\n");
	for (int i = 0; i < cr->npairs; i++) {
		const struct pair_figures *p = &cr->pairs[i];
		char size[32];
		if (!p->queue_measured)
			continue;
		printf("  %4u %3u", p->from, p->to);
		cell(us(p->half_rtt_ns), 12, 2);
		cell(p->pingpong_msgs_per_s, 10, 0);
		cell(p->rtt_over_read, 9, 1);
		printf(" %7s", size_words(p->stream_size, size));
		cell(p->stream_mb_per_s, 12, 1);
		if (isfinite(p->stream_fraction))
			printf(" %6.0f%%\n", 100 * p->stream_fraction);
		else
			printf(" %7s\n", "-");
	}
	printf("RTT/READ: a round trip over the queues in single reads of "
	       "the raw link; OF-RAW: the stream\nas a share of the raw "
	       "posted writes of the nearest unit\n");
}

static void print_text(const struct check_run *cr, int counts[4], int first)
{
	printf("check of %s as board %u", cr->window_name[0] ? cr->window_name
	       : window_spec(cr->ctx), cr->ctx->board);
	if (cr->boards)
		printf(" (%u board%s)", cr->boards, cr->boards == 1 ? "" : "s");
	printf("\n");
	for (int i = 0; i < CK_COUNT; i++) {
		const struct check_result *r = &cr->r[i];
		if (!r->done)
			continue;
		printf("%s  %-12s %s\n", status_words[r->status],
		       check_defs[i].name, r->evidence);
		if (r->next[0] && (r->status == CHECK_WARN ||
				   r->status == CHECK_FAIL))
			printf("      next: %s\n", r->next);
	}
	print_bells(cr);
	print_raw(cr);
	print_queues(cr);
	printf("%s%d passed, %d warned, %d failed, %d skipped", cr->npairs ?
	       "\n" : "", counts[CHECK_PASS], counts[CHECK_WARN],
	       counts[CHECK_FAIL], counts[CHECK_SKIP]);
	if (first < 0)
		printf(": nothing to fix\n");
	else
		printf("; first to fix: %s: %s\n", check_defs[first].name,
		       cr->r[first].next[0] ? cr->r[first].next
		       : cr->r[first].evidence);
}

static void json_num(struct json *j, const char *key, double v, int dec)
{
	if (isfinite(v))
		json_double(j, key, v, dec);
	else
		json_null(j, key);
}

static void json_pair(struct json *j, const struct pair_figures *p)
{
	json_begin(j, NULL, '{');
	json_u64(j, "from", p->from);
	json_u64(j, "to", p->to);
	if (p->bell_measured)
		json_bool(j, "doorbell_delivered", p->bell_delivered);
	else
		json_null(j, "doorbell_delivered");
	json_str(j, "doorbell_note", p->bell_why);
	json_num(j, "wake_median_ns", p->wake_median_ns, 0);
	json_num(j, "wake_p99_ns", p->wake_p99_ns, 0);
	json_num(j, "wake_max_ns", p->wake_max_ns, 0);
	json_num(j, "polled_median_ns", p->polled_median_ns, 0);
	json_begin(j, "raw_writes", '[');
	for (int k = 0; p->raw_measured && k < CHECK_RAW_SIZES; k++) {
		json_begin(j, NULL, '{');
		json_u64(j, "size", check_raw_sizes[k]);
		json_num(j, "mb_per_s", p->write_mb_per_s[k], 1);
		json_num(j, "model_mb_per_s", p->model_mb_per_s[k], 1);
		json_end(j, '}');
	}
	json_end(j, ']');
	json_num(j, "read_median_ns", p->read_median_ns, 0);
	json_num(j, "read_p99_ns", p->read_p99_ns, 0);
	json_num(j, "half_rtt_ns", p->half_rtt_ns, 0);
	json_num(j, "pingpong_msgs_per_s", p->pingpong_msgs_per_s, 0);
	json_u64(j, "stream_size", p->stream_size);
	json_num(j, "stream_mb_per_s", p->stream_mb_per_s, 1);
	json_num(j, "stream_fraction", p->stream_fraction, 3);
	json_num(j, "rtt_over_read", p->rtt_over_read, 2);
	json_end(j, '}');
}

static void print_json(const struct check_run *cr, int counts[4], int first,
		       int rc)
{
	struct json j;

	json_open(&j, stdout);
	json_begin(&j, NULL, '{');
	json_str(&j, "window", cr->window_name[0] ? cr->window_name
		 : window_spec(cr->ctx));
	json_u64(&j, "board", cr->ctx->board);
	json_u64(&j, "boards", cr->boards);
	json_bool(&j, "strict", cr->o->strict);
	json_bool(&j, "peer_mode", cr->o->peer_mode);
	json_begin(&j, "checks", '[');
	for (int i = 0; i < CK_COUNT; i++) {
		const struct check_result *r = &cr->r[i];
		if (!r->done)
			continue;
		json_begin(&j, NULL, '{');
		json_str(&j, "name", check_defs[i].name);
		json_str(&j, "group", check_defs[i].group);
		json_str(&j, "status", status_keys[r->status]);
		json_str(&j, "evidence", r->evidence);
		if (r->next[0] && r->status != CHECK_PASS &&
		    r->status != CHECK_SKIP)
			json_str(&j, "next", r->next);
		else
			json_null(&j, "next");
		json_end(&j, '}');
	}
	json_end(&j, ']');
	json_str(&j, "model", cr->model_note);
	json_begin(&j, "pairs", '[');
	for (int i = 0; i < cr->npairs; i++)
		json_pair(&j, &cr->pairs[i]);
	json_end(&j, ']');
	json_begin(&j, "summary", '{');
	for (int s = CHECK_PASS; s <= CHECK_SKIP; s++)
		json_u64(&j, status_keys[s], (uint64_t)counts[s]);
	if (first >= 0) {
		json_str(&j, "first", check_defs[first].name);
		json_str(&j, "first_next", cr->r[first].next[0]
			 ? cr->r[first].next : cr->r[first].evidence);
	} else {
		json_null(&j, "first");
		json_null(&j, "first_next");
	}
	json_end(&j, '}');
	json_u64(&j, "exit", (uint64_t)rc);
	json_end(&j, '}');
	json_close(&j);
}

int check_report(struct check_run *cr)
{
	int counts[4] = { 0 };

	for (int i = 0; i < CK_COUNT; i++)
		if (cr->r[i].done)
			counts[cr->r[i].status]++;
	int first = first_to_fix(cr);
	int rc = counts[CHECK_FAIL] || (cr->o->strict && counts[CHECK_WARN])
		 ? 1 : 0;
	if (cr->ctx->json)
		print_json(cr, counts, first, rc);
	else
		print_text(cr, counts, first);
	return rc;
}
