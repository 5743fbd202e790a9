#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# mmkit bench lock: a tiny run gives the six strategies, each keeping locked
# what it should (all of the file, exactly the pages read, their batches, or
# with MLOCK_ONFAULT at least the pages read), the patch's figures and the
# ratios in the mmkit-bench/1 JSON; too small an RLIMIT_MEMLOCK is refused
# with the figure needed; bad options exit 2.
set -u
mmkit="$MMKIT_BUILD/mmkit"
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -x "$MMKIT_BUILD/bench/bench-lock" ] ||
	{ echo "SKIP: no bench-lock in $MMKIT_BUILD (built without benchmarks)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check_json() {	# the JSON of a --quick run on stdin
	python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["schema"] == "mmkit-bench/1" and d["bench"] == "lock", d
p = d["parameters"]
assert p["size_bytes"] == 4 << 20 and p["accesses"] == 500 and p["rounds"] == 1, p
page_kib, size_kib, touched = p["page_size"] // 1024, p["size_bytes"] // 1024, p["pages_touched"]
assert 0 < touched <= 500 and p["peak_vmas"] >= 1, p
labels = ["mlock all", "mlock per page", "PROT_NONE batch 1", "PROT_NONE batch 8",
          "PROT_NONE batch 16", "MLOCK_ONFAULT"]
rows = {r["label"]: r for r in d["rows"]}
assert sorted(rows) == sorted(labels) and len(d["rows"]) == 6, rows.keys()
for label, r in rows.items():
    assert r["table"] == "strategies" and r["available"], r
    m = {k: v["median"] for k, v in r["metrics"].items()}
    assert set(m) == {"setup_ms", "processing_ms", "rss_kib", "locked_kib"}, r
    assert m["setup_ms"] > 0 and m["processing_ms"] > 0, r
    # Every page mapped is locked; none is locked twice.
    assert 0 < m["locked_kib"] == m["rss_kib"] <= size_kib, r
    locked = m["locked_kib"] // page_kib
    if label == "mlock all":
        assert locked * page_kib == size_kib, r
    elif label in ("mlock per page", "PROT_NONE batch 1"):
        assert locked == touched, (touched, r)
    elif label.startswith("PROT_NONE batch"):
        batch = int(label.split()[-1])
        assert touched <= locked <= touched * batch, (touched, r)
    else:
        # Lock on fault: the pages read, and what fault-around mapped beside them.
        assert locked >= touched, (touched, r)
seed = {r["label"]: r for r in d["seed"]}
assert sorted(seed) == sorted(labels), seed.keys()
assert seed["MLOCK_ONFAULT"]["metrics"]["processing_ms"]["median"] == 17904, seed
assert seed["MLOCK_ONFAULT"]["metrics"]["setup_ms"]["median"] == 0.189, seed
assert "setup_ms" not in seed["mlock per page"]["metrics"], seed
ratios = {r["what"]: r["value"] for r in d["ratios"]}
assert len(ratios) == 10 and all(v > 0 for v in ratios.values()), ratios
assert abs(ratios["processing_ms mlock all / MLOCK_ONFAULT (seed)"] - 8274 / 17904) < 1e-6, ratios
assert len(d["targets"]) == 1 and isinstance(d["targets"][0]["met"], bool), d["targets"]
'
}

"$mmkit" bench lock --quick --json 2>"$tmp/err" >"$tmp/out" || fail "bench lock --quick --json: $(cat "$tmp/err")"
check_json <"$tmp/out" || fail "bench lock --quick --json is not the expected report"
"$mmkit" bench lock --quick --cold --json 2>"$tmp/err" >"$tmp/out" ||
	fail "bench lock --quick --cold --json: $(cat "$tmp/err")"
check_json <"$tmp/out" || fail "bench lock --quick --cold --json is not the expected report"
"$mmkit" bench lock --quick >"$tmp/out" 2>/dev/null || fail "bench lock --quick (table) failed"
[ "$(grep -c '^\(mlock\|PROT_NONE\|MLOCK_ONFAULT\)' "$tmp/out")" -eq 6 ] ||
	fail "bench lock --quick does not print six strategies: $(cat "$tmp/out")"

# 64 KiB of RLIMIT_MEMLOCK cannot lock a 4 MiB file: refused, naming the limit needed.
# Root is exempt (CAP_IPC_LOCK), so it runs the check as nobody with no capability.
if [ "$(id -u)" -eq 0 ]; then
	command -v setpriv >/dev/null ||
		{ echo "SKIP: no setpriv to run the RLIMIT_MEMLOCK check unprivileged"; exit 77; }
	as_user="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all"
else
	as_user=""
fi
# shellcheck disable=SC2086
(ulimit -l 64 && exec $as_user "$MMKIT_BUILD/bench/bench-lock" --quick) >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || fail "bench lock under a 64 KiB RLIMIT_MEMLOCK: exit $rc, expected 1 ($(cat "$tmp/err"))"
grep -q 'ulimit -l 4096' "$tmp/err" || fail "bench lock does not say what limit it needs: $(cat "$tmp/err")"

for bad in "--size" "--size 0" "--size 1x" "--size 2T" "--accesses 0" "--accesses x" \
	"--seed -1" "--rounds 0" "--rounds 52" "--bogus"; do
	# shellcheck disable=SC2086
	"$mmkit" bench lock $bad >/dev/null 2>&1
	[ $? -eq 2 ] || fail "bench lock $bad: expected exit 2"
done
exit 0
