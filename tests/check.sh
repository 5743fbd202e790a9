#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# Runs each test suite given (a command line each: the test runner, the
# fuzzers, ThreadSanitizer, stress), all of them even when one fails, and
# ends with one line adding up their PASS, FAIL and SKIP lines:
# "total: N passed, N failed, N skipped".  Exits non-zero if any failed.
#
#   tests/check.sh "tests/run-tests.sh build build-asan" "tests/fuzz/run.sh build-fuzz 10"
set -u
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
for suite in "$@"; do
	echo "=== $suite"
	# The suite's exit status survives the pipe through a file.
	{ sh -c "$suite" 2>&1; echo "suite-exit $?" >"$log.rc"; } | tee -a "$log"
	rc=$(sed -n 's/^suite-exit //p' "$log.rc")
	rm -f "$log.rc"
	[ "$rc" = 0 ] || { status=1; echo "=== $suite: exit $rc"; }
done
passed=$(grep -c '^PASS ' "$log")
failed=$(grep -c '^FAIL ' "$log")
skipped=$(grep -c '^SKIP ' "$log")
# A suite that failed without a FAIL line of its own still counts once.
[ "$status" = 0 ] || [ "$failed" -gt 0 ] || failed=1
echo "total: $passed passed, $failed failed, $skipped skipped"
exit $status
