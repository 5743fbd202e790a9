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
shim="$MMKIT_BUILD/libmmkit-perturb.so"
top=$(cd "$(dirname "$0")/.." && pwd)
modes="double double-fast double-big non-heap interior"
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -f "$shim" ] || { echo "SKIP: no $shim (built without the shims)"; exit 77; }
command -v cc >/dev/null 2>&1 || { echo "SKIP: no C compiler (cc)"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o "$tmp/bad-free" \
	"$top/tests/perturb/bad-free.c" || fail "bad-free does not build"
# The core dumps of the aborts are not wanted.
ulimit -c 0 2>/dev/null

# run NAME MODE [VAR=VALUE...]: bad-free MODE's exit status and output in $tmp/NAME.
run() {
	name=$1 mode=$2
	shift 2
	env "$@" "$tmp/bad-free" "$mode" >"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}

# same WHAT BASE SHIMMED: the two runs ended alike.
same() {
	[ "$(cat "$tmp/$2.rc")" = "$(cat "$tmp/$3.rc")" ] &&
		cmp -s "$tmp/$2.out" "$tmp/$3.out" && return 0
	echo "without the shim: exit $(cat "$tmp/$2.rc"), $(cat "$tmp/$2.out" "$tmp/$2.err")" >&2
	echo "with the shim:    exit $(cat "$tmp/$3.rc"), $(cat "$tmp/$3.out" "$tmp/$3.err")" >&2
	fail "$1"
}

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
