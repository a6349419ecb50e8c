#!/bin/sh
# The runner tells the truth: fake tests, each written to be one case,
# run through tests/run.sh (and check-all's summary), the scripts'
# library (tests/lib/lib.sh) and the C tests' (tests/lib/testlib.c):
#  (a) a skip after a failed check is a failure, never a skip;
#  (b) a part a script skips (skip_part) and its notes are shown under its
#      PASS line, and check-all's list of what was skipped names them;
#  (c) a failed check in a subshell or a pipeline is counted;
#  (d) a line "FAIL" fails a test that exits 0, and so does no work said;
#  (e) a test killed by a signal is said to be, by its name; a timeout
#      only when the time is up;
#  (f) a C test states its floor: none, or fewer checks, fails it;
#  (g) a child that fails (FAIL, or a crash) fails its C test at once,
#      whatever the parent waits for (a child, a condition, a receive of
#      the library that waits forever), and so does a grandchild's FAIL;
#      a child the test kills, or one that exits non-zero on purpose,
#      does not;
#  (h) without ps the scripts' cleanup fails loudly and kills its children
#      all the same, never waiting for one it believes killed.
# Where a case must end by itself, the bound given is a give-up bound of
# the case (the fake waits forever otherwise), not a speed.
. "$(dirname "$0")/../lib/lib.sh"
# check-all runs this script's fakes, never its own make check (which
# would run this script again)
[ -z "${SMQ_IN_T_RUNNER:-}" ] || skip "run by itself through check-all"

F=$T/fk/tests/cli
mkdir -p "$F" "$T/c" || die "mkdir $F"
# fake NAME: a script from stdin, $F/NAME.sh, that sources the library
fake() {
	{ echo '#!/bin/sh'; echo ". '$ROOT/tests/lib/lib.sh'"; cat; } >"$F/$1.sh" &&
		chmod 755 "$F/$1.sh"
}
# plain NAME: a script from stdin without the library
plain() {
	{ echo '#!/bin/sh'; cat; } >"$F/$1.sh" && chmod 755 "$F/$1.sh"
}
# runner NAME SECS TEST...: run.sh over TEST..., TEST_TIMEOUT SECS; its
# output in $T/NAME.out, its status in rc
runner() {
	_n=$1 _s=$2
	shift 2
	TEST_TIMEOUT=$_s sh "$ROOT/tests/run.sh" "$@" >"$T/$_n.out" 2>&1
	rc=$?
}
# has NAME TEXT: the output of NAME has a line with TEXT (fixed)
has() { grep -qF -e "$2" "$T/$1.out" || no "its output lacks '$2'"; }
lacks() { ! grep -qF -e "$2" "$T/$1.out" || no "its output has '$2'"; }
show_run() { sed "s|$T|\$T|g; s/^/       /" "$T/$_n.out" | head -n 20; }

# ---- (a) a skip is never a failure's disguise ----
fake t_skip_after_fail <<'EOF'
failed "a check"
skip "no such thing here"
EOF
runner skip_after_fail 60 "$F/t_skip_after_fail.sh"
want_rc 1
has skip_after_fail "FAIL t_skip_after_fail.sh: "
lacks skip_after_fail "SKIP t_skip_after_fail.sh"
verdict "(a) skip after a failed check: the script fails, and run.sh says FAIL"
plain t_fail_then_77 <<'EOF'
echo "FAIL a check"
echo "nothing to do here"
exit 77
EOF
runner fail_then_77 60 "$F/t_fail_then_77.sh"
want_rc 1
has fail_then_77 "FAIL t_fail_then_77.sh: exit 77 (a skip), but it printed 1 line(s) FAIL"
verdict "(a) exit 77 after a line FAIL (a C test's way): run.sh says FAIL"

# ---- (b) parts skipped, and notes, shown under PASS and listed ----
fake t_skip_part <<'EOF'
ok "the first part"
skip_part "the second part" "no tool here"
note "the third part not tried: no device"
finish 1
EOF
fake t_skipped <<'EOF'
skip "nothing to do here"
EOF
runner skip_part 60 "$F/t_skip_part.sh"
want_rc 0
has skip_part "PASS t_skip_part.sh"
has skip_part "    skip the second part: no tool here"
has skip_part "    note: the third part not tried: no device"
verdict "(b) a script with a part skipped passes, the part and its note under PASS"
(cd "$ROOT" && SMQ_IN_T_RUNNER=1 timeout -k 5 120 sh tests/check-all.sh -- \
	sh tests/run.sh "$F/t_skip_part.sh" "$F/t_skipped.sh") >"$T/all.out" 2>&1
rc=$? _n=all
want_rc 0
has all "1 passed, 0 failed, 1 skipped (t_skip_part.sh, the second part: no tool here [given]; t_skip_part.sh, a part: the third part not tried: no device [given]; t_skipped.sh: nothing to do here [given])"
verdict "(b) check-all's last line lists the skipped test, the skipped part and the note"

# ---- (c) failures in subshells and pipelines count ----
fake t_subshell <<'EOF'
ok "one"
( failed "in a subshell" )
echo x | while read -r _; do failed "in a pipeline"; done
finish 1
EOF
"$F/t_subshell.sh" >"$T/subshell.out" 2>&1
rc=$? _n=subshell
want_rc 1
has subshell "1 passed, 2 failed"
verdict "(c) a failed check in a subshell and in a pipeline: counted, the script fails"

# ---- (d) what a passing exit status cannot hide ----
plain t_fail_line <<'EOF'
echo "FAIL something"
echo "work: checks 1 (floor 1)"
exit 0
EOF
runner fail_line 60 "$F/t_fail_line.sh"
want_rc 1
has fail_line "FAIL t_fail_line.sh: exit 0, but it printed 1 line(s) FAIL"
verdict "(d) a line FAIL and exit 0: run.sh says FAIL"
plain t_no_work <<'EOF'
echo "all is well"
exit 0
EOF
runner no_work 60 "$F/t_no_work.sh"
want_rc 1
has no_work "FAIL t_no_work.sh: exit 0, but it did not say its work"
verdict "(d) exit 0 without a line work: run.sh says FAIL"

# ---- (e) how a test died ----
plain t_killed <<'EOF'
kill -s KILL $$
EOF
plain t_segv <<'EOF'
kill -s SEGV $$
EOF
plain t_slow <<'EOF'
exec sleep 600
EOF
runner killed 60 "$F/t_killed.sh"
want_rc 1
has killed "FAIL t_killed.sh: killed by SIGKILL after "
lacks killed "timed out"
verdict "(e) a test killed by SIGKILL: run.sh names the signal, not a timeout"
runner segv 60 "$F/t_segv.sh"
want_rc 1
has segv "FAIL t_segv.sh: killed by SIGSEGV after "
verdict "(e) a test killed by SIGSEGV: run.sh names the signal"
runner slow 1 "$F/t_slow.sh"
want_rc 1
has slow "FAIL t_slow.sh: timed out after 1s"
verdict "(e) a test that outlives TEST_TIMEOUT: timed out"

# ---- (f), (g): C tests ----
CC=${CC:-cc}
floor=21
if [ ! -f "$B/libsmq-internal.a" ]; then
	skip_part "(f) and (g), the C tests' cases" "no $B/libsmq-internal.a: make tests first"
	floor=11
else
	cat >"$T/c/nofloor.c" <<'EOF'
#include "testlib.h"
int main(void) { CHECK(1); return 0; }
EOF
	cat >"$T/c/floor.c" <<'EOF'
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "testlib.h"
TEST_FLOOR(2);
static int forever(void *a) { (void)a; for (;;) pause(); }
static pid_t test_pid;          /* the test's own process */
/* The test's process is asleep (in a wait, past what it does before) */
static bool test_asleep(void)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)test_pid);
	return test_proc_state(path) == 'S';
}
/* fails once the test's process waits: the failure must wake it */
static int fails(void *a)
{
	(void)a;
	WAIT_UNTIL(test_asleep(), 60, "the test's process to wait");
	FAIL("the second child fails");
}
static int crashes(void *a)
{
	(void)a;
	prctl(PR_SET_DUMPABLE, 0);      /* no core file */
	raise(SIGSEGV);
	return 0;
}
static int quits(void *a) { return *(int *)a; }
/* a child that waits forever outside testlib while its own child fails */
static int fails_below(void *a)
{
	(void)a;
	test_fork(fails, NULL);
	for (;;)
		pause();
}
/* Waits in the library, SMQ_WAIT_FOREVER, for the message that a child
 * (made by child(NULL)) was to send; returns only if the receive does. */
static void receive_forever(pid_t (*child)(void))
{
	struct smq_window *w = test_init(test_window(), 1, 1, 8, 64);
	struct smq_queue *rx;
	char buf[64];
	size_t len;
	unsigned from;

	OK(smq_queue_open(w, 0, SMQ_RECEIVER, 0, &rx));
	test_waiting("the message the child was to send");
	child();
	int r = smq_receive(rx, buf, sizeof(buf), &len, &from,
			    SMQ_WAIT_FOREVER);
	FAIL("the receive that waits forever returned %d", r);
}
static pid_t a_child_fails(void) { return test_fork(fails, NULL); }
static pid_t a_grandchild_fails(void) { return test_fork(fails_below, NULL); }
/* pid has ended (not reaped) */
static bool ended(pid_t pid)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	       si.si_pid == pid;
}
int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	int zero = 0, three = 3, st;

	test_pid = getpid();

	if (!strcmp(c, "met")) {
		CHECK(1);
		CHECK(1);
	} else if (!strcmp(c, "under")) {
		CHECK(1);
	} else if (!strcmp(c, "child")) {
		pid_t a = test_fork(forever, NULL);
		test_fork(fails, NULL);
		test_wait_ok(a, "the child that waits forever");
	} else if (!strcmp(c, "until")) {
		test_fork(fails, NULL);
		WAIT_UNTIL(0, 3600, "what never comes");
	} else if (!strcmp(c, "crash")) {
		pid_t a = test_fork(forever, NULL);
		test_fork(crashes, NULL);
		test_wait_ok(a, "the child that waits forever");
	} else if (!strcmp(c, "blocked")) {
		receive_forever(a_child_fails);
	} else if (!strcmp(c, "below")) {
		receive_forever(a_grandchild_fails);
	} else if (!strcmp(c, "killed")) {
		pid_t a = test_fork(forever, NULL);
		pid_t q = test_fork(quits, &three);
		pid_t b = test_fork(quits, &zero);
		kill(a, SIGKILL);
		WAIT_UNTIL(ended(q) && ended(a), 60, "the children to end");
		test_wait_ok(b, "the child that exits 0");
		CHECK(waitpid(a, &st, 0) == a && WIFSIGNALED(st));
		CHECK(waitpid(q, &st, 0) == q && WEXITSTATUS(st) == 3);
	}
	return 0;
}
EOF
	cflags="-D_GNU_SOURCE -Iinclude -Ilibsmq -Itests/lib -std=c11 -pthread"
	if $CC $cflags -o "$T/c/nofloor" "$T/c/nofloor.c" tests/lib/testlib.c \
		"$B/libsmq-internal.a" >"$T/cc.out" 2>&1 &&
	   $CC $cflags -o "$T/c/floor" "$T/c/floor.c" tests/lib/testlib.c \
		"$B/libsmq-internal.a" >>"$T/cc.out" 2>&1; then
		ok "the fake C tests build against testlib.c"
	else
		failed "the fake C tests do not build:"; sed 's/^/    /' "$T/cc.out"
	fi
	for c in met under child until blocked below crash killed; do
		printf '#!/bin/sh\nexec "%s" %s\n' "$T/c/floor" "$c" >"$F/t_c_$c" &&
			chmod 755 "$F/t_c_$c"
	done
	runner nofloor 60 "$T/c/nofloor"
	want_rc 1
	has nofloor "states no floor"
	verdict "(f) a C test that states no floor fails"
	runner under 60 "$F/t_c_under"
	want_rc 1
	has under "under its floor of 2"
	verdict "(f) a C test under the floor it states fails"
	runner met 60 "$F/t_c_met"
	want_rc 0
	has met "    work: checks 2 (floor 2)"
	verdict "(f) a C test at its floor passes, saying checks 2 (floor 2)"
	# the give-up bound: the child that waits forever would hold the
	# test to it
	runner child 60 "$F/t_c_child"
	want_rc 1
	has child "the second child fails"
	has child "failed (its message is above) while the test waited for the child that waits forever"
	lacks child "timed out"
	verdict "(g) a child fails while the test waits for another that never ends: the test fails at once"
	runner until 60 "$F/t_c_until"
	want_rc 1
	has until "the second child fails"
	lacks until "timed out"
	verdict "(g) a child fails while the test waits for a condition (WAIT_UNTIL): the test fails at once"
	runner blocked 60 "$F/t_c_blocked"
	want_rc 1
	has blocked "the second child fails"
	has blocked "failed (its message is above) while the test waited for the message the child was to send"
	lacks blocked "timed out"
	lacks blocked "the receive that waits forever returned"
	verdict "(g) a child fails while the test waits in smq_receive(SMQ_WAIT_FOREVER): the test fails at once"
	runner below 60 "$F/t_c_below"
	want_rc 1
	has below "the second child fails"
	has below "failed (its message is above) while the test waited for the message the child was to send"
	lacks below "timed out"
	verdict "(g) a grandchild fails while its parent pauses and the test waits in smq_receive: the test fails at once"
	runner crash 60 "$F/t_c_crash"
	want_rc 1
	has crash "was killed by SIGSEGV while the test waited for the child that waits forever"
	lacks crash "timed out"
	verdict "(g) a child crashes while the test waits for another: the test fails at once"
	runner killed 60 "$F/t_c_killed"
	want_rc 0
	has killed "PASS t_c_killed"
	verdict "(g) a child the test killed, and one that exits 3 on purpose, fail nothing"
fi

# ---- (h) the cleanup without ps ----
mkdir "$T/bin" || die "mkdir $T/bin"
for f in /usr/bin/* /bin/*; do
	case ${f##*/} in ps) continue ;; esac
	[ -e "$T/bin/${f##*/}" ] || ln -s "$f" "$T/bin/${f##*/}"
done
fake t_no_ps <<'EOF'
bg_start sleep 600
ok "a child started"
finish 1
EOF
# the give-up bound: a cleanup that killed nothing waits for sleep 600
PATH=$T/bin timeout -k 5 60 "$F/t_no_ps.sh" >"$T/no_ps.out" 2>&1
rc=$? _n=no_ps
want_rc 1
has no_ps "FAIL kill_tree: ps does not run here"
verdict "(h) without ps: the cleanup fails loudly, kills its child and does not wait for it"

finish $floor
