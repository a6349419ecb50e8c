#!/bin/sh
# The shared library exports exactly the functions the public header
# declares, under a version node of the symbol map, with the soname of
# the header's major version; the symbol map lists exactly those; and
# every one has a man page of its own name, man/NAME.3 (the page, or a
# one-line ".so man3/PAGE.3" link to an existing page), whose NAME
# section lists it.  t_man.sh renders them and compares their SYNOPSIS
# with the header.
B=${B:-build}
cd "$(dirname "$0")/../.." || exit 1
lib=$B/libsmq.so
[ -e "$lib" ] || { echo "no $lib"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u >"$tmp/exported"
grep -oE '\bsmq_[a-z0-9_]+\(' include/smq.h | tr -d '(' | sort -u >"$tmp/declared"
sed -n 's/^[[:space:]]*\(smq_[a-z0-9_]*\);/\1/p' libsmq/libsmq.map | sort -u >"$tmp/mapped"
status=0
if ! diff -u "$tmp/declared" "$tmp/exported"; then
	echo "exported symbols differ from the public header"; status=1
fi
if ! diff -u "$tmp/declared" "$tmp/mapped"; then
	echo "libsmq.map differs from the public header"; status=1
fi
n=$(wc -l <"$tmp/exported")
[ "$n" -gt 10 ] || { echo "only $n symbols exported"; status=1; }

# Every export carries a version node the map defines (LIBSMQ_1.0, ...).
sed -n 's/^\(LIBSMQ_[0-9][0-9.]*\)[[:space:]]*{.*/\1/p' libsmq/libsmq.map >"$tmp/nodes"
nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | while read -r s; do
	node=${s#*@}; node=${node#@}
	[ "$node" != "$s" ] && grep -qxF "$node" "$tmp/nodes" ||
		echo "$s: no version node of libsmq.map"
done >"$tmp/unversioned"
[ -s "$tmp/unversioned" ] && { cat "$tmp/unversioned"; status=1; }

major=$(sed -n 's/^#define SMQ_VERSION_MAJOR \([0-9]*\)$/\1/p' include/smq.h)
readelf -d "$lib" | grep -q "SONAME.*\[libsmq\.so\.$major\]" ||
	{ echo "soname is not libsmq.so.$major"; status=1; }

# The NAME section of a page: the names before "\-", one a word.
names_of() {
	sed -n '/^\.SH NAME/,/^\.SH/{/^\.SH/d;p;}' "$1" | tr '\n' ' ' |
		sed 's/\\-.*//' | tr ', ' '\n\n' | sed '/^$/d'
}
# Every export has its own man page name.
while read -r f; do
	page=man/$f.3
	if [ ! -e "$page" ]; then
		echo "$f: no man page man/$f.3"; status=1; continue
	fi
	if grep -q '^\.so' "$page"; then
		target=$(sed -n 's|^\.so man3/\([a-z0-9_]*\.3\)$|\1|p' "$page")
		if [ "$(wc -l <"$page")" -ne 1 ] || [ -z "$target" ]; then
			echo "$page: a link is one line, .so man3/PAGE.3"; status=1; continue
		fi
		page=man/$target
		if [ ! -e "$page" ]; then
			echo "man/$f.3: links to $target, which does not exist"; status=1; continue
		fi
		if grep -q '^\.so' "$page"; then
			echo "man/$f.3: links to $target, itself a link"; status=1; continue
		fi
	fi
	names_of "$page" | grep -qxF "$f" ||
		{ echo "$page: NAME does not list $f"; status=1; }
done <"$tmp/exported"
# libsmq(3) lists every page in SEE ALSO.
for page in man/*.3; do
	grep -q '^\.so' "$page" && continue
	p=${page#man/}; p=${p%.3}
	[ "$p" = libsmq ] && continue
	sed -n '/^\.SH SEE ALSO/,$p' man/libsmq.3 | grep -q "^\.BR $p (3)" ||
		{ echo "libsmq(3): SEE ALSO does not list $p(3)"; status=1; }
done
[ $status -eq 0 ] && echo "$n exported symbols, all public, each with its man page"
exit $status
