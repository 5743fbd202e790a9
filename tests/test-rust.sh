#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The Rust crates (bindings/rust): rustfmt, clippy with -D warnings, the
# tests (each type's contract; 100,000 live SecretBox<[u8; 32]> as uid
# 65534 under an 8 MiB RLIMIT_MEMLOCK; drop wiping; sources of secrets
# wiped; serde into secret memory; pattern reads; names seen by regions;
# the examples of the item pages), rustdoc with -D warnings, that the C
# library built into the crate shows only mmkit_ names, and that a
# packaged mmkit-sys holds every C file lib/SOURCES lists (the packaged
# crates are built and tested by tests/test-rust-package.sh).  Builds into $MMKIT_BUILD/rust.
# Crates come from ~/.cargo's cache; only a machine that lacks them
# fetches them (Cargo.lock pins them).  Skips where there is no cargo (it is
# looked for on PATH, then in ~/.cargo/bin, where rustup puts it and where a
# PATH made elsewhere may not lead).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
crates=$top/bindings/rust
fail() { echo "FAIL: $*" >&2; exit 1; }
msrv=1.63

home=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}
cargo_bin=${CARGO_HOME:-$home/.cargo}/bin
cargo=$(command -v cargo) || cargo=$cargo_bin/cargo
[ -x "$cargo" ] ||
	{ echo "SKIP: no cargo on PATH or in $cargo_bin (tools/install-deps installs Debian's; MSRV $msrv)"; exit 77; }
# cargo runs rustc, rustdoc, clippy-driver and rustfmt from beside itself
# when they are not on PATH.
PATH=$(dirname "$cargo"):$PATH
export PATH
version=$(rustc --version 2>/dev/null | sed -n 's/^rustc \([0-9]*\.[0-9]*\).*/\1/p')
[ -n "$version" ] || { echo "SKIP: cargo without rustc"; exit 77; }
[ "$(printf '%s\n%s\n' "$msrv" "$version" | sort -t. -k1,1n -k2,2n | head -n 1)" = "$msrv" ] ||
	{ echo "SKIP: rustc $version is older than the crates' MSRV $msrv"; exit 77; }

export CARGO_TARGET_DIR="${MMKIT_BUILD:?}/rust"
cd "$crates" || fail "no $crates"
# Offline when ~/.cargo has every crate Cargo.lock names; fetched otherwise.
"$cargo" fetch --locked --offline >/dev/null 2>&1 || "$cargo" fetch --locked ||
	fail "cargo fetch: the crates of Cargo.lock cannot be had"
run() {	# what, cargo command, its arguments...
	what=$1 command=$2; shift 2
	echo "== $what"
	"$cargo" "$command" --offline --locked "$@" || fail "$what"
}

if "$cargo" fmt --version >/dev/null 2>&1; then
	echo "== cargo fmt --check"
	"$cargo" fmt --all --check || fail "cargo fmt --check: run cargo fmt in bindings/rust"
else
	echo "note: no rustfmt with this cargo: formatting not checked"
fi
run "cargo test" test --all-features

# The C library inside, as the Makefile's libmmkit.a: only mmkit_ names global.
if command -v nm >/dev/null 2>&1; then
	checked=0
	for archive in "$CARGO_TARGET_DIR"/debug/build/mmkit-sys-*/out/libmmkit.a; do
		[ -f "${archive%/*}/mmkit.o" ] || continue
		bad=$(nm -g --defined-only "$archive" | awk 'NF >= 2 && $0 !~ /:$/ {print $NF}' |
			grep -v '^mmkit_') || true
		[ -z "$bad" ] || fail "$archive defines non-mmkit global symbols:" $bad
		checked=$((checked + 1))
	done
	[ "$checked" -gt 0 ] || fail "no libmmkit.a built by mmkit-sys under $CARGO_TARGET_DIR"
else
	echo "note: no nm: the symbols of mmkit-sys's archive not checked"
fi
# clippy's build of mmkit-sys is one of its own, which would compile the C
# again; it links nothing, so it is told to use a system libmmkit.
if "$cargo" clippy --version >/dev/null 2>&1; then
	MMKIT_SYS_SYSTEM=1 run "cargo clippy" clippy --all-targets --all-features -- -D warnings
else
	echo "note: no clippy with this cargo: lints not checked"
fi
RUSTDOCFLAGS="-D warnings" run "cargo doc" doc --no-deps --all-features

# A .crate holds only its package directory: the C sources must go in
# through csrc/ (cargo stores the linked directories as files).
list=$("$cargo" package --list --allow-dirty --offline -p mmkit-sys 2>/dev/null) ||
	fail "cargo package --list -p mmkit-sys"
for f in SOURCES $(cat "$top/lib/SOURCES"); do
	echo "$list" | grep -qx "csrc/lib/$f" || fail "a packaged mmkit-sys lacks csrc/lib/$f"
done
echo "$list" | grep -qx "csrc/include/mmkit.h" || fail "a packaged mmkit-sys lacks csrc/include/mmkit.h"
exit 0
