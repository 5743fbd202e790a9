#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The real-kernel tier: boots each kernel named on the command line under
# QEMU (software emulation) with a busybox initramfs that runs the test
# suite, then judges the console: the guest runner's summary line and exit
# code must be there and clean, and the kernel must not have logged BUG:,
# WARNING:, Oops:, Call Trace:, "sleeping function called" (DEBUG_ATOMIC_SLEEP)
# or "suspicious RCU usage" (PROVE_RCU).  QEMU's own exit code says nothing.
#
#   tests/kernels/run.sh debian-amd64 debian-arm64 debian-arm64-mte \
#	debian612-amd64 debian612-arm64-mte custom-amd64 custom612-amd64 bench-amd64
#
# Kernels and packages are cached in $MMKIT_KERNEL_CACHE
# (default ~/.cache/mmkit-kernels); a fresh machine downloads them.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
here="$top/tests/kernels"
cache=${MMKIT_KERNEL_CACHE:-$HOME/.cache/mmkit-kernels}
boot_timeout=${MMKIT_BOOT_TIMEOUT:-1800}
out="$top/build-kernels"
mkdir -p "$cache" "$out"

. "$here/lib.sh"

prebuild "$@"
# The guests' counts add up to the tier's closing line; a tier that fails
# without a clean summary (no boot, panic, kernel warning) counts one failure.
passed=0 failed=0 skipped=0
for tier in "$@"; do
	echo "=== kernel tier: $tier"
	rm -f "$out/$tier.console.log"
	run_tier "$tier"
	ok=$?
	counts=$(grep -a -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' \
		"$out/$tier.console.log" 2>/dev/null | tail -n1 | tr -d ',')
	set -- $counts 0 0 0 0 0 0
	passed=$((passed + $1)) skipped=$((skipped + $5))
	if [ $ok -eq 0 ]; then
		echo "=== $tier: ok"
	else
		echo "=== $tier: FAILED"
		failed=$((failed + ($3 > 0 ? $3 : 1)))
	fi
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
