# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# Sourced by tests/test-python.sh and tests/test-python-package.sh: the
# interpreter they test (Debian's /usr/bin/python3, the one
# tools/install-deps installs, so a fresh machine and CI test the same),
# the pinned tools' wheelhouse, and a skip (77) saying what to install
# where a part is missing.  Sets top, build, py, wheels, req, inc.
top=$(cd "$(dirname "$0")/.." && pwd)
build=${MMKIT_BUILD:-$top/build}
py=/usr/bin/python3
wheels=${XDG_CACHE_HOME:-$HOME/.cache}/mmkit/python-wheels
req=$top/bindings/python/tests/requirements.txt

skip() { echo "SKIP: $*"; exit 77; }
[ -x "$py" ] || skip "no $py: tools/install-deps installs python3"
"$py" -c 'import ensurepip, venv' 2>/dev/null || skip "no venv module with ensurepip: tools/install-deps installs python3-venv"
"$py" -m pip --version >/dev/null 2>&1 || skip "no pip for $py: tools/install-deps installs python3-pip"
inc=$("$py" -c 'import sysconfig; print(sysconfig.get_path("include"))')
[ -f "$inc/Python.h" ] || skip "no $inc/Python.h: tools/install-deps installs python3-dev"

# copy_sources DIR: what the Python package builds from, as a checkout has
# it (lib, include, the refpage uapi header, bindings/python), made
# read-only.
copy_sources() {
	(cd "$top" && tar --exclude=__pycache__ --exclude=build --exclude='*.egg-info' -cf - \
		lib include kmod/refpage/refpage.h bindings/python) | tar -xf - -C "$1" || exit 1
	chmod -R a-w "$1"
}

# readonly_run DIR COMMAND...: run COMMAND where DIR cannot be written.
# Root ignores file modes: as root DIR is a read-only bind mount in a mount
# namespace of COMMAND's own.
readonly_run() {
	ro_dir=$1
	shift
	if [ "$(id -u)" -ne 0 ]; then
		"$@"
	elif unshare --mount true 2>/dev/null; then
		unshare --mount sh -c 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"' \
			"$ro_dir" "$@"
	else
		echo "note: root without a mount namespace: the read-only copy is not enforced"
		"$@"
	fi
}
