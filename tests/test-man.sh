#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The manual pages (man/): each renders with no warning from man or groff,
# and without the traces of broken font markup groff does not warn of;
# every function declared in include/mmkit.h has a section 3 page of its
# own name (the page, or a one-line .so link to its family's page) whose
# SYNOPSIS has the header's prototype word for word; every link, and every
# mmkit page another page refers to, exists; and, laid out as installed,
# `man NAME` opens the family page for each link.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
man_dir=$top/man
header=$top/include/mmkit.h
fail() { echo "FAIL: $*" >&2; exit 1; }

for tool in man groff; do
	command -v "$tool" >/dev/null 2>&1 ||
		{ echo "SKIP: $tool is not installed (tools/install-deps: man-db, groff-base)"; exit 77; }
done
man --version 2>/dev/null | grep -q '^man ' ||
	{ echo "SKIP: man is not man-db's (needs --warnings and -l)"; exit 77; }

# Rendering must not depend on the caller's locale, terminal or settings.
unset MANOPT MANPATH MANSECT MANROFFOPT
export LC_ALL=C.UTF-8 MANWIDTH=80 MANPAGER=cat PAGER=cat

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A link page is exactly one line: .so manS/TARGET.S
link_target() {	# page -> "manS/TARGET.S", or nothing for a real page
	[ "$(wc -l <"$1")" -eq 1 ] || return 0
	sed -n 's|^\.so \(man[1-9]/[a-z0-9_]*\.[1-9]\)$|\1|p' "$1"
}

# render PAGE: the text on stdout of $tmp/out, warnings of man and groff
# (at the width of a terminal and with all of groff's checks) on stderr.
render() {
	man --warnings -l -E UTF-8 "$1" >"$tmp/out" 2>"$tmp/err"
	groff -ww -mandoc -z -Tutf8 "$1" 2>>"$tmp/err"
	if [ -s "$tmp/err" ]; then
		sed 's/^/    /' "$tmp/err" >&2
		fail "$1 renders with warnings"
	fi
	[ -s "$tmp/out" ] || fail "$1 renders as nothing"
	# Font changes that did not happen leave their letters in the text:
	# "--taggedRB--jsoR]" where the backslash-f of a font escape was lost (a
	# form feed written by a tool that read it as one); groff warns of neither.
	if LC_ALL=C grep -n "$(printf '[\001-\010\013-\037\177]')" "$1" >"$tmp/ctl"; then
		sed 's/^/    /' "$tmp/ctl" | cat -v >&2
		fail "$1 holds control bytes (a font escape whose backslash-f became a form feed?)"
	fi
	if grep -nE '[a-z0-9](RB|BR|IR|RI|BI|IB|R|B|I)(\]|--)' "$tmp/out" >"$tmp/stray"; then
		sed 's/^/    /' "$tmp/stray" >&2
		fail "$1 renders font letters as text (broken markup)"
	fi
}

pages=0
for page in "$man_dir"/*.[1-9]; do
	[ -f "$page" ] || continue
	pages=$((pages + 1))
	base=$(basename "$page")
	target=$(link_target "$page")
	if [ -n "$target" ]; then
		file="$man_dir/$(basename "$target")"
		[ "${base##*.}" = "${target##*.}" ] || fail "$base links to another section: $target"
		[ -f "$file" ] || fail "$base links to $target, which is not in man/"
		[ -z "$(link_target "$file")" ] || fail "$base links to $target, itself a link"
		continue
	fi
	grep -q '^\.so' "$page" && fail "$base: a .so link must be the page's only line"
	render "$page"
	# Pages refer to each other as name(S): each must exist.
	for ref in $(grep -o 'mmkit[a-z0-9_]*([1-9])' "$tmp/out" | sort -u); do
		name=${ref%(*}
		sect=${ref#*(}
		sect=${sect%)}
		[ -f "$man_dir/$name.$sect" ] || fail "$base refers to $ref, which has no page"
	done
done
[ "$pages" -gt 0 ] || fail "no manual pages in $man_dir"

# The prototypes of include/mmkit.h, one a line with spaces collapsed:
# comments and preprocessor directives (with their continuation lines)
# dropped, declarations split at ';', what precedes the last brace of a
# piece (a struct or enum) cut off.
awk '
	{ text = text $0 "\n" }
	END {
		gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, " ", text)
		n = split(text, lines, "\n")
		text = ""
		for (i = 1; i <= n; i++) {
			if (lines[i] ~ /^[ \t]*#/)
				directive = 1
			if (!directive)
				text = text " " lines[i]
			if (lines[i] !~ /\\$/)
				directive = 0
		}
		n = split(text, decls, ";")
		for (i = 1; i <= n; i++) {
			d = decls[i]
			sub(/^.*[{}]/, "", d)
			gsub(/[ \t]+/, " ", d)
			sub(/^ /, "", d)
			sub(/ $/, "", d)
			if (d ~ /mmkit_[a-z0-9_]*\(/ && d !~ /^typedef/)
				print d ";"
		}
	}' "$header" >"$tmp/protos"
[ -s "$tmp/protos" ] || fail "no function declarations found in $header"

functions=0
while IFS= read -r proto; do
	functions=$((functions + 1))
	fn=$(printf '%s\n' "$proto" | grep -o 'mmkit_[a-z0-9_]*(' | head -n 1)
	fn=${fn%(}
	page="$man_dir/$fn.3"
	[ -f "$page" ] || fail "$fn is declared in mmkit.h but has no page man/$fn.3"
	target=$(link_target "$page")
	[ -z "$target" ] || page="$man_dir/$(basename "$target")"
	man -l -E UTF-8 "$page" 2>/dev/null |
		awk '/^[A-Z]/ { in_synopsis = ($0 == "SYNOPSIS") ; next } in_synopsis' |
		tr -s ' \n' '  ' >"$tmp/synopsis"
	grep -qF -- "$proto" "$tmp/synopsis" ||
		fail "the SYNOPSIS of $(basename "$page") lacks the prototype of mmkit.h: $proto"
	# The page names the function, so that whatis and apropos find it.
	man -l -E UTF-8 "$page" 2>/dev/null |
		awk '/^[A-Z]/ { in_name = ($0 == "NAME") ; next } in_name' |
		grep -qw -- "$fn" || fail "the NAME of $(basename "$page") does not list $fn"
done <"$tmp/protos"

# Installed, pages live in manS/ and a link says .so manS/TARGET.S from
# there: lay man/ out that way and open every link as a user would.
for page in "$man_dir"/*.[1-9]; do
	sect=${page##*.}
	mkdir -p "$tmp/tree/man$sect"
	cp "$page" "$tmp/tree/man$sect/"
done
links=0
for page in "$man_dir"/*.[1-9]; do
	target=$(link_target "$page")
	[ -n "$target" ] || continue
	links=$((links + 1))
	name=$(basename "$page")
	name=${name%.*}
	tsect=${target##*.}
	title="$(basename "$target" ".$tsect" | tr a-z A-Z)($tsect)"
	(cd "$tmp/tree" && man --warnings -l -E UTF-8 "man$tsect/$(basename "$page")") \
		>"$tmp/out" 2>"$tmp/err"
	[ ! -s "$tmp/err" ] || { cat "$tmp/err" >&2; fail "$name: the link does not render"; }
	head -n 1 "$tmp/out" | grep -qF "$title" || fail "$name: the link does not open $title"
	man -M "$tmp/tree" -E UTF-8 "$tsect" "$name" 2>"$tmp/err" | head -n 1 >"$tmp/out"
	grep -qF "$title" "$tmp/out" || { cat "$tmp/err" >&2; fail "man $name does not open $title"; }
done

echo "$pages pages ($links links), $functions functions of mmkit.h documented"
