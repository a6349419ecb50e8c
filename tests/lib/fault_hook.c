/* Test builds of smqctl only (tests/smqctl-hooked, never installed):
 * faults that smqctl check must find, injected through the library's test
 * hooks (libsmq/hook.h), named by the environment.
 *
 *     SMQ_TEST_VIEW=SELF:BOARD:KIND:VALUE[:write],...
 *
 * board SELF's reads (or, with :write, writes) of board BOARD's region, as
 * the map and raw link tests make them, go astray: KIND shift adds VALUE
 * (bytes, negative allowed) to the offset, wrap makes the region's body
 * wrap every VALUE bytes, ones and zeros set and clear the bits of VALUE
 * in every word written, drop (VALUE ignored) loses every write.
 *
 *     SMQ_TEST_SKIP=ring
 *
 * a sender never rings a sleeping receiver's doorbell: it is never
 * delivered, and the receiver wakes only at its sleep slice.
 *
 *     SMQ_TEST_ARMED_MS=N
 *
 * a receiver that has armed its sleep (it shows as sleeping) waits N ms
 * before it looks at its lanes once more: a message sent meanwhile reaches
 * it without its doorbell.  Not with SMQ_TEST_HOLD (one hook at a time).
 *
 * A bad value ends the run (exit 3, not 1 or 2, which the tests expect of
 * smqctl itself). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "format/hook.h"

#define MAX_FAULTS 8

static struct view_fault {
	unsigned self, board;
	int write;
	struct smq_test_fault f;
} faults[MAX_FAULTS];
static int nfaults;

static int view(unsigned self, unsigned board, int write,
		struct smq_test_fault *f)
{
	for (int i = 0; i < nfaults; i++)
		if (faults[i].self == self && faults[i].board == board &&
		    faults[i].write == write) {
			*f = faults[i].f;
			return 1;
		}
	return 0;
}

static int skip_ring(enum smq_hook where)
{
	return where == SMQ_HOOK_RING;
}

static int armed_ms;

static void slow_look(enum smq_hook where)
{
	struct timespec nap = { armed_ms / 1000, (armed_ms % 1000) * 1000000L };

	/* the delay asked for, on purpose: a slow receiver */
	if (where == SMQ_HOOK_ARMED)
		nanosleep(&nap, NULL);
}

static void bad(const char *var, const char *value)
{
	fprintf(stderr, "fault_hook: %s='%s': want %s\n", var, value,
		!strcmp(var, "SMQ_TEST_SKIP") ? "ring"
		: !strcmp(var, "SMQ_TEST_ARMED_MS") ? "1 to 10000"
		: "SELF:BOARD:shift|wrap|ones|zeros|drop:VALUE[:write]");
	_exit(3);
}

static void parse_view(const char *spec, char *one)
{
	struct view_fault *v = &faults[nfaults];
	char kind[16] = "", how[16] = "";
	long long value = 0;
	int n = 0;

	if (nfaults == MAX_FAULTS ||
	    sscanf(one, "%u:%u:%15[a-z]:%lli%n", &v->self, &v->board, kind,
		   &value, &n) != 4)
		bad("SMQ_TEST_VIEW", spec);
	if (one[n] && (sscanf(one + n, ":%15s", how) != 1 ||
		       strcmp(how, "write")))
		bad("SMQ_TEST_VIEW", spec);
	memset(&v->f, 0, sizeof(v->f));
	v->write = one[n] != 0;
	if (!strcmp(kind, "shift"))
		v->f.shift = value;
	else if (!strcmp(kind, "wrap") && value > 0)
		v->f.wrap = (uint64_t)value;
	else if (!strcmp(kind, "ones"))
		v->f.ones = (uint64_t)value;
	else if (!strcmp(kind, "zeros"))
		v->f.zeros = (uint64_t)value;
	else if (!strcmp(kind, "drop"))
		v->f.drop = 1;
	else
		bad("SMQ_TEST_VIEW", spec);
	nfaults++;
}

__attribute__((constructor)) static void faults_from_env(void)
{
	const char *view_spec = getenv("SMQ_TEST_VIEW");
	const char *skip = getenv("SMQ_TEST_SKIP");
	const char *armed = getenv("SMQ_TEST_ARMED_MS");

	if (view_spec && *view_spec) {
		char copy[512], *save = NULL;
		snprintf(copy, sizeof(copy), "%s", view_spec);
		for (char *one = strtok_r(copy, ",", &save); one;
		     one = strtok_r(NULL, ",", &save))
			parse_view(view_spec, one);
		smq_test_view = view;
	}
	if (skip && *skip) {
		if (strcmp(skip, "ring"))
			bad("SMQ_TEST_SKIP", skip);
		smq_test_skip = skip_ring;
	}
	if (armed && *armed) {
		armed_ms = atoi(armed);
		if (armed_ms < 1 || armed_ms > 10000)
			bad("SMQ_TEST_ARMED_MS", armed);
		smq_test_hook = slow_look;
	}
}
