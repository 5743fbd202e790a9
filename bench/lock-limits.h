/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * What a run of bench-lock.c needs of the system, checked before anything
 * is measured (kept apart from the measurements, which bench-lock.c
 * includes this beside):
 *
 *   RLIMIT_MEMLOCK     every strategy may lock the whole mapping, and
 *                      MLOCK_ONFAULT charges it all at once: the size on
 *                      top of what is locked already.
 *   vm.max_map_count   locking single pages (or batches) at random splits
 *                      the mapping into a VMA per run of locked or unlocked
 *                      pages: half a VMA per page at the worst moment of a
 *                      random order, which the access sequence gives exactly.
 *
 * Root raises what is short for the run (and puts vm.max_map_count back at
 * exit); anyone else is told the figure needed and how to get it.
 */
#ifndef MMKIT_BENCH_LOCK_LIMITS_H
#define MMKIT_BENCH_LOCK_LIMITS_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include "mmkit.h"

#define MAX_MAP_COUNT	"/proc/sys/vm/max_map_count"

static long max_map_count(void)
{
	long n = -1;
	FILE *f = fopen(MAX_MAP_COUNT, "r");

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/* Async-signal-safe: the signal handler below puts the old value back with it. */
static int write_map_count(const char *text)
{
	ssize_t len = (ssize_t)strlen(text);
	int fd, ok;

	fd = open(MAX_MAP_COUNT, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, text, (size_t)len) == len;
	close(fd);
	return ok ? 0 : -1;
}

/* The value to put back, as text: nothing to format in a signal handler. */
static char map_count_saved[24];
static pid_t map_count_owner;

static void restore_map_count(void)
{
	/* Only the process that raised it: the children inherit the handlers. */
	if (map_count_saved[0] && getpid() == map_count_owner)
		write_map_count(map_count_saved);
}

static void restore_map_count_and_die(int sig)
{
	restore_map_count();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The VMAs of this process now: lines of /proc/self/maps. */
static long maps_now(void)
{
	long n = 0;
	int ch;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return 0;
	while ((ch = getc(f)) != EOF)
		n += ch == '\n';
	fclose(f);
	return n;
}

/* 0 if @peak_vmas more VMAs fit (raising the limit as root), else -1 (said why). */
static int check_map_count(unsigned long long peak_vmas)
{
	/* Room for what the process maps meanwhile: stdio, the report, a split during mprotect. */
	unsigned long long need = peak_vmas + (unsigned long long)maps_now() + 256;
	long have = max_map_count();
	char text[24];

	if (have < 0 || (unsigned long long)have >= need)
		return 0;
	if (geteuid() == 0) {
		snprintf(map_count_saved, sizeof(map_count_saved), "%ld\n", have);
		map_count_owner = getpid();
		atexit(restore_map_count);
		signal(SIGINT, restore_map_count_and_die);
		signal(SIGTERM, restore_map_count_and_die);
		signal(SIGHUP, restore_map_count_and_die);
		snprintf(text, sizeof(text), "%llu\n", need);
		if (!write_map_count(text)) {
			fprintf(stderr, "bench-lock: raised vm.max_map_count from %ld to %llu for this run "
				"(put back at the end)\n", have, need);
			return 0;
		}
		map_count_saved[0] = 0;
	}
	fprintf(stderr,
		"bench-lock: vm.max_map_count is %ld; locking single pages of this --size at random\n"
		"splits the mapping into up to %llu VMAs: the run needs a limit of %llu\n"
		"(as root: sysctl -w vm.max_map_count=%llu), or use a smaller --size\n",
		have, peak_vmas, need, need);
	return -1;
}

/* 0 if locking @size bytes more fits RLIMIT_MEMLOCK (raising it as root), else -1. */
static int check_memlock(unsigned long long size)
{
	struct mmkit_memlock m;
	struct rlimit rl;
	unsigned long long need_kib;
	int err;

	err = mmkit_memlock_check(NULL, 0, &m);
	if (err) {
		fprintf(stderr, "bench-lock: RLIMIT_MEMLOCK: %s\n", strerror(-err));
		return -1;
	}
	if (m.exempt || m.limit == MMKIT_MEMLOCK_UNLIMITED || m.locked + size <= m.limit)
		return 0;
	need_kib = (m.locked + size + 1023) / 1024;
	if (geteuid() == 0 && !getrlimit(RLIMIT_MEMLOCK, &rl)) {
		rl.rlim_cur = need_kib * 1024;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		if (!setrlimit(RLIMIT_MEMLOCK, &rl)) {
			fprintf(stderr, "bench-lock: raised RLIMIT_MEMLOCK to %llu KiB for this run\n",
				need_kib);
			return 0;
		}
	}
	fprintf(stderr,
		"bench-lock: RLIMIT_MEMLOCK is %llu KiB, %llu KiB locked already; this run locks up to\n"
		"the whole %llu KiB file and needs a limit of at least %llu KiB: run `ulimit -l %llu`\n"
		"first (raising the hard limit needs root, or an entry in /etc/security/limits.conf),\n"
		"or use a smaller --size\n",
		m.limit / 1024, m.locked / 1024, size / 1024, need_kib, need_kib);
	return -1;
}

#endif /* MMKIT_BENCH_LOCK_LIMITS_H */
