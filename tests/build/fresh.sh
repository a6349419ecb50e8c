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
. tests/build/debroot.sh
top=$PWD

debroot_need "apt-get install git debootstrap wget" \
	git debootstrap wget chroot mount umount timeout
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	echo "note: the working tree has changes; the root gets HEAD without them"

# The README's two commands: its indented lines that begin with
# "apt-get update &&", the set-up line first, then the test line.
readme_lines=$(sed -n 's/^    \(apt-get update && .*\)$/\1/p' README.md)
setup=$(printf '%s\n' "$readme_lines" | sed -n 1p)
tests=$(printf '%s\n' "$readme_lines" | sed -n 2p)
case $setup in *'make demo'*) ;; *) echo "FAIL README.md has no set-up line (apt-get update && ... make demo)"; exit 1 ;; esac
case $tests in *'make check-all'*) ;; *) echo "FAIL README.md has no test line (apt-get update && ... make check-all)"; exit 1 ;; esac

debroot_mirror
DEBROOT_KEEP=${SMQ_FRESH_KEEP:-}
debroot_folder fresh

give_up() {
	echo "$passed passed, $((failures)) failed (the steps after this one need it)"
	exit 1
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
debroot_make --include=git,make,gcc || give_up
# what a test needs of a running machine, with the root's own /dev/shm
debroot_ready host ||
	{ failed "mount /proc, /dev, a tmpfs on /dev/shm and /sys in the root"; give_up; }
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
