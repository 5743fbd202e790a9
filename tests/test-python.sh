#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The Python binding (bindings/python): `pip install ./bindings/python` into
# a fresh venv of Debian's python3, then its pytest suite and mypy --strict
# over the package, its stubs and the tests; the extension's own C files
# must build with the project's warnings as errors.
#
# Debian's /usr/bin/python3, not whatever python3 PATH finds first: it is
# the one tools/install-deps installs (with python3-dev and python3-venv),
# so a fresh machine and CI test the same interpreter.  pytest, mypy and
# setuptools come pinned (bindings/python/tests/requirements.txt) from a
# local wheelhouse, offline: Debian 12's mypy 1.0 predates typeshed's
# Buffer protocol and cannot see that a Secret is a buffer, and its
# setuptools 66 needs the wheel package to build wheels.
set -u
[ -z "${MMKIT_PY_TRACE:-}" ] || set -x
. "$(dirname "$0")/python-env.sh"

# Warnings are errors for the binding's own C, as for the library's.
for c in "$top"/bindings/python/ext/*.c; do
	${CC:-cc} -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
		-Wmissing-prototypes -DPy_LIMITED_API=0x030B0000 -I"$top/include" -I"$inc" \
		-fsyntax-only "$c" || exit 1
done

venv=$build/python-venv
rm -rf "$venv"
# Without ensurepip's copy of pip (13 s here): Debian's own pip, the same
# 23.0.1, installs into the venv (--python), which stays as fresh.
"$py" -m venv --without-pip "$venv" || exit 1
pip="$py -m pip --python $venv/bin/python --quiet --disable-pip-version-check"
# The wheelhouse is filled once (tools/install-deps does it); offline after.
tools="--no-index --find-links $wheels --no-compile -r $req"
if ! $pip install $tools 2>/dev/null; then
	"$py" -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
		-d "$wheels" -r "$req" >/dev/null 2>&1 ||
		skip "no wheels of $(grep -v '^#' "$req" | tr '\n' ' ')in $wheels and no index to fetch them from: run tools/install-deps"
	$pip install $tools || exit 1
fi
# The install under test, from a read-only copy of the sources, as from a
# checkout on a read-only filesystem: setup.py must write nothing into the
# source tree (it once wrote build/ and src/mmkit.egg-info and failed).
# The copy keeps the files' times and the objects stay in
# MMKIT_PY_BUILD_DIR, so setuptools compiles again only what changed.
# Root ignores file modes: as root the copy is a read-only bind mount in
# a mount namespace of the install's own.  The venv's setuptools builds (no
# isolated build environment to fetch).
ro=$build/python-ro
chmod -R u+w "$ro" 2>/dev/null
rm -rf "$ro"
mkdir -p "$ro" "$build/python-build" || exit 1
copy_sources "$ro"
readonly_run "$ro" env MMKIT_PY_BUILD_DIR="$build/python-build" $pip install --no-index \
	--no-build-isolation "$ro/bindings/python" || { echo "FAIL: pip install from a read-only copy"; exit 1; }
# Without MMKIT_PY_BUILD_DIR setup.py writes to a temporary directory of its own.
(cd "$ro/bindings/python" && readonly_run "$ro" "$venv/bin/python" setup.py -q egg_info) \
	>"$build/python-egg-info.log" 2>&1 ||
	{ cat "$build/python-egg-info.log"; echo "FAIL: setup.py egg_info in a read-only copy"; exit 1; }
chmod -R u+w "$ro"
rm -rf "$ro"

cd "$top/bindings/python" || exit 1
# pip builds from an sdist where it cannot build in place (python -m build
# does too): it must hold every file the C build reads through csrc/.
sdist=$build/python-sdist
rm -rf "$sdist"
"$venv/bin/python" setup.py -q sdist -d "$sdist" >/dev/null 2>&1 || { echo "FAIL: setup.py sdist"; exit 1; }
tar -xzf "$sdist"/mmkit-*.tar.gz -C "$sdist" || exit 1
for c in "$sdist"/mmkit-*/csrc/lib/*.c; do
	${CC:-cc} -E -D_GNU_SOURCE -I"${c%/lib/*}/include" "$c" >/dev/null ||
		{ echo "FAIL: the sdist lacks what ${c#"$sdist"/} includes"; exit 1; }
done
# From outside the source tree, so the installed package is the one imported.
(cd "$build" && "$venv/bin/python" -m pytest -q -p no:cacheprovider \
	--doctest-modules "$venv"/lib/python3*/site-packages/mmkit "$top/bindings/python/tests") || exit 1
MYPYPATH=src "$venv/bin/python" -m mypy --strict --cache-dir "$build/python-mypy-cache" \
	src/mmkit tests bench || exit 1
