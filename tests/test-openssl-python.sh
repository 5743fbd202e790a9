#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# Python's own test_ssl and test_hashlib (Debian's /usr/bin/python3, its
# libcrypto.so.3 loaded by the _ssl and _hashlib modules) give the same
# results with libmmkit-openssl.so preloaded as without: the same tests
# pass, fail and are skipped, test by test, from regrtest's JUnit XML.
# The two runs go side by side (the suite mostly waits on sockets).  The
# preloaded run's MMKIT_STATS=1 line must count secure allocations made and
# none failed, so the comparison is not of two runs without the shim.
# First, a pointer from OPENSSL_malloc() freed through the shim must reach
# libcrypto.
set -u
shim="$MMKIT_BUILD/libmmkit-openssl.so"
python=/usr/bin/python3
modules="test_ssl test_hashlib"
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -f "$shim" ] || fail "no $shim"
[ -x "$python" ] || { echo "SKIP: no $python (tools/install-deps: python3)"; exit 77; }
"$python" -c 'import importlib.util, sys
sys.exit(importlib.util.find_spec("test.test_ssl") is None)' 2>/dev/null ||
	{ echo "SKIP: $python has no test suite (tools/install-deps: libpython3.11-testsuite)"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || fail "cannot enter $tmp"

# Python loads libcrypto with dlopen(RTLD_LOCAL), out of RTLD_NEXT's reach:
# the shim must still find CRYPTO_free for a pointer that is not a secret.
MMKIT_STATS=1 LD_PRELOAD="$shim" "$python" -c '
import ctypes, ssl, sys
crypto = ctypes.CDLL("libcrypto.so.3")
shim = ctypes.CDLL(sys.argv[1])
crypto.CRYPTO_malloc.restype = ctypes.c_void_p
p = crypto.CRYPTO_malloc(ctypes.c_size_t(64), None, 0)
assert p and not shim.CRYPTO_secure_allocated(ctypes.c_void_p(p))
shim.CRYPTO_secure_free(ctypes.c_void_p(p), None, 0)
' "$shim" 2>"$tmp/foreign" || { cat "$tmp/foreign" >&2; fail "python: freeing a plain pointer through the shim"; }
grep -q ' non_secure_frees=1$' "$tmp/foreign" ||
	{ cat "$tmp/foreign" >&2; fail "python: the plain pointer did not go to CRYPTO_free"; }

# shellcheck disable=SC2086
"$python" -m test --junit-xml "$tmp/stock.xml" $modules >"$tmp/stock.log" 2>&1 &
stock=$!
# shellcheck disable=SC2086
MMKIT_STATS=1 LD_PRELOAD="$shim" "$python" -m test --junit-xml "$tmp/shim.xml" $modules \
	>"$tmp/shim.log" 2>&1 &
shimmed=$!
wait "$stock"
stock_rc=$?
wait "$shimmed"
shim_rc=$?

for run in stock shim; do
	[ -s "$tmp/$run.xml" ] || { tail -n 30 "$tmp/$run.log" >&2; fail "the $run run wrote no results"; }
done
stats=$(grep '^mmkit-openssl: ' "$tmp/shim.log" | tail -n 1)
[ -n "$stats" ] || { tail -n 30 "$tmp/shim.log" >&2; fail "the preloaded run printed no stats line"; }
echo "  $stats"
allocs=$(echo "$stats" | sed -n 's/.* allocations=\([0-9]*\) .*/\1/p')
[ "${allocs:-0}" -gt 0 ] || fail "no secure allocation of Python's libcrypto reached the shim"
echo "$stats" | grep -q ' failed=0 ' || fail "secure allocations failed"

# Each run's outcome per test; the test fails on any difference.
"$python" - "$tmp/stock.xml" "$tmp/shim.xml" <<'EOF'
import collections, sys
import xml.etree.ElementTree as ET

def outcomes(path):
    result = {}
    for case in ET.parse(path).iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("skipped", "failure", "error")]
        result[case.get("name")] = kinds[0] if kinds else "passed"
    return result

stock, shim = outcomes(sys.argv[1]), outcomes(sys.argv[2])
if not any(name.startswith("test.test_ssl.") for name in stock):
    print("SKIP: test_ssl ran no test here")
    sys.exit(77)
for label, res in (("without the shim", stock), ("with the shim   ", shim)):
    counts = collections.Counter(res.values())
    print("  %s: %d tests: %d passed, %d skipped, %d failed, %d errors" % (label, len(res),
          counts["passed"], counts["skipped"], counts["failure"], counts["error"]))
differ = sorted(n for n in set(stock) | set(shim) if stock.get(n) != shim.get(n))
for name in differ:
    print("  %s: %s without the shim, %s with it" % (name, stock.get(name, "absent"),
          shim.get(name, "absent")), file=sys.stderr)
sys.exit(1 if differ else 0)
EOF
rc=$?
[ "$rc" -ne 77 ] || exit 77
[ "$rc" -eq 0 ] || fail "the results differ (above)"
[ "$stock_rc" -eq "$shim_rc" ] || fail "regrtest exits $stock_rc without the shim, $shim_rc with it"
exit 0
