// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * What the memfd reference-page backend costs (mmkit_refpage(3), "memfd"):
 * the page cache of its pattern files, measured from the files themselves
 * (st_blocks of every /memfd:mmkit-refpage descriptor of this process, so
 * no other process disturbs it) and as mmkit_refpage_stats() reports it;
 * objects of one pattern share one file, threads and fork children too;
 * the file is a window tiled over larger ranges, one VMA per tile, and
 * 128 GiB of ranges fit in the default vm.max_map_count.  As root and as
 * uid 65534; the reach once, in the last pass: it depends on the map
 * count, not on who maps, and its 32,768 mappings take 80 s of a kernel
 * with KASAN and lockdep under emulation.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "mmkit.h"
#include "harness.h"
#include "refpage-map.h"

#define MiB		(1UL << 20)
#define WINDOW		(4 * MiB)
#define NTHREADS	8

static size_t page;

#ifdef __SANITIZE_THREAD__
/*
 * threads_and_fork() forks while threads run: each child inherits them as
 * threads never joined, which ThreadSanitizer reports as leaks when the
 * child exits.  The parent joins them all.
 */
const char *__tsan_default_options(void);
const char *__tsan_default_options(void)
{
	return "report_thread_leaks=0";
}
#endif

/* Bytes of page cache held by this process's memfd pattern files. */
static unsigned long long pattern_cache(int *nfiles)
{
	char path[300], link[128];
	unsigned long long bytes = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	struct stat st;
	ssize_t n;

	T_ASSERT(d != NULL);
	*nfiles = 0;
	while ((e = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, "/memfd:mmkit-refpage", 20) || stat(path, &st))
			continue;
		(*nfiles)++;
		bytes += (unsigned long long)st.st_blocks * 512;
	}
	closedir(d);
	return bytes;
}

/* The measured cost, checked against mmkit_refpage_stats() and @max_bytes. */
static void expect_cost(unsigned long long max_bytes, int want_files)
{
	struct mmkit_refpage_stats st;
	unsigned long long bytes;
	int nfiles;

	bytes = pattern_cache(&nfiles);
	T_EQ(mmkit_refpage_stats(&st), 0);
	printf("    %d pattern file(s), %llu KiB of page cache (stats: %llu, %llu KiB)\n",
	       nfiles, bytes >> 10, st.pattern_files, st.cache_bytes >> 10);
	T_ASSERT(bytes <= max_bytes);
	T_EQ(nfiles, want_files);
	T_EQ(st.pattern_files, (unsigned long long)want_files);
	T_EQ(st.cache_bytes, bytes);
}

static struct mmkit_refpage *create(unsigned char byte, size_t size)
{
	unsigned char pattern[2] = { byte, byte };
	struct mmkit_refpage *rp;
	int ret = mmkit_refpage_create(&rp, pattern, size, MMKIT_REFPAGE_BACKEND_MEMFD);

	if (ret)
		T_FAIL("mmkit_refpage_create: %s", strerror(-ret));
	return rp;
}

/* The mappings /proc/self/maps shows inside [p, p + len). */
static long mappings_in(const void *p, size_t len)
{
	uintptr_t start, end, lo = (uintptr_t)p, hi = lo + len;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	long n = 0;

	T_ASSERT(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &start, &end) == 2 && start >= lo && end <= hi)
			n++;
	fclose(f);
	return n;
}

/* The first and last byte of every page. */
static void expect_pattern(const unsigned char *p, size_t len, unsigned char byte)
{
	size_t off;

	for (off = 0; off < len; off += page)
		if (p[off] != byte || p[off + page - 1] != byte)
			T_FAIL("page at %p reads %#x ... %#x, not %#x", (const void *)(p + off),
			       p[off], p[off + page - 1], byte);
}

/* One object mapped 8 x 64 MiB, a few pages written: one window of cache. */
static void one_object(void)
{
	struct mmkit_refpage *rp = create(0xaa, 1);
	unsigned char *p[8], *q;
	void *moved;
	int i;

	T_CASE("one object mapped 8 x 64 MiB costs at most 4 MiB of page cache");
	for (i = 0; i < 8; i++) {
		p[i] = map(rp, 64 * MiB, PROT_READ | PROT_WRITE);
		p[i][i * page] = 1;
		p[i][WINDOW - 1] = 2;
		p[i][WINDOW] = 3;
		expect_pattern(p[i] + WINDOW + page, 60 * MiB - page, 0xaa);
	}
	expect_cost(4 * MiB, 1);

	T_CASE("tiles: one mapping per 4 MiB (they never merge); DONTNEED and remap across them");
	printf("    a 64 MiB range is %ld mappings\n", mappings_in(p[0], 64 * MiB));
	T_EQ(mappings_in(p[0], 64 * MiB), 64 * MiB / WINDOW);
	T_EQ(p[0][WINDOW - 1], 2);
	T_EQ(p[0][WINDOW], 3);
	T_EQ(madvise(p[0] + WINDOW - page, 2 * page, MADV_DONTNEED), 0);
	expect_pattern(p[0] + WINDOW - page, 2 * page, 0xaa);
	T_EQ(mmkit_refpage_remap(rp, p[1], 64 * MiB, 72 * MiB, &moved), 0);
	q = moved;
	T_EQ(q[page], 1);
	T_EQ(q[WINDOW], 3);
	expect_pattern(q + 64 * MiB - page, 8 * MiB + page, 0xaa);
	T_EQ(mmkit_refpage_unmap(rp, q, 72 * MiB), 0);
	for (i = 0; i < 8; i++)
		if (i != 1)
			T_EQ(mmkit_refpage_unmap(rp, p[i], 64 * MiB), 0);
	mmkit_refpage_destroy(rp);
	expect_cost(0, 0);
}

/* Four objects of one pattern (two pattern sizes of it): one shared file. */
static void shared_pattern(void)
{
	struct mmkit_refpage *rp[5];
	unsigned char *p[5];
	int i;

	T_CASE("four objects of one pattern cost at most 8 MiB; another pattern has its own file");
	for (i = 0; i < 4; i++) {
		rp[i] = create(0xaa, i % 2 ? 2 : 1);
		p[i] = map(rp[i], 64 * MiB, PROT_READ | PROT_WRITE);
		p[i][i * page] = (unsigned char)i;
		expect_pattern(p[i] + 4 * page, 64 * MiB - 4 * page, 0xaa);
	}
	expect_cost(8 * MiB, 1);
	rp[4] = create(0x55, 1);
	p[4] = map(rp[4], MiB, PROT_READ);
	expect_pattern(p[4], MiB, 0x55);
	expect_cost(8 * MiB + MiB, 2);
	/* Destroying one object leaves the others' file and mappings alone. */
	mmkit_refpage_destroy(rp[0]);
	p[1][page] = 9;
	expect_pattern(p[0] + page, 64 * MiB - page, 0xaa);
	/* Plain munmap(2) for the range of the object destroyed. */
	T_EQ(munmap(p[0], 64 * MiB), 0);
	for (i = 1; i < 5; i++) {
		T_EQ(mmkit_refpage_unmap(rp[i], p[i], i < 4 ? 64 * MiB : MiB), 0);
		mmkit_refpage_destroy(rp[i]);
	}
	expect_cost(0, 0);

	T_CASE("a 1 MiB range costs at most 1 MiB");
	rp[0] = create(0xaa, 1);
	p[0] = map(rp[0], MiB, PROT_READ | PROT_WRITE);
	expect_pattern(p[0], MiB, 0xaa);
	expect_cost(MiB, 1);
	T_EQ(mmkit_refpage_unmap(rp[0], p[0], MiB), 0);
	mmkit_refpage_destroy(rp[0]);
}

/* 128 GiB of ranges in the default vm.max_map_count of 65,530 (read-only: not committed). */
static void reach(void)
{
	size_t len = (size_t)128 << 30;
	struct mmkit_refpage *rp = create(0xaa, 1);
	unsigned char *p;

	T_CASE("128 GiB of ranges fit in vm.max_map_count 65,530");
	if (sizeof(void *) < 8) {
		printf("    not on a 32-bit address space\n");
		mmkit_refpage_destroy(rp);
		return;
	}
	p = map(rp, len, PROT_READ);
	printf("    128 GiB is %ld mappings\n", mappings_in(p, len));
	T_EQ(mappings_in(p, len), (long)(len / WINDOW));
	T_EQ(p[0], 0xaa);
	T_EQ(p[len - 1], 0xaa);
	T_EQ(mmkit_refpage_unmap(rp, p, len), 0);
	mmkit_refpage_destroy(rp);
}

static void *create_map_destroy(void *arg)
{
	unsigned char *p;
	int i;

	(void)arg;
	for (i = 0; i < 100; i++) {
		struct mmkit_refpage *rp = create(0x3c, 1);
		size_t len = ((size_t)(i % 7) + 1) * 700 * 1024;

		p = map(rp, len, PROT_READ | PROT_WRITE);
		if (p[0] != 0x3c || p[len - 1] != 0x3c)
			T_FAIL("thread read %#x %#x", p[0], p[len - 1]);
		p[len / 2] = 1;
		T_EQ(mmkit_refpage_unmap(rp, p, len), 0);
		mmkit_refpage_destroy(rp);
	}
	return NULL;
}

/* @arg: the parent's small range of the same pattern, or NULL. */
static void fork_child_grows(void *arg)
{
	struct mmkit_refpage *rp = create(0x3c, 1);
	unsigned char *p;

	/* Grows the file the parent maps too, where the parent had one. */
	p = map(rp, WINDOW, PROT_READ | PROT_WRITE);
	expect_pattern(p, WINDOW, 0x3c);
	if (arg)
		expect_pattern(arg, 64 << 10, 0x3c);
	p[0] = 1;
	mmkit_refpage_destroy(rp);
}

static void threads_and_fork(void)
{
	pthread_t th[NTHREADS];
	struct mmkit_refpage *rp;
	unsigned char *small, *p;
	int fds = t_count_fds(), i;

	T_CASE("threads create, map and destroy objects of one pattern at once; fork children");
	for (i = 0; i < NTHREADS; i++)
		T_EQ(pthread_create(&th[i], NULL, create_map_destroy, NULL), 0);
	/* Forks while the threads hold the table's lock now and then. */
	for (i = 0; i < 20; i++)
		T_CHILD_OK(t_in_child(fork_child_grows, NULL));
	for (i = 0; i < NTHREADS; i++)
		T_EQ(pthread_join(th[i], NULL), 0);
	expect_cost(0, 0);
	T_EQ(t_count_fds(), fds);

	rp = create(0x3c, 1);
	small = map(rp, 64 << 10, PROT_READ);
	expect_cost(64 << 10, 1);
	T_CHILD_OK(t_in_child(fork_child_grows, small));
	expect_pattern(small, 64 << 10, 0x3c);
	p = map(rp, WINDOW, PROT_READ | PROT_WRITE);
	expect_pattern(p, WINDOW, 0x3c);
	T_EQ(mmkit_refpage_unmap(rp, p, WINDOW), 0);
	T_EQ(mmkit_refpage_unmap(rp, small, 64 << 10), 0);
	mmkit_refpage_destroy(rp);
}

/* @with_reach: non-NULL in the last pass. */
static void suite(void *with_reach)
{
	one_object();
	shared_pattern();
	if (with_reach)
		reach();
	threads_and_fork();
	fflush(stdout);
}

static void suite_as_nobody(void *arg)
{
	t_become_nobody();
	suite(arg);
}

int main(void)
{
	char why[MMKIT_REASON_MAX];

	if (mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_MEMFD, why, sizeof(why)))
		T_SKIP("memfd backend unavailable: %s", why);
	page = (size_t)sysconf(_SC_PAGESIZE);
	if (!t_is_root()) {
		printf("memfd backend:\n");
		T_CHILD_OK(t_in_child(suite, "reach"));
		return T_EXIT_PASS;
	}
	printf("memfd backend, as root:\n");
	T_CHILD_OK(t_in_child(suite, NULL));
	printf("memfd backend, as uid %d:\n", T_NOBODY);
	T_CHILD_OK(t_in_child(suite_as_nobody, "reach"));
	return T_EXIT_PASS;
}
