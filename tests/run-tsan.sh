#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# Runs the threaded tests of a ThreadSanitizer build (make check-tsan):
# BUILD_DIR TEST...; a test's argument sets come from tests/TEST.args as
# in run-tests.sh.  Any report fails the test (exit code 66), a skip (77)
# is shown with its reason.  Each test's whole output is appended to the
# file MMKIT_TEST_LOG names, if any.
set -u

[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR TEST..." >&2; exit 2; }
build=$1; shift
top=$(cd "$(dirname "$0")/.." && pwd)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0
export TSAN_OPTIONS="exitcode=66 halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"

run() {	# label, command...
	label=$1; shift
	start=$(date +%s)
	timeout -k 10 300 "$@" >"$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	case $rc in
	0)	printf 'PASS  [tsan] %-33s %3ss\n' "$label" "$secs" ;;
	77)	printf 'SKIP  [tsan] %s %s\n' "$label" "$(grep -m1 '^SKIP:' "$log" | cut -c7-)" ;;
	*)	failed=1; printf 'FAIL  [tsan] %-33s %3ss exit %s\n' "$label" "$secs" "$rc"
		sed 's/^/    | /' "$log" | head -n 80 ;;
	esac
	[ -z "${MMKIT_TEST_LOG:-}" ] ||
		{ echo "---- [tsan] $label: exit $rc after ${secs}s"; cat "$log"; } >>"$MMKIT_TEST_LOG"
}

for t in "$@"; do
	if [ -f "$top/tests/$t.args" ]; then
		grep -v '^#' "$top/tests/$t.args" | grep -v '^[[:space:]]*$' >"$log.args"
		while read -r args; do
			# shellcheck disable=SC2086 # the set's words are the arguments
			run "$t $args" "$build/tests/$t" $args
		done <"$log.args"
		rm -f "$log.args"
	else
		run "$t" "$build/tests/$t"
	fi
done
exit $failed
