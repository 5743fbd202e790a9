#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The libraries of a build show only mmkit names: the static archive defines
# no global symbol outside mmkit_* / mmkit__* (a program linking it must not
# collide with the library's internals, sys_open and the like), and the
# shared library exports only mmkit_* plus its version node.  Each shim,
# libmmkit-NAME.so, exports exactly the functions its export list
# preload/NAME.map names (plus the map's version node, if it has one):
# nothing of the library or of its own parts leaks into the programs it is
# preloaded into, and nothing it promises is missing.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }

command -v nm >/dev/null 2>&1 || { echo "SKIP: nm (binutils) is not installed"; exit 77; }
archive="$MMKIT_BUILD/libmmkit.a"
shlib="$MMKIT_BUILD/libmmkit.so"
[ -f "$archive" ] || fail "no $archive"
[ -f "$shlib" ] || fail "no $shlib"

# "nm -g" of an archive prints a "member:" line and a blank line per member;
# symbol lines end in the name, after the address and the type letter.
names=$(nm -g --defined-only "$archive") || fail "nm cannot read $archive"
names=$(echo "$names" | awk 'NF >= 2 && $0 !~ /:$/ {print $NF}')
bad=$(echo "$names" | grep -v '^mmkit_' || true)
[ -z "$bad" ] || fail "$archive defines non-mmkit global symbols:" $bad
echo "$names" | grep -q '^mmkit_[a-z]' || fail "$archive defines no mmkit_ function"

exports=$(nm -D --defined-only "$shlib") || fail "nm cannot read $shlib"
exports=$(echo "$exports" | awk 'NF >= 2 {print $NF}')
# The version node is an absolute symbol named after the version script's node.
bad=$(echo "$exports" | grep -v '^MMKIT_[0-9.]*$' | grep -v '^mmkit_[a-z0-9_]*@@MMKIT_[0-9.]*$' || true)
[ -z "$bad" ] || fail "$shlib exports non-mmkit symbols:" $bad
echo "$exports" | grep -q '^mmkit_[a-z0-9_]*@@MMKIT_' || fail "$shlib exports no mmkit_ function"
bad=$(echo "$exports" | grep '^mmkit__' || true)
[ -z "$bad" ] || fail "$shlib exports internal mmkit__ symbols:" $bad

for map in "$top"/preload/*.map; do
	shim="$MMKIT_BUILD/libmmkit-$(basename "$map" .map).so"
	[ -f "$shim" ] || fail "no $shim for $map"
	# The names between "global:" and "local:", comments and the node's name left out.
	want=$(sed -e 's|/\*.*\*/||g' -e '/\/\*/,/\*\//d' "$map" |
		sed -n '/global:/,/local:/p' | sed -e 's/.*global://' -e '/local:/d' |
		tr ';' '\n' | tr -d ' \t' | grep -v '^$' | sort)
	[ -n "$want" ] || fail "$map names no function"
	have=$(nm -D --defined-only "$shim") || fail "nm cannot read $shim"
	# Versioned names end in @@NODE; the node itself is an absolute symbol.
	node=$(sed -n 's/^\([A-Za-z_][A-Za-z0-9_.]*\) *{.*/\1/p' "$map")
	have=$(echo "$have" | awk 'NF >= 2 {print $NF}' | sed 's/@@.*//' |
		grep -vx "${node:-}" | sort)
	[ "$have" = "$want" ] ||
		fail "$shim exports: $(echo "$have" | tr '\n' ' '); its map lists: $(echo "$want" | tr '\n' ' ')"
	echo "$(basename "$shim"): $(echo "$want" | wc -l) functions, as $(basename "$map") lists"
done
exit 0
