#!/bin/sh
# Security of the window: shm and file windows are created 0600 unless
# init --mode says otherwise; a shm name cannot leave /dev/shm (no '/', no
# leading '.', only A-Z a-z 0-9 . _ -, 1 to 200 characters), and a refused
# name creates nothing anywhere; a window another user owns, or a PCI BAR
# opened without root, fails with a message saying so.
# The rows that need another user run smqctl as uid 65534 (and 65533) with
# setpriv, so they need root; rows that cannot run are skipped with a note.
# SMQCTL_WRAP: shell words put before every smqctl invocation (valgrind).
# Prints "ok"/"FAIL" per case and a summary; exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
P=$SHM          # windows this test makes: shm:$P-WHAT
Q=$SHM-stray    # names that must never appear anywhere
at_cleanup 'rm -rf "/dev/shm/.${Q:?}"* "/dev/${Q:?}"* "/tmp/${Q:?}"* "/${Q:?}"*'
cd "$T" || exit 1  # anything created by mistake lands in $T
chmod 711 "$T"     # other users reach $T/smqctl, not the rest
unset SMQ_WINDOW SMQ_DEBUG 2>/dev/null
umask 022

# skipped WHAT: rows that cannot run here
skipped() { note "skipped: $*"; }
# the checks this script makes, counted as its rows are chosen
floor=0

# run [RUNNER...] -- ARGS: smqctl, as the runner says (e.g. as another user)
run() {
	r=""
	while [ "$1" != -- ]; do r="$r $1"; shift; done
	shift
	$r "$S" "$@" </dev/null >"$T/out" 2>"$T/err"
	rc=$?
}
# (case-insensitive: "Permission denied" and "permission denied")
want_err() { grep -qiF -e "$1" "$T/err" || no "stderr lacks '$1'"; }
want_mode() { # want_mode FILE OCTAL
	if [ ! -e "$1" ]; then
		no "$1 does not exist"
	else
		wm=$(stat -c %a "$1")
		[ "$wm" = "$2" ] || no "$1 has mode $wm, expected $2"
	fi
}
want_owner() { # want_owner FILE UID
	[ "$(stat -c %u "$1" 2>/dev/null)" = "$2" ] || no "$1 is owned by uid $(stat -c %u "$1" 2>/dev/null), expected $2"
}
# Anything named after $Q in the places a name could escape to.
strays() {
	find / /dev /tmp "$T" -maxdepth 1 -name "*$Q*" 2>/dev/null
	find /dev/shm -maxdepth 3 -name "*$Q*" 2>/dev/null
	[ -n "$TMPDIR" ] && find "$TMPDIR" -maxdepth 1 -name "*$Q*" 2>/dev/null
}
want_no_strays() {
	s=$(strays | sort -u | head -n 3 | tr '\n' ' ')
	[ -z "$s" ] || no "created: $s"
	# removed, so that the next row is judged on its own
	strays | while IFS= read -r f; do rm -rf "$f"; done
}

SHM_OK=1
if [ ! -d /dev/shm ] || [ ! -w /dev/shm ]; then
	SHM_OK=0
	note "/dev/shm is not a writable directory: shm rows skipped"
fi

# Another user: uid 65534 (nobody), and 65533 for a second one.
ROOT=0
[ "$(id -u)" = 0 ] && ROOT=1
AS_NOBODY="" AS_OTHER="" AS_OTHER_IN_GROUP=""
if [ $ROOT = 1 ] && command -v setpriv >/dev/null 2>&1 &&
	setpriv --reuid=65534 --regid=65534 --clear-groups "$T/smqctl" --version >/dev/null 2>&1; then
	AS_NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
	AS_OTHER="setpriv --reuid=65533 --regid=65533 --clear-groups"
	AS_OTHER_IN_GROUP="setpriv --reuid=65533 --regid=65534 --clear-groups"
elif [ $ROOT = 1 ] && command -v runuser >/dev/null 2>&1 &&
	[ "$(id -u nobody 2>/dev/null)" = 65534 ] &&
	runuser -u nobody -- "$T/smqctl" --version >/dev/null 2>&1; then
	AS_NOBODY="runuser -u nobody --"
	note "no usable setpriv: runuser for uid 65534; the rows with a second user are skipped"
elif [ $ROOT = 1 ]; then
	note "running as root without setpriv or runuser: the rows run as another user are skipped"
fi

echo "== modes"
if [ $SHM_OK = 1 ]; then
	floor=$((floor + 16))
	run -- -w "shm:$P-a" init
	want_rc 0
	want_mode "/dev/shm/$P-a" 600
	want_owner "/dev/shm/$P-a" "$(id -u)"
	verdict "init creates /dev/shm/$P-a with mode 0600 (umask 022)"

	umask 000
	run -- -w "shm:$P-b" init
	umask 022
	want_rc 0
	want_mode "/dev/shm/$P-b" 600
	verdict "init creates /dev/shm/$P-b with mode 0600 under umask 000"

	run -- -w "shm:$P-c" init --mode 0660
	want_rc 0
	want_mode "/dev/shm/$P-c" 660
	verdict "init --mode 0660 creates a 0660 window"

	run -- -w "shm:$P-a" init --mode 640
	want_rc 0
	want_mode "/dev/shm/$P-a" 640
	verdict "init --mode 640 on an existing 0600 window makes it 0640"

	umask 077
	run -- -w "shm:$P-d" init --mode 0666
	umask 022
	want_rc 0
	want_mode "/dev/shm/$P-d" 666
	verdict "init --mode 0666 under umask 077 gives 0666 (an explicit mode is not masked)"

	run -- -w "shm:$P-e" --json init --mode 0600
	want_rc 0
	want_mode "/dev/shm/$P-e" 600
	verdict "--json init --mode 0600"

	# a bad --mode is a usage error: nothing created, nothing changed
	cp "/dev/shm/$P-a" "$T/before"
	for m in 999 10000 abc "" -1 8 0o660 "0660x" 17777 "06 60"; do
		run -- -w "shm:$P-bad" init --mode "$m"
		want_rc 2
		want_no_out
		want_smqctl
		want_err "--mode"
		[ -e "/dev/shm/$P-bad" ] && no "/dev/shm/$P-bad was created"
		run -- -w "shm:$P-a" init --mode "$m"
		want_rc 2
		want_mode "/dev/shm/$P-a" 640
		cmp -s "$T/before" "/dev/shm/$P-a" || no "the existing window's bytes changed"
		verdict "[exit 2] init --mode '$m' (new and existing window)"
	done
else
	skipped "shm mode rows"
fi

floor=$((floor + 5))
run -- -w "file:$T/f1" init
want_rc 0
want_mode "$T/f1" 600
verdict "init creates a file: window with mode 0600 (umask 022)"
umask 000
run -- -w "file:$T/f2" init
umask 022
want_rc 0
want_mode "$T/f2" 600
verdict "init creates a file: window with mode 0600 under umask 000"
run -- -w "file:$T/f3" init --mode 0644
want_rc 0
want_mode "$T/f3" 644
verdict "init --mode 0644 creates a 0644 file: window"
run -- -w "file:$T/f1" init --mode 0660
want_rc 0
want_mode "$T/f1" 660
verdict "init --mode 0660 on an existing file: window makes it 0660"
run -- -w "file:$T/f4" init --mode 999
want_rc 2
want_no_out
want_err "--mode"
[ -e "$T/f4" ] && no "$T/f4 was created"
verdict "[exit 2] init --mode 999 on a file: window creates nothing"

echo "== shm names"
if [ $SHM_OK = 1 ]; then
	floor=$((floor + 33))
	long=$(printf "%0$((200 - ${#P} - 1))d" 0)
	name200=$P-$long         # 200 characters: allowed
	name201=$Q-$long-x       # more than 200
	while [ ${#name201} -le 200 ]; do name201=${name201}y; done
	# badname SPEC-SUFFIX [COMMAND...]: refused with exit 1 and the rule;
	# nothing named after $Q appears
	badname() {
		n=$1
		shift
		[ $# -gt 0 ] || set -- init
		run -- -w "shm:$n" "$@"
		want_rc 1
		want_no_out
		want_smqctl
		want_err "bad window spec 'shm:$n'"
		want_err "a shm name is 1 to 200"
		want_no_strays
		shown=$(printf '%s' "$n" | tr '\n' '~' | cut -c1-60)
		[ ${#n} -le 60 ] || shown="$shown... (${#n} characters)"
		verdict "[exit 1] -w 'shm:$shown' $* is refused"
	}
	badname "../$Q-up"
	badname "../../tmp/$Q-up"
	badname "..//$Q-up"
	badname "./$Q-dot"
	badname ".."
	badname "."
	badname "..."
	badname "$Q-a..b"
	badname "$Q.."
	badname ".$Q-hidden"
	badname "$Q-a/b"
	badname "$Q-a/"
	badname "/$Q-abs"
	badname ""
	badname "$name201"
	badname "$Q sp"
	badname "$Q*"
	badname "$Q:x"
	badname "$Q\\x"
	badname "$Q%2e%2e"
	badname "${Q}é"
	badname "$Q
nl"
	badname "../$Q-up" dump
	badname "../$Q-up" send x
	badname "../$Q-up" -b 1 sync --timeout 0.2
	badname "$Q/../$Q-b" dump
	SMQ_WINDOW="shm:../$Q-env" run -- init
	want_rc 1
	want_no_out
	want_err "bad window spec 'shm:../$Q-env'"
	want_no_strays
	verdict "[exit 1] SMQ_WINDOW=shm:../$Q-env init is refused"
	run -- -w "pci:../../../$Q" init
	want_rc 1
	want_no_out
	want_err "bad window spec"
	want_no_strays
	verdict "[exit 1] -w pci:../../../$Q init is refused"

	# names at the edge of the rule are allowed, and stay in /dev/shm
	for n in "$name200" "$P-a.b" "$P.x_y-Z9" "$P."; do
		run -- -w "shm:$n" init
		want_rc 0
		[ -f "/dev/shm/$n" ] || no "/dev/shm/$n not created"
		want_mode "/dev/shm/$n" 600
		verdict "-w 'shm:$(printf %s "$n" | cut -c1-40)...' (${#n} characters) is allowed: /dev/shm/NAME, 0600"
	done

	# a symbolic link in /dev/shm is not followed out of it
	echo keep >"$T/target"
	ln -s "$T/target" "/dev/shm/$P-link"
	run -- -w "shm:$P-link" init
	want_rc 1
	want_no_out
	want_smqctl
	want_err "shm:$P-link"
	[ "$(cat "$T/target")" = keep ] || no "the link's target was written"
	verdict "[exit 1] a symbolic link /dev/shm/$P-link is not followed"
	rm -f "/dev/shm/$P-link"
else
	skipped "shm name rows"
fi

echo "== another user's window"
# perm RUNNER... -- WINDOW-FILE ARGS: exit 1, "permission denied", the
# window's bytes, mode and owner unchanged
perm() {
	pr=""
	while [ "$1" != -- ]; do pr="$pr $1"; shift; done
	shift
	pf=$1
	shift
	cp "$pf" "$T/before"
	pm=$(stat -c '%a %u %g' "$pf")
	run $pr -- "$@"
	want_rc 1
	want_no_out
	want_smqctl
	want_err "permission denied"
	want_err "another user"
	cmp -s "$T/before" "$pf" || no "window bytes changed"
	[ "$(stat -c '%a %u %g' "$pf")" = "$pm" ] || no "mode or owner changed: $(stat -c '%a %u %g' "$pf")"
	who=$(echo "$pr" | sed -n 's/.*--reuid=\([0-9]*\) --regid=\([0-9]*\).*/uid \1 gid \2/p;s/.*runuser.*/uid 65534/p')
	verdict "[exit 1] as $who: smqctl $* (window mode, uid, gid: $pm)"
}
if [ -z "$AS_NOBODY" ]; then
	if [ $ROOT = 1 ]; then skipped "another user's window rows (no setpriv/runuser)"
	else skipped "another user's window rows (need root to run as another user)"; fi
elif [ $SHM_OK = 1 ]; then
	floor=$((floor + 18))
	W=/dev/shm/$P-root
	"$S" -w "shm:$P-root" init >/dev/null 2>&1
	run -- -w "shm:$P-root" send -q 1 hello
	want_mode "$W" 600
	want_owner "$W" 0
	verdict "root's window shm:$P-root: 0600, owned by root"
	for c in "dump" "send x" "-b 1 send x" "recv --timeout 0" "-b 1 recv --timeout 0" \
		"clear" "init" "init --force --mode 0666" "sync --timeout 0.3" \
		"-b 1 sync --timeout 0.3" "top --once" "pingpong --count 1" "bench --count 1"; do
		# shellcheck disable=SC2086
		perm $AS_NOBODY -- "$W" -w "shm:$P-root" $c
	done
	run -- -w "shm:$P-root" -b 1 recv --timeout 1
	want_rc 0
	[ "$(cat "$T/out")" = hello ] || no "root's message is not intact: '$(cat "$T/out")'"
	verdict "root still receives its message intact"
	"$S" -w "file:$T/rootfile" init >/dev/null 2>&1
	perm $AS_NOBODY -- "$T/rootfile" -w "file:$T/rootfile" dump
	perm $AS_NOBODY -- "$T/rootfile" -w "file:$T/rootfile" init

	# the controls: the same commands succeed once the mode lets them
	run -- -w "shm:$P-root" init --mode 0666
	want_rc 0
	run $AS_NOBODY -- -w "shm:$P-root" dump
	want_rc 0
	verdict "after init --mode 0666 uid 65534 may dump root's window"

	if [ -n "$AS_OTHER" ]; then
		floor=$((floor + 7))
		# between two users, neither root: 65534 owns, 65533 is refused
		# unless the mode lets its group in
		run $AS_NOBODY -- -w "shm:$P-nb" init
		want_rc 0
		want_owner "/dev/shm/$P-nb" 65534
		want_mode "/dev/shm/$P-nb" 600
		verdict "uid 65534 creates shm:$P-nb: its own, 0600"
		perm $AS_OTHER -- "/dev/shm/$P-nb" -w "shm:$P-nb" dump
		perm $AS_OTHER -- "/dev/shm/$P-nb" -w "shm:$P-nb" -b 1 send x
		perm $AS_OTHER_IN_GROUP -- "/dev/shm/$P-nb" -w "shm:$P-nb" dump
		run $AS_NOBODY -- -w "shm:$P-nb" init --mode 0660
		want_rc 0
		want_mode "/dev/shm/$P-nb" 660
		verdict "uid 65534: init --mode 0660 on its window"
		run $AS_OTHER_IN_GROUP -- -w "shm:$P-nb" -b 1 send x
		want_rc 0
		verdict "uid 65533 in group 65534 may use a 0660 window of uid 65534"
		perm $AS_OTHER -- "/dev/shm/$P-nb" -w "shm:$P-nb" dump
	else
		skipped "the rows between two users other than root (need setpriv)"
	fi
	note "root opens any user's window: file permissions do not bind root"
else
	skipped "another user's shm window rows (no /dev/shm)"
fi

echo "== PCI BARs"
# A device bound to a driver if there is one: as root the message is about
# the driver; as another user about root.
BDF="" BDF_DRV=""
for d in /sys/bus/pci/devices/*; do
	[ -e "$d" ] || continue
	[ -n "$BDF" ] || BDF=${d##*/}
	if [ -e "$d/driver" ]; then BDF_DRV=${d##*/}; break; fi
done
if [ -z "$BDF" ]; then
	skipped "PCI rows: no PCI device in /sys/bus/pci/devices"
else
	if [ $ROOT = 1 ] && [ -n "$BDF_DRV" ]; then
		floor=$((floor + 1))
		run -- -w "pci:$BDF_DRV" dump
		want_rc 1
		want_no_out
		want_smqctl
		want_err "bound to a kernel driver"
		verdict "[exit 1] as root: -w pci:$BDF_DRV dump names the driver that owns the device"
	fi
	NOTROOT=$AS_NOBODY
	[ $ROOT = 0 ] && NOTROOT=" "
	if [ -n "$NOTROOT" ]; then
		list=$BDF
		[ -z "$BDF_DRV" ] || [ "$BDF_DRV" = "$BDF" ] || list="$list $BDF_DRV"
		for b in $list; do
			floor=$((floor + 2))
			for c in dump init; do
				# shellcheck disable=SC2086
				run $NOTROOT -- -w "pci:$b" $c
				want_rc 1
				want_no_out
				want_smqctl
				want_err "permission denied"
				want_err "needs root"
				verdict "[exit 1] not root: -w pci:$b $c says it needs root"
			done
		done
	else
		skipped "PCI rows as another user (no setpriv/runuser)"
	fi
fi

finish $floor
