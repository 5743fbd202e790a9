#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# Debian's prometheus-node-exporter serves what mmkit export --textfile
# wrote into its --collector.textfile.directory (on a free loopback port,
# started and stopped here): a scrape of node_exporter has the name
# examples/named-memory set through mmkit_name(), with the Rss it touched,
# and no textfile error; written again (a rename over the file), the next
# scrape has the new figures.
set -u
. "$(dirname "$0")/fleet-test.sh"

exporter=$(command -v prometheus-node-exporter || command -v node_exporter) ||
	{ echo "SKIP: no prometheus-node-exporter (tools/install-deps)"; exit 77; }

name="test-node-exporter-$$"
named "$name"
first=$pid
mkdir "$tmp/textfiles"
"$mmkit" export --textfile "$tmp/textfiles/mmkit.prom" --pid "$first" || fail "mmkit export --textfile"
on_free_port "$tmp/node.log" "$exporter" --web.listen-address="127.0.0.1:@PORT@" \
	--collector.disable-defaults --collector.textfile --collector.textfile.directory="$tmp/textfiles"

# scrape PYTHON-EXPR ARGS...: scrapes node_exporter until its metrics (s,
# as metrics.py reads them) make EXPR true (30 s at most).
scrape() {
	tries=0
	until get "http://127.0.0.1:$port/metrics" "$tmp/node.txt" >"$tmp/status" 2>&1 &&
		check_metrics "$tmp/node.txt" "$@" >"$tmp/check" 2>&1; do
		tries=$((tries + 1))
		[ "$tries" -lt 60 ] || fail "node_exporter: $(cat "$tmp/status" "$tmp/check"); log: $(tail -n 20 "$tmp/node.log")"
		sleep 0.5
	done
}

rss='[v for n, l, v in s if n == "mmkit_name_rss_bytes" and l["name"] == a[0]] == [int(a[1])]
	and [v for n, l, v in s if n == "mmkit_name_processes" and l["name"] == a[0]] == [int(a[2])]
	and [v for n, l, v in s if n == "node_textfile_scrape_error"] == [0]'
scrape "$rss" "[anon:$name]" $((10 * page_kib * 1024)) 1

# A second process of the same name: the file is replaced, the figures follow.
named "$name"
"$mmkit" export --textfile "$tmp/textfiles/mmkit.prom" --pid "$first,$pid" || fail "mmkit export --textfile, again"
scrape "$rss" "[anon:$name]" $((20 * page_kib * 1024)) 2
exit 0
