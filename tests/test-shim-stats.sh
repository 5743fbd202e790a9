#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# mmkit run --stats: each shim prints its one line of statistics at exit,
# as mmkit(1) says, on the standard error the program started with, also
# when the program closed its own before it exited (xz does; the perturb
# shim printed nothing for mmkit run --perturb=85 --stats).
set -u
mmkit="$MMKIT_BUILD/mmkit"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

command -v python3 >/dev/null || { echo "SKIP: no python3 to close its stderr before exit"; exit 77; }
checked=0
for shim in perturb sodium openssl; do
	[ -e "$MMKIT_BUILD/libmmkit-$shim.so" ] || { echo "note: libmmkit-$shim.so not built"; continue; }
	case $shim in
	perturb)	opt="--perturb=85" ;;
	*)		opt="--secret-heap=$shim" ;;
	esac
	# shellcheck disable=SC2086
	"$mmkit" run $opt --stats -- /bin/echo >/dev/null 2>"$tmp/err" ||
		fail "mmkit run $opt --stats /bin/echo failed: $(cat "$tmp/err")"
	grep -q "^mmkit-$shim: echo\[[0-9]*\]: [a-z_]*=[0-9]" "$tmp/err" ||
		fail "mmkit run $opt --stats: no line from mmkit-$shim: $(cat "$tmp/err")"
	# shellcheck disable=SC2086
	"$mmkit" run $opt --stats -- python3 -c 'import os; os.close(2)' 2>"$tmp/err" ||
		fail "mmkit run $opt --stats python3 failed: $(cat "$tmp/err")"
	grep -q "^mmkit-$shim: python3\[[0-9]*\]: " "$tmp/err" ||
		fail "mmkit run $opt --stats, the program closed its stderr: no line: $(cat "$tmp/err")"
	# Without --stats, not a word.
	# shellcheck disable=SC2086
	env -u MMKIT_STATS "$mmkit" run $opt -- /bin/echo >/dev/null 2>"$tmp/err"
	[ ! -s "$tmp/err" ] || fail "mmkit run $opt without --stats printed: $(cat "$tmp/err")"
	checked=$((checked + 1))
done
[ "$checked" -gt 0 ] || { echo "SKIP: no shim built in $MMKIT_BUILD"; exit 77; }
echo "$checked shims print their statistics line"
