#!/bin/sh
# Checked payloads as an operator meets them: a window formatted with
# init --checksum says so (dump, top); a message damaged in the window is
# refused by recv, which names it and exits 1 after delivering the next;
# dump, top --once, the metrics and the events count it on its queue.  A
# window without checksums shows no feature and no count.
# Exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
need_command python3 "it reads the JSON"
W=file:$T/window
jv() { python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d[int(k)] if isinstance(d, list) else d[k]
print(json.dumps(d))' "$@"; }

"$S" -w "$W" init -n 2 --queues 2 --entries 8 --entry-size 256 --checksum --no-scratch --journal 0 >/dev/null ||
	die "init --checksum"
"$S" -w "$W" dump >"$T/dump.txt" || failed "dump of a fresh window exit $?"
grep -q "format v3 (features: checksum, membarrier)" "$T/dump.txt" &&
	ok "dump: format v3 (features: checksum, membarrier)" || failed "dump does not say the feature: $(head -n 1 "$T/dump.txt")"
"$S" -w "$W" --json dump >"$T/dump.json"
[ "$(jv "$T/dump.json" features)" = '["checksum", "membarrier"]' ] &&
	ok "dump --json: features [\"checksum\", \"membarrier\"]" || failed "dump --json features: $(jv "$T/dump.json" features)"
"$S" -w "$W" top --once >"$T/top.txt" 2>&1
grep -q "checksums" "$T/top.txt" && ok "top --once: the window's checksums" ||
	failed "top --once does not say checksums: $(head -n 1 "$T/top.txt")"

# a message damaged in the window, then a whole one
printf 'SMQ-DAMAGE-ME\n' | "$S" -w "$W" -b 0 send --queue 1 || failed "send"
flip_bits "$T/window" SMQ-DAMAGE-ME 3 0x40 || failed "flip"
printf 'SMQ-WHOLE\n' | "$S" -w "$W" -b 0 send --queue 1 || failed "send"
"$S" -w "$W" -b 1 recv --queue 1 --count 1 --timeout 5s >"$T/recv.out" 2>"$T/recv.err"
rc=$?
[ $rc = 1 ] && [ "$(cat "$T/recv.out")" = SMQ-WHOLE ] &&
	grep -q "the message from board 0 on queue 1 (14 bytes) failed its checksum: refused, not delivered" "$T/recv.err" &&
	ok "recv: the damaged message refused and named, the next delivered, exit 1" ||
	failed "recv: exit $rc, wrote '$(cat "$T/recv.out")', said '$(cat "$T/recv.err")'"

"$S" -w "$W" dump >"$T/dump.txt"
grep -q "1 message failed its checksum: refused, not delivered" "$T/dump.txt" &&
	ok "dump: 1 message failed its checksum" || { failed "dump does not count it"; sed 's/^/    /' "$T/dump.txt"; }
"$S" -w "$W" --json dump >"$T/dump.json"
[ "$(jv "$T/dump.json" queue_table.1.corrupt)" = 1 ] && [ "$(jv "$T/dump.json" queue_table.1.received)" = 1 ] &&
	[ "$(jv "$T/dump.json" queue_table.0.corrupt)" = 0 ] &&
	ok "dump --json: queue 1 corrupt 1, received 1; queue 0 corrupt 0" ||
	failed "dump --json: queue 1 corrupt $(jv "$T/dump.json" queue_table.1.corrupt), received $(jv "$T/dump.json" queue_table.1.received)"
"$S" -w "$W" --json top --once >"$T/top.json" 2>/dev/null
[ "$(jv "$T/top.json" queue_table.1.corrupt)" = 1 ] &&
	ok "top --once --json: queue 1 corrupt 1" || failed "top --once --json: queue 1 corrupt '$(jv "$T/top.json" queue_table.1.corrupt 2>&1)'"
"$S" -w "$W" metrics >"$T/metrics" 2>&1
grep -Eq '^smq_queue_corrupt_messages_total\{[^}]*queue="1"[^}]*\} 1$' "$T/metrics" &&
	grep -Eq '^smq_queue_corrupt_messages_total\{[^}]*queue="0"[^}]*\} 0$' "$T/metrics" &&
	ok "metrics: smq_queue_corrupt_messages_total 1 on queue 1, 0 on queue 0" ||
	{ failed "metrics: no corrupt count"; grep corrupt "$T/metrics" | sed 's/^/    /'; }

# without the feature: nothing said, nothing counted
"$S" -w "$W" init -n 2 --queues 2 --entries 8 --entry-size 256 --force --no-scratch --journal 0 >/dev/null || failed "init"
"$S" -w "$W" dump | grep -q "format v3 (features: membarrier)" &&
	ok "dump of a window without checksums: features membarrier" || failed "dump without checksums"
"$S" -w "$W" --json dump >"$T/dump.json"
[ "$(jv "$T/dump.json" features)" = '["membarrier"]' ] && [ "$(jv "$T/dump.json" queue_table.1.corrupt)" = 0 ] &&
	ok "dump --json: features [\"membarrier\"], corrupt 0" || failed "dump --json without checksums: $(jv "$T/dump.json" features)"
finish 10
