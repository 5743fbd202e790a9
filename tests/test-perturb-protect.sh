#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The perturb shim's madvise and mlock keep a block's protection (issue
# 29): they make a large block anonymous memory before the kernel sees the
# call, and that used to leave all of it read-write, so a write to a page
# the program had made read-only went through where glibc's block faults.
# tests/perturb/protect-lock.c protects a 1 MiB posix_memalign() block
# (all read-only; or read-only, read-execute, no access and read-write
# pieces), calls mlock or madvise (MADV_DONTFORK, MADV_WIPEONFORK) on it,
# prints the result, the protection of each piece and whether the bytes
# are kept, then writes to a read-only page: each run must end as with
# glibc alone and with glibc's own MALLOC_PERTURB_ (SIGSEGV, the same
# output).
set -u
. "$(dirname "$0")/perturb/shim-test.sh"
build protect-lock
program=protect-lock
ulimit -c 0 2>/dev/null

for prot in readonly mixed; do
	for call in mlock dontfork wipeonfork; do
		run plain "$prot $call" -u LD_PRELOAD -u MALLOC_PERTURB_
		run glibc "$prot $call" -u LD_PRELOAD MALLOC_PERTURB_=65
		run shim "$prot $call" LD_PRELOAD="$shim" MALLOC_PERTURB_=65
		# The write to a read-only page faulted: the test can fail.
		[ "$(cat "$tmp/plain.rc")" -gt 128 ] ||
			fail "$prot $call: the write to a read-only page did not fault with glibc"
		grep -q 'refpage' "$tmp/shim.err" ||
			fail "$prot $call: the block is not the shim's: $(cat "$tmp/shim.err")"
		same "$prot $call: glibc's MALLOC_PERTURB_ changes the outcome" plain glibc
		same "$prot $call: the shim changes the outcome" plain shim
	done
done
echo "ok: mlock, MADV_DONTFORK and MADV_WIPEONFORK keep each page's protection, as with glibc"
