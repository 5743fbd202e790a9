#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# mmkit top: two processes (examples/named-memory, one of them as nobody
# when root) name 32 pages test-top-PID and touch 10: the name's row
# sums both (2 processes, 20 pages of Rss, Pss, USS), --by process shows
# each, --name, --user and --pid filter, a PID that is gone is skipped and
# counted (a zombie too), not a failure (nor are processes exiting while
# top runs), a reader without privilege counts root's processes as denied;
# the same USS and RSS as smem's for the process (when smem is installed);
# bad usage gets a message and exit 2.
set -u
. "$(dirname "$0")/fleet-test.sh"

if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	nobody=65534
	as_nobody="setpriv --reuid=$nobody --regid=$nobody --clear-groups"
else
	nobody=""
	as_nobody=""
fi
named "test-top-$$"
pid1=$pid
named "test-top-$$" $as_nobody
pid2=$pid

# check JSON-FILE PYTHON-EXPR ARGS...: the JSON, for which EXPR holds (d, a).
check() {
	python3 - "$@" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
a = [int(x) if x.lstrip("-").isdigit() else x for x in sys.argv[3:]]
if not eval("(" + sys.argv[2] + ")"):
    sys.exit("false: %s for %s" % (sys.argv[2], json.dumps(d)[:3000]))
EOF
}

name="[anon:test-top-$$]"
glob="[[]anon:test-top-$$]"
"$mmkit" top --name "$glob" --json >"$tmp/names.json" 2>"$tmp/err" ||
	fail "mmkit top --name: $(cat "$tmp/err")"
check "$tmp/names.json" 'len(d["names"]) == 1 and d["by"] == "name" and
	all(d["names"][0][k] == v for k, v in
	    [("name", a[0]), ("processes", 2), ("mappings", 2), ("size_kib", 64 * a[1]),
	     ("rss_kib", 20 * a[1]), ("pss_kib", 20 * a[1]), ("uss_kib", 20 * a[1]),
	     ("swap_kib", 0), ("locked_kib", 0)]) and
	d["names"][0]["kind"] in ("anon_named", "registry") and
	d["total"]["rss_kib"] == 20 * a[1] and d["total"]["processes"] == 2' \
	"$name" "$page_kib" || fail "the name's row"

"$mmkit" top --by process --name "$glob" --json >"$tmp/procs.json" ||
	fail "mmkit top --by process"
check "$tmp/procs.json" 'sorted(p["pid"] for p in d["processes"]) == sorted(a[:2]) and
	all(p["rss_kib"] == 10 * a[2] and p["uss_kib"] == 10 * a[2] and p["mappings"] == 1
	    and p["command"] == "named-memory" for p in d["processes"])' \
	"$pid1" "$pid2" "$page_kib" || fail "--by process"

if [ -n "$nobody" ]; then
	"$mmkit" top --user nobody --by process --json >"$tmp/user.json" || fail "--user nobody"
	check "$tmp/user.json" 'a[0] in [p["pid"] for p in d["processes"]] and
		a[1] not in [p["pid"] for p in d["processes"]] and
		all(p["uid"] == 65534 for p in d["processes"])' "$pid2" "$pid1" ||
		fail "--user nobody"
	# Without privilege, root's processes are counted, not shown, and the run succeeds.
	setpriv --reuid=$nobody --regid=$nobody --clear-groups "$mmkit" top --json \
		>"$tmp/nobody.json" 2>"$tmp/err" || fail "top as nobody: $(cat "$tmp/err")"
	check "$tmp/nobody.json" 'd["denied"] > 0 and d["read"] >= 1 and any(g["name"] == a[0]
		and g["processes"] == 1 for g in d["names"])' "$name" || fail "top as nobody"
	# Root without the capabilities that read another user's process: the hint
	# is not to run as root.
	if [ "$(id -u)" = 0 ] && setpriv --bounding-set=-sys_ptrace,-dac_read_search,-dac_override \
		--inh-caps=-all true 2>/dev/null; then
		setpriv --bounding-set=-sys_ptrace,-dac_read_search,-dac_override --inh-caps=-all \
			"$mmkit" top >"$tmp/nocap" 2>"$tmp/err" || fail "top without capabilities"
		tail -n 1 "$tmp/nocap" | grep -q 'denied (another user.s: root without CAP_SYS_PTRACE' ||
			fail "top as root without capabilities: $(tail -n 1 "$tmp/nocap")"
	fi
fi

# A glob no name matches: nothing to show, in either view, and no failure.
for by in name process; do
	"$mmkit" top --by "$by" --name 'no-such-name-*' --json >"$tmp/none.json" || fail "--name matching nothing"
	check "$tmp/none.json" 'not d["names" if a[0] == "name" else "processes"] and d["read"] > 0' "$by" ||
		fail "--name matching nothing, --by $by"
done

# A PID that is not there is counted as gone; the others are read.
gone=$(sh -c 'echo $$')
"$mmkit" top --pid "$pid1,$gone" --json >"$tmp/gone.json" || fail "--pid with one gone"
check "$tmp/gone.json" 'd["gone"] == 1 and d["read"] == 1 and
	any(g["name"] == a[0] and g["processes"] == 1 for g in d["names"])' "$name" ||
	fail "--pid PID,GONE"
"$mmkit" top --pid "$gone" >/dev/null 2>"$tmp/err" && fail "only a gone PID: exit 0"
grep -q '^mmkit: top: no process could be read (1 gone' "$tmp/err" ||
	fail "only a gone PID: $(cat "$tmp/err")"

# A zombie has exited: its memory is gone, it counts as gone (not read, with none).
sh -c 'sleep 0 & exec sleep 30' &
parent=$!
started="$started $parent"
tries=0
until zombie=$(ps -o pid= -o stat= --ppid "$parent" | awk '$2 ~ /^Z/ { print $1 }') && [ -n "$zombie" ]; do
	tries=$((tries + 1))
	[ "$tries" -lt 100 ] || fail "no zombie child of $parent"
	sleep 0.1
done
"$mmkit" top --pid "$pid1,$zombie" --json >"$tmp/zombie.json" || fail "--pid with a zombie"
check "$tmp/zombie.json" 'd["gone"] == 1 and d["read"] == 1' || fail "--pid with a zombie"

# Processes starting and exiting all along: each run reads what it can and succeeds.
( i=0; while [ $i -lt 5000 ] && [ ! -e "$tmp/stop" ]; do /bin/true; i=$((i + 1)); done ) &
churn=$!
for i in 1 2 3 4 5; do
	"$mmkit" top --json >"$tmp/churn.json" 2>"$tmp/err" || fail "top while processes exit: $(cat "$tmp/err")"
	check "$tmp/churn.json" 'd["read"] > 0 and d["failed"] == 0' || fail "top while processes exit"
done
touch "$tmp/stop"
wait "$churn"

# The table: the name's line, sorted by PSS, a TOTAL line summing the column.
"$mmkit" top --pid "$pid1,$pid2" >"$tmp/table" || fail "the table"
grep -q " - *$(printf '%s' "$name" | sed 's/[][]/\\&/g')\$" "$tmp/table" &&
	fail "source '-' for a named region"
line=$(grep -F " $name" "$tmp/table") || fail "no $name line: $(cat "$tmp/table")"
set -- $line
[ "$1" -eq 2 ] && [ "$4" -eq $((20 * page_kib)) ] || fail "the line: $line"
awk 'NR > 1 && $NF != "TOTAL" && NF > 8 { if (prev != "" && $5 > prev) bad = 1; prev = $5; sum += $5 }
     $NF == "TOTAL" { total = $5 }
     END { exit (bad || sum != total) }' "$tmp/table" || fail "not sorted by PSS, or TOTAL wrong"
tail -n 1 "$tmp/table" | grep -q '^2 processes read; skipped: 0 gone, 0 denied, 0 failed$' ||
	fail "last line: $(tail -n 1 "$tmp/table")"

# The same figures as smem's for the process.
if command -v smem >/dev/null; then
	smem -H -c "pid uss pss rss" >"$tmp/smem" 2>&1 || fail "smem: $(cat "$tmp/smem")"
	"$mmkit" top --by process --pid "$pid1" --json >"$tmp/one.json" || fail "--pid $pid1"
	set -- $(awk -v p="$pid1" '$1 == p { print $2, $3, $4 }' "$tmp/smem")
	[ $# -eq 3 ] || fail "smem has no line for $pid1: $(cat "$tmp/smem")"
	# (PSS moves while smem runs: it maps libc too.)
	check "$tmp/one.json" '[d["processes"][0][k] for k in ("uss_kib", "rss_kib")]
		== a' "$1" "$3" || fail "not smem's USS and RSS ($*)"
else
	echo "note: no smem (tools/install-deps): not compared"
fi

# expect_usage ARGS...: exit 2 and a "mmkit: top: " message.
expect_usage() {
	"$mmkit" top "$@" >/dev/null 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 2 ] || fail "mmkit top $*: exit $rc, expected 2"
	grep -q '^mmkit: top: ' "$tmp/err" || fail "mmkit top $*: no message: $(cat "$tmp/err")"
}
expect_usage --sort bogus
expect_usage --by process --sort processes
expect_usage --by nothing
expect_usage --pid 12x
expect_usage --pid ''
expect_usage --user no-such-user-here
expect_usage --name
expect_usage --bogus
expect_usage 123
exit 0
