#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# libmmkit-openssl.so keeps OpenSSL's secure-heap semantics: a program linked
# against libcrypto (tests/openssl/secure-heap.c, built here) runs with the
# shim preloaded and checks each function; run without it, the same program
# must fail (it asks for the shim), so it cannot pass against stock OpenSSL.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
shim="$MMKIT_BUILD/libmmkit-openssl.so"
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -f "$shim" ] || fail "no $shim"
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || { echo "SKIP: no C compiler ($cc)"; exit 77; }
[ -f /usr/include/openssl/crypto.h ] ||
	{ echo "SKIP: no OpenSSL headers (tools/install-deps: libssl-dev)"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cc" -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -pthread -I"$top/tests" \
	-o "$tmp/secure-heap" "$top/tests/openssl/secure-heap.c" -lcrypto -ldl ||
	fail "tests/openssl/secure-heap.c does not build"

LD_PRELOAD="$shim" "$tmp/secure-heap"
rc=$?
[ "$rc" -eq 0 ] || exit "$rc"

"$tmp/secure-heap" >"$tmp/out" 2>&1 &&
	fail "the semantics test passes without the shim: it proves nothing"
grep -q "run with LD_PRELOAD" "$tmp/out" || { cat "$tmp/out" >&2; fail "without the shim: unexpected failure"; }
exit 0
