#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# mmkit run --names with Python, which nobody changed for mmkit: its
# threads' stacks and its large blocks show the names glibc 2.39 gives
# them (" glibc: pthread stack: TID", " glibc: malloc") in mmkit maps, on
# any glibc: libmmkit-names.so names them before 2.39, glibc itself after.
set -u
mmkit=$MMKIT_BUILD/mmkit
tmp=$(mktemp -d)
bg=""
trap '[ -z "$bg" ] || kill "$bg" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null || { echo "SKIP: no python3 (tools/install-deps)"; exit 77; }

# Three threads, each with a large block, their native ids on one line;
# then waits for stdin to close.
cat >"$tmp/threads.py" <<'PY'
import os, sys, threading
ready, done, ids, blocks = threading.Barrier(4), threading.Event(), [], []
def work():
    blocks.append(bytearray(1 << 20))
    ids.append(threading.get_native_id())
    ready.wait()
    done.wait()
threads = [threading.Thread(target=work) for _ in range(3)]
for t in threads:
    t.start()
ready.wait()
print(os.getpid(), *ids, flush=True)
sys.stdin.read()
done.set()
for t in threads:
    t.join()
PY

mkfifo "$tmp/in"
# Runs python under mmkit run ARGS; its pid and threads' ids into $line.
start() {
	rm -f "$tmp/out"
	"$mmkit" run "$@" python3 "$tmp/threads.py" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
	bg=$!
	exec 3>"$tmp/in"
	i=0
	until [ -s "$tmp/out" ]; do
		i=$((i + 1))
		[ $i -lt 3000 ] && kill -0 $bg 2>/dev/null || fail "python did not start: $(cat "$tmp/err")"
		sleep 0.01
	done
	line=$(cat "$tmp/out")
}
finish() {
	exec 3>&-
	wait $bg || fail "python under mmkit run $*: exit $?: $(cat "$tmp/err")"
	bg=""
}

start --names
set -- $line
pid=$1; shift
"$mmkit" maps "$pid" >"$tmp/maps" || fail "mmkit maps $pid"
for tid in "$@"; do
	grep -q "\[anon: glibc: pthread stack: $tid\]$" "$tmp/maps" ||
		fail "no stack named for thread $tid: $(cat "$tmp/maps")"
done
grep -q '\[anon: glibc: malloc\]$' "$tmp/maps" || fail "no large block named: $(cat "$tmp/maps")"
finish --names

# Turned off: the supervisor still runs, glibc's names do not come.
start --names --no-glibc-names
set -- $line
"$mmkit" maps "$1" >"$tmp/maps" || fail "mmkit maps $1"
! grep -q 'glibc:' "$tmp/maps" || fail "glibc names with --no-glibc-names: $(cat "$tmp/maps")"
finish --names --no-glibc-names
echo "mmkit run --names: Python's thread stacks and large blocks named as glibc 2.39 names them"
