#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The Go module as `go get` fetches it, without a replace directive: the
# repository's tracked files are laid out as version v0.1.0 of
# mmkit.dev/mmkit in a module proxy on disk (tests/go-proxy: archive/zip
# and the go command's rules for module zips, which `go get` checks); a new
# module in a temporary directory gets it from there alone
# (GOPROXY=file://..., an empty module cache, no checksum database), builds
# a program that allocates a secret, and runs it.  Needs a Go toolchain and
# git (the tracked files); no network (GOPROXY=off wherever nothing is to
# be fetched, so that a download would fail rather than hide).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/tests/go-toolchain.sh"
git -C "$top" rev-parse --git-dir >/dev/null 2>&1 || {
	echo "SKIP: not a git checkout: the module's files are the tracked ones"
	exit 77
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mmkit-go-proxy.XXXXXX") || exit 1
# The module cache makes its files read-only.
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT

# The tracked files as the working tree has them, as a release would ship them.
mkdir "$tmp/src" || exit 1
(cd "$top" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$tmp/src" || exit 1
(cd "$top/tests/go-proxy" && GOPROXY=off go run . "$tmp/src" v0.1.0 "$tmp/proxy") || {
	echo "FAIL: the module does not make a module zip (above: which file, which rule)"
	exit 1
}

mkdir "$tmp/consumer" || exit 1
cd "$tmp/consumer" || exit 1
cat >go.mod <<'MOD'
module example.com/consumer

go 1.19
MOD
cat >main.go <<'GO'
package main

import (
	"fmt"
	"os"

	mmkit "mmkit.dev/mmkit/bindings/go"
)

func main() {
	key, err := mmkit.NewSecretRandom(32)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	defer key.Destroy()
	st, err := mmkit.SecretStatistics()
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("secret", len(key.Bytes()), "live", st.AllocsLive)
}
GO
export GOPROXY="file://$tmp/proxy" GOSUMDB=off GONOSUMDB=mmkit.dev GOFLAGS=-mod=mod \
	GOMODCACHE="$tmp/modcache" GOTOOLCHAIN=local
go get mmkit.dev/mmkit@v0.1.0 || { echo "FAIL: go get mmkit.dev/mmkit@v0.1.0 from the proxy on disk"; exit 1; }
grep -q '^require mmkit.dev/mmkit v0.1.0' go.mod && ! grep -q replace go.mod || {
	echo "FAIL: go.mod after go get:"; cat go.mod; exit 1
}
go build -o consumer . || { echo "FAIL: the consumer does not build against the fetched module"; exit 1; }
out=$(./consumer) || { echo "FAIL: the consumer: $out"; exit 1; }
[ "$out" = "secret 32 live 1" ] || { echo "FAIL: the consumer printed '$out', want 'secret 32 live 1'"; exit 1; }
echo "mmkit.dev/mmkit@v0.1.0 from a module proxy on disk: $(wc -c <"$tmp/proxy/mmkit.dev/mmkit/@v/v0.1.0.zip") byte zip; the consumer says: $out"
