// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Preloaded before libmmkit-perturb.so by tests/test-perturb-fork.sh: every
 * pthread_mutex_lock() that the shim makes (its own locks and those of
 * the library linked into it) waits SLOW_LOCK_US microseconds (default
 * 2000) first.  A thread that holds one lock and takes another then holds
 * the first that much longer, and a fork(2) whose handlers take the same
 * two locks in the other order meets it there nearly every time: a lock
 * order bug that hangs one run in a hundred hangs almost every run.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int (*real_lock)(pthread_mutex_t *m);
static uintptr_t shim_start, shim_end;
static long delay_us = 2000;

/* The address range of the shim's loaded segments. */
static int find_shim(struct dl_phdr_info *info, size_t size, void *arg)
{
	int i;

	(void)size;
	(void)arg;
	if (!strstr(info->dlpi_name, "libmmkit-perturb.so"))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		if (!shim_start || start < shim_start)
			shim_start = start;
		if (start + ph->p_memsz > shim_end)
			shim_end = start + ph->p_memsz;
	}
	return 1;
}

/*
 * Set up at the first call, which may come before this object's
 * constructors run (the shim's and the library's register their fork
 * handlers at load, under their locks).
 */
static void slow_lock_setup(void)
{
	const char *env = getenv("SLOW_LOCK_US");

	if (env)
		delay_us = strtol(env, NULL, 0);
	real_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
	if (!real_lock || !dl_iterate_phdr(find_shim, NULL)) {
		fprintf(stderr, "slow-lock: %s\n", real_lock ? "libmmkit-perturb.so is not loaded" :
			"no pthread_mutex_lock to wrap");
		abort();
	}
}

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

int pthread_mutex_lock(pthread_mutex_t *m)
{
	uintptr_t caller = (uintptr_t)__builtin_return_address(0);
	struct timespec ts;

	pthread_once(&setup_once, slow_lock_setup);
	if (caller >= shim_start && caller < shim_end) {
		ts.tv_sec = delay_us / 1000000;
		ts.tv_nsec = delay_us % 1000000 * 1000;
		nanosleep(&ts, NULL);
	}
	return real_lock(m);
}
