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

#include <mmkit.h>

#define SHIM_EXPORT	__attribute__((visibility("default")))

/* libsodium's declarations (sodium/utils.h), not included: no build dependency on it. */
SHIM_EXPORT void *sodium_malloc(size_t size);
SHIM_EXPORT void *sodium_allocarray(size_t count, size_t size);
SHIM_EXPORT void sodium_free(void *ptr);
SHIM_EXPORT int sodium_mprotect_noaccess(void *ptr);
SHIM_EXPORT int sodium_mprotect_readonly(void *ptr);
SHIM_EXPORT int sodium_mprotect_readwrite(void *ptr);

/* What libsodium fills fresh allocations with, so reads of unset bytes show. */
#define GARBAGE_BYTE	0xdb

/*
 * Counted always (a few relaxed atomic adds), printed at exit with
 * MMKIT_STATS=1.  The counts are of sodium_malloc() calls, not of the
 * library's pages.
 */
static struct {
	unsigned long long allocs;	/* successful allocations */
	unsigned long long bytes;	/* bytes asked for by them */
	unsigned long long secretmem;	/* of those, in memfd_secret */
	unsigned long long fallback;	/* of those, in the mlock fallback */
	unsigned long long failed;	/* allocations that returned NULL */
	unsigned long long live;	/* allocated and not freed */
} stats;

static int stats_wanted;
/* The process that loaded the shim: a forked child does not report its parent's counts. */
static pid_t stats_pid;

static void count(unsigned long long *counter, long long n)
{
	__atomic_fetch_add(counter, (unsigned long long)n, __ATOMIC_RELAXED);
}

static unsigned long long counted(const unsigned long long *counter)
{
	return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void stats_setup(void)
{
	const char *v = getenv("MMKIT_STATS");

	stats_wanted = v && !strcmp(v, "1");
	stats_pid = getpid();
}

__attribute__((destructor)) static void stats_report(void)
{
	char line[512];
	int n;

	if (!stats_wanted || getpid() != stats_pid)
		return;
	n = snprintf(line, sizeof(line),
		     "mmkit-sodium: %s[%d]: allocations=%llu bytes=%llu in_memfd_secret=%llu in_fallback=%llu failed=%llu live_at_exit=%llu\n",
		     program_invocation_short_name, (int)stats_pid, counted(&stats.allocs),
		     counted(&stats.bytes), counted(&stats.secretmem), counted(&stats.fallback),
		     counted(&stats.failed), counted(&stats.live));
	if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
		return;
}

static void __attribute__((noreturn)) die(const char *fn, const void *p, const char *what)
{
	char msg[256];
	int n;

	n = snprintf(msg, sizeof(msg), "mmkit-sodium: %s(%p): %s; aborting\n", fn, p, what);
	if (n > 0 && write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1) < 0)
		abort();
	abort();
}

void *sodium_malloc(size_t size)
{
	const unsigned int flags = MMKIT_SECRET_END_AT_GUARD;
	void *p;
	int ret;

	/*
	 * libsodium hands out a pointer to its guard page for size 0; mmkit
	 * has no empty secrets, so one byte is allocated: the pointer is as
	 * usable (freeable) and still one byte from a guard page.
	 */
	ret = mmkit_secret_alloc(&p, size ? size : 1, flags | MMKIT_SECRET_REQUIRE_SECRETMEM);
	if (!ret) {
		count(&stats.secretmem, 1);
	} else if (ret == -ENOSYS) {
		/* No memfd_secret: the fallback, announced once on stderr by the library. */
		ret = mmkit_secret_alloc(&p, size ? size : 1, flags);
		if (!ret)
			count(&stats.fallback, 1);
	}
	if (ret) {
		count(&stats.failed, 1);
		errno = -ret;
		return NULL;
	}
	count(&stats.allocs, 1);
	count(&stats.bytes, (long long)size);
	count(&stats.live, 1);
	memset(p, GARBAGE_BYTE, size);
	return p;
}

void *sodium_allocarray(size_t n, size_t size)
{
	/* libsodium's own test, >= included: the product must stay below SIZE_MAX. */
	if (n > 0 && size >= SIZE_MAX / n) {
		count(&stats.failed, 1);
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
		die("sodium_free", ptr,
		    "not a live allocation of sodium_malloc() (freed already, or never allocated by it)");
	count(&stats.live, -1);
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
