#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# tools/plot: a report of each kind (a sweep, bars with the seed beside,
# a table of two units, a row measured nowhere) becomes a well-formed SVG
# with the subplots, bars and lines it should have, counted in the SVG;
# --first-metric draws fewer; the quick reports of the benchmarks built
# draw too; bad input gets a message and exit 2, never a traceback.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
plot=$top/tools/plot
fail() { echo "FAIL: $*" >&2; exit 1; }

# The interpreter tools/plot runs with (Debian's, where python3-matplotlib is).
python=$(sed -n '1s/^#! *//p' "$plot")
"$python" -c 'import matplotlib' 2>/dev/null ||
	{ echo "SKIP: no matplotlib for $python (tools/install-deps: python3-matplotlib)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# count SVG: "axes bars seed_bars lines" drawn, by the ids tools/plot gives them.
count() {
	python3 - "$1" <<'PY'
import sys
import xml.etree.ElementTree as ET
ids = [e.get("id", "") for e in ET.parse(sys.argv[1]).iter()]
n = lambda p: sum(i.startswith(p) for i in ids)
print(n("mmkit-axes-"), n("mmkit-bar-") - n("mmkit-bar-seed-"), n("mmkit-bar-seed-"), n("mmkit-line-"))
PY
}

cat >"$tmp/kinds.json" <<'EOF_JSON'
{"schema": "mmkit-bench/1", "bench": "example", "command": ["bench-example", "--json"],
 "machine": {"arch": "x86_64", "cpus": 2, "cpu": "a CPU", "mem_kib": 1024},
 "kernel": {"release": "6.1.0", "version": "#1"},
 "parameters": {"rounds": 3, "quick": false, "backend": "memfd"},
 "rows": [
  {"table": "sweep", "series": "a", "label": "10 B", "x": 10, "x_unit": "bytes", "available": true,
   "metrics": {"time": {"unit": "us", "median": 2, "min": 1, "max": 3, "n": 3}}},
  {"table": "sweep", "series": "a", "label": "10000 B", "x": 10000, "x_unit": "bytes", "available": true,
   "metrics": {"time": {"unit": "us", "median": 20, "min": 19, "max": 25, "n": 3}}},
  {"table": "sweep", "series": "a", "label": "100 B", "x": 100, "x_unit": "bytes", "available": true,
   "metrics": {"time": {"unit": "us", "median": 5, "min": 4, "max": 6, "n": 3}}},
  {"table": "sweep", "series": "b", "label": "10 B", "x": 10, "x_unit": "bytes", "available": true,
   "metrics": {"time": {"unit": "us", "median": 3, "min": 3, "max": 3, "n": 1}}},
  {"table": "sweep", "series": "c", "label": "c", "available": false, "reason": "no c here"},
  {"table": "bars", "label": "one", "available": true,
   "metrics": {"alone": {"unit": "ns", "median": 10, "min": 9, "max": 12, "n": 3},
               "busy": {"unit": "ns", "median": 15, "min": 15, "max": 15, "n": 1}}},
  {"table": "bars", "label": "two", "available": true,
   "metrics": {"alone": {"unit": "ns", "median": 30, "min": 29, "max": 31, "n": 3},
               "busy": {"unit": "ns", "median": 35, "min": 35, "max": 35, "n": 1}}},
  {"table": "bars", "label": "three", "available": false, "reason": "not built in"},
  {"table": "mixed", "label": "one", "available": true,
   "metrics": {"pages": {"unit": "pages", "median": 4, "min": 4, "max": 4, "n": 1},
               "locked": {"unit": "KiB", "median": 16, "min": 16, "max": 16, "n": 1}}},
  {"table": "mixed", "label": "two", "available": true,
   "metrics": {"pages": {"unit": "pages", "median": 8, "min": 8, "max": 8, "n": 1},
               "locked": {"unit": "KiB", "median": 32, "min": 32, "max": 32, "n": 1}}}
 ],
 "seed": [
  {"table": "sweep", "series": "a", "label": "10 B", "x": 10, "x_unit": "bytes", "available": true,
   "metrics": {"time": {"unit": "us", "median": 4, "min": 4, "max": 4, "n": 1}}},
  {"table": "sweep", "series": "a", "label": "100 B", "x": 100, "x_unit": "bytes", "available": true,
   "metrics": {"time": {"unit": "us", "median": 8, "min": 8, "max": 8, "n": 1}}},
  {"table": "bars", "label": "one", "available": true,
   "metrics": {"alone": {"unit": "ns", "median": 12, "min": 12, "max": 12, "n": 1},
               "busy": {"unit": "ns", "median": 18, "min": 18, "max": 18, "n": 1}}}
 ],
 "ratios": [{"what": "two over one", "value": 3}],
 "targets": [{"target": "fast", "figure": "10 ns", "met": true}]}
EOF_JSON
"$top/tools/check-bench-json" "$tmp/kinds.json" || fail "the test's own report is not mmkit-bench/1"

"$plot" "$tmp/kinds.json" "$tmp/kinds.svg" || fail "plot failed on a report of each kind"
# Subplots: sweep, bars, mixed in pages and in KiB.  Bars: 2 labels x 2
# metrics, 2 labels x (1 + 1); the seed's 2.  Lines: a, b and the seed's a.
[ "$(count "$tmp/kinds.svg")" = "4 8 2 3" ] ||
	fail "plot drew (axes bars seed-bars lines) $(count "$tmp/kinds.svg"), expected 4 8 2 3"
grep -q 'seed' "$tmp/kinds.svg" || fail "the seed is not labelled in the SVG"
# Only alone and pages: a bar fewer for each label and no KiB subplot; the lines stay.
"$plot" --first-metric "$tmp/kinds.json" "$tmp/first.svg" || fail "plot --first-metric failed"
[ "$(count "$tmp/first.svg")" = "3 4 1 3" ] ||
	fail "plot --first-metric drew $(count "$tmp/first.svg"), expected 3 4 1 3"

# The benchmarks' own reports, as many as are built (each quick: seconds):
# the subplots, bars and lines counted from the report itself.
for name in names refpage; do
	prog=$MMKIT_BUILD/bench/bench-$name
	[ -x "$prog" ] || { echo "note: $prog not built: its report not drawn"; continue; }
	"$prog" --quick --json >"$tmp/$name.json" 2>/dev/null || fail "bench-$name --quick --json failed"
	"$plot" "$tmp/$name.json" "$tmp/$name.svg" || fail "plot failed on bench-$name's report"
	expected=$(python3 - "$tmp/$name.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
panels, bars, seed_bars, lines = set(), 0, 0, set()
for section in ("rows", "seed"):
    for r in d[section]:
        for metric, m in r.get("metrics", {}).items():
            panels.add((r["table"], m["unit"]))
            if "x" in r:
                lines.add((section, r["table"], r.get("series"), metric))
            elif section == "seed":
                seed_bars += 1
            else:
                bars += 1
print(len(panels), bars, seed_bars, len(lines))
PY
)
	[ "$(count "$tmp/$name.svg")" = "$expected" ] ||
		fail "plot of bench-$name drew $(count "$tmp/$name.svg"), the report has $expected"
done

# Bad input: a message on stderr, exit 2, no traceback.
expect_2() {
	"$plot" "$@" >/dev/null 2>"$tmp/err"
	status=$?
	[ "$status" -eq 2 ] || fail "plot $*: exit $status, expected 2"
	[ -s "$tmp/err" ] || fail "plot $*: no message"
	! grep -q Traceback "$tmp/err" || fail "plot $*: a traceback"
}
echo 'not json' >"$tmp/bad.json"
echo '{"schema": "mmkit-bench/0"}' >"$tmp/old.json"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    r.pop("metrics", None)
    r.update(available=False, reason="not here")
d["seed"] = []
json.dump(d, open(sys.argv[2], "w"))' "$tmp/kinds.json" "$tmp/none.json"
expect_2
expect_2 "$tmp/kinds.json"
expect_2 --bogus "$tmp/kinds.json" "$tmp/out.svg"
expect_2 "$tmp/missing.json" "$tmp/out.svg"
expect_2 "$tmp/bad.json" "$tmp/out.svg"
expect_2 "$tmp/old.json" "$tmp/out.svg"
grep -q 'mmkit-bench/1' "$tmp/err" || fail "plot of another schema does not name mmkit-bench/1"
expect_2 "$tmp/none.json" "$tmp/out.svg"
expect_2 "$tmp/kinds.json" "$tmp/no/such/dir/out.svg"
exit 0
