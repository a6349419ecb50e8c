#!/bin/sh
# smqctl's command table, its man page and its completions agree.
#  (a) every command of `smqctl --list-cmds` has a .SS under COMMANDS in
#      man/smqctl.1, and every .SS there is a command;
#  (b) every option of `smqctl --list-opts=CMD` is documented in CMD's .SS or
#      under COMMON OPTIONS, with the short form and argument that
#      `smqctl CMD --help` shows; every \-\-option a section mentions is one
#      that the command (or, under COMMON OPTIONS, every command) accepts;
#  (c) the bash completion offers exactly the commands and each command's
#      options, as the binary lists them;
#  (d) so does the zsh completion (skipped, with a note, without zsh).
# B is the build directory (default build, relative to the repository).
# CLI_DOCS_MAN, CLI_DOCS_BASH and CLI_DOCS_ZSH check other files instead of
# man/smqctl.1 and completions/ (to see that a broken copy is caught).
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
[ -x "$B/smqctl" ] || { echo "no $B/smqctl: build it first (make)"; exit 77; }
bin=$(cd "$B" && pwd)/smqctl
man=${CLI_DOCS_MAN:-man/smqctl.1}
bashcomp=${CLI_DOCS_BASH:-completions/smqctl.bash}
zshcomp=${CLI_DOCS_ZSH:-completions/_smqctl}
export LC_ALL=C

tmp=$(mktemp -d) || exit 1
shmobj=smq-t-cli-docs-$$
trap 'rm -rf "$tmp"; rm -f "/dev/shm/$shmobj"' EXIT
trap 'exit 1' HUP INT TERM
status=0
fail() { echo "FAIL: $*"; status=1; }

# same LABEL EXPECTED GOT: two lists of lines are equal.
same() {
	[ "$2" = "$3" ] && return 0
	fail "$1"
	echo "    expected: $(echo "$2" | tr '\n' ' ')"
	echo "    got:      $(echo "$3" | tr '\n' ' ')"
}
sorted() { printf '%s\n' "$1" | sort; }

for f in "$man" "$bashcomp" "$zshcomp"; do
	[ -r "$f" ] || { echo "FAIL: $f is missing"; exit 1; }
done

cmds=$("$bin" --list-cmds) && [ -n "$cmds" ] ||
	{ echo "FAIL: smqctl --list-cmds failed"; exit 1; }
# the commands with options of their own: all but help
optcmds=$(echo "$cmds" | grep -vx help)
for c in $optcmds; do
	"$bin" --list-opts="$c" >"$tmp/opts.$c" && [ -s "$tmp/opts.$c" ] ||
		fail "smqctl --list-opts=$c failed"
done
# the common options: those every command takes
common=$(cat "$tmp"/opts.* | sort | uniq -c |
	awk -v n="$(echo "$optcmds" | wc -l)" '$1 == n { print $2 }')
[ -n "$common" ] || fail "the commands share no option (--list-opts)"
builtin_opts="--help
--usage
--version"

# ---- the man page, cut into sections ----
# sec.COMMON: COMMON OPTIONS; sec.CMD: the .SS of CMD under COMMANDS;
# headings: the first word of every .SS under COMMANDS.
: >"$tmp/headings"
awk -v dir="$tmp" '
/^\.SH/ {
	h = $0; sub(/^\.SH[ \t]+/, "", h); gsub(/"/, "", h)
	out = h == "COMMON OPTIONS" ? dir "/sec.COMMON" : ""
	if (out != "") printf "" > out
	incmds = h == "COMMANDS"; if (incmds) seen = 1
	next
}
/^\.SS/ && incmds {
	h = $0; sub(/^\.SS[ \t]+/, "", h); gsub(/"/, "", h)
	gsub(/\\f[BIRP]/, "", h); gsub(/\\f\(../, "", h); gsub(/\\-/, "-", h)
	split(h, w, /[ \t]+/)
	print w[1] > (dir "/headings")
	name = w[1]; gsub(/[^A-Za-z0-9_-]/, "_", name)
	out = dir "/sec." name; printf "" > out
	next
}
out != "" { print > out }
END { if (!seen) print "no .SH COMMANDS" > (dir "/nocommands") }
' "$man"
[ -e "$tmp/nocommands" ] && fail "$man has no COMMANDS section"
[ -e "$tmp/sec.COMMON" ] || { fail "$man has no COMMON OPTIONS section"; : >"$tmp/sec.COMMON"; }

# Every long option a section mentions, as \-\-name in troff, one a line.
mentions() {
	awk '{
		line = $0
		while (match(line, /\\-\\-[A-Za-z0-9]+((\\-|-)[A-Za-z0-9]+)*/)) {
			tok = substr(line, RSTART, RLENGTH); gsub(/\\-/, "-", tok)
			print tok; line = substr(line, RSTART + RLENGTH)
		}
	}' "$1" | sort -u
}
# The option lines of a section (.B, .BR, .BI) as `smqctl CMD --help`
# writes them, without spaces: ".BR \-e ", " \-\-entries =\fIN\fR" is
# "-e,--entries=N".
optlines() {
	sed -n 's/^\.B[IR]\{0,1\}[ \t]//p' "$1" |
		sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/"//g' -e 's/[ \t]//g'
}
# The option specs of `smqctl CMD --help`, without spaces: "-e,--entries=N",
# "--usage".
helpspecs() {
	"$bin" "$1" --help | sed -n \
		-e 's/^  \(-[^- ], --[^ ]*\).*/\1/p' \
		-e 's/^  \(-[^- ]\)\( .*\)\{0,1\}$/\1/p' \
		-e 's/^      \(--[^ ]*\).*/\1/p' | sed 's/ //g'
}

# ---- (a) commands and .SS headings ----
for c in $cmds; do
	grep -qx -- "$c" "$tmp/headings" ||
		fail "(a) command '$c' has no .SS under COMMANDS in $man"
done
while read -r h; do
	echo "$cmds" | grep -qx -- "$h" ||
		fail "(a) .SS '$h' under COMMANDS in $man names no command"
done <"$tmp/headings"
dups=$(sort "$tmp/headings" | uniq -d)
[ -z "$dups" ] || fail "(a) more than one .SS for: $dups"

# ---- (b) options ----
# Options are written \-\- in troff: a plain "--" renders as dashes.
plain=$(grep -n -- '--' "$man" | grep -v '^[0-9]*:\.\\"')
[ -z "$plain" ] || fail "(b) write options as \\-\\- in $man:
$plain"

mentions "$tmp/sec.COMMON" >"$tmp/ment.COMMON"
optlines "$tmp/sec.COMMON" >"$tmp/lines.COMMON"
while read -r o; do
	printf '%s\n%s\n' "$common" "$builtin_opts" | grep -qx -- "$o" ||
		fail "(b) COMMON OPTIONS documents $o, which not every command takes"
done <"$tmp/ment.COMMON"

for c in $optcmds; do
	sec=$tmp/sec.$c
	[ -e "$sec" ] || continue   # reported by (a)
	mentions "$sec" >"$tmp/ment.$c"
	optlines "$sec" >"$tmp/lines.$c"
	while read -r o; do
		grep -qx -- "$o" "$tmp/ment.$c" "$tmp/ment.COMMON" ||
			fail "(b) $o of '$c' is documented neither under $c nor under COMMON OPTIONS"
	done <"$tmp/opts.$c"
	while read -r o; do
		{ cat "$tmp/opts.$c"; echo "$builtin_opts"; } | grep -qx -- "$o" ||
			fail "(b) the $c section mentions $o, which smqctl $c does not accept"
	done <"$tmp/ment.$c"
	# short form, long form and argument, as --help shows them
	helpspecs "$c" >"$tmp/specs.$c"
	[ -s "$tmp/specs.$c" ] || fail "(b) smqctl $c --help lists no options"
	while read -r s; do
		long=${s#*--}; long=--${long%%=*}
		if printf '%s\n%s\n' "$common" "$builtin_opts" | grep -qx -- "$long"; then
			where=COMMON
		else
			where=$c
		fi
		grep -qxF -- "$s" "$tmp/lines.$where" ||
			fail "(b) no line '$s' (as in smqctl $c --help) under $([ "$where" = COMMON ] && echo "COMMON OPTIONS" || echo "$c") in $man"
	done <"$tmp/specs.$c"
done

# ---- (c) bash ----
if command -v bash >/dev/null 2>&1; then
	# prints COMPREPLY, one a line, for the words given (the last is the
	# one completed), split as bash splits them
	cat >"$tmp/comp.bash" <<'EOF'
. "$1" || exit 1
shift
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
complete -p smqctl >/dev/null || { echo "no 'complete ... smqctl'"; exit 1; }
_smqctl "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
EOF
	bcomp() { bash "$tmp/comp.bash" "$bashcomp" "$bin" "$@" 2>&1; }
	same "(c) bash: smqctl <TAB> gives the commands" "$cmds" "$(bcomp '')"
	same "(c) bash: smqctl s<TAB>" "$(echo "$cmds" | grep '^s')" "$(bcomp s)"
	for c in $optcmds; do
		same "(c) bash: smqctl $c --<TAB> gives smqctl --list-opts=$c" \
			"$(cat "$tmp/opts.$c")" "$(bcomp "$c" --)"
	done
	same "(c) bash: smqctl -w W --board 1 dump --<TAB> gives the options of dump" \
		"$(cat "$tmp/opts.dump")" "$(bcomp -w W --board 1 dump --)"
	same "(c) bash: smqctl --<TAB> gives the common options, --help and --version" \
		"$(sorted "$(printf '%s\n--help\n--version' "$common")")" "$(sorted "$(bcomp --)")"
	same "(c) bash: smqctl help <TAB> gives the commands but help" \
		"$(echo "$cmds" | grep -vx help)" "$(bcomp help '')"
	got=$(bcomp --window '')
	for w in help $("$bin" --window help | sed -n 's/^  *\([a-z][a-z0-9]*:\).*/\1/p'); do
		echo "$got" | grep -qx -- "$w" ||
			fail "(c) bash: smqctl --window <TAB> does not offer $w"
	done
	if [ -d /dev/shm ] && [ -w /dev/shm ] && : >"/dev/shm/$shmobj"; then
		# bash splits "shm:NAME" at the colon and replaces after it
		same "(c) bash: smqctl --window shm:smq-t-cli-docs<TAB>" "$shmobj" \
			"$(bcomp --window shm : "${shmobj%-*}")"
		same "(c) bash: smqctl --window=shm:smq-t-cli-docs<TAB>" "$shmobj" \
			"$(bcomp --window = shm : "${shmobj%-*}")"
	fi
else
	fail "(c) bash is not installed"
fi

# ---- (d) zsh ----
if command -v zsh >/dev/null 2>&1; then
	# loads the completion as compinit would (autoload from fpath) with
	# stubs that print the candidates, one a line
	mkdir "$tmp/fpath" && cp "$zshcomp" "$tmp/fpath/_smqctl"
	cat >"$tmp/comp.zsh" <<'EOF'
fpath=("$1" $fpath)
shift
autoload -Uz _smqctl
compadd() {
  while (( $# )); do
    [[ $1 == -- ]] && { shift; print -rl -- "$@"; return 0 }
    shift
  done
}
_describe() {
  local __a
  shift
  for __a; do
    [[ $__a == -* ]] && continue
    (( ${(P)+__a} )) && print -rl -- "${(@)${(@P)__a}%%:*}"
  done
}
_arguments() { print -r -- "_arguments $*" }
_files() { print -r -- "_files" }
_message() { : }
compset() { return 1 }
words=("$@")
CURRENT=$#
_smqctl
EOF
	zcomp() { zsh -f "$tmp/comp.zsh" "$tmp/fpath" "$bin" "$@" 2>&1; }
	same "(d) zsh: smqctl <TAB> gives the commands" "$(sorted "$cmds")" "$(sorted "$(zcomp '')")"
	for c in init dump; do
		same "(d) zsh: smqctl $c --<TAB> gives smqctl --list-opts=$c" \
			"$(sort "$tmp/opts.$c")" "$(sorted "$(zcomp "$c" --)")"
	done
	same "(d) zsh: smqctl --<TAB> gives the common options, --help and --version" \
		"$(sorted "$(printf '%s\n--help\n--version' "$common")")" "$(sorted "$(zcomp --)")"
else
	echo "note: zsh is not installed: the zsh completion is not checked"
fi

[ $status = 0 ] && echo "commands, man page and completions agree"
exit $status
