#!/bin/sh
# smqctl says the cause the library finds (smq_explain()) and adds only
# its own remedy: a window file in a directory that does not exist names
# the directory and sends nobody to "smqctl init"; a window that does not
# exist yet does; an object others may write says its mode and --force;
# a bad shm name and an unknown transport say so; a window that no vfio
# broker serves, and a broker of what it cannot hold.  Exit 0 pass, 1 fail,
# 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
unset SMQ_WINDOW 2>/dev/null
says() {
	want=$1 unwanted=$2
	shift 2
	# bounded: each gives up at once (a broker that took its window
	# would serve for ever)
	timeout --foreground -k 5 $((30 * slow)) "$S" "$@" </dev/null >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 1 ] && grep -qF -e "$want" "$T/err" &&
	   { [ "$unwanted" = - ] || ! grep -qF -e "$unwanted" "$T/err"; }; then
		ok "smqctl $*: $(cat "$T/err")"
	else
		failed "smqctl $* (exit $rc): $(cat "$T/err")"
	fi
}

says "directory $T/nonexistent/dir does not exist" "smqctl init" \
	-w "file:$T/nonexistent/dir/x" init
[ -e "$T/nonexistent" ] && failed "the directory was created"
# nothing to wait for: sync gives up at once, not at its timeout (600 s,
# beyond the bound says gives each run: a sync that waited is killed
# there and fails)
says "directory $T/nonexistent/dir does not exist" - \
	-w "file:$T/nonexistent/dir/x" -b 1 sync --timeout 600
says "window file:$T/w does not exist yet" - -w "file:$T/w" dump
says "(smqctl init)" - -w "file:$T/w" dump
says "window shm:$SHM does not exist yet" - \
	-w "shm:$SHM" send x
: >"$T/open"
chmod 0666 "$T/open"
says "others may write it (mode 0666)" - -w "file:$T/open" init
says "init --force makes it ours" - -w "file:$T/open" init
says "bad window spec 'shm:a/b': a shm name is" - -w shm:a/b dump
says "unknown transport in window spec 'nosuch:x'" - -w nosuch:x dump
says "no PCI device at 0000:ff:1f.7" "needs root" -w pci:ff:1f.7 dump
says "no ivshmem server: the socket $T/sock does not exist" "smqctl init" \
	-w "ivshmem:$T/sock" dump
# the vfio broker: a window that no broker serves, a broker of what is
# not a PCI device, of a device that is not there
says "no vfio broker listens on $T/broker.sock" "smqctl init" \
	-w "broker:$T/broker.sock" dump
says "a broker holds a PCI device: --window pci:BDF, not 'shm:x'" - \
	-w shm:x broker --socket "$T/broker.sock"
says "no PCI device at 0000:ff:1f.7" - -w pci:ff:1f.7 broker --socket "$T/broker.sock"
[ -e "$T/broker.sock" ] && failed "a broker that holds no device made its socket"
# the completions' list of windows is the library's
"$S" -w "shm:$SHM" init >/dev/null || failed "init of shm:$SHM"
printf 'not a window at all' >"/dev/shm/$SHM-junk"
"$S" --list-windows >"$T/list"
grep -qx "shm:$SHM" "$T/list" &&
	! grep -q "$SHM-junk" "$T/list" &&
	ok "--list-windows lists the window, not the other object" ||
	failed "--list-windows: $(cat "$T/list")"
finish 15
