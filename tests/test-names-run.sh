#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# mmkit run --names with a program nobody changed for mmkit: a Go program
# (tests/names-run, module go 1.25, so that the runtime names its memory)
# built with the installed Go.  Where the kernel cannot name anonymous
# memory, mmkit maps PID shows the runtime's own names under --names, and
# none without; the same for a child it forks and executes (os/exec).
# Where the kernel names (CONFIG_ANON_VMA_NAME), --names stays out of the
# way: /proc/PID/maps shows the kernel's names, and mmkit leaves no
# registry in the program.  The Go build cache is Go's own (under
# XDG_CACHE_HOME), warm after the first run.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
mmkit=$MMKIT_BUILD/mmkit
PATH=$PATH:/usr/local/go/bin:/usr/lib/go/bin
tmp=$(mktemp -d)
trap 'touch "$tmp/run/done" 2>/dev/null; rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

command -v go >/dev/null 2>&1 || { echo "SKIP: no Go toolchain (tools/install-deps installs golang-go)"; exit 77; }
# The runtime names its memory since Go 1.25.
minor=$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
[ "${minor:-0}" -ge 25 ] || { echo "SKIP: $(go env GOVERSION) does not name its memory (Go 1.25+)"; exit 77; }
(cd "$top/tests/names-run" && go build -o "$tmp/namesrun" .) || fail "go build tests/names-run"

# A grandchild that outlives mmkit (mmkit exits with its direct child's
# status) can still fork: forks are not sent to the supervisor, whose
# listener is gone then.  It starts only once mmkit has exited.
mkfifo "$tmp/go"
"$mmkit" run --names sh -c '(read x <"$1"; if /bin/true; then echo forked; else echo failed; fi >"$2") </dev/null >/dev/null 2>&1 &' sh "$tmp/go" "$tmp/outlived" ||
	fail "mmkit run --names sh with a background child: $?"
echo go >"$tmp/go"
i=0
while [ ! -s "$tmp/outlived" ] && [ $i -lt 1000 ]; do i=$((i + 1)); sleep 0.01; done
[ "$(cat "$tmp/outlived" 2>/dev/null)" = forked ] ||
	fail "a process that outlived mmkit run --names could not fork: $(cat "$tmp/outlived" 2>/dev/null)"

# The names a Go runtime's own test expects to see (runtime/set_vma_name_linux_test.go).
go_names="heap|heap reservation|heap index|gc bits|page alloc|page alloc index|page summary|scavenge index|allspans array|immortal metadata"

# Runs "$@" (the program and its arguments) in the background, waiting for
# the pid files of @roles; the program waits for $tmp/run/done.
start() {	# roles... -- command...
	rm -rf "$tmp/run"
	mkdir "$tmp/run"
	roles=
	while [ "$1" != -- ]; do roles="$roles $1"; shift; done
	shift
	"$@" >"$tmp/out" 2>"$tmp/err" &
	bg=$!
	for role in $roles; do
		i=0
		while [ ! -s "$tmp/run/pid-$role" ]; do
			i=$((i + 1))
			[ $i -lt 3000 ] || fail "$*: no pid-$role after 30 s: $(cat "$tmp/err")"
			kill -0 $bg 2>/dev/null || fail "$*: ended early: $(cat "$tmp/err")"
			sleep 0.01
		done
	done
}

finish() {
	touch "$tmp/run/done"
	wait $bg || fail "the program failed (exit $?): $(cat "$tmp/err")"
}

# The Go names mmkit maps shows for process @1, one a line, sorted.
names_of() {
	"$mmkit" maps "$1" >"$tmp/maps" 2>"$tmp/maps.err" || fail "mmkit maps $1: $(cat "$tmp/maps.err")"
	sed -n 's/.*\[anon: Go: \(.*\)\]$/\1/p' "$tmp/maps" | sort -u
}

expect_go_names() {	# pid, what
	names_of "$1" >"$tmp/names"
	echo "$go_names" | tr '|' '\n' | while read -r n; do
		grep -qx "$n" "$tmp/names" || { echo "$n"; break; }
	done >"$tmp/missing"
	[ ! -s "$tmp/missing" ] ||
		fail "$2: no [anon: Go: $(cat "$tmp/missing")] in mmkit maps $1: $(cat "$tmp/maps")"
	grep -q ' registry \[anon: Go: heap\]$' "$tmp/maps" || fail "$2: Go: heap is not the registry's: $(cat "$tmp/maps")"
}

if grep -q 'names.*native' <<EOF
$("$mmkit" probe 2>/dev/null)
EOF
then
	# The kernel names: it does, with or without --names, and mmkit adds nothing.
	start parent -- "$tmp/namesrun" "$tmp/run"
	grep -o '\[anon: Go: [^]]*\]' "/proc/$(cat "$tmp/run/pid-parent")/maps" | sort -u >"$tmp/plain"
	finish
	start parent -- "$mmkit" run --names "$tmp/namesrun" "$tmp/run"
	pid=$(cat "$tmp/run/pid-parent")
	grep -o '\[anon: Go: [^]]*\]' "/proc/$pid/maps" | sort -u >"$tmp/named"
	! ls -l "/proc/$pid/fd" | grep -q 'mmkit-names' || fail "a registry where the kernel names"
	finish
	[ -s "$tmp/plain" ] || fail "the Go runtime named nothing on a kernel that names"
	cmp -s "$tmp/plain" "$tmp/named" ||
		fail "the kernel's names differ with --names: $(diff "$tmp/plain" "$tmp/named")"
	echo "mmkit run --names: the kernel names (CONFIG_ANON_VMA_NAME): the same names as without"
	exit 0
fi

# Without --names: the runtime's first call fails, it stops naming, nothing shows.
start parent -- "$tmp/namesrun" "$tmp/run"
[ -z "$(names_of "$(cat "$tmp/run/pid-parent")")" ] || fail "Go names without --names: $(cat "$tmp/maps")"
finish

# With --names: the runtime's names, from the registry.
start parent -- "$mmkit" run --names "$tmp/namesrun" "$tmp/run"
expect_go_names "$(cat "$tmp/run/pid-parent")" "run --names"
# A reader itself under --names sees them too: its library's probe is not
# fooled by the supervisor's 0 into taking the kernel for one that names.
"$mmkit" run --names "$mmkit" maps "$(cat "$tmp/run/pid-parent")" >"$tmp/inner" 2>&1 ||
	fail "mmkit maps under mmkit run --names: $(cat "$tmp/inner")"
grep -q 'registry \[anon: Go: heap\]$' "$tmp/inner" ||
	fail "mmkit maps under mmkit run --names shows no registry names: $(cat "$tmp/inner")"
# A terminal's ^C goes to the program itself: mmkit stays, to answer it.
kill -INT $bg
sleep 0.2
kill -0 $bg 2>/dev/null || fail "mmkit run --names died of SIGINT, leaving the program unsupervised"
finish

# A Go program that forks and executes a child (os/exec): both named, each its own.
start parent child -- "$mmkit" run --names "$tmp/namesrun" "$tmp/run" children
parent=$(cat "$tmp/run/pid-parent") child=$(cat "$tmp/run/pid-child")
expect_go_names "$parent" "the parent"
expect_go_names "$child" "its child (fork and exec)"
n=$(ls -l "/proc/$child/fd" | grep -c 'mmkit-names')
[ "$n" -eq 1 ] || fail "the child holds $n registries, expected its own only"
finish

# Combined with a shim option; the exit status is the program's.
"$mmkit" run --names --perturb=0x55 -- sh -c 'exit 7'
rc=$?
[ $rc -eq 7 ] || fail "run --names --perturb: exit $rc, expected the program's 7"
"$mmkit" run --names -- sh -c 'kill -TERM $$'
rc=$?
[ $rc -eq 143 ] || fail "run --names, the program killed by SIGTERM: exit $rc, expected 143"
"$mmkit" run --names no-such-program-here 2>"$tmp/err"
rc=$?
[ $rc -eq 127 ] || fail "run --names, a missing program: exit $rc, expected 127"
echo "mmkit run --names: the Go runtime's names (and its exec'd child's) in mmkit maps; none without"
