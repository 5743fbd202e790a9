#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# Builds a self-built test kernel from Debian's linux-source-VERSION:
# tinyconfig + CONFIG, and checks that every option asked for made it into
# the final .config (Kconfig drops options silently).
#   build-kernel.sh SOURCE_DEB VERSION CONFIG WORKDIR  ->  WORKDIR/bzImage
set -eu
deb=$1 version=$2 config=$3 work=$4
src="$work/src"

if [ ! -d "$src" ]; then
	rm -rf "$work/unpack" && mkdir -p "$work/unpack"
	dpkg-deb -x "$deb" "$work/unpack"
	tar -C "$work/unpack" -xaf "$work/unpack/usr/src/linux-source-$version.tar.xz"
	mv "$work/unpack/linux-source-$version" "$src"
	rm -rf "$work/unpack"
fi
cd "$src"
make -s ARCH=x86_64 tinyconfig
scripts/kconfig/merge_config.sh -m .config "$config" >/dev/null
make -s ARCH=x86_64 olddefconfig
missing=$(grep -E '^CONFIG_[A-Z0-9_]+=[ym]' "$config" | while read -r want; do
	grep -qx "$want" .config || echo "$want"
done)
if [ -n "$missing" ]; then
	echo "the kernel config dropped:" $missing >&2
	exit 1
fi
make -s ARCH=x86_64 -j"$(nproc)" bzImage modules
cp arch/x86/boot/bzImage "$work/bzImage"
