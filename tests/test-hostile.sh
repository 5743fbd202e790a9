#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# mmkit maps, mmkit top and mmkit secrets against processes built to attack them
# (tests/hostile/hostile-*.c): each run may use $cpu_limit seconds of CPU
# (each takes well under one when the readers are sound; CPU, not wall
# time: that grows with what else the machine runs) and must end within
# $wall_limit seconds (a reader blocked on a hostile file uses no CPU),
# with the right figures, tables holding no control byte, C1 control or
# invalid UTF-8, and JSON that strict UTF-8 and a JSON parser accept, the
# hostile names escaped in it as mmkit(1) says.  One line per case: PASS,
# FAIL (why) or SKIP (why); exit 1 if any failed, 77 if none could run.
#
# Cases: names (ESC, controls, invalid UTF-8 in a file's name, a memfd's
# name and comm); decoy (a FIFO whose fd reads like a registry; root);
# registry (60,000 entries through 10 fds); sparse (8 TiB named in two
# halves, two pages resident); writer (renaming without pause); dead (a
# registry whose seq a dead writer left odd); dead15 (15 such registries:
# $dead_limit seconds); claims (100 sparse registries whose headers claim
# 1,000,000 entries each, all invalid: $claims_cpu_limit s of CPU and
# $claims_vm_limit KiB of address space, where reading what each header
# claimed took 96 MiB and 0.06 s of CPU a registry); longline (a maps line
# past 4096 bytes whose tail forges a secretmem mapping); flood (16 threads
# of a program under mmkit run --names name one page past
# vm.max_map_count, lowered to 8192 for the case: the supervisor refuses
# the rest with ENOMEM, as the kernel would, its memory stays bounded, and
# the report shows the names).  Then a peer with read access attacks a
# process through its registry (hostile-peer against hostile-victim):
# count (writes the header's count: the victim must survive and keep
# working), pause (asks for pauses without end: the victim's 100 renames
# must still take under $victim_limit seconds).  PID reuse is not staged:
# the window between the files mmkit reads cannot be held open from here.
set -u
mmkit="$MMKIT_BUILD/mmkit"
hostile="$MMKIT_BUILD/tests/hostile"
cpu_limit=5 wall_limit=120
dead_limit=3
claims_cpu_limit=2 claims_vm_limit=65536
vm_limit=""
victim_limit=3
tmp=$(mktemp -d)
pid=""
peer=""
max_map_count=""
passed=0 failed=0 skipped=0

cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null
	[ -z "$peer" ] || kill "$peer" 2>/dev/null
	[ -z "$max_map_count" ] || sysctl -q -w vm.max_map_count="$max_map_count"
	rm -rf "$tmp"
}
trap cleanup EXIT

[ -x "$mmkit" ] || { echo "SKIP: $mmkit not built"; exit 77; }
[ -d "$hostile" ] || { echo "SKIP: $hostile not built"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3 (tools/install-deps)"; exit 77; }
page_kib=$(( $(getconf PAGESIZE) / 1024 ))

# check.py text|json FILE [PYTHON-EXPR]: FILE is a clean table, or valid
# JSON (strict UTF-8, whatever the locale) for which EXPR, given d and
# the args after it (a, literals), is true.
cat >"$tmp/check.py" <<'EOF'
import ast, json, re, sys
mode, path = sys.argv[1], sys.argv[2]
try:
    text = open(path, "rb").read().decode("utf-8")
except UnicodeDecodeError as e:
    sys.exit("not UTF-8: %s" % e)
if mode == "text":
    bad = re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", text)
    if bad:
        sys.exit("raw control %r in: %r" % (bad.group(), text[max(bad.start() - 40, 0):bad.end() + 40]))
    sys.exit(0)
try:
    d = json.loads(text)
except ValueError as e:
    sys.exit("not JSON: %s" % e)
a = [ast.literal_eval(x) for x in sys.argv[4:]]
if len(sys.argv) > 3 and not eval(sys.argv[3]):
    sys.exit("unexpected content: %s is false for %s" % (sys.argv[3], text[:3000]))
EOF

why=""
# start NAME ARGS...: runs the target and waits for its "ready" line
# (30 s: the registry target names 60,000 pages); 0, 77 (skip) or 1, why.
# The last run of the same target left its "ready" in the file, and the
# shell truncates it in the child, some time after the fork: it goes first.
start() {
	name=$1; shift
	rm -f "$tmp/$name.out"
	"$hostile/$name" "$@" >"$tmp/$name.out" 2>&1 &
	pid=$!
	tries=0
	until grep -qs '^ready' "$tmp/$name.out"; do
		if grep -qs '^skip' "$tmp/$name.out"; then
			why=$(sed -n 's/^skip //p' "$tmp/$name.out")
			wait "$pid"; pid=""
			return 77
		fi
		tries=$((tries + 1))
		if [ "$tries" -gt 300 ] || ! kill -0 "$pid" 2>/dev/null; then
			why="$name did not start: $(cat "$tmp/$name.out")"
			return 1
		fi
		sleep 0.1
	done
}

stop() {
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=""
	[ -z "$peer" ] || { kill "$peer" 2>/dev/null; wait "$peer" 2>/dev/null; peer=""; }
}

# run OUT ARGS...: mmkit ARGS into OUT within the limits (and an address
# space of $vm_limit KiB, if set), exit 0.
run() {
	out=$1; shift
	timeout -k 2 "$wall_limit" sh -c 'ulimit -S -t "$0" && { [ -z "$1" ] || ulimit -S -v "$1"; } &&
		shift && exec "$@"' "$cpu_limit" "$vm_limit" "$mmkit" "$@" >"$out" 2>"$out.err"
	rc=$?
	case $rc in
	0)	return 0 ;;
	124|137) why="mmkit $* did not finish in ${wall_limit}s" ;;
	152)	why="mmkit $* used over ${cpu_limit}s of CPU (SIGXCPU)" ;;
	*)	why="mmkit $*: exit $rc: $(cat "$out.err")${vm_limit:+ (address space: $vm_limit KiB)}" ;;
	esac
	return 1
}

# maps CASE [PYTHON-EXPR [ARGS...]]: mmkit maps of the target, as a
# clean table and as JSON for which EXPR holds; then the same of mmkit top
# --pid (its JSON has the same "names" keys but size_kib, and "read": 1).
maps() {
	c=$1; shift
	run "$tmp/$c.txt" maps "$pid" || return 1
	why=$(python3 "$tmp/check.py" text "$tmp/$c.txt" 2>&1) || return 1
	grep -q ' TOTAL$' "$tmp/$c.txt" || { why="no TOTAL line: $(cat "$tmp/$c.txt")"; return 1; }
	run "$tmp/$c.json" maps "$pid" --json || return 1
	why=$(python3 "$tmp/check.py" json "$tmp/$c.json" "$@" 2>&1) || return 1
	run "$tmp/$c-top.txt" top --pid "$pid" || return 1
	why=$(python3 "$tmp/check.py" text "$tmp/$c-top.txt" 2>&1) || { why="top: $why"; return 1; }
	run "$tmp/$c-top.json" top --pid "$pid" --json || return 1
	expr=${1:-True}
	[ $# -eq 0 ] || shift
	why=$(python3 "$tmp/check.py" json "$tmp/$c-top.json" "d['read'] == 1 and ($expr)" "$@" \
		2>&1) || why="top: $why"
}

# secrets CASE [PYTHON-EXPR [ARGS...]]: the same for mmkit secrets.
secrets() {
	c=$1; shift
	run "$tmp/$c-secrets.txt" secrets || return 1
	why=$(python3 "$tmp/check.py" text "$tmp/$c-secrets.txt" 2>&1) || return 1
	run "$tmp/$c-secrets.json" secrets --json || return 1
	why=$(python3 "$tmp/check.py" json "$tmp/$c-secrets.json" "$@" 2>&1)
}

# The JSON group named a[0] has a[1] mappings of a[2] KiB in all.
group='any(g["name"] == a[0] and g["mappings"] == a[1] and g["size_kib"] == a[2] for g in d["names"])'

# A program under mmkit run --names floods its supervisor (root: lowers
# vm.max_map_count for the case, and so the calls it takes).
case_flood() {
	have=$(sysctl -n vm.max_map_count 2>/dev/null) || { why="no vm.max_map_count"; return 77; }
	sysctl -q -w vm.max_map_count=8192 2>/dev/null ||
		{ why="may not lower vm.max_map_count to make the flood short"; return 77; }
	[ -n "$max_map_count" ] || max_map_count=$have
	"$mmkit" run --names "$hostile/hostile-prctl" >"$tmp/flood.out" 2>&1 &
	sv=$!
	tries=0
	until grep -qs '^ready' "$tmp/flood.out"; do
		tries=$((tries + 1))
		if [ "$tries" -gt 600 ] || ! kill -0 "$sv" 2>/dev/null; then
			why="the flood did not end in 60 s: $(cat "$tmp/flood.out")"
			kill "$sv"
			return 1
		fi
		sleep 0.1
	done
	pid=$(pgrep -P "$sv")
	hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$sv/status")
	sysctl -q -w vm.max_map_count="$have"
	grep -q 'enomem=[1-9][0-9]* other=0 ' "$tmp/flood.out" ||
		{ why="not refused past vm.max_map_count: $(cat "$tmp/flood.out")"; return 1; }
	[ "$hwm" -lt 65536 ] || { why="the supervisor grew to $hwm KiB"; return 1; }
	maps flood "sum(g['mappings'] for g in d['names'] if g['name'].startswith('[anon:hostile-flood-')) >= 8000" ||
		return 1
	kill "$pid"
	wait "$sv" 2>/dev/null
	pid=""
	why="(supervisor: $hwm KiB at most; $(sed -n 's/^ready //p' "$tmp/flood.out"))"
}

case_names() {
	mkdir "$tmp/names" && start hostile-names "$tmp/names" || return
	# The names as the table and the JSON must show them.
	file_text='/f\x1b[31mred\x07\x7f\xff'"$(printf '\303\251')"'\xc2\x9b\\\x09nl\\012end'
	file_json='"/f\x1b[31mred\x07\x7f\\xff\u00e9\x9b\\\tnl\\012end"'
	memfd_text='/memfd:m\x1b]0;title\x07\xfe\xc2\x85 (deleted)'
	memfd_json='"/memfd:m\x1b]0;title\x07\\xfe\x85 (deleted)"'
	maps names "$group and any(g['name'] == a[3] + a[4] for g in d['names'])" \
		'"/memfd:m\x1b]0;title\x07\\xfe\x85 (deleted)"' 1 "$page_kib" \
		"'''$tmp/names'''" "$file_json" || return 1
	grep -qF " $tmp/names$file_text" "$tmp/names.txt" ||
		{ why="no escaped file name in: $(cat "$tmp/names.txt")"; return 1; }
	grep -qF " $memfd_text" "$tmp/names.txt" ||
		{ why="no escaped memfd name in: $(cat "$tmp/names.txt")"; return 1; }
	# comm, as mmkit secrets shows it (when the kernel has memfd_secret).
	grep -q 'secret=1' "$tmp/hostile-names.out" || { why="(no memfd_secret: secrets not checked)"; return 0; }
	secrets names 'any(p["pid"] == a[0] and p["command"] == a[1] for p in d["processes"])' \
		"$pid" '"c\x1b[5m\\xff\nx"' || return 1
	grep -qF "$(printf '%7d' "$pid") c\\x1b[5m\\xff\\x0ax " "$tmp/names-secrets.txt" ||
		{ why="no escaped command in: $(cat "$tmp/names-secrets.txt")"; return 1; }
}

case_decoy() {
	start hostile-decoy || return
	maps decoy "$group" '"[anon:decoy-real]"' 1 $((4 * page_kib)) && secrets decoy
}

# 60,000 VMAs need vm.max_map_count above that: raised (restored at exit) if need be.
enough_vmas() {
	have=$(sysctl -n vm.max_map_count 2>/dev/null) || { why="no vm.max_map_count"; return 77; }
	if [ "$have" -lt 61000 ]; then
		sysctl -q -w vm.max_map_count=262144 2>/dev/null ||
			{ why="vm.max_map_count is $have, may not raise it"; return 77; }
		max_map_count=$have
	fi
}

# 60,000 names, each its own group in the report: grouping must not be quadratic.
case_distinct() {
	enough_vmas || return
	start hostile-registry distinct || return
	maps distinct "sum(g['name'].startswith('[anon:hostile-') for g in d['names']) == 60000"
}

case_registry() {
	enough_vmas || return
	start hostile-registry || return
	maps registry "$group and $(echo "$group" | sed 's/a\[0\]/a[3]/')" \
		'"[anon:hostile-even]"' 30000 $((30000 * page_kib)) '"[anon:hostile-odd]"' &&
		secrets registry
}

case_sparse() {
	start hostile-sparse || return
	half_kib=$((4 << 30))
	maps sparse "all(any(g['name'] == n and g['mappings'] == 1 and g['size_kib'] == a[0] and
			     g['rss_kib'] == a[1] for g in d['names']) for n in a[2:])" \
		"$half_kib" "$page_kib" '"[anon:sparse-low]"' '"[anon:sparse-high]"'
}

# Six reads while the writer renames: each consistent, busy-a on all 4
# pages or busy-a and busy-b on 2 each.
case_writer() {
	start hostile-writer || return
	for i in 1 2 3 4 5 6; do
		maps writer "($group and sum(g['size_kib'] for g in d['names'] if g['name'] in a[3:]) ==
					a[2] and any(g['name'] == a[3] for g in d['names']))" \
			'"[anon:busy-steady]"' 1 $((4 * page_kib)) '"[anon:busy-a]"' '"[anon:busy-b]"' ||
			{ why="read $i: $why"; return 1; }
	done
}

# Whether the names come back is the reader's choice; finishing is not.
case_dead() {
	start hostile-dead || return
	maps dead || return 1
	if grep -q ' \[anon:dead-named\]$' "$tmp/dead.txt"; then
		why="(names read back)"
	else
		why="(names not read back)"
	fi
}

# 15 dead registries cost one wait, not 15.
case_dead15() {
	start hostile-dead 15 || return
	saved_limit=$wall_limit
	wall_limit=$dead_limit
	maps dead15
	rc=$?
	wall_limit=$saved_limit
	return $rc
}

# A reader's memory and time must not follow what hostile headers claim.
case_claims() {
	start hostile-claims || return
	saved_limit=$cpu_limit
	cpu_limit=$claims_cpu_limit vm_limit=$claims_vm_limit
	maps claims
	rc=$?
	cpu_limit=$saved_limit vm_limit=""
	return $rc
}

# victim_round: SIGUSR1 makes the victim rename 100 times (mmkit_regions(0)
# after each); it must say "done" within $victim_limit s and live on.
victim_round() {
	before=$(grep -c '^done' "$tmp/hostile-victim.out")
	kill -USR1 "$pid" || { why="the victim is gone"; return 1; }
	tries=0
	while [ "$(grep -c '^done' "$tmp/hostile-victim.out")" -le "$before" ]; do
		kill -0 "$pid" 2>/dev/null ||
			{ why="the victim died: $(cat "$tmp/hostile-victim.out")"; return 1; }
		tries=$((tries + 1))
		[ "$tries" -le $((victim_limit * 20)) ] ||
			{ why="100 renames took over ${victim_limit}s"; return 1; }
		sleep 0.05
	done
	why="(100 renames: $(sed -n 's/^done //p' "$tmp/hostile-victim.out" | tail -1) ms)"
}

victim_fd() {
	sed -n 's/^ready fd=//p' "$tmp/hostile-victim.out"
}

# A peer writes count = 200,000 into the victim's registry.
case_count() {
	start hostile-victim || return
	"$hostile/hostile-peer" count "$pid" "$(victim_fd)" >"$tmp/peer-count.out" 2>&1 ||
		{ why="hostile-peer: $(cat "$tmp/peer-count.out")"; return 1; }
	victim_round || return 1
	took=$why
	maps count "$group" '"[anon:victim]"' 1 $((4 * page_kib)) || return 1
	why="$took $(tr '\n' ';' <"$tmp/peer-count.out")"
}

# A peer asks for pauses for as long as it lives.
case_pause() {
	start hostile-victim || return
	"$hostile/hostile-peer" pause "$pid" "$(victim_fd)" >"$tmp/peer-pause.out" 2>&1 &
	peer=$!
	tries=0
	until grep -qs '^asking' "$tmp/peer-pause.out"; do
		tries=$((tries + 1))
		[ "$tries" -le 100 ] || { why="hostile-peer: $(cat "$tmp/peer-pause.out")"; return 1; }
		sleep 0.05
	done
	victim_round || return 1
	took=$why
	maps pause "$group" '"[anon:victim]"' 1 $((4 * page_kib)) || return 1
	why=$took
}

# A line split at 4096 bytes would make this a 256 MiB secret holder.
case_longline() {
	mkdir "$tmp/longline" && start hostile-longline "$tmp/longline" || return
	maps longline "any(g['name'].startswith(a[0]) and g['name'].endswith(a[1]) and
			   g['mappings'] == 1 for g in d['names'])" \
		"'''$tmp/longline/'''" '" 0 /secretmem (deleted)"' &&
		secrets longline 'all(p["pid"] != a[0] for p in d["processes"])' "$pid"
}

for c in names decoy registry distinct sparse writer dead dead15 claims longline count pause flood; do
	why=""
	case_$c
	rc=$?
	stop
	case $rc in
	0)	passed=$((passed + 1)); echo "PASS $c $why" ;;
	77)	skipped=$((skipped + 1)); echo "SKIP $c: $why" ;;
	*)	failed=$((failed + 1)); echo "FAIL $c: $why" ;;
	esac
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] || exit 1
[ "$passed" -gt 0 ] || { echo "SKIP: no hostile case could run"; exit 77; }
exit 0
