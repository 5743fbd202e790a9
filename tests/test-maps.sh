#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# mmkit maps PID: a region named by examples/named-memory shows up under
# [anon:NAME] with the Rss of the pages it touched, whichever way the
# kernel names memory; --json is valid JSON with the documented keys; bad
# PIDs get a message and a non-zero exit, never a crash.
set -u
mmkit="$MMKIT_BUILD/mmkit"
example="$MMKIT_BUILD/examples/named-memory"
tmp=$(mktemp -d)
pid=""
cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

[ -x "$example" ] || { echo "SKIP: $example not built"; exit 77; }
page_kib=$(( $(getconf PAGESIZE) / 1024 ))

# 32 pages named test-maps-region, 10 of them touched (and 10 of the unnamed half).
"$example" test-maps-region 32 10 >"$tmp/out" 2>&1 &
pid=$!
tries=0
until grep -q '^ready' "$tmp/out"; do
	tries=$((tries + 1))
	[ "$tries" -lt 100 ] || fail "named-memory did not start: $(cat "$tmp/out")"
	kill -0 "$pid" 2>/dev/null || fail "named-memory died: $(cat "$tmp/out")"
	sleep 0.1
done

"$mmkit" maps "$pid" >"$tmp/maps" 2>"$tmp/err" || fail "mmkit maps $pid: $(cat "$tmp/err")"
line=$(grep ' \[anon:test-maps-region\]$' "$tmp/maps") ||
	fail "no [anon:test-maps-region] line in: $(cat "$tmp/maps")"
# SIZE RSS PSS PRIV_DIRTY SWAP LOCKED MAPS SOURCE NAME
set -- $line
[ "$1" -eq $((32 * page_kib)) ] || fail "Size $1 KiB, expected $((32 * page_kib)): $line"
[ "$2" -eq $((10 * page_kib)) ] || fail "Rss $2 KiB, expected $((10 * page_kib)): $line"
[ "$3" -eq $((10 * page_kib)) ] || fail "Pss $3 KiB, expected $((10 * page_kib)): $line"
[ "$4" -eq $((10 * page_kib)) ] || fail "Private_Dirty $4 KiB, expected $((10 * page_kib)): $line"
[ "$7" -eq 1 ] || fail "$7 mappings, expected 1: $line"
case $8 in kernel|registry) ;; *) fail "source '$8': $line" ;; esac
grep -q ' \[anon\]$' "$tmp/maps" || fail "no [anon] line"
grep -q ' TOTAL$' "$tmp/maps" || fail "no TOTAL line"
head -n 1 "$tmp/maps" | grep -q 'RSS' || fail "no header line"

# Sorted by Rss, largest first; the TOTAL line sums the columns.
awk 'NR > 1 && $NF != "TOTAL" { if (prev != "" && $2 > prev) bad = 1; prev = $2; sum += $2 }
     $NF == "TOTAL" { total = $2 }
     END { exit (bad || sum != total) }' "$tmp/maps" || fail "not sorted by Rss, or TOTAL wrong"

"$mmkit" maps "$pid" --json >"$tmp/json" || fail "mmkit maps --json failed"
python3 -m json.tool "$tmp/json" >/dev/null || fail "--json is not JSON: $(cat "$tmp/json")"
python3 - "$tmp/json" "$pid" "$page_kib" <<'EOF' || fail "--json lacks the documented content"
import json, sys
d = json.load(open(sys.argv[1]))
pid, kib = int(sys.argv[2]), int(sys.argv[3])
keys = {"mappings", "size_kib", "rss_kib", "pss_kib", "private_dirty_kib", "swap_kib", "locked_kib"}
assert d["pid"] == pid, d["pid"]
assert set(d["total"]) == keys, d["total"]
for g in d["names"]:
    assert set(g) == keys | {"name", "kind", "source"}, g
    assert g["kind"] in {"anon", "anon_named", "registry", "file", "heap", "stack", "special"}, g
    assert g["source"] in {"kernel", "registry"}, g
named = [g for g in d["names"] if g["name"] == "[anon:test-maps-region]"]
assert len(named) == 1, named
assert named[0]["rss_kib"] == 10 * kib and named[0]["size_kib"] == 32 * kib, named
assert named[0]["kind"] in {"anon_named", "registry"}, named
rss = [g["rss_kib"] for g in d["names"]]
assert rss == sorted(rss, reverse=True), rss
for k in keys:
    assert d["total"][k] == sum(g[k] for g in d["names"]), k
EOF

# expect_fail CODE ARGS...: exit code CODE and a "mmkit: " message.
expect_fail() {
	want=$1; shift
	"$mmkit" maps "$@" >/dev/null 2>"$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] || fail "mmkit maps $*: exit $got, expected $want"
	grep -q '^mmkit: ' "$tmp/err" || fail "mmkit maps $*: no message"
}
expect_fail 2
expect_fail 2 0
expect_fail 2 -1
expect_fail 2 abc
expect_fail 2 12abc
expect_fail 2 ""
expect_fail 2 99999999999999999999
expect_fail 2 "$pid" extra
sh -c 'exit 0' &
dead=$!
wait "$dead"
expect_fail 1 "$dead"
expect_fail 1 2147483647
grep -q 'no process' "$tmp/err" || fail "a missing process is not called so: $(cat "$tmp/err")"

# A kernel thread (kthreadd, PID 2, in the initial PID namespace) and a
# zombie have no user memory: said so, exit 1, never an empty table.
if grep -q '^kthreadd$' /proc/2/comm 2>/dev/null; then
	expect_fail 1 2
	grep -q '^mmkit: maps: PID 2 is a kernel thread: no user memory$' "$tmp/err" ||
		fail "mmkit maps 2 (kthreadd): $(cat "$tmp/err")"
	expect_fail 1 2 --json
	grep -q 'kernel thread' "$tmp/err" || fail "mmkit maps 2 --json: $(cat "$tmp/err")"
else
	echo "note: PID 2 is not kthreadd here (a PID namespace): the kernel-thread case not checked"
fi
# The zombie: a child of a shell that has exec'd a program that never waits.
sh -c 'sh -c "exit 0" & exec sleep 30' &
parent=$!
zombie=""
tries=0
while [ -z "$zombie" ]; do
	for child in $(cat /proc/$parent/task/$parent/children 2>/dev/null); do
		[ "$(cut -d' ' -f3 /proc/$child/stat 2>/dev/null)" = Z ] && zombie=$child
	done
	tries=$((tries + 1))
	[ "$tries" -lt 100 ] || { kill "$parent"; fail "no zombie child of $parent appeared"; }
	[ -n "$zombie" ] || sleep 0.1
done
expect_fail 1 "$zombie"
kill "$parent"
grep -q "^mmkit: maps: PID $zombie is a zombie" "$tmp/err" ||
	fail "mmkit maps on a zombie: $(cat "$tmp/err")"

# Another user's process: permission denied, said so.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null &&
   setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null &&
   setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$mmkit"; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$mmkit" maps "$pid" \
		>/dev/null 2>"$tmp/err"
	got=$?
	[ "$got" -eq 1 ] || fail "uid 65534 reading a root process: exit $got, expected 1"
	grep -q '^mmkit: .*same user, or root' "$tmp/err" ||
		fail "uid 65534 reading a root process: $(cat "$tmp/err")"
fi
exit 0
