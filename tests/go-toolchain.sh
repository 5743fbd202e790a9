# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# Sourced by the Go tests: go in PATH (where the official tarball and
# Debian's golang-go put it, for a PATH without them), or the test skips.
PATH=$PATH:/usr/local/go/bin:/usr/lib/go/bin
command -v go >/dev/null 2>&1 || {
	echo "SKIP: no Go toolchain: tools/install-deps installs Debian's golang-go (the package needs Go 1.19)"
	exit 77
}
