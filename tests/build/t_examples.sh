#!/bin/sh
# The examples as a user gets them: make install puts them in
# share/doc/libsmq/examples with a Makefile; that Makefile builds them
# against the installed library through pkg-config (warnings are errors),
# and each runs on a window of its own, on the installed shared library:
# reqresp gets every answer right; scatter gets every answer of three
# workers through two groups, loans and bursts; fanin loses nothing though its receiver
# is killed, and a fanin that drops a message is caught; twoboards runs on
# a fresh window and on one an earlier run left ready, and removes it; the
# monitor claims no board, sees a board, follows a re-init by smqctl init,
# and exits 0 when reqresp removes the window.
# Prints "ok"/"FAIL" per check; exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
command -v pkg-config >/dev/null || skip "pkg-config not installed"
need_smqctl
[ -d /dev/shm ] && [ -w /dev/shm ] ||
	skip "no writable /dev/shm: the examples' windows are shm"
win=$SHM
unset SMQ_WINDOW SMQ_DEBUG 2>/dev/null
show() { sed 's/^/    /' "$@"; }
gone() { [ ! -e "/dev/shm/$1" ]; }
smqctl=$S

# ---- installed, and built with the installed Makefile ----
root=$T/root
make -s install B="$B" PREFIX=/usr DESTDIR="$root" >"$T/install.log" 2>&1 ||
	{ failed "make install failed:"; show "$T/install.log"; exit 1; }
ex=$root/usr/share/doc/libsmq/examples
for f in Makefile twoboards.c reqresp.c fanin.c scatter.c monitor.c; do
	[ -f "$ex/$f" ] || die "missing after install: /usr/share/doc/libsmq/examples/$f"
done
ok "make install puts the examples and their Makefile in /usr/share/doc/libsmq/examples"

# pkg-config reads the installed libsmq.pc; its /usr paths are taken
# inside $root, even those pkg-config would drop as the system's own
export PKG_CONFIG_LIBDIR="$root/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root" \
       PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
export LD_LIBRARY_PATH="$root/usr/lib"
werror="-O2 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror"
cp -R "$ex" "$T/ex"
if make -s -C "$T/ex" CFLAGS="$werror" >"$T/build.log" 2>&1; then
	ok "the installed Makefile builds them with pkg-config, warnings as errors"
else
	failed "the installed Makefile does not build them:"; show "$T/build.log"; exit 1
fi
if ldd "$T/ex/reqresp" | grep -q "$root/usr/lib/libsmq.so"; then
	ok "they run on the installed shared library"
else
	failed "reqresp does not use $root/usr/lib/libsmq.so:"; ldd "$T/ex/reqresp" | show
fi
top=$(pwd)
cd "$T/ex" || exit 1

# run NAME TIMEOUT PROGRAM ARGS...: output in $T/NAME, status in $rc
run() {
	name=$1 secs=$2
	shift 2
	timeout -k 2 "$secs" "$@" >"$T/$name" 2>&1
	rc=$?
}

# ---- reqresp ----
run reqresp 20 ./reqresp -w "shm:$win-rr" -n 500
if [ $rc = 0 ] && grep -qx 'board 1: 500 of 500 answers right' "$T/reqresp"; then
	ok "reqresp: 500 of 500 answers right, exit 0"
else
	failed "reqresp exits $rc:"; show "$T/reqresp"
fi
gone "$win-rr" && ok "reqresp removes its window" || failed "reqresp leaves /dev/shm/$win-rr"

# ---- scatter ----
run scatter 30 ./scatter -w "shm:$win-sc" -n 500
if [ $rc = 0 ] && grep -qx 'board 0: 1500 of 1500 answers right (boards 1, 2, 3: 500, 500, 500)' "$T/scatter"; then
	ok "scatter: 1500 of 1500 answers through groups, loans and bursts, exit 0"
else
	failed "scatter exits $rc:"; show "$T/scatter"
fi
gone "$win-sc" && ok "scatter removes its window" || failed "scatter leaves /dev/shm/$win-sc"

# ---- fanin ----
# 15000 records: more than a pipe holds, so the receiver cannot finish
# before the first kill (the later ones may find it done).
run fanin 20 ./fanin -w "shm:$win-fi" -n 5000 -k 3
kills=$(grep -c '^fanin: receiver killed' "$T/fanin")
dups=$(sed -n "s/^fanin: lost 0, duplicates \([0-9]*\) (at most $kills: .*/\1/p" "$T/fanin")
if [ $rc = 0 ] && [ -n "$dups" ] && [ "$kills" -ge 1 ] && [ "$dups" -le "$kills" ] &&
   [ "$(grep -c '^board [123]: 5000 of 5000 received' "$T/fanin")" = 3 ]; then
	ok "fanin: receiver killed $kills times, lost 0, $dups duplicates, exit 0"
else
	failed "fanin exits $rc (killed $kills times; want lost 0, at most one duplicate a kill):"
	show "$T/fanin"
fi
gone "$win-fi" && ok "fanin removes its window" || failed "fanin leaves /dev/shm/$win-fi"

# The summary's check has teeth: a receiver that takes a message off the
# queue without recording it is caught.
mkdir "$T/broken" && cp "$T/ex/Makefile" "$T/ex/fanin.c" "$T/broken/" || exit 1
sed -i 's/if (write(log_fd, &r, sizeof(r))/if (!(r.sender == 2 \&\& r.seq == 5) \&\& write(log_fd, \&r, sizeof(r))/' \
	"$T/broken/fanin.c"
if cmp -s "$T/ex/fanin.c" "$T/broken/fanin.c"; then
	failed "could not make a fanin that drops a message (its record line changed?)"
elif ! make -s -C "$T/broken" CFLAGS="$werror" fanin >"$T/broken.log" 2>&1; then
	failed "the broken fanin does not build:"; show "$T/broken.log"
else
	run broken.out 20 "$T/broken/fanin" -w "shm:$win-br" -n 500 -k 1
	if [ $rc = 1 ] && grep -q "^fanin: lost 1," "$T/broken.out" &&
	   grep -q "^board 2: 499 of 500 received" "$T/broken.out"; then
		ok "a fanin that drops a message says lost 1 and exits 1"
	else
		failed "a fanin that drops a message exits $rc:"; show "$T/broken.out"
	fi
fi

# ---- twoboards ----
run twoboards 20 ./twoboards -w "shm:$win-tb" 2000
if [ $rc = 0 ] && grep -q '^ping-pong: 2000 round trips of 100 bytes' "$T/twoboards"; then
	ok "twoboards on a fresh window: 2000 round trips, exit 0"
else
	failed "twoboards on a fresh window exits $rc:"; show "$T/twoboards"
fi
gone "$win-tb" && ok "twoboards removes its window" || failed "twoboards leaves /dev/shm/$win-tb"

# A window an earlier run left behind, formatted (it died before the
# boards were ready) or ready with board 1 in it: board 1 starts first and
# must wait for board 0 to format it anew, not join the old generation
# (whose messages board 0's init would drop).
for left in formatted ready; do
	"$smqctl" -w "shm:$win-tb" init >/dev/null || die "smqctl init"
	if [ $left = ready ]; then
		bg_start "$smqctl" -w "shm:$win-tb" -b 1 sync -T 5 >/dev/null
		b1=$pid
		"$smqctl" -w "shm:$win-tb" sync -T 5 >/dev/null &&
			wait_pid 15 $b1 "board 1's sync" ||
			die "smqctl could not make a ready window"
	fi
	run leftover 20 ./twoboards -w "shm:$win-tb" 2000
	if [ $rc = 0 ] && grep -q '^board 1: found a window of an earlier run' "$T/leftover" &&
	   grep -q '^ping-pong: 2000 round trips' "$T/leftover"; then
		ok "twoboards on a window left $left: board 1 waits for the new generation, exit 0"
	else
		failed "twoboards on a window left $left exits $rc:"; show "$T/leftover"
	fi
	gone "$win-tb" && ok "twoboards removes the window it found" ||
		failed "twoboards leaves /dev/shm/$win-tb"
done

# ---- monitor ----
spec=shm:$win-mo
"$smqctl" -w "$spec" init -n 1 >/dev/null || die "smqctl init"
run mon0 10 ./monitor -w "$spec" -i 10 -c 3
if [ $rc = 0 ] && [ "$(grep -c '^  board 0: absent' "$T/mon0")" = 3 ]; then
	ok "monitor -c 3: three looks, exit 0, and it claims no board (board 0 stays absent)"
else
	failed "monitor -c 3 exits $rc (want board 0 absent three times):"; show "$T/mon0"
fi
"$smqctl" -w "$spec" sync -T 5 >/dev/null || die "smqctl sync"
bg_start ./monitor -w "$spec" -i 50 >"$T/mon" 2>&1
mon=$pid
if wait_line 10 "$T/mon" '^  board 0: ready, pid '; then
	ok "monitor sees board 0 ready"
else
	failed "monitor does not see board 0 ready:"; show "$T/mon"
fi
"$smqctl" -w "$spec" init -n 3 >/dev/null || failed "smqctl init -n 3"
if wait_line 10 "$T/mon" '^formatted anew: generation 1 -> 2$' &&
   wait_line 10 "$T/mon" "^$spec: generation 2, system formatted, 3 boards"; then
	ok "monitor follows smqctl init: generation 2, 3 boards"
else
	failed "monitor does not follow smqctl init:"; show "$T/mon"
fi
run reqresp2 20 ./reqresp -w "$spec" -n 200
[ $rc = 0 ] || { failed "reqresp beside the monitor exits $rc:"; show "$T/reqresp2"; }
wait_pid 10 "$mon" "the monitor, its window removed by reqresp"
if [ $rc = 124 ]; then
	show "$T/mon"
elif [ $rc = 0 ] && [ "$(tail -n 1 "$T/mon")" = "$spec: removed" ]; then
	ok "monitor exits 0 once reqresp removes the window (smq_remove: -EIDRM)"
else
	failed "monitor exits $rc when the window is removed:"; show "$T/mon"
fi

# ---- libsmq(3)'s EXAMPLE, as a reader copies it from the page ----
# board 0 formats a window, board 1 says hello; board 0 made it, and
# removes it: nothing is left behind in /dev/shm
cd "$top" || exit 1
man -P cat -l man/libsmq.3 2>/dev/null | sed -n '/^EXAMPLE/,/^SEE ALSO/p' |
	sed '$d' | awk 'code || /^           #/ { code = 1; print }' |
	sed 's/^           //' | sed "s|\"shm:demo\"|\"shm:$win-ex\"|" >"$T/example.c"
grep -q "shm:$win-ex" "$T/example.c" || { show "$T/example.c"; die "no EXAMPLE in libsmq(3)"; }
if ! ${CC:-cc} -std=c11 -Wall -Wextra -Werror -Iinclude -o "$T/example" \
	"$T/example.c" "$B/libsmq.a" -pthread 2>"$T/example.err"; then
	failed "libsmq(3)'s EXAMPLE does not build:"; show "$T/example.err"
else
	bg_start "$T/example" 0 >"$T/example0" 2>&1
	ex0=$pid
	run example1 20 "$T/example" 1
	[ $rc = 0 ] || { failed "libsmq(3)'s EXAMPLE, board 1, exits $rc:"; show "$T/example1"; }
	wait_pid 20 "$ex0" "libsmq(3)'s EXAMPLE, board 0"
	if [ $rc = 0 ] && grep -qx 'from board 1: hello' "$T/example0"; then
		ok "libsmq(3)'s EXAMPLE: board 0 gets board 1's hello"
	else
		failed "libsmq(3)'s EXAMPLE, board 0, exits $rc:"; show "$T/example0"
	fi
	gone "$win-ex" && ok "libsmq(3)'s EXAMPLE removes its window" ||
		failed "libsmq(3)'s EXAMPLE leaves /dev/shm/$win-ex"
fi

any_failed || echo "all examples pass"
finish 22
