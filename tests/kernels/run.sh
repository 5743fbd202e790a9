#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The real-kernel tier: boots each kernel named on the command line under
# QEMU (software emulation) with a busybox initramfs that runs the test
# suite, then judges the console: the guest runner's summary line and exit
# code must be there and clean, and the kernel must not have logged BUG:,
# WARNING:, Oops: or Call Trace:.  QEMU's own exit code says nothing.
#
#   tests/kernels/run.sh debian-amd64 debian-arm64
#
# Kernels and packages are cached in $MMKIT_KERNEL_CACHE
# (default ~/.cache/mmkit-kernels); a fresh machine downloads them.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
here="$top/tests/kernels"
cache=${MMKIT_KERNEL_CACHE:-$HOME/.cache/mmkit-kernels}
boot_timeout=${MMKIT_BOOT_TIMEOUT:-1800}
out="$top/build-kernels"
mkdir -p "$cache" "$out"

. "$here/lib.sh"

status=0
for tier in "$@"; do
	echo "=== kernel tier: $tier"
	if ! run_tier "$tier"; then
		echo "=== $tier: FAILED"
		status=1
	else
		echo "=== $tier: ok"
	fi
done
exit $status
