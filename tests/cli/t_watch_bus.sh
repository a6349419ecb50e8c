#!/bin/sh
# A window cut short under a watcher's mapping (a file truncated, a device
# removed or reset) raises SIGBUS at its next reading.  events says the
# window cannot be read and watches on, and says it can be read again once
# the window is whole; metrics --textfile writes smq_up 0 and goes on.
# (top's live view, and metrics --listen, are tested so in t_top.sh and
# t_metrics.sh.)
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
W=file:$T/w
smq() { "$S" -w "$W" "$@"; }
smq init -n 2 --queues 2 --entries 4 >/dev/null || die "init"
mkdir "$T/tf"
PROM=$T/tf/smq-$(printf '%s' "$W" | tr -c 'A-Za-z0-9_.-' '_').prom
bg_start "$S" -w "$W" events -i 50ms -T $((30 * slow))s >"$T/ev.txt" 2>"$T/ev.err"
ev=$pid
bg_start "$S" -w "$W" metrics --textfile "$T/tf" --interval 100ms \
	--count $((300 * slow)) 2>"$T/met.err"
met=$pid
wait_line 10 "$PROM" '^smq_up{.*} 1$' || die "metrics never wrote smq_up 1"
truncate -s 8192 "$T/w"
wait_line 10 "$T/ev.txt" "window cannot be read" &&
	running "$ev" && ok "events: the window cut short cannot be read; events runs on" ||
	failed "events after truncation: $(cat "$T/ev.txt" "$T/ev.err")"
wait_line 10 "$PROM" '^smq_up{.*} 0$' && running "$met" &&
	ok "metrics --textfile: smq_up 0, and it runs on" ||
	failed "metrics after truncation: $(cat "$T/met.err")"
smq init -n 2 --queues 2 --entries 4 >/dev/null || die "init again"
wait_line 10 "$T/ev.txt" "window can be read again" &&
	ok "events: the window whole again, said so" ||
	failed "events after init: $(cat "$T/ev.txt" "$T/ev.err")"
wait_line 10 "$PROM" '^smq_up{.*} 1$' &&
	ok "metrics --textfile: smq_up 1 again" ||
	failed "metrics after init: $(cat "$T/met.err")"
finish 4
