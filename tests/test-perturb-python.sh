#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# A demanding user of malloc on libmmkit-perturb.so: Debian's Python runs
# its own test modules test_list test_dict test_bytes test_mmap
# test_threading test_lzma with the shim preloaded and MALLOC_PERTURB_=85,
# and each passes as it does without the shim (run too, for the log and
# the durations).  Timing-sensitive tests that fail once are run again
# (regrtest -w), with and without the shim alike.  The interpreter is
# /usr/bin/python3 (python3 on PATH may be another build), the modules come
# from libpython3.11-testsuite.
set -u
shim="$MMKIT_BUILD/libmmkit-perturb.so"
py=/usr/bin/python3
modules="test_list test_dict test_bytes test_mmap test_threading test_lzma"
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -f "$shim" ] || { echo "SKIP: no $shim (built without the shims)"; exit 77; }
[ -x "$py" ] || { echo "SKIP: no $py (tools/install-deps: python3)"; exit 77; }
"$py" -c 'import test.test_list, test.test_lzma' 2>/dev/null ||
	{ echo "SKIP: no Python test suite (tools/install-deps: libpython3.11-testsuite)"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The shim is in the interpreter: a large malloc reads as 85 ^ 0xff.
LD_PRELOAD="$shim" MALLOC_PERTURB_=85 "$py" -c '
import ctypes
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
p = libc.malloc(1 << 20)
assert ctypes.string_at(p + (1 << 19), 64) == b"\xaa" * 64, "large malloc not filled"
maps = open("/proc/self/maps").read()
assert "libmmkit-perturb.so" in maps and "mmkit-refpage" in maps, "shim not in use"
' || fail "the shim is not in use in $py, or its large memory is not filled"

for m in $modules; do
	start=$(date +%s)
	env -u MALLOC_PERTURB_ -u LD_PRELOAD "$py" -m test -w "$m" >"$tmp/$m.plain" 2>&1
	plain=$? mid=$(date +%s)
	LD_PRELOAD="$shim" MALLOC_PERTURB_=85 "$py" -m test -w "$m" >"$tmp/$m.shim" 2>&1
	shimmed=$? end=$(date +%s)
	echo "$m: without the shim exit $plain in $((mid - start)) s, with it exit $shimmed in $((end - mid)) s"
	if [ "$shimmed" -ne 0 ]; then
		tail -n 30 "$tmp/$m.shim" >&2
		fail "$m fails with the shim (without it: exit $plain)"
	fi
done
echo "ok: $modules pass with the shim and MALLOC_PERTURB_=85"
