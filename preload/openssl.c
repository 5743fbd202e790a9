// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * libmmkit-openssl.so: OpenSSL 3's secure heap on mmkit's secret memory.
 *
 * Preloaded, it defines the CRYPTO_secure_* functions before libcrypto.so.3
 * does.  Debian's libcrypto calls them through its PLT (and hands them to
 * its providers as function pointers), so OpenSSL's own calls -- every
 * BN_secure_new(), private key, DRBG state and secure buffer -- land here
 * too, not only the program's.
 *
 * OpenSSL's heap is one fixed-size arena, made only when the program calls
 * CRYPTO_secure_malloc_init() (the openssl command and Python never do),
 * and still handed out when mlock() failed.  Here every secure allocation
 * is a secret of mmkit's, whether or not the program asked for a heap,
 * with no size limit but RLIMIT_MEMLOCK; an allocation mmkit cannot serve
 * returns NULL, as a full arena does.
 *
 * A pointer that is not a live secret (OpenSSL's own heap falls back to
 * CRYPTO_malloc() before CRYPTO_secure_malloc_init(), and callers mix the
 * two) is handed to libcrypto's CRYPTO_free() or CRYPTO_clear_free(), as
 * OpenSSL does with pointers outside its arena.
 *
 * MMKIT_STATS=1 prints one line on stderr at exit: see stats_report().
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmkit.h"

/*
 * The prototypes of OpenSSL 3's crypto.h.  With the header at hand the
 * compiler checks them against it; the shim builds without it too.
 */
#if __has_include(<openssl/crypto.h>)
#include <openssl/crypto.h>
#endif
#define EXPORT	__attribute__((visibility("default")))

EXPORT int CRYPTO_secure_malloc_init(size_t size, size_t minsize);
EXPORT int CRYPTO_secure_malloc_done(void);
EXPORT int CRYPTO_secure_malloc_initialized(void);
EXPORT void *CRYPTO_secure_malloc(size_t num, const char *file, int line);
EXPORT void *CRYPTO_secure_zalloc(size_t num, const char *file, int line);
EXPORT void CRYPTO_secure_free(void *ptr, const char *file, int line);
EXPORT void CRYPTO_secure_clear_free(void *ptr, size_t num, const char *file, int line);
EXPORT int CRYPTO_secure_allocated(const void *ptr);
EXPORT size_t CRYPTO_secure_actual_size(void *ptr);
EXPORT size_t CRYPTO_secure_used(void);

/*
 * Counted always (a few relaxed atomic adds), printed at exit with
 * MMKIT_STATS=1.  used and live also answer CRYPTO_secure_used() and
 * CRYPTO_secure_malloc_done().
 */
static struct {
	unsigned long long allocs;	/* successful allocations */
	unsigned long long bytes;	/* bytes asked for by them */
	unsigned long long secretmem;	/* of those, in memfd_secret */
	unsigned long long fallback;	/* of those, in the mlock fallback */
	unsigned long long failed;	/* allocations that returned NULL */
	unsigned long long live;	/* allocated and not freed */
	unsigned long long used;	/* their bytes */
	unsigned long long foreign;	/* frees passed on to libcrypto */
} stats;

static int stats_wanted;
/* The process that loaded the shim: a forked child does not report its parent's counts. */
static pid_t stats_pid;

static void count(unsigned long long *counter, unsigned long long n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

static void uncount(unsigned long long *counter, unsigned long long n)
{
	__atomic_fetch_sub(counter, n, __ATOMIC_RELAXED);
}

static unsigned long long counted(const unsigned long long *counter)
{
	return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void stats_setup(void)
{
	const char *v = secure_getenv("MMKIT_STATS");

	stats_wanted = v && !strcmp(v, "1");
	stats_pid = getpid();
}

/*
 * Runs after the program's atexit handlers, OpenSSL's cleanup among them:
 * live_at_exit counts what OpenSSL itself did not free.
 */
__attribute__((destructor)) static void stats_report(void)
{
	char line[512];
	int n;

	if (!stats_wanted || getpid() != stats_pid)
		return;
	n = snprintf(line, sizeof(line),
		     "mmkit-openssl: %s[%d]: allocations=%llu bytes=%llu in_memfd_secret=%llu in_fallback=%llu failed=%llu live_at_exit=%llu live_bytes_at_exit=%llu non_secure_frees=%llu\n",
		     program_invocation_short_name, (int)stats_pid, counted(&stats.allocs),
		     counted(&stats.bytes), counted(&stats.secretmem), counted(&stats.fallback),
		     counted(&stats.failed), counted(&stats.live), counted(&stats.used),
		     counted(&stats.foreign));
	if (n > 0 && write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
		return;
}

static void __attribute__((noreturn)) die(const char *fn, const void *p, const char *what)
{
	char msg[256];
	int n;

	n = snprintf(msg, sizeof(msg), "mmkit-openssl: %s(%p): %s; aborting\n", fn, p, what);
	if (n > 0 && write(2, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1) < 0)
		abort();
	abort();
}

/*
 * libcrypto's own definition of @name.  RTLD_NEXT finds it when libcrypto
 * was loaded with the program; a libcrypto that dlopen() loaded with
 * RTLD_LOCAL (Python's _ssl and _hashlib modules) is outside the scope
 * RTLD_NEXT searches, and is found by name among the loaded objects.
 */
static void *libcrypto_symbol(const char *name)
{
	void *sym = dlsym(RTLD_NEXT, name);
	void *handle;

	if (sym)
		return sym;
	handle = dlopen("libcrypto.so.3", RTLD_LAZY | RTLD_NOLOAD);
	if (!handle)
		return NULL;
	sym = dlsym(handle, name);
	/* Only drops the reference RTLD_NOLOAD took: the library stays loaded. */
	dlclose(handle);
	return sym;
}

/* libcrypto's @name, looked up once into @cache; NULL if libcrypto is not loaded. */
static void *libcrypto_function(void **cache, const char *name)
{
	void *fn = __atomic_load_n(cache, __ATOMIC_RELAXED);

	if (!fn) {
		fn = libcrypto_symbol(name);
		__atomic_store_n(cache, fn, __ATOMIC_RELAXED);
	}
	return fn;
}

typedef void crypto_free_fn(void *ptr, const char *file, int line);
typedef void crypto_clear_free_fn(void *ptr, size_t num, const char *file, int line);

/* The size of @ptr if it is a live secret of this shim's, else 0. */
static size_t secret_size(const void *ptr)
{
	size_t n;

	return ptr && !mmkit_secret_size(ptr, &n) ? n : 0;
}

/* Frees the live secret @ptr of @n bytes; mmkit wipes it. */
static void secret_free(void *ptr, size_t n)
{
	uncount(&stats.used, n);
	uncount(&stats.live, 1);
	mmkit_secret_free(ptr);
}

/*
 * mmkit's secret memory is there to be used: memfd_secret, or its mlock
 * fallback (not when the fallback is forbidden and memfd_secret is
 * missing).  The answer cannot turn back to no, so a yes is kept.
 */
int CRYPTO_secure_malloc_initialized(void)
{
	static int usable;
	struct mmkit_secret_stats st;

	if (__atomic_load_n(&usable, __ATOMIC_RELAXED))
		return 1;
	if (mmkit_secret_stats(&st) || !strcmp(st.backend, "none"))
		return 0;
	__atomic_store_n(&usable, 1, __ATOMIC_RELAXED);
	return 1;
}

/*
 * There is no arena to make: @size and @minsize are only checked as
 * OpenSSL requires them (it aborts on a @size that is not a power of two).
 * Returns 1 when secret memory can be had, like an arena that is locked.
 */
int CRYPTO_secure_malloc_init(size_t size, size_t minsize)
{
	if (!size || (size & (size - 1)) || (minsize & (minsize - 1)))
		return 0;
	return CRYPTO_secure_malloc_initialized();
}

/*
 * OpenSSL releases its arena when nothing in it is live and says so; here
 * there is nothing to release, and later allocations are secrets still.
 */
int CRYPTO_secure_malloc_done(void)
{
	return counted(&stats.live) == 0;
}

void *CRYPTO_secure_malloc(size_t num, const char *file, int line)
{
	/* OpenSSL's arena hands out its smallest block for 0 bytes; mmkit has no empty secrets. */
	size_t size = num ? num : 1;
	void *p;
	int ret;

	(void)file;
	(void)line;
	ret = mmkit_secret_alloc(&p, size, MMKIT_SECRET_REQUIRE_SECRETMEM);
	if (!ret) {
		count(&stats.secretmem, 1);
	} else if (ret == -ENOSYS) {
		/* No memfd_secret: the fallback, announced once on stderr by the library. */
		ret = mmkit_secret_alloc(&p, size, 0);
		if (!ret)
			count(&stats.fallback, 1);
	}
	if (ret) {
		count(&stats.failed, 1);
		return NULL;
	}
	count(&stats.allocs, 1);
	count(&stats.bytes, num);
	count(&stats.live, 1);
	count(&stats.used, size);
	return p;
}

/* mmkit's secrets come zeroed. */
void *CRYPTO_secure_zalloc(size_t num, const char *file, int line)
{
	return CRYPTO_secure_malloc(num, file, line);
}

void CRYPTO_secure_free(void *ptr, const char *file, int line)
{
	static void *cache;
	crypto_free_fn *crypto_free;
	size_t n;

	if (!ptr)
		return;
	n = secret_size(ptr);
	if (n) {
		secret_free(ptr, n);
		return;
	}
	crypto_free = (crypto_free_fn *)libcrypto_function(&cache, "CRYPTO_free");
	if (!crypto_free)
		die("CRYPTO_secure_free", ptr, "not a secure allocation, and no libcrypto.so.3 "
		    "is loaded to free it");
	count(&stats.foreign, 1);
	crypto_free(ptr, file, line);
}

/* A secret is wiped whole by mmkit; another pointer's @num bytes by libcrypto. */
void CRYPTO_secure_clear_free(void *ptr, size_t num, const char *file, int line)
{
	static void *cache;
	crypto_clear_free_fn *crypto_clear_free;
	size_t n;

	if (!ptr)
		return;
	n = secret_size(ptr);
	if (n) {
		secret_free(ptr, n);
		return;
	}
	crypto_clear_free = (crypto_clear_free_fn *)libcrypto_function(&cache,
									 "CRYPTO_clear_free");
	if (!crypto_clear_free)
		die("CRYPTO_secure_clear_free", ptr, "not a secure allocation, and no "
		    "libcrypto.so.3 is loaded to free it");
	count(&stats.foreign, 1);
	crypto_clear_free(ptr, num, file, line);
}

int CRYPTO_secure_allocated(const void *ptr)
{
	return secret_size(ptr) != 0;
}

/* The bytes usable at @ptr; 0 for a pointer that is not a secret (OpenSSL aborts). */
size_t CRYPTO_secure_actual_size(void *ptr)
{
	return secret_size(ptr);
}

size_t CRYPTO_secure_used(void)
{
	return counted(&stats.used);
}
