// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * libmmkit-sodium.so's semantics, seen from a program linked with
 * -lsodium and run with the shim preloaded (tests/test-sodium-shim.sh):
 * 0xdb fill, the data ending at a guard page, a guard page before, the
 * canary checked at free, sodium_malloc(0), ENOMEM, the mprotect modes over
 * the whole allocation, wiping at free, bad frees, fork, threads.  Faults
 * and aborts are expected in forked children (t_in_child).  Prints the
 * number of successful allocations the parent made, for the shell test to
 * compare with the shim's statistics line.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <sodium.h>

#include "harness.h"

static size_t page;
static unsigned long long allocated;

static unsigned char *alloc(size_t size)
{
	unsigned char *p = sodium_malloc(size);

	if (!p)
		T_FAIL("sodium_malloc(%zu): %s", size, strerror(errno));
	allocated++;
	return p;
}

static void expect_signal(void (*fn)(void *), void *arg, int sig, const char *what)
{
	int status = t_in_child(fn, arg);

	if (!WIFSIGNALED(status) || WTERMSIG(status) != sig)
		T_FAIL("%s: expected signal %d, got %s %d", what, sig,
		       WIFSIGNALED(status) ? "signal" : "exit",
		       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* What a child does to an allocation it makes itself (the parent's are PROT_NONE in a child). */
enum poke { WRITE_PAST_END, READ_PAST_END, WRITE_BEFORE_DATA, DAMAGE_CANARY, DAMAGE_CANARY_FAR,
	    READ_NOACCESS, READ_NOACCESS_LAST_PAGE, WRITE_READONLY, WRITE_ZERO_SIZE_PLUS_1 };

static void poke(void *arg)
{
	enum poke what = (enum poke)(intptr_t)arg;
	size_t size = what == READ_NOACCESS_LAST_PAGE ? 10000 : 100;
	unsigned char *p = alloc(what == WRITE_ZERO_SIZE_PLUS_1 ? 0 : size);
	/* The first data page: the secret ends at the guard, 16 canary bytes before it. */
	unsigned char *data = p + size - ((size + 16 + page - 1) / page) * page;

	signal(SIGSEGV, SIG_DFL);
	switch (what) {
	case WRITE_PAST_END:
		p[size] = 0;
		break;
	case READ_PAST_END:
		T_EQ(*(volatile unsigned char *)(p + size), 0);
		break;
	case WRITE_BEFORE_DATA:
		data[-1] = 0;
		break;
	case DAMAGE_CANARY:
		p[-1] ^= 1;
		break;
	case DAMAGE_CANARY_FAR:
		p[-16] ^= 1;
		break;
	case READ_NOACCESS:
		T_EQ(sodium_mprotect_noaccess(p), 0);
		T_EQ(*(volatile unsigned char *)p, 0);
		break;
	case READ_NOACCESS_LAST_PAGE:
		T_EQ(sodium_mprotect_noaccess(p), 0);
		T_EQ(*(volatile unsigned char *)(p + size - 1), 0);
		break;
	case WRITE_READONLY:
		memset(p, 0x11, size);
		T_EQ(sodium_mprotect_readonly(p), 0);
		t_expect_bytes(p, size, 0x11);
		p[size - 1] = 0;
		break;
	case WRITE_ZERO_SIZE_PLUS_1:
		/* cmptest.h's guard_page: sodium_malloc(0) + 1 lies in a guard page. */
		p[1] = 0;
		break;
	}
	sodium_free(p);
}

static void test_fill_and_end(void)
{
	static const size_t sizes[] = { 1, 15, 32, 100, 4079, 4080, 4081, 4096, 70000 };
	size_t i;

	T_CASE("fresh memory reads 0xdb, the data ends at a page boundary, whole size writable");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *p = alloc(sizes[i]);

		t_expect_bytes(p, sizes[i], 0xdb);
		T_EQ((uintptr_t)(p + sizes[i]) % page, 0);
		memset(p, 0x42, sizes[i]);
		sodium_free(p);
	}
}

static void test_guards(void)
{
	T_CASE("guard pages: one byte past the end faults (write and read), so does the byte before the data");
	expect_signal(poke, (void *)WRITE_PAST_END, SIGSEGV, "write one past the end");
	expect_signal(poke, (void *)READ_PAST_END, SIGSEGV, "read one past the end");
	expect_signal(poke, (void *)WRITE_BEFORE_DATA, SIGSEGV, "write before the first data page");
	T_CASE("the canary before the data: damage aborts at sodium_free");
	expect_signal(poke, (void *)DAMAGE_CANARY, SIGABRT, "canary byte -1");
	expect_signal(poke, (void *)DAMAGE_CANARY_FAR, SIGABRT, "canary byte -16");
}

static void test_zero_and_null(void)
{
	unsigned char *p;

	T_CASE("sodium_malloc(0) and sodium_allocarray(0, n) are freeable; +1 is a guard; NULL free is a no-op");
	p = alloc(0);
	sodium_free(p);
	p = sodium_allocarray(0, 0);
	T_ASSERT(p);
	allocated++;
	sodium_free(p);
	expect_signal(poke, (void *)WRITE_ZERO_SIZE_PLUS_1, SIGSEGV, "sodium_malloc(0) + 1");
	sodium_free(NULL);
}

static void test_enomem(void)
{
	unsigned char *p;

	T_CASE("sizes that cannot be served and overflowing products: NULL, errno ENOMEM");
	errno = 0;
	T_ASSERT(!sodium_malloc(SIZE_MAX - 1));
	T_EQ(errno, ENOMEM);
	errno = 0;
	T_ASSERT(!sodium_malloc(SIZE_MAX - 4 * page));
	T_EQ(errno, ENOMEM);
	errno = 0;
	T_ASSERT(!sodium_allocarray(SIZE_MAX / 2 + 1, 2));
	T_EQ(errno, ENOMEM);
	errno = 0;
	/* libsodium refuses size >= SIZE_MAX / count, the equal case included. */
	T_ASSERT(!sodium_allocarray(2, SIZE_MAX / 2));
	T_EQ(errno, ENOMEM);
	p = sodium_allocarray(1000, 50);
	T_ASSERT(p);
	allocated++;
	t_expect_bytes(p, 50000, 0xdb);
	memset(p, 0, 50000);
	sodium_free(p);
}

static void test_mprotect(void)
{
	unsigned char *p;
	int local;

	T_CASE("mprotect: no-access faults on every page, read-only reads and faults on write, read-write restores");
	expect_signal(poke, (void *)READ_NOACCESS, SIGSEGV, "read after noaccess");
	expect_signal(poke, (void *)READ_NOACCESS_LAST_PAGE, SIGSEGV, "read last page after noaccess");
	expect_signal(poke, (void *)WRITE_READONLY, SIGSEGV, "write after readonly");
	p = alloc(10000);
	memset(p, 0x33, 10000);
	T_EQ(sodium_mprotect_noaccess(p), 0);
	T_EQ(sodium_mprotect_readonly(p), 0);
	t_expect_bytes(p, 10000, 0x33);
	T_EQ(sodium_mprotect_readwrite(p), 0);
	memset(p, 0x44, 10000);
	/* Freeing a protected allocation is allowed, as in libsodium. */
	T_EQ(sodium_mprotect_noaccess(p), 0);
	sodium_free(p);
	/* NULL is not tried: libsodium declares the argument nonnull. */
	T_CASE("mprotect of a pointer not from sodium_malloc: -1, errno EINVAL");
	errno = 0;
	T_EQ(sodium_mprotect_noaccess(&local), -1);
	T_EQ(errno, EINVAL);
}

/* A read of an allocation after sodium_free(): must fault, as libsodium's unmapped pages do. */
static void read_after_free(void *arg)
{
	unsigned char *p = alloc(100);

	(void)arg;
	memset(p, 0x5a, 100);
	sodium_free(p);
	signal(SIGSEGV, SIG_DFL);
	T_EQ(*(volatile unsigned char *)p, 0);
}

static void test_wiped(void)
{
	unsigned char *q;

	/*
	 * The shim keeps freed allocations' pages mapped for reuse (mmkit's span
	 * cache), wiped and inaccessible until reused, as libsodium's own freed
	 * pages are unmapped: a read after free faults; a reuse reads 0xdb.
	 */
	T_CASE("sodium_free: a read after free faults; the next allocation reads 0xdb");
	expect_signal(read_after_free, NULL, SIGSEGV, "read after sodium_free");
	q = alloc(100);
	memset(q, 0x5a, 100);
	sodium_free(q);
	q = alloc(100);
	t_expect_bytes(q, 100, 0xdb);
	sodium_free(q);
}

static void free_foreign(void *arg)
{
	int local;

	(void)arg;
	sodium_free(&local);
}

static void free_twice(void *arg)
{
	unsigned char *p = alloc(64);

	(void)arg;
	sodium_free(p);
	sodium_free(p);
}

static void free_interior(void *arg)
{
	unsigned char *p = alloc(64);

	(void)arg;
	sodium_free(p + 16);
}

static void read_parents(void *arg)
{
	signal(SIGSEGV, SIG_DFL);
	T_EQ(*(volatile unsigned char *)arg, 0x77);
}

static void test_bad_frees_and_fork(void)
{
	unsigned char *p;

	T_CASE("sodium_free of a foreign, freed or interior pointer aborts with a message");
	expect_signal(free_foreign, NULL, SIGABRT, "foreign pointer");
	expect_signal(free_twice, NULL, SIGABRT, "double free");
	expect_signal(free_interior, NULL, SIGABRT, "interior pointer");
	T_CASE("a forked child cannot read its parent's allocations (secret memory is not inherited)");
	p = alloc(32);
	memset(p, 0x77, 32);
	expect_signal(read_parents, p, SIGSEGV, "child reads parent's secret");
	t_expect_bytes(p, 32, 0x77);
	sodium_free(p);
}

static void *thread_main(void *arg)
{
	unsigned char *p[8];
	int i, j;

	for (i = 0; i < 500; i++) {
		for (j = 0; j < 8; j++) {
			p[j] = sodium_malloc((size_t)(16 + 100 * j));
			if (!p[j])
				return arg;
			memset(p[j], j, (size_t)(16 + 100 * j));
		}
		for (j = 0; j < 8; j++) {
			t_expect_bytes(p[j], (size_t)(16 + 100 * j), (unsigned char)j);
			sodium_free(p[j]);
		}
	}
	return NULL;
}

static void test_threads(void)
{
	pthread_t t[4];
	void *ret;
	int i;

	T_CASE("4 threads allocate, fill, check and free 4000 allocations each");
	for (i = 0; i < 4; i++)
		T_EQ(pthread_create(&t[i], NULL, thread_main, (void *)1), 0);
	for (i = 0; i < 4; i++) {
		T_EQ(pthread_join(t[i], &ret), 0);
		T_ASSERT(ret == NULL);
	}
	allocated += 4 * 500 * 8;
}

int main(void)
{
	Dl_info info;

	page = (size_t)sysconf(_SC_PAGESIZE);
	if (sodium_init() < 0)
		T_FAIL("sodium_init");
	if (!dladdr((void *)sodium_malloc, &info) || !info.dli_fname ||
	    !strstr(info.dli_fname, "libmmkit-sodium"))
		T_FAIL("sodium_malloc is %s's, not the shim's: run with LD_PRELOAD=libmmkit-sodium.so",
		       info.dli_fname ? info.dli_fname : "?");
	test_fill_and_end();
	test_guards();
	test_zero_and_null();
	test_enomem();
	test_mprotect();
	test_wiped();
	test_bad_frees_and_fork();
	test_threads();
	printf("allocated %llu\n", allocated);
	return 0;
}
