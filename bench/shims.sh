#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# bench/shims.sh [BUILD_DIR]: the three shims beside the systems they
# replace, in one run, for the README's table:
#   - libmmkit-sodium.so beside libsodium (mmkit bench sodium): time per
#     sodium_malloc(32)+sodium_free, live allocations before failure, VMAs
#     and pages per live allocation;
#   - libmmkit-openssl.so beside OpenSSL's secure heap and plain malloc
#     (bench/openssl-secure-heap.sh): time per 32-byte alloc+free, and
#     keys and signatures per second;
#   - libmmkit-perturb.so beside glibc's MALLOC_PERTURB_ (bench/perturb-xz.sh):
#     xz -9's time, max RSS and page faults.
# Each part measures its rows side by side, in turns, and prints medians
# and ratios.  About two minutes.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)

echo "# $(uname -sr), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "## libsodium's guarded heap"
"$build/mmkit" bench sodium --rounds 5
echo "## OpenSSL's secure heap"
sh "$top/bench/openssl-secure-heap.sh" "$build" 5
echo "## MALLOC_PERTURB_"
sh "$top/bench/perturb-xz.sh" "$build" 11
