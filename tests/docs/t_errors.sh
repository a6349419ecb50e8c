#!/bin/sh
# smq.h and the pages agree on every error: each error a comment of smq.h
# gives a call (-EXXX, -SMQ_EXXX) is listed in the ERRORS section of that
# call's page, for that call (tests/docs/header_errors.py says how an
# error is tied to its call).  Exit 0 pass, 1 fail, 77 skip (no python3).
. "$(dirname "$0")/../lib/lib.sh"
command -v python3 >/dev/null 2>&1 ||
	skip "no python3: the comparison is a Python program"
python3 tests/docs/header_errors.py >"$T/out" 2>&1 ||
	{ cat "$T/out"; die "header_errors.py failed"; }
n=$(sed -n 's/^compared \([0-9]*\) disagree [0-9]*$/\1/p' "$T/out")
bad=$(sed -n 's/^compared [0-9]* disagree \([0-9]*\)$/\1/p' "$T/out")
[ -n "$n" ] && [ -n "$bad" ] || { cat "$T/out"; die "no count from header_errors.py"; }
# smq.h names more than 25 errors of its calls: fewer means the parse broke
[ "$n" -ge 25 ] && ok "$n errors smq.h gives its calls compared with the pages" ||
	failed "only $n errors of smq.h's calls found"
if [ "$bad" -eq 0 ]; then
	ok "every error smq.h gives a call is in its page's ERRORS, for that call"
else
	failed "$bad errors of smq.h are not in their pages' ERRORS:"
	grep '^FAIL ' "$T/out" | sed 's/^FAIL /    /'
fi
finish 2
