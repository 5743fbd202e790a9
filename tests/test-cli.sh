#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The mmkit command: its output is well formed, bad input gets a message
# and a non-zero exit, never a crash; it follows the conventions people
# type without reading (--version, COMMAND --help and -h, help COMMAND,
# exit 0/1/2); the bash completion offers what the usage texts list.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
mmkit="$MMKIT_BUILD/mmkit"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_exit CODE ARGS...: runs mmkit, checks the exit code; failures
# must also say something on stderr.
expect_exit() {
	want=$1; shift
	"$mmkit" "$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] || fail "mmkit $*: exit $got, expected $want: $(cat "$tmp/err")"
	[ "$want" -eq 0 ] || [ -s "$tmp/err" ] || fail "mmkit $*: failed without a message"
}

# expect_bad_input ARGS...: exit 2, a "mmkit: " message quoting the last
# argument, nothing on stdout.
expect_bad_input() {
	expect_exit 2 "$@"
	for last; do :; done
	grep -qF "'$last'" "$tmp/err" || fail "mmkit $*: the message does not name '$last': $(cat "$tmp/err")"
	grep -q '^mmkit: ' "$tmp/err" || fail "mmkit $*: no 'mmkit: ' message: $(cat "$tmp/err")"
	[ ! -s "$tmp/out" ] || fail "mmkit $*: wrote to stdout: $(cat "$tmp/out")"
}

# expect_help WHAT ARGS...: exit 0, "usage: mmkit WHAT" on stdout, nothing
# on stderr; the usage is kept in $tmp/help.
expect_help() {
	what=$1; shift
	expect_exit 0 "$@"
	[ ! -s "$tmp/err" ] || fail "mmkit $*: wrote to stderr: $(cat "$tmp/err")"
	grep -q "^usage: mmkit $what" "$tmp/out" || fail "mmkit $*: no 'usage: mmkit $what' on stdout"
	cp "$tmp/out" "$tmp/help"
}

# same_help ARGS...: mmkit help ARGS... prints what mmkit ARGS... --help does.
same_help() {
	"$mmkit" "$@" --help >"$tmp/a" 2>&1
	"$mmkit" help "$@" >"$tmp/b" 2>&1
	cmp -s "$tmp/a" "$tmp/b" || fail "mmkit help $* differs from mmkit $* --help"
}

# long_options FILE: the --options a usage text names, but --help, sorted.
long_options() {
	grep -oE -- '--[a-z][a-z-]*' "$1" | grep -vx -- --help | sort -u | tr '\n' ' '
}

"$mmkit" probe | grep -q '^lock_onfault ' || fail "probe has no lock_onfault row"
"$mmkit" probe --json | python3 -c '
import json, sys
d = json.load(sys.stdin)["features"]
keys = {"refpage", "names", "pac", "secret", "lock_onfault", "userfaultfd"}
assert set(d) == keys, d.keys()
for k, v in d.items():
    assert v["status"] in {"native", "fallback", "unsupported", "not_implemented"}, v
    assert v["backend"] and v["reason"], v
' || fail "probe --json is not the documented JSON"

# --version and -V: the version the Makefile builds.
version=$(sed -n 's/^VERSION[[:space:]]*:=[[:space:]]*//p' "$top/Makefile")
[ -n "$version" ] || fail "no VERSION line in $top/Makefile"
for opt in --version -V; do
	expect_exit 0 "$opt"
	[ "$(cat "$tmp/out")" = "mmkit $version" ] ||
		fail "mmkit $opt printed '$(cat "$tmp/out")', expected 'mmkit $version'"
done

# The overall usage: on stdout when asked for, on stderr after a mistake;
# it lists the commands and the exit codes.
expect_help "COMMAND" --help
cp "$tmp/help" "$tmp/usage"
for ask in -h help; do
	expect_help "COMMAND" "$ask"
	cmp -s "$tmp/help" "$tmp/usage" || fail "mmkit $ask differs from mmkit --help"
done
for code in 0 1 2; do
	grep -qE "^  $code  [a-z]" "$tmp/usage" || fail "the usage does not explain exit code $code"
done
expect_exit 2
grep -q '^usage: mmkit' "$tmp/err" || fail "mmkit without a command: no usage on stderr"
expect_bad_input no-such-command
expect_bad_input --no-such-option
expect_bad_input help no-such-command

commands=$(sed -n '/^commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p' "$tmp/usage" | tr '\n' ' ')
for cmd in probe maps secrets memlock bench run; do
	case " $commands" in *" $cmd "*) ;; *) fail "the usage does not list $cmd: $commands" ;; esac
done

# Every command: --help, -h, help COMMAND, an unknown option.
for cmd in $commands; do
	expect_help "$cmd " "$cmd" --help
	cp "$tmp/help" "$tmp/help-$cmd"
	expect_help "$cmd " "$cmd" -h
	cmp -s "$tmp/help" "$tmp/help-$cmd" || fail "mmkit $cmd -h differs from --help"
	same_help "$cmd"
	expect_bad_input "$cmd" --no-such-option
done
expect_help "maps " maps 1 --help

# Every benchmark (bench/bench-NAME.c) that is built: the same, through mmkit bench.
benches=$(cd "$top/bench" && ls bench-*.c | sed 's/^bench-\(.*\)\.c$/\1/' | tr '\n' ' ')
[ -n "$benches" ] || fail "no benchmarks in $top/bench"
for b in $benches; do
	grep -qw "$b" "$tmp/help-bench" || fail "mmkit bench --help does not name $b"
	if [ ! -x "$MMKIT_BUILD/bench/bench-$b" ]; then
		echo "note: $MMKIT_BUILD/bench/bench-$b not built: its --help not checked"
		continue
	fi
	expect_help "bench $b " bench "$b" --help
	cp "$tmp/help" "$tmp/help-bench-$b"
	expect_help "bench $b " bench "$b" -h
	cmp -s "$tmp/help" "$tmp/help-bench-$b" || fail "mmkit bench $b -h differs from --help"
	same_help bench "$b"
	expect_bad_input bench "$b" --no-such-option
done

# A bad benchmark option: a message naming the value and what is allowed,
# in either form (--NAME VALUE, --NAME=VALUE), not just the usage.
# bench_bad_value NAME OPTION VALUE ALLOWED
bench_bad_value() {
	[ -x "$MMKIT_BUILD/bench/bench-$1" ] || return 0
	for form in "$2 $3" "$2=$3"; do
		# shellcheck disable=SC2086
		expect_exit 2 bench "$1" $form
		grep -qF -- "$2 '$3': $4" "$tmp/err" ||
			fail "mmkit bench $1 $form: the message does not say '$2 '$3': $4': $(cat "$tmp/err")"
		! grep -q '^usage:' "$tmp/err" || fail "mmkit bench $1 $form: the usage instead of a message"
	done
}
for v in 0 abc 99999999999 -5 1.5; do
	bench_bad_value refpage --iterations "$v" "a number from 1 to 1000000"
	bench_bad_value names --vmas "$v" "a number from 1 to 1000000"
	bench_bad_value pac --calls "$v" "a number from 1 to 1000000000"
	bench_bad_value secret --rounds "$v" "a number from 1 to 51"
	bench_bad_value sodium --rounds "$v" "a number from 1 to 99"
	bench_bad_value lock --rounds "$v" "a number from 1 to 51"
done
for v in 0 2T 1.1K abc; do
	bench_bad_value lock --size "$v" "a size from 4K to 1T"
done
if [ -x "$MMKIT_BUILD/bench/bench-lock" ]; then
	# 1T is within "from one page to 1T": the error is about --rounds alone.
	expect_exit 2 bench lock --size 1T --rounds 0
	grep -qF -- "--rounds '0'" "$tmp/err" || fail "bench lock --size 1T: $(cat "$tmp/err")"
	expect_exit 2 bench lock --rounds
	grep -qF -- "'--rounds' needs a value: a number from 1 to 51" "$tmp/err" ||
		fail "bench lock --rounds: $(cat "$tmp/err")"
fi

# Bad PIDs and sizes are bad input (2); a PID that names no process is a
# failure of the work (1).
for pid in "" 0 -1 -5 abc 12abc "12 " " 12" +12 0x10 1K 2147483648 99999999999999999999; do
	expect_bad_input maps "$pid"
done
expect_exit 2 maps
expect_exit 2 maps 1 2
expect_exit 1 maps 2147483647
grep -q 'no process' "$tmp/err" || fail "maps 2147483647: $(cat "$tmp/err")"
expect_exit 0 memlock
expect_exit 0 memlock 4K
for size in "" 12X -5 1KK K " 4" 99999999999999999999 99999999999G 1.1K 1. .5 1.5 1KB 1Ki \
	    1.0000001K 18446744073709551615 16777216T 17179869184T; do
	expect_bad_input memlock "$size"
done
# One size parser: binary suffixes, alone or as KiB...TiB, and fractions; a
# SIZE is charged in whole pages, as the kernel locks it (as root, exempt,
# everything fits: the figure is SIZE rounded up to pages).
page=$(getconf PAGESIZE)
for size in 64K:64 64KiB:64 64k:64 64MiB:65536 1.5G:1572864 1.5GiB:1572864 1T:1073741824 \
	    0.5K:$((page / 1024)) 1:$((page / 1024)) $((page + 1)):$((2 * page / 1024)); do
	if [ "$(id -u)" -eq 0 ]; then
		expect_exit 0 memlock "${size%%:*}"
		grep -qx "${size#*:} KiB more fits" "$tmp/out" ||
			fail "memlock ${size%%:*}: expected ${size#*:} KiB, got $(cat "$tmp/out")"
	fi
done
# Under a limit that is not a whole number of pages, as the kernel answers:
# 62 KiB is 15 pages of 4 KiB, so 61441 bytes (16 pages) do not fit.
as_user="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all"
if [ "$(id -u)" -eq 0 ] && [ "$page" -eq 4096 ] && $as_user test -x "$mmkit" 2>/dev/null; then
	$as_user sh -c 'ulimit -l 62 && exec "$1" memlock 61441' _ "$mmkit" >"$tmp/out" 2>"$tmp/err"
	[ $? -eq 1 ] || fail "memlock 61441 under 62 KiB: $(cat "$tmp/out" "$tmp/err")"
	grep -q 'locking 64 KiB (16 pages)' "$tmp/err" || fail "memlock 61441 under 62 KiB: $(cat "$tmp/err")"
	$as_user sh -c 'ulimit -l 62 && exec "$1" memlock 60K' _ "$mmkit" >"$tmp/out" 2>"$tmp/err" ||
		fail "memlock 60K under 62 KiB: $(cat "$tmp/out" "$tmp/err")"
	grep -qx '60 KiB more fits' "$tmp/out" || fail "memlock 60K under 62 KiB: $(cat "$tmp/out")"
	# The kernel's own answer for the same two sizes.
	$as_user sh -c 'ulimit -l 62 && exec python3 -c "
import ctypes, mmap, sys
libc = ctypes.CDLL(None, use_errno=True)
m = mmap.mmap(-1, 16 * 4096)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
ok = [libc.mlock(ctypes.c_void_p(addr), ctypes.c_size_t(n)) == 0 for n in (61441, 61440)]
sys.exit(0 if ok == [False, True] else 1)"' 2>/dev/null ||
		fail "the kernel does not refuse 61441 bytes and accept 61440 under 62 KiB"
fi
expect_exit 2 memlock 4K 8K
expect_exit 2 probe extra
expect_exit 2 secrets 1 2
for pid in 0 -1 abc 1K; do
	expect_bad_input secrets "$pid"
done
expect_exit 1 secrets 2147483647
grep -q 'no process 2147483647' "$tmp/err" || fail "secrets 2147483647: $(cat "$tmp/err")"
expect_exit 0 secrets $$
grep -q "holds no\|no process holds" "$tmp/out" || fail "secrets \$\$: $(cat "$tmp/out")"
# help prints help and never runs anything it is given.
expect_help "run " help run --perturb=7 sh -c 'echo EXECUTED'
! grep -q EXECUTED "$tmp/out" || fail "mmkit help run --perturb=7 sh -c 'echo EXECUTED' ran it"
expect_help "run " help run -- sh -c 'echo EXECUTED'
expect_help "bench " help bench --quick
expect_help "maps " help maps 1 --json

# mmkit run takes --OPTION=VALUE and --OPTION VALUE, as getopt_long does
# (with the shims beside mmkit: a build with them).
[ -e "$MMKIT_BUILD/libmmkit-perturb.so" ] && [ -e "$MMKIT_BUILD/libmmkit-openssl.so" ] ||
	echo "note: no shims in $MMKIT_BUILD: mmkit run's option forms checked for bad values only"
[ -e "$MMKIT_BUILD/libmmkit-perturb.so" ] &&
for form in "--perturb=85" "--perturb 85"; do
	expect_exit 0 run $form -- sh -c 'echo "$MALLOC_PERTURB_ $LD_PRELOAD"'
	grep -q '^85 .*libmmkit-perturb\.so$' "$tmp/out" || fail "mmkit run $form: $(cat "$tmp/out" "$tmp/err")"
done
[ -e "$MMKIT_BUILD/libmmkit-openssl.so" ] &&
for form in "--secret-heap=openssl" "--secret-heap openssl"; do
	expect_exit 0 run $form sh -c 'echo "$LD_PRELOAD"'
	grep -q 'libmmkit-openssl\.so$' "$tmp/out" || fail "mmkit run $form: $(cat "$tmp/out" "$tmp/err")"
done
expect_bad_input run --perturb
expect_bad_input run --secret-heap
expect_bad_input run --perturb 256
expect_bad_input run --perturbation=5

expect_exit 2 bench
expect_exit 2 bench ../../bin/sh
expect_exit 2 bench no-such-bench
expect_exit 2 bench names --vmas 0
expect_exit 2 bench names --forks

# The completion: bash sources cli/mmkit.bash and completes the words given.
command -v bash >/dev/null || { echo "SKIP: no bash: the completion is not tested"; exit 77; }
# Strict: an unset variable or any message is a failure.
complete_words() {
	bash -c 'set -u
		. "$1" || exit 1
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		_mmkit
		[ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}"' _ \
		"$top/cli/mmkit.bash" mmkit "$@" >"$tmp/words" 2>"$tmp/err" &&
		[ ! -s "$tmp/err" ] || fail "completing mmkit $*: $(cat "$tmp/err")"
}
# sorted FILE [GREP-ARGS...]: the words of FILE (those matching), sorted.
sorted() {
	f=$1; shift
	grep "$@" "$f" | sort | tr '\n' ' '
}
sorted_list() { printf '%s\n' "$@" | sort | tr '\n' ' '; }

complete_words ""
[ "$(sorted "$tmp/words" -v -e '^-' -e '^help$')" = "$(sorted_list $commands)" ] ||
	fail "mmkit completes the commands $(cat "$tmp/words"), the usage lists $commands"
for w in help --help -h --version -V; do
	grep -qx -- "$w" "$tmp/words" || fail "mmkit does not complete $w"
done
complete_words m
[ "$(sorted "$tmp/words" '')" = "$(sorted_list maps memlock)" ] || fail "mmkit m completes $(cat "$tmp/words")"
complete_words help ""
[ "$(sorted "$tmp/words" '')" = "$(sorted_list $commands)" ] || fail "mmkit help completes $(cat "$tmp/words")"

for cmd in $commands; do
	complete_words "$cmd" -
	grep -qx -- -h "$tmp/words" && grep -qx -- --help "$tmp/words" ||
		fail "mmkit $cmd - does not complete -h and --help"
	[ "$(long_options "$tmp/words")" = "$(long_options "$tmp/help-$cmd")" ] ||
		fail "mmkit $cmd completes $(long_options "$tmp/words"), its usage names $(long_options "$tmp/help-$cmd")"
done

# PIDs for maps: this shell's is one of them, and only numbers.
complete_words maps ""
grep -qx "$$" "$tmp/words" || fail "mmkit maps does not complete PID $$"
! grep -qv '^[0-9][0-9]*$' "$tmp/words" || fail "mmkit maps completes non-PIDs: $(grep -v '^[0-9]' "$tmp/words")"
complete_words maps --json ""
grep -qx "$$" "$tmp/words" || fail "mmkit maps --json does not complete PID $$"
complete_words maps "$$" ""
! grep -q '^[0-9]' "$tmp/words" || fail "mmkit maps PID completes a second PID"

# Benchmark names, and each benchmark's options as its usage names them.
complete_words bench ""
[ "$(sorted "$tmp/words" -v '^-')" = "$(sorted_list $benches)" ] ||
	fail "mmkit bench completes $(cat "$tmp/words"), bench/ has $benches"
complete_words help bench ""
[ "$(sorted "$tmp/words" '')" = "$(sorted_list $benches)" ] || fail "mmkit help bench completes $(cat "$tmp/words")"
for b in $benches; do
	[ -f "$tmp/help-bench-$b" ] || continue
	complete_words bench "$b" -
	[ "$(long_options "$tmp/words")" = "$(long_options "$tmp/help-bench-$b")" ] ||
		fail "mmkit bench $b completes $(long_options "$tmp/words"), its usage names $(long_options "$tmp/help-bench-$b")"
	grep -qx -- -h "$tmp/words" && grep -qx -- --help "$tmp/words" ||
		fail "mmkit bench $b - does not complete -h and --help"
done
# mmkit run OPTION VALUE: the heaps after --secret-heap, and a value is no PROGRAM.
complete_words run --secret-heap ""
[ "$(sorted "$tmp/words" '')" = "$(sorted_list openssl openssl-or-malloc sodium sodium,openssl)" ] ||
	fail "mmkit run --secret-heap completes $(cat "$tmp/words")"
complete_words run --perturb 85 --st
grep -qx -- --stats "$tmp/words" || fail "mmkit run --perturb 85 --st completes $(cat "$tmp/words")"
complete_words bench names --vmas ""
[ ! -s "$tmp/words" ] || fail "mmkit bench names --vmas completes $(cat "$tmp/words"), not a number"
exit 0
