#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The commands of the README and of docs/*.md work as written.  The rule,
# explicit so that new pages can follow it: an HTML comment on its own
# line before an indented code block says what the block is,
#
#   <!-- readme-test: run -->              the block is run, as one sh -e script
#   <!-- readme-test: run needs: P1 P2 --> the same, skipped (said why) without P1, P2 in PATH
#   <!-- readme-test: synopsis -->         "mmkit COMMAND ..." lines: each a command of
#                                          mmkit --help, all of them there, every benchmark
#   <!-- readme-test: skip: REASON -->     not run here, for REASON (printed)
#
# A block is run in a scratch directory holding a copy of README.md and
# build/ (this build), with mmkit (this build's) first in PATH and make
# running in the source tree with this build (make run: make -C TOP
# B=BUILD run).  Every indented block that shows commands, in any of the
# pages, must carry a marker: a command there cannot go untested
# unnoticed.  Inline `mmkit COMMAND` and `mmkit bench NAME` anywhere must
# name a command and a benchmark that exist.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
readme=$top/README.md
pages="$readme $(ls "$top"/docs/*.md)"
mmkit="$MMKIT_BUILD/mmkit"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: no python3 to read the README"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One file per marked block: $tmp/blocks/N.{kind,arg,sh}; errors on stderr.
mkdir "$tmp/blocks"
python3 - "$tmp/blocks" "$top" $pages <<'PY' || fail "the pages' test markers"
import os, re, sys
out, top, bad, n = sys.argv[1], sys.argv[2], [], 0
marker = re.compile(r"^<!-- readme-test: (run|synopsis|skip)(?:(?:: | needs: )(.*?))? -->$")
command = re.compile(r"^    (mmkit |make( |$)|build/|tools/|apt-get |apt |insmod |cc |export |\. )")
for page in sys.argv[3:]:
    name = os.path.relpath(page, top)
    lines = open(page).read().split("\n")
    pending, i = None, 0
    while i < len(lines):
        line = lines[i]
        m = marker.match(line)
        if line.startswith("<!-- readme-test") and not m:
            bad.append(f"{name} line {i + 1}: a marker not of the documented forms: {line}")
        if m:
            if pending:
                bad.append(f"{name} line {pending[2]}: a marker without a code block after it")
            pending = (m.group(1), m.group(2) or "", i + 1)
        elif line.startswith("    ") and (i == 0 or lines[i - 1] == ""):
            start, block = i + 1, []
            while i < len(lines) and (lines[i].startswith("    ") or lines[i] == ""):
                block.append(lines[i][4:])
                i += 1
            while block and block[-1] == "":
                block.pop()
            if pending:
                n += 1
                kind, arg, at = pending
                if "run needs" in lines[at - 1]:
                    kind = "needs"
                open(f"{out}/{n:03}.kind", "w").write(kind)
                open(f"{out}/{n:03}.arg", "w").write(arg)
                open(f"{out}/{n:03}.sh", "w").write("\n".join(block) + "\n")
                open(f"{out}/{n:03}.line", "w").write(f"{name} line {at}")
                pending = None
            elif command.match("    " + block[0]):
                bad.append(f"{name} line {start}: '{block[0]}' has no readme-test marker")
            continue
        elif line.strip() and pending and not line.startswith("<!--"):
            bad.append(f"{name} line {pending[2]}: the marker is not followed by a code block")
            pending = None
        i += 1
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
ls "$tmp/blocks"/*.kind >/dev/null 2>&1 || fail "no readme-test markers in the README or docs/"

# The commands and benchmarks that exist, as the command says.
"$mmkit" --help >"$tmp/usage" || fail "mmkit --help failed"
commands=$(sed -n '/^commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p' "$tmp/usage" | tr '\n' ' ')
benches=$(cd "$top/bench" && ls bench-*.c | sed 's/^bench-\(.*\)\.c$/\1/' | tr '\n' ' ')
is_in() { case " $2 " in *" $1 "*) return 0 ;; esac; return 1; }

# The scratch directory the run blocks work in, and their PATH.
work=$tmp/work
mkdir -p "$work" "$tmp/bin"
cp "$readme" "$work/README.md"
ln -s "$MMKIT_BUILD" "$work/build"
ln -s "$mmkit" "$tmp/bin/mmkit"
printf '#!/bin/sh\nexec %s -C "%s" B="%s" "$@"\n' "$(command -v make)" "$top" "$MMKIT_BUILD" \
	>"$tmp/bin/make"
chmod +x "$tmp/bin/make"

ran=0 skipped=0
for kind_file in "$tmp/blocks"/*.kind; do
	n=${kind_file%.kind}
	kind=$(cat "$kind_file") arg=$(cat "$n.arg") line=$(cat "$n.line")
	case $kind in
	skip)
		[ -n "$arg" ] || fail "$line: skip without a reason"
		echo "not run ($line): $arg"
		skipped=$((skipped + 1)) ;;
	synopsis)
		seen=""
		while read -r word cmd rest; do
			[ "$word" = mmkit ] || continue
			case $cmd in --version | help) continue ;; esac
			is_in "$cmd" "$commands" || fail "$line: 'mmkit $cmd' is no command of mmkit --help"
			seen="$seen $cmd"
			# Each --option shown is one the command's usage names (for
			# bench, every benchmark's usage).
			for opt in $(echo "$rest" | grep -oE -- '--[a-z][a-z-]*'); do
				if [ "$cmd" = bench ]; then
					for b in $benches; do
						"$mmkit" bench "$b" --help | grep -q -- "$opt" ||
							fail "$line: mmkit bench shows $opt, which bench $b --help does not name"
					done
				else
					"$mmkit" "$cmd" --help | grep -q -- "$opt" ||
						fail "$line: mmkit $cmd shows $opt, which its --help does not name"
				fi
			done
		done <"$n.sh"
		for cmd in $commands; do
			is_in "$cmd" "$seen" || fail "$line: the command list lacks mmkit $cmd"
		done
		for b in $benches; do
			grep 'benchmarks: ' "$n.sh" | grep -qw "$b" ||
				fail "$line: the command list's benchmarks lack $b"
		done
		echo "checked ($line): the command list against mmkit --help and bench/" ;;
	run | needs)
		missing=""
		if [ "$kind" = needs ]; then
			for p in $arg; do
				command -v "$p" >/dev/null 2>&1 || missing="$missing $p"
			done
		fi
		if [ -n "$missing" ]; then
			echo "not run ($line): needs$missing"
			skipped=$((skipped + 1))
			continue
		fi
		(cd "$work" && HOME=$work PATH="$tmp/bin:$PATH" timeout 600 sh -e "$n.sh") \
			>"$tmp/out" 2>&1 ||
			{ sed 's/^/    /' "$tmp/out" >&2; fail "$line: the block failed: $(cat "$n.sh")"; }
		echo "ran ($line): $(head -n 1 "$n.sh")"
		ran=$((ran + 1)) ;;
	esac
done

# The "Try it" block must show what it promises: the named region.
grep -n 'named-memory' "$tmp/blocks"/*.sh >/dev/null &&
	(cd "$work" && PATH="$tmp/bin:$PATH" sh -e "$(grep -l 'named-memory' "$tmp/blocks"/*.sh | head -n 1)") 2>/dev/null |
	grep -q '\[anon:example-cache\]$' || fail "the README's named-memory example shows no [anon:example-cache]"

# The first-use examples print what the README says of them.
out=$("$MMKIT_BUILD/examples/reference-pages") || fail "examples/reference-pages failed"
echo "$out" | grep -q 'byte 0 reads 0xaa, byte 4096 (written) 0x1, the last byte 0xaa$' ||
	fail "examples/reference-pages: $out"
out=$("$MMKIT_BUILD/examples/secret-memory") || fail "examples/secret-memory failed"
echo "$out" | grep -qE '^a 32-byte key on (memfd_secret|mlock) ' || fail "examples/secret-memory: $out"
"$MMKIT_BUILD/examples/lock-on-fault" 0 >/dev/null 2>&1 && fail "examples/lock-on-fault accepted 0 MiB"

# Inline mentions: `mmkit COMMAND` and `mmkit bench NAME` name what exists.
for page in $pages; do
	for cmd in $(grep -oE '`mmkit [a-z]+' "$page" | sed 's/^`mmkit //' | sort -u); do
		is_in "$cmd" "$commands help" || fail "${page#$top/} mentions \`mmkit $cmd\`: no such command"
	done
	for b in $(grep -oE 'mmkit bench [a-z]+' "$page" | sed 's/^mmkit bench //' | sort -u); do
		[ "$b" = NAME ] || is_in "$b" "$benches" || fail "${page#$top/} mentions mmkit bench $b: no such benchmark"
	done
done
echo "README and docs/: $ran blocks ran, $skipped not run (reasons above)"
