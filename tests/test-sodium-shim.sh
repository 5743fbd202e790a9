#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# libmmkit-sodium.so's semantics (tests/sodium/semantics.c, linked with
# -lsodium and run with the shim preloaded), on memfd_secret where the
# kernel has it and on the mlock fallback (MMKIT_SECRET_BACKEND=mlock);
# each run's MMKIT_STATS=1 line must count what the program allocated, in
# the backend it ran on.
set -u
shim="$MMKIT_BUILD/libmmkit-sodium.so"
top=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -f "$shim" ] || { echo "SKIP: no $shim (make builds it)"; exit 77; }
cc=${CC:-cc}
prog="$MMKIT_BUILD/tests/sodium-semantics"
mkdir -p "$MMKIT_BUILD/tests"
printf '#include <sodium.h>\nint main(void) { return sodium_init() < 0; }\n' |
	"$cc" -x c -o /dev/null - -lsodium 2>/dev/null ||
	{ echo "SKIP: libsodium-dev is not installed (tools/install-deps)"; exit 77; }
"$cc" -std=gnu11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror -I"$top/tests" -pthread \
	-o "$prog" "$top/tests/sodium/semantics.c" -lsodium || fail "tests/sodium/semantics.c does not build"

# memfd_secret works here unless the probe says it falls back.
memfd=1
"$MMKIT_BUILD/mmkit" probe 2>/dev/null | grep -q 'secret.*memfd_secret' || memfd=0

out=$(mktemp)
trap 'rm -f "$out"' EXIT
for backend in default mlock; do
	if [ "$backend" = mlock ]; then
		MMKIT_SECRET_BACKEND=mlock LD_PRELOAD="$shim" MMKIT_STATS=1 "$prog" >"$out" 2>&1
	else
		LD_PRELOAD="$shim" MMKIT_STATS=1 "$prog" >"$out" 2>&1
	fi
	rc=$?
	sed 's/^/    | /' "$out"
	[ $rc -eq 0 ] || fail "semantics ($backend backend): exit $rc"
	allocated=$(sed -n 's/^allocated \([0-9]*\)$/\1/p' "$out")
	line=$(grep '^mmkit-sodium: sodium-semantics\[' "$out")
	[ "$(printf '%s\n' "$line" | grep -c .)" -eq 1 ] || fail "expected one statistics line, got: $line"
	field() { printf '%s\n' "$line" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
	[ "$(field allocations)" = "$allocated" ] ||
		fail "statistics count $(field allocations) allocations, the program made $allocated"
	[ "$(field live_at_exit)" = 0 ] || fail "statistics: $(field live_at_exit) live at exit"
	[ "$(field failed)" -ge 4 ] || fail "statistics: the 4 refused allocations not counted: $line"
	if [ "$backend" = mlock ] || [ $memfd -eq 0 ]; then
		[ "$(field in_fallback)" = "$allocated" ] && [ "$(field in_memfd_secret)" = 0 ] ||
			fail "$backend: not all in the fallback: $line"
	else
		[ "$(field in_memfd_secret)" = "$allocated" ] && [ "$(field in_fallback)" = 0 ] ||
			fail "memfd_secret: not all in memfd_secret: $line"
	fi
done
exit 0
