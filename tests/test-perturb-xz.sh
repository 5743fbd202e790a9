#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# A real program on libmmkit-perturb.so: xz -9 -T1 (which allocates about
# 670 MiB and touches little of it) compresses a 13 KB file to the same
# bytes without MALLOC_PERTURB_, with glibc's, and with the shim's, and
# the result decompresses to the input.  bench/perturb-xz.sh measures the
# three side by side.
set -u
shim="$MMKIT_BUILD/libmmkit-perturb.so"
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -f "$shim" ] || { echo "SKIP: no $shim (built without the shims)"; exit 77; }
command -v xz >/dev/null 2>&1 || { echo "SKIP: no xz (tools/install-deps: xz-utils)"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# 13,000 bytes of numbered lines with pseudo-random words: the same every run.
awk 'BEGIN { s = 1; for (i = 0; i < 1300; i++) {
	s = (s * 1103515245 + 12345) % 2147483648; printf "line %05d %08x mmkit\n", i, s } }' |
	head -c 13000 >"$tmp/in"
[ "$(wc -c <"$tmp/in")" -eq 13000 ] || fail "input is not 13000 bytes"

env -u MALLOC_PERTURB_ xz -9 -T1 -c "$tmp/in" >"$tmp/plain.xz" || fail "xz without perturb"
MALLOC_PERTURB_=85 xz -9 -T1 -c "$tmp/in" >"$tmp/glibc.xz" || fail "xz with glibc's perturb"
"$MMKIT_BUILD/mmkit" run --perturb=85 -- xz -9 -T1 -c "$tmp/in" >"$tmp/shim.xz" ||
	fail "xz with the shim (mmkit run --perturb=85)"
cmp -s "$tmp/plain.xz" "$tmp/glibc.xz" || fail "glibc's perturb changed xz's output"
cmp -s "$tmp/plain.xz" "$tmp/shim.xz" || fail "the shim changed xz's output"
LD_PRELOAD="$shim" MALLOC_PERTURB_=85 xz -d -c "$tmp/shim.xz" >"$tmp/out" ||
	fail "xz -d with the shim"
cmp -s "$tmp/in" "$tmp/out" || fail "decompressed output differs from the input"
echo "ok: xz -9 -T1 output identical without perturb, with glibc's and with the shim's"
