#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# mmkit bench secret: a one-round run gives every allocator and size, the
# ratios and the targets in the documented JSON; bad options exit 2.
set -u
mmkit="$MMKIT_BUILD/mmkit"
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -x "$MMKIT_BUILD/bench/bench-secret" ] ||
	{ echo "SKIP: no bench-secret in $MMKIT_BUILD (built without benchmarks)"; exit 77; }

"$mmkit" bench secret --rounds 1 --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["rounds"] == 1 and d["background_live"] == 100, d
rows = {(r["allocator"], r["size"]): r for r in d["results"]}
names = {"mmkit/memfd_secret", "mmkit/mlock", "libsodium", "openssl"}
assert set(rows) == {(n, s) for n in names for s in (32, 4096)}, rows.keys()
for (name, size), r in rows.items():
    if not r["available"]:
        # The kernel may lack memfd_secret; a peer may be left out of the build.
        assert name == "mmkit/memfd_secret" or r.get("reason", "").startswith("not built in"), r
        continue
    assert r["ns_per_alloc_free"] > 0 and r["ns_per_alloc_free_with_live"] > 0, r
    assert r["alloc_free_per_sec"] > 0 and r["pages_per_1000"] > 0, r
    assert r["locked_kib_per_1000"] >= 0, r
# No ratios only when an allocator they compare is unavailable.
sizes = [x["size"] for x in d["ratios"]]
assert sizes == [32, 4096] or (sizes == [] and not all(r["available"] for r in rows.values())), d["ratios"]
for t in d["targets"]:
    assert isinstance(t["met"], bool) and t["target"] and t["figure"], t
threads = {(r["allocator"], r["threads"]): r for r in d["threads"]}
assert set(threads) == {(n, t) for n in names | {"control"} for t in (1, 2, 4, 8)}, threads.keys()
for r in threads.values():
    assert r["live_per_thread"] == (0 if r["allocator"] == "control" else 100) and r["size"] == 32, r
    assert not r["available"] or r["ns_per_pair"] > 0, r
bulk = {(r["allocator"], r["live"]): r for r in d["bulk"]}
assert set(bulk) == {(n, l) for n in names for l in (10000, 200000)}, bulk.keys()
for r in bulk.values():
    if r["available"]:
        assert r["ns_per_op_warm"] > 0 and r["ns_per_op_cold"] > 0, r
    else:
        assert r["reason"], r
# The goals of issue 14 are among the targets when every allocator ran.
if sizes:
    assert sum("bulk 200000 live" in t["target"] for t in d["targets"]) == 2, d["targets"]
' || fail "bench secret --json is not the documented JSON"

for bad in "--rounds" "--rounds 0" "--rounds x" "--bogus"; do
	# shellcheck disable=SC2086
	"$mmkit" bench secret $bad >/dev/null 2>&1
	[ $? -eq 2 ] || fail "bench secret $bad: expected exit 2"
done
exit 0
