# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
# A pool of jobs for the test runners (sourced by tests/run-tests.sh,
# tests/check.sh and tests/kernels/run.sh): up to JOBS commands at a time,
# each with its output in a file of its own, handed to the caller's
# pool_done as each one ends, in the order they end.  With one job the
# command runs in the foreground (the kernel guests' busybox needs no
# FIFO then).  A job's end is a line on a FIFO held open on fd 4, so the
# runner sleeps until one ends instead of polling; the commands do not
# inherit fd 4.  The caller defines:
#	pool_done LABEL EXIT_CODE SECONDS OUTPUT_FILE
# Variables are global in sh: the pool's start with pool_.

# pool_init JOBS DIR: DIR (existing, the caller's to remove) holds the
# outputs and the FIFO.
pool_init() {
	pool_jobs=$1 pool_dir=$2 pool_n=0 pool_running=0
	[ "$pool_jobs" -gt 1 ] || return 0
	mkfifo "$pool_dir/ends" && exec 4<>"$pool_dir/ends"
}

# pool_run LABEL COMMAND...: starts COMMAND once a slot is free.
pool_run() {
	pool_n=$((pool_n + 1))
	printf '%s\n' "$1" >"$pool_dir/$pool_n.label"
	shift
	if [ "$pool_jobs" -le 1 ]; then
		pool_job "$pool_n" "$@"
		pool_end "$pool_n"
		return
	fi
	while [ "$pool_running" -ge "$pool_jobs" ]; do
		pool_reap
	done
	pool_job "$pool_n" "$@" &
	pool_running=$((pool_running + 1))
}

# pool_drain: until every job has ended.
pool_drain() {
	while [ "$pool_running" -gt 0 ]; do
		pool_reap
	done
}

pool_job() {	# index, command...
	pool_i=$1
	shift
	pool_start=$(date +%s)
	"$@" >"$pool_dir/$pool_i.out" 2>&1 4>&-
	echo "$? $(( $(date +%s) - pool_start ))" >"$pool_dir/$pool_i.rc"
	[ "$pool_jobs" -le 1 ] || echo "$pool_i" >&4
}

pool_reap() {
	read -r pool_i <&4
	pool_running=$((pool_running - 1))
	pool_end "$pool_i"
}

pool_end() {	# index
	read -r pool_rc pool_secs <"$pool_dir/$1.rc"
	pool_done "$(cat "$pool_dir/$1.label")" "$pool_rc" "$pool_secs" "$pool_dir/$1.out"
	rm -f "$pool_dir/$1.label" "$pool_dir/$1.rc" "$pool_dir/$1.out"
}
