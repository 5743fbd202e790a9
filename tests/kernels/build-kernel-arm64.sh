#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# build-kernel.sh for the arm64 tiers: the same kernel, cross-built with
# aarch64-linux-gnu-.  The amd64 tiers keep build-kernel.sh, which is part
# of their kernels' cache key (changing it would rebuild every one).
#   build-kernel-arm64.sh SOURCE_DEB VERSION CONFIG WORKDIR  ->  WORKDIR/Image
set -eu
deb=$1 version=$2 config=$3 work=$4
src="$work/src"
export ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-

if [ ! -d "$src" ]; then
	rm -rf "$work/unpack" && mkdir -p "$work/unpack"
	dpkg-deb -x "$deb" "$work/unpack"
	tar -C "$work/unpack" -xaf "$work/unpack/usr/src/linux-source-$version.tar.xz"
	mv "$work/unpack/linux-source-$version" "$src"
	rm -rf "$work/unpack"
fi
cd "$src"
make -s tinyconfig
scripts/kconfig/merge_config.sh -m .config "$config" >/dev/null
make -s olddefconfig
missing=$(grep -E '^CONFIG_[A-Z0-9_]+=[ym]' "$config" | while read -r want; do
	grep -qx "$want" .config || echo "$want"
done)
if [ -n "$missing" ]; then
	echo "the kernel config dropped:" $missing >&2
	exit 1
fi
make -s -j"$(nproc)" Image modules
cp arch/arm64/boot/Image "$work/Image"
