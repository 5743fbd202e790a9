// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Secret memory, capacity: as an unprivileged user (uid 65534, no
 * CAP_IPC_LOCK) under the default 8 MiB RLIMIT_MEMLOCK, 100,000 live
 * 32-byte secrets fit; with the limit lowered below what is needed,
 * allocation fails cleanly with -ENOMEM, the stats say why (the limit in
 * the message), and what was allocated stays intact.  Both backends.
 */
#include <stdint.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "harness.h"
#include "secret-backends.h"
#include "mmkit.h"

#define KIB		1024ULL
#define MIB		(1024ULL * 1024)
#define COUNT		100000

static void set_memlock_limit(unsigned long long bytes)
{
	struct rlimit rl = { bytes, bytes };

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		T_FAIL("setrlimit(RLIMIT_MEMLOCK, %llu): %s", bytes, strerror(errno));
}

static void hundred_thousand(void *arg)
{
	struct mmkit_secret_stats st;
	uint32_t **p = calloc(COUNT, sizeof(*p));
	double t0, t1;
	int i, j, ret;

	(void)arg;
	T_ASSERT(p);
	set_memlock_limit(8 * MIB);
	t_become_nobody();
	t0 = t_now();
	for (i = 0; i < COUNT; i++) {
		ret = mmkit_secret_alloc((void **)&p[i], 32, MMKIT_SECRET_QUIET);
		if (ret) {
			mmkit_secret_stats(&st);
			T_FAIL("secret %d of %d: %s (%s)", i + 1, COUNT, strerror(-ret), st.last_error);
		}
		for (j = 0; j < 8; j++)
			p[i][j] = (uint32_t)i * 8 + (uint32_t)j;
	}
	t1 = t_now();
	T_EQ(mmkit_secret_stats(&st), 0);
	T_EQ(st.allocs_live, COUNT);
	T_ASSERT(!st.memlock_exempt);
	T_EQ(st.memlock_limit, 8 * MIB);
	T_ASSERT(st.bytes_locked <= 8 * MIB);
	printf("    %d live 32-byte secrets as uid %d: %llu KiB locked of %llu KiB, %llu pages, %.0f ns each\n",
	       COUNT, T_NOBODY, st.bytes_locked / KIB, st.memlock_limit / KIB, st.pages_mapped,
	       (t1 - t0) * 1e9 / COUNT);
	for (i = 0; i < COUNT; i++) {
		for (j = 0; j < 8; j++)
			T_EQ(p[i][j], (uint32_t)i * 8 + (uint32_t)j);
		mmkit_secret_free(p[i]);
	}
	T_EQ(mmkit_secret_stats(&st), 0);
	T_EQ(st.allocs_live, 0);
	free(p);
	fflush(NULL);
}

static void limit_too_low(void *arg)
{
	struct mmkit_secret_stats st;
	uint32_t **p = calloc(COUNT, sizeof(*p));
	void *big = NULL;
	int i, n, ret = 0;

	(void)arg;
	T_ASSERT(p);
	t_become_nobody();
	set_memlock_limit(256 * KIB);
	for (n = 0; n < COUNT; n++) {
		ret = mmkit_secret_alloc((void **)&p[n], 32, MMKIT_SECRET_QUIET);
		if (ret)
			break;
		p[n][0] = (uint32_t)n;
	}
	T_EQ(ret, -ENOMEM);
	T_ASSERT(n > 1000);
	T_EQ(mmkit_secret_alloc(&big, MIB, MMKIT_SECRET_QUIET), -ENOMEM);
	T_ASSERT(big == NULL);
	T_EQ(mmkit_secret_reserve(MIB), -ENOMEM);
	T_EQ(mmkit_secret_stats(&st), 0);
	printf("    -ENOMEM after %d secrets under a 256 KiB limit: %s\n", n, st.last_error);
	T_ASSERT(st.enomem >= 3);
	T_ASSERT(strstr(st.last_error, "RLIMIT_MEMLOCK") && strstr(st.last_error, "limit 256 KiB"));
	T_ASSERT(st.bytes_locked <= 256 * KIB);
	for (i = 0; i < n; i++) {
		T_EQ(p[i][0], (uint32_t)i);
		mmkit_secret_free(p[i]);
	}
	/* What was refused works again once memory is back. */
	T_EQ(mmkit_secret_alloc((void **)&p[0], 32, MMKIT_SECRET_QUIET), 0);
	mmkit_secret_free(p[0]);
	/* The emptied chunks stay mapped for reuse, but give their pages up to a span that needs them. */
	T_EQ(mmkit_secret_stats(&st), 0);
	T_ASSERT(st.bytes_locked + 128 * KIB > 256 * KIB);
	T_EQ(mmkit_secret_alloc(&big, 128 * KIB, MMKIT_SECRET_QUIET), 0);
	memset(big, 1, 128 * KIB);
	mmkit_secret_free(big);
	free(p);
	fflush(NULL);
}

static void suite(void)
{
	T_CASE("100,000 live 32-byte secrets as nobody under an 8 MiB RLIMIT_MEMLOCK");
	T_CHILD_OK(t_in_child(hundred_thousand, NULL));
	T_CASE("RLIMIT_MEMLOCK lowered below the need: a clean -ENOMEM, the limit in the message");
	T_CHILD_OK(t_in_child(limit_too_low, NULL));
}

int main(void)
{
	if (!t_is_root())
		T_SKIP("becoming uid %d needs root", T_NOBODY);
	t_secret_backends(suite);
	return T_EXIT_PASS;
}
