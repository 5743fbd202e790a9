#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# pthread_cancel(3) of threads inside the perturb shim's malloc, mlock and
# free of large blocks leaves no lock held (tests/perturb/cancel-lock.c):
# the shim made its block anonymous memory under its table lock, reading
# /proc/self/maps, and a thread cancelled at that read died holding the
# lock; the next large block then waited for good (a hang: LIMIT seconds,
# far above the ~1 s a run takes).  The test passes with glibc alone too.
set -u
limit=${LIMIT:-30}
. "$(dirname "$0")/perturb/shim-test.sh"
build cancel-lock -pthread

for preload in "" "$shim"; do
	MMKIT_STATS=1 MALLOC_PERTURB_=0x41 LD_PRELOAD="$preload" \
		timeout -k 5 "$limit" "$tmp/cancel-lock" >"$tmp/out" 2>&1
	rc=$?
	[ $rc -eq 124 ] &&
		fail "LD_PRELOAD=$preload: hung (still running after ${limit}s): a lock is held by a cancelled thread"
	[ $rc -eq 0 ] || fail "LD_PRELOAD=$preload: exit $rc: $(cat "$tmp/out")"
done
# The shim served the blocks: otherwise nothing was tested.
grep -q 'large_blocks=[1-9]' "$tmp/out" || fail "the shim made no large block: $(cat "$tmp/out")"
cat "$tmp/out"
