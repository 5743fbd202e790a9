// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * libmmkit-sodium.so: libsodium's guarded heap (sodium_malloc() and its
 * siblings) on mmkit's secret memory, for unmodified programs through
 * LD_PRELOAD.  The behaviour a program can see is libsodium 1.0.18's:
 *
 *   - the data ends exactly at a guard page and a guard page lies before
 *     it (MMKIT_SECRET_END_AT_GUARD), with 16 canary bytes in front that
 *     sodium_free() checks (damage aborts);
 *   - fresh memory reads 0xdb; sodium_free() wipes; NULL frees nothing;
 *   - sizes that cannot be served, and sodium_allocarray() products that
 *     overflow, give NULL with errno ENOMEM (the shim sets errno as
 *     libsodium does; the library underneath never touches it);
 *   - sodium_mprotect_*() change the access to the whole allocation.
 *
 * What differs: the pages come from memfd_secret(2) (out of the kernel's
 * direct map) or mmkit's announced mlock fallback; a forked child cannot
 * read its parent's allocations; an allocation costs two VMAs, not four,
 * and freed ones are cached, so alloc+free makes no system call.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

/* libsodium's declarations (sodium/utils.h), not included: no build dependency on it. */
SHIM_EXPORT void *sodium_malloc(size_t size);
SHIM_EXPORT void *sodium_allocarray(size_t count, size_t size);
SHIM_EXPORT void sodium_free(void *ptr);
SHIM_EXPORT int sodium_mprotect_noaccess(void *ptr);
SHIM_EXPORT int sodium_mprotect_readonly(void *ptr);
SHIM_EXPORT int sodium_mprotect_readwrite(void *ptr);

/* What libsodium fills fresh allocations with, so reads of unset bytes show. */
#define GARBAGE_BYTE	0xdb

static struct shim_stats stats;

__attribute__((constructor)) static void stats_setup(void)
{
	shim_stats_setup(&stats);
}

__attribute__((destructor)) static void stats_report(void)
{
	shim_stats_report(&stats, "mmkit-sodium", "");
}

void *sodium_malloc(size_t size)
{
	void *p;
	int ret;

	/*
	 * libsodium hands out a pointer to its guard page for size 0; mmkit
	 * has no empty secrets, so one byte is allocated: the pointer is as
	 * usable (freeable) and still one byte from a guard page.
	 */
	ret = shim_secret_alloc(&stats, &p, size ? size : 1, MMKIT_SECRET_END_AT_GUARD);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	memset(p, GARBAGE_BYTE, size);
	return p;
}

void *sodium_allocarray(size_t n, size_t size)
{
	/* libsodium's own test, >= included: the product must stay below SIZE_MAX. */
	if (n > 0 && size >= SIZE_MAX / n) {
		shim_count(&stats.failed, 1);
		errno = ENOMEM;
		return NULL;
	}
	return sodium_malloc(n * size);
}

void sodium_free(void *ptr)
{
	size_t size;

	if (!ptr)
		return;
	/*
	 * libsodium would read a header page before any pointer it is given
	 * and unmap whatever that header says: a pointer it did not hand out
	 * corrupts the process.  Refusing it loudly is the safe reading.
	 */
	if (mmkit_secret_size(ptr, &size))
		shim_die("mmkit-sodium", "sodium_free", ptr,
		    "not a live allocation of sodium_malloc() (freed already, or never allocated by it)");
	shim_uncount(&stats.live, 1);
	/* Checks the canary (damage aborts), wipes, and caches or unmaps the pages. */
	mmkit_secret_free(ptr);
}

static int protect(void *ptr, int access)
{
	int ret = mmkit_secret_protect(ptr, access);

	if (ret) {
		errno = -ret;
		return -1;
	}
	return 0;
}

int sodium_mprotect_noaccess(void *ptr)
{
	return protect(ptr, MMKIT_SECRET_NOACCESS);
}

int sodium_mprotect_readonly(void *ptr)
{
	return protect(ptr, MMKIT_SECRET_READONLY);
}

int sodium_mprotect_readwrite(void *ptr)
{
	return protect(ptr, MMKIT_SECRET_READWRITE);
}
