#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# Runs each libFuzzer target of BUILD_DIR/fuzz for SECONDS, one after the
# other, from its committed seed corpus (tests/fuzz/corpus/TARGET, read
# only: what a run finds goes to a scratch directory).  Prints the
# executions of each; a crash fails, its input kept in BUILD_DIR/fuzz/ to
# be added to the corpus with the fix.  Each target's whole output is
# appended to the file MMKIT_TEST_LOG names, if any.
set -u

[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR SECONDS" >&2; exit 2; }
build=$1 secs=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0 total=0

for bin in "$build"/fuzz/fuzz-*; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin")
	seeds="$top/tests/fuzz/corpus/$name"
	[ -d "$seeds" ] || { echo "FAIL  $name: no seed corpus $seeds"; failed=1; continue; }
	mkdir -p "$scratch/$name"
	"$bin" -max_total_time="$secs" -print_final_stats=1 -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix="$build/fuzz/$name-" "$scratch/$name" "$seeds" \
		>"$scratch/$name.log" 2>&1
	rc=$?
	[ -z "${MMKIT_TEST_LOG:-}" ] ||
		{ echo "---- $name: exit $rc"; cat "$scratch/$name.log"; } >>"$MMKIT_TEST_LOG"
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$scratch/$name.log")
	if [ $rc -ne 0 ]; then
		failed=1
		echo "FAIL  $name: exit $rc"
		grep -v '^#' "$scratch/$name.log" | tail -n 40 | sed 's/^/    | /'
		continue
	fi
	total=$((total + ${execs:-0}))
	printf 'PASS  %-24s %10s executions in %ss, %s seeds\n' "$name" "$execs" "$secs" \
		"$(ls "$seeds" | wc -l)"
done
echo "fuzz: $total executions in all"
exit $failed
