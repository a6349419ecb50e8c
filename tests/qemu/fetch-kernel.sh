#!/bin/sh
# fetch-kernel.sh CACHE MODULE...
# A Debian kernel for QEMU guests with some of its modules: makes (once)
# CACHE/kmod-VERSION/ holding vmlinuz, the .ko files of each MODULE and of
# every module it depends on (uncompressed, for busybox insmod), and
# load-order, their file names in an order insmod can follow (dependencies
# first).  Prints that directory's path on its last line.
#
# The package is the one linux-image-amd64 stands for (apt-get download,
# no root needed), or SMQ_QEMU_KERNEL_DEB=PATH of a linux-image .deb.  The
# modules must come from the same package as the kernel: their version
# magic is checked on loading.
# Exit 0 done, 1 failure, 77 when no kernel can be had (offline, no apt),
# with the reason on the last line.
set -u
[ $# -ge 2 ] || { echo "usage: $0 CACHE MODULE..." >&2; exit 2; }
cache=$1
shift
want=$(echo "$*" | tr -- - _)
skip() { echo "$*"; exit 77; }

# Is there a cached directory with every module asked for?
have() {
	for d in $(ls -d "$cache"/kmod-* 2>/dev/null | sort -V -r); do
		[ -s "$d/vmlinuz" ] && [ -s "$d/load-order" ] || continue
		ok=1
		for m in $want; do
			grep -qx "$m.ko" "$d/load-order" || { ok=; break; }
		done
		[ -n "$ok" ] && { echo "$d"; return 0; }
	done
	return 1
}
if [ -z "${SMQ_QEMU_KERNEL_DEB:-}" ] && d=$(have); then
	echo "$d"
	exit 0
fi

command -v dpkg-deb >/dev/null 2>&1 || skip "no kernel: dpkg-deb is needed to unpack one"
mkdir -p "$cache" && work=$(mktemp -d "$cache/dl.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM HUP

if [ -n "${SMQ_QEMU_KERNEL_DEB:-}" ]; then
	deb=$SMQ_QEMU_KERNEL_DEB
	[ -r "$deb" ] || skip "SMQ_QEMU_KERNEL_DEB=$deb is not readable"
else
	command -v apt-get >/dev/null 2>&1 ||
		skip "no kernel: apt-get is needed to download one (or set SMQ_QEMU_KERNEL_DEB)"
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1)
	[ -n "$pkg" ] || pkg=$(apt-cache search --names-only '^linux-image-[0-9].*-amd64$' 2>/dev/null |
		cut -d' ' -f1 | grep -v -e '-cloud-' -e '-rt-' | sort -V | tail -n 1)
	[ -n "$pkg" ] || skip "no kernel: apt-cache knows no linux-image-*-amd64 (run apt-get update)"
	if ! (cd "$work" && timeout 240 apt-get download -q "$pkg") >"$work/apt" 2>&1; then
		skip "no kernel: apt-get download $pkg failed (offline?): $(grep -v '^W:' "$work/apt" | tail -n 1)"
	fi
	deb=$(ls "$work"/*.deb 2>/dev/null | head -n 1)
	[ -n "$deb" ] || skip "no kernel: apt-get download $pkg left no .deb"
fi

dpkg-deb --fsys-tarfile "$deb" >"$work/pkg.tar" || { echo "cannot unpack $deb"; exit 1; }
tar -tf "$work/pkg.tar" >"$work/list" || exit 1
vm=$(grep '^\./boot/vmlinuz-' "$work/list" | head -n 1)
[ -n "$vm" ] || { echo "no vmlinuz in $deb"; exit 1; }
ver=${vm#./boot/vmlinuz-}
out=$work/kmod-$ver
# the modules another test cached for this kernel stay (the tests take
# turns in one cache)
if [ -s "$cache/kmod-$ver/load-order" ]; then
	want="$want $(sed 's/\.ko$//' "$cache/kmod-$ver/load-order")"
fi
mkdir -p "$out" "$work/x" || exit 1
tar -xf "$work/pkg.tar" -C "$work/x" "$vm" && mv "$work/x/$vm" "$out/vmlinuz" || exit 1

# The .ko (maybe compressed) of module NAME in the package, by the name
# with - and _ alike.
ko_path() {
	awk -v want="$1" '/\.ko(\.xz|\.zst|\.gz)?$/ {
		b = $0; sub(/.*\//, "", b); sub(/\.ko.*/, "", b); gsub(/-/, "_", b)
		if (b == want) { print; exit }
	}' "$work/list"
}
# Extracts module NAME into $out/NAME.ko, uncompressed.
extract() {
	p=$(ko_path "$1")
	[ -n "$p" ] || { echo "module $1 is not in $deb"; return 1; }
	tar -xf "$work/pkg.tar" -C "$work/x" "$p" || return 1
	case $p in
	*.ko) cp "$work/x/$p" "$out/$1.ko" ;;
	*.xz) command -v xz >/dev/null 2>&1 || { echo "xz is needed for $p"; return 77; }
	      xz -dc "$work/x/$p" >"$out/$1.ko" ;;
	*.zst) command -v zstd >/dev/null 2>&1 || { echo "zstd is needed for $p"; return 77; }
	       zstd -dc "$work/x/$p" >"$out/$1.ko" ;;
	*.gz) gzip -dc "$work/x/$p" >"$out/$1.ko" ;;
	esac
}
# What module NAME depends on, from its .modinfo strings.
deps() {
	tr '\0' '\n' <"$out/$1.ko" | sed -n 's/^depends=//p' | head -n 1 |
		tr ',' ' ' | tr -- - _
}

# Every module asked for and, transitively, what it depends on.
todo=$want all=
while [ -n "$(echo $todo)" ]; do
	next=
	for m in $todo; do
		case " $all " in *" $m "*) continue ;; esac
		extract "$m"
		rc=$?
		[ $rc = 0 ] || exit $rc
		all="$all $m"
		next="$next $(deps "$m")"
	done
	todo=$next
done
# An order that loads dependencies first.
order= left=$all
while [ -n "$(echo $left)" ]; do
	rest= moved=
	for m in $left; do
		ready=1
		for d in $(deps "$m"); do
			case " $order " in *" $d "*) ;; *) ready= ;; esac
		done
		if [ -n "$ready" ]; then
			order="$order $m" moved=1
		else
			rest="$rest $m"
		fi
	done
	[ -n "$moved" ] || { echo "circular module dependencies among:$rest"; exit 1; }
	left=$rest
done
for m in $order; do echo "$m.ko"; done >"$out/load-order"

dest=$cache/kmod-$ver
rm -rf "$dest"
mv "$out" "$dest" || exit 1
echo "$dest"
