#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The Rust crates as crates.io would get them (issue 33): `cargo package`
# of the workspace (mmkit-sys, then mmkit against it), each .crate
# unpacked alone into an empty directory, and mmkit's tests built and run
# there, with mmkit-sys taken from its unpacked .crate ([patch.crates-io]:
# it is not published) and nothing of the repository around: a C file or
# header the packages lack fails the build.  (`cargo publish --dry-run`
# does the same build but asks crates.io's index first, which a test
# cannot.)  Offline: the crates of Cargo.lock come from ~/.cargo, as for
# tests/test-rust.sh.  Builds into $MMKIT_BUILD/rust-package.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }

home=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}
cargo_bin=${CARGO_HOME:-$home/.cargo}/bin
cargo=$(command -v cargo) || cargo=$cargo_bin/cargo
[ -x "$cargo" ] || { echo "SKIP: no cargo on PATH or in $cargo_bin"; exit 77; }
PATH=$(dirname "$cargo"):$PATH
export PATH
export CARGO_TARGET_DIR="${MMKIT_BUILD:?}/rust-package"
cd "$top/bindings/rust" || fail "no bindings/rust"
"$cargo" fetch --locked --offline >/dev/null 2>&1 ||
	{ echo "SKIP: the crates of Cargo.lock are not in ~/.cargo: run tools/install-deps"; exit 77; }
rm -rf "$CARGO_TARGET_DIR/package"
mkdir -p "$CARGO_TARGET_DIR" || exit 1
echo "== cargo package --workspace"
"$cargo" package --workspace --offline --locked --allow-dirty --no-verify \
	>"$CARGO_TARGET_DIR/package.log" 2>&1 || {
	cat "$CARGO_TARGET_DIR/package.log"
	# An older cargo looks for an unpublished member in crates.io's index.
	! grep -q 'no matching package named .mmkit-sys' "$CARGO_TARGET_DIR/package.log" ||
		{ echo "SKIP: $("$cargo" --version) cannot package crates that depend on an unpublished member"; exit 77; }
	fail "cargo package of the workspace"
}

unpacked=$CARGO_TARGET_DIR/unpacked
rm -rf "$unpacked"
mkdir -p "$unpacked" || exit 1
for crate in mmkit-sys mmkit; do
	tar -xzf "$CARGO_TARGET_DIR/package/$crate-0.1.0.crate" -C "$unpacked" ||
		fail "unpacking $crate-0.1.0.crate"
done
# Nothing in the unpacked crates leads back into the repository.
links=$(find "$unpacked" -type l)
[ -z "$links" ] || fail "the packaged crates hold symbolic links: $links"

echo "== cargo test of the packaged mmkit against the packaged mmkit-sys"
cd "$unpacked/mmkit-0.1.0" || exit 1
"$cargo" test --offline --all-features --tests \
	--config "patch.crates-io.mmkit-sys.path=\"$unpacked/mmkit-sys-0.1.0\"" ||
	fail "the packaged mmkit does not build or pass its tests from the .crate files"
exit 0
