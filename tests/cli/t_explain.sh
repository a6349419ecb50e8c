#!/bin/sh
# smqctl says the cause the library finds (smq_explain()) and adds only
# its own remedy: a window file in a directory that does not exist names
# the directory and sends nobody to "smqctl init"; a window that does not
# exist yet does; an object others may write says its mode and --force;
# a bad shm name and an unknown transport say so; a window that no vfio
# broker serves, and a broker of what it cannot hold.  Exit 0 pass, 1 fail,
# 77 skip.
cd "$(dirname "$0")/../.." || exit 1
B=${B:-build}
case $B in
/*) S=$B/smqctl ;;
*) S=$PWD/$B/smqctl ;;
esac
[ -x "$S" ] || { echo "smqctl not built ($S): run make first"; exit 77; }
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"; rm -f /dev/shm/smq-t-explain-$$*' EXIT
unset SMQ_WINDOW 2>/dev/null
export LC_ALL=C
fail=0
# says WANT UNWANTED SMQCTL-ARGS...: exit 1 and stderr holds WANT, not
# UNWANTED (- for none)
says() {
	want=$1 unwanted=$2
	shift 2
	"$S" "$@" </dev/null >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc -eq 1 ] && grep -qF -e "$want" "$T/err" &&
	   { [ "$unwanted" = - ] || ! grep -qF -e "$unwanted" "$T/err"; }; then
		echo "ok   smqctl $*: $(cat "$T/err")"
	else
		echo "FAIL smqctl $* (exit $rc): $(cat "$T/err")"
		fail=1
	fi
}

says "directory $T/nonexistent/dir does not exist" "smqctl init" \
	-w "file:$T/nonexistent/dir/x" init
[ -e "$T/nonexistent" ] && { echo "FAIL the directory was created"; fail=1; }
# nothing to wait for: sync gives up at once, not at its timeout
start=$(date +%s)
says "directory $T/nonexistent/dir does not exist" - \
	-w "file:$T/nonexistent/dir/x" -b 1 sync --timeout 60
[ $(($(date +%s) - start)) -lt 20 ] ||
	{ echo "FAIL sync waited for a window in a directory that does not exist"; fail=1; }
says "window file:$T/w does not exist yet" - -w "file:$T/w" dump
says "(smqctl init)" - -w "file:$T/w" dump
says "window shm:smq-t-explain-$$ does not exist yet" - \
	-w "shm:smq-t-explain-$$" send x
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
[ -e "$T/broker.sock" ] && { echo "FAIL a broker that holds no device made its socket"; fail=1; }
# the completions' list of windows is the library's
"$S" -w "shm:smq-t-explain-$$" init >/dev/null || fail=1
printf 'not a window at all' >"/dev/shm/smq-t-explain-$$-junk"
"$S" --list-windows >"$T/list"
grep -qx "shm:smq-t-explain-$$" "$T/list" &&
	! grep -q "smq-t-explain-$$-junk" "$T/list" &&
	echo "ok   --list-windows lists the window, not the other object" ||
	{ echo "FAIL --list-windows: $(cat "$T/list")"; fail=1; }
exit $fail
