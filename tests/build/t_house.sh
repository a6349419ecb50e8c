#!/bin/sh
# The tree's shape holds (HACKING.md, "The layers"):
#  - a file of libsmq/ includes and calls only files of its own floor or
#    below; the floors are HACKING.md's table (the lines "| N | folders |"
#    under "The floors of libsmq"), read here, so that the table and the
#    code cannot part;
#  - cli/ and probes/ include nothing of libsmq/ but the public header;
#  - no two source files call each other in a loop, however long: the
#    calls are read from the built objects (nm: a name one object needs
#    and another defines), so they need the build ($B) first;
#  - no source file is over 600 lines;
#  - HACKING.md's diagram draws the floors in the table's order, and its
#    table of where the code is names every file of libsmq/.
# house.allow beside this script names what is let through, each with its
# reason; an entry no longer needed fails too, so that the list shrinks.
. "$(dirname "$0")/../lib/lib.sh"
limit=600
allow=tests/build/house.allow
[ -e "$B/libsmq-internal.a" ] || die "no $B/libsmq-internal.a: build first"

# ---- the floors ----
# floor FOLDER..., one line a folder: "libsmq/window/ 3"
awk '/^The floors of libsmq/ { on = 1 } on && /^\| *[0-9]+ *\|/ {
	n = $2
	for (i = 4; i <= NF; i++) {
		f = $i; gsub(/[`,|]/, "", f)
		if (f ~ /^libsmq\//) print f, n
	}
} on && /^$/ && seen { on = 0 } on && /^\|/ { seen = 1 }' HACKING.md >"$T/floors"
if [ "$(wc -l <"$T/floors")" -ge 3 ]; then
	ok "HACKING.md's floors: $(sort -k2n "$T/floors" | awk '{ printf "%s%s %s", s, $2, $1; s = ", " }')"
else
	failed "HACKING.md holds no table of floors under \"The floors of libsmq\""
fi
# every folder of libsmq/ with sources has a floor
for d in $(ls -d libsmq/*/ | grep -v -e examples/ -e abi/); do
	ls "$d" | grep -q '\.[ch]$' || continue
	grep -q "^$d " "$T/floors" || failed "$d has no floor in HACKING.md's table"
done

# the diagram draws the floors in the table's order, top floor first
awk '/^## The layers/ { on = 1 } /^The floors of libsmq/ { on = 0 }
	on && /└─> libsmq\/|^    libsmq\// {
		for (i = 1; i <= NF; i++) if ($i ~ /^libsmq\//) { f = $i; sub(/,$/, "", f); print f }
	}' HACKING.md >"$T/drawn"
sort -k2nr -k1 "$T/floors" | awk '{ print $1 }' >"$T/table_order"
if [ -s "$T/drawn" ] && [ "$(sort "$T/drawn")" = "$(sort "$T/table_order")" ] &&
	awk 'NR == FNR { fl[$1] = $2; next } { f = fl[$1]; if (n++ && f > last) bad = 1; last = f }
		END { exit bad }' "$T/floors" "$T/drawn"; then
	ok "HACKING.md's diagram draws the floors of the table, top first"
else
	failed "HACKING.md's diagram and its table of floors disagree:"
	paste "$T/drawn" "$T/table_order" | sed 's/^/    /'
fi

# sources: every .c and .h of libsmq (not its examples), cli and probes
find libsmq cli probes -name '*.[ch]' ! -path 'libsmq/examples/*' |
	sort >"$T/sources"

# floor_of FILE: its floor, or nothing outside libsmq/
floor_of() {
	awk -v f="$1" 'index(f, $1) == 1 { print $2; exit }' "$T/floors"
}

# HACKING.md's table of where the code is names every file of libsmq/
# in its folder's row
for src in $(grep '^libsmq/' "$T/sources"); do
	dir=${src%/*}/ file=${src##*/}
	grep "^| \`$dir\` |" HACKING.md | grep -q "\`$file\`" ||
		echo "$src"
done >"$T/unnamed"
if [ -s "$T/unnamed" ]; then
	failed "HACKING.md's table does not name, in its folder's row:"
	sed 's/^/    /' "$T/unnamed"
else
	ok "HACKING.md's table names every file of libsmq/"
fi

# allowed KIND WHAT: whether house.allow lets it through (and marks it used)
allowed() {
	if grep -q "^$1 $2 " "$allow"; then
		echo "$1 $2" >>"$T/used"
		return 0
	fi
	return 1
}
: >"$T/used"

# ---- includes ----
# "FILE INCLUDED" for each #include "..." of a source, resolved as the
# compiler does: beside the file, then libsmq/, include/, probes/.
while read -r src; do
	dir=${src%/*}
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$src" |
	while read -r inc; do
		for p in "$dir/$inc" "libsmq/$inc" "include/$inc" "probes/$inc"; do
			if [ -e "$p" ]; then
				echo "$src $(realpath --relative-to=. "$p")"
				break
			fi
		done
	done
done <"$T/sources" >"$T/includes"
bad=0
while read -r from to; do
	case $from in
	cli/* | probes/*)
		case $to in
		libsmq/*)
			allowed inward "$from" && continue
			failed "$from includes $to: cli/ and probes/ see the library only through include/smq.h"
			bad=1 ;;
		esac
		continue ;;
	esac
	ff=$(floor_of "$from") tf=$(floor_of "$to")
	[ -n "$ff" ] && [ -n "$tf" ] || continue
	if [ "$tf" -gt "$ff" ]; then
		allowed up "$from $to" && continue
		failed "$from (floor $ff) includes $to (floor $tf): a floor includes only its own and those below"
		bad=1
	fi
done <"$T/includes"
[ $bad = 0 ] && ok "includes: $(wc -l <"$T/includes") read, none up a floor or into the library from cli/"

# ---- calls, from the objects ----
# "FILE D NAME" and "FILE U NAME" for each object of a source
: >"$T/syms"
missing=0
for src in $(grep '\.c$' "$T/sources"); do
	o=$B/${src%.c}.o
	if [ ! -e "$o" ]; then
		failed "no $o: build first (make tests)"
		missing=1
		continue
	fi
	nm "$o" | awk -v f="$src" '
		$1 == "U" { print f, "U", $2; next }
		NF == 3 && $2 ~ /^[TDBRCVWG]$/ { print f, "D", $3 }' >>"$T/syms"
done
[ $missing = 0 ] || finish 1
# A header's inline functions are calls too, which no object shows as its
# own: a header and its .c are one room (window.h's are window.c's); a
# header without a .c lends its inline calls to each file including it.
for h in $(grep '\.h$' "$T/sources"); do
	awk '/static inline/ { inl = 1; depth = 0; opened = 0 }
	inl {
		line = $0
		while (match(line, /[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\(/)) {
			name = substr(line, RSTART, RLENGTH)
			sub(/[[:space:]]*\($/, "", name)
			if (opened) print name
			line = substr(line, RSTART + RLENGTH)
		}
		n = gsub(/\{/, "{"); m = gsub(/\}/, "}")
		if (n) opened = 1
		depth += n - m
		if (opened && depth <= 0) inl = 0
	}' "$h" | sort -u >"$T/inl"
	[ -s "$T/inl" ] || continue
	if [ -e "${h%.h}.c" ]; then
		rooms=${h%.h}.c
	else
		rooms=$(awk -v h="$h" '$2 == h && $1 ~ /\.c$/ { print $1 }' "$T/includes")
	fi
	for r in $rooms; do
		sed "s|^|$r U |" "$T/inl"
	done
done >>"$T/syms"
# and a header's inline functions are its room's: defined there, called
# by whoever names them
for h in $(grep '\.h$' "$T/sources"); do
	awk '/static inline/ { want = 1 }
	want && match($0, /[A-Za-z_][A-Za-z0-9_]*\(/) {
		print substr($0, RSTART, RLENGTH - 1); want = 0
	}' "$h" | sed "s|^|${h%.h}.c D |"
done | awk '{ print $3 > "'"$T"'/inline_names" } $1 != "" { print }' >"$T/inline_defs"
[ -e "${T}/inline_names" ] || : >"$T/inline_names"
awk '{ print $1 }' "$T/inline_defs" | sort -u | while read -r room; do
	[ -e "$room" ] || sed -i "\|^$room |d" "$T/inline_defs"
done
cat "$T/inline_defs" >>"$T/syms"
for src in $(grep '\.c$' "$T/sources"); do
	grep -oE '[A-Za-z_][A-Za-z0-9_]*[[:space:]]*\(' "$src" | tr -d '( \t' |
		sort -u | grep -xF -f "$T/inline_names" | sed "s|^|$src U |"
done >>"$T/syms"
# "FROM TO NAME": FROM needs NAME and TO defines it, within one program
# (libsmq/ alone; cli/ with probes/: their calls into libsmq go one way)
awk '
	function prog(f) { return f ~ /^libsmq\// ? "lib" : "tool" }
	$2 == "D" { def[prog($1) " " $3] = $1; next }
	{ need[++n] = $1 " " $3 }
	END {
		for (i = 1; i <= n; i++) {
			split(need[i], a, " ")
			k = prog(a[1]) " " a[2]
			if ((k in def) && def[k] != a[1])
				print a[1], def[k], a[2]
		}
	}' "$T/syms" | sort -u >"$T/calls"
ncalls=$(wc -l <"$T/calls")
[ "$ncalls" -gt 100 ] && ok "calls between files: $ncalls read from the objects" ||
	failed "only $ncalls calls between files read from the objects"

bad=0
while read -r from to name; do
	ff=$(floor_of "$from") tf=$(floor_of "$to")
	[ -n "$ff" ] && [ -n "$tf" ] || continue
	if [ "$tf" -gt "$ff" ]; then
		echo "$from $to $name"
	fi
done <"$T/calls" | awk '{ k = $1 " " $2; names[k] = names[k] sep[k] $3; sep[k] = ", " }
	END { for (k in names) print k, names[k] }' | sort >"$T/upcalls"
while read -r from to names; do
	allowed up "$from $to" && continue
	failed "$from (floor $(floor_of "$from")) calls $to (floor $(floor_of "$to")): $names"
	bad=1
done <"$T/upcalls"
[ $bad = 0 ] && ok "calls: none up a floor of libsmq"

# ---- loops ----
# The files that reach each other through calls, each group once, sorted
# and joined with ",", then the calls inside it.
awk '
	{ if (!(($1, $2) in e)) { adj[$1] = adj[$1] " " $2; e[$1, $2] = $3 }
	  else e[$1, $2] = e[$1, $2] "," $3
	  node[$1]; node[$2] }
	END {
		for (s in node) {           # reach[s, x]: s calls x, at last
			delete seen; nq = 0; q[++nq] = s
			for (h = 1; h <= nq; h++) {
				m = split(adj[q[h]], nb, " ")
				for (j = 1; j <= m; j++)
					if (!(nb[j] in seen)) {
						seen[nb[j]]; reach[s, nb[j]]; q[++nq] = nb[j]
					}
			}
		}
		for (s in node) {
			if (s in done) continue
			grp = ""; cnt = 0
			for (x in node)
				if (x == s || (((s, x) in reach) && ((x, s) in reach))) {
					member[++cnt] = x; done[x]
				}
			if (cnt < 2) continue
			for (i = 2; i <= cnt; i++)       # sort the members
				for (j = i; j > 1 && member[j] < member[j - 1]; j--) {
					t = member[j]; member[j] = member[j - 1]; member[j - 1] = t
				}
			for (i = 1; i <= cnt; i++) grp = grp (i > 1 ? "," : "") member[i]
			printf "%s", grp
			for (i = 1; i <= cnt; i++)
				for (j = 1; j <= cnt; j++)
					if ((member[i], member[j]) in e)
						printf " | %s -> %s: %s", member[i], member[j], e[member[i], member[j]]
			printf "\n"
		}
	}' "$T/calls" | sort >"$T/loops"
bad=0
while read -r grp rest; do
	allowed loop "$grp" && continue
	failed "a call loop: $grp"
	printf '%s\n' "$rest" | tr '|' '\n' | sed -n 's/^ */    /p'
	bad=1
done <"$T/loops"
[ $bad = 0 ] && ok "no call loop between files but those allowed"

# ---- long files ----
bad=0
for src in $(cat "$T/sources") include/smq.h; do
	n=$(wc -l <"$src")
	[ "$n" -gt $limit ] || continue
	allowed long "$src" && continue
	failed "$src has $n lines, over $limit: split it by what its parts do"
	bad=1
done
[ $bad = 0 ] && ok "no source file over $limit lines but those allowed"

# ---- the allow-list itself ----
# "up FROM TO REASON", "loop A,B,... REASON", "long FILE REASON",
# "inward FILE REASON"
grep -v -e '^#' -e '^[[:space:]]*$' "$allow" >"$T/allow"
while read -r kind a rest; do
	case $kind in
	up) what="$kind $a ${rest%% *}"; reason=${rest#* }
	    [ "$reason" = "$rest" ] && reason= ;;
	loop | long | inward) what="$kind $a"; reason=$rest ;;
	*) failed "house.allow: unknown kind \"$kind\""; continue ;;
	esac
	[ -n "$reason" ] || failed "house.allow: \"$what\" gives no reason"
	grep -qxF "$what" "$T/used" ||
		failed "house.allow: \"$what\" is no longer needed: remove it"
done <"$T/allow"
ok "house.allow: $(wc -l <"$T/allow") exceptions read"

finish 8
