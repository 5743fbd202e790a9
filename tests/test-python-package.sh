#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The Python package as PyPI would get it (issue 33): `python -m build`
# from a read-only copy of the sources makes the sdist, then the wheel
# from the unpacked sdist (build's default: so the sdist must hold every
# file the C build reads); the wheel's name says what it is (CPython 3.11
# abi3, this platform); installed alone into a fresh venv it passes the
# binding's tests.  Offline: build, setuptools, pytest and psutil come
# from the wheelhouse tools/install-deps fills (tests/test-python.sh
# fetches what it lacks); no isolated build environment (--no-isolation),
# which would fetch setuptools.  Builds under $MMKIT_BUILD/python-package.
set -u
. "$(dirname "$0")/python-env.sh"
work=$build/python-package
fail() { echo "FAIL: $*"; exit 1; }

# venv NAME PACKAGE...: a fresh venv with the pinned PACKAGEs of $req.
venv() {
	v=$work/$1
	shift
	"$py" -m venv --without-pip "$v" || exit 1
	pins=$(for p in "$@"; do grep "^$p==" "$req"; done)
	"$py" -m pip --python "$v/bin/python" --quiet --disable-pip-version-check install \
		--no-index --find-links "$wheels" --no-compile $pins ||
		skip "no wheels of $pins in $wheels: run tools/install-deps or tests/test-python.sh"
}

chmod -R u+w "$work" 2>/dev/null
rm -rf "$work"
mkdir -p "$work/src" "$work/dist" || exit 1
venv builder build setuptools
copy_sources "$work/src"
readonly_run "$work/src" "$work/builder/bin/python" -m build --no-isolation --outdir "$work/dist" \
	"$work/src/bindings/python" >"$work/build.log" 2>&1 ||
	{ cat "$work/build.log"; fail "python -m build from a read-only copy"; }
chmod -R u+w "$work/src"

ls "$work/dist"/mmkit-0.1.0.tar.gz >/dev/null 2>&1 || fail "no sdist in $work/dist: $(ls "$work/dist")"
arch=$(uname -m)
wheel=$work/dist/mmkit-0.1.0-cp311-abi3-linux_$arch.whl
[ -f "$wheel" ] || fail "the wheel is not mmkit-0.1.0-cp311-abi3-linux_$arch.whl: $(ls "$work/dist")"
"$py" -m zipfile -e "$wheel" "$work/wheel-files" || fail "unzipping the wheel"
[ -f "$work/wheel-files/mmkit/_mmkit.abi3.so" ] || fail "the wheel lacks mmkit/_mmkit.abi3.so"
grep -qx "Tag: cp311-abi3-linux_$arch" "$work/wheel-files/mmkit-0.1.0.dist-info/WHEEL" ||
	fail "the wheel's WHEEL file does not say cp311-abi3-linux_$arch"

# Installed alone (no source tree near), the wheel passes the tests.
venv user pytest psutil
"$py" -m pip --python "$work/user/bin/python" --quiet --disable-pip-version-check install \
	--no-index --no-deps "$wheel" || fail "pip install of the wheel"
cp -r "$top/bindings/python/tests" "$work/tests" || exit 1
(cd "$work" && "$work/user/bin/python" -m pytest -q -p no:cacheprovider tests) ||
	fail "the installed wheel's tests"
exit 0
