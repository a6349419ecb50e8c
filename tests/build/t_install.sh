#!/bin/sh
# make install into a staging DESTDIR puts library, header, pkg-config file
# and man pages in place, and a program builds against them with pkg-config.
. "$(dirname "$0")/../lib/lib.sh"
command -v pkg-config >/dev/null || skip "pkg-config not installed"
dest=$T/dest
mkdir "$dest" || exit 1
make -s install PREFIX=/opt/smq DESTDIR="$dest" >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log"; die "make install"; }
major=$(sed -n 's/^#define SMQ_VERSION_MAJOR \([0-9]*\)$/\1/p' include/smq.h)
case_begin
for f in opt/smq/lib/libsmq.a opt/smq/lib/libsmq.so.$major opt/smq/lib/libsmq.so opt/smq/include/smq.h \
	 opt/smq/lib/pkgconfig/libsmq.pc opt/smq/share/man/man7/smq.7 opt/smq/share/man/man3/libsmq.3 \
	 opt/smq/bin/smqctl opt/smq/share/man/man1/smqctl.1 \
	 opt/smq/share/bash-completion/completions/smqctl opt/smq/share/zsh/site-functions/_smqctl \
	 opt/smq/lib/systemd/system/smq-init.service opt/smq/lib/systemd/system/smq-sync@.service \
	 opt/smq/lib/systemd/system/smq-ivshmem-server.service \
	 opt/smq/lib/systemd/system/smq-vfio-broker.service \
	 opt/smq/share/doc/smq/smq-window.conf opt/smq/share/doc/smq/smq-alerts.yml; do
	[ -e "$dest/$f" ] || failed "missing after install: /$f"
done
# every page of man/, each command's smqctl-CMD.1 among them
for p in man/*.[0-9]; do
	s=${p##*.}
	[ -e "$dest/opt/smq/share/man/man$s/${p#man/}" ] ||
		failed "missing after install: /opt/smq/share/man/man$s/${p#man/}"
done
case_end "make install puts the libraries, the header, libsmq.pc, every page of man/, the completions, the units, smq-window.conf and smq-alerts.yml in place"
# the project's benchmark program (bench/) is built, never installed
bench=$(cd "$dest" && find . -name 'smq-bench*')
[ -z "$bench" ] && ok "the benchmark program (smq-bench) is not installed" ||
	failed "make install installed the benchmark program: $bench"
cat >"$dest/prog.c" <<'C'
#include <smq.h>
#include <stdio.h>
int main(void) { puts(smq_version()); return smq_strerror(-SMQ_EMAGIC) ? 0 : 1; }
C
flags=$(PKG_CONFIG_SYSROOT_DIR="$dest" PKG_CONFIG_LIBDIR="$dest/opt/smq/lib/pkgconfig" \
	pkg-config --cflags --libs libsmq) || die "pkg-config --cflags --libs libsmq"
${CC:-cc} -o "$dest/prog" "$dest/prog.c" $flags || die "a program built with pkg-config's flags"
out=$(LD_LIBRARY_PATH="$dest/opt/smq/lib" "$dest/prog") || die "the program built against the installed library"
want=$(sed -n 's/^#define SMQ_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' include/smq.h | paste -sd.)
[ "$out" = "$want" ] &&
	ok "a program built with pkg-config runs on the installed library, version $out" ||
	failed "installed library says version '$out', Makefile '$want'"
grep -q '^ExecStart=/opt/smq/bin/smqctl init --from ' "$dest/opt/smq/lib/systemd/system/smq-init.service" &&
	ok "smq-init.service runs /opt/smq/bin/smqctl init --from" ||
	failed "smq-init.service does not run /opt/smq/bin/smqctl init --from"
# the example description is one init takes
"$dest/opt/smq/bin/smqctl" -w "file:$dest/w" init --dry-run \
	--from "$dest/opt/smq/share/doc/smq/smq-window.conf" >/dev/null &&
	ok "smqctl init --dry-run --from the installed smq-window.conf" ||
	failed "smqctl init --dry-run --from the installed smq-window.conf fails"
grep -q '^ExecStart=/opt/smq/bin/smqctl server --socket ' "$dest/opt/smq/lib/systemd/system/smq-ivshmem-server.service" &&
	ok "smq-ivshmem-server.service runs /opt/smq/bin/smqctl server" ||
	failed "smq-ivshmem-server.service does not run /opt/smq/bin/smqctl server"
grep -q '^ExecStart=/opt/smq/bin/smqctl --window ${SMQ_BROKER_DEVICE} broker --socket ' "$dest/opt/smq/lib/systemd/system/smq-vfio-broker.service" &&
	ok "smq-vfio-broker.service runs /opt/smq/bin/smqctl broker" ||
	failed "smq-vfio-broker.service does not run /opt/smq/bin/smqctl broker"
"$dest/opt/smq/bin/smqctl" --version | grep -q "smqctl $want" &&
	ok "the installed smqctl --version says $want" ||
	failed "installed smqctl --version is wrong"
# Both installed libraries show the public API and nothing else: no
# internal name of ours can clash with a name of the user's program.
grep -oE '\bsmq_[a-z0-9_]+\(' include/smq.h | tr -d '(' | sort -u >"$dest/declared"
nm -g --defined-only "$dest/opt/smq/lib/libsmq.a" | awk 'NF == 3 { print $3 }' | sort -u >"$dest/static"
nm -D --defined-only "$dest/opt/smq/lib/libsmq.so" | awk 'NF == 3 { sub(/@.*/, "", $3); print $3 }' |
	grep -v '^LIBSMQ_' | sort -u >"$dest/shared"
for lib in static shared; do
	if diff -u "$dest/declared" "$dest/$lib" >"$dest/diff"; then
		ok "the installed $lib library's global names are smq.h's"
	else
		failed "installed $lib library's global names differ from smq.h:"
		cat "$dest/diff"
	fi
done
# the one public header is the only one installed (smq_tools.h is smqctl's)
headers=$(cd "$dest/opt/smq/include" && ls)
[ "$headers" = smq.h ] && ok "smq.h is the only header installed" ||
	failed "installed headers: $headers (only smq.h is public)"
# a program that defines a name our internals use still links statically
cat >"$dest/clash.c" <<'C'
#include <smq.h>
int smq_attach(void);
int smq_attach(void) { return 7; }
int smq_enter(void);
int smq_enter(void) { return 8; }
int main(void)
{
	struct smq_window *w;
	/* smq_open pulls in the library's own smq_attach and smq_enter */
	return smq_attach() + smq_enter() == 15 &&
	       smq_open("smq-install-test-none", 0, 0, &w) < 0 &&
	       smq_version_check(SMQ_VERSION_MAJOR, SMQ_VERSION_MINOR) ? 0 : 1;
}
C
if ! ${CC:-cc} -o "$dest/clash" "$dest/clash.c" -I"$dest/opt/smq/include" "$dest/opt/smq/lib/libsmq.a" -pthread; then
	failed "a program defining smq_attach does not link with the installed libsmq.a"
elif "$dest/clash"; then
	ok "a program defining names of our internals links statically, and calls its own"
else
	failed "the statically linked program called our internals"
fi
any_failed || echo "installed and linked version $out; $(wc -l <"$dest/static") global names in each library, all public"
finish 11
