#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# Builds the Debian packages (debian/build-debs, from a copy of the tree in
# a scratch directory), unpacks each one into its own scratch root and
# checks what it holds: the shared library, the development files, the
# command with its benchmarks and pages, the DKMS source of refpage.ko.
# Runs the packaged mmkit, and lintian when installed (any error fails).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)

command -v dpkg-buildpackage >/dev/null || {
	echo "SKIP: dpkg-buildpackage is not installed (dpkg-dev)"; exit 77; }
git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1 || {
	echo "SKIP: not a git checkout (the package is built from git ls-files)"; exit 77; }
unmet=$(cd "$top" && dpkg-checkbuilddeps 2>&1) || {
	echo "SKIP: build dependencies missing (tools/install-deps): $unmet"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

DEB_BUILD_OPTIONS="nocheck parallel=2" "$top/debian/build-debs" "$tmp/out" >"$tmp/build.log" 2>&1 || {
	tail -n 40 "$tmp/build.log"; fail "debian/build-debs failed"; }

upstream=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version | sed 's/-[^-]*$//')
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
lib=usr/lib/$multiarch

for pkg in libmmkit0 libmmkit-dev mmkit refpage-dkms; do
	set -- "$tmp"/out/"$pkg"_*.deb
	[ $# -eq 1 ] && [ -f "$1" ] || fail "expected one $pkg package, found: $*"
	dpkg -x "$1" "$tmp/$pkg"
	dpkg-deb -I "$1" control >"$tmp/$pkg.control"
	dpkg-deb -I "$1" postinst >"$tmp/$pkg.postinst" 2>/dev/null || true
done
has() {	# package, path relative to its root
	[ -e "$tmp/$1/$2" ] || [ -L "$tmp/$1/$2" ] || fail "$1 lacks /$2"
}

has libmmkit0 "$lib/libmmkit.so.$upstream"
has libmmkit0 "$lib/libmmkit.so.0"
[ "$(readlink "$tmp/libmmkit0/$lib/libmmkit.so.0")" = "libmmkit.so.$upstream" ] ||
	fail "libmmkit.so.0 does not point at libmmkit.so.$upstream"
objdump -p "$tmp/libmmkit0/$lib/libmmkit.so.$upstream" | grep -q 'SONAME *libmmkit\.so\.0$' ||
	fail "the packaged library's SONAME is not libmmkit.so.0"

has libmmkit-dev usr/include/mmkit.h
has libmmkit-dev "$lib/libmmkit.a"
has libmmkit-dev "$lib/libmmkit.so"
[ "$(readlink "$tmp/libmmkit-dev/$lib/libmmkit.so")" = "libmmkit.so.$upstream" ] ||
	fail "libmmkit.so does not point at libmmkit.so.$upstream"
grep -q '^Depends:.*libmmkit0 (= ' "$tmp/libmmkit-dev.control" ||
	fail "libmmkit-dev does not depend on its libmmkit0"
has libmmkit-dev "$lib/pkgconfig/mmkit.pc"
grep -qx 'prefix=/usr' "$tmp/libmmkit-dev/$lib/pkgconfig/mmkit.pc" &&
grep -qx "libdir=/$lib" "$tmp/libmmkit-dev/$lib/pkgconfig/mmkit.pc" ||
	fail "mmkit.pc does not name prefix /usr and libdir /$lib"
for page in "$top"/man/*.3; do
	has libmmkit-dev "usr/share/man/man3/$(basename "$page").gz"
done

has mmkit usr/bin/mmkit
# The exporter's units, installed but not enabled (debian/rules).
for unit in mmkit-exporter.socket mmkit-exporter.service; do
	has mmkit "lib/systemd/system/$unit"
done
# Not started; enabled again only where the administrator had enabled them.
! grep -qs 'deb-systemd-invoke' "$tmp/mmkit.postinst" ||
	fail "the mmkit package starts its units: $(cat "$tmp/mmkit.postinst")"
[ "$(grep -c 'deb-systemd-helper enable' "$tmp/mmkit.postinst")" = \
	"$(grep -c 'deb-systemd-helper --quiet was-enabled' "$tmp/mmkit.postinst")" ] ||
	fail "the mmkit package enables its units: $(cat "$tmp/mmkit.postinst")"
# Loopback only (a scrape discloses every process's paths and commands), and
# no system call into another process.
grep -qx 'ListenStream=127.0.0.1:9977' "$tmp/mmkit/lib/systemd/system/mmkit-exporter.socket" &&
	[ "$(grep -c '^ListenStream=' "$tmp/mmkit/lib/systemd/system/mmkit-exporter.socket")" = 1 ] ||
	fail "mmkit-exporter.socket listens beyond 127.0.0.1:9977"
grep -qx 'SystemCallFilter=~ptrace process_vm_readv process_vm_writev open_by_handle_at name_to_handle_at' \
	"$tmp/mmkit/lib/systemd/system/mmkit-exporter.service" ||
	fail "mmkit-exporter.service has no SystemCallFilter against ptrace"
# Their directives as this systemd reads them; ExecStart names the packaged binary.
if command -v systemd-analyze >/dev/null; then
	mkdir "$tmp/units"
	cp "$tmp/mmkit/lib/systemd/system/mmkit-exporter.socket" "$tmp/units/"
	sed "s|=/usr/bin/mmkit |=$tmp/mmkit/usr/bin/mmkit |" \
		"$tmp/mmkit/lib/systemd/system/mmkit-exporter.service" >"$tmp/units/mmkit-exporter.service"
	(cd "$tmp/units" && systemd-analyze verify --man=no ./mmkit-exporter.socket \
		./mmkit-exporter.service) >"$tmp/verify.out" 2>&1 ||
		fail "systemd-analyze verify: $(cat "$tmp/verify.out")"
fi
has mmkit usr/share/man/man1/mmkit.1.gz
for page in "$top"/man/*.7; do
	[ ! -e "$page" ] || has mmkit "usr/share/man/man7/$(basename "$page").gz"
done
[ ! -e "$top/cli/mmkit.bash" ] || has mmkit usr/share/bash-completion/completions/mmkit
for src in "$top"/bench/bench-*.c; do
	has mmkit "usr/libexec/mmkit/$(basename "$src" .c)"
done
for map in "$top"/preload/*.map; do
	[ ! -e "$map" ] || has mmkit "$lib/mmkit/libmmkit-$(basename "$map" .map).so"
done
# mmkit run finds the shims in the directory compiled into it.
grep -aq "/$lib/mmkit" "$tmp/mmkit/usr/bin/mmkit" ||
	fail "usr/bin/mmkit was not built to look for its shims in /$lib/mmkit"
# The command finds its benchmarks in the directory compiled into it.
grep -aq '/usr/libexec/mmkit' "$tmp/mmkit/usr/bin/mmkit" ||
	fail "usr/bin/mmkit was not built to look for its benchmarks in /usr/libexec/mmkit"
LD_LIBRARY_PATH="$tmp/libmmkit0/$lib" "$tmp/mmkit/usr/bin/mmkit" probe >"$tmp/probe.out" 2>&1 || {
	cat "$tmp/probe.out"; fail "the packaged mmkit probe failed"; }
grep -q refpage "$tmp/probe.out" || { cat "$tmp/probe.out"; fail "mmkit probe printed no refpage line"; }

# dh_dkms puts dkms.conf in usr/src/refpage-<its PACKAGE_VERSION>; the
# module source must be in that same directory, named by this version.
set -- "$tmp"/refpage-dkms/usr/src/refpage-*
[ $# -eq 1 ] || fail "refpage-dkms holds more than one source directory: $*"
[ "$1" = "$tmp/refpage-dkms/usr/src/refpage-$upstream" ] ||
	fail "refpage-dkms holds $1, not usr/src/refpage-$upstream"
for f in dkms.conf Makefile refpage.c refpage.h; do
	has refpage-dkms "usr/src/refpage-$upstream/$f"
done
grep -qx "PACKAGE_VERSION=\"$upstream\"" "$1/dkms.conf" ||
	fail "kmod/refpage/dkms.conf's PACKAGE_VERSION is not $upstream"
grep -q '^Depends:.*dkms' "$tmp/refpage-dkms.control" || fail "refpage-dkms does not depend on dkms"

if command -v lintian >/dev/null; then
	rc=0
	lintian "$tmp"/out/*.changes >"$tmp/lintian.out" 2>&1 || rc=$?
	cat "$tmp/lintian.out"
	[ "$rc" -eq 0 ] || fail "lintian exited with $rc"
	! grep -q '^E:' "$tmp/lintian.out" || fail "lintian reports errors"
else
	echo "note: lintian is not installed; the packages were not linted"
fi
echo "packages built and checked: $(cd "$tmp/out" && echo *.deb)"
