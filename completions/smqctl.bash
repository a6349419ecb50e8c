# bash completion for smqctl.                              -*- shell-script -*-
#
# The candidates come from the binary itself (as git's --list-cmds does):
# commands from `smqctl --list-cmds`, a command's options from
# `smqctl --list-opts=CMD`, what an option's value is (a file, a window, one
# of some words) from `smqctl --list-args=CMD`, windows from
# `smqctl --list-windows` (the transports and the smq windows in /dev/shm),
# PCI devices after pci: from `smqctl --list-devices`.  The binary is the
# word being completed on ("${COMP_WORDS[0]}"), so a completion of
# ./build/smqctl asks ./build/smqctl.  Needs no bash-completion helpers.

# Sets _smqctl_words to COMP_WORDS with the words that bash split at ':' and
# '=' (COMP_WORDBREAKS) joined again, and _smqctl_cword to the index of the
# current word in it: "--window = shm : x" is one word "--window=shm:x".
_smqctl_join_words()
{
	local i w glue=0
	_smqctl_words=()
	_smqctl_cword=0
	for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
		w=${COMP_WORDS[i]}
		if ((i > 0)) && [[ -n $w && -z ${w//[:=]/} && $COMP_WORDBREAKS == *"${w:0:1}"* ]]; then
			_smqctl_words[${#_smqctl_words[@]}-1]+=$w
			glue=1
		elif ((glue)); then
			_smqctl_words[${#_smqctl_words[@]}-1]+=$w
			glue=0
		else
			_smqctl_words+=("$w")
		fi
		((i == COMP_CWORD)) && _smqctl_cword=$((${#_smqctl_words[@]} - 1))
	done
	# The cursor after a trailing space: an empty word of its own.
	((COMP_CWORD >= ${#COMP_WORDS[@]})) && _smqctl_words+=("") &&
		_smqctl_cword=$((${#_smqctl_words[@]} - 1))
	return 0
}

# Readline replaces only the text after the last ':' or '=' (when they break
# words): strip the part of $1 up to there from every candidate.
_smqctl_trim_breaks()
{
	local cur=$1 pre="" i c
	for ((i = 0; i < ${#cur}; i++)); do
		c=${cur:i:1}
		[[ $c == [:=] && $COMP_WORDBREAKS == *"$c"* ]] && pre=${cur:0:i+1}
	done
	[[ -n $pre ]] && COMPREPLY=("${COMPREPLY[@]#"$pre"}")
	return 0
}

# File names beginning with $2, each prefixed with $1.
_smqctl_files()
{
	local pre=$1 cur=$2 f
	compopt -o filenames 2>/dev/null
	COMPREPLY=()
	while IFS= read -r f; do
		COMPREPLY+=("$pre$f")
	done < <(compgen -f -- "$cur")
	return 0
}

# Candidates for a window spec: 'help', the transports' prefixes and the
# smq windows in /dev/shm (smqctl --list-windows); files after file:, / or
# . and ivshmem:; the PCI devices after pci:.
_smqctl_windows()
{
	local bin=$1 cur=$2 f
	local -a cands=()
	case $cur in
	file:* | ivshmem:*)
		_smqctl_files "${cur%%:*}:" "${cur#*:}"
		return 0
		;;
	/* | .*)
		_smqctl_files "" "$cur"
		return 0
		;;
	pci:*)
		mapfile -t cands < <("$bin" --list-devices 2>/dev/null)
		;;
	*)
		mapfile -t cands < <("$bin" --list-windows 2>/dev/null)
		;;
	esac
	COMPREPLY=()
	for f in "${cands[@]}"; do
		# a prefix typed in full is no candidate: its names are
		[[ $f == "$cur"* && ! ($f == "$cur" && $f == *:) ]] && COMPREPLY+=("$f")
	done
	# No space after a transport's prefix: the name follows.
	for f in "${COMPREPLY[@]}"; do
		[[ $f == *: ]] && { compopt -o nospace 2>/dev/null; break; }
	done
	return 0
}

# The value of option $3 of command $2 (help: before any command), being
# $4: completes it by what `smqctl --list-args` says it is, and returns 0;
# returns 1 when $3 takes no value.
_smqctl_value()
{
	local bin=$1 cmd=$2 opt=$3 cur=$4 s l arg kind
	while read -r s l arg kind; do
		[[ $opt == "$s" || $opt == "$l" ]] || continue
		[[ $arg == - ]] && return 1
		# a directory (metrics --textfile DIR): --list-args names no
		# kind for it, its argument's name says
		[[ $arg == DIR && $kind == - ]] && kind=dir
		case $kind in
		file) _smqctl_files "" "$cur" ;;
		dir) compopt -o filenames 2>/dev/null
		     mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
		window) _smqctl_windows "$bin" "$cur" ;;
		words\ *) mapfile -t COMPREPLY < <(compgen -W "${kind#words }" -- "$cur") ;;
		esac
		return 0
	done < <("$bin" --list-args="$cmd" 2>/dev/null)
	return 1
}

_smqctl()
{
	local bin=${COMP_WORDS[0]} cur prev cmd="" i w
	local -a _smqctl_words
	local _smqctl_cword
	# the word as typed: ~ is not expanded yet
	# shellcheck disable=SC2088
	[[ $bin == "~/"* ]] && bin=$HOME/${bin#"~/"}
	_smqctl_join_words
	cur=${_smqctl_words[_smqctl_cword]}
	prev=""
	((_smqctl_cword > 0)) && prev=${_smqctl_words[_smqctl_cword - 1]}
	COMPREPLY=()

	# The command is the first word that is neither an option nor the
	# value of --window or --board.
	for ((i = 1; i < _smqctl_cword; i++)); do
		w=${_smqctl_words[i]}
		case $w in
		-w | --window | -b | --board) ((i++)) ;;
		-*) ;;
		*) cmd=$w; break ;;
		esac
	done

	# The value of an option: after it, or after its '='.
	if [[ $cur == --*=* ]]; then
		_smqctl_value "$bin" "${cmd:-help}" "${cur%%=*}" "${cur#*=}" &&
			{ COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
			  _smqctl_trim_breaks "$cur"; return 0; }
	elif [[ $prev == -* && $prev != *=* ]] &&
		_smqctl_value "$bin" "${cmd:-help}" "$prev" "$cur"; then
		_smqctl_trim_breaks "$cur"
		return 0
	fi

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$("$bin" --list-opts=help 2>/dev/null)" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$("$bin" --list-cmds 2>/dev/null)" -- "$cur")
		fi
	elif [[ $cmd == help ]]; then
		# help takes one command, help itself among them.
		((i + 1 == _smqctl_cword)) &&
			mapfile -t COMPREPLY < <(compgen -W "$("$bin" --list-cmds 2>/dev/null)" -- "$cur")
	elif [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$("$bin" --list-opts="$cmd" 2>/dev/null)" -- "$cur")
	fi
	return 0
}

complete -F _smqctl smqctl
