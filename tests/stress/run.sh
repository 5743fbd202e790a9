#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# Runs the stress programs of BUILD_DIR/stress side by side for SECONDS
# (make stress STRESS_SECONDS=N): secrets in threads x fork (on each
# secret backend), a busy names writer read by another process, and
# reference pages in threads x fork x DONTNEED x munmap x create/destroy
# on each refpage backend.  Each checks its data as it runs and its leaks
# at the end; this prints each one's result and iterations and fails if
# any failed (a skip, 77, says why).  Each one's whole output is appended
# to the file MMKIT_TEST_LOG names, if any.
set -u

[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR SECONDS" >&2; exit 2; }
build=$1 secs=$2
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

start() {	# label, env assignment or -, program, arguments...
	label=$1 env=$2 prog=$3; shift 3
	if [ "$env" = - ]; then
		timeout -k 10 $((secs + 120)) "$build/stress/$prog" "$secs" "$@" >"$logs/$label" 2>&1
	else
		env "$env" timeout -k 10 $((secs + 120)) "$build/stress/$prog" "$secs" "$@" \
			>"$logs/$label" 2>&1
	fi
	echo $? >"$logs/$label.rc"
}

start secret-memfd_secret MMKIT_SECRET_BACKEND=memfd_secret stress-secret &
start secret-mlock MMKIT_SECRET_BACKEND=mlock stress-secret &
start names - stress-names &
for b in kmod memfd uffd; do
	start "refpage-$b" - stress-refpage "$b" &
done
wait

failed=0
for rc_file in "$logs"/*.rc; do
	label=$(basename "$rc_file" .rc)
	rc=$(cat "$rc_file")
	[ -z "${MMKIT_TEST_LOG:-}" ] ||
		{ echo "---- [stress] $label: exit $rc"; cat "$logs/$label"; } >>"$MMKIT_TEST_LOG"
	case $rc in
	0)	printf 'PASS  [stress] %-22s %s\n' "$label" "$(tail -n 1 "$logs/$label")" ;;
	77)	printf 'SKIP  [stress] %-22s %s\n' "$label" "$(grep -m1 '^SKIP:' "$logs/$label" | cut -c7-)" ;;
	*)	failed=1; printf 'FAIL  [stress] %-22s exit %s\n' "$label" "$rc"
		tail -n 40 "$logs/$label" | sed 's/^/    | /' ;;
	esac
done
exit $failed
