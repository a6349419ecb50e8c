#!/bin/sh
# The README's two commands for a fresh Debian machine, run exactly as it
# gives them, in a fresh Debian 12 root: debootstrap --variant=minbase
# from this machine's mirror (SMQ_MIRROR names another), plus git, make
# and gcc, as a container image has them; git archive HEAD (what is
# committed, not the working tree) copied in; /proc, /dev, a /dev/shm of
# its own and /sys mounted.  There, as root in the copy's folder, the
# README's set-up line (apt-get install ... && make && make demo), then
# its test line (apt-get install -y make && make deps && make check-all).
# Fails if either fails; shows check-all's last line (what it skipped and
# why) and the runner's lines of every failed test.
# Needs root, debootstrap and the network to the mirror; takes an hour on
# two cores: make fresh-check, never make check or check-all (nor CI).
# Prints "ok"/"FAIL" per step and last "N passed, N failed"; exit 0 pass,
# 1 fail, 77 skip.  SMQ_FRESH_KEEP=1 leaves the root's folder (its logs
# in it) for a look afterwards.
cd "$(dirname "$0")/../.." || exit 1
export LC_ALL=C
# debootstrap and chroot live in sbin, which a PATH may lack
PATH=$PATH:/usr/sbin:/sbin
suite=bookworm
top=$PWD

[ "$(id -u)" = 0 ] || { echo "not root: debootstrap, mount and chroot need root"; exit 77; }
for tool in git debootstrap wget chroot mount umount timeout; do
	command -v "$tool" >/dev/null || {
		echo "$tool not installed (apt-get install git debootstrap wget)"
		exit 77
	}
done
git rev-parse --verify -q HEAD >/dev/null || { echo "not a git checkout: nothing to archive"; exit 77; }
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	echo "note: the working tree has changes; the root gets HEAD without them"

# The README's two commands: its indented lines that begin with
# "apt-get update &&", the set-up line first, then the test line.
readme_lines=$(sed -n 's/^    \(apt-get update && .*\)$/\1/p' README.md)
setup=$(printf '%s\n' "$readme_lines" | sed -n 1p)
tests=$(printf '%s\n' "$readme_lines" | sed -n 2p)
case $setup in *'make demo'*) ;; *) echo "FAIL README.md has no set-up line (apt-get update && ... make demo)"; exit 1 ;; esac
case $tests in *'make check-all'*) ;; *) echo "FAIL README.md has no test line (apt-get update && ... make check-all)"; exit 1 ;; esac

. tests/build/mirror.sh
mirror=${SMQ_MIRROR:-$(find_mirror | head -n 1)}
[ -n "$mirror" ] || { echo "no $suite mirror in /etc/apt/sources.list*: set SMQ_MIRROR"; exit 77; }
timeout -k 5 30 wget -q -T 20 -O /dev/null "$mirror/dists/$suite/Release" ||
	{ echo "mirror unreachable: $mirror/dists/$suite/Release"; exit 77; }

T=$(mktemp -d "${TMPDIR:-/tmp}/smq-fresh.XXXXXX") || exit 1
T=$(cd "$T" && pwd -P) || exit 1
root=$T/root
# Everything that runs in the root is ours: what a timeout or a failure
# left there is killed (by pid), the root's mounts are undone, deepest
# first, and the folder goes only once nothing is mounted under it.
cleanup() {
	if [ -n "$child" ]; then
		kill -TERM "$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
	for p in /proc/[0-9]*; do
		case $(readlink "$p/root" 2>/dev/null) in
		"$root"|"$root"/*) kill -9 "${p#/proc/}" 2>/dev/null ;;
		esac
	done
	awk -v r="$root/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r |
		while read -r m; do
			umount "$m" 2>/dev/null || umount -l "$m"
		done
	if awk -v t="$T/" 'index($2, t) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
		echo "still mounted under $T: left in place"
	elif [ -n "${SMQ_FRESH_KEEP:-}" ]; then
		echo "kept: $T (the logs: $T/*.log)"
	else
		rm -rf --one-file-system "$T"
	fi
}
child=
trap 'st=$?; cleanup; exit $st' EXIT
exec 3>&1
trap 'echo "interrupted: cleaning up" >&3; exit 1' INT TERM HUP

passed=0 failures=0
ok() { printf 'ok   %s\n' "$*"; passed=$((passed + 1)); }
failed() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }
show() { tail -n "${2:-40}" "$1" | sed 's/^/    /'; }
give_up() {
	echo "$passed passed, $((failures)) failed (the steps after this one need it)"
	exit 1
}
# bounded SECONDS COMMAND...: COMMAND under timeout, waited for in the
# background so that a signal's trap runs at once (package.sh's way)
bounded() {
	secs=$1
	shift
	timeout -k 5 "$secs" "$@" &
	child=$!
	wait "$child"
	rc_=$?
	child=
	return $rc_
}
# inroot SECONDS COMMAND: COMMAND by sh in the copy's folder in the root,
# as root with the environment of a container's shell
inroot() {
	bounded "$1" chroot "$root" /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root DEBIAN_FRONTEND=noninteractive \
		/bin/sh -c "cd /root/smq && $2"
}

# ---- the root ----
if bounded 1800 debootstrap --variant=minbase --include=git,make,gcc \
	"$suite" "$root" "$mirror" >"$T/debootstrap.log" 2>&1; then
	ok "debootstrap --variant=minbase --include=git,make,gcc $suite from $mirror"
else
	failed "debootstrap --variant=minbase $suite from $mirror:"; show "$T/debootstrap.log"; give_up
fi
# what a test needs of a running machine; the root's own /dev/shm
mount -t proc proc "$root/proc" &&
	mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev" &&
	mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm" &&
	{ mount -t sysfs sysfs "$root/sys" 2>/dev/null ||
	  { mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys"; }; } ||
	{ failed "mount /proc, /dev, a tmpfs on /dev/shm and /sys in the root"; give_up; }
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
# no service of any package starts in the root (as in a container image)
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" && chmod 755 "$root/usr/sbin/policy-rc.d"
mkdir "$root/root/smq" && git archive --format=tar HEAD | tar -x -C "$root/root/smq" ||
	{ failed "git archive HEAD into the root"; give_up; }
ok "git archive HEAD ($(git rev-parse --short HEAD)) in the root's /root/smq"

# ---- the README's commands ----
if inroot 3600 "$setup" >"$T/setup.log" 2>&1; then
	ok "the README's set-up line: $setup"
else
	failed "the README's set-up line (exit $?): $setup"; show "$T/setup.log"; give_up
fi
inroot 10800 "$tests" >"$T/tests.log" 2>&1
rc=$?
last=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$T/tests.log" | tail -n 1)
if [ $rc = 0 ]; then
	ok "the README's test line: $tests"
else
	failed "the README's test line (exit $rc): $tests"
	# the failed tests, as the runner showed them
	awk '/^FAIL / { on = 1 } /^(PASS|SKIP) |^== / { on = 0 } on' "$T/tests.log" |
		head -n 200 | sed 's/^/    /'
	[ -n "$last" ] || show "$T/tests.log"
fi
echo "check-all in the root: ${last:-no summary line}"
echo "$passed passed, $failures failed"
[ $failures = 0 ]
