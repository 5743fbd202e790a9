# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# What the tests of mmkit top and mmkit export share (sourced): $tmp,
# cleanup of what they started, fail, named-memory started and waited for,
# a free loopback port, an HTTP GET, mmkit export --listen started on a
# free port, a check of metrics.  The caller sets MMKIT_BUILD and sources
# it first.
mmkit="$MMKIT_BUILD/mmkit"
example="$MMKIT_BUILD/examples/named-memory"
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
chmod 755 "$tmp"
started=""
cleanup() {
	for p in $started; do
		kill "$p" 2>/dev/null
	done
	for p in $started; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -x "$example" ] || { echo "SKIP: $example not built"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3 (tools/install-deps)"; exit 77; }
page_kib=$(( $(getconf PAGESIZE) / 1024 ))

# named NAME [PREFIX...]: named-memory (run by PREFIX, e.g. setpriv ...)
# names 32 pages NAME and touches 10; its PID in $pid.
nstarted=0
named() {
	nstarted=$((nstarted + 1))
	out="$tmp/named-$nstarted.out"
	n=$1; shift
	"$@" "$example" "$n" 32 10 >"$out" 2>&1 &
	pid=$!
	started="$started $pid"
	tries=0
	until grep -qs '^ready' "$out"; do
		tries=$((tries + 1))
		[ "$tries" -lt 100 ] || fail "named-memory did not start: $(cat "$out")"
		sleep 0.1
	done
}

# A loopback TCP port nothing listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# on_free_port LOG COMMAND...: COMMAND with every @PORT@ in it replaced by a
# free loopback port, until it listens there (30 s); another port if it
# exits (one another test took meanwhile), 3 times at most.  The port in
# $port, the PID in $listener.
on_free_port() {
	log=$1; shift
	what=$1
	# The words, quoted for eval, so that each attempt starts from them.
	template=""
	for arg in "$@"; do
		template="$template '$(printf '%s' "$arg" | sed "s/'/'\\\\''/g")'"
	done
	for attempt in 1 2 3; do
		port=$(free_port)
		eval "set -- $(printf '%s' "$template" | sed "s/@PORT@/$port/g")"
		"$@" >"$log" 2>&1 &
		listener=$!
		started="$started $listener"
		if python3 - "$port" "$listener" <<'EOF'
import os, socket, sys, time
end = time.monotonic() + 30
while time.monotonic() < end:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
        sys.exit(0)
    except OSError:
        pass
    try:
        os.kill(int(sys.argv[2]), 0)
    except OSError:
        sys.exit(1)
    time.sleep(0.2)
sys.exit(2)
EOF
		then
			return 0
		fi
		kill "$listener" 2>/dev/null
		wait "$listener" 2>/dev/null
	done
	fail "$what did not listen on a free port ($attempt tries): $(tail -n 20 "$log")"
}

# get URL OUT [HEADER]: the body into OUT, the status and Content-Type on stdout.
get() {
	python3 - "$@" <<'EOF'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1])
if len(sys.argv) > 3:
    k, v = sys.argv[3].split(": ", 1)
    req.add_header(k, v)
try:
    r = urllib.request.urlopen(req, timeout=30)
except urllib.error.HTTPError as e:
    r = e
open(sys.argv[2], "wb").write(r.read())
print(r.status, r.headers.get("Content-Type"))
EOF
}

# serve [OPTIONS...]: mmkit export --listen 127.0.0.1:0 OPTIONS; its
# address in $addr (HOST:PORT), its PID in $server.  The last server's
# line goes first: the shell truncates the file in the child, after the fork.
serve() {
	rm -f "$tmp/serve.out"
	"$mmkit" export --listen 127.0.0.1:0 "$@" >"$tmp/serve.out" 2>&1 &
	server=$!
	started="$started $server"
	tries=0
	until grep -qs '^listening on ' "$tmp/serve.out"; do
		tries=$((tries + 1))
		[ "$tries" -lt 100 ] && kill -0 "$server" 2>/dev/null ||
			fail "mmkit export --listen did not start: $(cat "$tmp/serve.out")"
		sleep 0.1
	done
	addr=$(sed -n 's/^listening on //p' "$tmp/serve.out")
}

# value FILE [om] PYTHON-EXPR ARGS...: FILE read by metrics.py (s: its
# samples as (name, labels, value)), and EXPR true for it (a: ARGS).
check_metrics() {
	python3 - "$here" "$@" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import metrics
args = sys.argv[2:]
om = len(args) > 1 and args[1] == "om"
path, expr, a = args[0], args[2 if om else 1], args[3 if om else 2:]
try:
    s = [(n, l, v) for _, n, l, v in metrics.parse(open(path, "rb").read().decode("utf-8"), om)]
except (ValueError, UnicodeDecodeError) as e:
    sys.exit("%s: %s" % (path, e))
if not eval("(" + expr + ")"):
    sys.exit("false: %s" % expr)
EOF
}
