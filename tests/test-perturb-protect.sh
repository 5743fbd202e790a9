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
# A block never protected needs no descriptor to be made anonymous memory:
# with none left, the calls end as with glibc (MADV_WIPEONFORK failed with
# EINVAL on a block left a file mapping).
for call in mlock dontfork wipeonfork; do
	run plain "nofd $call" -u LD_PRELOAD -u MALLOC_PERTURB_
	run shim "nofd $call" LD_PRELOAD="$shim" MALLOC_PERTURB_=65
	grep -q 'refpage' "$tmp/shim.err" ||
		fail "nofd $call: the block is not the shim's: $(cat "$tmp/shim.err")"
	same "nofd $call: with no descriptor left, the shim changes the outcome" plain shim
done
# A guard page (PROT_NONE) of a block is never made readable while the
# shim copies it (another thread's read of it would not fault): prot-spy.so,
# preloaded after the shim, sees every mprotect the shim makes.
cc -std=gnu11 -O2 -Wall -Wextra -Werror -shared -fPIC -o "$tmp/prot-spy.so" \
	"$top/tests/perturb/prot-spy.c" -ldl || fail "prot-spy.so does not build"
build guard-window -ldl
program=guard-window
for call in mlock dontfork; do
	run guard "$call" LD_PRELOAD="$shim $tmp/prot-spy.so" MALLOC_PERTURB_=65
	[ "$(cat "$tmp/guard.rc")" = 0 ] ||
		fail "guard page, $call: $(cat "$tmp/guard.out" "$tmp/guard.err")"
done
echo "ok: mlock, MADV_DONTFORK and MADV_WIPEONFORK keep each page's protection, as with glibc, and need no descriptor for a block never protected"
