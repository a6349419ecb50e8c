#!/bin/sh
# Ordering through the transport, checked in the generated code.  The
# library is cross-built for arm64 (Debian's aarch64-linux-gnu-gcc) and
# for this host; then:
#  - device memory (a BAR) takes the outer-shareable barriers on arm64
#    (dmb oshst to publish, dmb oshld to consume, dmb osh for both), and
#    sfence, lfence and mfence on x86;
#  - memory every board reaches coherently (shm) takes the C11 fences:
#    the inner-shareable forms on arm64;
#  - the message path (send.c, receive.c) reaches the device barriers
#    through the transport's table (an indirect call) and holds no
#    outer-shareable barrier of its own; it inlines only the C11 ones, for
#    the tables that say their memory is coherent; and it tests no kind of
#    mapping.
# Each part needs its tools: the arm64 part a cross compiler and its
# objdump, the x86-64 part this host's objdump on an x86-64 host.  A part
# that cannot run is said (skip ...); the others run, and then the exit
# status is 77 (if nothing failed), the last line naming what was skipped
# and why.  Exit 0 pass, 1 fail.
. "$(dirname "$0")/../lib/lib.sh"
xcc=${AARCH64_CC:-aarch64-linux-gnu-gcc}
xobjdump=${AARCH64_OBJDUMP:-aarch64-linux-gnu-objdump}
# the message path's test below always runs
floor=1

# fn OBJDUMP FILE NAME: the disassembly of function NAME
fn() {
	"$1" -d --no-show-raw-insn "$2" |
		awk -v f="<$3>:" '$2 == f { on = 1; next } /^$/ { on = 0 } on'
}
has() { # has TEXT PATTERN
	printf '%s\n' "$1" | grep -Eq "$2"
}

# ---- arm64 ----
# arm64: the library cross-built, its barriers, the message path's calls
arm64() {
	floor=$((floor + 9))
	case_begin
	mkdir -p "$T/a64"
	for src in $(ls libsmq/*/*.c | grep -v ^libsmq/examples/); do
		o=$T/a64/$(echo "$src" | tr / _).o
		if ! "$xcc" -D_GNU_SOURCE -DSMQ_VERSION='"x"' -Iinclude -Ilibsmq -std=c11 -O2 \
			-Wall -Wextra -c -o "$o" "$src" 2>"$T/cc.err"; then
			failed "arm64: $src does not build"
			sed 's/^/    | /' "$T/cc.err"
		fi
	done
	case_end "arm64: libsmq cross-builds ($(ls "$T/a64" | wc -l) objects)"
	order=$T/a64/libsmq_transport_order.c.o
	for pair in "device_publish:dmb[[:space:]]+oshst" \
		    "device_consume:dmb[[:space:]]+oshld" \
		    "device_full:dmb[[:space:]]+osh$" \
		    "c11_publish:dmb[[:space:]]+ish" \
		    "c11_consume:dmb[[:space:]]+ishld" \
		    "c11_full:dmb[[:space:]]+ish$"; do
		f=${pair%%:*} want=${pair#*:}
		body=$(fn "$xobjdump" "$order" "$f")
		if has "$body" "$want"; then
			ok "arm64: $f: $(printf '%s\n' "$body" | grep -Eo 'dmb[[:space:]]+[a-z]+' | head -n 1)"
		else
			failed "arm64: $f lacks $want:"
			printf '%s\n' "$body" | sed 's/^/    | /'
		fi
	done
	for src in send receive; do
		obj=$T/a64/libsmq_message_$src.c.o
		body=$("$xobjdump" -d --no-show-raw-insn "$obj")
		if has "$body" 'blr[[:space:]]+x[0-9]+'; then
			ok "arm64: $src.c orders device memory through the transport's table (blr)"
		else
			failed "arm64: $src.c makes no indirect call to an ordering"
		fi
		if has "$body" 'dmb[[:space:]]+osh'; then
			failed "arm64: $src.c holds an outer-shareable barrier of its own"
		fi
	done
}
if ! command -v "$xcc" >/dev/null 2>&1; then
	skip_part "the arm64 checks" "no arm64 cross compiler ($xcc): install gcc-aarch64-linux-gnu"
elif ! command -v "$xobjdump" >/dev/null 2>&1; then
	skip_part "the arm64 checks" "no $xobjdump: install binutils-aarch64-linux-gnu"
else
	arm64
fi

# ---- this host (x86-64) ----
if [ "$(uname -m)" != x86_64 ]; then
	skip_part "the x86-64 checks" "this host is $(uname -m)"
elif ! command -v objdump >/dev/null 2>&1; then
	skip_part "the x86-64 checks" "no objdump: install binutils"
else
	floor=$((floor + 3))
	order=$B/libsmq/transport/order.o
	[ -f "$order" ] || make -s B="$B" "$order" >/dev/null 2>&1
	for pair in device_publish:sfence device_consume:lfence device_full:mfence; do
		f=${pair%%:*} want=${pair#*:}
		if has "$(fn objdump "$order" "$f")" "$want"; then
			ok "x86-64: $f: $want"
		else
			failed "x86-64: $f lacks $want"
		fi
	done
fi

# no test of the mapping's kind on the message path
if grep -nE '\bwc\b|->wc|order ==|== &smq_order' libsmq/message/send.c libsmq/message/receive.c; then
	failed "the message path tests the kind of mapping"
else
	ok "the message path asks no mapping what it is"
fi
finish $floor
