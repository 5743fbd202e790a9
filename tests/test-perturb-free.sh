#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The perturb shim hides no bad free from glibc (issue 19):
# tests/perturb/bad-free.c frees twice (from the thread cache, a fast bin,
# the unsorted bin), frees a static buffer and an interior pointer, and
# each run ends the same way with the shim (MALLOC_PERTURB_=90) as with
# glibc alone: the same exit status (134 where glibc aborts) and the same
# output.  Then the same under glibc's own checks, libc_malloc_debug.so.0
# with MALLOC_CHECK_=3, preloaded after the shim as `mmkit run` does with
# a caller's LD_PRELOAD.
set -u
modes="double double-fast double-big non-heap interior"
. "$(dirname "$0")/perturb/shim-test.sh"
build bad-free
program=bad-free
# The core dumps of the aborts are not wanted.
ulimit -c 0 2>/dev/null

run probe shim LD_PRELOAD="$shim" MALLOC_PERTURB_=90
grep -qx 'large block byte: 165' "$tmp/probe.out" || fail "the shim is not in use (no 90 ^ 0xff fill)"

for mode in $modes; do
	run "plain-$mode" "$mode" -u LD_PRELOAD -u MALLOC_PERTURB_
	run "glibc-$mode" "$mode" -u LD_PRELOAD MALLOC_PERTURB_=90
	run "shim-$mode" "$mode" LD_PRELOAD="$shim" MALLOC_PERTURB_=90
	same "$mode: glibc's MALLOC_PERTURB_ changes the outcome" "plain-$mode" "glibc-$mode"
	same "$mode: the shim changes the outcome" "plain-$mode" "shim-$mode"
done
for mode in double double-fast double-big interior; do
	[ "$(cat "$tmp/plain-$mode.rc")" = 134 ] || fail "$mode: glibc did not abort: nothing checked"
done
echo "ok: $modes end as with glibc alone"

debug=libc_malloc_debug.so.0
# The dynamic loader says so on stderr when it cannot preload a library.
if [ -n "$(env LD_PRELOAD=$debug true 2>&1)" ]; then
	echo "ok (no $debug: glibc's MALLOC_CHECK_ not tried)"
	exit 0
fi
run debug-probe shim LD_PRELOAD="$shim $debug" MALLOC_PERTURB_=90 MALLOC_CHECK_=3
grep -qx 'large block byte: 165' "$tmp/debug-probe.out" ||
	fail "the shim is not in use before $debug"
for mode in $modes; do
	run "debug-$mode" "$mode" LD_PRELOAD="$debug" MALLOC_CHECK_=3
	run "debug-shim-$mode" "$mode" LD_PRELOAD="$shim $debug" MALLOC_PERTURB_=90 MALLOC_CHECK_=3
	same "$mode under MALLOC_CHECK_=3: the shim changes the outcome" \
		"debug-$mode" "debug-shim-$mode"
done
for mode in double double-fast double-big interior; do
	[ "$(cat "$tmp/debug-$mode.rc")" = 134 ] ||
		fail "$mode: glibc's MALLOC_CHECK_=3 did not abort: nothing checked"
done
echo "ok: the same under $debug and MALLOC_CHECK_=3"
