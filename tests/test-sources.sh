#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# lib/SOURCES, the one list of the library's C files that the Makefile and
# every binding's build read: a bare file name a line, no blank or
# repeated line, exactly the lib/*.c there are (a file added to lib/ but
# not to the list would be missing from the bindings, a file listed but
# gone would break every build); and the Makefile's LIB_SRCS is that list.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
list=$top/lib/SOURCES
fail() { echo "FAIL: $*" >&2; exit 1; }
export LC_ALL=C

[ -f "$list" ] || fail "no $list"
bad=$(grep -nv '^[a-z0-9][a-z0-9_-]*\.c$' "$list")
[ -z "$bad" ] || fail "lib/SOURCES: lines that are not a bare .c file name:" "$bad"
dups=$(sort "$list" | uniq -d)
[ -z "$dups" ] || fail "lib/SOURCES lists twice:" $dups
present=$(cd "$top/lib" && ls -- *.c | sort)
listed=$(sort "$list")
missing=$(echo "$present" | grep -vxF "$listed")
[ -z "$missing" ] || fail "in lib/ but not in lib/SOURCES:" $missing
gone=$(echo "$listed" | grep -vxF "$present")
[ -z "$gone" ] || fail "in lib/SOURCES but not in lib/:" $gone

# What make builds the library from: its database, without building.
command -v make >/dev/null 2>&1 || { echo "SKIP: make is not installed"; exit 77; }
srcs=$(cd "$top" && make -s -pnq PKG_CONFIG=false nothing 2>/dev/null |
	sed -n 's/^LIB_SRCS := //p')
[ -n "$srcs" ] || fail "make's database has no LIB_SRCS"
want=$(sed 's|^|lib/|' "$list" | tr '\n' ' ' | sed 's/ $//')
[ "$srcs" = "$want" ] || fail "the Makefile builds \"$srcs\", lib/SOURCES lists \"$want\""
exit 0
