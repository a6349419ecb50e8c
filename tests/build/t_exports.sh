#!/bin/sh
# The shared library exports exactly the functions the public header
# declares, under a version node of the symbol map, with the soname of
# the header's major version; the static library shows the same names;
# the symbol map lists exactly those; the tools' calls (smq_tools.h) are
# on neither library's face but in libsmq-tools.a, which smqctl links;
# the Debian symbols file and package follow the soname and the map; and
# every one has a man page of its own name, man/NAME.3 (the page, or a
# one-line ".so man3/PAGE.3" link to an existing page), whose NAME
# section lists it.  t_man.sh renders them and compares their SYNOPSIS
# with the header.
. "$(dirname "$0")/../lib/lib.sh"
lib=$B/libsmq.so
[ -e "$lib" ] || die "no $lib"
tmp=$T
nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u >"$tmp/exported"
grep -oE '\bsmq_[a-z0-9_]+\(' include/smq.h | tr -d '(' | sort -u >"$tmp/declared"
sed -n 's/^[[:space:]]*\(smq_[a-z0-9_]*\);/\1/p' libsmq/libsmq.map | sort -u >"$tmp/mapped"
if diff -u "$tmp/declared" "$tmp/exported"; then
	ok "the exported symbols are the public header's functions"
else
	failed "exported symbols differ from the public header"
fi
if diff -u "$tmp/declared" "$tmp/mapped"; then
	ok "libsmq.map lists the public header's functions"
else
	failed "libsmq.map differs from the public header"
fi
n=$(wc -l <"$tmp/exported")
[ "$n" -gt 10 ] && ok "$n symbols exported" || failed "only $n symbols exported"
# The static library an application links shows the same names, and
# nothing else: its other globals are made local.
stlib=$B/libsmq.a
[ -e "$stlib" ] || die "no $stlib"
nm -g --defined-only "$stlib" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/static"
if diff -u "$tmp/declared" "$tmp/static"; then
	ok "the static library's global names are the public header's functions"
else
	failed "the static library's global names differ from the public header"
fi

# The tools' calls (the ivshmem server, the vfio broker, the window's map
# and the raw link of smqctl check) are smqctl's and the tests', declared
# in include/smq_tools.h, which is never installed: none is in smq.h, in
# the map, or visible in either library, and the private archive that
# smqctl links has every one of them beside the public calls.
tools_h=include/smq_tools.h
if [ -e "$tools_h" ]; then
	grep -oE '\bsmq_[a-z0-9_]+\(' "$tools_h" | tr -d '(' | sort -u >"$tmp/tools"
else
	failed "no $tools_h: the tools' calls have no private header"
	: >"$tmp/tools"
fi
# the families that are the tools', whatever header declares them
grep -hoE '\bsmq_(server|broker|map|scratch)_[a-z0-9_]+\(' include/*.h |
	tr -d '(' | sort -u >"$tmp/families"
if diff -u "$tmp/families" "$tmp/tools"; then
	ok "every call of the server, broker, map and scratch families is in $tools_h only"
else
	failed "the tools' families and $tools_h's calls differ"
fi
[ "$(wc -l <"$tmp/tools")" -ge 17 ] && ok "$(wc -l <"$tmp/tools") tools' calls" ||
	failed "only $(wc -l <"$tmp/tools") tools' calls in $tools_h"
case_begin
for where in declared mapped exported static; do
	comm -12 "$tmp/tools" "$tmp/$where" | sed "s/^/$where: /" >"$tmp/leak"
	[ -s "$tmp/leak" ] && { failed "tools' calls on the library's face ($where):"; cat "$tmp/leak"; }
done
case_end "no tools' call is declared by smq.h, mapped, exported or global in libsmq.a"
toolslib=$B/libsmq-tools.a
[ -e "$toolslib" ] || die "no $toolslib"
nm -g --defined-only "$toolslib" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/toolslib"
sort -u "$tmp/declared" "$tmp/tools" >"$tmp/want_tools"
if diff -u "$tmp/want_tools" "$tmp/toolslib"; then
	ok "libsmq-tools.a holds smq.h's and $tools_h's calls, and nothing else"
else
	failed "libsmq-tools.a's global names differ from smq.h's and $tools_h's calls"
fi

# Every export carries a version node the map defines (LIBSMQ_1.0, ...).
sed -n 's/^\(LIBSMQ_[0-9][0-9.]*\)[[:space:]]*{.*/\1/p' libsmq/libsmq.map >"$tmp/nodes"
nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | while read -r s; do
	node=${s#*@}; node=${node#@}
	[ "$node" != "$s" ] && grep -qxF "$node" "$tmp/nodes" ||
		echo "$s: no version node of libsmq.map"
done >"$tmp/unversioned"
if [ -s "$tmp/unversioned" ]; then
	failed "exported symbols outside the version nodes of libsmq.map:"
	cat "$tmp/unversioned"
else
	ok "every export is under a version node of libsmq.map"
fi

major=$(sed -n 's/^#define SMQ_VERSION_MAJOR \([0-9]*\)$/\1/p' include/smq.h)
readelf -d "$lib" | grep -q "SONAME.*\[libsmq\.so\.$major\]" &&
	ok "the soname is libsmq.so.$major, the header's major version" ||
	failed "soname is not libsmq.so.$major"

# The Debian package is named for the soname, and its symbols file lists
# every export with its node and nothing else (dpkg-gensymbols -c4 fails
# a package build otherwise, but no test builds one): each node a line.
syms=debian/libsmq$major.symbols
if [ -e "$syms" ]; then
	sed -n 's/^ \([A-Za-z0-9_.]*@[A-Z0-9_.]*\) .*/\1/p' "$syms" | sort -u >"$tmp/debsyms"
	{ nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@@/, "@", $3); print $3 }'
	  sed 's/.*/&@&/' "$tmp/nodes"; } | sort -u >"$tmp/want_debsyms"
	if diff -u "$tmp/want_debsyms" "$tmp/debsyms"; then
		ok "$syms lists the exports and the map's nodes"
	else
		failed "$syms differs from the exports and the map's nodes"
	fi
	grep -q "^libsmq\.so\.$major libsmq$major " "$syms" &&
		ok "$syms is for libsmq.so.$major in package libsmq$major" ||
		failed "$syms does not name libsmq.so.$major and package libsmq$major"
else
	failed "no $syms: the library package is named for the soname"
fi
grep -q "^Package: libsmq$major\$" debian/control &&
	ok "debian/control builds libsmq$major" ||
	failed "debian/control has no package libsmq$major"

# The NAME section of a page: the names before "\-", one a word.
names_of() {
	sed -n '/^\.SH NAME/,/^\.SH/{/^\.SH/d;p;}' "$1" | tr '\n' ' ' |
		sed 's/\\-.*//' | tr ', ' '\n\n' | sed '/^$/d'
}
# Every export has its own man page name.
case_begin
while read -r f; do
	page=man/$f.3
	if [ ! -e "$page" ]; then
		failed "$f: no man page man/$f.3"; continue
	fi
	if grep -q '^\.so' "$page"; then
		target=$(sed -n 's|^\.so man3/\([a-z0-9_]*\.3\)$|\1|p' "$page")
		if [ "$(wc -l <"$page")" -ne 1 ] || [ -z "$target" ]; then
			failed "$page: a link is one line, .so man3/PAGE.3"; continue
		fi
		page=man/$target
		if [ ! -e "$page" ]; then
			failed "man/$f.3: links to $target, which does not exist"; continue
		fi
		if grep -q '^\.so' "$page"; then
			failed "man/$f.3: links to $target, itself a link"; continue
		fi
	fi
	names_of "$page" | grep -qxF "$f" ||
		failed "$page: NAME does not list $f"
done <"$tmp/exported"
case_end "every export has a man page of its name, or a link to one, whose NAME lists it"
# libsmq(3) lists every page in SEE ALSO.
case_begin
for page in man/*.3; do
	grep -q '^\.so' "$page" && continue
	p=${page#man/}; p=${p%.3}
	[ "$p" = libsmq ] && continue
	sed -n '/^\.SH SEE ALSO/,$p' man/libsmq.3 | grep -q "^\.BR $p (3)" ||
		failed "libsmq(3): SEE ALSO does not list $p(3)"
done
case_end "libsmq(3) lists every page in SEE ALSO"
any_failed || echo "$n exported symbols, all public, each with its man page"
finish 15
