#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# libmmkit-openssl.so under small RLIMIT_MEMLOCK limits, as uid 65534 on
# each backend, started by `mmkit run`: under `ulimit -l 64` (a container's
# usual limit) `openssl genpkey` makes its key; under 8 KiB, too little for
# its random generator, genpkey fails and the shim says why exactly once,
# naming RLIMIT_MEMLOCK, `ulimit -l` and the fallback; with
# --secret-heap=openssl-or-malloc the same genpkey makes its key and the
# stats line counts the allocations the plain heap served.
set -u
shim="$MMKIT_BUILD/libmmkit-openssl.so"
mmkit="$MMKIT_BUILD/mmkit"
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -f "$shim" ] || fail "no $shim"
[ -x "$mmkit" ] || fail "no $mmkit"
command -v openssl >/dev/null 2>&1 ||
	{ echo "SKIP: no openssl command (tools/install-deps: openssl)"; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: becoming uid 65534 needs root"; exit 77; }
as_nobody="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all"
$as_nobody true 2>/dev/null || { echo "SKIP: setpriv cannot become uid 65534 here"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
mkdir "$tmp/keys" && chmod 777 "$tmp/keys"
said="mmkit-openssl: the secure heap could not get memory"

# The field $2 of the shim's stats line in file $1.
stat_of() {
	sed -n "s/^mmkit-openssl: .* $2=\([0-9]*\).*/\1/p" "$1" | tail -n 1
}

# genpkey as uid 65534 under a limit of $1 KiB on backend $2 with
# --secret-heap=$3: an EC key into $tmp/keys/key, stderr into $tmp/err.
genpkey() {
	rm -f "$tmp/keys/key"
	(ulimit -l "$1" && MMKIT_SECRET_BACKEND=$2 $as_nobody "$mmkit" run --secret-heap="$3" \
		--stats -- openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
		-out "$tmp/keys/key") >/dev/null 2>"$tmp/err"
}

key_made() {	# what
	grep -q "BEGIN PRIVATE KEY" "$tmp/keys/key" 2>/dev/null ||
		{ cat "$tmp/err" >&2; fail "$1: no key written"; }
}

backends=mlock
"$mmkit" probe 2>/dev/null | grep -q '^ *secret  *native  *memfd_secret' &&
	backends="mlock memfd_secret"
for backend in $backends; do
	genpkey 64 "$backend" openssl || { cat "$tmp/err" >&2; fail "$backend, 64 KiB: genpkey failed"; }
	key_made "$backend, 64 KiB"
	[ "$(stat_of "$tmp/err" failed)" = 0 ] || fail "$backend, 64 KiB: secure allocations failed"
	grep -q "$said" "$tmp/err" && fail "$backend, 64 KiB: the shim reports a failure"
	echo "  $backend: genpkey under 64 KiB ($(stat_of "$tmp/err" allocations) secure allocations)"

	genpkey 8 "$backend" openssl && fail "$backend, 8 KiB: genpkey works: the limit is not too small"
	[ "$(grep -c "$said" "$tmp/err")" -eq 1 ] ||
		{ cat "$tmp/err" >&2; fail "$backend, 8 KiB: the failure is not said exactly once"; }
	line=$(grep "$said" "$tmp/err")
	for word in RLIMIT_MEMLOCK "ulimit -l" "--secret-heap=openssl-or-malloc"; do
		case $line in
		*"$word"*) ;;
		*) fail "$backend, 8 KiB: the message does not name $word: $line" ;;
		esac
	done
	[ "$(stat_of "$tmp/err" failed)" -gt 0 ] || fail "$backend, 8 KiB: no failure counted"
	echo "  $backend: genpkey under 8 KiB fails, saying once: ${line#"$said"}"

	genpkey 8 "$backend" openssl-or-malloc ||
		{ cat "$tmp/err" >&2; fail "$backend, 8 KiB, openssl-or-malloc: genpkey failed"; }
	key_made "$backend, 8 KiB, openssl-or-malloc"
	fallbacks=$(stat_of "$tmp/err" malloc_fallbacks)
	[ -n "$fallbacks" ] && [ "$fallbacks" -gt 0 ] ||
		{ cat "$tmp/err" >&2; fail "$backend, 8 KiB, openssl-or-malloc: no fallback counted"; }
	[ "$(stat_of "$tmp/err" failed)" = 0 ] ||
		fail "$backend, 8 KiB, openssl-or-malloc: allocations counted failed although served"
	[ "$(grep -c "$said" "$tmp/err")" -eq 1 ] ||
		{ cat "$tmp/err" >&2; fail "$backend, 8 KiB, openssl-or-malloc: the fallback is not said once"; }
	echo "  $backend: genpkey under 8 KiB with openssl-or-malloc: $fallbacks from the plain heap," \
		"$(stat_of "$tmp/err" allocations) secret"
done
exit 0
