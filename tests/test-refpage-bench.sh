#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# mmkit bench refpage: a short run gives every row, touch size and target
# in the documented JSON, and bad options get a usage message and exit 2.
set -u
mmkit="$MMKIT_BUILD/mmkit"
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -x "$MMKIT_BUILD/bench/bench-refpage" ] ||
	{ echo "SKIP: no bench-refpage in $MMKIT_BUILD (built without benchmarks)"; exit 77; }

"$mmkit" bench refpage --iterations 3 --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["iterations"] == 3 and d["map_bytes"] == 4096000, d
rows = {r["row"] for r in d["rows"]}
assert {"memset", "zero floor", "populate+memset", "memfd"} <= rows, rows
for r in d["rows"]:
    assert r["touch"] in {"4096", "2048000", "4096000", "random10%"}, r
    assert r["median_us"] > 0 and r["max_rss_kib"] > 0, r
for t in d["targets"]:
    assert isinstance(t["met"], bool) and t["target"] and t["figure"], t
' || fail "bench refpage --json is not the documented JSON"

"$mmkit" bench refpage --iterations 2 2>/dev/null | grep -q '^memfd  *4096 ' ||
	fail "bench refpage has no memfd row"
for bad in "--iterations" "--iterations 0" "--iterations x" "--bogus"; do
	# shellcheck disable=SC2086
	"$mmkit" bench refpage $bad >/dev/null 2>&1
	[ $? -eq 2 ] || fail "bench refpage $bad: expected exit 2"
done
exit 0
