# bash completion for smqctl.                              -*- shell-script -*-
#
# The candidates come from the binary itself (as git's --list-cmds does):
# commands from `smqctl --list-cmds`, a command's options from
# `smqctl --list-opts=CMD`, transports from `smqctl --window help`.  The
# binary is the word being completed on ("${COMP_WORDS[0]}"), so a completion
# of ./build/smqctl asks ./build/smqctl.  Needs no bash-completion helpers.

# Options every command takes, offered before the command name.
_smqctl_common_opts="--window --board --json --verbose --help --version"

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

# Candidates for a window spec: 'help', the transports' prefixes, shm:NAME
# for every object in /dev/shm, and files after file: or / or .
_smqctl_windows()
{
	local bin=$1 cur=$2 f
	local -a cands=()
	case $cur in
	file:*)
		compopt -o filenames 2>/dev/null
		while IFS= read -r f; do
			cands+=("file:$f")
		done < <(compgen -f -- "${cur#file:}")
		;;
	/* | .*)
		compopt -o filenames 2>/dev/null
		while IFS= read -r f; do
			cands+=("$f")
		done < <(compgen -f -- "$cur")
		;;
	*)
		mapfile -t cands < <(echo help; "$bin" --window help 2>/dev/null |
			sed -n 's/^  *\([a-z][a-z0-9]*:\).*/\1/p')
		for f in /dev/shm/*; do
			[[ -f $f ]] && cands+=("shm:${f##*/}")
		done
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

	case $prev in
	-w | --window)
		_smqctl_windows "$bin" "$cur"
		_smqctl_trim_breaks "$cur"
		return 0
		;;
	-b | --board)
		return 0
		;;
	esac
	if [[ $cur == --window=* ]]; then
		_smqctl_windows "$bin" "${cur#--window=}"
		COMPREPLY=("${COMPREPLY[@]/#/--window=}")
		_smqctl_trim_breaks "$cur"
		return 0
	fi

	if [[ -z $cmd ]]; then
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$_smqctl_common_opts" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$("$bin" --list-cmds 2>/dev/null)" -- "$cur")
		fi
	elif [[ $cmd == help ]]; then
		# help takes one command, and help itself is none.
		((i + 1 == _smqctl_cword)) &&
			mapfile -t COMPREPLY < <(compgen -W "$("$bin" --list-cmds 2>/dev/null |
				grep -vx help)" -- "$cur")
	elif [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$("$bin" --list-opts="$cmd" 2>/dev/null)" -- "$cur")
	elif [[ ($cmd == send && ($prev == -f || $prev == --file)) ||
		($cmd == server && ($prev == -s || $prev == --socket)) ]]; then
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	fi
	return 0
}

complete -F _smqctl smqctl
