// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit_secret_alloc_many(): many secrets in one call, each as
 * mmkit_secret_alloc() makes it (zeroed, aligned, its own size, freed one
 * by one), page secrets too; bad arguments get the reason; near
 * RLIMIT_MEMLOCK (uid 65534, 32 KiB) it returns the secrets that fit, the
 * rest of the array NULL and the limit named in mmkit_last_error().  Both
 * backends.
 */
#include <limits.h>
#include <stdint.h>
#include <sys/resource.h>

#include "harness.h"
#include "secret-backends.h"
#include "mmkit.h"

#define MANY	64
#define SMALL	32

static void expect_secret(void *p, size_t size)
{
	size_t got = 0;

	T_ASSERT(p);
	T_EQ((uintptr_t)p % 16, 0);
	T_EQ(mmkit_secret_size(p, &got), 0);
	T_EQ(got, size);
	t_expect_bytes(p, size, 0);
}

static void many_small(void)
{
	struct mmkit_secret_stats before, st;
	void *p[MANY];
	int i, j;

	T_EQ(mmkit_secret_stats(&before), 0);
	T_EQ(mmkit_secret_alloc_many(p, MANY, SMALL, MMKIT_SECRET_QUIET), MANY);
	for (i = 0; i < MANY; i++) {
		expect_secret(p[i], SMALL);
		for (j = 0; j < i; j++)
			T_ASSERT(p[i] != p[j]);
		memset(p[i], i + 1, SMALL);
	}
	T_EQ(mmkit_secret_stats(&st), 0);
	T_EQ(st.allocs_live, before.allocs_live + MANY);
	T_EQ(st.bytes_live, before.bytes_live + MANY * SMALL);
	for (i = 0; i < MANY; i++) {
		t_expect_bytes(p[i], SMALL, (unsigned char)(i + 1));
		mmkit_secret_free(p[i]);
	}
	T_EQ(mmkit_secret_stats(&st), 0);
	T_EQ(st.allocs_live, before.allocs_live);
}

static void many_pages(void)
{
	void *p[3];
	int i;

	T_EQ(mmkit_secret_alloc_many(p, 3, 100, MMKIT_SECRET_PAGES | MMKIT_SECRET_QUIET), 3);
	for (i = 0; i < 3; i++) {
		expect_secret(p[i], 100);
		T_EQ(mmkit_secret_protect(p[i], MMKIT_SECRET_READONLY), 0);
		mmkit_secret_free(p[i]);
	}
}

static void expect_einval(void **p, size_t n, size_t size, unsigned int flags, const char *why)
{
	T_EQ(mmkit_secret_alloc_many(p, n, size, flags), -EINVAL);
	if (!strstr(mmkit_last_error(), why))
		T_FAIL("error '%s', want it to name '%s'", mmkit_last_error(), why);
}

static void bad_arguments(void)
{
	void *p[2] = { &p, &p };

	expect_einval(NULL, 2, SMALL, 0, "mmkit_secret_alloc_many: p is NULL");
	expect_einval(p, 0, SMALL, 0, "mmkit_secret_alloc_many: n is 0");
	expect_einval(p, (size_t)INT_MAX + 1, SMALL, 0, "n is above INT_MAX");
	expect_einval(p, 2, 0, 0, "size 0");
	T_ASSERT(!p[0] && !p[1]);
	expect_einval(p, 2, SMALL, 0x100, "unknown flags");
}

/* Under a 32 KiB limit as uid 65534: what fits, then the limit's reason. */
static void short_count(void *arg)
{
	struct rlimit rl = { 32 * 1024, 32 * 1024 };
	enum { ASK = 4096 };
	static void *p[ASK];
	int n, i;

	(void)arg;
	t_become_nobody();
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		T_FAIL("setrlimit: %s", strerror(errno));
	n = mmkit_secret_alloc_many(p, ASK, 256, MMKIT_SECRET_QUIET);
	printf("    %d of %d 256-byte secrets under 32 KiB: %s\n", n, ASK, mmkit_last_error());
	T_ASSERT(n > 0 && n < ASK);
	if (!strstr(mmkit_last_error(), "RLIMIT_MEMLOCK"))
		T_FAIL("a short count's reason: '%s', want the limit named", mmkit_last_error());
	for (i = 0; i < ASK; i++)
		T_ASSERT(i < n ? p[i] != NULL : p[i] == NULL);
	/* Nothing more fits: the call fails as mmkit_secret_alloc() would. */
	T_EQ(mmkit_secret_alloc_many(p + n, 2, 256, MMKIT_SECRET_QUIET), -ENOMEM);
	for (i = 0; i < n; i++) {
		expect_secret(p[i], 256);
		mmkit_secret_free(p[i]);
	}
	fflush(NULL);
}

static void suite(void)
{
	T_CASE("64 32-byte secrets in one call, each its own, freed one by one");
	many_small();
	T_CASE("page secrets, each protectable");
	many_pages();
	T_CASE("bad arguments get their reason");
	bad_arguments();
	if (t_is_root()) {
		T_CASE("under a 32 KiB RLIMIT_MEMLOCK: the secrets that fit, then the reason");
		T_CHILD_OK(t_in_child(short_count, NULL));
	} else {
		printf("  (the RLIMIT_MEMLOCK case needs root to become uid %d: not run)\n", T_NOBODY);
	}
}

int main(void)
{
	t_secret_backends(suite);
	return T_EXIT_PASS;
}
