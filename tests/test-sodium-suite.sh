#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# libsodium's own test suite, from Debian's source package, with and
# without libmmkit-sodium.so preloaded: the same tests must pass.
#
# Each program of test/default (the TESTS_TARGETS of its Makefile.am) is
# built from its own .c against the system's libsodium23, as libsodium's
# build does: -I its quirks dir, TEST_SRCDIR naming the directory of the
# .exp files, HAVE_CATCHABLE_SEGV and HAVE_CATCHABLE_ABRT (sodium_utils2
# and 3 then damage a canary and write past the end, and expect the signal).
# The harness in cmptest.h writes what a test prints to NAME.res and exits
# 99 unless it matches NAME.exp byte for byte.  With the shim every test
# must report at least one allocation (cmptest.h's main allocates its
# guard page): proof that the shim, not libsodium, served it.
#
# The source comes from tools/install-deps (apt-get source libsodium into
# ${XDG_CACHE_HOME:-~/.cache}/mmkit/libsodium-src), or MMKIT_SODIUM_SRC
# naming an unpacked libsodium-1.0.18 tree.
set -u
shim="$MMKIT_BUILD/libmmkit-sodium.so"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Tests that fail on stock Debian too, with why; they still run both ways
# and must fail the same way with the shim.
known_stock_failure() {	# name -> the reason, or nothing
	case $1 in
	core_ed25519) echo "CVE-2025-69277: the fixed test (1.0.18-1+deb12u1) fails against an unfixed libsodium23, and the reverse" ;;
	esac
}

[ -f "$shim" ] || { echo "SKIP: no $shim (make builds it)"; exit 77; }
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || { echo "SKIP: no C compiler ($cc)"; exit 77; }
printf '#include <sodium.h>\nint main(void) { return sodium_init() < 0; }\n' |
	"$cc" -x c -o /dev/null - -lsodium 2>/dev/null ||
	{ echo "SKIP: libsodium-dev is not installed (tools/install-deps)"; exit 77; }

src=${MMKIT_SODIUM_SRC:-}
if [ -z "$src" ]; then
	for d in "${XDG_CACHE_HOME:-$HOME/.cache}"/mmkit/libsodium-src/libsodium-*/; do
		[ -d "$d/test/default" ] && src=${d%/}
	done
fi
[ -n "$src" ] && [ -f "$src/test/default/Makefile.am" ] ||
	{ echo "SKIP: libsodium's source is not unpacked (tools/install-deps fetches it; or set MMKIT_SODIUM_SRC)"; exit 77; }
tdir=$src/test/default

# TESTS_TARGETS += / = lines and their continuations, whatever the conditionals.
tests=$(awk '/^TESTS_TARGETS[ \t]*\+?=/ { on = 1; next }
	on && /^[ \t]+[a-z0-9_]+/ { print $1; if ($0 !~ /\\$/) on = 0; next }
	{ on = 0 }' "$tdir/Makefile.am")
[ -n "$tests" ] || fail "no TESTS_TARGETS in $tdir/Makefile.am"

work="$MMKIT_BUILD/sodium-suite"
mkdir -p "$work" || fail "cannot create $work"
cd "$work" || exit 1

built=0
for t in $tests; do
	[ -f "$tdir/$t.c" ] || fail "$t is in TESTS_TARGETS but $tdir/$t.c is missing"
	# Third-party code: its warnings are not ours to fix (-w).
	"$cc" -O2 -w -DTEST_SRCDIR="\"$tdir\"" -DHAVE_CATCHABLE_SEGV -DHAVE_CATCHABLE_ABRT \
		-I"$src/test/quirks" -o "$t" "$tdir/$t.c" -lsodium 2>"$t.build-log" ||
		{ cat "$t.build-log" >&2; fail "$t does not build"; }
	built=$((built + 1))
done

plain_pass=0 shim_pass=0 differ=""
for t in $tests; do
	rm -f "$t.res"
	timeout 120 "./$t" >"$t.plain-out" 2>&1
	plain=$?
	rm -f "$t.res"
	LD_PRELOAD="$shim" MMKIT_STATS=1 timeout 120 "./$t" >"$t.shim-out" 2>&1
	shim_rc=$?
	allocs=$(sed -n "s/^mmkit-sodium: $t\[[0-9]*\]: allocations=\([0-9]*\) .*/\1/p" "$t.shim-out")
	why=$(known_stock_failure "$t")
	verdict="plain exit $plain, shim exit $shim_rc, $allocs shim allocations"
	[ "$plain" -eq 0 ] && plain_pass=$((plain_pass + 1))
	[ "$shim_rc" -eq 0 ] && shim_pass=$((shim_pass + 1))
	if [ "$plain" -ne 0 ] && [ -z "$why" ]; then
		sed 's/^/    | /' "$t.plain-out" >&2
		fail "$t fails without the shim too ($verdict): the reference run is broken"
	fi
	[ -n "$why" ] && [ "$plain" -ne 0 ] && echo "  $t: fails on stock libsodium23: $why"
	# Passing is what must agree (a failing test's exit status may vary).
	if [ "$([ "$plain" -eq 0 ]; echo $?)" != "$([ "$shim_rc" -eq 0 ]; echo $?)" ]; then
		echo "  $t: $verdict" >&2
		sed 's/^/    | /' "$t.shim-out" >&2
		differ="$differ $t"
	fi
	[ "${allocs:-0}" -ge 1 ] || fail "$t: no statistics line with allocations from the shim ($verdict)"
done

echo "libsodium $(basename "$src") test suite: $built tests built; $plain_pass pass plain, $shim_pass with libmmkit-sodium.so"
[ -z "$differ" ] || fail "different results with the shim:$differ"
exit 0
