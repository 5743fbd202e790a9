#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# Builds the self-built test kernel from Debian's linux-source-6.1:
# tinyconfig + custom-amd64.config, and checks that every option asked for
# made it into the final .config (Kconfig drops options silently).
#   build-kernel.sh SOURCE_DEB WORKDIR  ->  WORKDIR/bzImage
set -eu
here=$(cd "$(dirname "$0")" && pwd)
deb=$1 work=$2
src="$work/src"

if [ ! -d "$src" ]; then
	rm -rf "$work/unpack" && mkdir -p "$work/unpack"
	dpkg-deb -x "$deb" "$work/unpack"
	tar -C "$work/unpack" -xaf "$work"/unpack/usr/src/linux-source-6.1.tar.xz
	mv "$work"/unpack/linux-source-6.1 "$src"
	rm -rf "$work/unpack"
fi
cd "$src"
make -s ARCH=x86_64 tinyconfig
scripts/kconfig/merge_config.sh -m .config "$here/custom-amd64.config" >/dev/null
make -s ARCH=x86_64 olddefconfig
missing=$(grep -E '^CONFIG_[A-Z0-9_]+=[ym]' "$here/custom-amd64.config" | while read -r want; do
	grep -qx "$want" .config || echo "$want"
done)
if [ -n "$missing" ]; then
	echo "the kernel config dropped:" $missing >&2
	exit 1
fi
make -s ARCH=x86_64 -j"$(nproc)" bzImage modules
cp arch/x86/boot/bzImage "$work/bzImage"
