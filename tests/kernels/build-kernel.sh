#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# Builds a self-built test kernel from Debian's linux-source-VERSION:
# tinyconfig + CONFIG, and checks that every option asked for made it into
# the final .config (Kconfig drops options silently).  ARCH x86_64 (the
# default) builds natively, arm64 with the aarch64-linux-gnu- cross
# compiler.
#   build-kernel.sh SOURCE_DEB VERSION CONFIG WORKDIR [ARCH]
#	->  WORKDIR/bzImage (x86_64), WORKDIR/Image (arm64)
set -eu
deb=$1 version=$2 config=$3 work=$4 arch=${5:-x86_64}
src="$work/src"
case $arch in
x86_64)	image=arch/x86/boot/bzImage ;;
arm64)	image=arch/arm64/boot/Image
	export CROSS_COMPILE=aarch64-linux-gnu- ;;
*)	echo "build-kernel.sh: no kernel image known for ARCH $arch" >&2
	exit 1 ;;
esac
export ARCH="$arch"

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
make -s -j"$(nproc)" "$(basename "$image")" modules
cp "$image" "$work/$(basename "$image")"
