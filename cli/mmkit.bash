# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# Bash completion of the mmkit command: its commands, each command's
# options, PIDs (from /proc) for maps, the option values of top and export, benchmark names and their options
# for bench, commands and files for run.  Installed as share/bash-completion/completions/mmkit; needs
# only bash, not the bash-completion package.  tests/test-cli.sh checks
# these lists against what `mmkit COMMAND --help` says.

_mmkit()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local commands="probe maps top export secrets memlock bench run" benches="lock names pac refpage secret sodium"
	local cmd=${COMP_WORDS[1]} operands=() words="" i

	COMPREPLY=()
	# The operands before the word being completed (options start with -).
	for ((i = 2; i < COMP_CWORD; i++)); do
		# mmkit run --perturb BYTE, --secret-heap HEAPS: the value is no operand.
		if [[ $cmd == run && ( ${COMP_WORDS[i]} == --perturb || ${COMP_WORDS[i]} == --secret-heap ) ]]; then
			((i++))
			continue
		fi
		[[ ${COMP_WORDS[i]} == -* ]] || operands+=("${COMP_WORDS[i]}")
	done
	if ((COMP_CWORD == 1)); then
		words="$commands help --help -h --version -V"
	elif [[ $cmd == help ]]; then
		# mmkit help COMMAND, mmkit help bench NAME
		if ((COMP_CWORD == 2)); then
			words=$commands
		elif ((COMP_CWORD == 3)) && [[ ${COMP_WORDS[2]} == bench ]]; then
			words=$benches
		fi
	else
		case $cmd in
		probe)
			words="--json --help -h" ;;
		memlock)
			words="--help -h" ;;
		maps | secrets)
			if ((${#operands[@]} == 0)) && [[ $cur != -* ]]; then
				local pids=(/proc/[0-9]*)
				words=${pids[*]#/proc/}
			else
				words="--json --help -h"
			fi ;;
		top | export)
			case $prev in
			--by)	words="name process" ;;
			--sort)	words="pss size rss uss swap locked mappings processes name pid command" ;;
			--user)	COMPREPLY=($(compgen -u -- "$cur")); return ;;
			--pid)	local pids=(/proc/[0-9]*)
				words=${pids[*]#/proc/} ;;
			--textfile)
				COMPREPLY=($(compgen -f -- "$cur")); return ;;
			--name | --listen | --max-series | --top-processes) return ;;
			*)	if [[ $cmd == top ]]; then
					words="--by --sort --name --user --pid --json --help -h"
				else
					words="--listen --textfile --openmetrics --max-series --top-processes
						--name --user --pid --help -h"
				fi ;;
			esac ;;
		bench)
			# The options after NAME are the benchmark's own; those
			# taking a number get none.
			case ${operands[0]-}:$prev in
			*:--vmas | *:--forks | *:--iterations | *:--rounds | *:--cap | *:--shim | \
			*:--size | *:--accesses | *:--seed | *:--secrets | *:--calls) ;;
			:*)		words="$benches --help -h" ;;
			lock:*)		words="--json --size --accesses --seed --rounds --cold --quick --help -h" ;;
			names:*)	words="--json --quick --vmas --forks --help -h" ;;
			pac:*)		words="--json --calls --rounds --quick --help -h" ;;
			refpage:*)	words="--json --quick --iterations --tagged --threads --help -h" ;;
			secret:*)	words="--json --quick --rounds --direct-map --secrets --help -h" ;;
			sodium:*)	words="--json --quick --rounds --cap --shim --help -h" ;;
			esac ;;
		run)
			# After PROGRAM, the words are the program's.
			if [[ $prev == --secret-heap ]] && ((${#operands[@]} == 0)); then
				COMPREPLY=($(compgen -W "sodium openssl sodium,openssl openssl-or-malloc" -- "$cur"))
				return
			elif [[ $prev == --perturb ]] && ((${#operands[@]} == 0)); then
				return
			elif ((${#operands[@]} > 0)); then
				COMPREPLY=($(compgen -f -- "$cur"))
				return
			elif [[ $cur != -* ]]; then
				COMPREPLY=($(compgen -c -- "$cur"))
				return
			fi
			words="--secret-heap --secret-heap=sodium --secret-heap=openssl
				--secret-heap=sodium,openssl --secret-heap=openssl-or-malloc
				--perturb --perturb= --stats --names --no-glibc-names --help -h" ;;
		esac
	fi
	COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _mmkit mmkit
