#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# make check: runs the build command, then each test suite given (a
# command line each: the test runner, the fuzzers, ThreadSanitizer,
# stress), JOBS of them side by side, all of them even when one fails.
# None of them measures time (the fuzzers and stress run for a fixed time
# and count what they did), so they share the cores; the longest go first.
# Each suite's output is shown whole when it ends.  LOG keeps everything:
# the build, each suite's output and, below it, the whole output of each
# of its tests (MMKIT_TEST_LOG), passing or not.  The run ends with a
# table of where the time went (stage, seconds, the slowest tests too),
# then one line adding up the suites' PASS, FAIL and SKIP lines:
# "total: N passed, N failed, N skipped".  Exits non-zero if any failed.
# BUDGETS ("TEST:SECONDS ...") gives tests a row of their own, their time
# beside their budget and "OVER" past it: a gate for the review of the
# change that made them slower, not a failure (a machine's load must not
# fail a run).
#
#   tests/check.sh -j 2 -l build/check.log -b "make -j2 check-build" \
#	-t "test-rust:60" \
#	"tests/run-tests.sh build build-asan" "tests/fuzz/run.sh build-fuzz 10"
set -u
jobs=1 log="" build="" budgets=""
while getopts j:l:b:t: opt; do
	case $opt in
	j)	jobs=$OPTARG ;;
	l)	log=$OPTARG ;;
	b)	build=$OPTARG ;;
	t)	budgets=$OPTARG ;;
	*)	exit 2 ;;
	esac
done
shift $((OPTIND - 1))
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
keep_log=$log
[ -n "$log" ] || log="$work/check.log"
mkdir -p "$(dirname "$log")"
: >"$log"
. "$top/tests/pool.sh"

status=0
times="$work/times"
: >"$times"
began=$(date +%s)

# stage LABEL SECONDS: a row of the table.
stage() {
	printf '%-58.58s %6s\n' "$1" "$2" >>"$times"
}

pool_done() {	# suite, exit code, seconds, output
	{
		echo "=== $1 (${3}s)"
		cat "$4"
		[ "$2" = 0 ] || echo "=== $1: exit $2"
	} | tee -a "$log"
	[ "$2" = 0 ] || status=1
	stage "suite: $1" "$3"
	cat "$4" >>"$work/results"
	# Below the suite's output, the whole output of each of its tests.
	suite_tests="$work/tests.$(printf '%s' "$1" | cksum | cut -d' ' -f1)"
	[ ! -s "$suite_tests" ] || { echo "=== $1: each test's output"; cat "$suite_tests"; } >>"$log"
	rm -f "$suite_tests"
}

# suite_run SUITE: the suite's tests append their whole output to a file of
# its own (suites run side by side).
suite_run() {
	MMKIT_TEST_LOG="$work/tests.$(printf '%s' "$1" | cksum | cut -d' ' -f1)" sh -c "$1"
}

[ -z "$keep_log" ] || echo "full log: $log"
if [ -n "$build" ]; then
	echo "=== build: $build" | tee -a "$log"
	start=$(date +%s)
	{ sh -c "$build" 2>&1; echo $? >"$work/build.rc"; } | tee -a "$log"
	stage "build: $build" $(( $(date +%s) - start ))
	[ "$(cat "$work/build.rc")" = 0 ] || { echo "FAIL  build" >"$work/results"; status=1; }
fi
: >>"$work/results"
if [ "$status" = 0 ]; then
	echo "=== $# suites, $jobs at a time; each one's output when it ends"
	pool_init "$jobs" "$work"
	for suite in "$@"; do
		pool_run "$suite" suite_run "$suite"
	done
	pool_drain
fi

passed=$(grep -c '^PASS ' "$work/results")
failed=$(grep -c '^FAIL ' "$work/results")
skipped=$(grep -c '^SKIP ' "$work/results")
# A suite that failed without a FAIL line of its own still counts once.
[ "$status" = 0 ] || [ "$failed" -gt 0 ] || failed=1
{
	echo "=== time (stage, seconds; the suites ran $jobs at a time)"
	cat "$times"
	# Each test's seconds ("SECS [SUITE] TEST"): the runners end a test's
	# line with them.  The slowest ten, then the tests with a budget.
	sed -n 's/^\(PASS\|FAIL\)  \(\[.*[^ ]\)  *\([0-9][0-9]*\)s\( exit [0-9]*\)\{0,1\}$/\3 \2/p' \
		"$work/results" | sort -rn >"$work/timed"
	head -n 10 "$work/timed" |
		while read -r secs label; do printf '%-58s %6s\n' "test: $label" "$secs"; done
	for budget in $budgets; do
		name=${budget%%:*} limit=${budget#*:}
		secs=$(awk -v name="$name" 'NF == 3 && $3 == name { print $1; exit }' "$work/timed")
		over=""
		[ -z "$secs" ] || [ "$secs" -le "$limit" ] || over=", OVER"
		printf '%-58s %6s\n' "budget: $name (${limit}s$over)" "${secs:--}"
	done
	printf '%-58s %6s\n' "wall" $(( $(date +%s) - began ))
	[ -z "$keep_log" ] || echo "full log: $log"
	echo "total: $passed passed, $failed failed, $skipped skipped"
} | tee -a "$log"
exit $status
