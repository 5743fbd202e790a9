#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# make install with PREFIX and DESTDIR, then build consumers in C and C++
# with nothing but pkg-config, dynamically and statically, and check that
# the shared library exports only versioned mmkit_ symbols.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

make -s -C "$top" B="$MMKIT_BUILD" install PREFIX="$tmp/prefix" >/dev/null
for f in bin/mmkit lib/libmmkit.so lib/libmmkit.so.0 lib/libmmkit.a \
	 share/man/man1/mmkit.1 share/man/man3/mmkit_secret.3 \
	 include/mmkit.h lib/pkgconfig/mmkit.pc; do
	[ -e "$tmp/prefix/$f" ] || fail "make install did not install $f"
done

make -s -C "$top" B="$MMKIT_BUILD" install PREFIX=/opt/mmkit DESTDIR="$tmp/dest" >/dev/null
[ -e "$tmp/dest/opt/mmkit/lib/libmmkit.so.0" ] || fail "DESTDIR install misses lib/libmmkit.so.0"
grep -q '^prefix=/opt/mmkit$' "$tmp/dest/opt/mmkit/lib/pkgconfig/mmkit.pc" ||
	fail "mmkit.pc under DESTDIR does not name the final prefix"

export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
cflags=$(pkg-config --cflags mmkit)
libs=$(pkg-config --libs mmkit)
static_libs=$(pkg-config --static --libs mmkit)

cc -std=c11 -Wall -Werror $cflags -o "$tmp/c" "$top/tests/consumer/consumer.c" $libs
c++ -std=c++11 -Wall -Werror $cflags -o "$tmp/cxx" "$top/tests/consumer/consumer.cc" $libs
cc -std=c11 -Wall -Werror $cflags -o "$tmp/c-static" "$top/tests/consumer/consumer.c" \
	"$tmp/prefix/lib/libmmkit.a" $static_libs
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/c" || fail "C consumer failed"
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/cxx" || fail "C++ consumer failed"
"$tmp/c-static" || fail "static C consumer failed"
LD_LIBRARY_PATH="$tmp/prefix/lib" ldd "$tmp/c" | grep -q "$tmp/prefix/lib/libmmkit.so.0" ||
	fail "C consumer is not linked against the installed libmmkit.so.0"

exports=$(nm -D --defined-only "$tmp/prefix/lib/libmmkit.so" | awk '{print $3}')
bad=$(echo "$exports" | grep -v '^MMKIT_' | grep -v '^mmkit_[a-z0-9_]*@@MMKIT_[0-9.]*$' || true)
[ -z "$bad" ] || fail "unexpected exported symbols: $bad"
echo "$exports" | grep -q '^mmkit_probe@@MMKIT_' || fail "mmkit_probe is not exported with a version"
"$tmp/prefix/bin/mmkit" probe >/dev/null || fail "installed mmkit probe failed"

# Each shim is installed, and the installed mmkit run finds it there.
for src in "$top"/preload/*.c; do
	[ -e "$src" ] || continue
	shim=libmmkit-$(basename "$src" .c).so
	[ -e "$tmp/prefix/lib/mmkit/$shim" ] || fail "make install did not install lib/mmkit/$shim"
done
if [ -e "$tmp/prefix/lib/mmkit/libmmkit-sodium.so" ]; then
	out=$("$tmp/prefix/bin/mmkit" run --secret-heap=sodium -- sh -c 'echo "$LD_PRELOAD"') ||
		fail "installed mmkit run failed"
	[ "$out" = "$tmp/prefix/lib/mmkit/libmmkit-sodium.so" ] ||
		fail "installed mmkit run preloaded '$out'"
fi
