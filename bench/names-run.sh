#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# bench/names-run.sh [BUILD_DIR] [ROUNDS]: what mmkit run --names costs,
# each row measured side by side with and without it, in turns, ROUNDS
# (5) times; medians and ratios:
#   - a naming call, prctl(PR_SET_VMA_ANON_NAME) on one of 64 pages in
#     turn (20,000 calls): the kernel's answer without (EINVAL where the
#     kernel cannot name), the supervisor's round trip with;
#   - a thread's creation and end, pthread_create() + pthread_join()
#     (2,000 a round), glibc's names off: the filter sends neither clone3
#     nor its stack's mmap, so this is the filter's entry only;
#   - an mremap() of unnamed memory (grown and shrunk in place in turn,
#     200,000 calls): the filter sends every mremap() to the supervisor,
#     which lets the kernel make it (it has no names to follow there);
#   - the start of a Go program (tests/names-run: its runtime names ~40
#     ranges before main), from exec to exit, 20 starts a round;
#   - the seccomp filter on every other system call, in CPU time (which
#     the machine's load inflates less than wall time), three ways side by
#     side: without a filter, under a filter that allows everything (the
#     fixed cost of having any filter: seccomp's entry into each call) and
#     under --names: 5,000,000 calls of getppid() (the cheapest call: the
#     worst case) and of read() of 64 bytes of /dev/zero, which the filter
#     lets through (the supervisor sees none; the kernel caches the
#     filter's "allow" per call number, Linux 5.11+, so its BPF program
#     does not run), and real programs made of system calls, dd bs=512 of
#     /dev/zero to /dev/null (a read and a write per 512 bytes) and find
#     /usr (getdents64, fstatat, openat), their user and system CPU time
#     (GNU time).
# Where the kernel names VMAs, --names changes nothing (no filter): the
# rows then show that.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-5}
mmkit=$build/mmkit
PATH=$PATH:/usr/local/go/bin:/usr/lib/go/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/calls.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif
#include <fcntl.h>
#include <pthread.h>
static void *nothing(void *arg)
{
	return arg;
}
static double now(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}
/*
 * "name N": wall nanoseconds per naming call (the round trip to the
 * supervisor); "thread N": per pthread_create() + pthread_join(); "mremap N":
 * per mremap() of 16 pages, shrunk and grown in turn; "getppid N", "read N" (64 bytes of /dev/zero): CPU
 * nanoseconds per call, which other processes' load does not inflate.
 */
int main(int argc, char **argv)
{
	long n = atol(argv[2]), i, page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 64 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	clockid_t clock = strchr("ntm", argv[1][0]) ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID;
	pthread_t t;
	int fd = open("/dev/zero", O_RDONLY);
	double t0 = now(clock);

	for (i = 0; i < n; i++) {
		if (argv[1][0] == 'n')
			syscall(SYS_prctl, PR_SET_VMA, PR_SET_VMA_ANON_NAME, p + i % 64 * page, page,
				i % 2 ? "bench-odd" : "bench-even");
		else if (argv[1][0] == 't') {
			if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
				return 1;
		} else if (argv[1][0] == 'm') {
			if (syscall(SYS_mremap, p, (i % 2 ? 16 : 32) * page,
				    (i % 2 ? 32 : 16) * page, 0) != (long)p)
				return 1;
		} else if (argv[1][0] == 'g')
			syscall(SYS_getppid);
		else if (read(fd, p, 64) != 64)
			return 1;
	}
	printf("%.1f\n", (now(clock) - t0) / n);
	return 0;
}
C
cc -O2 -pthread -o "$tmp/calls" "$tmp/calls.c"

# allowall PROGRAM [ARGS]: runs it under a seccomp filter that allows every call.
cat >"$tmp/allowall.c" <<'C'
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	struct sock_filter f[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { 1, f };

	if (argc < 2 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return 126;
	execvp(argv[1], argv + 1);
	return 127;
}
C
cc -O2 -o "$tmp/allowall" "$tmp/allowall.c"

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b / a }'; }

go_start() {	# [mmkit run --names]: µs per start of the Go program, 20 starts
	t0=$(date +%s%N)
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		"$@" "$tmp/namesrun" "$tmp/run" >/dev/null
	done
	echo $(( ($(date +%s%N) - t0) / 20000 ))
}

have_go=0
if command -v go >/dev/null 2>&1 &&
   (cd "$top/tests/names-run" && go build -o "$tmp/namesrun" .) 2>/dev/null; then
	have_go=1
	mkdir "$tmp/run"
	touch "$tmp/run/done"
fi

: >"$tmp/name-plain"; : >"$tmp/name-sv"; : >"$tmp/thread-plain"; : >"$tmp/thread-sv"
: >"$tmp/mremap-plain"; : >"$tmp/mremap-sv"
for f in sys read dd find; do : >"$tmp/$f-plain"; : >"$tmp/$f-all"; : >"$tmp/$f-sv"; done
# CPU seconds (user + system) of "$@", by GNU time.
cpu() { /usr/bin/time -f '%U %S' -o "$tmp/time" "$@" >/dev/null 2>&1 || true; awk '{ print $1 + $2 }' "$tmp/time"; }
have_time=0
[ ! -x /usr/bin/time ] || have_time=1
: >"$tmp/go-plain"; : >"$tmp/go-sv"
r=0
while [ $r -lt "$rounds" ]; do
	"$tmp/calls" name 20000 >>"$tmp/name-plain"
	"$mmkit" run --names "$tmp/calls" name 20000 >>"$tmp/name-sv"
	"$tmp/calls" thread 2000 >>"$tmp/thread-plain"
	"$mmkit" run --names --no-glibc-names "$tmp/calls" thread 2000 >>"$tmp/thread-sv"
	"$tmp/calls" mremap 200000 >>"$tmp/mremap-plain"
	"$mmkit" run --names --no-glibc-names "$tmp/calls" mremap 200000 >>"$tmp/mremap-sv"
	"$tmp/calls" getppid 5000000 >>"$tmp/sys-plain"
	"$tmp/allowall" "$tmp/calls" getppid 5000000 >>"$tmp/sys-all"
	"$mmkit" run --names "$tmp/calls" getppid 5000000 >>"$tmp/sys-sv"
	"$tmp/calls" read 5000000 >>"$tmp/read-plain"
	"$tmp/allowall" "$tmp/calls" read 5000000 >>"$tmp/read-all"
	"$mmkit" run --names "$tmp/calls" read 5000000 >>"$tmp/read-sv"
	if [ $have_time = 1 ]; then
		cpu dd if=/dev/zero of=/dev/null bs=512 count=2000000 >>"$tmp/dd-plain"
		cpu "$tmp/allowall" dd if=/dev/zero of=/dev/null bs=512 count=2000000 >>"$tmp/dd-all"
		cpu "$mmkit" run --names --no-glibc-names dd if=/dev/zero of=/dev/null bs=512 \
			count=2000000 >>"$tmp/dd-sv"
		cpu find /usr >>"$tmp/find-plain"
		cpu "$tmp/allowall" find /usr >>"$tmp/find-all"
		cpu "$mmkit" run --names --no-glibc-names find /usr >>"$tmp/find-sv"
	fi
	if [ $have_go = 1 ]; then
		go_start >>"$tmp/go-plain"
		go_start "$mmkit" run --names >>"$tmp/go-sv"
	fi
	r=$((r + 1))
done

echo "# $(uname -sr), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $("$mmkit" probe | grep '^names')"
printf '%-34s %14s %14s %8s\n' "row (median of $rounds rounds)" "without" "--names" "ratio"
a=$(median <"$tmp/name-plain"); b=$(median <"$tmp/name-sv")
printf '%-34s %11s ns %11s ns %8s\n' "naming call" "$a" "$b" "$(ratio "$a" "$b")"
a=$(median <"$tmp/thread-plain"); b=$(median <"$tmp/thread-sv")
printf '%-34s %11s ns %11s ns %8s\n' "pthread_create + join" "$a" "$b" "$(ratio "$a" "$b")"
a=$(median <"$tmp/mremap-plain"); b=$(median <"$tmp/mremap-sv")
printf '%-34s %11s ns %11s ns %8s\n' "mremap() of unnamed memory" "$a" "$b" "$(ratio "$a" "$b")"
if [ $have_go = 1 ]; then
	a=$(median <"$tmp/go-plain"); b=$(median <"$tmp/go-sv")
	printf '%-34s %11s us %11s us %8s\n' "Go program start to exit" "$a" "$b" "$(ratio "$a" "$b")"
else
	echo "Go program start: no Go toolchain (1.25+) to build tests/names-run"
fi
echo
echo "# every other system call: CPU per call or per program, no filter / allow-all filter / --names"
printf '%-26s %10s %10s %10s %8s %8s\n' "row (median of $rounds rounds)" "none" "allow-all" "--names" \
	"all/none" "names/all"
row3() {	# label, file stem, unit
	a=$(median <"$tmp/$2-plain"); b=$(median <"$tmp/$2-all"); c=$(median <"$tmp/$2-sv")
	printf '%-26s %10s %10s %10s %8s %8s\n' "$1 ($3)" "$a" "$b" "$c" "$(ratio "$a" "$b")" \
		"$(ratio "$b" "$c")"
}
row3 "getppid()" sys "CPU ns"
row3 "read(64 B)" read "CPU ns"
if [ $have_time = 1 ]; then
	row3 "dd bs=512, 1 GB" dd "CPU s"
	row3 "find /usr" find "CPU s"
else
	echo "dd, find /usr: no GNU time (/usr/bin/time) to measure their CPU time"
fi
