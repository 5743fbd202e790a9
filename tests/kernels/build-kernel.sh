#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# Builds a self-built test kernel from Debian's linux-source-VERSION:
# tinyconfig + CONFIG, and checks that every option asked for made it into
# the final .config (Kconfig drops options silently).  One script for both
# architectures: it is part of every self-built kernel's cache key.
#   build-kernel.sh SOURCE_DEB VERSION CONFIG WORKDIR [amd64|arm64]
#	->  WORKDIR/bzImage (amd64), WORKDIR/Image (arm64, cross-built
#	    with aarch64-linux-gnu-)
set -eu
deb=$1 version=$2 config=$3 work=$4
src="$work/src"
case ${5:-amd64} in
amd64)	export ARCH=x86_64
	target=bzImage built=arch/x86/boot/bzImage ;;
arm64)	export ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-
	target=Image built=arch/arm64/boot/Image ;;
*)	echo "build-kernel.sh: no such architecture: $5 (amd64 or arm64)" >&2
	exit 1 ;;
esac

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
make -s -j"$(nproc)" $target modules
cp "$built" "$work/$target"
