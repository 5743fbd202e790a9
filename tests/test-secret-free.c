// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Secret memory, what a free costs and what it leaves (both backends):
 *   - freeing a 1 GiB secret (less on a small machine) with one byte
 *     written costs little CPU time and no memory: it once wiped every
 *     page, 10 s of CPU and 1 GiB of resident memory on memfd_secret;
 *   - a secret that could never be backed (more than the machine's
 *     physical memory; more than RLIMIT_MEMLOCK where it applies, also
 *     to root in a user namespace of its own) is refused with ENOMEM and
 *     the reason, not mapped;
 *   - what was written is wiped all the same: a freed span kept for reuse
 *     reads back all zeros through the next allocation, whether every page
 *     or one page in the middle was written.  (A span unmapped at free has
 *     nothing left to read: memfd_secret's kernel zeroes its pages; the
 *     fallback's are wiped before the unmap, by the same code.)
 *   - freed after setresuid(2), when mincore(2) says every page of a
 *     root-owned memfd_secret file is resident, no page is faulted in.
 * CPU time and peak RSS come from getrusage(2); the bounds are a tenth of
 * what the old code cost, and more than ten times what it costs now.
 */
#include <sched.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>

#include "harness.h"
#include "secret-backends.h"
#include "mmkit.h"

#define MIB		(1024ULL * 1024)
/* CPU time a free of a big secret with one page written may take at most. */
#define FREE_CPU_MAX_US	250000
/* Peak RSS it may add at most. */
#define FREE_RSS_MAX	(32 * MIB)

static size_t page;

static unsigned long long phys_bytes(void)
{
	struct sysinfo si;

	T_EQ(sysinfo(&si), 0);
	return (unsigned long long)si.totalram * si.mem_unit;
}

static long long cpu_us(void)
{
	struct rusage ru;

	T_EQ(getrusage(RUSAGE_SELF, &ru), 0);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL + ru.ru_utime.tv_usec +
	       ru.ru_stime.tv_usec;
}

static unsigned long long peak_rss(void)
{
	struct rusage ru;

	T_EQ(getrusage(RUSAGE_SELF, &ru), 0);
	return (unsigned long long)ru.ru_maxrss * 1024;
}

/*
 * The biggest secret this process may lock, up to 1 GiB and a quarter of
 * the machine's memory (the soft RLIMIT_MEMLOCK raised to the hard one
 * where it applies); 0 if that is under 256 MiB.
 */
static size_t big_size(void)
{
	unsigned long long size = 1024 * MIB, quarter = phys_bytes() / 4;
	struct mmkit_memlock m;
	struct rlimit rl;

	T_EQ(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	rl.rlim_cur = rl.rlim_max;
	T_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	T_EQ(mmkit_memlock_check(NULL, 0, &m), 0);
	if (!m.exempt && m.limit != MMKIT_MEMLOCK_UNLIMITED && m.limit - m.locked < size)
		size = (m.limit - m.locked) / 2;
	if (quarter < size)
		size = quarter;
	return size < 256 * MIB ? 0 : (size_t)size;
}

static void free_cost(void *arg)
{
	size_t size = big_size();
	unsigned long long rss;
	long long cpu;
	char *p;
	int ret;

	(void)arg;
	if (!size) {
		printf("  big free: not run: under 256 MiB may be locked here\n");
		fflush(stdout);
		return;
	}
	ret = mmkit_secret_alloc((void **)&p, size, MMKIT_SECRET_QUIET);
	if (ret)
		T_FAIL("mmkit_secret_alloc(%zu MiB): %s", size >> 20, mmkit_last_error());
	p[size / 2] = 1;
	cpu = cpu_us();
	rss = peak_rss();
	mmkit_secret_free(p);
	cpu = cpu_us() - cpu;
	rss = peak_rss() - rss;
	printf("  free of %zu MiB with one byte written: %lld us of CPU, peak RSS +%llu KiB\n",
	       size >> 20, cpu, rss >> 10);
	if (cpu > FREE_CPU_MAX_US || rss > FREE_RSS_MAX)
		T_FAIL("freeing %zu MiB with one page used cost %lld us of CPU (at most %d) and %llu KiB of peak RSS (at most %llu)",
		       size >> 20, cpu, FREE_CPU_MAX_US, rss >> 10, FREE_RSS_MAX >> 10);
	fflush(stdout);
}

/* @size refused with ENOMEM, the reason naming @why. */
static void expect_refused(size_t size, unsigned int flags, const char *why)
{
	void *p = NULL;
	int ret = mmkit_secret_alloc(&p, size, MMKIT_SECRET_QUIET | flags);

	/* Freeing it would try to wipe it: the old code's way to fill the machine. */
	if (!ret)
		T_FAIL("a secret of %zu MiB (flags %#x) was allocated at %p: it can never be backed",
		       size >> 20, flags, p);
	T_EQ(ret, -ENOMEM);
	if (!strstr(mmkit_last_error(), "can never be backed") || !strstr(mmkit_last_error(), why))
		T_FAIL("the refusal of %zu MiB says \"%s\", not why (%s)", size >> 20, mmkit_last_error(),
		       why);
}

static void refusal(void)
{
	unsigned long long phys = phys_bytes();
	size_t huge = phys < (1ULL << 40) ? (size_t)1 << 40 : (size_t)(2 * phys);
	struct mmkit_memlock m;

	T_EQ(mmkit_memlock_check(NULL, 0, &m), 0);
	if (m.exempt || m.limit == MMKIT_MEMLOCK_UNLIMITED) {
		expect_refused(huge, 0, "physical memory");
		expect_refused(phys + page, MMKIT_SECRET_PAGES, "physical memory");
		T_EQ(mmkit_secret_reserve(huge), -ENOMEM);
		T_ASSERT(strstr(mmkit_last_error(), "physical memory"));
	} else {
		expect_refused(huge, 0, "RLIMIT_MEMLOCK");
		expect_refused(m.limit + page, 0, "RLIMIT_MEMLOCK");
	}
}

/* Without CAP_IPC_LOCK, under a 1 MiB RLIMIT_MEMLOCK: 2 MiB can never be locked. */
static void refusal_limited(void *arg)
{
	struct rlimit rl = { MIB, MIB };

	(void)arg;
	t_become_nobody();
	T_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	expect_refused(2 * MIB, 0, "exceed RLIMIT_MEMLOCK: limit 1024 KiB");
	expect_refused(2 * MIB, MMKIT_SECRET_PAGES, "exceed RLIMIT_MEMLOCK: limit 1024 KiB");
}

/*
 * Root in a user namespace of its own: CAP_IPC_LOCK there (capget(2) says
 * so), but the kernel asks the initial namespace, so the limit applies.
 */
static void refusal_userns(void *arg)
{
	struct rlimit rl = { MIB, MIB };

	(void)arg;
	if (unshare(CLONE_NEWUSER)) {
		printf("  not run: unshare(CLONE_NEWUSER): %s\n", strerror(errno));
		fflush(stdout);
		return;
	}
	T_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	expect_refused(2 * MIB, 0, "exceed RLIMIT_MEMLOCK: limit 1024 KiB");
}

/*
 * A span of @pages pages (kept for reuse at free), written at @from for
 * @len bytes, freed, and allocated again: the same pages, all zero.
 */
static void wiped(size_t pages, size_t from, size_t len)
{
	size_t size = pages * page - 64;
	unsigned char *p, *q;

	T_EQ(mmkit_secret_alloc((void **)&p, size, MMKIT_SECRET_QUIET | MMKIT_SECRET_PAGES), 0);
	memset(p + from, 0xa5, len);
	mmkit_secret_free(p);
	T_EQ(mmkit_secret_alloc((void **)&q, size, MMKIT_SECRET_QUIET | MMKIT_SECRET_PAGES), 0);
	/* Reuse is what lets the test read the freed pages back. */
	if (q != p)
		T_FAIL("a freed %zu-page span was not reused (%p, then %p)", pages, (void *)p, (void *)q);
	t_expect_bytes(q, size, 0);
	mmkit_secret_free(q);
}

static long minor_faults(void)
{
	struct rusage ru;

	T_EQ(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_minflt;
}

/*
 * Spans of 64 pages (kept for reuse at free) with one byte written, freed
 * after the process dropped root: mincore(2) then says every page of a
 * root-owned memfd_secret file is resident, and reading each for zeros
 * faulted it in (63 faults a span).  Freeing must fault no page in.
 */
static void free_after_setuid(void *arg)
{
	enum { SPANS = 8 };
	char *p[SPANS];
	long faults;
	int i;

	(void)arg;
	for (i = 0; i < SPANS; i++) {
		T_EQ(mmkit_secret_alloc((void **)&p[i], 64 * page - 64, MMKIT_SECRET_QUIET), 0);
		p[i][100] = 1;
	}
	t_become_nobody();
	faults = minor_faults();
	for (i = 0; i < SPANS; i++)
		mmkit_secret_free(p[i]);
	faults = minor_faults() - faults;
	if (faults > 64)
		T_FAIL("freeing %d spans of 64 pages, one byte written each, after setresuid faulted %ld pages in",
		       SPANS, faults);
}

static void suite(void)
{
	T_CASE("a big secret with one byte written is freed at the cost of that page");
	T_CHILD_OK(t_in_child(free_cost, NULL));
	T_CASE("a secret that could never be backed is refused, saying why");
	refusal();
	if (t_is_root())
		T_CHILD_OK(t_in_child(refusal_limited, NULL));
	T_CHILD_OK(t_in_child(refusal_userns, NULL));
	T_CASE("freed pages read back as zeros: all written, one in the middle, the last");
	wiped(8, 0, 8 * page - 64);
	wiped(8, 3 * page + 100, 10);
	wiped(8, 8 * page - 65, 1);
	if (t_is_root()) {
		T_CASE("freed after dropping root, a span's untouched pages are not faulted in");
		T_CHILD_OK(t_in_child(free_after_setuid, NULL));
	}
}

int main(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	t_secret_backends(suite);
	return T_EXIT_PASS;
}
