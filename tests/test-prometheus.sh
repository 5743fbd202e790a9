#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# A real Prometheus (Debian's) scrapes mmkit export --listen: both on free
# loopback ports, Prometheus's data in a temporary directory, everything
# stopped at the end.  A query through its HTTP API (/api/v1/query) finds
# the name examples/named-memory set through mmkit_name() with the Rss it
# touched; the target is up with no scrape error (Prometheus asks for
# OpenMetrics first, so its parser checks that format).  Then the Grafana
# dashboard (docs/grafana/mmkit.json): every metric its queries use is in
# a live scrape, and every panel's query runs in Prometheus with a result.
set -u
. "$(dirname "$0")/fleet-test.sh"

command -v prometheus >/dev/null || { echo "SKIP: no prometheus (tools/install-deps)"; exit 77; }
dashboard="$here/../docs/grafana/mmkit.json"

name="test-prometheus-$$"
named "$name"
# Two processes, not the machine: a scrape must fit in the 2 s timeout on a loaded machine.
serve --top-processes 10 --pid "$pid,$$"
cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 2s
  scrape_timeout: 2s
scrape_configs:
  - job_name: mmkit
    static_configs:
      - targets: ['$addr']
EOF
on_free_port "$tmp/prometheus.log" prometheus --config.file="$tmp/prometheus.yml" \
	--storage.tsdb.path="$tmp/data" --web.listen-address="127.0.0.1:@PORT@"
pport=$port
prom="http://127.0.0.1:$pport"

# query SECONDS PROMQL PYTHON-EXPR [PROMQL PYTHON-EXPR...]: asks each
# PROMQL through the API until EXPR holds for r, its result list (SECONDS
# at most for all); 0, or 1 with the last answer in $tmp/query.out.
query() {
	python3 - "$prom" "$@" >"$tmp/query.out" 2>&1 <<'EOF'
import json, sys, time, urllib.parse, urllib.request
prom, seconds, pairs = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
end = time.monotonic() + seconds
for q, expr in zip(pairs[::2], pairs[1::2]):
    while True:
        url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
        try:
            d = json.load(urllib.request.urlopen(url, timeout=10))
        except Exception as e:
            d = {"error": str(e)}
        r = d.get("data", {}).get("result")
        if d.get("status") == "success" and eval(expr):
            break
        if time.monotonic() > end:
            sys.exit("%s: %s" % (q, json.dumps(d)[:2000]))
        time.sleep(0.5)
EOF
}

bytes=$((10 * page_kib * 1024))
query 90 "mmkit_name_rss_bytes{name=\"[anon:$name]\"}" \
	"len(r) == 1 and r[0]['value'][1] == '$bytes' and r[0]['metric']['kind'] in ('registry', 'anon_named')" \
	'up{job="mmkit"}' "len(r) == 1 and r[0]['value'][1] == '1'" ||
	fail "$(cat "$tmp/query.out"); Prometheus: $(tail -n 20 "$tmp/prometheus.log")"
python3 - "$prom" >"$tmp/targets.out" 2>&1 <<'EOF' || fail "the target: $(cat "$tmp/targets.out")"
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/targets", timeout=10))
t = d["data"]["activeTargets"]
assert len(t) == 1 and t[0]["health"] == "up" and t[0]["lastError"] == "", t
EOF

# The dashboard: its metrics in a live scrape; its queries answered once
# three scrapes are in (rate() needs two).
get "http://$addr/metrics" "$tmp/scrape" >/dev/null || fail "GET /metrics"
python3 - "$dashboard" "$tmp/scrape" "$here" >"$tmp/dash.out" 2>&1 <<'EOF' || fail "the dashboard: $(cat "$tmp/dash.out")"
import json, re, sys
sys.path.insert(0, sys.argv[3])
import metrics
d = json.load(open(sys.argv[1]))
exprs = [t["expr"] for p in d["panels"] for t in p["targets"]]
exprs += [v["query"]["query"] for v in d["templating"]["list"] if isinstance(v.get("query"), dict)]
used = set(m for e in exprs for m in re.findall(r"\bmmkit_[a-z0-9_]+", e))
have = set(n for _, n, _, _ in metrics.parse(open(sys.argv[2]).read()))
missing = used - have
assert used and not missing, "not in the scrape: %s" % sorted(missing)
for p in d["panels"]:
    for t in p["targets"]:
        print(t["expr"].replace("$instance", ".+").replace("$name", ".+"))
EOF
set -- 'mmkit_exporter_scrapes_total' "len(r) == 1 and float(r[0]['value'][1]) >= 3"
while read -r expr; do
	set -- "$@" "$expr" "len(r) > 0"
done <"$tmp/dash.out"
query 60 "$@" || fail "the dashboard's query: $(cat "$tmp/query.out")"
exit 0
