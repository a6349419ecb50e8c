#!/bin/sh
# smqctl dump --json says which making of a window it looks at
# ("incarnation"), for a monitor to compare: init again and clear keep it,
# the window removed and made again under its name has another, a window
# without a journal has none (0).  Exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
W=$T/w
smq() { "$S" -w "file:$W" "$@"; }
inc() {
	smq --json dump >"$T/dump.json" || die "dump --json exits $?"
	jnum incarnation "$T/dump.json"
}

smq init --boards 2 --queues 2 --entries 8 --entry-size 64 >/dev/null || die "init"
first=$(inc)
[ -n "$first" ] && [ "$first" != 0 ] && ok "a new window has an incarnation ($first)" ||
	failed "a new window's incarnation is '$first'"
smq init --boards 2 --queues 2 --entries 8 --entry-size 64 >/dev/null || die "init again"
smq clear >/dev/null || die "clear"
smq clear --queue 1 >/dev/null || die "clear --queue 1"
again=$(inc)
[ "$again" = "$first" ] && ok "init again and clear keep it" ||
	failed "after init and clear: $again, was $first"
rm -f "$W"
smq init --boards 2 --queues 2 --entries 8 --entry-size 64 >/dev/null || die "init anew"
second=$(inc)
[ -n "$second" ] && [ "$second" != 0 ] && [ "$second" != "$first" ] &&
	ok "the window made again under its name has another ($second)" ||
	failed "the window made again: '$second', the first $first"
smq init --boards 2 --queues 2 --entries 8 --entry-size 64 --journal 0 \
	>/dev/null || die "init without a journal"
none=$(inc)
[ "$none" = 0 ] && ok "without a journal: 0" || failed "without a journal: '$none'"
finish 4
