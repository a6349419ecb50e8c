#!/bin/sh
# Every man page renders without a groff warning.
cd "$(dirname "$0")/.." || exit 1
command -v groff >/dev/null || { echo "groff not installed"; exit 77; }
status=0
for page in man/*.[0-9]; do
	out=$(groff -man -ww -z "$page" 2>&1)
	[ -z "$out" ] || { echo "$page:"; echo "$out"; status=1; }
done
exit $status
