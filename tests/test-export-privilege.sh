#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# The privilege debian/mmkit.mmkit-exporter.service gives mmkit export is
# enough and is the least: as nobody with the unit's AmbientCapabilities,
# mmkit export reads a root process's memory (the name it set through
# mmkit_name()); with any one of them taken away, or none, that process is
# counted as denied and not shown.  Then the unit's way of running it:
# systemd-socket-activate holds the socket and runs mmkit export --listen
# systemd, as nobody with those capabilities, and a GET /metrics is answered
# with that process read.  Root only (it changes users).
set -u
. "$(dirname "$0")/fleet-test.sh"

[ "$(id -u)" -eq 0 ] || { echo "SKIP: not root: cannot run mmkit export as another user"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: no setpriv (util-linux)"; exit 77; }
unit="$here/../debian/mmkit.mmkit-exporter.service"
caps=$(sed -n 's/^AmbientCapabilities=//p' "$unit")
[ -n "$caps" ] || fail "no AmbientCapabilities= in $unit"
# CAP_SYS_PTRACE CAP_DAC_READ_SEARCH -> sys_ptrace dac_read_search
caps=$(echo "$caps" | tr 'A-Z' 'a-z' | sed 's/cap_//g')

name="test-export-privilege-$$"
named "$name"
root_pid=$pid

# as_nobody CAPS COMMAND...: COMMAND as nobody with CAPS (words) inherited,
# ambient and bounding, and no other capability.
as_nobody() {
	set_caps=""
	[ -z "$1" ] || set_caps=$(printf '+%s,' $1 | sed 's/,$//')
	shift
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps="-all${set_caps:+,$set_caps}" \
		--ambient-caps="-all${set_caps:+,$set_caps}" --bounding-set="-all${set_caps:+,$set_caps}" \
		"$@"
}

# export_as CAPS: mmkit export of the root process as nobody with CAPS.
export_as() {
	as_nobody "$1" "$mmkit" export --pid "$root_pid" >"$tmp/out" 2>"$tmp/err" ||
		fail "mmkit export as nobody with '$1': $(cat "$tmp/err")"
}

read_it='[v for n, l, v in s if n == "mmkit_scrape_processes" and l["result"] == "read"] == [1]
	and [v for n, l, v in s if n == "mmkit_name_rss_bytes" and l["name"] == a[0]] == [int(a[1])]'
denied='[v for n, l, v in s if n == "mmkit_scrape_processes" and l["result"] == "denied"] == [1]
	and not any(l.get("name") == a[0] for n, l, v in s)'
export_as "$caps"
check_metrics "$tmp/out" "$read_it" "[anon:$name]" $((10 * page_kib * 1024)) ||
	fail "with the unit's capabilities ($caps) the root process is not read"
for drop in $caps; do
	export_as "$(printf '%s\n' $caps | grep -vx "$drop")"
	check_metrics "$tmp/out" "$denied" "[anon:$name]" ||
		fail "without $drop the root process is still read: $drop is not needed"
done
export_as ""
check_metrics "$tmp/out" "$denied" "[anon:$name]" || fail "without capabilities the root process is read"

command -v systemd-socket-activate >/dev/null ||
	{ echo "note: no systemd-socket-activate: --listen systemd not run"; exit 0; }
port=$(free_port)
# It execs the command on the first connection, which keeps its PID: LISTEN_PID matches.
systemd-socket-activate -l "127.0.0.1:$port" setpriv --reuid=65534 --regid=65534 --clear-groups \
	--inh-caps="-all,$(printf '+%s,' $caps | sed 's/,$//')" \
	--ambient-caps="-all,$(printf '+%s,' $caps | sed 's/,$//')" \
	"$mmkit" export --listen systemd --pid "$root_pid" >"$tmp/activate.log" 2>&1 &
started="$started $!"
tries=0
until get "http://127.0.0.1:$port/metrics" "$tmp/http" >"$tmp/status" 2>&1; do
	tries=$((tries + 1))
	[ "$tries" -lt 20 ] || fail "--listen systemd: $(cat "$tmp/status" "$tmp/activate.log")"
	sleep 0.5
done
check_metrics "$tmp/http" "$read_it" "[anon:$name]" $((10 * page_kib * 1024)) ||
	fail "--listen systemd as the unit runs it: $(cat "$tmp/activate.log")"
exit 0
