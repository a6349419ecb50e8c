# tests/build/mirror.sh: sourced by debroot.sh, for the scripts that make
# a fresh Debian root (package.sh, fresh.sh).  find_mirror prints the
# mirror this machine's apt uses for $suite: a one-line source ("deb
# [options] URI bookworm ...") or a deb822 stanza (Types: deb, Suites:
# bookworm ...); every one found, the first first.
find_mirror() {
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v suite="$suite" '$1 == "deb" {
			i = 2
			if ($i ~ /^\[/) while (i <= NF && $i !~ /\]$/) i++
			if ($i ~ /^\[/ || $i ~ /\]$/) i++
			if ($(i + 1) == suite) print $i }' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v suite="$suite" '
		function flush() { if (deb && match_suite && uri != "") print uri; deb = match_suite = 0; uri = "" }
		/^[ \t]*$/ { flush(); next }
		/^#/ { next }
		tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
		tolower($1) == "uris:" { uri = $2 }
		tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == suite) match_suite = 1 }
		END { flush() }' "$f"
	done
}
