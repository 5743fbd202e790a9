#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# fork(2) never hangs under the perturb shim (issue 29): a program that
# forks in a loop in one thread while another makes large blocks
# (tests/perturb/fork-loop.c), MALLOC_PERTURB_=0x41, run RUNS times with
# and RUNS times without a helper, each run stopped after LIMIT seconds: a
# run still going then is a hang and fails.  The helper,
# tests/perturb/slow-lock.c preloaded before the shim, makes every lock the
# shim takes wait 2 ms first: a lock order that fork and a large malloc
# take differently then hangs nearly every run (the shim's table lock and
# the library's files_lock did: 39 of 40 runs), where it hangs one run in
# a hundred or so without it (2 of 300).  docs/perturb-locks.md has more.
set -u
runs=${RUNS:-12}
limit=${LIMIT:-20}
. "$(dirname "$0")/perturb/shim-test.sh"
build fork-loop -pthread
build slow-lock -shared -fPIC -ldl

# run N PRELOAD: one run of fork-loop; a hang (timeout's 124) or any failure fails the test.
run() {
	MMKIT_STATS=1 MALLOC_PERTURB_=0x41 LD_PRELOAD="$2" \
		timeout -k 5 "$limit" "$tmp/fork-loop" >"$tmp/out" 2>&1
	rc=$?
	[ $rc -eq 124 ] && fail "run $1 (LD_PRELOAD=$2) hung: still running after ${limit}s"
	[ $rc -eq 0 ] || fail "run $1 (LD_PRELOAD=$2): exit $rc: $(cat "$tmp/out")"
	# The shim served the blocks: otherwise nothing was tested.
	grep -q 'large_blocks=[1-9]' "$tmp/out" ||
		fail "run $1: the shim made no large block: $(cat "$tmp/out")"
}

i=1
while [ $i -le "$runs" ]; do
	run $i "$tmp/slow-lock $shim"
	i=$((i + 1))
done
while [ $i -le $((2 * runs)) ]; do
	run $i "$shim"
	i=$((i + 1))
done
echo "ok: $((2 * runs)) runs of fork-loop ($runs with every shim lock slowed), none hung"
