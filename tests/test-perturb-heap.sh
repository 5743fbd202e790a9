#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# libmmkit-perturb.so is a correct malloc with MALLOC_PERTURB_'s fills:
# tests/perturb/heap-check.c (every byte read before written is the fill,
# calloc zero, freed memory, realloc across sizes, alignment, threads, fork,
# malloc_usable_size, bad sizes) passes with the shim preloaded for several
# fill bytes and without MALLOC_PERTURB_ (pass-through), and fails with
# glibc's own MALLOC_PERTURB_ (its fill costs RSS and skips tcache chunks):
# the checks can fail.
set -u
. "$(dirname "$0")/perturb/shim-test.sh"
build heap-check -pthread

for byte in 85 1 0x7f 255; do
	LD_PRELOAD="$shim" MALLOC_PERTURB_=$byte "$tmp/heap-check" ||
		fail "heap-check with the shim, MALLOC_PERTURB_=$byte"
done
env -u MALLOC_PERTURB_ LD_PRELOAD="$shim" "$tmp/heap-check" ||
	fail "heap-check with the shim and no MALLOC_PERTURB_ (pass-through)"
if MALLOC_PERTURB_=85 "$tmp/heap-check" >"$tmp/glibc.out" 2>&1; then
	fail "heap-check passes on glibc's own MALLOC_PERTURB_: it checks nothing the shim adds"
fi
grep -q 'raised VmRSS' "$tmp/glibc.out" ||
	fail "glibc's MALLOC_PERTURB_ was not caught filling 64 MiB"
echo "ok: heap-check passes with the shim (85, 1, 0x7f, 255, unset), fails on glibc alone"
