# tests/build/debroot.sh: sourced by the scripts that make a fresh Debian
# root (package.sh, fresh.sh), from the top of the tree: what they need
# (root, the tools, a checkout, a reachable mirror), the root's folder and
# its cleanup, the steps' words, debootstrap and what a program run in the
# root needs of a running machine.  A script calls, in this order:
#   debroot_need HINT TOOL...    exit 77 unless root with every TOOL
#                                (HINT: how to install them) in a checkout
#   debroot_mirror               $mirror, or exit 77 if none answers
#   debroot_folder NAME          $T (a new folder smq-NAME.*) and $root
#                                in it, removed at the exit, whatever
#                                happened; DEBROOT_KEEP=1 keeps it
#   debroot_make STEP            debootstrap STEP (its options) into $root
#   debroot_ready [host]         mounts, the resolver, no services
# and runs what it needs there with bounded, and says ok, failed and show.
# debootstrap and chroot live in sbin, which a PATH may lack
PATH=$PATH:/usr/sbin:/sbin
suite=bookworm
. tests/build/mirror.sh

debroot_need() {
	hint_=$1
	shift
	[ "$(id -u)" = 0 ] || { echo "not root: debootstrap, mount and chroot need root"; exit 77; }
	for tool in "$@"; do
		command -v "$tool" >/dev/null || {
			echo "$tool not installed ($hint_)"
			exit 77
		}
	done
	git rev-parse --verify -q HEAD >/dev/null || { echo "not a git checkout: nothing to archive"; exit 77; }
}

debroot_mirror() {
	mirror=${SMQ_MIRROR:-$(find_mirror | head -n 1)}
	[ -n "$mirror" ] || { echo "no $suite mirror in /etc/apt/sources.list*: set SMQ_MIRROR"; exit 77; }
	timeout -k 5 30 wget -q -T 20 -O /dev/null "$mirror/dists/$suite/Release" ||
		{ echo "mirror unreachable: $mirror/dists/$suite/Release"; exit 77; }
}

# Everything that runs in the root is ours: what a timeout or a failure
# left there is killed (by pid), the root's mounts (ours, and any a killed
# debootstrap left) are undone, deepest first, and the folder goes only
# once nothing is mounted under it.
debroot_cleanup() {
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
	elif [ -n "${DEBROOT_KEEP:-}" ]; then
		echo "kept: $T (the logs: $T/*.log)"
	else
		rm -rf --one-file-system "$T"
	fi
}

debroot_folder() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/smq-$1.XXXXXX") || exit 1
	T=$(cd "$T" && pwd -P) || exit 1
	root=$T/root
	child=
	trap 'st=$?; debroot_cleanup; exit $st' EXIT
	# (to fd 3, the script's output: a step's log may be stdout when
	# it comes)
	exec 3>&1
	trap 'echo "interrupted: cleaning up" >&3; exit 1' INT TERM HUP
}

passed=0 failures=0
ok() { printf 'ok   %s\n' "$*"; passed=$((passed + 1)); }
failed() { printf 'FAIL %s\n' "$*"; failures=$((failures + 1)); }
show() { tail -n "${2:-40}" "$1" | sed 's/^/    /'; }

# bounded SECONDS COMMAND...: COMMAND under timeout; waited for in the
# background, since a signal's trap runs during a wait but only after a
# command in the foreground ends (and timeout, its own process group, is
# never sent a terminal's ^C): the cleanup stops it.
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

# debroot_make [OPTION...]: debootstrap --variant=minbase OPTION... of
# $suite from $mirror into $root, its log $T/debootstrap.log; says ok or
# failed, and returns non-zero if it failed.
debroot_make() {
	step_="debootstrap --variant=minbase${*:+ $*} $suite from $mirror"
	if bounded 1800 debootstrap --variant=minbase "$@" "$suite" "$root" \
		"$mirror" >"$T/debootstrap.log" 2>&1; then
		ok "$step_"
	else
		failed "$step_:"; show "$T/debootstrap.log"
		return 1
	fi
}

# debroot_ready [host]: what a program run in the root needs of a running
# machine: /proc and a /dev/shm of the root's own (a tmpfs, DEBROOT_SHM its
# mount options); with host, the host's /dev under it (its mounts not
# passed back) and /sys.  Then the host's resolver, and no service of any
# package starts in the root (as in a container image).  Returns
# non-zero if a mount failed.
debroot_ready() {
	mount -t proc proc "$root/proc" || return 1
	if [ "${1:-}" = host ]; then
		mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev" ||
			return 1
	fi
	mkdir -p "$root/dev/shm" &&
		mount -t tmpfs -o "${DEBROOT_SHM:-mode=1777}" tmpfs "$root/dev/shm" ||
		return 1
	if [ "${1:-}" = host ]; then
		mount -t sysfs sysfs "$root/sys" 2>/dev/null ||
			{ mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys"; } ||
			return 1
	fi
	cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d" &&
		chmod 755 "$root/usr/sbin/policy-rc.d"
	return 0
}
