#!/bin/sh
# The example alerting rules (cli/metrics/smq-alerts.yml): promtool finds
# them sound, each fires on the series it is for and only then
# (tests/cli/smq-alerts.test.yml), and every smq_ series they name is one
# smqctl metrics exposes.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
command -v promtool >/dev/null 2>&1 ||
	skip "promtool not found (Debian's prometheus package; make deps installs it)"
rules=$ROOT/cli/metrics/smq-alerts.yml
promtool check rules "$rules" >"$T/out" 2>&1 &&
	ok "promtool check rules: $(grep -o '[0-9]* rules found' "$T/out")" ||
	failed "promtool check rules: $(cat "$T/out")"
(cd "$ROOT/tests/cli" && promtool test rules smq-alerts.test.yml) >"$T/out" 2>&1 &&
	ok "promtool test rules: every alert fires when it should, and only then" ||
	failed "promtool test rules: $(cat "$T/out")"
# the names the rules use, against a window's metrics
export SMQ_WINDOW=shm:$SHM
"$S" init -n 2 --queues 2 >/dev/null || die "init"
"$S" metrics >"$T/metrics" || failed "metrics"
missing=""
for name in $(grep -o 'smq_[a-z_]*' "$rules" | sort -u); do
	grep -q "^$name[{ ]" "$T/metrics" || missing="$missing $name"
done
[ -z "$missing" ] && ok "every smq_ series of the rules is one smqctl metrics exposes" ||
	failed "the rules name series smqctl metrics does not expose:$missing"
finish 3
