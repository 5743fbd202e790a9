#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# make install with PREFIX and DESTDIR, then build consumers in C and C++
# with nothing but pkg-config, dynamically and statically, and check that
# the shared library exports only versioned mmkit_ symbols.  The installed
# command, every benchmark (--quick, at their smallest) and every shim of
# mmkit run work with an empty environment (env -i); what the README says
# about a PREFIX of one's own (PATH, PKG_CONFIG_PATH, rpath or
# LD_LIBRARY_PATH, man) works as it says.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# From a copy of the build: an install relinks the command for its PREFIX,
# and the tests running beside this one use the build's.
cp -a "$MMKIT_BUILD" "$tmp/build"
make -s -C "$top" B="$tmp/build" install PREFIX="$tmp/prefix" >/dev/null
for f in bin/mmkit lib/libmmkit.so lib/libmmkit.so.0 lib/libmmkit.a \
	 share/man/man1/mmkit.1 share/man/man3/mmkit_secret.3 \
	 include/mmkit.h lib/pkgconfig/mmkit.pc; do
	[ -e "$tmp/prefix/$f" ] || fail "make install did not install $f"
done

make -s -C "$top" B="$tmp/build" install PREFIX=/opt/mmkit DESTDIR="$tmp/dest" >/dev/null
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
for map in "$top"/preload/*.map; do
	[ -e "$map" ] || continue
	shim=libmmkit-$(basename "$map" .map).so
	[ -e "$tmp/prefix/lib/mmkit/$shim" ] || fail "make install did not install lib/mmkit/$shim"
done
if [ -e "$tmp/prefix/lib/mmkit/libmmkit-sodium.so" ]; then
	out=$("$tmp/prefix/bin/mmkit" run --secret-heap=sodium -- sh -c 'echo "$LD_PRELOAD"') ||
		fail "installed mmkit run failed"
	[ "$out" = "$tmp/prefix/lib/mmkit/libmmkit-sodium.so" ] ||
		fail "installed mmkit run preloaded '$out'"
fi

# The installed tool with no environment at all: nothing may depend on the
# build tree, on PATH or on MMKIT_* variables.  (set -e is off: each
# failure is reported with what the tool said.)
set +e
inst=$tmp/prefix
run_empty() {	# ARGS...: $inst/bin/mmkit ARGS with env -i, output in $tmp/out
	(cd / && env -i "$inst/bin/mmkit" "$@") >"$tmp/out" 2>&1 ||
		fail "env -i $inst/bin/mmkit $*: exit $?: $(cat "$tmp/out")"
}
run_empty probe
for b in $(cd "$top/bench" && ls bench-*.c | sed 's/^bench-\(.*\)\.c$/\1/'); do
	[ -x "$inst/libexec/mmkit/bench-$b" ] || fail "make install did not install libexec/mmkit/bench-$b"
	case $b in
	names)	run_empty bench names --quick --vmas 64 --forks 5 ;;
	secret)	run_empty bench secret --direct-map --quick --secrets 10 --rounds 1 ;;
	*)	run_empty bench "$b" --quick ;;
	esac
	! grep -qi 'no libmmkit\|not found\|no such file' "$tmp/out" ||
		fail "installed mmkit bench $b: $(cat "$tmp/out")"
	# bench sodium measures the installed shim (when libsodium is here to compare with).
	[ "$b" != sodium ] || grep -q 'unavailable: .*(Debian package libsodium23)' "$tmp/out" ||
		grep -qF "$inst/lib/mmkit/libmmkit-sodium.so" "$tmp/out" ||
		fail "installed mmkit bench sodium did not measure $inst/lib/mmkit/libmmkit-sodium.so: $(cat "$tmp/out")"
done
for shim in "--secret-heap=sodium" "--secret-heap=openssl" "--perturb=85"; do
	run_empty run $shim -- /bin/sh -c 'echo "$LD_PRELOAD"'
	case $shim in --perturb*) want=perturb ;; *) want=${shim#*=} ;; esac
	[ "$(tail -n 1 "$tmp/out")" = "$inst/lib/mmkit/libmmkit-$want.so" ] ||
		fail "installed mmkit run $shim preloaded: $(cat "$tmp/out")"
done

# The README's "A PREFIX of your own": mmkit and its manual pages through
# PATH, the library through PKG_CONFIG_PATH, then an rpath or LD_LIBRARY_PATH.
home_env="env -i PATH=$inst/bin:/usr/bin:/bin PKG_CONFIG_PATH=$inst/lib/pkgconfig"
$home_env sh -c 'mmkit --version' >/dev/null || fail "mmkit is not found through PATH"
$home_env sh -c 'man -w mmkit && man -w mmkit_lock' >"$tmp/out" 2>&1 ||
	fail "man does not find the pages through PATH: $(cat "$tmp/out")"
grep -q "^$inst/share/man/man1/mmkit.1" "$tmp/out" || fail "man mmkit opens another page: $(cat "$tmp/out")"
$home_env sh -c 'cc -o "$1" "$2" $(pkg-config --cflags --libs mmkit) -Wl,-rpath,"$3"' _ \
	"$tmp/rpath" "$top/tests/consumer/consumer.c" "$inst/lib" || fail "the rpath build failed"
env -i "$tmp/rpath" >/dev/null || fail "the consumer built with an rpath does not run by itself"
$home_env sh -c 'cc -o "$1" "$2" $(pkg-config --cflags --libs mmkit)' _ "$tmp/plain" \
	"$top/tests/consumer/consumer.c" || fail "the plain build failed"
env -i LD_LIBRARY_PATH="$inst/lib" "$tmp/plain" >/dev/null ||
	fail "the consumer does not run with LD_LIBRARY_PATH=$inst/lib"
