#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# Every benchmark built ($MMKIT_BUILD/bench/bench-*, so new ones are
# covered as they come) runs at its smallest size (--quick) with --json:
# it must exit 0 and write a report that tools/check-bench-json accepts,
# naming the benchmark and saying "quick": true.  Run on a terminal
# (script(1)), one that takes longer than 3 s must have shown its progress
# line on stderr and cleared it before it finished.  The line is asked for
# from the start (MMKIT_BENCH_PROGRESS_AFTER=0), not after the first
# second: on a loaded machine a benchmark ran 5 s, most of them waiting for
# a core, and its last progress call came before its first second was up.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for prog in "$MMKIT_BUILD"/bench/bench-*; do
	name=${prog##*/bench-}
	# bench-secret.peers and the compiler's .d files are not benchmarks.
	case $name in *.*) continue ;; esac
	[ -f "$prog" ] && [ -x "$prog" ] && echo "$name" >>"$tmp/benches"
done
[ -s "$tmp/benches" ] ||
	{ echo "SKIP: no benchmark built in $MMKIT_BUILD/bench (built without benchmarks)"; exit 77; }
have_script=1
command -v script >/dev/null 2>&1 ||
	{ have_script=0; echo "note: no script(1) (bsdutils): progress lines not checked"; }

for name in $(cat "$tmp/benches"); do
	out="$tmp/$name.json"
	start=$(date +%s%N)
	# A hung benchmark fails the test instead of hanging it.
	if [ "$have_script" -eq 1 ]; then
		PROG="$MMKIT_BUILD/bench/bench-$name" OUT=$out MMKIT_BENCH_PROGRESS_AFTER=0 \
			script -qec 'exec timeout 600 "$PROG" --quick --json >"$OUT"' "$tmp/$name.tty" \
			</dev/null >/dev/null
	else
		timeout 600 "$MMKIT_BUILD/bench/bench-$name" --quick --json >"$out" 2>"$tmp/$name.tty"
	fi
	status=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	[ "$status" -eq 0 ] || { cat "$tmp/$name.tty" >&2; fail "bench-$name --quick --json: exit $status"; }
	"$top/tools/check-bench-json" "$out" || fail "bench-$name --quick --json is not mmkit-bench/1"
	python3 - "$out" "$name" <<'PY' || fail "bench-$name --quick --json: wrong bench name or no \"quick\": true"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["bench"] == sys.argv[2], d["bench"]
assert d["parameters"].get("quick") is True, d["parameters"]
PY
	# The README's tables come from tools/bench-table: one per report table.
	"$top/tools/bench-table" "$out" >"$tmp/$name.md" || fail "tools/bench-table of bench-$name failed"
	python3 - "$out" "$tmp/$name.md" <<'PY' || fail "tools/bench-table of bench-$name: a table missing"
import json, sys
d = json.load(open(sys.argv[1]))
md = open(sys.argv[2]).read()
for t in {r["table"] for r in d["rows"]}:
    assert f"**{t}**" in md, t
PY
	if [ "$have_script" -eq 1 ] && [ "$ms" -gt 3000 ]; then
		python3 - "$tmp/$name.tty" "bench-$name" <<'PY' ||
import sys
tty = open(sys.argv[1], "rb").read()
shown = tty.rfind(b"\r" + sys.argv[2].encode() + b": ")
assert shown >= 0, "no progress line"
assert tty.find(b"\r\x1b[K", shown + 1) > 0, "the progress line was not cleared"
PY
			fail "bench-$name ran $ms ms on a terminal without a progress line, or left it"
	fi
	rows=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(sum(r["available"] for r in d["rows"]), len(d["rows"]))' "$out")
	echo "bench-$name --quick --json: ${ms} ms, valid; rows available/all: $(echo "$rows" | tr ' ' /)"
done
exit 0
