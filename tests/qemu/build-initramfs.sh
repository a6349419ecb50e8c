#!/bin/sh
# build-initramfs.sh OUT INIT [PROGRAM...]
# Writes OUT, an uncompressed newc cpio archive for a QEMU guest, built
# without root: a static busybox (bin/busybox and a link for each of its
# applets), INIT as /init, and each PROGRAM as /bin/NAME together with
# every shared library ldd lists for it (and the dynamic loader) at the
# same paths as on this host.  BUSYBOX names the static busybox (default:
# the one on PATH).  KMODS names a directory made by fetch-kernel.sh: its
# load-order file and the .ko files it lists go to /lib/modules/, for the
# init to insmod in that order.  Exit 0 done, 1 failure, 77 when something it needs
# (a static busybox, cpio, ldd for a dynamic PROGRAM) is missing.
set -u
[ $# -ge 2 ] || { echo "usage: $0 OUT INIT [PROGRAM...]" >&2; exit 2; }
out=$1 init=$2
shift 2

bb=${BUSYBOX:-$(command -v busybox 2>/dev/null)}
[ -n "$bb" ] && [ -x "$bb" ] || { echo "busybox not found (install busybox-static)"; exit 77; }
# A dynamic busybox would need its libraries in the guest: insist on the
# static one (ldd says "not a dynamic executable" and fails for it).
if command -v ldd >/dev/null 2>&1 && ldd "$bb" >/dev/null 2>&1; then
	echo "$bb is dynamically linked (install busybox-static)"
	exit 77
fi
command -v cpio >/dev/null 2>&1 || { echo "cpio not found"; exit 77; }

root=$(mktemp -d) || exit 1
trap 'rm -rf "$root"' EXIT
trap 'exit 1' INT TERM HUP

mkdir -p "$root/bin" "$root/sbin" "$root/proc" "$root/sys" "$root/dev" \
	"$root/tmp" "$root/etc" || exit 1
cp "$bb" "$root/bin/busybox" && chmod 755 "$root/bin/busybox" || exit 1
for a in $("$bb" --list); do
	[ "$a" = busybox ] || ln -s busybox "$root/bin/$a"
done
cp "$init" "$root/init" && chmod 755 "$root/init" || exit 1

# copy_lib PATH: PATH (following links) at the same place under $root
copy_lib() {
	[ -e "$root$1" ] && return 0
	mkdir -p "$root$(dirname "$1")" && cp -L "$1" "$root$1"
}

for p in "$@"; do
	[ -x "$p" ] || { echo "$p: not an executable"; exit 1; }
	cp -L "$p" "$root/bin/$(basename "$p")" || exit 1
	chmod 755 "$root/bin/$(basename "$p")"
	if LC_ALL=C ldd "$p" >"$root/ldd" 2>&1; then
		# "name => /path (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)"
		for lib in $(sed -n -e 's/^[[:space:]]*[^[:space:]]* => \(\/[^[:space:]]*\) .*/\1/p' \
				  -e 's/^[[:space:]]*\(\/[^[:space:]]*\) .*/\1/p' "$root/ldd"); do
			copy_lib "$lib" || { echo "cannot copy $lib for $p"; exit 1; }
		done
		if grep -q "not found" "$root/ldd"; then
			echo "$p: a library is missing:"; grep "not found" "$root/ldd"
			exit 1
		fi
	elif ! grep -q "not a dynamic executable" "$root/ldd"; then
		echo "ldd $p failed:"; cat "$root/ldd"
		exit 77
	fi
	rm -f "$root/ldd"
done
if [ -n "${KMODS:-}" ]; then
	[ -s "$KMODS/load-order" ] || { echo "$KMODS/load-order is missing"; exit 1; }
	mkdir -p "$root/lib/modules" || exit 1
	cp "$KMODS/load-order" "$root/lib/modules/" || exit 1
	while read -r ko; do
		cp "$KMODS/$ko" "$root/lib/modules/" || { echo "cannot copy $ko"; exit 1; }
	done <"$KMODS/load-order"
fi
# libpci reads the names of vendors and devices from pci.ids if it is there
for ids in /usr/share/misc/pci.ids /usr/share/hwdata/pci.ids; do
	[ -f "$ids" ] && copy_lib "$ids" && break
done

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$out.tmp" &&
	mv "$out.tmp" "$out" || { rm -f "$out.tmp"; echo "cpio failed"; exit 1; }
