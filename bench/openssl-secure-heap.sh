#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# OpenSSL's secure heap beside libmmkit-openssl.so, side by side in one run:
#
#   bench/openssl-secure-heap.sh [BUILD_DIR [ROUNDS]]      (build, 5)
#
# Builds bench/openssl-secure-heap.c against libcrypto and runs it ROUNDS
# times in each of three set-ups, one round of each in turn (the machine's
# noise falls on all three alike): OpenSSL's own heap
# (CRYPTO_secure_malloc_init(1 MiB, 16)), no secure heap at all (what the
# openssl command and Python get: malloc), and the shim preloaded.  Prints
# the medians and the shim's ratios to both; about 20 s with 5 rounds.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-5}
shim="$build/libmmkit-openssl.so"
cc=${CC:-cc}

[ -f "$shim" ] || { echo "no $shim: run make first" >&2; exit 1; }
case $rounds in ''|*[!0-9]*|0) echo "ROUNDS must be a positive number" >&2; exit 2 ;; esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cc" -std=gnu11 -Wall -Wextra -Werror -O2 -o "$tmp/bench" \
	"$top/bench/openssl-secure-heap.c" -lcrypto

i=0
while [ "$i" -lt "$rounds" ]; do
	"$tmp/bench" --init | sed 's/^/openssl /' >>"$tmp/results"
	"$tmp/bench" | sed 's/^/malloc /' >>"$tmp/results"
	MMKIT_STATS=1 LD_PRELOAD="$shim" "$tmp/bench" 2>>"$tmp/stats" |
		sed 's/^/mmkit /' >>"$tmp/results"
	i=$((i + 1))
done
# Proof that the shim served the third set-up, and from where.
grep -q '^mmkit-openssl: .* allocations=[1-9]' "$tmp/stats" ||
	{ cat "$tmp/stats" >&2; echo "the shim made no allocation" >&2; exit 1; }
backend=$(sed -n 's/.* in_memfd_secret=\([0-9]*\) in_fallback=\([0-9]*\) .*/\1 \2/p' "$tmp/stats" |
	awk '{ s += $1; f += $2 } END { print (f ? "mlock fallback" : "memfd_secret") }')

echo "OpenSSL $(openssl version 2>/dev/null | cut -d' ' -f2) secure heap vs libmmkit-openssl.so ($backend), medians of $rounds rounds"
sort -k2,2 -k1,1 -k3,3g "$tmp/results" | awk -v rounds="$rounds" '
	function median(setup, m,   n) {
		n = count[setup, m]
		return n % 2 ? v[setup, m, (n + 1) / 2] : (v[setup, m, n / 2] + v[setup, m, n / 2 + 1]) / 2
	}
	{
		count[$1, $2]++
		v[$1, $2, count[$1, $2]] = $3
		if (!seen[$2]++)
			order[++metrics] = $2
	}
	END {
		printf "%-24s %14s %14s %14s %12s %12s\n", "figure", "openssl heap", "malloc",
		       "mmkit shim", "mmkit/heap", "mmkit/malloc"
		for (i = 1; i <= metrics; i++) {
			m = order[i]
			o = median("openssl", m); p = median("malloc", m); s = median("mmkit", m)
			printf "%-24s %14.1f %14.1f %14.1f %11.2fx %11.2fx\n", m, o, p, s, s / o, s / p
		}
		print "(alloc_free_32_ns: lower is better; *_per_s: higher is better)"
	}'
