#!/bin/sh
# under-load.sh N PROGRAM [ARG...]: PROGRAM N times in a row while two CPU
# hogs run (a loaded machine is where a race that a timer once hid shows);
# stops at the first failure.  Exit 0 when every run passed.
[ $# -ge 2 ] || { echo "usage: $0 N PROGRAM [ARG...]" >&2; exit 2; }
n=$1
shift
hogs=""
for i in 1 2; do
	sh -c 'while :; do :; done' &
	hogs="$hogs $!"
done
trap 'kill $hogs 2>/dev/null' EXIT INT TERM
i=0
start=$(date +%s)
while [ $i -lt "$n" ]; do
	i=$((i + 1))
	if ! "$@" >/tmp/under-load.$$ 2>&1; then
		cat /tmp/under-load.$$
		rm -f /tmp/under-load.$$
		echo "$*: run $i of $n failed with two CPU hogs running"
		exit 1
	fi
	tail -n 1 /tmp/under-load.$$
done
rm -f /tmp/under-load.$$
echo "$*: $n runs in a row passed with two CPU hogs running ($(($(date +%s) - start)) s)"
