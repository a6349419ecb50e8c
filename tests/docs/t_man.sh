#!/bin/sh
# The man pages: every page renders without a groff warning, and through
# man -l for sections 1 and 7; every man3
# name (every function of the public header and every symbol the shared
# library exports has one, a page or a one-line .so link) is found by
# man(1) in a man3 directory and renders there without a warning; and the
# SYNOPSIS of a function's page gives the header's prototype, parameter
# for parameter; and smq_journal_next(3)'s EXAMPLE, copied from the page,
# builds and reads a window's journals.  t_exports.sh checks that each
# link's target exists and that the NAME section lists the function.
. "$(dirname "$0")/../lib/lib.sh"
need_command groff "the pages are rendered with it"
need_command man "man(1) must find each page"
tmp=$T

# A link is one line, ".so man3/PAGE.3", and nothing else.
is_link() {
	[ "$(wc -l <"$1")" -le 1 ] && grep -q '^\.so ' "$1"
}

# 1. Every page that is not a link, through groff's own warnings.
case_begin
for page in man/*.[0-9]; do
	is_link "$page" && continue
	out=$(groff -man -ww -z "$page" 2>&1)
	[ -z "$out" ] || { failed "$page:"; echo "$out"; }
done
case_end "every page renders without a groff warning"

# ...and no request run into the text before it ("an error..TP"), which
# groff prints as words without a warning
case_begin
grep -nE '[^ \\]\.(TP|PP|SH|SS|IP|RS|RE|BR|RB|IR|RI|BI|IB|EX|EE|nf|fi)( |$)' \
	man/*.[0-9] >"$tmp/glued" && { failed "requests inside text:"; cat "$tmp/glued"; }
case_end "no request is glued to the text before it"

# ...and man(1) renders each page of sections 1 and 7 (smqctl(1), a page
# per command, smq(7), smq-format(7)) as a reader opens it, man -l, under
# its own name and with no word on standard error
case_begin
for page in man/*.[17]; do
	name=${page#man/}; name=${name%.*}
	MANWIDTH=80 man -l -P cat "$page" >"$tmp/rendered" 2>"$tmp/man.err"
	up=$(echo "$name" | tr '[:lower:]' '[:upper:]')
	head -n 1 "$tmp/rendered" | grep -q "^$up(" && grep -q "^NAME" "$tmp/rendered" &&
		grep -Eq "^ +$name +- " "$tmp/rendered" ||
		failed "man -l $page: not rendered as $name: $(head -n 1 "$tmp/rendered")"
	[ -s "$tmp/man.err" ] && { failed "man -l $page:"; cat "$tmp/man.err"; }
done
case_end "man -l renders every page of sections 1 and 7 under its name"

# 2. The names: the header's functions, and the library's exports if it
# was built.
grep -oE '\bsmq_[a-z0-9_]+\(' include/smq.h | tr -d '(' | sort -u >"$tmp/declared"
cp "$tmp/declared" "$tmp/names"
if [ -e "$B/libsmq.so" ]; then
	nm -D --defined-only "$B/libsmq.so" |
		awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' >>"$tmp/names"
fi
sort -u -o "$tmp/names" "$tmp/names"
[ "$(wc -l <"$tmp/names")" -gt 10 ] || die "too few functions found"

# 3. man(1) finds each in a man3 directory laid out as installed, follows
# its link, and renders it without a warning.
mkdir -p "$tmp/man/man3"
cp man/*.3 "$tmp/man/man3/"
export MANPATH="$tmp/man" MANWIDTH=80 LC_ALL=C MAN_DISABLE_SECCOMP=1
{ cat "$tmp/names"; for p in man/*.3; do basename "$p" .3; done; } |
sort -u >"$tmp/pages"
case_begin
while read -r f; do
	if [ ! -e "man/$f.3" ]; then
		failed "man/$f.3: missing (man 3 $f finds nothing)"; continue
	fi
	where=$(man -w 3 "$f" 2>&1)
	case $where in
	"$tmp/man/man3/"*.3) [ -e "$where" ] || failed "man -w $f: $where" ;;
	*) failed "man -w 3 $f: $where"; continue ;;
	esac
	man --warnings -P cat 3 "$f" >"$tmp/out" 2>"$tmp/err"
	if [ -s "$tmp/err" ] || [ ! -s "$tmp/out" ]; then
		failed "man 3 $f:"; cat "$tmp/err"
	fi
done <"$tmp/pages"
case_end "man(1) finds every man3 name ($(wc -l <"$tmp/pages")) and renders it without a warning"

# 4. Prototypes, normalised (comments and preprocessor lines gone, one
# space between words, none around * ( ) ,): the header's, one per line
# as "name<TAB>prototype"...
norm='
	{ gsub(/[ \t\n]+/, " ") }
	{ gsub(/ ?\* ?/, "*"); gsub(/ ?\( ?/, "("); gsub(/ ?\) ?/, ")");
	  gsub(/ ?, ?/, ","); sub(/^ /, ""); sub(/ $/, "") }
	match($0, /smq_[a-z0-9_]+\(/) && $0 ~ /^[a-z]/ {
		print substr($0, RSTART, RLENGTH - 1) "\t" $0
	}'
awk 'BEGIN { RS = "\001" } { gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, ""); print }' \
	include/smq.h |
	awk '/^[ \t]*#/ { skip = /\\$/; next }
	     skip { skip = /\\$/; next }
	     { print }' |
	awk 'BEGIN { RS = "[;{}]" }'"$norm" | sort >"$tmp/header"
cut -f1 "$tmp/header" | diff -u "$tmp/declared" - &&
	ok "the prototypes read from smq.h are its names" ||
	failed "prototypes read from smq.h differ from its names"
# ...and each page's SYNOPSIS, rendered as a reader sees it (so that a
# macro that swallows its neighbour shows), with the page's name.
for page in man/*.3; do
	is_link "$page" && continue
	groff -man -Tascii -P-c -P-b -P-o -P-u "$page" 2>/dev/null |
	awk '/^SYNOPSIS/ { on = 1; next } /^[A-Z]/ { on = 0 }
	     on && !/^[ \t]*#/ { print }' |
	awk 'BEGIN { RS = ";" }'"$norm" |
	sed "s|^|${page##*/}	|" >>"$tmp/synopses"
done
case_begin
while IFS='	' read -r f proto; do
	want=$(sed -n 's/^\.so man3\///p' "man/$f.3" 2>/dev/null)
	want=${want:-$f.3}
	if ! awk -F'\t' -v p="$want" -v f="$f" '$1 == p && $2 == f' \
	     "$tmp/synopses" | grep -q .; then
		failed "$want: SYNOPSIS does not declare $f"
	elif ! awk -F'\t' -v p="$want" -v f="$f" -v want="$proto" \
		   '$1 == p && $2 == f && $3 == want' "$tmp/synopses" | grep -q .; then
		failed "$want: SYNOPSIS of $f differs from smq.h:"
		echo "    smq.h: $proto"
		awk -F'\t' -v p="$want" -v f="$f" '$1 == p && $2 == f { print "    page:  " $3 }' \
			"$tmp/synopses"
	fi
done <"$tmp/header"
case_end "the SYNOPSIS of each function's page declares it as smq.h does"
# No page declares a function the header does not, or another way.
case_begin
while IFS='	' read -r page f proto; do
	grep -qxF "$f	$proto" "$tmp/header" ||
		failed "$page: SYNOPSIS declares $f not as smq.h does: $proto"
done <"$tmp/synopses"
case_end "no page declares a function smq.h does not, or otherwise"

# 5. The version smq_version(3) shows is the header's.
case_begin
for part in MAJOR MINOR PATCH; do
	h=$(sed -n "s/^#define SMQ_VERSION_$part \([0-9]*\)\$/\1/p" include/smq.h)
	grep -q "^\.B #define SMQ_VERSION_$part $h\$" man/smq_version.3 ||
		failed "smq_version.3: SMQ_VERSION_$part is not $h"
done
case_end "smq_version(3) shows the header's version"

# 6. Every page's header names the version the header gives (a page that
# is one line of .so, another page's name, has none).
v=$(for part in MAJOR MINOR PATCH; do
	sed -n "s/^#define SMQ_VERSION_$part \([0-9]*\)\$/\1/p" include/smq.h
done | paste -sd.)
for page in man/*.[137]; do
	grep -q '^\.so ' "$page" && continue
	grep -q "^\.TH .* \"smq $v\" " "$page" ||
		{ echo "$page: its .TH line does not say \"smq $v\""; status=1; }
done

# 7. The EXAMPLE of smq_journal_next(3), as a reader copies it from the
# page, builds and prints what a window's journals hold: board 0's init,
# then board 1's sender opening and closing queue 0.
CC=${CC:-cc}
if ! command -v "$CC" >/dev/null 2>&1 || [ ! -f "$B/libsmq.a" ] ||
   [ ! -x "$B/smqctl" ]; then
	skip_part "smq_journal_next(3)'s EXAMPLE" "no $CC, $B/libsmq.a or $B/smqctl"
else
	man -P cat 3 smq_journal_next 2>/dev/null |
		sed -n '/^EXAMPLE/,/^SEE ALSO/p' | sed '1,3d;$d' |
		sed 's/^       //' >"$tmp/journal.c"
	jw=$tmp/journal-window
	if ! "$CC" -std=c11 -Wall -Wextra -Werror -Iinclude -o "$tmp/journal" \
		"$tmp/journal.c" "$B/libsmq.a" -pthread 2>"$tmp/cc.err"; then
		failed "smq_journal_next(3)'s EXAMPLE does not build:"
		cat "$tmp/cc.err"
	elif ! "$B/smqctl" init -w "file:$jw" --boards 2 --queues 1 \
		--entries 4 --entry-size 64 >/dev/null ||
	     ! "$B/smqctl" send -w "file:$jw" -b 1 -q 0 hello; then
		failed "smq_journal_next(3)'s EXAMPLE: no window to read"
	else
		bg_start "$tmp/journal" "file:$jw" >"$tmp/journal.out" 2>&1
		jpid=$pid
		printed() { [ "$(wc -l <"$tmp/journal.out")" -ge 3 ]; }
		wait_for 10 "smq_journal_next(3)'s EXAMPLE to print 3 entries" \
			printed
		stop_pid 10 "$jpid" "smq_journal_next(3)'s EXAMPLE"
		sed 's/, pid [0-9]*,/,/' "$tmp/journal.out" >"$tmp/journal.got"
		printf '%s\n' \
			"board 0 entry 1: kind 1, generation 1, queue -1, a 0, b 0" \
			"board 1 entry 1: kind 9, generation 1, queue 0, a 0, b 0" \
			"board 1 entry 2: kind 10, generation 1, queue 0, a 0, b 0" \
			>"$tmp/journal.want"
		if diff -u "$tmp/journal.want" "$tmp/journal.got" >"$tmp/diff"; then
			ok "smq_journal_next(3)'s EXAMPLE builds and prints every board's journal"
		else
			failed "smq_journal_next(3)'s EXAMPLE printed otherwise:"
			cat "$tmp/diff"
		fi
	fi
fi

n=$(wc -l <"$tmp/header")
any_failed || echo "$n prototypes match smq.h; $(wc -l <"$tmp/pages") man3 names render"
finish 9
