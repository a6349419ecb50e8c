#!/bin/sh
# The memory target of window format 3: 64 boards x 1,024 queues, each
# queue with 2 senders, 16 entries of 64 B (a description file made here).
# A lane in every queue for every board took 158 MiB; with sender sets the
# whole window must be at most a tenth of that (15.8 MiB) and the
# application queues' part at most a twentieth (7.9 MiB), as
# `init --dry-run` shows them, the diagnostic queues' share apart.  Then
# init and dump of it run, and their times are printed (never asserted:
# machines are shared).
# Exit 0 pass, 1 fail, 77 skip.
. "$(dirname "$0")/../lib/lib.sh"
need_smqctl
# the window in memory where there is some: a file there is one host's
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	W=/dev/shm/$SHM
else
	W=$T/w
fi
export SMQ_WINDOW="file:$W"
mib() { awk -v b="$1" 'BEGIN { printf "%.2f MiB", b / 1048576 }'; }

# queue q: received by board q mod 64, sent on by the next two boards
{
	echo "# the memory target: 64 boards x 1024 queues, 2 senders each"
	echo "boards 64"
	echo "queues 1024"
	echo "entries 16"
	echo "entry-size 64"
	# the target is the queues': the scratch areas of smqctl check (64
	# KiB and a page a board, 4.25 MiB here) are not part of it
	echo "scratch no"
	q=0
	while [ $q -lt 1024 ]; do
		echo "senders $q:$(((q + 1) % 64)),$(((q + 2) % 64))"
		q=$((q + 1))
	done
} >"$T/target.conf"

"$S" init --dry-run --from "$T/target.conf" >"$T/dry.txt" 2>&1 ||
	{ cat "$T/dry.txt"; die "init --dry-run --from the target's description"; }
"$S" --json init --dry-run --from "$T/target.conf" >"$T/dry.json" 2>&1 ||
	die "init --dry-run --json"
sed 's/^/  | /' "$T/dry.txt"
total=$(jnum window_size "$T/dry.json")
app=$(jnum application "$T/dry.json")
diag=$(jnum diagnostic "$T/dry.json")
# every board a lane in every queue, as before sender sets
"$S" --json init --dry-run -n 64 --queues 1024 -e 16 --entry-size 64 \
	--no-scratch >"$T/before.json" 2>&1 || no "init --dry-run without sender sets"
before=$(jnum window_size "$T/before.json")
# a tenth and a twentieth of 158 MiB, in bytes, rounded down
tenth=$((158 * 1048576 / 10))
twentieth=$((158 * 1048576 / 20))
echo "every board a lane in every queue: $(mib "$before") ($before bytes)"
echo "with 2 senders a queue: $(mib "$total") ($total bytes), at most $(mib $tenth)"
echo "  application queues: $(mib "$app") ($app bytes), at most $(mib $twentieth)"
echo "  diagnostic queues:  $(mib "$diag") ($diag bytes), apart"
[ -n "$total" ] && [ "$total" -le $tenth ] ||
	no "the window takes $total bytes, more than $tenth (1/10 of 158 MiB)"
[ -n "$app" ] && [ "$app" -le $twentieth ] ||
	no "the application queues take $app bytes, more than $twentieth (1/20 of 158 MiB)"
[ -n "$diag" ] && [ "$diag" -gt 0 ] || no "no diagnostic share in --dry-run --json"
grep -q "^  application queues (1024) " "$T/dry.txt" ||
	no "--dry-run does not show the application queues"
grep -q "^  diagnostic queues (64) " "$T/dry.txt" ||
	no "--dry-run does not show the diagnostic queues apart"
[ -e "$W" ] && no "--dry-run created the window"
verdict "init --dry-run of the target: at most a tenth of 158 MiB, its application queues a twentieth, the diagnostic queues apart; nothing created"

t0=$(now_ms)
"$S" init --from "$T/target.conf" >"$T/init.txt" 2>&1 ||
	{ cat "$T/init.txt"; no "init --from the target's description"; }
t1=$(now_ms)
"$S" dump >"$T/dump.txt" 2>&1 || { tail -n 5 "$T/dump.txt"; no "dump"; }
t2=$(now_ms)
"$S" --json dump -v >"$T/dump.json" 2>&1 || no "dump -v --json"
t3=$(now_ms)
size=$(wc -c <"$W")
[ "$size" -eq "$total" ] || no "the window is $size bytes, --dry-run said $total"
verdict "init --from the target: the window --dry-run said; dump and dump -v --json read it"
echo "init: $((t1 - t0)) ms; dump: $((t2 - t1)) ms; dump -v --json: $((t3 - t2)) ms" \
	"($(wc -c <"$T/dump.json") bytes of JSON)"
any_failed || echo "the memory target holds: $(mib "$total") for 64 x 1024 x 16 x 64 B with 2 senders a queue"
finish 2
