#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# mmkit bench pac: a --quick run gives the documented JSON, table "keys",
# with the published figures beside.  Where mmkit probe says PAC is
# unsupported (this x86_64 host), every row is unavailable with the probe's
# reason, the text says "unsupported:" and the exit status is 0; where it is
# native (arm64 with address authentication), every key configuration is
# measured.  Bad options get a usage message and exit 2.
set -u
mmkit="$MMKIT_BUILD/mmkit"
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -x "$MMKIT_BUILD/bench/bench-pac" ] ||
	{ echo "SKIP: no bench-pac in $MMKIT_BUILD (built without benchmarks)"; exit 77; }

"$mmkit" probe --json > "$tmp/probe" || fail "mmkit probe --json failed"
"$mmkit" bench pac --quick --json > "$tmp/json" 2> "$tmp/err" ||
	fail "bench pac --quick --json exited $?: $(cat "$tmp/err")"
python3 - "$tmp/probe" "$tmp/json" "$tmp/err" <<'EOF' || fail "bench pac --json is not the documented report"
import json, sys
pac = json.load(open(sys.argv[1]))["features"]["pac"]
d = json.load(open(sys.argv[2]))
err = open(sys.argv[3]).read()
assert d["schema"] == "mmkit-bench/1" and d["bench"] == "pac", d
assert d["parameters"]["calls"] == 10000 and d["parameters"]["rounds"] == 3, d["parameters"]
labels = ["all keys enabled", "APIA disabled", "APIA, APIB, APDA, APDB disabled"]
assert [r["label"] for r in d["rows"]] == labels, d["rows"]
assert all(r["table"] == "keys" for r in d["rows"] + d["seed"]), d
seed = {r["label"]: r["metrics"]["ns_per_call"]["median"] for r in d["seed"]}
assert seed == {"all keys enabled": 316.7, "keys disabled": 319.6}, seed
if pac["status"] == "unsupported":
    for r in d["rows"]:
        assert r["available"] is False and r["reason"] == pac["reason"], r
    assert "unsupported: " + pac["reason"] in err, err
    assert not d.get("ratios"), d["ratios"]
else:
    assert pac["status"] == "native", pac
    for r in d["rows"]:
        m = r["metrics"]["ns_per_call"]
        assert r["available"] is True and m["unit"] == "ns" and m["n"] == 3, r
        assert 0 < m["min"] <= m["median"] <= m["max"], r
    ratios = {r["what"]: r["value"] for r in d["ratios"]}
    for label in labels[1:]:
        assert ratios[label + " / all keys enabled"] > 0, ratios
EOF

"$mmkit" bench pac --quick > "$tmp/text" 2>/dev/null || fail "bench pac --quick exited $?"
grep -q '^published: 316.7 ns all keys enabled, 319.6 ns keys disabled' "$tmp/text" ||
	fail "bench pac does not show the published figures: $(cat "$tmp/text")"
status=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["features"]["pac"]["status"])' \
	"$tmp/probe")
if [ "$status" = unsupported ]; then
	grep -q '^unsupported: ' "$tmp/text" || fail "bench pac does not say unsupported: $(cat "$tmp/text")"
else
	grep -q '^APIA disabled  *[0-9]' "$tmp/text" || fail "bench pac has no APIA disabled row"
fi
for bad in "--calls" "--calls 0" "--calls x" "--calls 1000000001" "--rounds 0" "--rounds 102" \
	"--bogus"; do
	# shellcheck disable=SC2086
	"$mmkit" bench pac $bad >/dev/null 2>&1
	[ $? -eq 2 ] || fail "bench pac $bad: expected exit 2"
done
exit 0
