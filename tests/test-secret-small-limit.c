// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Secret memory under small RLIMIT_MEMLOCK limits, as an unprivileged user
 * (uid 65534): near the limit chunks shrink to one page, so allocation
 * fails only when the limit is used up.  Under 32 KiB a 32-byte secret
 * fits beside the page-sized ones that fit (a whole chunk is 60 KiB), also
 * after freed page-sized secrets were kept for reuse; under 64 KiB a
 * 100-byte secret still fits after 1,200 32-byte ones (which once took a
 * whole chunk and left it no room), and more 32-byte ones fill what is
 * left; a reserve smaller than a chunk works.  Both backends.
 */
#include <stdint.h>
#include <sys/resource.h>

#include "harness.h"
#include "secret-backends.h"
#include "mmkit.h"

#define KIB		1024ULL
#define SMALL		32
#define MANY		1200

static size_t page;

/* Becomes uid 65534 under a limit of @bytes; the pages still free under it. */
static size_t nobody_under(unsigned long long bytes)
{
	struct rlimit rl = { bytes, bytes };
	struct mmkit_memlock m;

	t_become_nobody();
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		T_FAIL("setrlimit(RLIMIT_MEMLOCK, %llu): %s", bytes, strerror(errno));
	T_EQ(mmkit_memlock_check(NULL, 0, &m), 0);
	T_ASSERT(!m.exempt && m.limit == bytes && m.locked <= bytes);
	return (size_t)(bytes - m.locked) / page;
}

/* Page-sized secrets until one fails (with -ENOMEM), each filled with @tag; how many. */
static size_t fill_pages(unsigned char **p, size_t max, unsigned char tag)
{
	size_t n;
	int ret = 0;

	for (n = 0; n < max; n++) {
		ret = mmkit_secret_alloc((void **)&p[n], page, MMKIT_SECRET_QUIET);
		if (ret)
			break;
		memset(p[n], tag, page);
	}
	T_ASSERT(n < max);
	T_EQ(ret, -ENOMEM);
	return n;
}

static void free_pages(unsigned char **p, size_t n, unsigned char tag)
{
	size_t i;

	for (i = 0; i < n; i++) {
		t_expect_bytes(p[i], page, tag);
		mmkit_secret_free(p[i]);
	}
}

static void limit_32k(void *arg)
{
	size_t free_pages_at_start = nobody_under(32 * KIB), n;
	struct mmkit_secret_stats st;
	unsigned char *p[64], *small;
	int ret;

	(void)arg;
	T_ASSERT(free_pages_at_start >= 2 && free_pages_at_start < 64);
	/* Every page of the limit serves a page-sized secret; freed, they are kept for reuse. */
	n = fill_pages(p, 64, 0xa1);
	T_EQ(n, free_pages_at_start);
	free_pages(p, n, 0xa1);
	/* A 32-byte secret: the kept spans give their pages back, a one-page chunk fits. */
	ret = mmkit_secret_alloc((void **)&small, SMALL, MMKIT_SECRET_QUIET);
	if (ret) {
		mmkit_secret_stats(&st);
		T_FAIL("a 32-byte secret under a 32 KiB limit: %s (%s)", strerror(-ret), st.last_error);
	}
	memset(small, 0x5c, SMALL);
	/* The chunk took one page: the others still serve page-sized secrets. */
	n = fill_pages(p, 64, 0xb2);
	T_EQ(n, free_pages_at_start - 1);
	T_EQ(mmkit_secret_stats(&st), 0);
	printf("    32 KiB: one 32-byte and %zu page-sized secrets, %llu KiB locked; then: %s\n", n,
	       st.bytes_locked / KIB, st.last_error);
	T_ASSERT(st.bytes_locked <= 32 * KIB);
	T_ASSERT(strstr(st.last_error, "RLIMIT_MEMLOCK") && strstr(st.last_error, "limit 32 KiB"));
	free_pages(p, n, 0xb2);
	t_expect_bytes(small, SMALL, 0x5c);
	mmkit_secret_free(small);
	T_EQ(mmkit_secret_stats(&st), 0);
	T_EQ(st.allocs_live, 0);
	fflush(NULL);
}

static void limit_64k(void *arg)
{
	size_t free_pages_at_start = nobody_under(64 * KIB);
	struct mmkit_secret_stats st;
	unsigned char *medium;
	uint32_t *p[2 * MANY];
	int i, n, ret = 0;

	(void)arg;
	T_ASSERT(free_pages_at_start == 16);
	for (i = 0; i < MANY; i++) {
		ret = mmkit_secret_alloc((void **)&p[i], SMALL, MMKIT_SECRET_QUIET);
		if (ret)
			T_FAIL("32-byte secret %d: %s", i + 1, strerror(-ret));
		p[i][0] = (uint32_t)i;
	}
	ret = mmkit_secret_alloc((void **)&medium, 100, MMKIT_SECRET_QUIET);
	if (ret) {
		mmkit_secret_stats(&st);
		T_FAIL("a 100-byte secret after %d 32-byte ones under a 64 KiB limit: %s (%s)",
		       MANY, strerror(-ret), st.last_error);
	}
	memset(medium, 0x6d, 100);
	/* More 32-byte secrets, until the limit is used up: then a clean -ENOMEM. */
	for (n = MANY; n < 2 * MANY; n++) {
		ret = mmkit_secret_alloc((void **)&p[n], SMALL, MMKIT_SECRET_QUIET);
		if (ret)
			break;
		p[n][0] = (uint32_t)n;
	}
	T_EQ(ret, -ENOMEM);
	T_EQ(mmkit_secret_stats(&st), 0);
	printf("    64 KiB: %d 32-byte secrets and a 100-byte one, %llu KiB locked\n", n,
	       st.bytes_locked / KIB);
	T_EQ(st.bytes_locked, 64 * KIB);
	for (i = 0; i < n; i++) {
		T_EQ(p[i][0], (uint32_t)i);
		mmkit_secret_free(p[i]);
	}
	t_expect_bytes(medium, 100, 0x6d);
	mmkit_secret_free(medium);
	fflush(NULL);
}

static void reserve_small(void *arg)
{
	struct mmkit_secret_stats st;
	void *p;

	(void)arg;
	T_ASSERT(nobody_under(32 * KIB) >= 2);
	T_EQ(mmkit_secret_reserve(2 * page), 0);
	T_EQ(mmkit_secret_stats(&st), 0);
	T_ASSERT(st.pages_cached >= 2);
	T_ASSERT(st.bytes_locked <= 32 * KIB);
	T_EQ(mmkit_secret_alloc(&p, SMALL, MMKIT_SECRET_QUIET), 0);
	mmkit_secret_free(p);
	fflush(NULL);
}

static void suite(void)
{
	T_CASE("32 KiB: a 32-byte secret beside the page-sized ones that fit");
	T_CHILD_OK(t_in_child(limit_32k, NULL));
	T_CASE("64 KiB: a 100-byte secret after 1,200 32-byte ones, then 32-byte ones to the limit");
	T_CHILD_OK(t_in_child(limit_64k, NULL));
	T_CASE("32 KiB: a reserve of two pages");
	T_CHILD_OK(t_in_child(reserve_small, NULL));
}

int main(void)
{
	if (!t_is_root())
		T_SKIP("becoming uid %d needs root", T_NOBODY);
	page = (size_t)sysconf(_SC_PAGESIZE);
	if (page != 4096)
		T_SKIP("the limits here are counted in 4 KiB pages, not %zu-byte ones", page);
	t_secret_backends(suite);
	return T_EXIT_PASS;
}
