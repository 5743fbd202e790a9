#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# mmkit bench secret --direct-map: a quick run gives both kinds (mmkit's pool,
# one memfd_secret page per secret) with the DirectMap changes, the pages
# each occupies and the target in the mmkit-bench/1 JSON, or says why a
# kind is unavailable; bad options exit 2.
set -u
mmkit="$MMKIT_BUILD/mmkit"
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -x "$MMKIT_BUILD/bench/bench-secret" ] ||
	{ echo "SKIP: no bench-secret in $MMKIT_BUILD (built without benchmarks)"; exit 77; }
grep -q '^DirectMap4k:' /proc/meminfo ||
	{ echo "SKIP: /proc/meminfo has no DirectMap lines (not x86)"; exit 77; }

top=$(cd "$(dirname "$0")/.." && pwd)
"$mmkit" bench secret --direct-map --quick --json 2>/dev/null >"${TMPDIR:-/tmp}/dm.$$.json" ||
	fail "bench secret --direct-map --quick --json failed"
"$top/tools/check-bench-json" "${TMPDIR:-/tmp}/dm.$$.json" ||
	{ rm -f "${TMPDIR:-/tmp}/dm.$$.json"; fail "the report is not mmkit-bench/1"; }
python3 - "${TMPDIR:-/tmp}/dm.$$.json" <<'EOF_PY' || { rm -f "${TMPDIR:-/tmp}/dm.$$.json"; fail "bench secret --direct-map --json is not the expected report"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "mmkit-bench/1" and d["bench"] == "secret", d
p = d["parameters"]
n = p["secrets"]
assert n == 50 and p["rounds"] == 2 and p["secret_size"] == 32, p
assert p["dm4k_kib_before"] > 0, p
rows = {r["label"]: r for r in d["rows"]}
assert sorted(rows) == ["memfd_secret per secret", "mmkit pool"] and len(d["rows"]) == 2, rows.keys()
for r in rows.values():
    assert r["table"] == "direct_map", r
    if not r["available"]:
        # memfd_secret missing here: the reason says so.
        assert "memfd_secret" in r["reason"] or "mmkit_secret_alloc" in r["reason"], r
        continue
    m = {k: v["median"] for k, v in r["metrics"].items()}
    for k in ("dm4k_kib", "dm2m_kib", "dm1g_kib", "dm4k_after_free_kib", "split_1g", "split_2m"):
        assert isinstance(m[k], (int, float)), (k, r)
    assert m["split_2m"] * 2048 == m["dm4k_kib"], r
    if "ranges_2m" in m:
        assert 1 <= m["ranges_1g"] <= m["ranges_2m"] <= m["pages"], r
if all(r["available"] for r in rows.values()):
    per = {k: v["median"] for k, v in rows["memfd_secret per secret"]["metrics"].items()}
    pool = {k: v["median"] for k, v in rows["mmkit pool"]["metrics"].items()}
    assert per["pages"] == n, per
    # 50 secrets of 32 B share a chunk of the pool: fewer pages than one each.
    assert 1 <= pool["pages"] < n, pool
    assert any(r["what"].startswith("pages:") and r["value"] > 1 for r in d["ratios"]), d["ratios"]
seed = d["seed"]
assert len(seed) == 1 and seed[0]["table"] == "direct_map" and seed[0]["label"] == "memfd_secret per secret", seed
assert len(d["targets"]) == 1 and isinstance(d["targets"][0]["met"], bool) and d["targets"][0]["figure"], d["targets"]
EOF_PY
rm -f "${TMPDIR:-/tmp}/dm.$$.json"

out=$("$mmkit" bench secret --direct-map --secrets 20 --rounds 1 2>/dev/null) ||
	fail "bench secret --direct-map (table) failed"
for kind in "mmkit pool" "memfd_secret per secret"; do
	echo "$out" | grep -q "^$kind " || fail "bench secret --direct-map has no $kind row: $out"
done

"$mmkit" bench secret --direct-map --help | grep -q -- '--secrets' ||
	fail "bench secret --direct-map --help does not name --secrets"
for bad in "--secrets" "--secrets 0" "--secrets 60001" "--secrets x" "--rounds 0" \
	"--rounds 52" "--bogus"; do
	# shellcheck disable=SC2086
	"$mmkit" bench secret --direct-map $bad >/dev/null 2>&1
	[ $? -eq 2 ] || fail "bench secret --direct-map $bad: expected exit 2"
done
exit 0
