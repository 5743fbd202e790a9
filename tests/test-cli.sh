#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The mmkit command: its output is well formed and bad input gets a
# message and a non-zero exit, never a crash.
set -u
mmkit="$MMKIT_BUILD/mmkit"
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_exit CODE ARGS...: runs mmkit, checks the exit code; usage errors
# must also say something on stderr.
expect_exit() {
	want=$1; shift
	err=$("$mmkit" "$@" 2>&1 >/dev/null)
	got=$?
	[ "$got" -eq "$want" ] || fail "mmkit $*: exit $got, expected $want"
	[ "$want" -eq 0 ] || [ -n "$err" ] || fail "mmkit $*: failed without a message"
}

"$mmkit" probe | grep -q '^lock_onfault ' || fail "probe has no lock_onfault row"
"$mmkit" probe --json | python3 -c '
import json, sys
d = json.load(sys.stdin)["features"]
keys = {"refpage", "names", "pac", "secret", "lock_onfault", "userfaultfd"}
assert set(d) == keys, d.keys()
for k, v in d.items():
    assert v["status"] in {"native", "fallback", "unsupported", "not_implemented"}, v
    assert v["backend"] and v["reason"], v
' || fail "probe --json is not the documented JSON"

expect_exit 0 --help
expect_exit 2
expect_exit 2 no-such-command
expect_exit 2 probe extra
expect_exit 0 memlock
expect_exit 0 memlock 4K
expect_exit 2 memlock 12X
expect_exit 2 memlock -5
expect_exit 2 memlock 99999999999999999999
expect_exit 2 bench
expect_exit 2 bench ../../bin/sh
expect_exit 2 bench no-such-bench
expect_exit 0 bench names --help
expect_exit 2 bench names --vmas 0
expect_exit 2 bench names --forks
exit 0
