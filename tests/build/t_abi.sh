#!/bin/sh
# The ABI of the built libsmq.so against the last release's, kept in
# libsmq/abi/ (abidiff, from Debian's abigail-tools).  A change that breaks
# a program built against that release fails, unless the soname moved with
# it (then the release's ABI file must be the new one's); an addition
# passes and is listed.  Members added at a struct's end are additions
# (libsmq/abi/growth.suppr: structs cross the interface with their size).
. "$(dirname "$0")/../lib/lib.sh"
command -v abidiff >/dev/null || skip "abidiff not installed (Debian's abigail-tools)"
lib=$B/libsmq.so
[ -e "$lib" ] || die "no $lib: build first"
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
base=libsmq/abi/$soname.abi
[ -e "$base" ] || die "no $base: a new soname needs the ABI file of its first release (abidw --header-file include/smq.h --out-file $base $lib)"
tmp=$T
# A struct held by value inside another (smq_window_info holds a
# smq_geometry) moves every member after it when it grows: growth at the
# end is let pass for the others only.
held=$(sed -n 's/^[[:space:]]*struct \(smq_[a-z_]*\) [a-z_]*\(\[[0-9A-Z_]*\]\)\{0,1\};.*/\1/p' \
	include/smq.h | sort -u | paste -sd'|')
{ cat libsmq/abi/growth.suppr
  [ -n "$held" ] && echo "  name_not_regexp = ^($held)\$"
} >"$tmp/growth.suppr"
abidiff --header-file2 include/smq.h --suppressions "$tmp/growth.suppr" \
	--no-added-syms "$base" "$lib" >"$tmp/out" 2>&1
st=$?
# abidiff's exit status is a bit field: 1 error, 2 usage, 4 a change,
# 8 a change that breaks callers
if [ $((st & 3)) -ne 0 ]; then
	failed "abidiff failed:"; cat "$tmp/out"; exit 1
fi
# with additions and growth at a struct's end left out, any change left
# is one a program built against the release can meet
if [ $((st & 12)) -ne 0 ]; then
	failed "the ABI of $lib breaks programs built against $base:"
	cat "$tmp/out"
	echo "(a break needs a new soname: SMQ_VERSION_MAJOR in smq.h, and its ABI file)"
else
	ok "ABI of $soname: nothing that breaks a program built against $base"
fi
added=$(abidiff --header-file2 include/smq.h "$base" "$lib" 2>/dev/null |
	grep -o '\[A\] .*\bsmq_[a-z0-9_]*[(@]' | grep -o 'smq_[a-z0-9_]*' | sort -u | tr '\n' ' ')
[ -n "$added" ] && echo "added since the release: $added"
# a release's node of the symbol map is never added to: what is not in the
# release's ABI file must be in a newer node
sed -n "s/.*<elf-symbol name='\([a-z0-9_]*\)'.*/\1/p" "$base" | sort -u >"$tmp/released"
nodes=$(sed -n "s/.*<elf-symbol name='[a-z0-9_]*' .*version='\([A-Z0-9_.]*\)'.*/\1/p" "$base" | sort -u)
nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | while IFS=@ read -r sym _ ver; do
	grep -qx "$sym" "$tmp/released" && continue
	for n in $nodes; do
		[ "$ver" = "$n" ] && echo "$sym is new but in the released node $n of libsmq.map: add a node for this release"
	done
done >"$tmp/nodes"
if [ -s "$tmp/nodes" ]; then
	failed "a symbol added to a released node of libsmq.map:"
	cat "$tmp/nodes"
else
	ok "no symbol added to a node of libsmq.map that $base holds"
fi
finish 2
