// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * OpenSSL's secure-heap API as libmmkit-openssl.so serves it: a program
 * linked against libcrypto, run by tests/test-openssl-semantics.sh with the
 * shim preloaded.  It checks that the shim, not libcrypto, answers (also
 * for libcrypto's own calls, through BN_secure_new()), and OpenSSL's
 * semantics: allocated, actual_size, used, zalloc zeroed, clear_free, the
 * free of a pointer from OPENSSL_malloc() (to CRYPTO_free(), counted by
 * memory functions of our own), size 0 and sizes that cannot be served,
 * init and done, threads, and fork (a child has copies of its parent's
 * secure memory, as it has of OpenSSL's arena).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "harness.h"

/* The program's memory functions: they count, so frees passed on can be seen. */
static unsigned long plain_frees;

static void *count_malloc(size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return malloc(n);
}

static void *count_realloc(void *p, size_t n, const char *file, int line)
{
	(void)file;
	(void)line;
	return realloc(p, n);
}

static void count_free(void *p, const char *file, int line)
{
	(void)file;
	(void)line;
	if (p)
		__atomic_fetch_add(&plain_frees, 1, __ATOMIC_RELAXED);
	free(p);
}

static int all_bytes(const unsigned char *p, size_t n, unsigned char byte)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != byte)
			return 0;
	return 1;
}

static void check_shim_answers(void)
{
	Dl_info info;

	T_CASE("CRYPTO_secure_malloc is the shim's");
	T_ASSERT(dladdr((void *)CRYPTO_secure_malloc, &info) && info.dli_fname);
	if (!strstr(info.dli_fname, "libmmkit-openssl"))
		T_FAIL("CRYPTO_secure_malloc comes from %s: run with LD_PRELOAD=libmmkit-openssl.so",
		       info.dli_fname);
	/* No CRYPTO_secure_malloc_init() call: the shim needs none. */
	if (!CRYPTO_secure_malloc_initialized())
		T_SKIP("no secret memory here (memfd_secret missing and the fallback forbidden)");
}

static void check_alloc_free(void)
{
	size_t used = CRYPTO_secure_used();
	unsigned char *p, *z;
	size_t n;

	T_CASE("malloc, allocated, actual_size, used, free");
	p = OPENSSL_secure_malloc(32);
	T_ASSERT(p);
	T_EQ(CRYPTO_secure_allocated(p), 1);
	n = CRYPTO_secure_actual_size(p);
	T_ASSERT(n >= 32);
	T_EQ(CRYPTO_secure_used(), used + n);
	T_EQ(CRYPTO_secure_malloc_done(), 0);
	memset(p, 0xa5, 32);
	OPENSSL_secure_free(p);
	T_EQ(CRYPTO_secure_used(), used);
	T_EQ(CRYPTO_secure_allocated(p), 0);

	T_CASE("zalloc returns zeroes, also where a secret was");
	z = OPENSSL_secure_zalloc(32);
	T_ASSERT(z && all_bytes(z, 32, 0));
	memset(z, 0x5a, 32);
	OPENSSL_secure_clear_free(z, 32);
	T_EQ(CRYPTO_secure_used(), used);
	p = OPENSSL_secure_malloc(32);
	T_ASSERT(p && all_bytes(p, 32, 0));
	OPENSSL_secure_free(p);

	T_CASE("a 4 KiB and a 100 KiB secret");
	p = OPENSSL_secure_malloc(4096);
	z = OPENSSL_secure_zalloc(100 * 1024);
	T_ASSERT(p && z && all_bytes(z, 100 * 1024, 0));
	T_ASSERT(CRYPTO_secure_actual_size(z) >= 100 * 1024);
	memset(p, 1, 4096);
	memset(z, 2, 100 * 1024);
	OPENSSL_secure_free(p);
	OPENSSL_secure_clear_free(z, 100 * 1024);
	T_EQ(CRYPTO_secure_used(), used);
}

static void check_edges(void)
{
	unsigned long frees = plain_frees;
	unsigned char *p;

	T_CASE("NULL is no secret, and freeing it does nothing");
	T_EQ(CRYPTO_secure_allocated(NULL), 0);
	OPENSSL_secure_free(NULL);
	OPENSSL_secure_clear_free(NULL, 16);
	T_EQ(plain_frees, frees);

	T_CASE("size 0: a pointer that can be freed, as from OpenSSL's arena");
	p = OPENSSL_secure_malloc(0);
	T_ASSERT(p);
	T_EQ(CRYPTO_secure_allocated(p), 1);
	OPENSSL_secure_free(p);

	T_CASE("sizes that cannot be served: NULL");
	T_ASSERT(!OPENSSL_secure_malloc(SIZE_MAX));
	T_ASSERT(!OPENSSL_secure_zalloc(SIZE_MAX / 2));
}

static void free_twice(void *arg)
{
	unsigned char *p = OPENSSL_secure_malloc(32);

	(void)arg;
	T_ASSERT(p);
	OPENSSL_secure_free(p);
	/* A freed secret is no secret, but not libcrypto's to free either. */
	T_EQ(CRYPTO_secure_allocated(p), 0);
	OPENSSL_secure_free(p);
}

static void free_inside(void *arg)
{
	unsigned char *p = OPENSSL_secure_malloc(64);

	(void)arg;
	T_ASSERT(p);
	OPENSSL_secure_clear_free(p + 16, 16);
}

static void check_mistakes(void)
{
	int status;

	T_CASE("a secret freed twice, a pointer inside one: abort, not free()");
	status = t_in_child(free_twice, NULL);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
		T_FAIL("a double free: wait status %#x, expected SIGABRT", status);
	status = t_in_child(free_inside, NULL);
	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
		T_FAIL("a free inside a secret: wait status %#x, expected SIGABRT", status);
}

static void check_plain_pointers(void)
{
	unsigned long frees = plain_frees;
	unsigned char *q;

	T_CASE("OPENSSL_malloc memory is no secret; secure_free passes it to CRYPTO_free");
	q = OPENSSL_malloc(64);
	T_ASSERT(q);
	T_EQ(CRYPTO_secure_allocated(q), 0);
	T_EQ(CRYPTO_secure_actual_size(q), 0);
	OPENSSL_secure_free(q);
	T_EQ(plain_frees, frees + 1);

	T_CASE("and secure_clear_free to CRYPTO_clear_free");
	q = OPENSSL_malloc(64);
	T_ASSERT(q);
	memset(q, 0x77, 64);
	OPENSSL_secure_clear_free(q, 64);
	T_EQ(plain_frees, frees + 2);

	T_CASE("a secret is not freed by the program's free function");
	q = OPENSSL_secure_malloc(64);
	T_ASSERT(q);
	OPENSSL_secure_free(q);
	T_EQ(plain_frees, frees + 2);
}

static void check_init_done(void)
{
	unsigned char *p;

	T_CASE("init: 1 for a valid heap, 0 for sizes OpenSSL refuses");
	T_EQ(CRYPTO_secure_malloc_init(1 << 20, 16), 1);
	T_EQ(CRYPTO_secure_malloc_init(1 << 16, 0), 1);
	T_EQ(CRYPTO_secure_malloc_init(3 << 10, 16), 0);
	T_EQ(CRYPTO_secure_malloc_init(0, 16), 0);
	T_EQ(CRYPTO_secure_malloc_init(1 << 20, 24), 0);
	T_EQ(CRYPTO_secure_malloc_initialized(), 1);

	T_CASE("done: 0 while a secret lives, 1 once none does; secrets go on after");
	p = OPENSSL_secure_malloc(48);
	T_ASSERT(p);
	T_EQ(CRYPTO_secure_malloc_done(), 0);
	OPENSSL_secure_free(p);
	T_EQ(CRYPTO_secure_malloc_done(), 1);
	p = OPENSSL_secure_malloc(48);
	T_ASSERT(p);
	T_EQ(CRYPTO_secure_allocated(p), 1);
	OPENSSL_secure_free(p);
}

#define THREADS		4
#define ROUNDS		20000

static void *churn(void *arg)
{
	unsigned char *held[8] = { 0 };

	(void)arg;
	for (unsigned int i = 0; i < ROUNDS; i++) {
		unsigned int slot = i % 8;
		size_t n = 1 + (i * 37) % 3000;

		OPENSSL_secure_clear_free(held[slot], 0);
		held[slot] = OPENSSL_secure_malloc(n);
		if (!held[slot] || CRYPTO_secure_actual_size(held[slot]) < n)
			return "allocation failed";
		memset(held[slot], (int)i, n);
	}
	for (unsigned int slot = 0; slot < 8; slot++)
		OPENSSL_secure_free(held[slot]);
	return NULL;
}

static void check_threads(void)
{
	size_t used = CRYPTO_secure_used();
	pthread_t t[THREADS];
	void *ret;

	T_CASE("threads allocating and freeing at once; used comes back");
	for (int i = 0; i < THREADS; i++)
		T_EQ(pthread_create(&t[i], NULL, churn, NULL), 0);
	for (int i = 0; i < THREADS; i++) {
		T_EQ(pthread_join(t[i], &ret), 0);
		if (ret)
			T_FAIL("thread %d: %s", i, (const char *)ret);
	}
	T_EQ(CRYPTO_secure_used(), used);
}

struct fork_case {
	unsigned char *secret;
	unsigned char *neighbour;	/* likely in the same page */
};

static void in_child(void *arg)
{
	struct fork_case *fc = arg;
	unsigned char buf[32], *fresh;

	if (!all_bytes(fc->secret, 32, 0x3c) || !all_bytes(fc->neighbour, 48, 0xc3))
		_exit(2);
	if (!CRYPTO_secure_allocated(fc->secret))
		_exit(3);
	memset(fc->secret, 0x11, 32);
	/* The DRBG's state lives in secure memory: the child's copy must work. */
	if (RAND_bytes(buf, sizeof(buf)) != 1)
		_exit(4);
	fresh = OPENSSL_secure_zalloc(64);
	if (!fresh || !all_bytes(fresh, 64, 0))
		_exit(5);
	OPENSSL_secure_free(fresh);
	OPENSSL_secure_clear_free(fc->secret, 32);
	OPENSSL_secure_free(fc->neighbour);
	_exit(0);
}

/* OpenSSL's arena is copied into a child: so must the shim's secrets be. */
static void check_fork(void)
{
	struct fork_case fc;
	unsigned char buf[32];
	int status;

	T_CASE("a fork child has its parent's secrets (and DRBG), a copy of its own");
	T_ASSERT(RAND_bytes(buf, sizeof(buf)) == 1);
	fc.secret = OPENSSL_secure_malloc(32);
	fc.neighbour = OPENSSL_secure_malloc(48);
	T_ASSERT(fc.secret && fc.neighbour);
	memset(fc.secret, 0x3c, 32);
	memset(fc.neighbour, 0xc3, 48);
	status = t_in_child(in_child, &fc);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		T_FAIL("the child %s %d", WIFEXITED(status) ? "exited" : "died of signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	T_ASSERT(all_bytes(fc.secret, 32, 0x3c) && all_bytes(fc.neighbour, 48, 0xc3));
	T_EQ(CRYPTO_secure_allocated(fc.secret), 1);
	OPENSSL_secure_free(fc.secret);
	OPENSSL_secure_free(fc.neighbour);
}

/* Last: random numbers leave libcrypto's DRBG state live in secure memory. */
static void check_libcrypto_calls(void)
{
	size_t used = CRYPTO_secure_used();
	BIGNUM *bn;

	T_CASE("libcrypto's own BN_secure_new() lands in the shim");
	bn = BN_secure_new();
	T_ASSERT(bn);
	T_ASSERT(BN_rand(bn, 2048, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY));
	if (CRYPTO_secure_used() < used + 2048 / 8)
		T_FAIL("a 2048-bit secure BIGNUM added %zu bytes to CRYPTO_secure_used()",
		       CRYPTO_secure_used() - used);
	BN_clear_free(bn);
}

int main(void)
{
	/* Each case shows before a failure's message, also through a pipe. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!CRYPTO_set_mem_functions(count_malloc, count_realloc, count_free))
		T_FAIL("CRYPTO_set_mem_functions: libcrypto allocated before main()");
	check_shim_answers();
	check_alloc_free();
	check_edges();
	check_mistakes();
	check_plain_pointers();
	check_init_done();
	check_threads();
	check_libcrypto_calls();
	check_fork();
	return T_EXIT_PASS;
}
