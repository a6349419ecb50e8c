#!/bin/sh
# The Debian packages as a user gets them: built by dpkg-buildpackage from
# git archive HEAD (what is committed, not the working tree) in a temporary
# folder; lintian finds no error in them; in a fresh Debian 12 root
# (debootstrap --variant=minbase from this machine's mirror) apt installs
# the three packages, and gcc, libc6-dev and pkgconf, and nothing else we
# built; each package holds its files; there smqctl formats the default
# window (shm:smq, on a tmpfs of the root's own /dev/shm), two boards
# synchronise, a message goes each way, and an installed example builds
# with pkg-config (and statically with libsmq.a) and runs.
# Needs root, dpkg-dev, debhelper, lintian and debootstrap, the build
# dependencies of debian/control, and the network to the mirror; takes
# minutes, so it is make package-check, never make check.  SMQ_MIRROR
# names another mirror.
# Prints "ok"/"FAIL" per step; exit 0 pass, 1 fail, 77 skip.
cd "$(dirname "$0")/../.." || exit 1
export LC_ALL=C
. tests/build/debroot.sh
# the packages and, in each, files it must hold (MA: the multiarch folder)
# (the library's package is named for its soname, smq.h's major version)
major=$(sed -n 's/^#define SMQ_VERSION_MAJOR \([0-9]*\)$/\1/p' include/smq.h)
packages="libsmq$major libsmq-dev smqctl"
eval "holds_libsmq$major=/usr/lib/MA/libsmq.so.$major"
holds_libsmq_dev="/usr/include/smq.h /usr/lib/MA/libsmq.so /usr/lib/MA/libsmq.a
	/usr/lib/MA/pkgconfig/libsmq.pc /usr/share/man/man3/libsmq.3.gz
	/usr/share/man/man3/smq_open.3.gz
	/usr/share/doc/libsmq-dev/examples/twoboards.c"
holds_smqctl="/usr/bin/smqctl /usr/share/man/man1/smqctl.1.gz
	/usr/share/man/man1/smqctl-init.1.gz /usr/share/man/man1/smqctl-help.1.gz
	/usr/share/man/man7/smq.7.gz /usr/share/man/man7/smq-format.7.gz
	/usr/share/bash-completion/completions/smqctl
	/usr/share/zsh/vendor-completions/_smqctl
	/lib/systemd/system/smq-init.service /usr/share/doc/smqctl/smq-window.conf
	/usr/share/doc/smqctl/smq-alerts.yml"

debroot_need "apt-get install dpkg-dev debhelper lintian debootstrap wget" \
	git dpkg-buildpackage dpkg-checkbuilddeps dpkg-architecture \
	lintian debootstrap wget chroot mount umount timeout
debroot_mirror
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH) || exit 1
debroot_folder package

# give_up: a step the rest depends on failed
give_up() {
	echo "$passed ok, $failures failed (the steps after this one need it)"
	exit 1
}
# inroot SECONDS COMMAND: COMMAND by sh in the root, with a clean environment
inroot() {
	bounded "$1" chroot "$root" /usr/bin/env -i \
		PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C \
		DEBIAN_FRONTEND=noninteractive /bin/sh -c "$2"
}

# ---- build ----
mkdir "$T/src" && git archive --format=tar HEAD | tar -x -C "$T/src" ||
	{ failed "git archive HEAD"; give_up; }
(cd "$T/src" && dpkg-checkbuilddeps) >"$T/deps.log" 2>&1 || {
	echo "build dependencies missing: $(sed -n 's/.*Unmet build dependencies: //p' "$T/deps.log")"
	exit 77
}
if bounded 1800 env -C "$T/src" DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-parallel=2}" \
	dpkg-buildpackage -us -uc -b >"$T/build.log" 2>&1; then
	ok "dpkg-buildpackage -b from git archive HEAD"
else
	failed "dpkg-buildpackage -b from git archive HEAD:"; show "$T/build.log"; give_up
fi
version=$(cd "$T/src" && dpkg-parsechangelog -S Version)
# smq.h wherever the tree keeps it (the Makefile reads its version there)
header=$(find "$T/src" -path "$T/src/debian" -prune -o -name smq.h -print | head -n 1)
want=$(sed -n 's/^#define SMQ_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
	"$header" | paste -sd.)
if [ "${version%-*}" = "$want" ]; then
	ok "debian/changelog's $version is smq.h's $want"
else
	failed "debian/changelog's $version is not smq.h's $want: a release adds an entry (dch -v $want-1)"
fi
for p in $packages; do
	[ -f "$T/${p}_${version}_$(dpkg-architecture -qDEB_HOST_ARCH).deb" ] ||
		{ failed "no package $p built"; give_up; }
done
ok "built $packages, version $version"

# ---- lintian ----
changes=$(ls "$T"/*.changes)
bounded 600 lintian --fail-on error --display-info "$changes" >"$T/lintian.log" 2>&1
rc=$?
grep -v 'running with root privileges' "$T/lintian.log" >"$T/lintian.tags"
if [ $rc = 0 ]; then
	ok "lintian: no error ($(grep -c '^W:' "$T/lintian.tags") warnings, $(grep -c '^I:' "$T/lintian.tags") info)"
	grep '^W:' "$T/lintian.tags" | sed 's/^/    /'
	[ -s "$T/lintian.tags" ] || { failed "lintian said nothing at all:"; show "$T/lintian.log"; }
else
	failed "lintian (exit $rc):"; show "$T/lintian.tags"
fi

# ---- a fresh Debian root with the packages ----
debroot_make || give_up
DEBROOT_SHM=mode=1777,size=64m
debroot_ready ||
	{ failed "mount /proc and a tmpfs on /dev/shm in the root"; give_up; }
mkdir "$root/tmp/debs" && for p in $packages; do
	cp "$T/${p}_${version}"_*.deb "$root/tmp/debs/" || exit 1
done
if inroot 1200 'apt-get update -q && apt-get install -y -q --no-install-recommends \
	/tmp/debs/*.deb gcc libc6-dev pkgconf' >"$T/apt.log" 2>&1; then
	ok "apt-get install $packages gcc libc6-dev pkgconf in the root"
else
	failed "apt-get install in the root:"; show "$T/apt.log"; give_up
fi
for p in $packages; do
	got=$(inroot 30 "dpkg-query -W -f '\${Status} \${Version}' $p")
	[ "$got" = "install ok installed $version" ] || failed "$p is '$got', not installed at $version"
	eval "must=\$holds_$(echo "$p" | tr - _)"
	inroot 30 "dpkg -L $p" >"$T/$p.files" 2>&1
	missing=
	for f in $must; do
		f=$(echo "$f" | sed "s|/MA/|/$ma/|")
		grep -qx "$f" "$T/$p.files" || missing="$missing $f"
	done
	if [ -z "$missing" ]; then
		ok "$p installed with the $(echo $must | wc -w) files it must hold"
	else
		failed "$p lacks:$missing"
	fi
done

# ---- smqctl on the default window ----
# step NAME SECONDS COMMAND: one check, run in the root
step() {
	if inroot "$2" "$3" >"$T/step.log" 2>&1; then
		ok "$1"
	else
		failed "$1 (exit $?):"; show "$T/step.log"
	fi
}
step "smqctl --version says $want" 10 "smqctl --version | grep -qx 'smqctl $want'"
step "smqctl init --boards 2 --queues 2 (shm:smq)" 30 \
	"smqctl init --boards 2 --queues 2 && test -e /dev/shm/smq"
inroot 40 "smqctl --board 1 sync --timeout 30" >"$T/sync1.log" 2>&1 &
board1=$!
step "smqctl sync: board 0 waits for board 1 (in the background)" 40 \
	"smqctl sync --timeout 30"
if wait "$board1"; then
	ok "smqctl --board 1 sync"
else
	failed "smqctl --board 1 sync:"; show "$T/sync1.log"
fi
step "smqctl send: board 0 to queue 1, board 1's recv gets it" 30 \
	"smqctl send --queue 1 'hello board 1' &&
	 test \"\$(smqctl --board 1 recv --queue 1 --timeout 10)\" = 'hello board 1'"
step "smqctl send: board 1 to queue 0, board 0's recv gets it" 30 \
	"smqctl --board 1 send --queue 0 'hello board 0' &&
	 test \"\$(smqctl recv --queue 0 --timeout 10)\" = 'hello board 0'"
step "smqctl dump: the window is sound" 30 "smqctl dump"

# ---- an installed example, built with pkg-config ----
ex=/usr/share/doc/libsmq-dev/examples/twoboards.c
step "pkg-config --modversion libsmq says $want" 10 \
	"test \"\$(pkg-config --modversion libsmq)\" = $want"
step "cc twoboards.c \$(pkg-config --cflags --libs libsmq)" 120 \
	"cc -std=c11 -Wall -Wextra -Werror -o /tmp/twoboards $ex \$(pkg-config --cflags --libs libsmq)"
step "twoboards runs on the installed libsmq.so.$major" 60 \
	"ldd /tmp/twoboards >/tmp/ldd.out &&
	 { grep -Eq 'libsmq\\.so\\.$major => (/usr)?/lib/$ma/libsmq\\.so\\.$major ' /tmp/ldd.out ||
	   { echo 'not linked with the installed libsmq.so.$major:'; cat /tmp/ldd.out; exit 1; }; } &&
	 /tmp/twoboards 1000"
step "twoboards links statically with libsmq.a and runs" 120 \
	"cc -std=c11 -o /tmp/twoboards-static $ex /usr/lib/$ma/libsmq.a -pthread &&
	 ! ldd /tmp/twoboards-static 2>/dev/null | grep -q libsmq && /tmp/twoboards-static 1000"

echo "$passed ok, $failures failed"
[ $failures = 0 ]
