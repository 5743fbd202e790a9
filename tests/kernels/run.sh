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
#	debian612-amd64 debian612-arm64-mte custom-amd64 custom612-amd64 bench-amd64 \
#	custom612-arm64-mte
#
# Kernels and packages are cached in $MMKIT_KERNEL_CACHE
# (default ${XDG_CACHE_HOME:-~/.cache}/mmkit-kernels, beside mmkit's other
# caches); a fresh machine downloads them.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
here="$top/tests/kernels"
cache=${MMKIT_KERNEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mmkit-kernels}
boot_timeout=${MMKIT_BOOT_TIMEOUT:-1800}
out="$top/build-kernels"
mkdir -p "$cache" "$out"

. "$here/lib.sh"
. "$top/tests/pool.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
began=$(date +%s)

# stage LABEL SECONDS: a row of the time table.
stage() {
	printf '%-58.58s %6s\n' "$1" "$2" >>"$work/times"
}
: >"$work/times"

# The guests' counts add up to the tier's closing line; a tier that fails
# without a clean summary (no boot, panic, kernel warning) counts one failure.
passed=0 failed=0 skipped=0
tier_result() {	# tier, 0 when it passed
	counts=$(grep -a -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' \
		"$out/$1.console.log" 2>/dev/null | tail -n1 | tr -d ',')
	set -- "$1" "$2" $counts 0 0 0 0 0 0
	passed=$((passed + $3)) skipped=$((skipped + $7))
	if [ "$2" -eq 0 ]; then
		echo "=== $1: ok"
	else
		echo "=== $1: FAILED"
		failed=$((failed + ($5 > 0 ? $5 : 1)))
	fi
}

pool_done() {	# tier, exit code, seconds, output
	echo "=== kernel tier: $1 (guest)"
	cat "$4"
	stage "$1: boot, benchmarks and suite in the guest" "$3"
	sed -n 's/^mmkit-guest: \(bench-[a-z]*\) exit [0-9]* after \([0-9]*\)s.*/\1 \2/p' \
		"$out/$1.console.log" 2>/dev/null | tr -d '\r' |
		while read -r bench secs; do
			stage "$1:   of which $bench" "$secs"
		done
	tier_result "$1" "$2"
}

# The self-built kernels build in the background; the tiers are prepared
# one after the other (they share the cache and the static tests) and
# their guests boot MMKIT_KERNEL_JOBS at a time (as many as the cores: an
# emulated guest mostly keeps one busy).  Debian's tiers come first, so a
# self-built kernel has until they are done to build.
prebuild "$@"
pool_init "${MMKIT_KERNEL_JOBS:-$(nproc)}" "$work"
for tier in "$@"; do
	echo "=== kernel tier: $tier"
	rm -f "$out/$tier.console.log"
	start=$(date +%s)
	if prepare_tier "$tier"; then
		stage "$tier: kernel (download, or wait for its build)" "$kernel_secs"
		stage "$tier: modules, tests, initramfs" $(( $(date +%s) - start - kernel_secs ))
		echo "=== kernel tier: $tier: booting"
		pool_run "$tier" boot_tier "$tier"
	else
		tier_result "$tier" 1
	fi
done
pool_drain
for built in "$out"/prebuilt.*; do
	[ -f "$built" ] || continue
	stage "${built##*/prebuilt.}: kernel build (background, nice 19; 0: cached)" "$(cat "$built")"
done
echo "=== time (stage, seconds; ${MMKIT_KERNEL_JOBS:-$(nproc)} guests at a time)"
cat "$work/times"
printf '%-58s %6s\n' "wall" $(( $(date +%s) - began ))
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
