#!/bin/sh
# smqctl's command table, its man pages and its completions agree.
#  (a) every command of `smqctl --list-cmds` has a page of its own,
#      man/smqctl-CMD.1, and every man/smqctl-*.1 is a command's; the
#      COMMANDS of man/smqctl.1 list each page with the line `smqctl help`
#      gives the command, in its order, and each page's NAME says that line;
#      `smqctl help CMD` prints what `smqctl CMD --help` prints, and ends
#      with "See smqctl-CMD(1)."; `smqctl help` and `smqctl --help` end
#      with "See smqctl(1).";
#  (b) every option of `smqctl --list-opts=CMD` is documented in CMD's page
#      or under COMMON OPTIONS of man/smqctl.1, with the short form and
#      argument that `smqctl CMD --help` shows; the OPTIONS of CMD's page
#      are exactly the options of `smqctl help CMD` that are not common;
#      every \-\-option a page mentions is one that the command (or, under
#      COMMON OPTIONS, every command) accepts;
#  (c) the bash completion offers exactly the commands and each command's
#      options, as the binary lists them;
#  (d) so does the zsh completion (skipped, with a note, without zsh);
#  both complete option values as `smqctl --list-args` says: the words of
#      --wait (each one the binary accepts), files after every option that
#      takes a file or a path, and after --window the transports and only
#      the smq windows of /dev/shm, files after file: and ivshmem:, and
#      the devices of `smqctl --list-devices` after pci:;
#  (e) no short option means two things: across every command (and the
#      common options) a letter is one long option with one argument, and
#      the table under SHORT OPTIONS in man/smqctl.1 is exactly that;
#  (f) `smqctl help help` works; `smqctl help`, every `smqctl help CMD` and
#      the pages never say "seed"; every window spec of `smqctl --window
#      help` is in `smqctl --help` and under WINDOW SPECS; every variable
#      the systemd units read is documented in man/smqctl.1;
#  (g) no long option means two things: a long option that several
#      commands take has the same short letter (or none) and the same
#      argument in every `smqctl CMD --help`, and --timeout is -T, TIME;
#      exceptions are listed, with their forms, where the meaning is one.
# B is the build directory (default build, relative to the repository).
# CLI_DOCS_MAN, CLI_DOCS_BASH and CLI_DOCS_ZSH check other files instead of
# man/smqctl.1 (and the command pages beside it) and completions/ (to see
# that a broken copy is caught).
. "$(dirname "$0")/../lib/lib.sh"
[ -x "$B/smqctl" ] || skip "no $B/smqctl: build it first (make)"
need_smqctl
# the completions run it as it is, no wrapper
bin=$SMQCTL
man=${CLI_DOCS_MAN:-man/smqctl.1}
mandir=$(dirname "$man")
bashcomp=${CLI_DOCS_BASH:-completions/smqctl.bash}
zshcomp=${CLI_DOCS_ZSH:-completions/_smqctl}
tmp=$T
shmobj=$SHM-w
splitobj=$SHM-split
fail() { failed "$*"; }

# same LABEL EXPECTED GOT: two lists of lines are equal: ok LABEL.
same() {
	[ "$2" = "$3" ] && { ok "$1"; return 0; }
	fail "$1"
	echo "    expected: $(echo "$2" | tr '\n' ' ')"
	echo "    got:      $(echo "$3" | tr '\n' ' ')"
}
sorted() { printf '%s\n' "$1" | sort; }

for f in "$man" "$bashcomp" "$zshcomp"; do
	[ -r "$f" ] || die "$f is missing"
done

cmds=$("$bin" --list-cmds) && [ -n "$cmds" ] ||
	die "smqctl --list-cmds failed"
# the commands with options of their own: all but help
optcmds=$(echo "$cmds" | grep -vx help)
case_begin
for c in $optcmds; do
	"$bin" --list-opts="$c" >"$tmp/opts.$c" && [ -s "$tmp/opts.$c" ] ||
		fail "smqctl --list-opts=$c failed"
done
# the common options: those every command takes
common=$(cat "$tmp"/opts.* | sort | uniq -c |
	awk -v n="$(echo "$optcmds" | wc -l)" '$1 == n { print $2 }')
[ -n "$common" ] || fail "the commands share no option (--list-opts)"
case_end "smqctl --list-opts lists each command's options, and the options they share"
builtin_opts="--help
--usage
--version"

# ---- the man pages ----
# sec.COMMON: COMMON OPTIONS of man/smqctl.1; sec.CMD: the page of CMD,
# smqctl-CMD.1; pages: the commands that have a page.
awk -v dir="$tmp" '
/^\.SH/ {
	h = $0; sub(/^\.SH[ \t]+/, "", h); gsub(/"/, "", h)
	out = h == "COMMON OPTIONS" ? dir "/sec.COMMON" : ""
	if (out != "") printf "" > out
	next
}
out != "" { print > out }
' "$man"
[ -e "$tmp/sec.COMMON" ] || { fail "$man has no COMMON OPTIONS section"; : >"$tmp/sec.COMMON"; }
for p in "$mandir"/smqctl-*.1; do
	[ -e "$p" ] || continue
	c=${p##*/smqctl-}; c=${c%.1}
	echo "$c" >>"$tmp/pages"
	cp "$p" "$tmp/sec.$c"
done
touch "$tmp/pages"
# The lines of the section SECTION of a page, without its heading.
section() {
	awk -v want="$2" '/^\.SH/ { h = $0; sub(/^\.SH[ \t]+/, "", h)
		gsub(/"/, "", h); on = h == want; next } on' "$1"
}
# The summary line of each command, "CMD LINE", as `smqctl help` lists them
"$bin" help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ {
	c = $1; sub(/^  [a-z]+ +/, ""); print c, $0; next } on { exit }' >"$tmp/summaries"

# Every long option a section mentions, as \-\-name in troff, one a line;
# one written after another command's name ("init \-\-journal 0" under
# events) is that command's, not the section's.
mentions() {
	awk -v own="${2:-}" -v cmds="$(echo $cmds)" '{
		line = $0
		while (match(line, /\\-\\-[A-Za-z0-9]+((\\-|-)[A-Za-z0-9]+)*/)) {
			tok = substr(line, RSTART, RLENGTH); gsub(/\\-/, "-", tok)
			pre = substr(line, 1, RSTART - 1)
			line = substr(line, RSTART + RLENGTH)
			n = split(pre, w, /[ "(]+/)
			other = 0
			if (n >= 2 && w[n] == "") {
				m = split(cmds, c, " ")
				for (i = 1; i <= m; i++)
					if (c[i] == w[n - 1] && c[i] != own)
						other = 1
			}
			if (!other)
				print tok
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

# ---- (a) commands and their pages ----
case_begin
for c in $cmds; do
	grep -qx -- "$c" "$tmp/pages" ||
		fail "(a) command '$c' has no page $mandir/smqctl-$c.1"
done
while read -r c; do
	echo "$cmds" | grep -qx -- "$c" ||
		fail "(a) $mandir/smqctl-$c.1 is the page of no command"
done <"$tmp/pages"
case_end "(a) every command has a page smqctl-CMD.1, and every such page is a command's"
same "(a) smqctl help lists every command with a line" \
	"$cmds" "$(awk '{ print $1 }' "$tmp/summaries")"
# the COMMANDS of the overview: ".BR smqctl\-CMD (1)", then the line
same "(a) COMMANDS of $man: each command's page with the line of smqctl help, in order" \
	"$(cat "$tmp/summaries")" \
	"$(section "$man" COMMANDS | awk '/^\.TP/ { t = 1; next }
		t == 1 { c = $0; sub(/^\.BR smqctl\\-/, "", c); sub(/ \(1\).*/, "", c)
			t = 2; next }
		t == 2 { print c, $0; t = 0 }' | sed 's/\\-/-/g')"
case_begin
while read -r c line; do
	[ -e "$tmp/sec.$c" ] || continue   # reported above
	name=$(section "$tmp/sec.$c" NAME | sed 's/\\-/-/g')
	[ "$name" = "smqctl-$c - $line" ] ||
		fail "(a) the NAME of smqctl-$c.1 is '$name', not 'smqctl-$c - $line' (smqctl help)"
	"$bin" help "$c" >"$tmp/help.$c" 2>&1
	"$bin" "$c" --help >"$tmp/dashhelp.$c" 2>&1
	cmp -s "$tmp/help.$c" "$tmp/dashhelp.$c" ||
		fail "(a) smqctl help $c and smqctl $c --help differ"
	last=$(tail -n 1 "$tmp/help.$c")
	[ "$last" = "See smqctl-$c(1)." ] ||
		fail "(a) smqctl help $c ends with '$last', not 'See smqctl-$c(1).' (its page)"
	section "$tmp/sec.$c" "SEE ALSO" | grep -q '^\.BR smqctl (1)' ||
		fail "(a) the SEE ALSO of smqctl-$c.1 does not name smqctl(1)"
	section "$man" "SEE ALSO" | grep -q "^\.BR smqctl\\\\-$c (1)" ||
		fail "(a) the SEE ALSO of $man does not name smqctl-$c(1)"
done <"$tmp/summaries"
case_end "(a) each page's NAME is its command's line in smqctl help, smqctl help CMD is smqctl CMD --help and ends naming smqctl-CMD(1), and the SEE ALSOs name each other"
case_begin
for h in help --help; do
	last=$("$bin" $h | tail -n 1)
	[ "$last" = "See smqctl(1)." ] ||
		fail "(a) smqctl $h ends with '$last', not 'See smqctl(1).'"
done
case_end "(a) smqctl help and smqctl --help end naming smqctl(1)"

# ---- (b) options ----
# Options are written \-\- in troff: a plain "--" renders as dashes.
case_begin
plain=$(grep -n -- '--' "$man" "$mandir"/smqctl-*.1 | grep -v '^[^:]*:[0-9]*:\.\\"')
[ -z "$plain" ] || fail "(b) write options as \\-\\- in the pages:
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
	mentions "$sec" "$c" >"$tmp/ment.$c"
	optlines "$sec" >"$tmp/lines.$c"
	while read -r o; do
		grep -qx -- "$o" "$tmp/ment.$c" "$tmp/ment.COMMON" ||
			fail "(b) $o of '$c' is documented neither in smqctl-$c.1 nor under COMMON OPTIONS"
	done <"$tmp/opts.$c"
	while read -r o; do
		{ cat "$tmp/opts.$c"; echo "$builtin_opts"; } | grep -qx -- "$o" ||
			fail "(b) smqctl-$c.1 mentions $o, which smqctl $c does not accept"
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
			fail "(b) no line '$s' (as in smqctl $c --help) $([ "$where" = COMMON ] && echo "under COMMON OPTIONS in $man" || echo "in smqctl-$c.1")"
	done <"$tmp/specs.$c"
	# the OPTIONS of the page: each tag a spec of --help that is not
	# common, and each such spec a tag
	section "$sec" OPTIONS | awk '/^\.TP/ { t = 1; next } t { print; t = 0 }' |
		sed -n 's/^\.B[IR]\{0,1\}[ \t]//p' |
		sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/"//g' -e 's/[ \t]//g' |
		sort >"$tmp/tags.$c"
	while read -r s; do
		long=${s#*--}; long=--${long%%=*}
		printf '%s\n%s\n' "$common" "$builtin_opts" | grep -qx -- "$long" || echo "$s"
	done <"$tmp/specs.$c" | sort >"$tmp/own.$c"
	[ -s "$tmp/own.$c" ] && [ ! -s "$tmp/tags.$c" ] &&
		fail "(b) smqctl-$c.1 has no OPTIONS section, or no option in it"
	extra=$(comm -23 "$tmp/tags.$c" "$tmp/own.$c")
	[ -z "$extra" ] || fail "(b) the OPTIONS of smqctl-$c.1 list what smqctl help $c does not: $(echo $extra)"
done
case_end "(b) every option of every command is documented in its page or under COMMON OPTIONS, as --help writes it; a page's OPTIONS are its command's; every option mentioned is one the command takes"

# ---- what the completions are checked against ----
prefixes=$("$bin" --window help | sed -n 's/^  *\([a-z][a-z0-9]*:\).*/\1/p')
mkdir "$tmp/f" && : >"$tmp/f/file-a"
# smq windows in /dev/shm (the magic of smq(7) first), and an object that
# is none
shm_ok=0
if [ -d /dev/shm ] && [ -w /dev/shm ] &&
	printf 'SMQWINDW%056d' 0 >"/dev/shm/$shmobj" &&
	printf 'NOTSMQ!!%056d' 0 >"/dev/shm/${shmobj}x" &&
	printf 'SMQWINDW%056d' 0 >"/dev/shm/$splitobj.0"; then
	shm_ok=1
fi
# the PCI devices of a recorded dump: smqctl answers --list-devices from it
dump=tests/data/pci-dumps/ivshmem.txt
devices=$("$bin" --list-devices="$dump")
same "(c) smqctl --list-devices=$dump: the two ivshmem BARs" \
	"pci:0000:00:03.0/2
pci:0000:00:04.0/2" "$devices"
devices_bdf=$(echo "$devices" | sed 's/^pci://')
printf '#!/bin/sh\n[ "$1" = --list-devices ] && exec "%s" --list-devices="%s"\nexec "%s" "$@"\n' \
	"$bin" "$PWD/$dump" "$bin" >"$tmp/smqctl-dump" && chmod 755 "$tmp/smqctl-dump"
# options whose value is a file, and the words of --wait
case_begin
: >"$tmp/fileopts"
for c in $optcmds; do
	"$bin" --list-args="$c" >"$tmp/args.$c" ||
		fail "smqctl --list-args=$c failed"
	awk -v c="$c" '$4 == "file" { print c, $2; if ($1 != "-") print c, $1 }' \
		"$tmp/args.$c" >>"$tmp/fileopts"
done
"$bin" --list-args=help >"$tmp/args.help" || fail "smqctl --list-args=help failed"
for o in --file --dump --socket; do
	grep -q " $o\$" "$tmp/fileopts" || fail "(c) no command's $o completes files (--list-args)"
done
waits=$(awk '$2 == "--wait" && $4 == "words" { for (i = 5; i <= NF; i++) print $i; exit }' \
	"$tmp/args.pingpong")
same "(c) smqctl --list-args: the words of --wait" "poll
sleep
spin" "$waits"
for m in $waits; do
	for c in pingpong bench; do
		"$bin" "$c" --wait "$m" --help >/dev/null 2>&1 ||
			fail "(c) smqctl $c --wait $m, offered by the completions, is refused"
	done
done
"$bin" pingpong --wait nosuch --help >/dev/null 2>&1 &&
	fail "(c) smqctl pingpong --wait nosuch is accepted: the check above proves nothing"
case_end "(c) smqctl --list-args: the options that take files, and the words of --wait, each one pingpong and bench accept"

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
	bcompw() { bash "$tmp/comp.bash" "$bashcomp" "$tmp/smqctl-dump" "$@" 2>&1; }
	same "(c) bash: smqctl <TAB> gives the commands" "$cmds" "$(bcomp '')"
	same "(c) bash: smqctl s<TAB>" "$(echo "$cmds" | grep '^s')" "$(bcomp s)"
	for c in $optcmds; do
		same "(c) bash: smqctl $c --<TAB> gives smqctl --list-opts=$c" \
			"$(cat "$tmp/opts.$c")" "$(bcomp "$c" --)"
	done
	same "(c) bash: smqctl -w W --board 1 dump --<TAB> gives the options of dump" \
		"$(cat "$tmp/opts.dump")" "$(bcomp -w W --board 1 dump --)"
	same "(c) bash: smqctl --<TAB> gives the common options (--help and --usage among them) and --version" \
		"$(sorted "$(printf '%s\n--version' "$common")")" "$(sorted "$(bcomp --)")"
	same "(c) bash: smqctl help <TAB> gives the commands, help too" \
		"$cmds" "$(bcomp help '')"
	got=$(bcomp --window '')
	case_begin
	for w in help $prefixes; do
		echo "$got" | grep -qx -- "$w" ||
			fail "(c) bash: smqctl --window <TAB> does not offer $w"
	done
	case_end "(c) bash: smqctl --window <TAB> offers help and every transport"
	if [ "$shm_ok" = 1 ]; then
		# bash splits "shm:NAME" at the colon and replaces after it
		same "(c) bash: smqctl --window shm:$shmobj<TAB> (an smq window; ${shmobj}x is none)" \
			"$shmobj" "$(bcomp --window shm : "$shmobj")"
		same "(c) bash: smqctl --window=shm:$shmobj<TAB>" "$shmobj" \
			"$(bcomp --window = shm : "$shmobj")"
		same "(c) bash: smqctl -w split:${splitobj%-*}<TAB>" "$splitobj" \
			"$(bcomp -w split : "${splitobj%-*}")"
		echo "$got" | grep -qx -- "shm:${shmobj}x" &&
			fail "(c) bash: smqctl --window <TAB> offers shm:${shmobj}x, which is no smq window" ||
			ok "(c) bash: smqctl --window <TAB> does not offer shm:${shmobj}x, which is no smq window"
	fi
	same "(c) bash: smqctl --window pci:<TAB> gives the candidates of --list-devices" \
		"$devices_bdf" "$(bcompw --window pci : '')"
	same "(c) bash: smqctl --window pci:0000:00:0<TAB>" \
		"$(echo "$devices_bdf" | sed 's/^0000:00://')" \
		"$(bcompw --window pci : 0000 : 00 : 0)"
	for c in pingpong bench; do
		same "(c) bash: smqctl $c --wait <TAB>" "$waits" "$(bcomp "$c" --wait '')"
		same "(c) bash: smqctl $c --wait=s<TAB>" "$(echo "$waits" | grep '^s')" \
			"$(bcomp "$c" --wait = s)"
	done
	same "(c) bash: smqctl init --mode <TAB> (octal) offers nothing" "" "$(bcomp init --mode '')"
	# every option that takes a file or a path, by --list-args
	while read -r c o; do
		same "(c) bash: smqctl $c $o $tmp/f/fi<TAB>" "$tmp/f/file-a" "$(bcomp "$c" "$o" "$tmp/f/fi")"
	done <"$tmp/fileopts"
	same "(c) bash: smqctl --window file:$tmp/f/fi<TAB>" "$tmp/f/file-a" \
		"$(bcomp --window file : "$tmp/f/fi")"
	same "(c) bash: smqctl --window ivshmem:$tmp/f/fi<TAB>" "$tmp/f/file-a" \
		"$(bcomp --window ivshmem : "$tmp/f/fi")"
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
# compset -P PATTERN: moves the longest match at the start of PREFIX to
# IPREFIX, as zsh does
compset() {
  [[ $1 == -P ]] || return 1
  local m=${(M)PREFIX##${~2}}
  [[ -n $m ]] || return 1
  IPREFIX+=$m
  PREFIX=${PREFIX#$m}
}
words=("$@")
CURRENT=$#
PREFIX=$words[CURRENT]
IPREFIX=
_smqctl
EOF
	zcomp() { zsh -f "$tmp/comp.zsh" "$tmp/fpath" "$bin" "$@" 2>&1; }
	zcompw() { zsh -f "$tmp/comp.zsh" "$tmp/fpath" "$tmp/smqctl-dump" "$@" 2>&1; }
	same "(d) zsh: smqctl <TAB> gives the commands" "$(sorted "$cmds")" "$(sorted "$(zcomp '')")"
	for c in init dump; do
		same "(d) zsh: smqctl $c --<TAB> gives smqctl --list-opts=$c" \
			"$(sort "$tmp/opts.$c")" "$(sorted "$(zcomp "$c" --)")"
	done
	same "(d) zsh: smqctl --<TAB> gives the common options (--help and --usage among them) and --version" \
		"$(sorted "$(printf '%s\n--version' "$common")")" "$(sorted "$(zcomp --)")"
	same "(d) zsh: smqctl help <TAB> gives the commands, help too" \
		"$(sorted "$cmds")" "$(sorted "$(zcomp help '')")"
	got=$(zcomp --window '')
	case_begin
	for w in help $prefixes; do
		echo "$got" | grep -qx -- "$w" ||
			fail "(d) zsh: smqctl --window <TAB> does not offer $w"
	done
	case_end "(d) zsh: smqctl --window <TAB> offers help and every transport"
	if [ "$shm_ok" = 1 ]; then
		case_begin
		echo "$got" | grep -qx -- "shm:$shmobj" ||
			fail "(d) zsh: smqctl --window <TAB> does not offer the smq window shm:$shmobj"
		echo "$got" | grep -qx -- "split:$splitobj" ||
			fail "(d) zsh: smqctl --window <TAB> does not offer split:$splitobj"
		echo "$got" | grep -qx -- "shm:${shmobj}x" &&
			fail "(d) zsh: smqctl --window <TAB> offers shm:${shmobj}x, which is no smq window"
		case_end "(d) zsh: smqctl --window <TAB> offers the smq windows shm:$shmobj and split:$splitobj, not shm:${shmobj}x"
	fi
	same "(d) zsh: smqctl --window pci:<TAB> gives the candidates of --list-devices" \
		"$devices_bdf" "$(zcompw --window pci:)"
	same "(d) zsh: smqctl pingpong --wait <TAB>" "$waits" "$(zcomp pingpong --wait '')"
	same "(d) zsh: smqctl bench --wait=<TAB>" "$waits" "$(zcomp bench --wait=)"
	while read -r c o; do
		same "(d) zsh: smqctl $c $o <TAB> completes files" "_files" "$(zcomp "$c" "$o" '')"
	done <"$tmp/fileopts"
	for p in file: ivshmem:; do
		same "(d) zsh: smqctl --window $p<TAB> completes files" "_files" "$(zcomp --window "$p")"
	done
else
	note "zsh is not installed: the zsh completion is not checked"
fi

# ---- (e) short options ----
case_begin
# every letter of every command (and of the common options): one long
# option, with an argument everywhere or nowhere (that the argument has
# one name everywhere too is (g)'s)
for c in help $optcmds; do
	awk -v c="$c" '$1 != "-" { print $1, $2, ($3 == "-" ? "NOARG" : "ARG"), c }' \
		"$tmp/args.$c"
done | sort >"$tmp/shorts"
awk '{ k = $1; v = $2 " " $3; if (k in seen && seen[k] != v)
	printf "%s means %s in %s and %s in %s\n", k, seen[k], where[k], v, $4
	else if (!(k in seen)) { seen[k] = v; where[k] = $4 } }' "$tmp/shorts" >"$tmp/clash"
[ -s "$tmp/clash" ] && fail "(e) a short option means two things:
$(cat "$tmp/clash")"
# the letter, the long option and the commands that take it ("all": every
# command and smqctl itself), as smqctl says, against the man page's table
ncmds=$(echo help $optcmds | wc -w)
awk -v n="$ncmds" '{ key = $1 " " $2; if (!(key in cnt)) order[++nk] = key
		cnt[key]++; if ($4 != "help") cmds[key] = cmds[key] " " $4 }
	END { for (i = 1; i <= nk; i++) { k = order[i]
		print k (cnt[k] == n ? " all" : cmds[k]) } }' "$tmp/shorts" |
	sort >"$tmp/shorts.bin"
awk '/^\.\\" short-options/ { on = 1; next } on && /^\.EE/ { exit }
	on && !/^\./ { gsub(/\\-/, "-"); l = $1 " " $2
		for (i = 4; i <= NF; i++) l = l " " $i; print l }' "$man" |
	sort >"$tmp/shorts.man"
[ -s "$tmp/shorts.man" ] || fail "(e) $man has no short-options table"
case_end "(e) a short letter is one long option with one argument in every command, and $man has a short-options table"
# the commands of a row as a sorted set
norm() {
	while read -r l o rest; do
		echo "$l $o $(printf '%s\n' $rest | sort | tr '\n' ' ')"
	done
}
same "(e) the SHORT OPTIONS table of $man is smqctl's (letter, option, commands)" \
	"$(norm <"$tmp/shorts.bin")" "$(norm <"$tmp/shorts.man")"

# ---- (f) help, words, window specs, the units' variables ----
case_begin
"$bin" help help >"$tmp/helphelp" 2>&1 && grep -q 'smqctl help' "$tmp/helphelp" ||
	fail "(f) smqctl help help fails: $(head -n 1 "$tmp/helphelp")"
{ "$bin" help; "$bin" --help; for c in $cmds; do "$bin" help "$c"; done; } >"$tmp/allhelp" 2>&1
for f in "$tmp/allhelp" "$man" "$mandir"/smqctl-*.1; do
	seeds=$(grep -in 'seed' "$f")
	[ -z "$seeds" ] || fail "(f) $([ "$f" = "$tmp/allhelp" ] && echo "smqctl help" || echo "$f") says \"seed\":
$seeds"
done
"$bin" --help >"$tmp/tophelp"
for p in $prefixes; do
	grep -q -- "$p" "$tmp/tophelp" || fail "(f) smqctl --help does not name the window spec $p"
	awk '/^\.SH/ { on = $2 == "WINDOW" } on' "$man" | sed 's/\\f[BIRP]//g' |
		grep -q "^\.B[IR]* *$p" || fail "(f) WINDOW SPECS in $man does not describe $p"
done
for v in $(sed -n 's/.*\$\({\{0,1\}\)\(SMQ_[A-Z_]*\).*/\2/p' systemd/*.service | sort -u); do
	grep -q "$v" "$man" || fail "(f) $v, which the systemd units read, is not in $man"
done
case_end "(f) smqctl help help works; no 'seed' in the help or the pages; every window spec in smqctl --help and under WINDOW SPECS; every variable of the units in $man"

# ---- (g) one meaning per long option ----
# A long option that several commands take is written the same in every
# `smqctl CMD --help`: the same short letter (or none anywhere) and the
# same argument; --timeout is -T, --timeout=TIME wherever it is.  The
# converse of (e).  An exception is listed here with every form it takes,
# and only where the meaning is one; a form that no command shows any more
# fails too.
#   --group: in a window's shape (init, probe, model) a group and its
#   queues; in send and recv a group that init made.
case_begin
cat >"$tmp/opt.exceptions" <<'EXCEPTIONS'
--group - NAME=Q,Q...
--group - NAME
EXCEPTIONS
# OPTION SHORT ARG CMD, a line for each option of each command
for c in $optcmds; do
	helpspecs "$c" | awk -v c="$c" '{
		s = $0; short = "-"; arg = "-"
		if (s ~ /^-[^-],/) { short = substr(s, 1, 2); s = substr(s, 4) }
		if (match(s, /\[?=/)) {
			arg = substr(s, RSTART); sub(/^=/, "", arg)
			s = substr(s, 1, RSTART - 1)
		}
		print s, short, arg, c
	}'
done | sort -k1,1 -k4,4 >"$tmp/longs"
grep -qx -- '--timeout -T TIME sync' "$tmp/longs" ||
	fail "(g) no '-T, --timeout=TIME' read from smqctl sync --help: the checks below prove nothing"
# "OPTION SHORT ARG | CMD...", a line for each form of each option (an
# argument may hold a colon, never " |")
awk '{ k = $1 " " $2 " " $3; if (!(k in cmds)) order[++n] = k
	cmds[k] = cmds[k] " " $4 }
	END { for (i = 1; i <= n; i++) print order[i] " |" cmds[order[i]] }' \
	"$tmp/longs" >"$tmp/forms"
for o in $(awk '{ print $1 }' "$tmp/longs" | sort -u); do
	forms=$(grep -- "^$o " "$tmp/forms")
	allowed=$(grep -- "^$o " "$tmp/opt.exceptions")
	if [ -n "$allowed" ]; then
		same "(g) $o is written in exactly the forms of its exception" \
			"$(sorted "$allowed")" "$(sorted "$(echo "$forms" | sed 's/ |.*//')")"
	elif [ "$(echo "$forms" | wc -l)" -gt 1 ]; then
		fail "(g) $o is written differently across commands (option, short letter, argument | commands):
$(echo "$forms" | sed 's/^/    /')"
	fi
done
bad=$(awk '$1 == "--timeout" && ($2 != "-T" || $3 != "TIME") { print $4 }' "$tmp/longs")
[ -z "$bad" ] || fail "(g) --timeout is not -T, --timeout=TIME in: $(echo $bad)"
case_end "(g) a long option that several commands take is written alike in each (the exceptions aside), and --timeout is -T, --timeout=TIME"

any_failed || echo "commands, man page and completions agree"
# The checks made: 30, one a command of its own options and one an option
# that takes a file (bash); again for zsh, 11 and one a file option; the
# windows in /dev/shm, 4 for bash and 1 for zsh.
nopt=$(echo $optcmds | wc -w) nfile=$(wc -l <"$tmp/fileopts")
floor=$((30 + nopt + nfile))
[ "$shm_ok" = 1 ] && floor=$((floor + 4))
if command -v zsh >/dev/null 2>&1; then
	floor=$((floor + 11 + nfile))
	[ "$shm_ok" = 1 ] && floor=$((floor + 1))
fi
finish $floor
