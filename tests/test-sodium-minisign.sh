#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# A real program on libmmkit-sodium.so: Debian's minisign generates a key
# pair (no password, -W), signs a file and verifies it with the shim
# preloaded; a tampered file fails verification, and the signature also
# verifies without the shim.  minisign keeps its secret key in
# sodium_malloc() memory: with MMKIT_STATS=1 each run's statistics line
# must show allocations, all of them in memfd_secret (or, forced with
# MMKIT_SECRET_BACKEND=mlock, all in the fallback).
set -u
shim="$MMKIT_BUILD/libmmkit-sodium.so"
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -f "$shim" ] || { echo "SKIP: no $shim (make builds it)"; exit 77; }
command -v minisign >/dev/null 2>&1 ||
	{ echo "SKIP: minisign is not installed (tools/install-deps)"; exit 77; }
memfd=1
"$MMKIT_BUILD/mmkit" probe 2>/dev/null | grep -q 'secret.*memfd_secret' || memfd=0

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
echo "a file worth signing" >file

# shimmed BACKEND STEP ARGS...: minisign with the shim; checks its statistics line.
shimmed() {
	backend=$1 step=$2; shift 2
	# The default backend through mmkit run, as a user would; the forced
	# fallback with LD_PRELOAD, as documented for plain use.
	if [ "$backend" = mlock ]; then
		MMKIT_SECRET_BACKEND=mlock LD_PRELOAD="$shim" MMKIT_STATS=1 minisign "$@" >out 2>err
	else
		"$MMKIT_BUILD/mmkit" run --secret-heap=sodium --stats -- minisign "$@" >out 2>err
	fi
	rc=$?
	line=$(grep '^mmkit-sodium: minisign\[' err)
	echo "  $backend $step: $line"
	[ -n "$line" ] || { cat out err >&2; fail "$step: no statistics line from the shim"; }
	field() { printf '%s\n' "$line" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
	allocs=$(field allocations)
	[ "$allocs" -ge 1 ] || fail "$step: minisign made no sodium_malloc() call through the shim"
	if [ "$backend" = mlock ] || [ $memfd -eq 0 ]; then
		[ "$(field in_fallback)" = "$allocs" ] || fail "$step: not all allocations in the fallback"
	else
		[ "$(field in_memfd_secret)" = "$allocs" ] || fail "$step: not all allocations in memfd_secret"
	fi
	return $rc
}

for backend in default mlock; do
	rm -f key.pub key.sec file.minisig
	shimmed $backend generate -G -W -p key.pub -s key.sec ||
		{ cat err >&2; fail "$backend: minisign -G failed"; }
	shimmed $backend sign -S -s key.sec -m file || { cat err >&2; fail "$backend: minisign -S failed"; }
	shimmed $backend verify -V -p key.pub -m file || { cat err >&2; fail "$backend: minisign -V failed"; }
	grep -q "Signature and comment signature verified" out || fail "$backend: no verification message"
	minisign -V -p key.pub -m file >/dev/null 2>&1 || fail "$backend: the signature does not verify without the shim"
	cp file tampered
	echo "one more line" >>tampered
	cp file.minisig tampered.minisig
	shimmed $backend "verify (tampered)" -V -p key.pub -m tampered &&
		fail "$backend: a tampered file verified"
done
[ $memfd -eq 1 ] || { echo "SKIP: memfd_secret is unavailable here: only the fallback was proved"; exit 77; }
exit 0
