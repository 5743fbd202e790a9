#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The Go binding (bindings/go): gofmt, go vet, and its tests and runnable
# examples under the race detector; the benchmark module against memguard
# is vetted (it builds) when its dependencies can be fetched.  Skips where
# no Go toolchain is installed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/go-toolchain.sh"
cd "$top" || exit 1
unformatted=$(gofmt -l bindings/go tests/go-proxy)
[ -z "$unformatted" ] || { echo "FAIL: gofmt -l: $unformatted"; exit 1; }
# vet after the tests and with their -race: it type-checks against the
# packages the tests compiled (from a cold build cache, vetting first
# compiled the package and its dependencies a second time, without the
# race detector: 11 of 37 s).
go test -race -count=1 ./bindings/go/ || exit 1
go vet -race ./bindings/go/ || exit 1
# The benchmark module fetches memguard; a machine without the Go proxy
# cannot build it, which is not the binding's failure.
if (cd bindings/go/bench && go mod download) >/dev/null 2>&1; then
	(cd bindings/go/bench && go vet -race .) || exit 1
else
	echo "note: bindings/go/bench not vetted: its dependencies cannot be fetched"
fi
