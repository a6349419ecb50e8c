#!/bin/sh
# smqctl metrics, on a window under traffic (init, sync of 2 boards, sends
# and receives, a doorbell, a full wait):
#  (1) promtool check metrics accepts the output;
#  (2) the counters and states equal those of smqctl --json dump;
#  (3) --textfile replaces its file atomically (a reader never sees half
#      of it, each write is a new file renamed over the last), and
#      node_exporter's textfile collector exposes our families;
#  (4) a Prometheus server scrapes --listen, and a query through its API
#      gives the value dump shows;
#  (5) the endpoint survives a request left half-sent, a 100 KiB header,
#      methods other than GET (405 or 400) and 1000 connections at once,
#      and then answers the next scrape correctly;
#  (6) none of this wrote the window (cmp before and after);
#  (7) a removed window gives smq_up 0 and nothing else, and a new window
#      of the same name is followed;
#  and the options' errors: a port in use, a bad ADDR:PORT, a missing DIR,
#  SIGTERM ending --listen and --textfile with 0.  With valgrind installed,
#  a --listen run under it: no error.  Without promtool, prometheus or
#  prometheus-node-exporter (Debian's packages), their checks are skipped
#  with a note.  Exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
need_command python3 "it parses the metrics"
H="python3 $ROOT/tests/cli/metrics_check.py"
cd "$T" || exit 1
export SMQ_WINDOW="file:$T/w"
unset SMQ_DEBUG 2>/dev/null

# waitfor SECONDS SHELL-CONDITION: poll it every 0.05 s
waitfor() { within "$1" eval "$2"; }
bg() { bg_start "$@"; }
# stop PID: SIGTERM, then its exit status in $rc (bounded)
stop() { stop_pid 10 "$1" "metrics, sent SIGTERM"; }
# the checks whose running depends on what is installed, counted as they run
some=0
port() { $H port; }
# scrape PORT FILE: GET /metrics into FILE
scrape() { $H get "$1" /metrics 10 >"$2"; }

# ---- a window under traffic ----
"$S" init --boards 2 --queues 3 --entries 4 --entry-size 256 >/dev/null ||
	die "init"
bg "$S" -b 1 sync --timeout 10 >/dev/null
"$S" sync --timeout 10 >/dev/null || die "sync"
wait_pid 20 $pid "board 1's sync"
for m in one two three; do "$S" send -q 1 "$m" || failed "send"; done
"$S" -b 1 send -q 2 "from board one" || failed "send"
"$S" -b 1 recv -q 1 -c 2 -T 10 >/dev/null || failed "recv"
# a doorbell: board 0 sleeps on queue 0 until board 1 sends
bg "$S" recv -q 0 -c 1 -T 20 >/dev/null
rpid=$pid
# asleep, not just started (a slow machine, or valgrind, takes its time)
waitfor 15 "\"$S\" --json dump -q 0 2>/dev/null | grep -q '\"sleeping\": true'" ||
	failed "the receiver of queue 0 never went to sleep"
"$S" -b 1 send -q 0 "wake up" || failed "send"
wait_pid 30 "$rpid" "the receiver of queue 0" || failed "recv of the doorbell"
# a full wait: board 0's lane of queue 1 full (4 entries: 1 left, 3 more),
# one more send waits until board 1 takes one
for m in 4 5 6; do "$S" send -q 1 "fill $m" || failed "send"; done
bg "$S" send -q 1 -T 20 "waited"
spid=$pid
waitfor 15 "\"$S\" --json dump -q 1 2>/dev/null | grep -q '\"full_waits\": 1'" ||
	failed "the send on a full lane never waited"
"$S" -b 1 recv -q 1 -c 1 -T 10 >/dev/null || failed "recv"
wait_pid 30 "$spid" "the send on a full lane" || failed "the send that waited"
cp w w.before

# ---- (1) and (2): printed once ----
"$S" metrics >m1 2>m1.err
rc=$?
[ "$rc" = 0 ] && ok "metrics printed (exit 0)" || failed "metrics exit $rc: $(cat m1.err)"
if command -v promtool >/dev/null 2>&1; then
	some=$((some + 1))
	if promtool check metrics <m1 >promtool.out 2>&1; then
		ok "(1) promtool check metrics accepts it"
	else
		failed "(1) promtool check metrics: $(cat promtool.out)"
	fi
else
	note "(1) skipped: no promtool (Debian's prometheus package)"
fi
$H parse m1 && ok "(1) every family has HELP and TYPE; counters end in _total" ||
	failed "(1) the text"
"$S" --json dump >dump.json || failed "dump"
if $H compare dump.json m1; then
	ok "(2) counters, fill, queued and states equal dump's"
else
	failed "(2) metrics and dump"
fi
grep -q 'kind="diagnostic"' m1 && grep -q 'kind="application"' m1 &&
	ok "(2) diagnostic queues are marked kind=\"diagnostic\"" ||
	failed "(2) no kind label"
sent1=$($H value m1 smq_queue_sent_messages_total queue=1)
waits=$($H value m1 smq_queue_full_waits_total queue=1)
bells=$($H value m1 smq_queue_doorbells_total queue=0)
[ "$sent1" = 7 ] && [ "$waits" = 1 ] && [ "$bells" -ge 1 ] &&
	ok "(2) traffic shows: 7 sent on queue 1, 1 full wait, $bells doorbell(s)" ||
	failed "(2) sent $sent1 (7), full waits $waits (1), doorbells $bells (>= 1)"

# a label value with a backslash, a quote and a newline is escaped
nl='
'
"$S" -w "file:$T/w\\\"$nl" metrics >esc 2>/dev/null
grep -qF 'smq_up{window="file:'"$T"'/w\\\"\n"} 0' esc &&
	ok "label values escape backslash, quote and newline" ||
	failed "escaping: $(head -n 3 esc)"

# ---- (3) --textfile ----
mkdir tf
types=$(grep -c '^# TYPE ' m1)
bg "$S" metrics --textfile tf --interval 0.05 --count 60 2>tf.err
tpid=$pid
waitfor 5 "[ -e tf/smq-file_${T#/}_w.prom ] || ls tf/*.prom >/dev/null 2>&1"
prom=$(ls tf/*.prom 2>/dev/null | head -n 1)
if [ -n "$prom" ] && tally $H watch "$prom" 2 "$types"; then
	ok "(3) --textfile replaces its file atomically"
else
	failed "(3) --textfile: $(cat tf.err)"
fi
wait_pid 10 "$tpid" "metrics --textfile --count 60"
[ "$rc" = 0 ] && ok "(3) --count 60: exit 0" || failed "(3) --textfile exit $rc"
left=$(ls -A tf | grep -v '\.prom$')
[ -z "$left" ] && ok "(3) no temporary file left" || failed "(3) left: $left"
case $prom in
*/smq-file_*_w.prom) ok "(3) the file is named for the window: ${prom##*/}" ;;
*) failed "(3) file name $prom" ;;
esac
rm -f tf/*.prom
bg "$S" metrics --textfile tf --interval 10 2>/dev/null
tpid=$pid
# the first write comes once SIGTERM is taken
waitfor 20 "ls tf/*.prom >/dev/null 2>&1"
NE=$(command -v prometheus-node-exporter || command -v node_exporter)
if [ -n "$NE" ]; then
	some=$((some + 1))
	nport=$(port)
	bg "$NE" --web.listen-address="127.0.0.1:$nport" \
		--collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$T/tf" >ne.log 2>&1
	if waitfor 10 "$H get $nport /metrics >ne.out 2>/dev/null" &&
		[ "$($H value ne.out smq_queue_sent_messages_total queue=1)" = 7 ] &&
		[ "$($H value ne.out smq_up)" = 1 ] &&
		[ "$($H value ne.out node_textfile_scrape_error)" = 0 ]; then
		ok "(3) node_exporter exposes our families from the textfile"
	else
		failed "(3) node_exporter: $(grep -i -m 3 'smq\|error' ne.out ne.log)"
	fi
else
	note "(3) node_exporter skipped: no prometheus-node-exporter"
fi
stop "$tpid"
[ "$rc" = 0 ] && ok "(3) SIGTERM ends --textfile --interval: exit 0" ||
	failed "(3) SIGTERM: exit $rc"
ls tf/*.prom >/dev/null 2>&1 &&
	failed "(3) the file outlived its watcher: $(ls tf)" ||
	ok "(3) a watcher that stops takes its file away (smq_up 1 is not left behind)"

# ---- (4) Prometheus scrapes --listen ----
mport=$(port)
bg "$S" metrics --listen "127.0.0.1:$mport" 2>listen.err
lpid=$pid
waitfor 10 "scrape $mport m2 2>/dev/null" || failed "(4) --listen does not answer: $(cat listen.err)"
if command -v prometheus >/dev/null 2>&1; then
	some=$((some + 1))
	pport=$(port)
	cat >prom.yml <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: smq
    static_configs:
      - targets: ['127.0.0.1:$mport']
EOF
	bg prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" \
		--web.listen-address="127.0.0.1:$pport" >prom.log 2>&1
	q='smq_queue_sent_messages_total{queue="1"}'
	if waitfor 30 "$H prom-query $pport '$q' >pq 2>/dev/null"; then
		got=$(cat pq)
		want=$(python3 -c 'import json,sys; print([q["sent"] for q in json.load(open("dump.json"))["queue_table"] if q["queue"] == 1][0])')
		[ "$got" = "$want" ] &&
			ok "(4) Prometheus scraped it: $q = $got, as dump says" ||
			failed "(4) Prometheus says $got, dump $want"
	else
		failed "(4) Prometheus returned no $q: $(tail -n 3 prom.log)"
	fi
else
	note "(4) skipped: no prometheus"
fi

# ---- (5) hostile clients ----
if $H abuse "$mport" >abuse.out 2>&1; then
	tally sed -n 's/^ok   /ok   (5) /p' abuse.out
	sed '/^ok /d' abuse.out >m3
	$H compare dump.json m3 && ok "(5) and the next scrape is correct" ||
		failed "(5) the scrape after the abuse"
else
	failed "(5) $(cat abuse.out | head -n 5)"
fi
kill -0 "$lpid" 2>/dev/null && ok "(5) --listen still runs" || failed "(5) --listen died"

# ---- errors ----
"$S" metrics --listen "127.0.0.1:$mport" >/dev/null 2>err
rc=$?
[ "$rc" = 1 ] && grep -q 'in use' err && ok "a port in use: exit 1, says so" ||
	failed "port in use: exit $rc: $(cat err)"
for a in nonsense:port 127.0.0.1:0 127.0.0.1:70000 ::1:80 '[::1:80'; do
	"$S" metrics --listen "$a" >/dev/null 2>err
	rc=$?
	[ "$rc" = 2 ] || failed "--listen $a: exit $rc, not 2: $(cat err)"
done
ok "a bad ADDR:PORT: exit 2"
"$S" metrics --textfile "$T/nosuch" >/dev/null 2>err
rc=$?
[ "$rc" = 1 ] && grep -q 'nosuch' err && ok "a missing DIR: exit 1, named" ||
	failed "missing DIR: exit $rc: $(cat err)"
"$S" metrics --textfile "$T/m1" >/dev/null 2>err
[ $? = 1 ] && grep -q 'not a directory' err && ok "a DIR that is a file: exit 1" ||
	failed "DIR a file: $(cat err)"
if [ "$(id -u)" != 0 ]; then
	some=$((some + 1))
	mkdir ro && chmod 555 ro
	"$S" metrics --textfile ro >/dev/null 2>err
	[ $? = 1 ] && ok "a DIR not writable: exit 1" || failed "DIR not writable: $(cat err)"
fi
for o in "--interval 1" "--count 2" "--listen 1 --textfile tf" "--json"; do
	# shellcheck disable=SC2086
	"$S" metrics $o >/dev/null 2>&1
	[ $? = 2 ] || failed "metrics $o: not a usage error"
done
ok "--interval or --count without --textfile, --listen with --textfile, --json: exit 2"

# ---- (6) nothing wrote the window ----
cmp -s w w.before && ok "(6) the window is byte for byte as before" ||
	failed "(6) the window changed"

# ---- (7) removal, and a new window of the same name ----
rm -f w
scrape "$mport" m4 && $H only-up m4 0 &&
	ok "(7) a removed window: smq_up 0 and no other series" ||
	failed "(7) after removal: $(head -n 5 m4)"
"$S" init --boards 3 --queues 1 >/dev/null || failed "init again"
"$S" send -q 0 "new" || failed "send on the new window"
scrape "$mport" m5
"$S" --json dump >dump2.json
if $H compare dump2.json m5; then
	ok "(7) the new window is followed (3 boards, 1 queue, 1 message)"
else
	failed "(7) the new window"
fi
# a window truncated under the server's mapping: a bus error at its next
# reading, which is that reading's failure, not the server's end
truncate -s 8192 w
scrape "$mport" m6 && $H only-up m6 0 && kill -0 "$lpid" 2>/dev/null &&
	ok "(7) a window truncated under --listen: smq_up 0, the server runs on" ||
	failed "(7) after truncation: $(head -n 5 m6 2>/dev/null) $(tail -n 3 listen.err)"
stop "$lpid"
[ "$rc" = 0 ] && ok "SIGTERM ends --listen: exit 0" || failed "--listen: exit $rc"

# ---- valgrind ----
if [ -n "${SMQCTL_WRAP:-}" ]; then
	note "smqctl runs under SMQCTL_WRAP: no valgrind run of its own"
elif grep -q '__asan_init\|__tsan_init' "$S"; then
	note "smqctl is built with a sanitizer: no valgrind run"
elif command -v valgrind >/dev/null 2>&1 &&
	! valgrind -q --vgdb=no "$S" --version >/dev/null 2>&1; then
	# Debian 12's valgrind does not read clang's DWARF 5
	note "valgrind cannot run this build of smqctl: no valgrind run"
elif command -v valgrind >/dev/null 2>&1 && valgrind --version >/dev/null 2>&1; then
	some=$((some + 1))
	vport=$(port)
	valgrind --quiet --error-exitcode=86 --leak-check=full \
		--show-leak-kinds=definite --errors-for-leak-kinds=definite \
		--vgdb=no --log-file="$T/vg.log" \
		"$S" metrics --listen "127.0.0.1:$vport" 2>vg.err &
	vpid=$!
	track $vpid
	waitfor 30 "scrape $vport v1 2>/dev/null" || failed "valgrind: no answer"
	$H get "$vport" /nosuch >/dev/null 2>&1
	printf 'POST /metrics HTTP/1.0\r\n\r\n' >post
	python3 -c 'import socket,sys; s=socket.create_connection(("127.0.0.1",int(sys.argv[1]))); s.sendall(open("post","rb").read()); s.recv(100)' "$vport"
	rm -f w
	scrape "$vport" v2 && $H only-up v2 0 || failed "valgrind: smq_up 0"
	"$S" init --boards 2 --queues 2 >/dev/null
	scrape "$vport" v3 && $H only-up v3 1 || failed "valgrind: smq_up 1"
	stop "$vpid"
	errs=$(grep -v '^==[0-9]*== *$' vg.log | grep -v '^==[0-9]*== Warning:')
	[ "$rc" = 0 ] && [ -z "$errs" ] &&
		ok "--listen under valgrind: no error, exit 0" ||
		failed "valgrind: exit $rc: $errs"
else
	note "valgrind not installed: no valgrind run"
fi

# 28 (5 of them the hostile clients'), and those that what is installed
# lets run
finish $((30 + some))
