#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# mmkit export: the text format 0.0.4 and OpenMetrics 1.0 as a strict reader
# (tests/metrics.py) and promtool (when installed) take them; the figures
# of a name set through mmkit_name() (with a double quote in it); hostile
# label values (a file path with a backslash, a quote, a newline, ESC and a
# byte that is not UTF-8; a command with a newline) escaped; the secret
# memory a process maps and holds open (where memfd_secret works); the page
# cache of reference pages (a page read, not the page written); the series cap
# and its [other] series; --top-processes; the textfile written by rename;
# the HTTP endpoint: /metrics, content negotiation, 404, 405, HEAD, a port
# in use, huge headers, slow and many connections, all counted; Accept's q
# and versions; HTTP/1.9 and a NUL refused; scrapes served under a flood of
# idle connections; no spinning out of descriptors; bad usage.
set -u
. "$(dirname "$0")/fleet-test.sh"

name="test-export-\"q\"-$$"
named "$name"
npid=$pid

# A process mapping a file with a hostile name, under a hostile command.
mkdir "$tmp/files"
python3 - "$tmp/files" >"$tmp/hostile.out" 2>&1 <<'EOF' &
import ctypes, mmap, os, sys, time
path = os.path.join(sys.argv[1].encode(), b'f\\b"c\nd\x1bx\xff')
with open(path, "wb") as f:
    f.write(b"x" * 4096)
f = open(path, "rb")
m = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ)
m[0]
# Names told apart only by a byte 0xff and the text \xff: two series.
twins = []
for twin in (b"g\xff", b"g\\xff"):
    with open(os.path.join(sys.argv[1].encode(), twin), "wb") as t:
        t.write(b"t" * 4096)
    t = open(os.path.join(sys.argv[1].encode(), twin), "rb")
    twins.append(mmap.mmap(t.fileno(), 4096, prot=mmap.PROT_READ))
    twins[-1][0]
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(15, b'p"\n\\\x1b', 0, 0, 0)
# Secret memory, where the kernel has memfd_secret (447): one page mapped,
# its file open twice (Python's mmap keeps a dup): 8192 bytes held open.
secret = libc.syscall(447, 0)
if secret >= 0:
    os.ftruncate(secret, 4096)
    s = mmap.mmap(secret, 4096)
    s[0] = 1
# Reference pages as the memfd backend maps them: a private mapping of a
# memfd named mmkit-refpage, one page read (page cache), one written (a copy).
ref = os.memfd_create("mmkit-refpage")
os.write(ref, b"r" * 8192)
r = mmap.mmap(ref, 8192, flags=mmap.MAP_PRIVATE)
page = r[0]
r[4096] = ord("w")
print("ready secret=%d" % (secret >= 0), flush=True)
time.sleep(600)
EOF
hpid=$!
started="$started $hpid"
tries=0
until grep -qs '^ready' "$tmp/hostile.out"; do
	tries=$((tries + 1))
	[ "$tries" -lt 100 ] || fail "the hostile process did not start: $(cat "$tmp/hostile.out")"
	sleep 0.1
done

"$mmkit" export --pid "$npid,$hpid" --top-processes 5 >"$tmp/text" 2>"$tmp/err" ||
	fail "mmkit export: $(cat "$tmp/err")"
check_metrics "$tmp/text" '
	[v for n, l, v in s if n == "mmkit_name_rss_bytes" and l["name"] == a[0]] == [10 * 1024 * int(a[1])]
	and [v for n, l, v in s if n == "mmkit_name_processes" and l["name"] == a[0]] == [1]
	and [l["kind"] for n, l, v in s if n == "mmkit_name_pss_bytes" and l["name"] == a[0]][0]
		in ("registry", "anon_named")
	and any(n == "mmkit_name_size_bytes" and l["name"] == a[2] + "/f\\\\b\"c\\\\012d\\x1bx\\xff"
		and v == 4096 for n, l, v in s)
	and any(n == "mmkit_process_rss_bytes" and l["pid"] == a[3] and l["command"] == "p\"\n\\\\\\x1b"
		for n, l, v in s)
	and [v for n, l, v in s if n == "mmkit_scrape_processes" and l["result"] == "read"] == [2]
	and [v for n, l, v in s if n == "mmkit_exporter_scrapes_total"] == [0]
	and any(n == "mmkit_secret_mapped_bytes" for n, l, v in s)
	and (a[4] == "0" or [v for n, l, v in s if n.startswith("mmkit_process_secret_") and l["pid"] == a[3]]
		== [4096, 8192])
	and [v for n, l, v in s if n == "mmkit_refpage_page_cache_bytes"] == [4096]
	and sorted(l["name"] for n, l, v in s if n == "mmkit_name_size_bytes"
		and l["name"].startswith(a[2] + "/g")) == [a[2] + "/g\\\\xff", a[2] + "/g\\xff"]
	and len(set((n, tuple(sorted(l.items()))) for n, l, v in s)) == len(s)' \
	"[anon:$name]" "$page_kib" "$tmp/files" "$hpid" "$(sed -n 's/^ready secret=//p' "$tmp/hostile.out")" ||
	fail "the text format"
if command -v promtool >/dev/null; then
	promtool check metrics <"$tmp/text" >"$tmp/promtool" 2>&1 ||
		fail "promtool check metrics: $(cat "$tmp/promtool")"
	[ ! -s "$tmp/promtool" ] || fail "promtool check metrics: $(cat "$tmp/promtool")"
	# The whole machine too, whatever it runs.
	"$mmkit" export --top-processes 20 | promtool check metrics >"$tmp/promtool" 2>&1 &&
		[ ! -s "$tmp/promtool" ] || fail "promtool, the whole machine: $(cat "$tmp/promtool")"
else
	echo "note: no promtool (tools/install-deps: prometheus): the text format is checked by tests/metrics.py only"
fi

"$mmkit" export --openmetrics --pid "$npid" >"$tmp/om" || fail "mmkit export --openmetrics"
check_metrics "$tmp/om" om 'any(n == "mmkit_name_rss_bytes" and l["name"] == a[0] for n, l, v in s)' \
	"[anon:$name]" || fail "OpenMetrics"
grep -qx '# TYPE mmkit_exporter_scrapes counter' "$tmp/om" &&
	grep -qx '# UNIT mmkit_name_rss_bytes bytes' "$tmp/om" || fail "OpenMetrics metadata"

# The cap: 3 series per name metric, the third [other], the rest counted.
"$mmkit" export --max-series 3 >"$tmp/cap" || fail "mmkit export --max-series 3"
check_metrics "$tmp/cap" '
	all(len([1 for n, l, v in s if n == m]) == 3 for m in
	    ("mmkit_name_rss_bytes", "mmkit_name_processes", "mmkit_name_mappings"))
	and [l["kind"] for n, l, v in s if n == "mmkit_name_pss_bytes" and l["name"] == "[other]"] == ["other"]
	and [v for n, l, v in s if n == "mmkit_scrape_folded_names"][0] > 1' || fail "--max-series"
grep -q '^# HELP mmkit_name_processes .*for \[other\], the sum over its names' "$tmp/cap" ||
	fail "--max-series: [other]'s processes not said to be a sum"

# The textfile: PATH replaced whole, nothing left beside it.
mkdir "$tmp/tf"
echo old >"$tmp/tf/mmkit.prom"
# Readable by node_exporter (0644) under any umask.
(umask 077 && "$mmkit" export --textfile "$tmp/tf/mmkit.prom" --pid "$npid") || fail "--textfile"
[ "$(ls "$tmp/tf")" = mmkit.prom ] || fail "--textfile left: $(ls "$tmp/tf")"
[ "$(stat -c %a "$tmp/tf/mmkit.prom")" = 644 ] || fail "--textfile mode $(stat -c %a "$tmp/tf/mmkit.prom")"
check_metrics "$tmp/tf/mmkit.prom" 'any(l.get("name") == a[0] for n, l, v in s)' "[anon:$name]" ||
	fail "--textfile content"
"$mmkit" export --textfile "$tmp/no-such-dir/mmkit.prom" 2>"$tmp/err" && fail "--textfile into no directory: exit 0"
grep -q "^mmkit: export: --textfile: cannot create" "$tmp/err" || fail "--textfile error: $(cat "$tmp/err")"

# HTTP.
serve --pid "$npid"
status=$(get "http://$addr/metrics" "$tmp/http") || fail "GET /metrics"
[ "$status" = "200 text/plain; version=0.0.4; charset=utf-8" ] || fail "GET /metrics: $status"
check_metrics "$tmp/http" 'any(l.get("name") == a[0] for n, l, v in s)' "[anon:$name]" || fail "GET /metrics"
status=$(get "http://$addr/metrics" "$tmp/http-om" \
	"Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5") ||
	fail "GET /metrics, OpenMetrics"
[ "$status" = "200 application/openmetrics-text; version=1.0.0; charset=utf-8" ] ||
	fail "GET /metrics, OpenMetrics: $status"
check_metrics "$tmp/http-om" om '[v for n, l, v in s if n == "mmkit_exporter_scrapes_total"] == [2]' ||
	fail "GET /metrics, OpenMetrics"
# Accept's media ranges: q=0 refuses, another OpenMetrics version is not 1.0.0.
for accept in "application/openmetrics-text;q=0,text/plain;q=0.5" \
	"application/openmetrics-text; version=2.0.0" "text/plain;version=0.0.4,application/openmetrics-text;q=0.5"; do
	status=$(get "http://$addr/metrics" "$tmp/body" "Accept: $accept") &&
		[ "$status" = "200 text/plain; version=0.0.4; charset=utf-8" ] || fail "Accept: $accept: $status"
done
status=$(get "http://$addr/metrics" "$tmp/body" "Accept: text/plain;q=0.2, application/openmetrics-text;q=0.9") &&
	[ "${status#200 application/openmetrics-text}" != "$status" ] || fail "Accept preferring OpenMetrics: $status"
status=$(get "http://$addr/" "$tmp/body") && [ "${status%% *}" = 404 ] || fail "GET /: $status"
status=$(get "http://$addr/metricsx" "$tmp/body") && [ "${status%% *}" = 404 ] || fail "GET /metricsx: $status"

# Hostile peers: a POST, 10 KiB of headers, 20 connections sending a byte
# now and then (the 16-connection bound drops the oldest), one that says
# nothing; meanwhile a scrape is served.  Then the counts.
python3 - "${addr%:*}" "${addr##*:}" >"$tmp/peers" 2>&1 <<'EOF' || fail "hostile peers: $(cat "$tmp/peers")"
import socket, sys, time
host, port = sys.argv[1], int(sys.argv[2])
def conn():
    return socket.create_connection((host, port), timeout=20)
def status(s):
    data = b""
    while b"\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.split(b" ")[1].decode() if data else "closed"
s = conn(); s.sendall(b"POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n"); assert status(s) == "405"
s = conn(); s.sendall(b"GET /metrics HTTP/1.9\r\n\r\n"); assert status(s) == "400"
# A NUL in a header: refused at once, not waited on until the timeout.
s = conn(); s.sendall(b"GET /metrics HTTP/1.1\r\nX: a\0b\r\n"); assert status(s) == "400"
s = conn(); s.sendall(b"GET /metrics HTTP/1.1\r\nX: " + b"a" * 10240 + b"\r\n\r\n")
assert status(s) == "431"
s = conn(); s.sendall(b"HEAD /metrics HTTP/1.1\r\n\r\n")
head = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    head += chunk
assert head.startswith(b"HTTP/1.1 200") and head.endswith(b"\r\n\r\n"), head[:200]
slow = [conn() for _ in range(20)]
for c in slow:
    c.sendall(b"GET /metrics HTTP/1.1\r\n")
silent = conn()
time.sleep(0.5)
s = conn(); s.sendall(b"GET /metrics HTTP/1.1\r\n\r\n"); assert status(s) == "200"
for c in slow:
    try:
        c.sendall(b"X-Slow: 1\r\n")
    except OSError:
        pass
# The silent one and the slow ones left are timed out within the 5 s bound.
assert status(silent) in ("408", "closed")
EOF
# A flood of idle connections (50 held open, the oldest closed for each new
# one, in a process of its own) while 10 scrapes that send their request at
# once (200 ms after the connection: a slow network's latency) are made: each is
# served.
python3 - "${addr%:*}" "${addr##*:}" >"$tmp/flood" 2>&1 <<'EOF' || fail "scrapes under an idle flood: $(cat "$tmp/flood")"
import os, signal, socket, sys, time
host, port = sys.argv[1], int(sys.argv[2])
child = os.fork()
if child == 0:
    ring = []
    end = time.monotonic() + 60
    while time.monotonic() < end:
        try:
            ring.append(socket.create_connection((host, port), timeout=5))
        except OSError:
            continue
        if len(ring) > 50:
            ring.pop(0).close()
    os._exit(0)
try:
    time.sleep(0.5)
    for i in range(10):
        s = socket.create_connection((host, port), timeout=20)
        time.sleep(0.2)  # the request's way over a slow network
        s.sendall(b"GET /metrics HTTP/1.1\r\n\r\n")
        data = s.recv(64)
        s.close()
        assert data.startswith(b"HTTP/1.1 200"), "scrape %d: %r" % (i, data)
finally:
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
EOF

get "http://$addr/metrics" "$tmp/after" >/dev/null || fail "GET /metrics after the peers"
check_metrics "$tmp/after" '
	all([v for n, l, v in s if n == "mmkit_exporter_rejected_requests_total" and l["reason"] == r][0] >= k
	    for r, k in (("bad_request", 3), ("too_large", 1), ("busy", 4), ("timeout", 1), ("not_found", 2)))' ||
	fail "the rejected requests' counts: $(grep rejected "$tmp/after")"

# Out of descriptors (12: fewer than 16 connections): 14 connections that
# sent a part of their request fill them, accept4() fails with EMFILE and the
# listener stays readable; the server waits instead of spinning: over 2 s,
# less than 0.5 s of CPU time.  Once they close, a scrape is served.
mmkit_save=$mmkit
mmkit="$tmp/mmkit-12"
printf '#!/bin/sh\nulimit -n 12 && exec "%s" "$@"\n' "$mmkit_save" >"$mmkit"
chmod +x "$mmkit"
serve --pid "$npid"
mmkit=$mmkit_save
python3 - "${addr%:*}" "${addr##*:}" "$server" >"$tmp/emfile" 2>&1 <<'EOF' || fail "out of descriptors: $(cat "$tmp/emfile")"
import os, socket, sys, time
host, port, pid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def cpu():
    f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
held = [socket.create_connection((host, port), timeout=20) for _ in range(14)]
for c in held:
    c.sendall(b"GET /metrics HTTP/1.1\r\n")
time.sleep(0.5)
before = cpu()
time.sleep(2)
spent = cpu() - before
assert spent < 0.5, "%.2f s of CPU time in 2 s" % spent
for c in held:
    c.close()
s = socket.create_connection((host, port), timeout=20)
s.sendall(b"GET /metrics HTTP/1.1\r\n\r\n")
data = s.recv(64)
assert data.startswith(b"HTTP/1.1 200"), data
EOF

# A port in use: a message saying so, exit 1.
"$mmkit" export --listen "$addr" >/dev/null 2>"$tmp/err" && fail "a port in use: exit 0"
grep -q "the address is in use" "$tmp/err" || fail "a port in use: $(cat "$tmp/err")"

# expect_usage ARGS...: exit 2 and a "mmkit: export: " message.
expect_usage() {
	"$mmkit" export "$@" >/dev/null 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 2 ] || fail "mmkit export $*: exit $rc, expected 2"
	grep -q '^mmkit: export: ' "$tmp/err" || fail "mmkit export $*: no message: $(cat "$tmp/err")"
}
expect_usage --max-series 1
expect_usage --max-series x
expect_usage --top-processes -1
expect_usage --listen nonsense
expect_usage --listen 127.0.0.1:99999
expect_usage --listen 127.0.0.1:0 --textfile "$tmp/x"
expect_usage --openmetrics --textfile "$tmp/x"
expect_usage --textfile
expect_usage --bogus
expect_usage 1
exit 0
