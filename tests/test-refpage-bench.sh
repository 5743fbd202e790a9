#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# mmkit bench refpage: a short run gives every row, touch size and target
# in the mmkit-bench/1 report (tools/check-bench-json checks the schema,
# this the content: time, RSS, the page cache (shmem) and the peak RSS of
# a fresh process, of each row), --quick is the short run, and bad options get a usage
# message and exit 2.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
mmkit="$MMKIT_BUILD/mmkit"
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -x "$MMKIT_BUILD/bench/bench-refpage" ] ||
	{ echo "SKIP: no bench-refpage in $MMKIT_BUILD (built without benchmarks)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$mmkit" bench refpage --iterations 3 --json >"$tmp/report.json" 2>/dev/null ||
	fail "bench refpage --iterations 3 --json failed"
"$top/tools/check-bench-json" "$tmp/report.json" || fail "bench refpage --json is not mmkit-bench/1"
python3 - "$tmp/report.json" <<'PY' || fail "bench refpage --json lacks rows, touch sizes or targets"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["bench"] == "refpage", d["bench"]
p = d["parameters"]
assert p["iterations"] == 3 and p["map_bytes"] == 4096000 and p["quick"] is False, p
rows = [r for r in d["rows"] if r["available"]]
touch = {(r["series"], r["x"]) for r in rows if r["table"] == "touch"}
series = {s for s, _ in touch}
assert {"memset", "zero floor", "populate+memset", "memfd"} <= series, series
assert touch == {(s, x) for s in series for x in (4096, 2048000, 4096000)}, touch
for r in rows:
    if r["table"] in ("touch", "random10"):
        assert r["metrics"]["time"]["n"] == 3 and r["metrics"]["time"]["unit"] == "us", r
        assert r["metrics"]["time"]["min"] > 0 and r["metrics"]["max_rss"]["median"] > 0, r
        # The page cache of the row's pattern file: only memfd has one, of one window at most.
        shmem = r["metrics"]["shmem"]
        assert shmem["unit"] == "KiB", r
        memfd = r.get("series", r["label"]).startswith("memfd")
        assert 0 < shmem["median"] <= 4096 if memfd else shmem["median"] == 0, r
assert {r["label"] for r in rows if r["table"] == "random10"} == series, rows
# Each row's peak RSS in a fresh process: memfd fills its pattern file without mapping it.
peak = {r["label"]: r["metrics"]["peak_rss"] for r in rows if r["table"] == "fresh_process"}
assert set(peak) == series and all(m["unit"] == "KiB" and m["median"] > 0 for m in peak.values()), peak
assert peak["memfd"]["median"] < peak["memset"]["median"] * 0.55, peak
saved = {r["label"]: r["metrics"] for r in rows if r["table"] == "saved_vs_memset"}
assert set(saved) == series and saved["memset"]["4096"]["median"] == 0, saved
for r in d["rows"]:
    assert r["available"] or r["label"] in ("syscall", "kmod", "uffd", "uffd (pinned)"), r
seed = {r["label"]: r["metrics"] for r in d["seed"]}
assert seed["fastest backend (target)"]["random10%"]["median"] == 70, seed
assert len(d["targets"]) >= 4, d["targets"]
PY

"$mmkit" bench refpage --quick --json 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)["parameters"]
assert p["quick"] is True and p["iterations"] == 5, p
' || fail "bench refpage --quick is not 5 iterations"
"$mmkit" bench refpage --iterations 2 --quick --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["parameters"]["iterations"] == 2, d["parameters"]
assert {r["metrics"]["time"]["n"] for r in d["rows"] if r["table"] == "touch" and r["available"]} == {2}
' || fail "bench refpage --iterations 2 --quick is not 2 iterations"
"$mmkit" bench refpage --iterations 2 2>/dev/null >"$tmp/text"
grep -q '^memfd  *4096 ' "$tmp/text" || fail "bench refpage has no memfd row"
grep -q '^row .* max_rss_kib .* shmem_kib ' "$tmp/text" || fail "bench refpage has no shmem column"
# --threads: memset and memfd at 1 and 2 threads (more with more CPUs), each
# with its scaling ratio to memset's; the environment beside the figures.
"$mmkit" bench refpage --threads --iterations 2 --json 2>/dev/null >"$tmp/threads.json" ||
	fail "bench refpage --threads --iterations 2 --json failed"
"$top/tools/check-bench-json" "$tmp/threads.json" || fail "bench refpage --threads is not mmkit-bench/1"
python3 - "$tmp/threads.json" "$(nproc)" <<'PY' || fail "bench refpage --threads lacks rows or ratios"
import json, sys
d = json.load(open(sys.argv[1]))
p = d["parameters"]
assert p["threads"] is True and p["iterations"] == 2, p
assert p["init_on_alloc"] and p["transparent_hugepage"], p
rows = {(r["series"], r["x"]) for r in d["rows"] if r["available"]}
counts = {1, 2, int(sys.argv[2])} if int(sys.argv[2]) >= 2 else {1}
assert {(s, c) for s in ("memset", "memfd") for c in counts} <= rows, rows
if len(counts) > 1:
    assert any(r["what"].startswith("memfd scaling") for r in d["ratios"]), d["ratios"]
PY
grep -q '^init_on_alloc: ' "$tmp/text" || fail "bench refpage does not print init_on_alloc"
"$mmkit" bench refpage --tagged --threads >/dev/null 2>&1
[ $? -eq 2 ] || fail "bench refpage --tagged --threads: expected exit 2"
for bad in "--iterations" "--iterations 0" "--iterations x" "--quick x" "--bogus"; do
	# shellcheck disable=SC2086
	"$mmkit" bench refpage $bad >/dev/null 2>&1
	[ $? -eq 2 ] || fail "bench refpage $bad: expected exit 2"
done
exit 0
