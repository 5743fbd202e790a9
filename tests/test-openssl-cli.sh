#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The unmodified openssl command on libmmkit-openssl.so: genpkey makes an EC
# and an RSA key, pkeyutl signs and verifies with each (a damaged signature
# is refused), and an s_server with each key serves an s_client handshake
# on loopback (started by `mmkit run --secret-heap=openssl`) while
# `mmkit secrets PID` shows its secret memory mapped.  Every
# run's MMKIT_STATS=1 line must count secure allocations: a shim that does
# nothing cannot pass.  Where memfd_secret is unavailable the shim uses
# mmkit's fallback, and only the `mmkit secrets` check is skipped.
set -u
shim="$MMKIT_BUILD/libmmkit-openssl.so"
mmkit="$MMKIT_BUILD/mmkit"
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -f "$shim" ] || fail "no $shim"
[ -x "$mmkit" ] || fail "no $mmkit"
command -v openssl >/dev/null 2>&1 ||
	{ echo "SKIP: no openssl command (tools/install-deps: openssl)"; exit 77; }

tmp=$(mktemp -d)
server=""
cleanup() {
	[ -z "$server" ] || kill "$server" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# The field $2 of the shim's stats line in file $1.
stat_of() {
	sed -n "s/^mmkit-openssl: .* $2=\([0-9]*\).*/\1/p" "$1" | tail -n 1
}

# Runs openssl with the shim; its output goes to $tmp/out and $tmp/err, the
# latter checked for the stats line with allocations made and none failed.
shimmed() {
	MMKIT_STATS=1 LD_PRELOAD="$shim" openssl "$@" >"$tmp/out" 2>"$tmp/err" ||
		{ cat "$tmp/out" "$tmp/err" >&2; fail "openssl $*"; }
	check_stats "$tmp/err" "openssl $1"
}

check_stats() {	# file, what
	allocs=$(stat_of "$1" allocations)
	[ -n "$allocs" ] || { cat "$1" >&2; fail "$2: no mmkit-openssl stats line"; }
	[ "$allocs" -gt 0 ] || fail "$2: no secure allocation reached the shim"
	[ "$(stat_of "$1" failed)" -eq 0 ] || fail "$2: secure allocations failed"
	if [ "$(stat_of "$1" in_memfd_secret)" -gt 0 ]; then
		secretmem=yes
	fi
}

secretmem=no
printf 'mmkit secret memory, signed\n' >"$tmp/msg"
openssl dgst -sha256 -binary -out "$tmp/dgst" "$tmp/msg" || fail "openssl dgst"

for alg in EC RSA; do
	case $alg in
	EC)	opt=ec_paramgen_curve:P-256 ;;
	RSA)	opt=rsa_keygen_bits:2048 ;;
	esac
	key="$tmp/$alg.key"
	shimmed genpkey -algorithm "$alg" -pkeyopt "$opt" -out "$key"
	grep -q "BEGIN PRIVATE KEY" "$key" || fail "genpkey $alg wrote no key"
	shimmed pkeyutl -sign -inkey "$key" -pkeyopt digest:sha256 -in "$tmp/dgst" -out "$tmp/sig"
	shimmed pkeyutl -verify -inkey "$key" -pkeyopt digest:sha256 -in "$tmp/dgst" \
		-sigfile "$tmp/sig"
	# A signature with its last byte changed must be refused.
	size=$(wc -c <"$tmp/sig")
	{ head -c $((size - 1)) "$tmp/sig"; printf '\001'; } >"$tmp/bad"
	cmp -s "$tmp/sig" "$tmp/bad" && { head -c $((size - 1)) "$tmp/sig"; printf '\002'; } >"$tmp/bad"
	MMKIT_STATS=1 LD_PRELOAD="$shim" openssl pkeyutl -verify -inkey "$key" \
		-pkeyopt digest:sha256 -in "$tmp/dgst" -sigfile "$tmp/bad" >/dev/null 2>&1 &&
		fail "pkeyutl -verify $alg accepts a damaged signature"
	echo "  $alg: genpkey, pkeyutl -sign and -verify"

	openssl req -x509 -new -key "$key" -subj /CN=localhost -days 1 -out "$tmp/$alg.crt" \
		2>"$tmp/err" || { cat "$tmp/err" >&2; fail "openssl req $alg"; }
	# One connection, then it exits and its stats line is written.  Started
	# through mmkit run, which executes it in place: $! is the server.
	"$mmkit" run --secret-heap=openssl --stats -- openssl s_server -key "$key" -cert "$tmp/$alg.crt" \
		-accept 127.0.0.1:0 -www -naccept 1 >"$tmp/server.out" 2>"$tmp/server.err" \
		</dev/null &
	server=$!
	port=""
	for _ in $(seq 100); do
		port=$(sed -n 's/^ACCEPT 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$tmp/server.out")
		[ -n "$port" ] && break
		kill -0 "$server" 2>/dev/null || break
		sleep 0.1
	done
	[ -n "$port" ] || { cat "$tmp/server.err" >&2; fail "s_server $alg did not listen"; }

	# The key is loaded: its secrets are live in the server now.
	"$mmkit" secrets "$server" --json >"$tmp/secrets" || fail "mmkit secrets $server --json"
	mapped=$(sed -n "s/.*\"pid\": $server, .*\"mapped_bytes\": \([0-9]*\)}.*/\1/p" \
		"$tmp/secrets")

	printf 'GET / HTTP/1.0\r\n\r\n' |
		openssl s_client -connect "127.0.0.1:$port" -servername localhost \
		-ign_eof >"$tmp/client.out" 2>&1 || { cat "$tmp/client.out" >&2; fail "s_client $alg"; }
	grep -q "^HTTP/1.0 200 ok" "$tmp/client.out" ||
		{ cat "$tmp/client.out" >&2; fail "s_server $alg served no page"; }
	grep -q "Cipher is" "$tmp/client.out" || fail "s_client $alg: no cipher negotiated"
	wait "$server" || { cat "$tmp/server.err" >&2; fail "s_server $alg failed"; }
	server=""
	check_stats "$tmp/server.err" "s_server $alg"
	echo "  $alg: s_server served s_client ($(stat_of "$tmp/server.err" allocations) secure allocations)"

	if [ "$secretmem" = yes ]; then
		[ -n "$mapped" ] && [ "$mapped" -gt 0 ] ||
			{ cat "$tmp/secrets" >&2; fail "mmkit secrets does not show s_server $alg's secret memory"; }
		echo "  $alg: mmkit secrets shows $mapped bytes of memfd_secret in s_server"
	else
		echo "  $alg: mmkit secrets not checked: memfd_secret is unavailable here (the shim used the mlock fallback)"
	fi
done
exit 0
