#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# Runs every test of each build directory given (tests/test-*.c built into
# DIR/tests/) and every shell test (tests/test-*.sh, once, against the first
# directory).  Exit code 0 pass, 77 skip, anything else fail; a failing
# test's output is shown (every test's with MMKIT_TEST_VERBOSE=1), and
# every test's whole output is appended to the file MMKIT_TEST_LOG names,
# if any.  MMKIT_TEST_JOBS (1) tests run side by side, the shell tests
# (the longest) first; each line gives the seconds the test took.  A test
# still running after MMKIT_TEST_TIMEOUT seconds (900: a package build
# beside the other tests on a loaded machine took 301) is stopped and
# fails.  Prints a last line "N passed, N failed, N skipped" and exits
# non-zero on any failure.
#
# A test that wants arguments lists them in tests/NAME.args (NAME as the
# program or script is called, without .sh): one set a line, words split
# on blanks, blank lines and lines starting with # ignored.  The test then
# runs once per set, labelled and counted apart ("[build] test-refpage
# memfd"); a test without that file runs once, with no arguments.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
timeout_s=${MMKIT_TEST_TIMEOUT:-900}
passed=0 failed=0 skipped=0
failures=""
work=$(mktemp -d)
log="$work/kmsg"
trap 'rm -rf "$work"' EXIT
. "$top/tests/pool.sh"

pool_done() {	# label, exit code, seconds, output
	case $2 in
	0)	passed=$((passed + 1)); printf 'PASS  %-40s %3ss\n' "$1" "$3"
		[ -z "${MMKIT_TEST_VERBOSE:-}" ] || sed 's/^/    | /' "$4" ;;
	77)	skipped=$((skipped + 1))
		printf 'SKIP  %-40s %s\n' "$1" "$(grep -m1 '^SKIP:' "$4" | cut -c7-)" ;;
	*)	failed=$((failed + 1)); failures="$failures $1"
		printf 'FAIL  %-40s %3ss exit %s\n' "$1" "$3" "$2"
		sed 's/^/    | /' "$4" | tail -n 60 ;;
	esac
	[ -z "${MMKIT_TEST_LOG:-}" ] ||
		{ echo "---- $1: exit $2 after $3s"; cat "$4"; } >>"$MMKIT_TEST_LOG"
}

run_one() {	# label, command...
	run_label=$1
	shift
	pool_run "$run_label" timeout -k 10 "$timeout_s" "$@"
}

# run_one's variables are global too, hence names of their own here.
run_sets() {	# label, test name, command...
	sets_label=$1 sets_file="$top/tests/$2.args"; shift 2
	if [ ! -f "$sets_file" ]; then
		run_one "$sets_label" "$@"
		return
	fi
	# Each set's words become arguments: split, never globbed.  The file is
	# read on fd 3, which the test does not inherit: its stdin stays ours.
	set -f
	while read -r set_args <&3 || [ -n "$set_args" ]; do
		case $set_args in ''|'#'*) continue ;; esac
		run_one "$sets_label $set_args" "$@" $set_args 3<&-
	done 3<"$sets_file"
	set +f
}

[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR..." >&2; exit 2; }
first=$1
# The kernel's log is read before and after: tests that make it complain fail.
kmsg_lines=$(dmesg 2>/dev/null | wc -l) || kmsg_lines=""

pool_init "${MMKIT_TEST_JOBS:-1}" "$work"
MMKIT_BUILD=$(cd "$first" && pwd)
export MMKIT_BUILD
for t in "$top"/tests/test-*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	run_sets "[sh] $name" "$name" sh "$t"
done
for dir in "$@"; do
	tag=$(basename "$dir")
	for t in "$dir"/tests/test-*; do
		[ -x "$t" ] || continue
		name=$(basename "$t")
		run_sets "[$tag] $name" "$name" "$t"
	done
done
pool_drain

if [ -n "$kmsg_lines" ] && dmesg >/dev/null 2>&1; then
	dmesg | tail -n +$((kmsg_lines + 1)) >"$log"
	if grep -qE 'BUG:|WARNING:|Oops:|Call Trace:' "$log"; then
		failed=$((failed + 1)); failures="$failures [kernel-log]"
		echo "FAIL  kernel log during the tests:"
		sed 's/^/    | /' "$log" | tail -n 60
	fi
else
	echo "note: the kernel log is not readable here; not checked for BUG/WARNING/Oops"
fi
[ -z "$failures" ] || echo "failed:$failures"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
