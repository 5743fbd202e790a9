#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The perturb shim costs next to nothing in memory up front (issue 20):
# xz -dc of a 13 KB file, maximum RSS (GNU time's %M), medians of 7 runs
# with and without the shim and MALLOC_PERTURB_=85.
#  - Compressed with a 64 KiB dictionary, xz never allocates a large block:
#    the shim may add at most 15 % (its code; about 3 % measured).
#  - Compressed with -9, xz allocates a 64 MiB dictionary and touches 13 KB
#    of it: the shim may add what the reference-page backend itself costs
#    for one piece (tests/perturb/refpage-floor.c, measured here) plus
#    15 %: no reference page, pattern file or table is paid before or
#    beyond what the first large block needs.
# The bound is wider than the 10 % goal because maximum RSS varies by
# about 100 KiB from run to run; what it catches is the shim paying a
# pattern fill (2 MiB, doubling xz's RSS) where it should not.
set -u
shim="$MMKIT_BUILD/libmmkit-perturb.so"
top=$(cd "$(dirname "$0")/.." && pwd)
runs=7
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -f "$shim" ] || { echo "SKIP: no $shim (built without the shims)"; exit 77; }
[ -f "$MMKIT_BUILD/libmmkit.a" ] || { echo "SKIP: no $MMKIT_BUILD/libmmkit.a"; exit 77; }
command -v xz >/dev/null 2>&1 || { echo "SKIP: no xz (tools/install-deps: xz-utils)"; exit 77; }
command -v cc >/dev/null 2>&1 || { echo "SKIP: no C compiler (cc)"; exit 77; }
/usr/bin/time -f %M true >/dev/null 2>&1 ||
	{ echo "SKIP: no GNU time at /usr/bin/time (tools/install-deps: time)"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -std=gnu11 -O2 -Wall -Wextra -Werror -I"$top/include" -o "$tmp/refpage-floor" \
	"$top/tests/perturb/refpage-floor.c" "$MMKIT_BUILD/libmmkit.a" -pthread ||
	fail "refpage-floor does not build"
# The 13,000 bytes of tests/test-perturb-xz.sh.
awk 'BEGIN { s = 1; for (i = 0; i < 1300; i++) {
	s = (s * 1103515245 + 12345) % 2147483648; printf "line %05d %08x mmkit\n", i, s } }' |
	head -c 13000 >"$tmp/in"
xz -9 -c "$tmp/in" >"$tmp/big-dict.xz" || fail "xz -9"
xz --lzma2=dict=64KiB -c "$tmp/in" >"$tmp/small-dict.xz" || fail "xz with a 64 KiB dictionary"

# median COMMAND...: the median maximum RSS in KiB of $runs runs; output to /dev/null.
median() {
	i=0
	while [ $i -lt $runs ]; do
		/usr/bin/time -o "$tmp/kib" -f %M "$@" >/dev/null 2>&1 || fail "$* failed"
		cat "$tmp/kib"
		i=$((i + 1))
	done | sort -n | sed -n "$(((runs + 1) / 2))p"
}

plain_small=$(median env -u LD_PRELOAD -u MALLOC_PERTURB_ xz -dc "$tmp/small-dict.xz")
shim_small=$(median env LD_PRELOAD="$shim" MALLOC_PERTURB_=85 xz -dc "$tmp/small-dict.xz")
plain_big=$(median env -u LD_PRELOAD -u MALLOC_PERTURB_ xz -dc "$tmp/big-dict.xz")
shim_big=$(median env LD_PRELOAD="$shim" MALLOC_PERTURB_=85 xz -dc "$tmp/big-dict.xz")
floor_none=$(median "$tmp/refpage-floor" none)
floor_map=$(median "$tmp/refpage-floor" refpage)
floor=$((floor_map > floor_none ? floor_map - floor_none : 0))

echo "xz -dc, 64 KiB dictionary: ${plain_small} KiB, with the shim ${shim_small} KiB"
echo "xz -dc, 64 MiB dictionary: ${plain_big} KiB, with the shim ${shim_big} KiB" \
	"(the backend's own cost for one piece: ${floor} KiB)"
[ $((shim_small * 100)) -le $((plain_small * 115)) ] ||
	fail "the shim adds more than 15 % to a program without large blocks"
[ $(((shim_big - floor) * 100)) -le $((plain_big * 115)) ] ||
	fail "the shim adds more than the backend's ${floor} KiB and 15 % to xz -dc"
echo "ok: the shim adds $((shim_small - plain_small)) KiB without large blocks," \
	"$((shim_big - plain_big - floor)) KiB beyond the backend's with one"
