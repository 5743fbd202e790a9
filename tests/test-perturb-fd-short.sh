#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# A passing failure does not send the perturb shim's later large blocks to
# glibc (issue 29): tests/perturb/fd-short.c asks for a large block with no
# descriptor left, where the shim cannot make its reference pages and
# glibc serves it, filled, then for another once the limit is back, which
# the shim must serve.  The shim used to remember the failure for the life
# of the process: every large block was then glibc's.
set -u
. "$(dirname "$0")/perturb/shim-test.sh"
build fd-short

MMKIT_STATS=1 MALLOC_PERTURB_=0x41 LD_PRELOAD="$shim" "$tmp/fd-short" 2>"$tmp/err" ||
	fail "fd-short: $(cat "$tmp/err")"
grep -q 'large_blocks=1 .*large_from_glibc=1 ' "$tmp/err" ||
	fail "not one block from glibc (no descriptor) and one from reference pages: $(cat "$tmp/err")"
echo "ok: the block asked for with no descriptor left is glibc's, the next the shim's"
