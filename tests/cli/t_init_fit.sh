#!/bin/sh
# Windows that fit: init --dry-run, the refusals of a window of fixed size
# (a file another program sized, truncate -s 16M), --fit, a shape from a
# description file (--from) and its refusals, --checksum, and the window a
# shape needs in probe and model.
#  - each refusal names what the shape needs, what the window holds and
#    what would fit, and each number it names is checked against the
#    sizes --dry-run gives: N entries fit and 2N do not, B bytes fit and
#    B+1 do not, K senders a queue fit and K+1 do not;
#  - a refusal and a dry run write nothing, create nothing;
#  - --fit on a 16 MiB window picks the most entries that fit.
# Prints "ok"/"FAIL" per case; exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
need_command truncate "a window of fixed size is made with it"
DUMP=$ROOT/tests/data/pci-dumps/ivshmem.txt
cd "$T" || exit 1
unset SMQ_WINDOW
M16=16777216

# need ARGS...: the bytes a shape needs, as --dry-run says (of a window
# that does not exist: nothing to fit)
need() {
	"$S" -w "file:$T/none" init --dry-run --json "$@" >"$T/need.json" 2>&1 ||
		{ echo 0; return; }
	jnum window_size "$T/need.json"
}
# zero FILE: it holds only zero bytes (nothing was written)
zero() { [ "$(tr -d '\000' <"$1" | wc -c)" -eq 0 ]; }
# the bytes "(N bytes)" that end the line of stderr saying TEXT
bytes_after() {
	grep -F -e "$1" "$T/err" | sed -n 's/.*(\([0-9]*\) bytes).*/\1/p' | head -n 1
}

fresh() { rm -f "$T/f16"; truncate -s 16M "$T/f16"; }
W16=file:$T/f16

# ---- a shape larger than a window of fixed size ----
fresh
shape="-n 4 --queues 8"
total=$(need $shape -e 1024)
run -w "$W16" init $shape -e 1024
want_rc 1
[ "$total" -gt $M16 ] || no "4 x 8 x 1024 x 1K needs $total, not more than 16 MiB: no test"
want_err "need "
want_err "($total bytes)"
want_err "holds 16.0 MiB ($M16 bytes), which init does not grow"
want_err "nothing was written"
zero "$T/f16" || no "the refused window was written"
[ "$(wc -c <"$T/f16")" -eq $M16 ] || no "the refused window's size changed"
# the most entries that fit: N fits, 2N does not, and the size said is N's
n=$(sed -n 's/.*--entries \([0-9]*\):.*/\1/p' "$T/err")
if [ -z "$n" ]; then no "no '--entries N:' offered"; else
	bn=$(need $shape -e "$n"); b2n=$(need $shape -e $((n * 2)))
	[ "$bn" -le $M16 ] || no "--entries $n needs $bn: does not fit"
	[ "$b2n" -gt $M16 ] || no "--entries $((n * 2)) needs $b2n: fits too"
	[ "$(bytes_after "--entries $n:")" = "$bn" ] || no "--entries $n: not its $bn bytes"
fi
# the largest entry size that fits: Z fits, Z+1 does not
z=$(sed -n 's/.*--entry-size \([0-9]*\):.*/\1/p' "$T/err")
if [ -z "$z" ]; then no "no '--entry-size Z:' offered"; else
	bz=$(need $shape -e 1024 --entry-size "$z")
	bz1=$(need $shape -e 1024 --entry-size $((z + 1)))
	[ "$bz" -le $M16 ] || no "--entry-size $z needs $bz: does not fit"
	[ "$bz1" -gt $M16 ] || no "--entry-size $((z + 1)) needs $bz1: fits too"
	[ "$(bytes_after "--entry-size $z:")" = "$bz" ] || no "--entry-size $z: not its $bz bytes"
fi
want_err "(--fit picks the most entries that fit)"
verdict "init refuses a shape larger than a 16 MiB file another program sized, naming need, room and what fits"

# senders a queue: K fit and K+1 do not (the issue's 64 boards x 1024
# queues x 16 entries of 64 B: no number of entries fits, nor any entry
# size; sender sets do).  Its scratch areas (64 x 68 KiB) would not fit
# beside any of them, and init says that leaving them out does not either
fresh
run -w "$W16" init -n 64 --queues 1024 -e 16 --entry-size 64
want_rc 1
want_err "--no-scratch (smqctl check skips its map and raw link tests) does not fit either: "
big="-n 64 --queues 1024 -e 16 --entry-size 64 --no-scratch"
run -w "$W16" init $big
want_rc 1
want_err "--entries 1 does not fit either: "
want_err "--entry-size 1 does not fit either: "
b1=$(need -n 64 --queues 1024 -e 1 --entry-size 64 --no-scratch)
[ "$(bytes_after "--entries 1 does not fit")" = "$b1" ] || no "--entries 1: not its $b1 bytes"
k=$(sed -n 's/.* \([0-9]*\) senders a queue (--senders.*/\1/p' "$T/err")
# sets of k boards for every queue, as a description
sets() {
	i=0; printf 'boards 64\nqueues 1024\nentries 16\nentry-size 64\n'
	while [ $i -lt 1024 ]; do
		j=0; list=""
		while [ $j -lt "$1" ]; do list="$list${list:+,}$(((i + j) % 64))"; j=$((j + 1)); done
		echo "senders $i:$list"; i=$((i + 1))
	done
	echo "scratch no"
}
if [ -z "$k" ]; then no "no 'K senders a queue' offered"; else
	sets "$k" >"$T/k.conf"; sets $((k + 1)) >"$T/k1.conf"
	bk=$(need --from "$T/k.conf"); bk1=$(need --from "$T/k1.conf")
	[ "$bk" -le $M16 ] || no "$k senders a queue need $bk: do not fit"
	[ "$bk1" -gt $M16 ] || no "$((k + 1)) senders a queue need $bk1: fit too"
	[ "$(bytes_after "$k senders a queue")" = "$bk" ] || no "$k senders: not their $bk bytes"
fi
zero "$T/f16" || no "the refused window was written"
verdict "init offers sender sets when no number or size of entries fits, each size checked"

# ---- --fit ----
fresh
run -w "$W16" init $shape --fit
want_rc 0
"$S" -w "$W16" --json dump >"$T/dump.json" 2>&1 || no "dump after --fit fails"
e=$(jnum entries "$T/dump.json")
be=$(need $shape -e "$e"); b2e=$(need $shape -e $((e * 2)))
[ "$be" -le $M16 ] || no "--fit chose $e entries: $be bytes do not fit"
[ "$b2e" -gt $M16 ] || no "--fit chose $e entries, but $((e * 2)) fit too ($b2e bytes)"
want_out "--fit: $e entries, the most that fit"
[ "$(wc -c <"$T/f16")" -eq $M16 ] || no "--fit grew the window"
verdict "init --fit on a 16 MiB window: the most entries that fit ($e)"

fresh
run -w "$W16" init $shape -e 64 --fit
want_rc 0
"$S" -w "$W16" --json dump >"$T/dump.json" 2>&1
[ "$(jnum entries "$T/dump.json")" = 64 ] || no "--fit -e 64 did not pick 64 entries, which fit"
verdict "init --fit --entries N: at most N"

fresh
run -w "$W16" init $big --fit
want_rc 1
want_err "not even 1 entry a ring fits"
want_err "($b1 bytes)"
want_err "holds 16.0 MiB ($M16 bytes)"
zero "$T/f16" || no "the refused window was written"
verdict "init --fit where not even 1 entry fits names the sizes"

run -w "file:$T/nofile" init --fit
want_rc 1
want_err "does not exist yet: it grows to what the layout needs"
[ -e "$T/nofile" ] && no "--fit created the window"
"$S" -w "file:$T/grows" init >/dev/null 2>&1
run -w "file:$T/grows" init --fit
want_rc 1
want_err "has no fixed size"
verdict "init --fit on a window that grows: a clear error"

# ---- --dry-run ----
fresh
run -w "$W16" init $shape --dry-run
want_rc 0
want_out "application queues (8)"
want_out "diagnostic queues (4)"
want_out "which init does not grow: the layout fits"
want_out "nothing was written"
zero "$T/f16" || no "the dry run wrote"
run -w "$W16" init $shape -e 1024 --dry-run
want_rc 1
want_out "the layout does not fit"
want_err "what fits in 16.0 MiB:"
run -w "$W16" --json init $shape --dry-run
[ "$(jnum fixed_size "$T/out")" = $M16 ] || no "--json fixed_size is not $M16"
grep -q '"fits": true' "$T/out" || no "--json fits is not true"
app=$(jnum application "$T/out"); diag=$(jnum diagnostic "$T/out")
parts=0
for key in superblock control tables application diagnostic features padding; do
	parts=$((parts + $(jnum "$key" "$T/out")))
done
[ "$parts" = "$(jnum window_size "$T/out")" ] || no "the parts add to $parts, not the total"
[ "$app" -gt 0 ] && [ "$diag" -gt 0 ] || no "no application ($app) or diagnostic ($diag) share"
run -w "file:$T/nofile" init --dry-run
want_out "does not exist yet: init creates it"
[ -e "$T/nofile" ] && no "--dry-run created the window"
run -w "file:$T/nofile" -v init --dry-run -n 3
want_out "region of board 2"
verdict "init --dry-run: the parts, the diagnostic share apart, the fit; nothing written"

# ---- --from ----
cat >"$T/d.conf" <<'EOF'
# a description
boards 3        # three boards
queues 4
entries 16
entry-size 4K
receiver 3:1
senders 2:0,1

checksum yes
EOF
rm -f "$T/w"
run -w "file:$T/w" --json init --from "$T/d.conf"
want_rc 0
"$S" -w "file:$T/w" --json dump >"$T/dump.json" 2>&1
for kv in boards:3 queues:4 entries:16 entry_size:4096; do
	[ "$(jnum "${kv%%:*}" "$T/dump.json")" = "${kv#*:}" ] ||
		no "dump's ${kv%%:*} is not ${kv#*:}"
done
grep -q '"checksum": true' "$T/out" || no "init --json does not say checksum true"
"$S" -w "file:$T/w" dump --queue 3 >"$T/q3" 2>&1
awk '$1 == 3 && $2 == 1 { found = 1 } END { exit !found }' "$T/q3" ||
	no "queue 3 is not received by board 1"
"$S" -w "file:$T/w" dump -v --queue 2 >"$T/q2" 2>&1
grep -q "boards 0 and 1" "$T/q2" || no "queue 2's senders are not boards 0 and 1"
verdict "init --from FILE: geometry, receivers, sender sets, checksum"

run -w "file:$T/w" --json init -n 2
grep -q '"checksum": false' "$T/out" || no "init --json without --checksum does not say checksum false"
run -w "file:$T/w" --json init -n 2 --checksum
grep -q '"checksum": true' "$T/out" || no "init --checksum --json does not say checksum true"
verdict "init --checksum: \"checksum\" in init's JSON"

bad() { # bad LINE-NO WORDS CONTENT
	printf '%b' "$3" >"$T/bad.conf"
	run -w "file:$T/w" init --from "$T/bad.conf"
	want_rc 1
	want_err "$T/bad.conf:$1: $2"
}
bad 2 "entries 100 is not a power of two" 'boards 2\nentries 100\n'
bad 3 "unknown key 'colour'" '# x\n\ncolour blue\n'
bad 2 "boards is given on line 1 already" 'boards 2\nboards 3\n'
bad 3 "receiver 9:1: queue 9 does not exist: 4 queues" 'boards 2\nqueues 4\nreceiver 9:1\n'
bad 1 "'--boards': write a key and its value apart" '--boards 4\n'
bad 2 "checksum takes yes or no" 'boards 2\nchecksum maybe\n'
bad 1 "boards takes one value" 'boards 2 3\n'
run -w "file:$T/w" init --from "$T/d.conf" --entries 8
want_rc 2
want_err "--entries beside --from"
printf 'boards 3\nqueues 5\n' | "$S" -w "file:$T/none" --json init --dry-run --from - \
	>"$T/out" 2>"$T/err"
[ "$(jnum queues "$T/out")" = 5 ] || no "--from - did not read standard input"
run -w "file:$T/w" init --from "$T/missing.conf"
want_rc 1
want_err "cannot read the description $T/missing.conf"
verdict "init --from: a bad line is named FILE:LINE; options beside it are a usage error"

# ---- probe and model name the window a shape needs ----
run probe --ntb --dump "$DUMP" $shape
want_rc 0
n4=$(need $shape)
want_out "smq: window for 4 boards x 8 queues x 64 entries x 1 KiB: "
want_out "($n4 bytes); BAR2's size is not known"
run --json probe --ntb --dump "$DUMP" --from "$T/d.conf"
[ "$(jnum window_size "$T/out")" = "$(need --from "$T/d.conf")" ] ||
	no "probe --json window_size is not the description's"
grep -q '"window_fits": null' "$T/out" || no "probe --json window_fits is not null from a dump"
run probe --ntb --dump "$DUMP"
grep -q "window for" "$T/out" && no "probe names a window without a shape"
verdict "probe --ntb: the window a shape needs beside each candidate's BAR"

fresh
run -w "$W16" model $shape -e 1024
want_rc 0
want_out "window for 4 boards x 8 queues x 1024 entries x 1 KiB: "
want_out "($total bytes); window $W16 holds 16.0 MiB: does not fit"
want_out "--entries $n:"
run -w "$W16" --json model $shape
[ "$(jnum shape_size "$T/out")" = "$n4" ] || no "model --json shape_size is not $n4"
[ "$(jnum room_size "$T/out")" = $M16 ] || no "model --json room_size is not $M16"
grep -q '"shape_fits": true' "$T/out" || no "model --json shape_fits is not true"
zero "$T/f16" || no "model wrote the window"
verdict "model: the window a shape needs, against a window of fixed size"

finish 12
