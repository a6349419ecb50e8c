#!/bin/sh
# The shared library exports exactly the functions the public header
# declares, the symbol map lists exactly those, and libsmq(3) documents
# each.
B=${B:-build}
cd "$(dirname "$0")/.." || exit 1
lib=$B/libsmq.so
[ -e "$lib" ] || { echo "no $lib"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u >"$tmp/exported"
grep -oE '\bsmq_[a-z0-9_]+\(' libsmq/smq.h | tr -d '(' | sort -u >"$tmp/declared"
sed -n 's/^[[:space:]]*\(smq_[a-z0-9_]*\);/\1/p' libsmq/libsmq.map | sort -u >"$tmp/mapped"
status=0
if ! diff -u "$tmp/declared" "$tmp/exported"; then
	echo "exported symbols differ from the public header"; status=1
fi
if ! diff -u "$tmp/declared" "$tmp/mapped"; then
	echo "libsmq.map differs from the public header"; status=1
fi
# and libsmq(3) documents every one of them
while read -r f; do
	grep -q "\b$f\b" man/libsmq.3 || { echo "libsmq(3) does not document $f"; status=1; }
done <"$tmp/declared"
n=$(wc -l <"$tmp/exported")
[ "$n" -gt 10 ] || { echo "only $n symbols exported"; status=1; }
readelf -d "$lib" | grep -q 'SONAME.*libsmq.so.0' || { echo "no soname"; status=1; }
[ $status -eq 0 ] && echo "$n exported symbols, all public"
exit $status
