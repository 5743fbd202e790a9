// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Run with libmmkit-perturb.so preloaded (tests/test-perturb-heap.sh):
 * with MALLOC_PERTURB_=BYTE every byte read before it is written is
 * BYTE ^ 0xff, for small and large sizes, alignments and the regions
 * realloc adds; realloc keeps every byte up to the old usable size;
 * madvise and mlock on a block work as on anonymous memory; calloc is zero; freed small memory reads as BYTE; freed
 * large memory is gone; threads and fork work; malloc_usable_size is sane;
 * bad sizes fail with ENOMEM.  Without MALLOC_PERTURB_ the contents of
 * fresh memory are not checked, everything else is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define LARGE		(128UL << 10)
#define MIB		(1UL << 20)

static int perturb;		/* MALLOC_PERTURB_, 0 when off */
static unsigned char fill;	/* what fresh memory reads as */
static int failures;

/*
 * Sizes and pointers the compiler must not see through: the test asks for
 * impossible sizes and looks at memory after free on purpose.
 */
static volatile size_t half_max = SIZE_MAX / 2, huge = SIZE_MAX - 4096;

static void *opaque(void *p)
{
	__asm__ volatile("" : "+r"(p));
	return p;
}

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		failures++; \
	} \
} while (0)

/* Every byte of [p + from, p + to) reads as @want; the first that does not, or -1. */
static long first_not(const void *p, size_t from, size_t to, unsigned char want)
{
	const unsigned char *c = p;
	size_t i;

	for (i = from; i < to; i++)
		if (c[i] != want)
			return (long)i;
	return -1;
}

static void check_fresh(const void *p, size_t size, const char *what)
{
	long bad;

	if (!perturb)
		return;
	bad = first_not(p, 0, size, fill);
	CHECK(bad < 0, "%s(%zu): byte %ld is 0x%02x, not the fill 0x%02x", what, size, bad,
	      bad < 0 ? 0 : ((const unsigned char *)p)[bad], fill);
}

static const size_t sizes[] = {
	0, 1, 15, 16, 24, 100, 1000, 4095, 4096, 65536, LARGE - 1, LARGE, LARGE + 1, 200000,
	MIB, 2 * MIB, 2 * MIB + 12345, 5 * MIB + 7, 64 * MIB,
};
#define NSIZES	(sizeof(sizes) / sizeof(sizes[0]))

static void check_malloc(void)
{
	size_t i, usable;
	unsigned char *p;

	for (i = 0; i < NSIZES; i++) {
		p = malloc(sizes[i]);
		CHECK(p, "malloc(%zu) failed", sizes[i]);
		if (!p)
			continue;
		CHECK(((uintptr_t)p & 15) == 0, "malloc(%zu) = %p, not 16-byte aligned", sizes[i],
		      (void *)p);
		check_fresh(p, sizes[i], "malloc");
		usable = malloc_usable_size(p);
		CHECK(usable >= sizes[i] && usable < sizes[i] + 2 * 4096,
		      "malloc_usable_size of malloc(%zu) is %zu", sizes[i], usable);
		memset(p, 0x5a, usable);
		CHECK(first_not(p, 0, usable, 0x5a) < 0, "malloc(%zu): written bytes changed",
		      sizes[i]);
		free(p);
	}
}

static void check_calloc(void)
{
	size_t i;
	void *p;

	for (i = 0; i < NSIZES; i++) {
		p = calloc(1, sizes[i]);
		CHECK(p, "calloc(1, %zu) failed", sizes[i]);
		if (!p)
			continue;
		CHECK(first_not(p, 0, sizes[i], 0) < 0, "calloc(1, %zu) is not zero", sizes[i]);
		free(p);
	}
	p = calloc(3, 100000);
	CHECK(p && first_not(p, 0, 300000, 0) < 0, "calloc(3, 100000) is not zero");
	free(p);
	errno = 0;
	CHECK(!calloc(half_max, 3) && errno == ENOMEM, "calloc overflowing gave no ENOMEM");
}

static void check_aligned(void)
{
	static const size_t aligns[] = { 8, 16, 32, 64, 4096, 8192, 65536 };
	static const size_t asizes[] = { 1, 100, 5000, LARGE, 300000, 3 * MIB + 5 };
	size_t a, s, align, size;
	void *p;
	int ret;

	for (a = 0; a < sizeof(aligns) / sizeof(aligns[0]); a++) {
		for (s = 0; s < sizeof(asizes) / sizeof(asizes[0]); s++) {
			align = aligns[a];
			size = asizes[s];
			p = NULL;
			ret = posix_memalign(&p, align, size);
			CHECK(!ret && p && !((uintptr_t)p % align),
			      "posix_memalign(%zu, %zu) = %d, %p", align, size, ret, p);
			if (!ret) {
				check_fresh(p, size, "posix_memalign");
				CHECK(malloc_usable_size(p) >= size, "usable size of aligned %zu",
				      size);
				memset(p, 1, size);
				free(p);
			}
			p = aligned_alloc(align, size);
			CHECK(p && !((uintptr_t)p % align), "aligned_alloc(%zu, %zu) = %p", align,
			      size, p);
			if (p)
				check_fresh(p, size, "aligned_alloc");
			free(p);
			p = memalign(align, size);
			CHECK(p && !((uintptr_t)p % align), "memalign(%zu, %zu) = %p", align, size,
			      p);
			if (p)
				check_fresh(p, size, "memalign");
			free(p);
		}
	}
	CHECK(posix_memalign(&p, 24, 100) == EINVAL, "posix_memalign(24) is not EINVAL");
	CHECK(posix_memalign(&p, 4, 100) == EINVAL, "posix_memalign(4) is not EINVAL");
	p = valloc(300000);
	CHECK(p && !((uintptr_t)p & 4095), "valloc(300000) = %p", p);
	if (p)
		check_fresh(p, 300000, "valloc");
	free(p);
	p = pvalloc(LARGE + 1);
	CHECK(p && !((uintptr_t)p & 4095) && malloc_usable_size(p) >= LARGE + 4096,
	      "pvalloc(%lu) = %p", LARGE + 1, p);
	if (p)
		check_fresh(p, LARGE + 4096, "pvalloc");
	free(p);
}

/* realloc from @from to @to bytes: the old bytes kept, the added ones fresh when large. */
static void check_realloc_pair(size_t from, size_t to, int from_calloc)
{
	unsigned char *p = from_calloc ? calloc(1, from) : malloc(from), *q;
	size_t i, keep = from < to ? from : to, old_usable;

	CHECK(p, "allocating %zu failed", from);
	if (!p)
		return;
	/* Every page written at its start and end, not the pages between. */
	for (i = 0; i < from; i += 4096) {
		p[i] = (unsigned char)(i / 4096 + 1);
		p[from - 1 - i] = (unsigned char)(i / 4096 + 7);
	}
	old_usable = malloc_usable_size(p);
	q = realloc(p, to);
	CHECK(q, "realloc(%zu -> %zu) failed", from, to);
	if (!q) {
		free(p);
		return;
	}
	for (i = 0; i < from; i += 4096) {
		if (i < keep)
			CHECK(q[i] == (unsigned char)(i / 4096 + 1), "realloc(%zu -> %zu) lost byte %zu",
			      from, to, i);
		if (from - 1 - i < keep)
			CHECK(q[from - 1 - i] == (unsigned char)(i / 4096 + 7),
			      "realloc(%zu -> %zu) lost byte %zu", from, to, from - 1 - i);
	}
	/* The old block's usable bytes past its size are the old block's (zero after calloc). */
	if (to > old_usable)
		check_fresh(q + old_usable, to - old_usable, "realloc growth");
	CHECK(malloc_usable_size(q) >= to, "usable size after realloc to %zu", to);
	free(q);
}

/*
 * Every byte up to the old usable size survives realloc (glibc's does so
 * too): written whole, grown in place, moved, shrunk below the large size.
 */
static void check_realloc_keeps_usable(void)
{
	static const size_t pairs[][2] = {
		{ 200000, 200100 }, { 300000, 300100 }, { LARGE + 1, 5 * MIB }, { 3 * MIB - 5, 9 * MIB },
		{ MIB, 100000 }, { 100000, 200000 },
	};
	unsigned char *p, *q;
	size_t i, j, usable, keep;
	long bad;

	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		p = malloc(pairs[i][0]);
		CHECK(p, "malloc(%zu) failed", pairs[i][0]);
		if (!p)
			continue;
		usable = malloc_usable_size(p);
		for (j = 0; j < usable; j++)
			p[j] = (unsigned char)(j % 251 + 1);
		q = realloc(p, pairs[i][1]);
		CHECK(q, "realloc(%zu -> %zu) failed", pairs[i][0], pairs[i][1]);
		if (!q) {
			free(p);
			continue;
		}
		keep = usable < pairs[i][1] ? usable : pairs[i][1];
		for (bad = -1, j = 0; j < keep && bad < 0; j++)
			if (q[j] != (unsigned char)(j % 251 + 1))
				bad = (long)j;
		CHECK(bad < 0, "realloc(%zu -> %zu) lost byte %ld of the old usable %zu",
		      pairs[i][0], pairs[i][1], bad, usable);
		free(q);
	}
}

static void check_realloc(void)
{
	static const size_t pairs[][2] = {
		{ 100, 1000 }, { 1000, 100 }, { 100, LARGE }, { 65536, 300000 }, { 300000, 1000 },
		{ LARGE, LARGE + 1 }, { 300000, 300100 }, { MIB, 200000 }, { 200000, 5 * MIB },
		{ 5 * MIB + 7, 9 * MIB }, { 4 * MIB, 4 * MIB + 1 }, { 9 * MIB, 3 * MIB + 99 },
		{ 64 * MIB, 70 * MIB },
	};
	unsigned char *p, *q;
	size_t i, usable;

	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		check_realloc_pair(pairs[i][0], pairs[i][1], 0);
		check_realloc_pair(pairs[i][0], pairs[i][1], 1);
	}
	/*
	 * Shrunk in place, then grown back: what stayed usable keeps its
	 * data, the bytes past it read as fresh again.
	 */
	p = malloc(MIB);
	if (p) {
		memset(p, 0x33, MIB);
		p = realloc(p, 200000);
		usable = p ? malloc_usable_size(p) : 0;
		q = p ? realloc(p, MIB) : NULL;
		CHECK(q && usable >= 200000 && first_not(q, 0, usable, 0x33) < 0,
		      "shrink and grow lost data");
		if (q)
			check_fresh(q + usable, MIB - usable, "regrown");
		free(q ? q : p);
	}
	p = realloc(NULL, 300000);
	CHECK(p, "realloc(NULL, 300000) failed");
	errno = 0;
	q = opaque(p);
	CHECK(!realloc(p, huge) && errno == ENOMEM, "realloc to a huge size");
	CHECK(!realloc(q, 0), "realloc(p, 0) returned memory");
	errno = 0;
	p = malloc(300000);
	q = opaque(p);
	CHECK(!reallocarray(p, half_max, 3) && errno == ENOMEM, "reallocarray overflow");
	q = reallocarray(q, 1000, 1000);
	CHECK(q, "reallocarray of a large pointer failed");
	if (q)
		check_fresh(q, 1000000, "reallocarray");
	free(q ? q : p);
}

static void check_bad_sizes(void)
{
	const size_t bad[] = { huge + 4095, huge, (size_t)PTRDIFF_MAX + 1 };
	size_t i;
	void *p;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		CHECK(!malloc(bad[i]) && errno == ENOMEM, "malloc(%zu) did not fail with ENOMEM",
		      bad[i]);
		errno = 0;
		CHECK(!memalign(65536, bad[i]) && errno == ENOMEM, "memalign(%zu)", bad[i]);
		CHECK(posix_memalign(&p, 4096, bad[i]) == ENOMEM, "posix_memalign(%zu)", bad[i]);
	}
	p = malloc(0);
	CHECK(p, "malloc(0) returned NULL");
	free(p);
	free(NULL);
	CHECK(malloc_usable_size(NULL) == 0, "malloc_usable_size(NULL)");
}

/*
 * Freed small memory reads as MALLOC_PERTURB_ past glibc's list pointers
 * (the first 16 bytes): @arg is where it runs, for the message.
 */
static void *check_freed_small(void *arg)
{
	volatile unsigned char *small = malloc(200), *small_after;
	size_t i;

	CHECK(small, "malloc(200) failed");
	if (!small)
		return NULL;
	/* Byte by byte through volatile: a memset before free() is a dead store to the compiler. */
	for (i = 0; i < 200; i++)
		small[i] = 0x77;
	small_after = opaque((void *)small);
	free((void *)small);
	if (perturb)
		for (i = 16; i < 200; i++)
			CHECK(small_after[i] == perturb, "%s: freed small byte %zu is 0x%02x",
			      (const char *)arg, i, small_after[i]);
	return NULL;
}

/*
 * Freed small memory reads as MALLOC_PERTURB_, in the main arena and in a
 * thread's; freed large memory is unmapped.
 */
static void check_freed(void)
{
	unsigned char *large = malloc(300000), *large_after;
	pthread_t t;

	if (!large) {
		CHECK(0, "allocations failed");
		return;
	}
	check_freed_small("main thread");
	CHECK(!pthread_create(&t, NULL, check_freed_small, "a thread") && !pthread_join(t, NULL),
	      "thread");
	large[4096] = 1;
	large_after = opaque(large);
	free(large);
	if (perturb)
		CHECK(msync(large_after, 4096, MS_ASYNC) == -1 && errno == ENOMEM,
		      "freed large memory is still mapped");
}

/* The kernel writes into fresh large memory like into any other (read(2) into it). */
static void check_kernel_access(void)
{
	unsigned char *p = malloc(4 * MIB);
	int fd = open("/dev/urandom", O_RDONLY);

	CHECK(p && fd >= 0, "setup failed");
	if (p && fd >= 0)
		CHECK(read(fd, p + MIB, 8192) == 8192, "read(2) into fresh memory: %s",
		      strerror(errno));
	if (fd >= 0)
		close(fd);
	free(p);
}

/* VmRSS of this process in KiB. */
static long rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

/* Large fresh memory costs no RSS (glibc's fill would cost all of it). */
static void check_no_rss(void)
{
	long before = rss_kib(), after;
	unsigned char *p = malloc(64 * MIB);

	after = rss_kib();
	CHECK(p && after - before < 8192, "malloc(64 MiB) raised VmRSS by %ld KiB",
	      after - before);
	free(p);
}

/* Whether the mapping holding @p is anonymous memory (no file, no device). */
static int is_anonymous(const void *p)
{
	unsigned long start, end, inode;
	char line[512], dev[32];
	int anon = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %*s %31s %lu", &start, &end, dev, &inode) == 4 &&
		    (uintptr_t)p >= start && (uintptr_t)p < end) {
			anon = inode == 0 && !strcmp(dev, "00:00");
			break;
		}
	}
	if (f)
		fclose(f);
	return anon;
}

/*
 * What programs do to heap blocks works as on glibc's (anonymous) memory,
 * on a part of a block or all of it, and keeps the block's contents:
 * madvise WIPEONFORK, DONTFORK, DONTDUMP; mlock, mlock2 and mlockall lock
 * anonymous memory (a lock on a device mapping may lock nothing).
 */
static void check_block_advice(void)
{
	static const int advice[] = { MADV_WIPEONFORK, MADV_DONTFORK, MADV_DONTDUMP };
	/* Undone before free: glibc may have the block from its heap, which it reuses. */
	static const int undo[] = { MADV_KEEPONFORK, MADV_DOFORK, MADV_DODUMP };
	static const char *const names[] = { "WIPEONFORK", "DONTFORK", "DONTDUMP" };
	unsigned char *p = NULL;
	int status, ret;
	size_t i;
	pid_t pid;

	for (i = 0; i < sizeof(advice) / sizeof(advice[0]); i++) {
		CHECK(!posix_memalign((void **)&p, 4096, MIB), "posix_memalign(4096, 1 MiB)");
		if (!p)
			return;
		p[100] = 7;
		CHECK(!madvise(p + 8192, 4 * 4096, advice[i]) && !madvise(p, MIB, advice[i]),
		      "madvise(MADV_%s) on a heap block: %s", names[i], strerror(errno));
		CHECK(p[100] == 7, "MADV_%s changed a written byte", names[i]);
		check_fresh(p + 101, MIB - 101, "advised block");
		if (advice[i] == MADV_WIPEONFORK) {
			pid = fork();
			if (pid == 0)
				_exit(p[100] == 0 && p[MIB - 1] == 0 ? 0 : 1);
			CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
			      !WEXITSTATUS(status), "MADV_WIPEONFORK: the child does not read zeros");
		}
		CHECK(!madvise(p, MIB, undo[i]), "undoing MADV_%s: %s", names[i], strerror(errno));
		free(p);
		p = NULL;
	}
	for (i = 0; i < 2; i++) {
		p = malloc(MIB);
		CHECK(p, "malloc(1 MiB)");
		if (!p)
			return;
		p[5] = 9;
		ret = i ? mlock2(p + 4096, MIB - 8192, MLOCK_ONFAULT) : mlock(p, MIB);
		if (ret) {
			/* Over RLIMIT_MEMLOCK: nothing to check. */
			CHECK(errno == ENOMEM || errno == EPERM, "mlock: %s", strerror(errno));
		} else {
			CHECK(is_anonymous(p + 4096), "%s locked a block that is not anonymous memory",
			      i ? "mlock2" : "mlock");
			CHECK(p[5] == 9, "mlock changed a written byte");
			check_fresh(p + 6, MIB - 6, "locked block");
			munlock(p, MIB);
		}
		free(p);
	}
	/* mlockall, in a child: the blocks there and those to come are anonymous. */
	p = malloc(MIB);
	pid = fork();
	if (pid == 0) {
		unsigned char *q;

		if (mlockall(MCL_CURRENT | MCL_FUTURE))
			_exit(errno == ENOMEM || errno == EPERM ? 0 : 2);
		q = malloc(MIB);
		if (!p || !q || !is_anonymous(p) || !is_anonymous(q) ||
		    (perturb && (p[MIB / 2] != fill || q[MIB / 2] != fill)))
			_exit(1);
		/* Grown, a block stays lockable memory. */
		p = realloc(p, 5 * MIB);
		_exit(p && is_anonymous(p + 4 * MIB) && (!perturb || p[4 * MIB] == fill) ? 0 : 3);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      !WEXITSTATUS(status), "mlockall: blocks not anonymous or not filled (0x%x)", status);
	free(p);
}

struct shared {
	pthread_mutex_t lock;
	void *handoff[64];
};

static struct shared shared = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * Allocates, checks, writes, reallocs and frees a mix of sizes; frees what
 * other threads left in shared.handoff.
 */
static void *worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg, i;
	unsigned char *p, *q;
	size_t size, slot;
	uintptr_t page;
	void *other;

	for (i = 0; i < 400; i++) {
		size = 1 + (rand_r(&seed) % 4 ? (size_t)rand_r(&seed) % 5000 :
						LARGE + (size_t)rand_r(&seed) % (3 * MIB));
		p = malloc(size + 1);
		CHECK(p, "thread malloc(%zu)", size + 1);
		if (!p)
			continue;
		if (perturb)
			CHECK(p[0] == fill && p[size] == fill && p[size / 2] == fill,
			      "thread: fresh %zu not filled", size + 1);
		p[0] = (unsigned char)seed;
		p[size] = (unsigned char)i;
		q = realloc(p, size * 2 + 1);
		CHECK(q && q[0] == (unsigned char)seed && q[size] == (unsigned char)i,
		      "thread realloc lost data");
		if (!q) {
			free(p);
			continue;
		}
		/* Advice on a page of a large block (made anonymous), undone before it is freed. */
		page = ((uintptr_t)q + 4095) & ~(uintptr_t)4095;
		if (size >= LARGE && i % 3 == 0) {
			CHECK(!madvise((void *)page, 4096, MADV_DONTDUMP) &&
			      !madvise((void *)page, 4096, MADV_DODUMP), "thread madvise: %s",
			      strerror(errno));
			CHECK(q[0] == (unsigned char)seed && q[size] == (unsigned char)i,
			      "thread madvise lost data");
		}
		slot = (size_t)rand_r(&seed) % 64;
		pthread_mutex_lock(&shared.lock);
		other = shared.handoff[slot];
		shared.handoff[slot] = q;
		pthread_mutex_unlock(&shared.lock);
		free(other);
	}
	return NULL;
}

/* The child of a fork, taken while @n threads allocate, allocates and frees too. */
static void check_threads_and_fork(void)
{
	pthread_t t[4];
	unsigned char *big = malloc(3 * MIB);
	int status, i, forks;
	pid_t pid;

	if (big)
		memset(big + MIB, 0x42, 4096);
	for (i = 0; i < 4; i++)
		CHECK(!pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1)),
		      "pthread_create");
	for (forks = 0; forks < 20; forks++) {
		pid = fork();
		if (pid == 0) {
			unsigned char *p = malloc(5 * MIB), *s = malloc(100);

			if (!big || big[MIB] != 0x42 || !p || !s)
				_exit(2);
			if (perturb && (big[0] != fill || p[4 * MIB] != fill || s[50] != fill))
				_exit(3);
			p[4 * MIB] = 1;
			p = realloc(p, 7 * MIB);
			if (!p || p[4 * MIB] != 1)
				_exit(4);
			free(p);
			free(s);
			free(big);
			_exit(0);
		}
		CHECK(pid > 0, "fork failed");
		if (pid > 0) {
			CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
			      !WEXITSTATUS(status), "fork child %d: status 0x%x", forks, status);
		}
	}
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < 64; i++)
		free(shared.handoff[i]);
	CHECK(big && big[MIB] == 0x42, "parent's data changed");
	free(big);
}

int main(void)
{
	const char *env = getenv("MALLOC_PERTURB_");

	/* As glibc reads it: 0x hex and 0 octal too, 1 to 255. */
	perturb = env ? (int)strtoul(env, NULL, 0) : 0;
	if (perturb < 0 || perturb > 255)
		perturb = 0;
	fill = (unsigned char)(perturb ^ 0xff);
	/* First: glibc's own MALLOC_PERTURB_ fails here, the shim must not. */
	if (perturb)
		check_no_rss();
	check_malloc();
	check_calloc();
	check_aligned();
	check_realloc();
	check_realloc_keeps_usable();
	check_bad_sizes();
	check_freed();
	check_kernel_access();
	check_block_advice();
	check_threads_and_fork();
	printf("%s: %d failures (MALLOC_PERTURB_=%d)\n", failures ? "FAIL" : "ok", failures,
	       perturb);
	return failures ? 1 : 0;
}
