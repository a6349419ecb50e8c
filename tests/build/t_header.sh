#!/bin/sh
# smq.h, the one public header, compiles on its own as every C and C++
# standard a user's program may be written in, with -pedantic, under gcc
# and clang (where installed), and the version it names is the library's.
. "$(dirname "$0")/../lib/lib.sh"
tmp=$T
cat >"$tmp/use.c" <<'C'
#include <smq.h>
#if !SMQ_VERSION_AT_LEAST(1, 0)
#error "SMQ_VERSION_AT_LEAST(1, 0) is false"
#endif
int use(void);
int use(void)
{
	struct smq_window_info wi;
	enum smq_bell_kind k = SMQ_BELL_IVSHMEM;
	enum smq_error e = SMQ_EFOREIGN;
	(void)wi;
	return (int)k + (int)e + smq_version_check(SMQ_VERSION_MAJOR,
						   SMQ_VERSION_MINOR);
}
C
cp "$tmp/use.c" "$tmp/use.cc"
n=0
# builds COMPILER SOURCE STD...: smq.h compiles in each standard
builds() {
	c=$1 src=$2
	shift 2
	command -v "$c" >/dev/null || { note "no $c: smq.h is not compiled with it"; return 0; }
	for std in "$@"; do
		if "$c" -std="$std" -pedantic -Wall -Wextra -Werror -Iinclude \
			-c -o "$tmp/o" "$src" 2>"$tmp/err"; then
			ok "smq.h compiles with $c -std=$std -pedantic"
		else
			failed "smq.h does not compile with $c -std=$std -pedantic:"
			cat "$tmp/err"
		fi
		n=$((n + 1))
	done
}
for pair in gcc:g++ clang:clang++; do
	builds "${pair%%:*}" "$tmp/use.c" c89 c99 c11 c17
	builds "${pair##*:}" "$tmp/use.cc" c++98 c++11 c++17
done
# the built library is the version the header names
cat >"$tmp/ver.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <smq.h>
int main(void)
{
	char want[32];
	snprintf(want, sizeof(want), "%d.%d.%d", SMQ_VERSION_MAJOR,
		 SMQ_VERSION_MINOR, SMQ_VERSION_PATCH);
	if (strcmp(smq_version(), want) ||
	    smq_version_major() != SMQ_VERSION_MAJOR ||
	    smq_version_minor() != SMQ_VERSION_MINOR) {
		printf("library %s, header %s\n", smq_version(), want);
		return 1;
	}
	/* built against an older minor: served; a newer minor or another
	 * major: not */
	if (!smq_version_check(SMQ_VERSION_MAJOR, 0) ||
	    smq_version_check(SMQ_VERSION_MAJOR, SMQ_VERSION_MINOR + 1) ||
	    smq_version_check(SMQ_VERSION_MAJOR + 1, 0) ||
	    smq_version_check(SMQ_VERSION_MAJOR - 1, SMQ_VERSION_MINOR)) {
		puts("smq_version_check() is wrong");
		return 1;
	}
	return 0;
}
C
version=$(sed -n 's/^#define SMQ_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' include/smq.h | paste -sd.)
if cc -Iinclude -o "$tmp/ver" "$tmp/ver.c" -L"$B" -lsmq -Wl,-rpath,"$B" &&
   "$tmp/ver"; then
	ok "the library is version $version, as smq.h says"
else
	failed "the library's version disagrees with smq.h"
fi
# One type for a queue number: a call's parameter named queue or queues is
# unsigned (a pointer to unsigned: a list, or where the call stores one),
# a struct's member of that name uint32_t (a pointer to it: a list); "all
# queues" and "none" are SMQ_ALL_QUEUES and SMQ_NO_QUEUE, not -1 in an int
# (the comments left out by gcc's preprocessor: clang's keeps nothing).
gcc -fpreprocessed -dD -E -P include/smq.h | tr '\n' ' ' |
	tr ';{}' '\n\n\n' | sed 's/\([,)]\)/\1\n/g' |
	grep -oE '[a-z_0-9 ]+[ *]+queues?(\[[A-Z_0-9]*\])?[,)]?$' |
	sed 's/  */ /g; s/^ //' >"$tmp/queue_decls"
while read -r d; do
	case $d in
	*,|*\))
		case $d in
		"unsigned queue"?|"unsigned *queue"?|"const unsigned *queues"?) ;;
		*) echo "a call's parameter: $d" ;;
		esac ;;
	*)
		case $d in
		"uint32_t queue"|"uint32_t queues"|"const uint32_t *queues") ;;
		"uint32_t queues["*"]") ;;
		*) echo "a struct's member: $d" ;;
		esac ;;
	esac
done <"$tmp/queue_decls" >"$tmp/queue_bad"
nq=$(wc -l <"$tmp/queue_decls")
if [ "$nq" -lt 10 ]; then
	failed "only $nq declarations of a queue number found in smq.h"
elif [ -s "$tmp/queue_bad" ]; then
	failed "a queue number not unsigned (a call's) or uint32_t (a struct's):"
	cat "$tmp/queue_bad"
else
	ok "the $nq queue numbers of smq.h are unsigned in calls, uint32_t in structs"
fi
any_failed || echo "smq.h compiles in $n standard and compiler pairs with -pedantic; the library is version $version"
# the version, and each standard of each compiler there is
finish $((2 + n))
