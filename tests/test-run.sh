#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# mmkit run: the preloads, the variables and the exit status, with stand-in
# shims that only say they were loaded (the real shims have tests of their
# own): a copy of mmkit finds them beside itself, as in a build tree.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v cc >/dev/null || { echo "SKIP: no C compiler for the stand-in shims"; exit 77; }

cp "$MMKIT_BUILD/mmkit" "$tmp/mmkit"
mmkit="$tmp/mmkit"
for shim in sodium openssl perturb; do
	printf '#include <unistd.h>\n__attribute__((constructor)) static void said(void)\n{ write(2, "loaded %s\\n", %d); }\n' \
		"$shim" $((8 + ${#shim})) >"$tmp/$shim.c"
	cc -shared -fPIC -o "$tmp/libmmkit-$shim.so" "$tmp/$shim.c" || fail "cc $shim.c"
done

# Everything at once: both heaps, in their order, then perturb, then the
# caller's own preload; the program's exit status comes through.
printf 'int x;\n' >"$tmp/own.c"
cc -shared -fPIC -o "$tmp/libown.so" "$tmp/own.c" || fail "cc own.c"
LD_PRELOAD="$tmp/libown.so" "$mmkit" run --secret-heap=openssl,sodium --perturb=0x55 --stats -- \
	sh -c 'echo "$LD_PRELOAD|$MALLOC_PERTURB_|$MMKIT_STATS"; exit 3' >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 3 ] || fail "the program's exit 3 came back as $rc: $(cat "$tmp/err")"
want="$tmp/libmmkit-sodium.so:$tmp/libmmkit-openssl.so:$tmp/libmmkit-perturb.so:$tmp/libown.so|85|1"
[ "$(cat "$tmp/out")" = "$want" ] || fail "the program saw '$(cat "$tmp/out")', expected '$want'"
for shim in sodium openssl perturb; do
	grep -qx "loaded $shim" "$tmp/err" || fail "$shim was not loaded: $(cat "$tmp/err")"
done

# One shim, no stats: nothing else is set or loaded.
env -u MALLOC_PERTURB_ -u MMKIT_STATS -u LD_PRELOAD "$mmkit" run --secret-heap=sodium \
	sh -c 'echo "$LD_PRELOAD|${MALLOC_PERTURB_-unset}|${MMKIT_STATS-unset}"' >"$tmp/out" 2>"$tmp/err" ||
	fail "run --secret-heap=sodium: $(cat "$tmp/err")"
[ "$(cat "$tmp/out")" = "$tmp/libmmkit-sodium.so|unset|unset" ] || fail "run --secret-heap=sodium: $(cat "$tmp/out")"
[ "$(cat "$tmp/err")" = "loaded sodium" ] || fail "run --secret-heap=sodium loaded: $(cat "$tmp/err")"
# openssl-or-malloc: the openssl shim, told to fall back to OpenSSL's plain heap.
env -u MMKIT_OPENSSL_FALLBACK -u LD_PRELOAD "$mmkit" run --secret-heap=openssl-or-malloc \
	sh -c 'echo "$LD_PRELOAD|${MMKIT_OPENSSL_FALLBACK-unset}"' >"$tmp/out" 2>"$tmp/err" ||
	fail "run --secret-heap=openssl-or-malloc: $(cat "$tmp/err")"
[ "$(cat "$tmp/out")" = "$tmp/libmmkit-openssl.so|malloc" ] ||
	fail "run --secret-heap=openssl-or-malloc: $(cat "$tmp/out")"
"$mmkit" run --perturb=200 -- sh -c 'echo "$MALLOC_PERTURB_"' >"$tmp/out" 2>/dev/null &&
	[ "$(cat "$tmp/out")" = 200 ] || fail "run --perturb=200 set '$(cat "$tmp/out")'"

# Bad input: exit 2 and a message naming it; the program is not run.
for args in "--perturb=0 true" "--perturb=256 true" "--perturb=-1 true" "--perturb= true" \
	    "--perturb=12x true" "--secret-heap=gnutls true" "--secret-heap=sodium,sodium true" \
	    "--secret-heap= true" "--secret-heap=sodium, true" "--bogus true" "--stats true" \
	    "--secret-heap=openssl,openssl-or-malloc true" "--secret-heap=openssl-or true" \
	    "--stats" "--perturb=1 --" "" "--no-glibc-names true" "--perturb=1 --no-glibc-names true"; do
	# Split into words on purpose: each set is a command line.
	# shellcheck disable=SC2086
	"$mmkit" run $args >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 2 ] || fail "mmkit run $args: exit $rc, expected 2"
	grep -q '^mmkit: run: ' "$tmp/err" || fail "mmkit run $args: no message: $(cat "$tmp/err")"
	! grep -q '^loaded' "$tmp/err" || fail "mmkit run $args: ran the program"
done

# Like env(1): 127 for a program not found, 126 for one that cannot run.
"$mmkit" run --perturb=1 -- no-such-program-here 2>"$tmp/err"
[ $? -eq 127 ] || fail "a missing program: not exit 127"
grep -q 'no-such-program-here' "$tmp/err" || fail "a missing program: $(cat "$tmp/err")"
: >"$tmp/not-executable"
"$mmkit" run --perturb=1 -- "$tmp/not-executable" 2>"$tmp/err"
[ $? -eq 126 ] || fail "a file that cannot run: not exit 126"

# Without the shims beside it, mmkit looks in its LIBDIR; if they are not
# installed there either, it says where it looked and fails (exit 1).
mkdir "$tmp/alone"
cp "$MMKIT_BUILD/mmkit" "$tmp/alone/mmkit"
"$tmp/alone/mmkit" run --secret-heap=sodium -- true 2>"$tmp/err"
rc=$?
case $rc in
0)	echo "note: libmmkit-sodium.so is installed: the missing-shim message was not checked" ;;
1)	grep -q 'libmmkit-sodium.so is neither beside mmkit nor in /' "$tmp/err" ||
		fail "a missing shim: $(cat "$tmp/err")" ;;
*)	fail "a missing shim: exit $rc: $(cat "$tmp/err")" ;;
esac
echo "mmkit run: preloads, variables, exit status and bad input as documented"
