# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# What the perturb shim's tests that build a program of tests/perturb/
# share, sourced after `set -u`: $shim and $top, fail(), the skips where
# the shim or a C compiler is missing, a $tmp removed at exit, build(), and
# run() and same() to compare runs of one program.
shim="$MMKIT_BUILD/libmmkit-perturb.so"
top=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -f "$shim" ] || { echo "SKIP: no $shim (built without the shims)"; exit 77; }
command -v cc >/dev/null 2>&1 || { echo "SKIP: no C compiler (cc)"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# build NAME [FLAGS...]: tests/perturb/NAME.c into $tmp/NAME, FLAGS after the source.
build() {
	build_name=$1
	shift
	cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o "$tmp/$build_name" \
		"$top/tests/perturb/$build_name.c" "$@" || fail "$build_name does not build"
}

# run NAME ARGS [VAR=VALUE...]: $tmp/$program with ARGS (words split on
# blanks) under env VAR=VALUE...: its exit status, output and standard
# error in $tmp/NAME.rc, .out and .err.
run() {
	run_name=$1 run_args=$2
	shift 2
	# shellcheck disable=SC2086 # the words are the arguments
	env "$@" "$tmp/$program" $run_args >"$tmp/$run_name.out" 2>"$tmp/$run_name.err"
	echo $? >"$tmp/$run_name.rc"
}

# same WHAT BASE OTHER: the runs BASE and OTHER ended alike (exit status
# and output), or the test fails with WHAT and both runs.
same() {
	[ "$(cat "$tmp/$2.rc")" = "$(cat "$tmp/$3.rc")" ] && cmp -s "$tmp/$2.out" "$tmp/$3.out" &&
		return 0
	for same_run in "$2" "$3"; do
		echo "$same_run: exit $(cat "$tmp/$same_run.rc")" >&2
		cat "$tmp/$same_run.out" "$tmp/$same_run.err" >&2
	done
	fail "$1"
}
